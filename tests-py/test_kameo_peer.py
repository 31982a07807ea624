"""polywire.kameo.Node against a real Kameo node: ``kameo-node`` (kameo-parity/src/bin),
a program on the real kameo =0.22.2 crate, run as a subprocess on 127.0.0.1. Both
directions: Python looks up, asks and tells kameo's actors, and kameo looks up and asks
an actor Python hosts. Every wait is bounded; nothing leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import pathlib
import socket
import subprocess
import sys
import threading

import pytest

from polywire import kameo
from polywire.kameo import Node

ROOT = pathlib.Path(__file__).resolve().parent.parent
WAIT = 20.0


def kameo_node_binary() -> pathlib.Path:
    """The kameo-node program: $POLYWIRE_KAMEO_NODE (the test command sets it, and then
    it must exist), else target/debug/kameo-node from `cargo test`."""
    env = os.environ.get("POLYWIRE_KAMEO_NODE")
    if env:
        path = pathlib.Path(env)
        assert path.is_file(), f"POLYWIRE_KAMEO_NODE={env} does not exist"
        return path
    path = ROOT / "target" / "debug" / "kameo-node"
    if not path.is_file():
        pytest.skip("kameo-node is not built (cargo build -p kameo-parity --bin kameo-node)")
    return path


class KameoNode:
    """The kameo-node subprocess, driven by lines; killed on exit."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [str(kameo_node_binary())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        ready = self._readline()
        words = ready.split()
        assert words[0] == "READY", ready
        self.peer_id, self.addr = words[1], words[2]

    def _readline(self) -> str:
        out: list = []
        t = threading.Thread(target=lambda: out.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(WAIT)
        assert out and out[0], "kameo-node answers in time"
        return out[0].rstrip("\n")

    def command(self, line: str) -> str:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self._readline()

    async def acommand(self, line: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(None, self.command, line)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(WAIT)


@pytest.fixture
def kameo_node():
    node = KameoNode()
    try:
        yield node
    finally:
        node.kill()


def run(coro):
    async def bounded():
        return await asyncio.wait_for(coro, 60)

    return asyncio.run(bounded())


def test_python_asks_and_tells_kameo_actors(kameo_node):
    async def main():
        async with await Node.start(bootstrap=[kameo_node.addr]) as node:
            counter = await node.lookup("counter")
            assert isinstance(counter, kameo.RemoteActorRef)
            assert counter.remote_id == "polywire.test.Counter"
            assert counter.peer_id == kameo_node.peer_id
            assert counter.actor_id["peer_id"] == kameo_node.peer_id
            assert isinstance(counter.actor_id["sequence_id"], int)

            assert await counter.ask("inc", {"amount": 5}) == 5
            assert await counter.tell("inc", {"amount": 2}) is None
            assert await counter.ask("get") == 7
            assert await counter.ask("echo", {"value": {"a": [1, "x", None, 2.5]}}) == {"a": [1, "x", None, 2.5]}
            # raw: MessagePack bytes in and out, as they are.
            assert await counter.ask("get", kameo.pack(None), raw=True) == kameo.pack(7)

            with pytest.raises(kameo.HandlerError) as e:
                await counter.ask("fail", {"message": "boom"})
            assert e.value.value == "boom" and e.value.code == "KAMEO_HANDLER_ERROR"
            assert e.value.payload == kameo.pack("boom")
            assert isinstance(e.value, kameo.KameoRemoteError) and isinstance(e.value, ValueError)

            with pytest.raises(kameo.UnknownMessage) as e:
                await counter.ask("nope", None)
            assert e.value.code == "KAMEO_UNKNOWN_MESSAGE"
            assert e.value.actor_remote_id == "polywire.test.Counter" and e.value.message_remote_id == "nope"

            with pytest.raises(kameo.DeserializeMessage):
                await counter.ask("inc", "not a struct")

            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(kameo.ReplyTimeout) as e:
                await counter.ask("sleep", {"ms": 3000}, reply_timeout=0.2)
            assert e.value.code == "KAMEO_REPLY_TIMEOUT"
            assert loop.time() - started < 2.5

            doomed = await node.lookup("doomed")
            assert await kameo_node.acommand("stop") == "STOPPED"
            with pytest.raises((kameo.ActorNotRunning, kameo.ActorStopped)):
                await doomed.ask("get")

            assert await node.lookup("no-such-actor") is None
            found = [ref async for ref in node.lookup_all("counter")]
            assert found == [counter]

    run(main())


class Handler:
    def __init__(self):
        self.told = asyncio.Queue()

    def ask(self, message, value):
        if message == "echo":
            return value["value"]
        if message == "fail":
            raise kameo.HandlerError({"why": value["message"]})
        raise kameo.UnknownMessage()

    async def tell(self, message, value):
        await self.told.put((message, value))


def test_kameo_asks_a_python_actor(kameo_node):
    async def main():
        async with await Node.start(bootstrap=[kameo_node.addr]) as node:
            handler = Handler()
            me = await node.register("py_side", handler, remote_id="polywire.test.Peerside")
            assert me.peer_id == node.peer_id and me.remote_id == "polywire.test.Peerside"

            assert await kameo_node.acommand('ask py_side echo {"a":[1,2,{"b":null}],"s":"é"}') == (
                'REPLY {"a":[1,2,{"b":null}],"s":"é"}'
            )
            assert await kameo_node.acommand('ask py_side fail "bad input"') == 'ERROR HandlerError {"why":"bad input"}'
            assert await kameo_node.acommand("tell py_side inc 3") == "TOLD"
            assert await asyncio.wait_for(handler.told.get(), WAIT) == ("inc", {"amount": 3})

            # An async handler, and a plain exception: its text is the handler error.
            async def by_callable(message, value):
                await asyncio.sleep(0)
                if message == "fail":
                    raise RuntimeError(f"no: {value['message']}")
                return value["value"] * 2

            await node.register("py_callable", by_callable, remote_id="polywire.test.Peerside")
            assert await kameo_node.acommand("ask py_callable echo 21") == "REPLY 42"
            assert await kameo_node.acommand('ask py_callable fail "x"') == 'ERROR HandlerError "no: x"'

            # A raw handler: the message's bytes in, the reply's bytes out (anything else is a
            # SerializeReply error).
            await node.register("py_raw", lambda message, payload: payload if message == "echo" else "not bytes",
                                remote_id="polywire.test.Peerside", raw=True)
            raw = await node.lookup("py_raw")
            assert await raw.ask("echo", kameo.pack([1, "x"]), raw=True) == kameo.pack([1, "x"])
            with pytest.raises(kameo.KameoRemoteError) as e:
                await raw.ask("other", kameo.pack(None), raw=True)
            assert (e.value.code, e.value.variant) == ("KAMEO_SERIALIZE_REPLY", "SerializeReply")
            assert "with raw=True the reply must be bytes, not str" in str(e.value)

            # The node finds its own actor through the DHT and asks it without the network.
            own = await node.lookup("py_side")
            assert own == me
            assert await own.ask("echo", {"value": [1, 2]}) == [1, 2]

            with pytest.raises(kameo.RegistryError) as e:
                await node.register("py_side", handler, remote_id="polywire.test.Peerside")
            assert e.value.code == "KAMEO_NAME_ALREADY_REGISTERED"

            assert await node.unregister("py_side") is True
            assert await node.unregister("py_side") is False
            assert await kameo_node.acommand("ask py_side echo 1") in ("NOTFOUND", "ERROR ActorNotRunning null")

    run(main())


def test_faults_fail_and_never_hang(kameo_node):
    async def main():
        loop = asyncio.get_running_loop()
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        async with await Node.start(dial_timeout=2) as node:
            started = loop.time()
            with pytest.raises(kameo.DialFailure) as e:
                await node.dial(f"/ip4/127.0.0.1/tcp/{port}")
            assert e.value.code == "KAMEO_DIAL_FAILURE"
            assert loop.time() - started < 3
            with pytest.raises(kameo.KameoError):
                await node.dial("not a multiaddr")
        with pytest.raises(kameo.DialFailure):
            await Node.start(bootstrap=[f"/ip4/127.0.0.1/tcp/{port}"], dial_timeout=2)

        # The kameo node dies in the middle of an ask: the ask fails.
        node = await Node.start(bootstrap=[kameo_node.addr])
        counter = await node.lookup("counter")
        pending = asyncio.ensure_future(counter.ask("sleep", {"ms": 10000}))
        await asyncio.sleep(0.3)
        kameo_node.kill()
        with pytest.raises((kameo.ConnectionClosed, kameo.RemoteIoError)):
            await asyncio.wait_for(pending, WAIT)

        # close() with an ask in flight fails it.
        other = KameoNode()
        try:
            await node.dial(other.addr)
            counter = await node.lookup("counter")
            assert counter.peer_id == other.peer_id
            pending = asyncio.ensure_future(counter.ask("sleep", {"ms": 10000}))
            await asyncio.sleep(0.2)
            await node.close()
            with pytest.raises(kameo.NodeClosed) as e:
                await asyncio.wait_for(pending, WAIT)
            assert e.value.code == "KAMEO_NODE_CLOSED"
            assert node.closed
            with pytest.raises(kameo.NodeClosed):
                await node.lookup("counter")
            await node.close()  # idempotent
        finally:
            other.kill()

    run(main())


def _count(path: str) -> int:
    return len(os.listdir(path))


def test_start_close_cycles_leak_nothing():
    async def main():
        for _ in range(3):
            await (await Node.start()).close()
        threads, fds = _count("/proc/self/task"), _count("/proc/self/fd")
        for _ in range(100):
            node = await Node.start()
            assert len(node.listen_addrs) == 1 and node.listen_addrs[0].endswith("/p2p/" + node.peer_id)
            await node.close()
        # The default executor's worker threads (at most a few) may have grown.
        assert _count("/proc/self/task") <= threads + 4, (threads, _count("/proc/self/task"))
        assert _count("/proc/self/fd") <= fds + 4, (fds, _count("/proc/self/fd"))

    run(main())


def test_arguments_are_checked():
    async def main():
        with pytest.raises(kameo.KameoError) as e:
            await Node.start(keypair_seed=b"short")
        assert e.value.code == "KAMEO_INVALID_ARGUMENT"
        with pytest.raises(TypeError):
            await Node.start(listen=[1])
        with pytest.raises(kameo.NodeStartError):
            await Node.start(listen=["/ip4/203.0.113.7/tcp/0"])  # an address of no interface here
        with pytest.raises(kameo.KameoError) as e:
            await Node.start(listen=["not a multiaddr"])
        assert e.value.code == "KAMEO_INVALID_ARGUMENT"
        with pytest.raises(TypeError):
            Node()
        seed = bytes(range(32))
        async with await Node.start(keypair_seed=seed) as a:
            peer_id = a.peer_id
        async with await Node.start(keypair_seed=seed) as b:
            assert b.peer_id == peer_id
            with pytest.raises(TypeError):
                await b.register("x", object(), remote_id="r")
            with pytest.raises(TypeError):
                await b.lookup(5)
            ref = await b.register("x", lambda m, v: v, remote_id="r")
            with pytest.raises(TypeError):
                await ref.ask("m", "v", raw=True)
            with pytest.raises(kameo.KameoError):
                await ref.ask("m", None, reply_timeout=-1)
            assert await ref.ask("m", {"k": 1}) == {"k": 1}

    run(main())


NODE_HOST = r"""
const kameo = require(process.argv[1])
;(async () => {
  const node = await kameo.Node.start()
  await node.register('js_side', {
    ask(message, value) {
      if (message === 'fail') throw new kameo.HandlerError({ from: 'node', why: value })
      return { from: 'node', message, value }
    },
  }, { remoteId: 'polywire.test.Peerside' })
  console.log(node.listenAddrs[0])
  process.stdin.on('data', () => {})
  process.stdin.on('end', () => node.close())
})()
"""


def test_python_asks_a_node_hosted_actor():
    from conftest import node_module

    proc = subprocess.Popen(
        ["node", "-e", NODE_HOST, str(node_module("kameo"))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        out: list = []
        t = threading.Thread(target=lambda: out.append(proc.stdout.readline()), daemon=True)
        t.start()
        t.join(WAIT)
        assert out and out[0].startswith("/ip4/127.0.0.1/tcp/"), out
        addr = out[0].strip()

        async def main():
            async with await Node.start(bootstrap=[addr]) as node:
                ref = await node.lookup("js_side")
                assert ref is not None and ref.peer_id == addr.rsplit("/", 1)[1]
                assert await ref.ask("hello", {"n": [1, 2.5, None, "é"], "b": b"\x00\x01"}) == {
                    "from": "node", "message": "hello", "value": {"n": [1, 2.5, None, "é"], "b": b"\x00\x01"},
                }
                with pytest.raises(kameo.HandlerError) as e:
                    await ref.ask("fail", 7)
                assert e.value.value == {"from": "node", "why": 7}

        run(main())
    finally:
        proc.stdin.close()
        try:
            proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_docs_peer_example_runs_against_kameo(kameo_node):
    """docs/kameo.md's Python peer example (the block marked id=kameo-peer-python), as
    written: it asks kameo's counter, then serves "greeter", which the kameo program looks
    up and asks."""
    from doc_blocks import block

    code = block("kameo-peer-python").text
    proc = subprocess.Popen(
        [sys.executable, "-c", code, kameo_node.addr, "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        import time

        deadline = time.monotonic() + WAIT
        answer = kameo_node.command('ask greeter echo "hi from Rust"')
        while answer == "NOTFOUND" and time.monotonic() < deadline:
            time.sleep(0.1)
            answer = kameo_node.command('ask greeter echo "hi from Rust"')
        assert answer == 'REPLY "hi from Rust"'
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines() == ["5", "KAMEO_HANDLER_ERROR boom"]
