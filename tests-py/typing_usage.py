"""polywire used the way an application would, for the type checker.

tests-py/test_stubs.py type-checks this file with ``mypy --strict`` (so the stubs must
give precise types for ordinary use, and every ``type: ignore`` below must still be
needed: a stub that stopped rejecting a misuse fails the check) and also runs it, so
everything it does, the typing-only imports included, works at runtime.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Optional

from polywire import AxonError, KadoError, KameoError, PolywireError, TetherError, axon, kado, kameo, tether

if TYPE_CHECKING:
    # Names that exist only in the stubs.
    from typing_extensions import assert_type

    from polywire.axon import Envelope, Inbound, Kind, Outbound, Pending
    from polywire.axon_daemon import DaemonEnvelope, DaemonEvent, DaemonIdentity, DaemonPeer, DaemonStatus
    from polywire.kado import Header, Message, RawMessage
    from polywire.kameo import ActorId, Duration, Registration
    from polywire.tether import TetherValue
    from polywire.toon import Event
else:

    def assert_type(value: object, _type: object) -> object:
        return value


A = "ed25519.fe812c12f3ab4ce6ac5db69ac352f906"
B = "ed25519.b600306cfa76723fdec395e53a9b3d9f"


def error_fields(e: PolywireError) -> tuple[str, Optional[int], Optional[int], Optional[int], str]:
    return e.code, e.offset, e.line, e.column, e.msg


# ------------------------------------------------------------------ kado


def kado_usage() -> None:
    frame = kado.encode(kado.MessageType.TOOL_CALL, {"tool": "grep", "args": ["-n"]}, sequence_id=7)
    assert_type(frame, bytes)
    msg = kado.decode(frame)
    assert_type(msg, "Message")
    header: Header = msg["header"]
    assert header["sequence_id"] == 7 and header["type"] == kado.MessageType.TOOL_CALL
    assert msg["payload"] == {"tool": "grep", "args": ["-n"]}
    raw: RawMessage = kado.decode_raw(bytearray(frame))
    assert_type(raw["payload"], bytes)
    assert kado.decode_header(memoryview(frame))["payload_length"] == len(frame) - kado.HEADER_SIZE
    assert kado.validate(frame) and not kado.is_compressed(kado.encode_payload([1, 2]))
    assert kado.decompress(kado.compress(b"a" * 4096)) == b"a" * 4096
    head = kado.encode_header(kado.MessageType.HEARTBEAT, 0, 1, timestamp=0)
    assert_type(head, bytes)

    decoder = kado.FrameDecoder(max_frame_size=kado.DEFAULT_MAX_FRAME_SIZE)
    assert_type(decoder, kado.FrameDecoder)
    frames: list[Message] | list[RawMessage] = decoder.feed(frame[:5]) + decoder.feed(frame[5:])
    assert len(frames) == 1 and decoder.buffered == 0 and decoder.position == len(frame)
    decoder.finish()
    assert_type(decoder.max_frame_size, int)

    try:
        kado.decode(b"\x01")
    except KadoError as e:
        code, offset, *_ = error_fields(e)
        assert code == "KADO_TRUNCATED_HEADER" and offset is not None


# ------------------------------------------------------------------ tether


def tether_usage() -> None:
    values: list[TetherValue] = [1, "text", tether.Symbol("at:put:"), b"\x00", [True, None], uuid.uuid4()]
    for v in values:
        data = tether.encode(v, max_depth=tether.DEFAULT_MAX_DEPTH)
        assert_type(data, bytes)
        assert tether.decode(data) is not None or v is None
    send = tether.encode_message_send(tether.Proxy(3), "printString", [], uuid=uuid.UUID(int=1))
    decoded = tether.decode_message_send(send)
    assert_type(decoded, tether.MessageSend)
    assert_type(decoded.receiver, int)
    assert decoded.receiver == 3 and decoded.selector == "printString" and decoded.arguments == []
    answer = tether.decode_answer(tether.encode_answer("ok", uuid=decoded.uuid))
    assert_type(answer.uuid, Optional[uuid.UUID])
    assert answer.result == "ok" and answer.uuid == decoded.uuid
    assert tether.decode_handshake(tether.encode_handshake(5)) == 5
    hex_text = tether.to_hex(tether.encode(1))
    assert tether.from_hex(hex_text) == tether.encode(1)
    args = tether.tool_arguments(3, "printString", [])
    assert_type(args, dict[str, str])
    assert tether.read_tool_result({"result": tether.to_hex(tether.encode_answer(7))}) == 7
    assert tether.decode_result_hex(tether.to_hex(tether.encode(7)), latin1=True) == 7
    sym = tether.Symbol("x")
    assert_type(sym.name, str)
    assert_type(tether.Proxy(1).exposure_hash, int)
    try:
        tether.encode(-1)
    except TetherError as e:
        assert e.code == "TETHER_INTEGER_RANGE"


# ------------------------------------------------------------------ axon


def answer(session: axon.Session, inbound: Inbound, now_ms: int) -> Optional[Outbound]:
    """What an application's receive loop does with one inbound message."""
    if inbound["action"] != "deliver":
        return None
    env: Envelope = inbound["envelope"]
    kind: Kind = env["kind"]
    if kind == "query":
        return session.send(axon.reply(env, "response", {"data": ["Alice"], "summary": "Alice is home."}), now_ms=now_ms)
    return session.send(axon.error_envelope(env, "unknown_domain", "ask about who is home"), now_ms=now_ms)


