"""polywire's QUIC AXON peer (``polywire.axon.Peer``) against a REAL upstream AXON daemon:
one scenario per protocol generation, run by tests-py/test_axon_real_peer.py.

    python tests-py/axon_real_peer_scenario.py --flavor head|v020 --binary PATH --work DIR

It must run INSIDE a loopback-only network namespace (the test starts it with ``nsenter``
into one it made): the daemons bind 0.0.0.0 and cannot be told otherwise, and the polywire
peer talks UDP to them, so both must be in that namespace. It starts the daemon(s) as its
own children (state under DIR), runs polywire peers on fixed 127.0.0.1 ports (the namespace
is fresh, so they are free, and neither daemon reports a port it picked), runs every check
with a bounded wait, and prints ONE JSON line on stdout: ``{check: "ok" | "failed: detail"}``
with exactly the names of ``CHECKS[flavor]``. Diagnostics (notes on what upstream did, and
the daemon's log when a check failed) go to stderr.

HEAD ("axon/1", upstream main 17bb9c9 / 0.7.2) answers every request it receives with the
error ``unhandled`` and pushes what it receives to its IPC clients; a request sent through
its IPC ``send`` reaches our handler and the reply comes back in the IPC ``response``.
v0.2.0 ("v2") answers ping/discover/query/delegate itself with canned payloads, and only the
lower agent id dials (then sends ``hello``); its IPC v2 clients see inbound envelopes (the
replies to their own sends among them) only after ``subscribe``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from real_axon_daemon import Daemon, V020Daemon, head_identity, v020_identity  # noqa: E402

from polywire import axon  # noqa: E402
from polywire.axon import DaemonClient, Peer, axon1  # noqa: E402

# The checks each flavor reports, in the order they run (the test parametrises over these).
CHECKS = {
    "head": [
        "token_daemon_uri_add_peer",            # `axon identity --json`'s uri -> Peer.add_peer
        "token_connect_subcommand",             # peer.token -> upstream's `axon connect` (before start)
        "connect_daemon_sees_peer",             # IPC `peers`: our agent id connected
        "connect_peer_sees_daemon",             # Peer.peers(): the daemon connected
        "peer_request_unhandled",               # peer -> daemon request: AxonRemoteError `unhandled`
        "daemon_request_answered",              # IPC send request -> our handler -> IPC `response`
        "daemon_request_error_reply",           # handler raises AxonRemoteError -> IPC kind `error`
        "daemon_request_handler_exception",     # handler raises anything else -> `handler_error`
        "peer_message_to_daemon",               # Peer.send -> IPC `inbound` event
        "daemon_message_to_peer",               # IPC send message -> Peer.inbound()
        "large_message_peer_to_daemon",         # a 65,536-byte envelope (the maximum) -> IPC
        "large_message_daemon_to_peer",         # the largest an IPC command can carry -> inbound()
        "unpinned_peer_refused",                # a peer the daemon has not pinned: typed error
        "unpinned_peer_pair_request_at_daemon",  # ... and the daemon's IPC `pair_request`
        "token_ipc_add_peer",                   # its peer.token -> IPC add_peer, then it works
        "daemon_dials_unpinned_peer_pair_request",  # daemon dials a peer that has not pinned it
        "pair_request_token_accepted",          # that event's token -> add_peer, then it works
    ],
    "v020": [
        "hello_daemon_dials",                   # daemon id lower: it dials, hello, both connected
        "hello_polywire_dials",                 # polywire id lower: we dial, hello, both connected
        "peer_ping",                            # peer -> daemon ping: canned pong
        "peer_discover",                        # ... discover: the daemon's capabilities
        "peer_query",                           # ... query: its canned response
        "peer_delegate",                        # ... delegate: ack
        "peer_ping_on_daemon_dialled_connection",
        "daemon_ping",                          # IPC send ping -> pong from polywire itself
        "daemon_discover",                      # ... discover -> Peer.start's capabilities=
        "daemon_query",                         # ... query -> our handler -> IPC `response`
        "daemon_query_error_reply",             # handler raises AxonRemoteError -> IPC `error`
        "daemon_delegate",                      # ... delegate -> our handler -> `ack`
        "daemon_query_on_polywire_dialled_connection",
        "peer_notify_to_daemon",                # Peer.send notify -> IPC inbound
        "daemon_notify_to_peer",                # IPC send notify -> Peer.inbound()
    ],
}

BUDGET = 50.0   # the whole scenario (the test kills it at 90 s)
STEP = 10.0     # one check
LOCAL = "127.0.0.1"

# Fixed identities (seed -> agent id, from the notes' table) so the v0.2.0 dial order is known:
# 139e... < b600... < fe81...
SEED_00 = bytes([0x00]) * 32   # ed25519.139e3940e64b5491722088d9a0d74162
SEED_2A = bytes([0x2A]) * 32   # ed25519.b600306cfa76723fdec395e53a9b3d9f
SEED_07 = bytes([0x07]) * 32   # ed25519.fe812c12f3ab4ce6ac5db69ac352f906

notes: dict = {}  # what upstream did where more than one outcome is acceptable (stderr)
logs: list = []   # (label, path) of the daemons' logs, shown on stderr when a check failed


def short(value, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


class Collector:
    """What an async iterator yields (Peer.inbound(), DaemonClient.events()), gathered by a
    background task: a bounded wait then never cancels the iterator itself (which would end
    it), and nothing that arrives between two waits is lost."""

    def __init__(self, iterator, name: str):
        self.name = name
        self.items: list = []
        self.error = None
        self._changed = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run(iterator))

    async def _run(self, iterator) -> None:
        try:
            async for item in iterator:
                self.items.append(item)
                self._changed.set()
        except Exception as e:  # noqa: BLE001 - reported by the next wait
            self.error = e
            self._changed.set()

    async def wait(self, predicate, what: str, timeout: float = 8.0):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for item in self.items:
                if predicate(item):
                    return item
            if self.error is not None:
                raise AssertionError(f"{self.name} ended ({self.error!r}) before {what}")
            remaining = deadline - loop.time()
            if remaining <= 0:
                seen = [short(i, 200) for i in self.items[-5:]]
                raise AssertionError(f"no {what} in {self.name} within {timeout:g} s; last seen: {seen}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    def close(self) -> None:
        self._task.cancel()


class Checks:
    """Runs named checks, each bounded, within the scenario's budget; records the outcome."""

    def __init__(self, flavor: str):
        self.names = CHECKS[flavor]
        self.results: dict = {}
        self.deadline = time.monotonic() + BUDGET

    async def run(self, name: str, body, timeout: float = STEP):
        assert name in self.names and name not in self.results, name
        remaining = self.deadline - time.monotonic()
        if remaining < 1:
            self.results[name] = "failed: not run: the scenario's time budget was spent"
            return None
        bound = min(timeout, remaining)
        try:
            value = await asyncio.wait_for(body(), bound)
        except asyncio.TimeoutError:
            self.results[name] = f"failed: no outcome within {bound:.3g} s"
        except AssertionError as e:
            self.results[name] = f"failed: {e}"
        except Exception as e:  # noqa: BLE001 - every failure is a result, not a crash
            self.results[name] = f"failed: {type(e).__name__}: {e}"
        else:
            self.results[name] = "ok"
            return value
        return None

    def finish(self, why: str | None = None) -> dict:
        for name in self.names:
            self.results.setdefault(name, f"failed: not run: {why or 'an earlier step failed'}")
        return {name: self.results[name] for name in self.names}


