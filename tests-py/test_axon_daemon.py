"""polywire.axon.DaemonClient, the client of a local upstream AXON daemon's Unix socket.

Against a fake daemon (tests-py/fake_axon_daemon.py, written from upstream's IPC rules):
every command and reply shape, every error code typed, events pushed between replies,
replies out of order, many commands in flight, the 64 KiB line limit, abrupt closes,
timeouts; all bounded in time. Against a real upstream daemon when
POLYWIRE_AXON_DAEMON_HEAD names its binary (see the end of the file; skipped otherwise).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import tempfile

import pytest

import polywire
from polywire import axon
from polywire.axon import (
    AxonDaemonError,
    DaemonClient,
    DaemonClosedError,
    DaemonCommandTooLargeError,
    DaemonDisconnectedError,
    DaemonInternalError,
    DaemonInvalidCommandError,
    DaemonPeerNotFoundError,
    DaemonPeerUnreachableError,
    DaemonProtocolError,
    DaemonReplyTimeoutError,
    DaemonSelfSendError,
    DaemonTimeoutError,
    DaemonUnavailableError,
)
from polywire.axon_daemon import _decode_token
from fake_axon_daemon import TEXTS, FakeDaemon, new_key

LIMIT = 30.0  # no test runs longer


@pytest.fixture
def sock_dir():
    # Short: a Unix socket path has at most 107 bytes.
    d = tempfile.mkdtemp(prefix="pwd-", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, LIMIT))


def with_daemon(sock_dir, body, **options):
    """Run ``body(fake, client)`` with a fake daemon (``options``) and a client connected to it."""

    async def main():
        path = os.path.join(sock_dir, "axon.sock")
        async with FakeDaemon(path, **options) as fake:
            client = await DaemonClient.connect(path, timeout=5.0)
            try:
                return await body(fake, client)
            finally:
                await client.close()

    return run(main())


# ---------------------------------------------------------------- the commands


def test_whoami_status_peers(sock_dir):
    async def body(fake, client):
        a = fake.add(1, rtt_ms=1.5)
        b = fake.add(2, status="disconnected", source="discovered", addr="127.0.0.1:7200")
        me = await client.whoami()
        assert me == {"agent_id": fake.agent_id, "public_key": fake.public_key, "name": "alice", "version": "0.7.2",
                      "uptime_secs": me["uptime_secs"]}
        status = await client.status()
        assert set(status) == {"uptime_secs", "peers_connected", "messages_sent", "messages_received"}
        assert status["peers_connected"] == 1
        peers = await client.peers()
        assert [p["agent_id"] for p in peers] == sorted([a, b])
        by_id = {p["agent_id"]: p for p in peers}
        assert by_id[a] == {"agent_id": a, "addr": "127.0.0.1:7100", "status": "connected", "rtt_ms": 1.5, "source": "static"}
        assert "rtt_ms" not in by_id[b] and by_id[b]["source"] == "discovered"
        # Every command carried a distinct string req_id.
        ids = [c["req_id"] for c in fake.commands]
        assert len(set(ids)) == 3 and all(isinstance(i, str) for i in ids)

    with_daemon(sock_dir, body, name="alice")


def test_request_returns_the_reply_envelope_and_the_daemon_broadcasts_it(sock_dir):
    async def body(fake, client):
        peer = fake.add(1)
        reply = await client.send(peer, {"question": "hello"})
        # What an upstream daemon answers every request with.
        assert reply["kind"] == "error" and reply["payload"]["code"] == "unhandled"
        assert reply["from"] == peer and reply["to"] == fake.agent_id
        assert list(reply) == ["id", "kind", "ref", "payload", "from", "to"]
        assert reply["payload"]["message"] == f"no application handler registered for request '{reply['ref']}'"
        sent = fake.commands[-1]
        assert sent["cmd"] == "send" and sent["kind"] == "request" and sent["payload"] == {"question": "hello"}
        assert sent["timeout_secs"] is None and sent["ref"] is None
        # The reply is also an inbound event, to every client.
        event = await anext_event(client)
        assert event == {"event": "inbound", "from": peer, "envelope": reply}

    with_daemon(sock_dir, body)


async def anext_event(client, timeout=5.0):
    agen = client.events()
    try:
        return await asyncio.wait_for(agen.__anext__(), timeout)
    finally:
        await agen.aclose()


def test_request_with_a_reply_timeout_secs_and_ref(sock_dir):
    async def body(fake, client):
        peer = fake.add(1, reply=lambda req: ("response", {"echo": req["payload"], "ref": req.get("ref")}))
        ref = "6FC0EC4F-E59F-4BEA-9D57-0D9FDD1108F1"
        reply = await client.send(peer, {"n": 1}, timeout_secs=7, ref="{" + ref + "}")
        assert reply["kind"] == "response"
        assert reply["payload"] == {"echo": {"n": 1}, "ref": ref.lower()}
        sent = fake.commands[-1]
        assert sent["timeout_secs"] == 7 and sent["ref"] == ref.lower()
        line = json.loads(fake.lines[-1])
        assert line["ref"] == ref.lower() and line["timeout_secs"] == 7
        # The urn and simple forms are UUIDs too.
        await client.send(peer, {}, ref="urn:uuid:" + ref.lower())
        await client.send(peer, {}, ref=ref.replace("-", ""))
        assert [c["ref"] for c in fake.commands[-2:]] == [ref.lower()] * 2

    with_daemon(sock_dir, body)


def test_message_returns_its_id(sock_dir):
    async def body(fake, client):
        peer = fake.add(1)
        msg_id = await client.send(peer, {"data": [1, 2]}, kind="message", ref="6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1")
        assert isinstance(msg_id, str) and len(msg_id) == 36
        sent = fake.commands[-1]
        assert sent["kind"] == "message" and sent["ref"] == "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1"
        assert "timeout_secs" not in json.loads(fake.lines[-1])
        assert (await client.status())["messages_sent"] == 1

    with_daemon(sock_dir, body)


def test_every_daemon_error_code_is_typed(sock_dir):
    async def body(fake, client):
        gone = fake.add(1, reply="unreachable")
        slow = fake.add(2, reply="hang")
        cases = [
            (client.send("ed25519." + "0" * 32, {}), DaemonPeerNotFoundError, "peer_not_found"),
            (client.send(fake.agent_id, {}), DaemonSelfSendError, "self_send"),
            (client.send(gone, {}, kind="message"), DaemonPeerUnreachableError, "peer_unreachable"),
            (client.send(slow, {}, timeout_secs=1), DaemonTimeoutError, "timeout"),
            (client.add_peer(pubkey=fake.public_key, addr="127.0.0.1:1"), DaemonSelfSendError, "self_send"),
            (client.add_peer(pubkey=fake.peers[gone]["pubkey"], addr="127.0.0.1:1"), DaemonInvalidCommandError, "invalid_command"),
            (client.add_peer(pubkey=new_key(9)[1], addr="unresolvable.invalid:1"), DaemonInvalidCommandError, "invalid_command"),
        ]
        for coro, cls, code in cases:
            with pytest.raises(cls) as info:
                await coro
            e = info.value
            assert e.code == code and e.message == TEXTS[code] and str(e) == TEXTS[code]
            assert isinstance(e, AxonDaemonError) and isinstance(e, axon.AxonError) and isinstance(e, polywire.PolywireError)
            assert isinstance(e, ValueError) and e.msg == e.message and e.offset is None

    with_daemon(sock_dir, body)


def test_internal_error_too_large_and_unknown_codes_from_the_daemon(sock_dir):
    async def body(fake, client):
        replies = iter([
            {"ok": False, "error": "internal_error", "message": TEXTS["internal_error"]},
            {"ok": False, "error": "overloaded_v99", "message": "a code of a newer daemon"},
            {"ok": False, "error": "timeout"},  # no message: the code's text
        ])

        async def hook(command, c):
            reply = dict(next(replies), req_id=command["req_id"])
            c.write(reply)
            return "ignore"

        fake.before_command = hook
        with pytest.raises(DaemonInternalError) as info:
            await client.status()
        assert info.value.code == "internal_error"
        with pytest.raises(AxonDaemonError) as info:
            await client.status()
        assert type(info.value) is AxonDaemonError
        assert info.value.code == "overloaded_v99" and info.value.message == "a code of a newer daemon"
        with pytest.raises(DaemonTimeoutError) as info:
            await client.status()
        assert info.value.message == TEXTS["timeout"]

    with_daemon(sock_dir, body)


def test_command_too_large_from_the_daemon_fails_every_command_in_flight(sock_dir):
    async def body(fake, client):
        seen = []

        async def hook(command, c):
            seen.append(command)
            if len(seen) == 3:  # as a daemon with a smaller limit would: no req_id, then close
                c.write({"ok": False, "error": "command_too_large", "message": TEXTS["command_too_large"]})
                c.writer.close()
            return "ignore"

        fake.before_command = hook
        results = await asyncio.gather(client.status(), client.peers(), client.whoami(), return_exceptions=True)
        assert all(isinstance(r, DaemonCommandTooLargeError) for r in results), results
        assert results[0].code == "command_too_large" and TEXTS["command_too_large"] in results[0].message
        with pytest.raises(DaemonDisconnectedError):
            await client.status()

    with_daemon(sock_dir, body)


# ---------------------------------------------------------------- demultiplexing


def test_events_pushed_between_replies_and_commands_in_flight(sock_dir):
    async def body(fake, client):
        peer = fake.add(1, reply=lambda req: ("response", {"n": req["payload"]["n"]}))
        _, stranger_key, stranger = new_key(50)
        count = 0

        async def hook(command, c):
            nonlocal count
            count += 1
            # Events before and after each reply, to every client.
            fake.inbound(peer, "message", {"before": count})
            fake.pair_request(stranger, stranger_key, "127.0.0.1:9" if count % 2 else None)
            return None

        fake.before_command = hook
        calls = []
        for n in range(40):
            calls.append(client.send(peer, {"n": n}))
            calls.append(client.status())
            calls.append(client.send(peer, {"n": n}, kind="message"))
        results = await asyncio.gather(*calls)
        for n in range(40):
            assert results[3 * n]["payload"] == {"n": n}
            assert set(results[3 * n + 1]) == {"uptime_secs", "peers_connected", "messages_sent", "messages_received"}
            assert isinstance(results[3 * n + 2], str)
        events = []
        async for e in client.events():
            events.append(e)
            if len(events) == 120 * 2 + 40:
                break
        inbound = [e for e in events if e["event"] == "inbound"]
        pairs = [e for e in events if e["event"] == "pair_request"]
        assert [e["envelope"]["payload"]["before"] for e in inbound if "before" in e["envelope"]["payload"]] == list(range(1, 121))
        assert len([e for e in inbound if e["envelope"]["kind"] == "response"]) == 40
        assert len(pairs) == 120 and pairs[0] == {"event": "pair_request", "agent_id": stranger, "pubkey": stranger_key,
                                                  "addr": "127.0.0.1:9"}
        assert "addr" not in pairs[1]
        assert client.dropped_events == 0

    with_daemon(sock_dir, body)


def test_replies_are_matched_by_req_id_in_any_order(sock_dir):
    async def body(fake, client):
        held = []

        async def hook(command, c):
            held.append((command, c))
            if len(held) == 10:
                for cmd, cl in reversed(held):
                    cl.write({"event": "inbound", "from": "x", "envelope": {}})
                    cl.write({"ok": True, "agent_id": f"id-{cmd['req_id']}", "public_key": "k", "version": "v",
                              "uptime_secs": int(cmd["req_id"]), "req_id": cmd["req_id"]})
                # An unknown req_id and a reply without one are ignored.
                c.write({"ok": True, "agent_id": "stray", "req_id": "nobody"})
                c.write({"ok": True, "agent_id": "stray"})
            return "ignore"

        fake.before_command = hook
        results = await asyncio.gather(*[client.whoami() for _ in range(10)])
        sent = [int(c["req_id"]) for c, _ in held]
        assert [r["uptime_secs"] for r in results] == sent
        assert [r["agent_id"] for r in results] == [f"id-{i}" for i in sent]

    with_daemon(sock_dir, body)


def test_many_commands_in_flight_all_answered(sock_dir):
    async def body(fake, client):
        peer = fake.add(1, reply=lambda req: ("response", req["payload"]))
        calls = [client.send(peer, {"i": i}) if i % 2 else client.send(peer, {"i": i}, kind="message") for i in range(500)]
        results = await asyncio.gather(*calls)
        assert [r["payload"]["i"] for r in results[1::2]] == list(range(1, 500, 2))
        assert len(set(results[0::2])) == 250
        assert client.dropped_events == 0  # 250 broadcast replies, within max_events

    with_daemon(sock_dir, body)


def test_max_events_keeps_the_newest(sock_dir):
    async def main():
        path = os.path.join(sock_dir, "axon.sock")
        async with FakeDaemon(path) as fake:
            async with await DaemonClient.connect(path, max_events=3) as client:
                await client.status()  # the daemon has the client: it gets the events
                for i in range(5):
                    fake.inbound("ed25519." + "1" * 32, "message", {"i": i})
                await client.status()  # every event before the reply has been read
                assert client.dropped_events == 2
                got = []
                async for e in client.events():
                    got.append(e["envelope"]["payload"]["i"])
                    if len(got) == 3:
                        break
                assert got == [2, 3, 4]
            async with await DaemonClient.connect(path, max_events=0) as client:
                await client.status()
                fake.inbound("ed25519." + "1" * 32, "message", {})
                await client.status()
                assert client.dropped_events == 1

    run(main())


def test_ten_thousand_events_nobody_reads_keep_the_newest(sock_dir):
    async def body(fake, client):
        async with await DaemonClient.connect(fake.path, max_events=5) as few:
            await few.status()
            await client.status()
            for i in range(10000):
                fake.inbound("ed25519." + "1" * 32, "message", {"i": i})
            await few.status()
            await client.status()
            assert few.dropped_events == 9995 and client.dropped_events == 10000 - 1024
            got = []
            async for e in few.events():
                got.append(e["envelope"]["payload"]["i"])
                if len(got) == 5:
                    break
            assert got == [9995, 9996, 9997, 9998, 9999]

    with_daemon(sock_dir, body)


def test_v0_7_2_parse_errors_without_req_id_go_to_the_oldest_command(sock_dir):
    # A daemon that does not know a command (add_peer came in v0.6.0) answers
    # invalid_command; v0.7.2 does not echo the req_id of a line it cannot parse.
    async def body(fake, client):
        with pytest.raises(DaemonInvalidCommandError) as info:
            await client.add_peer(pubkey=new_key(3)[1], addr="127.0.0.1:9")
        assert info.value.message == TEXTS["invalid_command"]
        assert (await client.whoami())["agent_id"] == fake.agent_id

    with_daemon(sock_dir, body, echo_parse_req_id=False, commands=("send", "peers", "status", "whoami"))


# ---------------------------------------------------------------- limits and failures


def test_lines_over_64_kib_are_refused_before_sending(sock_dir):
    async def body(fake, client):
        peer = fake.add(1)
        # The command is written {"cmd","to","kind","payload","req_id"}; this is req_id "1".
        probe = json.dumps({"cmd": "send", "to": peer, "kind": "message", "payload": {"d": ""}, "req_id": "1"},
                           separators=(",", ":"))
        await client.send(peer, {"d": "x" * (65536 - len(probe))}, kind="message")
        assert len(fake.lines[-1]) == 65536  # exactly the limit: accepted
        before = len(fake.lines)
        for payload in ({"d": "x" * (65537 - len(probe))}, {"d": "\u00e9" * 32768}):
            with pytest.raises(DaemonCommandTooLargeError) as info:
                await client.send(peer, payload, kind="message")
            assert info.value.code == "command_too_large" and "65536" in info.value.message
        assert len(fake.lines) == before  # nothing was written
        # The connection is still good.
        assert (await client.whoami())["agent_id"] == fake.agent_id

    with_daemon(sock_dir, body)


def test_values_the_daemon_would_refuse_are_refused_before_sending(sock_dir):
    async def body(fake, client):
        peer = fake.add(1)
        nested: dict = {}
        inner = nested
        for _ in range(125):
            inner["a"] = {}
            inner = inner["a"]
        # 126 levels (the payload itself and 125 inside) reach the daemon's limit exactly.
        await client.send(peer, nested, kind="message")
        before = len(fake.lines)
        inner["a"] = {}
        bad = [
            (lambda: client.send(peer, nested, kind="message"), DaemonInvalidCommandError, "nests 127 deep"),
            (lambda: client.send(peer, {"n": 10**400}, kind="message"), DaemonInvalidCommandError, "beyond the range"),
            (lambda: client.send(peer, {"n": float("nan")}, kind="message"), DaemonInvalidCommandError, "not JSON"),
            (lambda: client.send(peer, {"s": "\ud800"}, kind="message"), DaemonInvalidCommandError, "unpaired surrogate"),
            (lambda: client.send("\udc00", {}, kind="message"), DaemonInvalidCommandError, "unpaired surrogate"),
            (lambda: client.send(peer, {"s": {1, 2}}), polywire.PolywireTypeError, "not JSON"),
            (lambda: client.send(peer, [1]), polywire.PolywireTypeError, "payload must be a dict"),
            (lambda: client.send(peer, {}, kind="notify"), DaemonInvalidCommandError, "kind must be"),
            (lambda: client.send(peer, {}, timeout_secs=0), DaemonInvalidCommandError, "timeout_secs must be >= 1"),
            (lambda: client.send(peer, {}, timeout_secs=2**64), DaemonInvalidCommandError, "at most"),
            (lambda: client.send(peer, {}, kind="message", timeout_secs=5), DaemonInvalidCommandError, "only valid for request"),
            (lambda: client.send(peer, {}, timeout_secs=1.5), polywire.PolywireTypeError, "timeout_secs"),
            (lambda: client.send(peer, {}, ref="not-a-uuid"), DaemonInvalidCommandError, "ref must be a UUID"),
            (lambda: client.send(peer, {}, ref="{6fc0ec4fe59f4bea9d570d9fdd1108f1}"), DaemonInvalidCommandError, "UUID"),
            (lambda: client.send(peer, {}, ref="URN:uuid:6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1"), DaemonInvalidCommandError, "UUID"),
        ]
        for call, cls, text in bad:
            with pytest.raises(cls) as info:
                await call()
            assert text in str(info.value), (text, str(info.value))
            if cls is polywire.PolywireTypeError:
                assert info.value.code == "AXON_INVALID_ARGUMENT"
            else:
                assert info.value.code == "invalid_command"
        assert len(fake.lines) == before

    with_daemon(sock_dir, body)


def test_the_fake_daemon_refuses_what_the_client_refuses(sock_dir):
    """The client's checks agree with the fake's serde-like parser (a line written raw)."""

    async def main():
        path = os.path.join(sock_dir, "axon.sock")
        async with FakeDaemon(path) as fake:
            peer = fake.add(1)
            reader, writer = await asyncio.open_unix_connection(path, limit=1 << 20)

            async def raw(line: bytes) -> dict:
                writer.write(line + b"\n")
                return json.loads(await reader.readline())

            deep = '{"a":' * 126 + "{}" + "}" * 126
            ok = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":%s,"req_id":"1"}' % (peer.encode(), deep[5:-1].encode()))
            assert ok["ok"] is True
            too_deep = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":%s,"req_id":"2"}' % (peer.encode(), deep.encode()))
            assert too_deep == {"ok": False, "error": "invalid_command", "message": TEXTS["invalid_command"]}
            assert (await raw(b'{"cmd":"status","req_id":5}'))["error"] == "invalid_command"
            assert (await raw(b'{"cmd":"status","req_id":"7","extra":1}'))["req_id"] == "7"
            assert (await raw(b'{"cmd":"nope","req_id":"8"}')) == {"ok": False, "error": "invalid_command",
                                                                   "message": TEXTS["invalid_command"], "req_id": "8"}
            # serde's derive refuses a duplicate field; the req_id is still found (a Value keeps the last).
            assert (await raw(b'{"cmd":"status","cmd":"peers","req_id":"9"}')) == {
                "ok": False, "error": "invalid_command", "message": TEXTS["invalid_command"], "req_id": "9"}
            assert (await raw(b"\xff\xfe")) == {"ok": False, "error": "invalid_command", "message": TEXTS["invalid_command"]}
            writer.write(b"x" * 65537)
            assert json.loads(await reader.readline()) == {"ok": False, "error": "command_too_large",
                                                           "message": TEXTS["command_too_large"]}
            assert await reader.read() == b""  # closed
            writer.close()

    run(main())


def test_an_abrupt_close_fails_every_command_in_flight(sock_dir):
    async def body(fake, client):
        slow = fake.add(1, reply="hang")
        await client.status()  # the daemon has the client: it gets the events
        fake.inbound(slow, "message", {"kept": True})
        await client.status()
        pending = [asyncio.ensure_future(client.send(slow, {}, timeout_secs=20)) for _ in range(3)]
        pending.append(asyncio.ensure_future(client.peers()))
        await asyncio.sleep(0.2)
        fake.drop_clients()
        t0 = asyncio.get_running_loop().time()
        results = await asyncio.gather(*pending, return_exceptions=True)
        assert asyncio.get_running_loop().time() - t0 < 2
        assert all(isinstance(r, DaemonDisconnectedError) for r in results), results
        assert results[0].code == "AXON_DAEMON_DISCONNECTED"
        with pytest.raises(DaemonDisconnectedError):
            await client.whoami()
        # The events received before stay readable, then the iterator raises.
        got = []
        with pytest.raises(DaemonDisconnectedError):
            async for e in client.events():
                got.append(e)
        assert got[0]["envelope"]["payload"] == {"kept": True}
        assert "disconnected" in repr(client)

    with_daemon(sock_dir, body)


def test_the_daemon_closing_on_a_command(sock_dir):
    async def body(fake, client):
        async def hook(command, c):
            return "close" if command["cmd"] == "peers" else None

        fake.before_command = hook
        await client.status()
        with pytest.raises(DaemonDisconnectedError):
            await client.peers()

    with_daemon(sock_dir, body)


def test_garbage_from_the_daemon_is_a_protocol_error(sock_dir):
    for garbage in (b"not json", b"[1,2]", b'{"ok":true,"req_id":"1"', b"\xff"):
        async def body(fake, client, garbage=garbage):
            async def hook(command, c):
                c.writer.write(garbage + b"\n")
                return "ignore"

            fake.before_command = hook
            with pytest.raises(DaemonProtocolError) as info:
                await client.status()
            assert info.value.code == "AXON_DAEMON_PROTOCOL"
            with pytest.raises(DaemonProtocolError):
                await client.peers()

        with_daemon(sock_dir, body)


def test_replies_missing_their_fields_are_protocol_errors(sock_dir):
    async def body(fake, client):
        peer = fake.add(1)
        replies = iter([{"msg_id": 5}, {"response": None}, {"peers": {}}, {"agent_id": 1}, {}])

        async def hook(command, c):
            reply = next(replies)
            if reply:
                reply = dict(reply, ok=True)
            c.write(dict(reply, req_id=command["req_id"]))
            return "ignore"

        fake.before_command = hook
        for call in (lambda: client.send(peer, {}, kind="message"), lambda: client.send(peer, {}), client.peers,
                     lambda: client.add_peer(pubkey=new_key(7)[1], addr="127.0.0.1:1"), client.status):
            with pytest.raises(DaemonProtocolError):
                await call()

    with_daemon(sock_dir, body)


def test_no_reply_in_time_is_a_reply_timeout_and_a_late_reply_is_ignored(sock_dir):
    async def main():
        path = os.path.join(sock_dir, "axon.sock")
        async with FakeDaemon(path) as fake:
            held = []

            async def hook(command, c):
                held.append((command, c))
                return "ignore"

            fake.before_command = hook
            async with await DaemonClient.connect(path, timeout=0.3) as client:
                t0 = asyncio.get_running_loop().time()
                with pytest.raises(DaemonReplyTimeoutError) as info:
                    await client.whoami()
                assert 0.25 < asyncio.get_running_loop().time() - t0 < 2
                assert info.value.code == "AXON_DAEMON_TIMEOUT"
                command, c = held[0]
                c.write({"ok": True, "agent_id": "late", "req_id": command["req_id"]})
                fake.before_command = None
                assert (await client.whoami())["agent_id"] == fake.agent_id

    run(main())


def test_a_command_waits_for_the_daemon_to_finish_the_ones_before_it(sock_dir):
    # The daemon runs commands one at a time: while a request waits for its peer, peers()
    # is not answered. Its deadline counts from the request's, so it does not time out.
    async def main():
        path = os.path.join(sock_dir, "axon.sock")
        async with FakeDaemon(path) as fake:
            slow = fake.add(1, reply="hang")
            async with await DaemonClient.connect(path, timeout=0.5) as client:
                request = asyncio.ensure_future(client.send(slow, {}, timeout_secs=1))
                await asyncio.sleep(0)
                peers = await client.peers()
                assert [p["agent_id"] for p in peers] == [slow]
                with pytest.raises(DaemonTimeoutError):
                    await request

    run(main())


def test_close_fails_commands_in_flight_and_ends_events(sock_dir):
    async def body(fake, client):
        slow = fake.add(1, reply="hang")
        await client.status()
        fake.inbound(slow, "message", {"i": 1})
        await client.status()
        pending = asyncio.ensure_future(client.send(slow, {}, timeout_secs=20))
        events = []

        async def consume():
            async for e in client.events():
                events.append(e)

        consumer = asyncio.ensure_future(consume())
        await asyncio.sleep(0.1)
        await client.close()
        await client.close()  # idempotent
        with pytest.raises(DaemonClosedError) as info:
            await pending
        assert info.value.code == "AXON_DAEMON_CLOSED"
        await asyncio.wait_for(consumer, 2)
        assert [e["envelope"]["payload"] for e in events] == [{"i": 1}]
        assert client.closed
        with pytest.raises(DaemonClosedError):
            await client.peers()
        assert [e async for e in client.events()] == []

    with_daemon(sock_dir, body)


def test_the_daemon_drops_a_65th_client(sock_dir):
    async def main():
        path = os.path.join(sock_dir, "axon.sock")
        async with FakeDaemon(path) as fake:
            clients = [await DaemonClient.connect(path) for _ in range(64)]
            await asyncio.gather(*[c.status() for c in clients])
            extra = await DaemonClient.connect(path)
            with pytest.raises(DaemonDisconnectedError):
                await extra.status()
            await extra.close()
            for c in clients:
                await c.close()

    run(main())


# ---------------------------------------------------------------- connecting


def test_connect_failures_are_unavailable(sock_dir, tmp_path):
    missing = os.path.join(sock_dir, "nothing.sock")
    with pytest.raises(DaemonUnavailableError) as info:
        run(DaemonClient.connect(missing))
    assert info.value.code == "AXON_DAEMON_UNAVAILABLE" and missing in str(info.value)
    regular = os.path.join(sock_dir, "file")
    open(regular, "w").close()
    with pytest.raises(DaemonUnavailableError):
        run(DaemonClient.connect(regular))
    with pytest.raises(DaemonUnavailableError):
        run(DaemonClient.connect("/tmp/" + "x" * 200))
    with pytest.raises(polywire.PolywireTypeError):
        run(DaemonClient.connect(5))
    with pytest.raises(AxonDaemonError) as info:
        run(DaemonClient.connect(missing, timeout=0))
    assert info.value.code == "AXON_INVALID_ARGUMENT"
    with pytest.raises(polywire.PolywireTypeError) as info:
        DaemonClient()
    assert "connect" in str(info.value)


def test_default_path(monkeypatch, sock_dir):
    monkeypatch.setenv("AXON_ROOT", "/srv/axon")
    assert DaemonClient.default_path() == "/srv/axon/axon.sock"
    monkeypatch.setenv("AXON_ROOT", " \u3000")  # blank (Rust's trim): ignored
    monkeypatch.setenv("HOME", "/home/me")
    assert DaemonClient.default_path() == "/home/me/.axon/axon.sock"
    monkeypatch.delenv("AXON_ROOT")
    assert DaemonClient.default_path() == "/home/me/.axon/axon.sock"
    monkeypatch.delenv("HOME")
    with pytest.raises(DaemonUnavailableError):
        DaemonClient.default_path()

    # connect() with no path uses it.
    monkeypatch.setenv("AXON_ROOT", sock_dir)

    async def main():
        async with FakeDaemon(os.path.join(sock_dir, "axon.sock")) as fake:
            async with await DaemonClient.connect() as client:
                assert client.path == os.path.join(sock_dir, "axon.sock")
                assert (await client.whoami())["agent_id"] == fake.agent_id

    run(main())


def test_bytes_and_path_objects(sock_dir):
    import pathlib

    async def main():
        path = os.path.join(sock_dir, "axon.sock")
        async with FakeDaemon(path):
            for p in (pathlib.Path(path), path.encode()):
                async with await DaemonClient.connect(p) as client:
                    assert client.path == path
                    await client.status()

    run(main())


# ---------------------------------------------------------------- add_peer and tokens

# From /work/notes (computed with Python `cryptography`, the seeds 32 x 0x07, 0x2a, 0x00).
TOKENS = [
    ("axon://6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw@127.0.0.1:7100", "6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw=",
     "ed25519.fe812c12f3ab4ce6ac5db69ac352f906"),
    ("axon://GX9rI-FshTLGq8g4-s1ep4m-DHaykgM0A5v6iz02jWE@127.0.0.1:7100", "GX9rI+FshTLGq8g4+s1ep4m+DHaykgM0A5v6iz02jWE=",
     "ed25519.b600306cfa76723fdec395e53a9b3d9f"),
    ("axon://O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik@127.0.0.1:7100", "O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik=",
     "ed25519.139e3940e64b5491722088d9a0d74162"),
]
KEY_URL = "O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik"


def test_token_vectors():
    for token, pubkey, agent_id in TOKENS:
        assert _decode_token(token) == {"pubkey": pubkey, "addr": "127.0.0.1:7100", "agent_id": agent_id}
    # The address is trimmed (Rust's whitespace), a hostname and IPv6 are fine.
    assert _decode_token(f"axon://{KEY_URL}@ host.example:+80\u3000")["addr"] == "host.example:+80"
    assert _decode_token(f"axon://{KEY_URL}@[::1]:7100")["addr"] == "[::1]:7100"
    # Split at the first '@'.
    assert _decode_token(f"axon://{KEY_URL}@user@host:1")["addr"] == "user@host:1"


TOKEN_ERROR_CASES = [
        ("http://abc@127.0.0.1:7100", "peer token must start with 'axon://'"),
        ("AXON://" + KEY_URL + "@127.0.0.1:1", "peer token must start with 'axon://'"),
        ("axon://" + KEY_URL, "peer token must contain '@' between pubkey and addr"),
        ("axon://@@127.0.0.1:7100", "peer token pubkey segment is empty"),
        ("axon://" + KEY_URL + "@", "peer token addr cannot be empty"),
        ("axon://" + KEY_URL + "@ \t", "peer token addr cannot be empty"),
        ("axon://" + KEY_URL + "@host-without-port", "peer token addr must be host:port or ip:port"),
        ("axon://" + KEY_URL + "@:7100", "peer token addr host cannot be empty"),
        ("axon://" + KEY_URL + "@host:", "peer token addr has invalid port ''"),
        ("axon://" + KEY_URL + "@host:65536", "peer token addr has invalid port '65536'"),
        ("axon://" + KEY_URL + "@host:-1", "peer token addr has invalid port '-1'"),
        ("axon://" + KEY_URL + "@host:+", "peer token addr has invalid port '+'"),
        ("axon://" + KEY_URL + "@host:\u0661", "peer token addr has invalid port '\u0661'"),
        # The address is checked before the key.
        ("axon://!!!@nohost", "peer token addr must be host:port or ip:port"),
        ("axon://" + KEY_URL + "=@h:1", "peer token pubkey is not valid base64url"),
        ("axon://O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik=@h:1", "peer token pubkey is not valid base64url"),
        ("axon://" + KEY_URL.replace("-", "+") + "+@h:1", "peer token pubkey is not valid base64url"),
        ("axon://O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2il@h:1", "peer token pubkey is not valid base64url"),  # trailing bits
        ("axon://A@h:1", "peer token pubkey is not valid base64url"),
        ("axon://AQEBAQEBAQE@h:1", "peer token pubkey must decode to 32 bytes, got 8"),
        # U+FEFF is not Rust whitespace (str.strip and JavaScript's trim would remove it).
        ("axon://" + KEY_URL + "@h:1\ufeff", "peer token addr has invalid port '1\ufeff'"),
]


@pytest.mark.parametrize("token,message", TOKEN_ERROR_CASES)
def test_token_errors(token, message):
    with pytest.raises(DaemonInvalidCommandError) as info:
        _decode_token(token)
    assert info.value.message == message and info.value.code == "invalid_command"


def test_add_peer(sock_dir):
    async def body(fake, client):
        token, pubkey, agent_id = TOKENS[0]
        assert await client.add_peer(token) == agent_id
        assert fake.commands[-1] == {"cmd": "add_peer", "req_id": fake.commands[-1]["req_id"], "pubkey": pubkey,
                                     "addr": "127.0.0.1:7100"}
        # pubkey= is trimmed (the daemon keeps the text it is given, and TLS compares it).
        _, pubkey2, agent2 = TOKENS[1]
        assert await client.add_peer(pubkey=f" {pubkey2}\n", addr="localhost:7200") == agent2
        assert fake.commands[-1]["pubkey"] == pubkey2
        peers = {p["agent_id"]: p for p in await client.peers()}
        assert peers[agent_id]["addr"] == "127.0.0.1:7100" and peers[agent2]["addr"] == "127.0.0.1:7200"
        with pytest.raises(DaemonInvalidCommandError):  # already known
            await client.add_peer(token)
        for kwargs, text in [
            ({"pubkey": "not base64!", "addr": "h:1"}, "pubkey is not valid base64"),
            ({"pubkey": base64.b64encode(b"x" * 31).decode(), "addr": "h:1"}, "32 bytes, got 31"),
            ({"pubkey": pubkey.rstrip("="), "addr": "h:1"}, "pubkey is not valid base64"),
        ]:
            with pytest.raises(DaemonInvalidCommandError) as info:
                await client.add_peer(**kwargs)
            assert text in info.value.message
        for args, kwargs in [((), {}), ((token,), {"pubkey": pubkey}), ((), {"pubkey": pubkey}), ((), {"addr": "h:1"})]:
            with pytest.raises(polywire.PolywireTypeError):
                await client.add_peer(*args, **kwargs)

    with_daemon(sock_dir, body)


# ---------------------------------------------------------------- a real upstream daemon
#
# POLYWIRE_AXON_DAEMON_HEAD: the path of an `axon` binary built from upstream
# hwbehrens/axon (main or v0.7.x), outside this repository. Each daemon runs in a network
# namespace of its own with only loopback (`unshare -rn`), so nothing leaves the machine
# (it binds 0.0.0.0 and has no flag for 127.0.0.1); the IPC socket is a file and reaches
# across. Two daemons in one namespace talk to each other over 127.0.0.1.

from real_axon_daemon import RealDaemons, real_binary  # noqa: E402


@pytest.fixture
def real(sock_dir):
    binary = real_binary()
    daemons = RealDaemons(binary, sock_dir)
    yield daemons
    daemons.stop()


def test_real_daemon_commands(real):
    a, b = real.start("a", 17101), real.start("b", 17102)

    async def main():
        async with await DaemonClient.connect(a.socket) as ca, await DaemonClient.connect(b.socket) as cb:
            me = await ca.whoami()
            assert me["agent_id"] == a.agent_id and me["public_key"] == a.public_key
            assert isinstance(me["version"], str) and isinstance(me["uptime_secs"], int)
            status = await ca.status()
            assert set(status) == {"uptime_secs", "peers_connected", "messages_sent", "messages_received"}
            assert await ca.peers() == []
            # Pin each other: a token one way, pubkey + addr the other.
            assert await ca.add_peer(b.token) == b.agent_id
            assert await cb.add_peer(pubkey=a.public_key, addr=a.addr) == a.agent_id
            peers = await ca.peers()
            assert [p["agent_id"] for p in peers] == [b.agent_id] and peers[0]["source"] == "static"
            # A request: b's daemon answers it itself (error / unhandled) and shows it to its clients.
            reply = await ca.send(b.agent_id, {"question": "hi"}, timeout_secs=10)
            assert reply["kind"] == "error" and reply["payload"]["code"] == "unhandled"
            assert reply["from"] == b.agent_id and reply["to"] == a.agent_id
            seen = await next_matching(cb, lambda e: e["event"] == "inbound" and e["envelope"]["kind"] == "request")
            assert seen["from"] == a.agent_id and seen["envelope"]["payload"] == {"question": "hi"}
            assert seen["envelope"]["id"] == reply["ref"]
            # a's clients see the reply as an inbound event too.
            echoed = await next_matching(ca, lambda e: e["event"] == "inbound" and e["envelope"]["id"] == reply["id"])
            assert echoed["envelope"]["kind"] == "error"
            # A message, with a ref.
            msg_id = await ca.send(b.agent_id, {"data": 1}, kind="message", ref=reply["ref"])
            got = await next_matching(cb, lambda e: e["event"] == "inbound" and e["envelope"]["id"] == msg_id)
            assert got["envelope"]["kind"] == "message" and got["envelope"]["payload"] == {"data": 1}
            assert got["envelope"]["ref"] == reply["ref"]
            # The error codes the daemon gives.
            with pytest.raises(DaemonPeerNotFoundError):
                await ca.send("ed25519." + "0" * 32, {})
            with pytest.raises(DaemonSelfSendError):
                await ca.send(a.agent_id, {})
            with pytest.raises(DaemonSelfSendError):
                await ca.add_peer(pubkey=a.public_key, addr="127.0.0.1:1")
            with pytest.raises(DaemonInvalidCommandError):
                await ca.add_peer(b.token)  # already known
            with pytest.raises(DaemonCommandTooLargeError):
                await ca.send(b.agent_id, {"d": "x" * 70000})
            # A peer that is not running: a request times out, a message is unreachable.
            _, ghost_key, ghost = new_key(77)
            assert await ca.add_peer(pubkey=ghost_key, addr="127.0.0.1:17199") == ghost
            with pytest.raises(DaemonTimeoutError):
                await ca.send(ghost, {}, timeout_secs=1)
            status = await ca.status()
            assert status["messages_sent"] >= 2

    run(main())


def test_real_daemon_checks_agree_with_the_client(real):
    """What the client refuses before sending, the daemon refuses too (written raw)."""
    a, b = real.start("a", 17111), real.start("b", 17112)

    async def main():
        async with await DaemonClient.connect(a.socket) as ca, await DaemonClient.connect(b.socket) as cb:
            await ca.add_peer(b.token)
            await cb.add_peer(a.token)
        reader, writer = await asyncio.open_unix_connection(a.socket, limit=1 << 20)

        async def raw(line: bytes) -> dict:
            writer.write(line + b"\n")
            while True:
                reply = json.loads(await asyncio.wait_for(reader.readline(), 15))
                if "event" not in reply:
                    return reply

        deep = '{"a":' * 126 + "{}" + "}" * 126
        to = b.agent_id.encode()
        r = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":%s,"req_id":"1"}' % (to, deep[5:-1].encode()))
        assert r["ok"] is True, r
        r = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":%s,"req_id":"2"}' % (to, deep.encode()))
        assert r["error"] == "invalid_command"
        r = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":{"n":%s},"req_id":"3"}' % (to, b"9" * 400))
        assert r["error"] == "invalid_command"
        r = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":{"s":"\\ud800"},"req_id":"4"}' % to)
        assert r["error"] == "invalid_command"
        r = await raw(b'{"cmd":"send","to":"%s","kind":"request","payload":{},"timeout_secs":0,"req_id":"5"}' % to)
        assert r == {"ok": False, "error": "invalid_command", "message": TEXTS["invalid_command"], "req_id": "5"}
        r = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":{},"timeout_secs":3,"req_id":"6"}' % to)
        assert r["error"] == "invalid_command" and r["req_id"] == "6"
        # Lines that do not parse: main echoes their req_id, v0.7.2 does not.
        r = await raw(b'{"cmd":"status","cmd":"peers","req_id":"66"}')
        assert r.pop("req_id", "66") == "66"
        assert r == {"ok": False, "error": "invalid_command", "message": TEXTS["invalid_command"]}
        r = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":{},"ref":"{6fc0ec4fe59f4bea9d570d9fdd1108f1}","req_id":"67"}' % to)
        assert r["error"] == "invalid_command" and r.get("req_id", "67") == "67"
        r = await raw(b'{"cmd":"send","to":"%s","kind":"message","payload":{},"ref":"{6FC0EC4F-E59F-4BEA-9D57-0D9FDD1108F1}","req_id":"68"}' % to)
        assert r["ok"] is True
        line = b'{"cmd":"send","to":"%s","kind":"message","payload":{"d":"' % to
        tail = b'"},"req_id":"7"}'
        exact = line + b"x" * (65536 - len(line) - len(tail)) + tail
        assert len(exact) == 65536
        r = await raw(exact)
        assert r["ok"] is True, r
        writer.write(line + b"x" * (65537 - len(line) - len(tail)) + tail + b"\n")
        r = json.loads(await asyncio.wait_for(reader.readline(), 15))
        while "event" in r:
            r = json.loads(await asyncio.wait_for(reader.readline(), 15))
        assert r == {"ok": False, "error": "command_too_large", "message": TEXTS["command_too_large"]}
        writer.close()

    run(main())


def test_real_daemon_pair_request_and_abrupt_stop(real):
    a, c = real.start("a", 17121), real.start("c", 17122)

    async def main():
        async with await DaemonClient.connect(a.socket) as ca, await DaemonClient.connect(c.socket) as cc:
            # c knows a, a does not know c: a refuses c in the handshake and tells its clients.
            await cc.add_peer(a.token)
            with pytest.raises((DaemonPeerUnreachableError, DaemonTimeoutError)):
                await cc.send(a.agent_id, {}, timeout_secs=3)
            event = await next_matching(ca, lambda e: e["event"] == "pair_request", timeout=15)
            assert event["agent_id"] == c.agent_id and event["pubkey"] == c.public_key
            # The daemon stops: a command in flight fails, typed, at once.
            a.kill()
            with pytest.raises(DaemonDisconnectedError):
                await asyncio.wait_for(ca.peers(), 5)
            with pytest.raises(DaemonDisconnectedError):
                await ca.status()

    run(main())


def test_real_binary_decodes_tokens_as_the_client_does(sock_dir):
    """`axon connect <token>` (no daemon needed) against the client's decoder: the same
    verdicts and the same messages (upstream prints the anyhow chain after them)."""
    import subprocess

    binary = real_binary()
    cases = [(t, None, a) for t, _, a in TOKENS]
    cases.append((f"axon://{KEY_URL}@ host.example:+80\u3000", None, "ed25519.139e3940e64b5491722088d9a0d74162"))
    cases += [(t, m, None) for t, m in TOKEN_ERROR_CASES]
    for n, (token, message, agent_id) in enumerate(cases):
        root = os.path.join(sock_dir, f"t{n}")
        r = subprocess.run([binary, "--state-root", root, "connect", token], capture_output=True, text=True, timeout=15)
        if message is None:
            assert r.returncode == 0 and f"Added peer {agent_id} ({_decode_token(token)['addr']})" in r.stdout + r.stderr, (token, r)
        else:
            assert r.returncode != 0 and f"failed to parse peer token: {message}" in r.stderr, (token, message, r.stderr)
            with pytest.raises(DaemonInvalidCommandError):
                _decode_token(token)


async def next_matching(client, predicate, timeout=10.0):
    async def find():
        async for e in client.events():
            if predicate(e):
                return e

    return await asyncio.wait_for(find(), timeout)