def axon_usage() -> None:
    a = axon.Session(A, agent_name="Alice", replay_window_ms=axon.REPLAY_WINDOW_MS)
    b = axon.Session(B, protocol_versions=[1], features=[])
    hello = a.hello(B, now_ms=1)
    assert_type(hello["bytes"], bytes)
    got = b.receive(hello["bytes"], "bidirectional", now_ms=2)
    assert got["action"] == "respond"
    assert a.receive(got["bytes"], "bidirectional", now_ms=3)["action"] == "deliver"
    assert a.ready and a.peer == B and a.version == axon.PROTOCOL_VERSION

    query = axon.envelope(A, B, "query", {"question": "Who is home?"}, ts=4)
    assert_type(query, "Envelope")
    out = a.send(query, now_ms=4)
    request = b.receive(out["bytes"], "bidirectional", now_ms=5)
    response = answer(b, request, now_ms=6)
    assert response is not None and response["route"] == "reply_on_request_stream"
    back = a.receive(response["bytes"], "bidirectional", now_ms=7)
    in_reply_to: Optional[Pending] = back.get("in_reply_to")
    assert in_reply_to is not None and in_reply_to["kind"] == "query"
    assert a.pending == [] and a.expire(now_ms=8) == [] and a.forget("nothing") is None

    body = axon.encode(query)
    assert axon.decode(body) == axon.validate(dict(query))
    assert axon.KIND_RULES["query"]["expects_response"] and "ping" in axon.REQUIRED_KINDS
    assert axon.negotiate([1, 2], [1]) == 1
    assert axon.same_agent(axon.agent_id_from_seed(bytes(32)), axon.agent_id(axon.public_key_from_seed(bytes(32))))
    assert axon.is_agent_id(A)
    try:
        axon.decode(b"{}")
    except AxonError as e:
        assert e.code == "invalid_envelope"