async def poll(probe, what: str, timeout: float = 8.0, every: float = 0.1):
    """Call ``probe()`` (async, returns ``(done, state)``) until done; fail with the last state."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        done, state = await probe()
        if done:
            return state
        if loop.time() > deadline:
            raise AssertionError(f"{what} not within {timeout:g} s; last state: {short(state)}")
        await asyncio.sleep(every)


async def peer_status(peer: Peer, agent_id: str):
    peers = await peer.peers()
    mine = [p for p in peers if p["agent_id"] == agent_id]
    return bool(mine) and mine[0]["status"] == "connected", peers


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def remote_error_of(outcome) -> axon.AxonRemoteError:
    expect(isinstance(outcome, axon.AxonRemoteError), f"expected AxonRemoteError, got {short(repr(outcome))}")
    return outcome


async def outcome_of(coro):
    """The value of ``coro``, or the AxonPeerError it raised (to assert on either)."""
    try:
        return await coro
    except axon.AxonPeerError as e:
        return e


# ---------------------------------------------------------------- HEAD (axon/1)


def head_handler(calls: list):
    """Our serving handler: records each call; ``{"fail": {...}}`` replies with that error,
    ``{"boom": true}`` raises a plain exception, anything else is echoed."""

    async def handler(sender, kind, payload):
        calls.append((sender, kind, payload))
        if isinstance(payload.get("fail"), dict):
            f = payload["fail"]
            raise axon.AxonRemoteError(f["code"], f["message"], retryable=f.get("retryable", False))
        if payload.get("boom"):
            raise RuntimeError("boom from the polywire handler")
        return {"echo": payload, "from": sender, "kind": kind}

    return handler


async def head(binary: str, work: str, checks: Checks, cleanup: list) -> None:
    d_root = os.path.join(work, "d")
    d_addr = f"{LOCAL}:7101"
    # The daemon's identity (seed 0x07) and token before it starts, as its own CLI prints them.
    ident = await asyncio.to_thread(head_identity, binary, d_root, d_addr, SEED_07)
    d_id = ident["agent_id"]

    peer = await Peer.start(identity=SEED_2A, listen=f"{LOCAL}:7102")
    cleanup.append(peer.close)
    calls: list = []
    peer.serve(head_handler(calls))
    inbound = Collector(peer.inbound(), "the peer's inbound()")
    cleanup.append(inbound.close)

    async def token_daemon_uri_add_peer():
        expect(ident["uri"].startswith("axon://") and ident["uri"].endswith("@" + d_addr), f"uri {ident['uri']!r}")
        got = await peer.add_peer(ident["uri"])
        expect(got == d_id, f"add_peer({ident['uri']!r}) returned {got!r}, not {d_id!r}")

    await checks.run("token_daemon_uri_add_peer", token_daemon_uri_add_peer)

    # The daemon pins us with upstream's own `axon connect <peer.token>` (it appends us to
    # config.yaml), then starts and dials us (we may dial it too: either connection serves).
    daemon = await asyncio.to_thread(Daemon, binary, d_root, 7101, None, connect=(peer.token,))
    cleanup.append(lambda: asyncio.to_thread(daemon.stop))
    logs.append(("HEAD daemon", daemon.log_path))
    client = await DaemonClient.connect(daemon.socket, timeout=5.0)
    cleanup.append(client.close)
    # Connected before any unknown peer dials: pair_request goes only to clients connected then.
    events = Collector(client.events(), "the daemon's IPC events")
    cleanup.append(events.close)

    async def token_connect_subcommand():
        out = daemon.connect_output[0]
        expect(f"Added peer {peer.agent_id} ({peer.listen_addr})" in out, f"`axon connect` printed {out!r}")
        config = open(os.path.join(d_root, "config.yaml")).read()
        expect(peer.public_key in config, f"config.yaml lacks our key: {config!r}")

    await checks.run("token_connect_subcommand", token_connect_subcommand)

    async def connect_daemon_sees_peer():
        async def probe():
            peers = await client.peers()
            mine = [p for p in peers if p["agent_id"] == peer.agent_id]
            return bool(mine) and mine[0]["status"] == "connected", peers

        await poll(probe, "the daemon's IPC peers listing us connected")

    await checks.run("connect_daemon_sees_peer", connect_daemon_sees_peer)

    async def connect_peer_sees_daemon():
        peers = await poll(lambda: peer_status(peer, d_id), "Peer.peers() listing the daemon connected")
        mine = [p for p in peers if p["agent_id"] == d_id][0]
        expect(mine["addr"] == d_addr and isinstance(mine["rtt_ms"], float), f"peers() entry {mine}")

    await checks.run("connect_peer_sees_daemon", connect_peer_sees_daemon)

    async def peer_request_unhandled():
        e = remote_error_of(await outcome_of(peer.request(d_id, {"q": "hi"}, timeout=8)))
        expect(e.remote_code == "unhandled", f"remote_code {e.remote_code!r}")
        expect(e.message.startswith("no application handler registered for request '"), f"message {e.message!r}")
        expect(e.retryable is False and e.code == "AXON_REMOTE_ERROR", f"retryable {e.retryable!r}, code {e.code!r}")

    await checks.run("peer_request_unhandled", peer_request_unhandled)

    async def daemon_request_answered():
        sent = {"q": "from the daemon", "n": 7, "s": "é"}
        reply = await client.send(peer.agent_id, sent, timeout_secs=8)
        expect(reply["kind"] == "response", f"reply {short(reply)}")
        expect(reply["payload"] == {"echo": sent, "from": d_id, "kind": "request"}, f"payload {short(reply['payload'])}")
        expect(reply["from"] == peer.agent_id and reply["to"] == d_id, f"from/to {reply['from']} {reply['to']}")
        expect(calls and calls[-1] == (d_id, "request", sent), f"the handler saw {short(calls[-1:])}")

    await checks.run("daemon_request_answered", daemon_request_answered)

    async def daemon_request_error_reply():
        fail = {"code": "busy", "message": "try again later", "retryable": True}
        reply = await client.send(peer.agent_id, {"fail": fail}, timeout_secs=8)
        expect(reply["kind"] == "error" and reply["payload"] == fail, f"reply {short(reply)}")

    await checks.run("daemon_request_error_reply", daemon_request_error_reply)

    async def daemon_request_handler_exception():
        reply = await client.send(peer.agent_id, {"boom": True}, timeout_secs=8)
        p = reply["payload"]
        expect(reply["kind"] == "error" and p.get("code") == "handler_error", f"reply {short(reply)}")
        expect("boom from the polywire handler" in p.get("message", ""), f"message {p.get('message')!r}")

    await checks.run("daemon_request_handler_exception", daemon_request_handler_exception)

    async def peer_message_to_daemon():
        body = {"note": 1, "text": "héllo", "list": [1, 2, 3]}
        msg_id = await peer.send(d_id, body)
        e = await events.wait(lambda e: e.get("event") == "inbound" and e["envelope"].get("id") == msg_id,
                              f"inbound event for message {msg_id}")
        env = e["envelope"]
        expect(e["from"] == peer.agent_id and env["kind"] == "message" and env["payload"] == body, f"event {short(e)}")

    await checks.run("peer_message_to_daemon", peer_message_to_daemon)

    async def daemon_message_to_peer():
        body = {"note": 2, "nested": {"a": [True, None]}}
        msg_id = await client.send(peer.agent_id, body, kind="message")
        e = await inbound.wait(lambda e: e["type"] == "message" and e.get("id") == msg_id, f"message {msg_id}")
        expect((e["from"], e["kind"], e["payload"]) == (d_id, "message", body), f"event {short(e)}")

    await checks.run("daemon_message_to_peer", daemon_message_to_peer)

    async def large_message_peer_to_daemon():
        # {"d": "x" * n} with n chosen so our envelope is exactly 65,536 bytes, the limit of both.
        n = axon1.MAX_MESSAGE_SIZE - len(axon1.encode(axon1.message({"d": ""})))
        body = {"d": "x" * n}
        expect(len(axon1.encode(axon1.message(body))) == 65536, "size arithmetic")
        msg_id = await peer.send(d_id, body)
        e = await events.wait(lambda e: e.get("event") == "inbound" and e["envelope"].get("id") == msg_id,
                              f"inbound event for the 65,536-byte message {msg_id}")
        expect(e["envelope"]["payload"] == body, f"payload of {len(json.dumps(e['envelope']['payload']))} chars")

    await checks.run("large_message_peer_to_daemon", large_message_peer_to_daemon)

    async def large_message_daemon_to_peer():
        # The daemon reads IPC lines of at most 65,536 bytes: the largest payload that fits
        # (room for a 4-digit req_id) becomes an envelope of ~65,460 bytes on the wire.
        empty = {"cmd": "send", "to": peer.agent_id, "kind": "message", "payload": {"d": ""}, "req_id": "9999"}
        n = 65536 - len(json.dumps(empty, separators=(",", ":")))
        body = {"d": "y" * n}
        notes["large_message_daemon_to_peer_wire_bytes"] = len(axon1.encode(axon1.message(body)))
        msg_id = await client.send(peer.agent_id, body, kind="message")
        e = await inbound.wait(lambda e: e["type"] == "message" and e.get("id") == msg_id, f"large message {msg_id}")
        expect(e["from"] == d_id and e["payload"] == body, f"payload of {len(json.dumps(e['payload']))} chars")

    await checks.run("large_message_daemon_to_peer", large_message_daemon_to_peer)

    # A second polywire peer (seed 0x00) pins the daemon, which has not pinned it.
    stranger = await Peer.start(identity=SEED_00, listen=f"{LOCAL}:7103", peers=[ident["uri"]])
    cleanup.append(stranger.close)

    async def unpinned_peer_refused():
        outcome = await outcome_of(stranger.request(d_id, {"q": "let me in"}, timeout=6))
        expect(isinstance(outcome, (axon.AxonHandshakeError, axon.AxonUnreachableError)),
               f"expected AxonHandshakeError or AxonUnreachableError, got {short(repr(outcome))}")
        notes["unpinned_peer_refused"] = f"{type(outcome).__name__} ({outcome.code}): {outcome}"

    await checks.run("unpinned_peer_refused", unpinned_peer_refused)

    async def unpinned_peer_pair_request_at_daemon():
        e = await events.wait(lambda e: e.get("event") == "pair_request" and e.get("agent_id") == stranger.agent_id,
                              f"pair_request for {stranger.agent_id}")
        expect(e.get("pubkey") == stranger.public_key, f"event {short(e)}")
        notes["pair_request_at_daemon"] = e

    await checks.run("unpinned_peer_pair_request_at_daemon", unpinned_peer_pair_request_at_daemon)

    async def token_ipc_add_peer():
        got = await client.add_peer(stranger.token)
        expect(got == stranger.agent_id, f"add_peer returned {got!r}")
        # Now pinned: its request reaches the daemon (and gets upstream's `unhandled`). It may
        # still be in its reconnect backoff after the refusal, or the daemon may dial it first.
        e = remote_error_of(await outcome_of(stranger.request(d_id, {"q": "now?"}, timeout=8)))
        expect(e.remote_code == "unhandled", f"remote_code {e.remote_code!r}")

    await checks.run("token_ipc_add_peer", token_ipc_add_peer)

    # A third polywire peer that pins nobody; the daemon pins it (upstream's `axon connect`
    # while running: config.yaml plus a hot-load through IPC add_peer) and dials it.
    lonely = await Peer.start(listen=f"{LOCAL}:7104")
    cleanup.append(lonely.close)
    lonely_inbound = Collector(lonely.inbound(), "the unpinning peer's inbound()")
    cleanup.append(lonely_inbound.close)
    pair_event: dict = {}

    async def daemon_dials_unpinned_peer_pair_request():
        out = await asyncio.to_thread(subprocess.run, [binary, "--state-root", d_root, "connect", lonely.token],
                                      capture_output=True, text=True, timeout=10)
        expect(out.returncode == 0 and f"Added peer {lonely.agent_id}" in out.stdout, f"`axon connect`: {out.stdout}{out.stderr}")
        # Make the daemon dial now: a message we refuse in TLS. HEAD answers it ok all the
        # same (TLS 1.3: the client's handshake is over before the server checks its
        # certificate; two HEAD daemons do the same), so either answer is fine here.
        try:
            msg_id = await client.send(lonely.agent_id, {"knock": True}, kind="message")
            notes["daemon_send_to_unpinning_peer"] = f"ok, msg_id {msg_id}"
        except axon.AxonDaemonError as e:
            notes["daemon_send_to_unpinning_peer"] = f"{e.code}: {e.message}"
        e = await lonely_inbound.wait(lambda e: e["type"] == "pair_request", "a pair_request")
        expect((e["agent_id"], e["pubkey"]) == (d_id, daemon.public_key), f"event {short(e)}")
        notes["pair_request_at_peer"] = e
        pair_event.update(e)

    await checks.run("daemon_dials_unpinned_peer_pair_request", daemon_dials_unpinned_peer_pair_request)

    async def pair_request_token_accepted():
        expect(bool(pair_event.get("token")), f"the pair_request has no token: {short(pair_event)}")
        got = await lonely.add_peer(pair_event["token"])
        expect(got == d_id, f"add_peer returned {got!r}")
        e = remote_error_of(await outcome_of(lonely.request(d_id, {"q": "hello"}, timeout=8)))
        expect(e.remote_code == "unhandled", f"remote_code {e.remote_code!r}")

    await checks.run("pair_request_token_accepted", pair_request_token_accepted)


# ---------------------------------------------------------------- v0.2.0 (v2)


class V2Ipc:
    """A v0.2.0 IPC v2 client, raw (polywire's DaemonClient speaks HEAD's IPC): ``hello``
    version 2, then ``subscribe`` so that inbound envelopes (the replies to our sends among
    them) are pushed as ``{"event": "inbound", "seq", "envelope"}`` lines."""

    @classmethod
    async def connect(cls, path: str) -> "V2Ipc":
        self = cls()
        self.reader, self.writer = await asyncio.wait_for(asyncio.open_unix_connection(path, limit=1 << 22), 5)
        self.replies: dict = {}
        self.ids = 0
        self.changed = asyncio.Event()
        self.events = Collector(self._lines(), "the v0.2.0 daemon's IPC events")
        return self

    async def _lines(self):
        while True:
            line = await self.reader.readline()
            if not line:
                return
            msg = json.loads(line)
            if "event" in msg:
                yield msg
            else:
                self.replies[msg.get("req_id")] = msg
                self.changed.set()

    async def call(self, command: dict, timeout: float = 8.0) -> dict:
        self.ids += 1
        req_id = str(self.ids)
        self.writer.write(json.dumps(dict(command, req_id=req_id)).encode() + b"\n")
        await self.writer.drain()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while req_id not in self.replies:
            self.changed.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"no IPC reply to {short(command)} within {timeout:g} s")
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass
        reply = self.replies.pop(req_id)
        expect(reply.get("ok") is True, f"IPC {command.get('cmd')} failed: {short(reply)}")
        return reply

    async def send(self, to: str, kind: str, payload: dict) -> dict:
        """IPC send, then the inbound envelope that answers it (``ref`` = its msg_id)."""
        reply = await self.call({"cmd": "send", "to": to, "kind": kind, "payload": payload})
        msg_id = reply["msg_id"]
        e = await self.events.wait(lambda e: e.get("event") == "inbound" and e["envelope"].get("ref") == msg_id,
                                   f"the reply to {kind} {msg_id}")
        return e["envelope"]

    async def peer_connected(self, agent_id: str):
        peers = (await self.call({"cmd": "peers"}))["peers"]
        mine = [p for p in peers if p.get("id") == agent_id]
        return bool(mine) and mine[0]["status"] == "connected", peers

    async def close(self) -> None:
        self.events.close()
        self.writer.close()


def v2_handler(calls: list):
    """query -> a response echoing the question; delegate/cancel -> ack; ``"fail"`` in the
    payload -> that error."""

    async def handler(sender, kind, payload):
        calls.append((sender, kind, payload))
        if isinstance(payload.get("fail"), dict):
            f = payload["fail"]
            raise axon.AxonRemoteError(f["code"], f["message"], retryable=f.get("retryable", False))
        if kind == "query":
            return {"data": {"echo": payload.get("question"), "from": sender}, "summary": "answered by polywire"}
        return {"accepted": True, "estimated_ms": 5}

    return handler


CAPS = {"agent_name": "polywire-test", "domains": ["test.echo"], "tools": ["echo"], "max_concurrent_tasks": 3}
UPSTREAM_CAPS = {"agent_name": "AXON Agent", "domains": ["meta.status"], "tools": ["axon"], "max_concurrent_tasks": 1}
QUERY_SUMMARY = "Query received by AXON transport layer."


async def v020(binary: str, work: str, checks: Checks, cleanup: list) -> None:
    home = os.path.join(work, "v")
    d_port = 7201
    # The daemon: seed 0x2a (b600...). Our "high" peer fe81... (the daemon dials it), our
    # "low" peer 139e... (it dials the daemon).
    ident = await asyncio.to_thread(v020_identity, binary, home, SEED_2A)
    d_id = ident["agent_id"]
    d_pin = {"agent_id": d_id, "pubkey": ident["public_key"], "addr": f"{LOCAL}:{d_port}"}
    calls: list = []

    # The side that is dialled listens first: the daemon tries at its start, then backs off.
    high = await Peer.start(identity=SEED_07, listen=f"{LOCAL}:7203", peers=[d_pin], protocol="v2",
                            capabilities=CAPS, agent_name="polywire-high")
    cleanup.append(high.close)
    high.serve(v2_handler(calls))
    high_inbound = Collector(high.inbound(), "the high peer's inbound()")
    cleanup.append(high_inbound.close)
    low = await Peer.start(identity=SEED_00, listen=f"{LOCAL}:7202", protocol="v2", agent_name="polywire-low")
    cleanup.append(low.close)
    low.serve(v2_handler(calls))
    assert low.agent_id < d_id < high.agent_id, (low.agent_id, d_id, high.agent_id)

    pins = [{"agent_id": p.agent_id, "pubkey": p.public_key, "addr": p.listen_addr} for p in (low, high)]
    daemon = await asyncio.to_thread(V020Daemon, binary, home, d_port, None, peers=pins)
    cleanup.append(lambda: asyncio.to_thread(daemon.stop))
    logs.append(("v0.2.0 daemon", daemon.log_path))
    ipc = await V2Ipc.connect(daemon.socket)
    cleanup.append(ipc.close)
    hello = await ipc.call({"cmd": "hello", "version": 2})
    expect(hello.get("version") == 2, f"IPC hello {short(hello)}")
    # replay: the hellos the daemon received before we subscribed are pushed too.
    await ipc.call({"cmd": "subscribe", "replay": True})
    # Only now does our low peer know the daemon (so it dials a daemon that is listening).
    await low.add_peer(d_pin)

    async def hello_daemon_dials():
        await poll(lambda: peer_status(high, d_id), "the high peer listing the daemon connected")
        await poll(lambda: ipc.peer_connected(high.agent_id), "the daemon's IPC peers listing the high peer connected")

    await checks.run("hello_daemon_dials", hello_daemon_dials)

    async def hello_polywire_dials():
        # Our first request makes us dial and send hello (if the pin has not already).
        pong = await low.request(d_id, {}, kind="ping", timeout=8)
        expect(pong.get("status") == "idle", f"pong {short(pong)}")
        e = await ipc.events.wait(lambda e: e.get("event") == "inbound" and e["envelope"]["kind"] == "hello"
                                  and e["envelope"]["from"] == low.agent_id, "our hello at the daemon")
        expect(1 in e["envelope"]["payload"].get("protocol_versions", []), f"hello {short(e)}")
        await poll(lambda: peer_status(low, d_id), "the low peer listing the daemon connected")
        await poll(lambda: ipc.peer_connected(low.agent_id), "the daemon's IPC peers listing the low peer connected")

    await checks.run("hello_polywire_dials", hello_polywire_dials)

    async def peer_ping():
        pong = await low.request(d_id, {}, kind="ping", timeout=8)
        expect({k: pong.get(k) for k in ("status", "uptime_secs", "active_tasks")} ==
               {"status": "idle", "uptime_secs": 0, "active_tasks": 0}, f"pong {short(pong)}")

    await checks.run("peer_ping", peer_ping)

    async def peer_discover():
        caps = await low.request(d_id, {}, kind="discover", timeout=8)
        expect({k: caps.get(k) for k in UPSTREAM_CAPS} == UPSTREAM_CAPS, f"capabilities {short(caps)}")

    await checks.run("peer_discover", peer_discover)

    async def peer_query():
        r = await low.request(d_id, {"question": "what are you?", "domain": "meta.status"}, kind="query", timeout=8)
        expect(r.get("data") == {"accepted": True} and r.get("summary", "").startswith(QUERY_SUMMARY), f"response {short(r)}")

    await checks.run("peer_query", peer_query)

    async def peer_delegate():
        r = await low.request(d_id, {"task": "index the docs", "priority": "urgent"}, kind="delegate", timeout=8)
        expect(r.get("accepted") is True, f"ack {short(r)}")

    await checks.run("peer_delegate", peer_delegate)

    async def peer_ping_on_daemon_dialled_connection():
        pong = await high.request(d_id, {}, kind="ping", timeout=8)
        expect(pong.get("status") == "idle", f"pong {short(pong)}")

    await checks.run("peer_ping_on_daemon_dialled_connection", peer_ping_on_daemon_dialled_connection)

    async def daemon_ping():
        env = await ipc.send(high.agent_id, "ping", {})
        expect(env["kind"] == "pong" and env["from"] == high.agent_id, f"reply {short(env)}")
        expect(env["payload"].get("status") in ("idle", "busy", "overloaded") and
               isinstance(env["payload"].get("uptime_secs"), int), f"pong {short(env['payload'])}")
        expect(not [c for c in calls if c[1] == "ping"], "the handler was called for a ping")

    await checks.run("daemon_ping", daemon_ping)

    async def daemon_discover():
        env = await ipc.send(high.agent_id, "discover", {})
        expect(env["kind"] == "capabilities", f"reply {short(env)}")
        expect({k: env["payload"].get(k) for k in CAPS} == CAPS, f"capabilities {short(env['payload'])}")

    await checks.run("daemon_discover", daemon_discover)

    async def daemon_query():
        env = await ipc.send(high.agent_id, "query", {"question": "who answers?", "domain": "test.echo"})
        expect(env["kind"] == "response" and env["from"] == high.agent_id, f"reply {short(env)}")
        expect(env["payload"].get("data") == {"echo": "who answers?", "from": d_id} and
               env["payload"].get("summary") == "answered by polywire", f"response {short(env['payload'])}")
        expect(calls and calls[-1][:2] == (d_id, "query"), f"the handler saw {short(calls[-1:])}")

    await checks.run("daemon_query", daemon_query)

    async def daemon_query_error_reply():
        fail = {"code": "overloaded", "message": "too many questions", "retryable": True}
        env = await ipc.send(high.agent_id, "query", {"question": "fail please", "fail": fail})
        expect(env["kind"] == "error" and env["payload"] == fail, f"reply {short(env)}")

    await checks.run("daemon_query_error_reply", daemon_query_error_reply)

    async def daemon_delegate():
        env = await ipc.send(high.agent_id, "delegate", {"task": "summarise", "priority": "normal"})
        expect(env["kind"] == "ack" and env["payload"].get("accepted") is True, f"reply {short(env)}")
        expect(calls and calls[-1][:2] == (d_id, "delegate") and calls[-1][2].get("task") == "summarise",
               f"the handler saw {short(calls[-1:])}")

    await checks.run("daemon_delegate", daemon_delegate)

    async def daemon_query_on_polywire_dialled_connection():
        env = await ipc.send(low.agent_id, "query", {"question": "and you?"})
        expect(env["kind"] == "response" and env["payload"].get("data") == {"echo": "and you?", "from": d_id},
               f"reply {short(env)}")

    await checks.run("daemon_query_on_polywire_dialled_connection", daemon_query_on_polywire_dialled_connection)

    async def peer_notify_to_daemon():
        body = {"topic": "polywire.test", "data": {"n": 1, "s": "é"}, "importance": "high"}
        msg_id = await low.send(d_id, body, kind="notify")
        e = await ipc.events.wait(lambda e: e.get("event") == "inbound" and e["envelope"].get("id") == msg_id,
                                  f"notify {msg_id} at the daemon")
        env = e["envelope"]
        expect(env["kind"] == "notify" and env["from"] == low.agent_id and env["payload"] == body, f"event {short(e)}")

    await checks.run("peer_notify_to_daemon", peer_notify_to_daemon)

    async def daemon_notify_to_peer():
        body = {"topic": "daemon.news", "data": {"n": 2}, "importance": "low"}
        reply = await ipc.call({"cmd": "send", "to": high.agent_id, "kind": "notify", "payload": body})
        msg_id = reply["msg_id"]
        e = await high_inbound.wait(lambda e: e["type"] == "message" and e.get("id") == msg_id, f"notify {msg_id}")
        expect((e["from"], e["kind"]) == (d_id, "notify") and e["payload"].get("data") == {"n": 2}
               and e["payload"].get("topic") == "daemon.news", f"event {short(e)}")

    await checks.run("daemon_notify_to_peer", daemon_notify_to_peer)


# ---------------------------------------------------------------- main


def log_tail(path: str, lines: int = 60) -> str:
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        return f"(cannot read {path}: {e})"
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # the daemons colour their logs
    return "\n".join(text.splitlines()[-lines:])


async def main(flavor: str, binary: str, work: str) -> dict:
    checks = Checks(flavor)
    cleanup: list = []
    why = None
    try:
        await asyncio.wait_for((head if flavor == "head" else v020)(binary, work, checks, cleanup), BUDGET + 5)
    except BaseException as e:  # noqa: BLE001 - a setup failure fails the checks not run
        why = f"setup failed: {type(e).__name__}: {e}"
        print(traceback.format_exc(), file=sys.stderr)
    finally:
        for close in reversed(cleanup):
            try:
                result = close()
                if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                    await asyncio.wait_for(result, 10)
            except BaseException as e:  # noqa: BLE001 - keep closing the rest
                print(f"cleanup: {type(e).__name__}: {e}", file=sys.stderr)
    return checks.finish(why)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--flavor", choices=sorted(CHECKS), required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    # The daemons listen on 0.0.0.0: never start them where another interface could reach them.
    # (if_nameindex asks this process's network namespace; /sys/class/net may show the host's.)
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"]:
        sys.exit(f"refusing to run outside a loopback-only network namespace (interfaces: {interfaces}); "
                 "run it as tests-py/test_axon_real_peer.py does: nsenter into an `unshare -rn` namespace")
    started = time.monotonic()
    results = asyncio.run(main(args.flavor, args.binary, args.work))
    print(f"scenario {args.flavor}: {time.monotonic() - started:.1f} s", file=sys.stderr)
    for key, value in notes.items():
        print(f"note {key}: {short(value, 600)}", file=sys.stderr)
    if any(v != "ok" for v in results.values()):
        for label, path in logs:
            print(f"--- {label} log (last lines) ---\n{log_tail(path)}", file=sys.stderr)
    print(json.dumps(results), flush=True)