async def axon_peer_usage() -> None:
    async with await axon.Peer.start(identity=bytes(32)) as a, await axon.Peer.start(peers=[]) as b:
        await a.add_peer(b.token)
        agent: str = await b.add_peer({"pubkey": a.public_key, "addr": a.listen_addr})
        assert agent == a.agent_id

        async def handler(sender: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
            if payload.get("fail"):
                raise axon.AxonRemoteError("busy", "try later", retryable=True)
            return {"echo": payload, "from": sender}

        b.serve(handler)
        reply = await a.request(b.agent_id, {"n": 1}, timeout=10.0)
        assert reply["echo"] == {"n": 1}
        try:
            await a.request(b.agent_id, {"fail": True})
        except axon.AxonRemoteError as e:
            assert (e.code, e.remote_code, e.retryable) == ("AXON_REMOTE_ERROR", "busy", True)
        msg_id: str = await a.send(b.agent_id, {"note": 1})
        async for event in b.inbound():
            assert event["type"] == "message" and event["id"] == msg_id
            break
        states: list[axon.PeerState] = await a.peers()
        assert states[0]["status"] == "connected"
    wire: bytes = axon.axon1.encode(axon.axon1.request({"q": 1}))
    assert axon.axon1.decode(wire)["kind"] == "request"


# ------------------------------------------------------------------ kameo


def kameo_usage() -> None:
    peer = kameo.peer_id_from_public_key(bytes(range(32)))
    who: ActorId = kameo.actor_id(42, peer)
    timeout: Optional[Duration] = kameo.duration(1.5)
    assert timeout == {"secs": 1, "nanos": 500_000_000}
    request = kameo.ask(who, "counter", "inc", kameo.pack({"amount": 5}), mailbox_timeout=timeout, reply_timeout=(0, 1))
    wire = kameo.encode_request(request)
    assert kameo.decode_request(wire)["Ask"]["actor_id"] == who
    assert kameo.decode_request(kameo.encode_request(kameo.tell(0, "counter", "inc", b"\x80")))["Tell"]["immediate"] is False
    reply: dict[str, Any] = kameo.decode_response(kameo.encode_response({"Ask": {"Ok": kameo.pack(6)}}))
    assert kameo.unpack(reply["Ask"]["Ok"]) == 6
    record: Registration = kameo.decode_registration(kameo.encode_registration(42, peer, "Counter"))
    assert record["remote_id"] == "Counter"
    assert kameo.parse_metadata_key(kameo.metadata_key("counter", peer)) == ("counter", peer)
    assert kameo.provider_key("counter") and kameo.peer_id_from_bytes(kameo.peer_id_to_bytes(peer)) == peer
    assert kameo.actor_id_from_bytes(kameo.actor_id_to_bytes(42, peer)) == who
    assert_type(kameo.remote_message_id("app", 0, "app::actors", "Inc", "Counter"), str)
    assert_type(kameo.remote_actor_id("app::actors", "Counter"), str)
    try:
        kameo.unpack(b"\xc1")
    except KameoError as e:
        assert e.code.startswith("KAMEO_")


# ------------------------------------------------------------------ toon streams


def toon_stream_usage() -> None:
    from polywire import toon

    keys: list[str] = []
    for event in toon.decode_stream(["a: 1", "b[2]: x,y"], strict=True):
        if event["type"] == "key":
            keys.append(event["key"])
    assert keys == ["a", "b"]
    d = toon.StreamDecoder(strict=False, indent_size=2)
    events: list[Event] = d.feed(b"a: 1\n") + d.feed("b: 2\n") + d.feed_line("c: 3") + d.finish()
    assert len(events) == 8
    assert_type(d.scanned, int)
    bad = toon.StreamDecoder()
    try:
        bad.feed("a[2]: 1\n")
        bad.finish()
        raise AssertionError("a length mismatch decoded")
    except toon.ToonDecodeError as e:
        assert error_fields(e)[0] == "TOON_LENGTH_MISMATCH"


# ------------------------------------------------------------------ the daemon client


async def daemon_session(path: str) -> list[DaemonEvent]:
    """A session with a running daemon (type-checked; run only up to the connection)."""
    async with await axon.DaemonClient.connect(path, timeout=5.0, max_events=100) as client:
        me: DaemonIdentity = await client.whoami()
        status: DaemonStatus = await client.status()
        peers: list[DaemonPeer] = await client.peers()
        agent: str = await client.add_peer("axon://6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw@127.0.0.1:7100")
        await client.add_peer(pubkey=me["public_key"], addr="127.0.0.1:7101")
        reply: DaemonEnvelope = await client.send(agent, {"question": "hi"}, timeout_secs=5)
        msg_id: str = await client.send(agent, {"data": 1}, kind="message", ref=reply.get("ref"))
        assert status["uptime_secs"] >= 0 and msg_id and peers is not None
        events: list[DaemonEvent] = []
        async for event in client.events():
            events.append(event)
            if event.get("event") == "pair_request" or len(events) == 2:
                break
        assert_type(client.dropped_events, int)
        return events


def daemon_usage() -> None:
    try:
        asyncio.run(daemon_session("/nonexistent/axon.sock"))
    except axon.DaemonUnavailableError as e:
        assert e.code == "AXON_DAEMON_UNAVAILABLE" and isinstance(e, AxonError)
        assert isinstance(e, axon.AxonDaemonError) and e.message == str(e)
    else:
        raise AssertionError("no daemon runs there")
    assert "timeout" in axon.DAEMON_ERROR_CODES and axon.DAEMON_MAX_COMMAND_SIZE == 65536


# ------------------------------------------------------------------ misuse


def misuse() -> None:
    """Never called: each line must be rejected by the stubs (--strict warns about an
    ignore that is no longer needed)."""
    kado.FrameDecoder(raw="yes")  # type: ignore[arg-type]
    kado.decode("text")  # type: ignore[arg-type]
    kado.MessageType(1).payload  # type: ignore[attr-defined]
    tether.encode(1.5)  # type: ignore[arg-type]
    from polywire import toon

    toon.dumps([1], delimiter=";")  # type: ignore[arg-type]
    tether.Symbol(b"x")  # type: ignore[arg-type]
    axon.envelope(A, B, "shout", {})  # type: ignore[arg-type]
    axon.Session(A, no_such_option=1)  # type: ignore[call-arg]
    kameo.ask(who_is="x")  # type: ignore[call-arg]
    kameo.duration("1s")  # type: ignore[arg-type]
    axon.Peer(1).serve(5)  # type: ignore[arg-type]
    axon.DaemonClient.connect(max_events="5")  # type: ignore[arg-type, unused-coroutine]

    class MyDecoder(kado.FrameDecoder):  # type: ignore[misc]
        pass


if __name__ == "__main__":
    kado_usage()
    tether_usage()
    axon_usage()
    import asyncio

    asyncio.run(axon_peer_usage())
    kameo_usage()
    toon_stream_usage()
    daemon_usage()
    print("ok")
