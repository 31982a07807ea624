"""Issue #17, "Errors: the same rules everywhere": every public callable of
``polywire.<format>.__all__`` (functions, classes, their public methods) is
swept with a wrong value for each parameter in turn: a str where an int goes,
an int where a str goes, None, floats, NaN, huge and negative ints, bytes,
containers, objects whose dunders raise. Each call returns a value or raises
a ``TypeError`` / ``ValueError`` subclass that is a :class:`polywire.PolywireError`
with a ``code``: never PyO3's ``TypeError("argument 'x': ...")``, an
``OverflowError`` or a ``UnicodeEncodeError``. A ``PolywireTypeError`` for an
argument names the parameter. The first test fails when a public callable has
no sweep entry, so a new export cannot go unswept.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import importlib
import inspect
import io
import math
import re
import uuid

import pytest

import polywire
from polywire import axon, kado, kameo, llm, tether, toon

FORMATS = ("kado", "toon", "tether", "axon", "kameo", "llm")
CODE = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")


class Sentinel(Exception):
    """Raised by the caller's own code (a dunder, a hook): exempt."""


class Hostile:
    """Every conversion dunder raises."""

    def _raise(self, *args, **kwargs):
        raise Sentinel("dunder")

    __index__ = __int__ = __float__ = __str__ = __bytes__ = __iter__ = __len__ = __fspath__ = _raise
    __getitem__ = __contains__ = __bool__ = __buffer__ = _raise

    def __repr__(self):
        return "Hostile()"


class IntSub(int):
    def __index__(self):
        raise Sentinel("__index__")


class StrSub(str):
    def __str__(self):
        raise Sentinel("__str__")


BIG = 10**5000 - 1  # more digits than CPython converts to str by default

BAD = [
    ("None", None),
    ("True", True),
    ("0", 0),
    ("-1", -1),
    ("2**31", 2**31),
    ("2**32", 2**32),
    ("2**53", 2**53),
    ("2**63", 2**63),
    ("2**64", 2**64),
    ("-(2**63)-1", -(2**63) - 1),
    ("2**100", 2**100),
    ("5000 digits", BIG),
    ("1.5", 1.5),
    ("nan", math.nan),
    ("inf", math.inf),
    ("Decimal", decimal.Decimal("1")),
    ("complex", 1j),
    ("'1'", "1"),
    ("'x'", "x"),
    ("''", ""),
    ("lone surrogate", "\ud800x"),
    ("b'x'", b"x"),
    ("bytearray", bytearray(b"x")),
    ("memoryview", memoryview(b"x")),
    ("[]", []),
    ("[1]", [1]),
    ("()", ()),
    ("{}", {}),
    ("{1: 2}", {1: 2}),
    ("set", {1}),
    ("object()", object()),
    ("type", int),
    ("function", lambda: 1),
    ("uuid", uuid.UUID(int=1)),
    ("datetime", datetime.datetime(2020, 1, 1)),
    ("Hostile", Hostile()),
    ("int subclass", IntSub(3)),
    ("str subclass", StrSub("s")),
]

# ---------------------------------------------------------------- fixtures

FRAME = kado.encode(kado.MessageType.INSTRUCTION, {"hello": "world"}, 7, 1000)
BIG_FRAME = kado.encode(kado.MessageType.TOOL_RESULT, {"s": "a" * 5000}, 7, 1000)
SEED = bytes([9]) * 32
LOCAL = axon.agent_id_from_seed(SEED)
REMOTE = axon.agent_id_from_seed(bytes([3]) * 32)
REQUEST = axon.envelope(LOCAL, REMOTE, "query", {"question": "q"}, ts=1000)
PEER = kameo.peer_id_from_public_key(bytes([5]) * 32)
UUID = uuid.UUID("6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1")
SEND = tether.encode_message_send(3, "+", [4], uuid=UUID)
ANSWER = tether.encode_answer(7, uuid=UUID)
COMPRESSED = kado.compress(bytes([1]) * 2000)
AXON1_REQUEST = axon.axon1.request({"question": "q"}, id="6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1")
OTHER_PUBKEY = "O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik="


def session(**kw):
    return axon.Session(LOCAL, **kw)


# ---------------------------------------------------------------- the sweep table
#
# Key: "format.name" (a function, or a class's constructor) or
# "format.Class.method". Value: cases (call, valid arguments by name,
# options); each argument in turn is replaced by each BAD value. A wrong-type
# error (PolywireTypeError) for an argument must name it, unless it is in
# `unnamed` (values whose errors are about something inside them: the fields
# of a request that ask/tell build are checked by encode_request). A
# `callbacks` parameter is not given callables (what a hook raises is the
# caller's own error). `coded`: the valid call may raise a coded error too.


def case(call, unnamed=(), callbacks=(), coded=False, **valid):
    return (call, valid, frozenset(unnamed), frozenset(callbacks), coded)


SWEEP = {
    # ------------------------------------------------------------ kado
    "kado.encode": [
        case(lambda msg_type, data, sequence_id, timestamp: kado.encode(msg_type, data, sequence_id, timestamp),
             unnamed={"data"}, msg_type=1, data={"a": 1}, sequence_id=1, timestamp=1000),
    ],
    "kado.encode_payload": [case(lambda data: kado.encode_payload(data), unnamed={"data"}, data={"a": 1})],
    "kado.decode": [case(lambda buffer, max_size: kado.decode(buffer, max_size=max_size), buffer=BIG_FRAME, max_size=1 << 20)],
    "kado.decode_raw": [case(lambda buffer, max_size: kado.decode_raw(buffer, max_size=max_size), buffer=BIG_FRAME, max_size=1 << 20)],
    "kado.encode_header": [
        case(lambda msg_type, payload_length, sequence_id, timestamp: kado.encode_header(msg_type, payload_length, sequence_id, timestamp),
             msg_type=1, payload_length=0, sequence_id=0, timestamp=0),
    ],
    "kado.decode_header": [case(lambda buffer: kado.decode_header(buffer), buffer=FRAME)],
    "kado.validate": [case(lambda buffer: kado.validate(buffer), buffer=FRAME)],
    "kado.compress": [case(lambda data: kado.compress(data), data=bytes(2000))],
    "kado.decompress": [case(lambda data, max_size: kado.decompress(data, max_size=max_size), data=COMPRESSED, max_size=4096)],
    "kado.is_compressed": [case(lambda data: kado.is_compressed(data), data=FRAME)],
    "kado.FrameDecoder": [
        case(lambda max_frame_size, raw: kado.FrameDecoder(max_frame_size, raw=raw).feed(FRAME), max_frame_size=4096, raw=False),
    ],
    "kado.FrameDecoder.feed": [case(lambda data: kado.FrameDecoder().feed(data), data=FRAME)],
    # ------------------------------------------------------------ toon
    "toon.dumps": [
        case(lambda obj, indent_size, delimiter, default, sort_keys, key_folding, flatten_depth:
             toon.dumps(obj, indent_size=indent_size, delimiter=delimiter, default=default, sort_keys=sort_keys,
                        key_folding=key_folding, flatten_depth=flatten_depth),
             unnamed={"obj"}, callbacks={"default"}, obj={"a": [1, 2], "b": {"c": 1}}, indent_size=2, delimiter=",", default=str,
             sort_keys=False,
             key_folding="safe", flatten_depth=2),
        case(lambda indent: toon.dumps({"a": {"b": 1}}, indent=indent), indent=2),
        case(lambda default: toon.dumps({"a": object()}, default=lambda o: default), unnamed={"default"}, default=1),
    ],
    "toon.encode": [case(lambda obj, indent_size: toon.encode(obj, indent_size=indent_size), unnamed={"obj"}, obj=[1], indent_size=2)],
    "toon.dump": [
        case(lambda obj, fp, indent_size: toon.dump(obj, fp, indent_size=indent_size), unnamed={"obj", "fp"},
             obj={"a": 1}, fp=io.StringIO(), indent_size=2),
    ],
    "toon.loads": [
        case(lambda s, strict, indent_size, parse_float, parse_int, object_hook, expand_paths:
             toon.loads(s, strict=strict, indent_size=indent_size, parse_float=parse_float, parse_int=parse_int,
                        object_hook=object_hook, expand_paths=expand_paths),
             callbacks={"parse_float", "parse_int", "object_hook"},
             s="a[2]: 1,2.5\nb.c: x", strict=True, indent_size=2, parse_float=float, parse_int=int, object_hook=dict,
             expand_paths="safe"),
        case(lambda indent: toon.loads("a:\n  b: 1", indent=indent), indent=2),
        case(lambda object_pairs_hook: toon.loads("a: 1", object_pairs_hook=object_pairs_hook), callbacks={"object_pairs_hook"},
             object_pairs_hook=dict),
        case(lambda s: toon.loads(s), s=b"a: 1"),
    ],
    "toon.decode": [case(lambda s, strict: toon.decode(s, strict=strict), s="a: 1", strict=False)],
    "toon.load": [case(lambda fp, strict: toon.load(fp, strict=strict), unnamed={"fp"}, fp=io.StringIO("a: 1"), strict=True)],
    "toon.decode_stream": [
        case(lambda lines, strict, indent_size: list(toon.decode_stream(lines, strict=strict, indent_size=indent_size)),
             lines=["a: 1", "b[2]: x,y"], strict=True, indent_size=2),
    ],
    "toon.StreamDecoder": [
        case(lambda strict, indent_size: toon.StreamDecoder(strict=strict, indent_size=indent_size).feed("a: 1\n"),
             strict=False, indent_size=2),
    ],
    "toon.StreamDecoder.feed": [case(lambda data: toon.StreamDecoder().feed(data), data=b"a: 1\nb: ")],
    "toon.StreamDecoder.feed_line": [case(lambda line: toon.StreamDecoder().feed_line(line), line="a: 1")],
    # ------------------------------------------------------------ tether
    "tether.Symbol": [case(lambda name: tether.Symbol(name), name="at:put:")],
    "tether.Proxy": [case(lambda exposure_hash: tether.Proxy(exposure_hash), exposure_hash=5)],
    "tether.encode": [
        case(lambda value, latin1, max_depth: tether.encode(value, latin1=latin1, max_depth=max_depth), unnamed={"value"},
             value=[1, "a", True, None], latin1=False, max_depth=10),
    ],
    "tether.decode": [
        case(lambda data, latin1, max_depth: tether.decode(data, latin1=latin1, max_depth=max_depth),
             data=tether.encode([1, "a"]), latin1=False, max_depth=10),
    ],
    "tether.encode_message_send": [
        case(lambda receiver, selector, arguments, uuid, latin1, max_depth:
             tether.encode_message_send(receiver, selector, arguments, uuid=uuid, latin1=latin1, max_depth=max_depth),
             receiver=3, selector="+", arguments=[4], uuid=UUID, latin1=False, max_depth=5),
    ],
    "tether.decode_message_send": [
        case(lambda data, latin1, max_depth: tether.decode_message_send(data, latin1=latin1, max_depth=max_depth),
             data=SEND, latin1=False, max_depth=5),
    ],
    "tether.encode_answer": [
        case(lambda value, uuid, latin1, max_depth: tether.encode_answer(value, uuid=uuid, latin1=latin1, max_depth=max_depth),
             unnamed={"value"}, value=7, uuid=UUID, latin1=False, max_depth=5),
    ],
    "tether.decode_answer": [
        case(lambda data, latin1, max_depth: tether.decode_answer(data, latin1=latin1, max_depth=max_depth),
             data=ANSWER, latin1=False, max_depth=5),
    ],
    "tether.encode_handshake": [case(lambda exposure_hash: tether.encode_handshake(exposure_hash), exposure_hash=5)],
    "tether.decode_handshake": [case(lambda data: tether.decode_handshake(data), data=tether.encode_handshake(5))],
    "tether.to_hex": [case(lambda data: tether.to_hex(data), data=SEND)],
    "tether.from_hex": [case(lambda hex, words: tether.from_hex(hex, words=words), hex="40000007", words=True)],
    "tether.tool_arguments": [
        case(lambda receiver, selector, arguments, latin1, max_depth:
             tether.tool_arguments(receiver, selector, arguments, latin1=latin1, max_depth=max_depth),
             unnamed={"receiver"}, receiver=3, selector="+", arguments=[4], latin1=False, max_depth=5),
    ],
    "tether.decode_result_hex": [
        case(lambda hex, latin1, max_depth: tether.decode_result_hex(hex, latin1=latin1, max_depth=max_depth),
             hex="40000007", latin1=False, max_depth=5),
    ],
    "tether.read_tool_result": [
        case(lambda output, latin1, max_depth: tether.read_tool_result(output, latin1=latin1, max_depth=max_depth),
             output='{"result":"40000007"}', latin1=False, max_depth=5),
        case(lambda result: tether.read_tool_result({"result": result}), unnamed={"result"}, result="40000007"),
    ],
    # ------------------------------------------------------------ axon
    "axon.decode": [case(lambda data, fill_defaults: axon.decode(data, fill_defaults=fill_defaults), data=axon.encode(REQUEST), fill_defaults=True)],
    "axon.encode": [case(lambda envelope: axon.encode(envelope), unnamed={"envelope"}, envelope=REQUEST)],
    "axon.validate": [
        case(lambda envelope, fill_defaults: axon.validate(envelope, fill_defaults=fill_defaults), unnamed={"envelope"},
             envelope=REQUEST, fill_defaults=False),
    ],
    "axon.envelope": [
        case(lambda from_, to, kind, payload, ref_, id, ts: axon.envelope(from_, to, kind, payload, ref_=ref_, id=id, ts=ts),
             unnamed={"payload"}, from_=LOCAL, to=REMOTE, kind="query", payload={"question": "q"}, ref_=None,
             id="ab0b7b6e-4d3e-4a4c-9b6f-0d9fdd1108f1", ts=1000),
        case(lambda ref_: axon.envelope(LOCAL, REMOTE, "response", {"data": 1, "summary": "s"}, ref_=ref_), ref_=REQUEST["id"]),
    ],
    "axon.reply": [
        case(lambda request, kind, payload, id, ts: axon.reply(request, kind, payload, id=id, ts=ts), unnamed={"request", "payload"},
             request=REQUEST, kind="response", payload={"data": 1, "summary": "s"}, id=None, ts=1000),
    ],
    "axon.error_envelope": [
        case(lambda request, code, message, retryable, id, ts: axon.error_envelope(request, code, message, retryable=retryable, id=id, ts=ts),
             unnamed={"request"}, request=REQUEST, code="internal", message="it broke", retryable=True, id=None, ts=1000),
    ],
    "axon.agent_id": [case(lambda public_key: axon.agent_id(public_key), public_key=bytes([1]) * 32)],
    "axon.agent_id_from_seed": [case(lambda seed: axon.agent_id_from_seed(seed), seed=SEED)],
    "axon.public_key_from_seed": [case(lambda seed: axon.public_key_from_seed(seed), seed=SEED)],
    "axon.is_agent_id": [case(lambda s: axon.is_agent_id(s), s=LOCAL)],
    "axon.same_agent": [case(lambda a, b: axon.same_agent(a, b), a=LOCAL, b=LOCAL)],
    "axon.negotiate": [
        case(lambda local_versions, remote_versions: axon.negotiate(local_versions, remote_versions), local_versions=[1], remote_versions=[1]),
        case(lambda version: axon.negotiate([version], [1]), unnamed={"version"}, version=1),
    ],
    "axon.Session": [
        case(lambda local_id, protocol_versions, features, agent_name, expected_peer, replay_window_ms, replay_capacity:
             axon.Session(local_id, protocol_versions=protocol_versions, features=features, agent_name=agent_name,
                          expected_peer=expected_peer, replay_window_ms=replay_window_ms, replay_capacity=replay_capacity),
             local_id=LOCAL, protocol_versions=[1], features=["x"], agent_name="a", expected_peer=REMOTE,
             replay_window_ms=1000, replay_capacity=10),
    ],
    "axon.Session.hello": [case(lambda to, now_ms: session().hello(to, now_ms=now_ms), to=REMOTE, now_ms=1000)],
    # Before the handshake a send fails with not_authorized: coded is all that is asked.
    "axon.Session.send": [case(lambda envelope, now_ms: session().send(envelope, now_ms=now_ms), unnamed={"envelope"}, coded=True,
                               envelope=REQUEST, now_ms=1000)],
    "axon.Session.receive": [
        case(lambda data, stream, now_ms: session().receive(data, stream, now_ms=now_ms),
             data=axon.encode(REQUEST), stream="bidirectional", now_ms=1000),
    ],
    "axon.Session.expire": [case(lambda now_ms: session().expire(now_ms=now_ms), now_ms=1000)],
    "axon.Session.forget": [case(lambda id: session().forget(id), id="x")],
    # ------------------------------------------------------------ axon's DaemonClient (one fake daemon, on DLOOP)
    "axon.DaemonClient": [
        case(lambda key: axon.DaemonClient(key), unnamed={"key"}, coded=True, key=1),
        # connect() (a classmethod, which the table does not list by itself).
        case(lambda path, timeout, max_events: on_daemon(lambda c: connect_and_close(path, timeout, max_events)),
             coded=True, path="<fake>", timeout=5.0, max_events=10),
    ],
    "axon.DaemonClient.send": [
        case(lambda to, payload, kind, timeout_secs, ref:
             on_daemon(lambda c: c.send(_fake_value(to), payload, kind=kind, timeout_secs=timeout_secs, ref=ref)),
             to="<peer>", payload={"a": 1}, kind="request", timeout_secs=5, ref="6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1"),
    ],
    # Adding the same peer twice is the daemon's invalid_command: coded.
    "axon.DaemonClient.add_peer": [
        case(lambda token: on_daemon(lambda c: c.add_peer(token)), coded=True,
             token="axon://O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik@127.0.0.1:7100"),
        case(lambda pubkey, addr: on_daemon(lambda c: c.add_peer(pubkey=pubkey, addr=addr)), coded=True,
             pubkey="GX9rI+FshTLGq8g4+s1ep4m+DHaykgM0A5v6iz02jWE=", addr="127.0.0.1:7100"),
    ],
    # ------------------------------------------------------------ llm
    "llm.count_tokens": [case(lambda text, encoding: llm.count_tokens(text, encoding), text="hello", encoding="cl100k_base")],
    "llm.encode_for_llm": [
        case(lambda value, encoding, formats, delimiter, indent, strategy, default, sort_keys:
             llm.encode_for_llm(value, encoding=encoding, formats=formats, delimiter=delimiter, indent=indent,
                                strategy=strategy, default=default, sort_keys=sort_keys),
             unnamed={"value"}, callbacks={"default"}, value=[{"a": 1}, {"a": 2}, {"a": 3}], encoding="o200k_base",
             formats=("toon", "json"), delimiter="|", indent=2, strategy="tokens", default=str, sort_keys=False),
        case(lambda value, delimiter: llm.encode_for_llm(value, strategy="structure", delimiter=delimiter),
             unnamed={"value"}, value=[{"a": 1}, {"a": 2}, {"a": 3}], delimiter="\t"),
    ],
    "llm.safe_encode": [case(lambda data, fallback_to_json: llm.safe_encode(data, fallback_to_json), unnamed={"data"},
                             data={"a": [1, 2]}, fallback_to_json=True)],
    # ------------------------------------------------------------ axon.axon1
    "axon.axon1.decode": [case(lambda data: axon.axon1.decode(data), data=axon.axon1.encode(AXON1_REQUEST))],
    "axon.axon1.encode": [case(lambda envelope: axon.axon1.encode(envelope), unnamed={"envelope"}, envelope=AXON1_REQUEST)],
    "axon.axon1.request": [case(lambda payload, id: axon.axon1.request(payload, id=id), unnamed={"payload"}, payload={"q": 1}, id=None)],
    "axon.axon1.message": [
        case(lambda payload, kind, ref_, id: axon.axon1.message(payload, kind=kind, ref_=ref_, id=id), unnamed={"payload"},
             payload={"q": 1}, kind="message", ref_=AXON1_REQUEST["id"], id=None),
    ],
    "axon.axon1.response": [
        case(lambda request, payload, id: axon.axon1.response(request, payload, id=id), unnamed={"request", "payload"},
             request=AXON1_REQUEST, payload={"a": 1}, id=None),
    ],
    "axon.axon1.error": [
        case(lambda request, code, message, retryable, id: axon.axon1.error(request, code, message, retryable=retryable, id=id),
             unnamed={"request"}, request=AXON1_REQUEST, code="busy", message="later", retryable=True, id=None),
    ],
    # ------------------------------------------------------------ axon's Peer (one peer, on LOOP)
    "axon.Peer": [case(lambda key: axon.Peer(key), unnamed={"key"}, coded=True, key=1)],
    "axon.Peer.add_peer": [case(lambda peer: on_peer(lambda p: p.add_peer(peer)), unnamed={"peer"}, peer={"pubkey": OTHER_PUBKEY})],
    "axon.Peer.remove_peer": [case(lambda agent_id: on_peer(lambda p: p.remove_peer(agent_id)), agent_id=REMOTE)],
    "axon.Peer.request": [
        case(lambda agent_id, payload, kind, timeout: on_peer(lambda p: p.request(agent_id, payload, kind=kind, timeout=timeout)),
             unnamed={"payload"}, coded=True, agent_id=REMOTE, payload={"q": 1}, kind="request", timeout=1.0),
    ],
    "axon.Peer.send": [
        case(lambda agent_id, payload, kind, ref, timeout: on_peer(lambda p: p.send(agent_id, payload, kind=kind, ref=ref, timeout=timeout)),
             unnamed={"payload"}, coded=True, agent_id=REMOTE, payload={"q": 1}, kind="message", ref=None, timeout=1.0),
    ],
    "axon.Peer.serve": [case(lambda handler: on_peer_sync(lambda p: p.serve(handler)), callbacks={"handler"}, handler=lambda f, k, p: p)],
    # ------------------------------------------------------------ kameo
    "kameo.encode_request": [case(lambda value: kameo.encode_request(value), unnamed={"value"}, value=kameo.tell(1, "a", "m", b"xy"))],
    "kameo.decode_request": [case(lambda data: kameo.decode_request(data), data=kameo.encode_request(kameo.tell(1, "a", "m", b"xy")))],
    "kameo.encode_response": [case(lambda value: kameo.encode_response(value), unnamed={"value"}, value={"Tell": {"Ok": None}})],
    "kameo.decode_response": [case(lambda data: kameo.decode_response(data), data=kameo.encode_response({"Tell": {"Ok": None}}))],
    "kameo.encode_registration": [
        case(lambda sequence_id, peer_id, remote_id: kameo.encode_registration(sequence_id, peer_id, remote_id),
             sequence_id=1, peer_id=PEER, remote_id="counter"),
    ],
    "kameo.decode_registration": [case(lambda data: kameo.decode_registration(data), data=kameo.encode_registration(1, PEER, "counter"))],
    "kameo.metadata_key": [case(lambda actor_name, peer_id: kameo.metadata_key(actor_name, peer_id), actor_name="counter", peer_id=PEER)],
    "kameo.parse_metadata_key": [case(lambda key: kameo.parse_metadata_key(key), key=kameo.metadata_key("counter", PEER))],
    "kameo.provider_key": [case(lambda actor_name: kameo.provider_key(actor_name), actor_name="counter")],
    "kameo.peer_id_from_public_key": [case(lambda key: kameo.peer_id_from_public_key(key), key=bytes([5]) * 32)],
    "kameo.peer_id_to_bytes": [case(lambda peer_id: kameo.peer_id_to_bytes(peer_id), peer_id=PEER)],
    "kameo.peer_id_from_bytes": [case(lambda data: kameo.peer_id_from_bytes(data), data=kameo.peer_id_to_bytes(PEER))],
    "kameo.actor_id_to_bytes": [case(lambda sequence_id, peer_id: kameo.actor_id_to_bytes(sequence_id, peer_id), sequence_id=1, peer_id=PEER)],
    "kameo.actor_id_from_bytes": [case(lambda data: kameo.actor_id_from_bytes(data), data=kameo.actor_id_to_bytes(1, PEER))],
    "kameo.remote_message_id": [
        case(lambda crate_name, crate_major, module_path, message_type, actor_type, impl_generics:
             kameo.remote_message_id(crate_name, crate_major, module_path, message_type, actor_type, impl_generics),
             crate_name="my_crate", crate_major=1, module_path="my_crate::m", message_type="Inc", actor_type="Counter",
             impl_generics=""),
    ],
    "kameo.remote_actor_id": [case(lambda module_path, ident: kameo.remote_actor_id(module_path, ident), module_path="my_crate::m", ident="Counter")],
    "kameo.pack": [case(lambda value: kameo.pack(value), unnamed={"value"}, value={"a": 1})],
    "kameo.unpack": [case(lambda data: kameo.unpack(data), data=kameo.pack({"a": 1}))],
    "kameo.actor_id": [
        case(lambda sequence_id, peer_id: kameo.encode_request(kameo.tell(kameo.actor_id(sequence_id, peer_id), "a", "m", b"")),
             sequence_id=1, peer_id=PEER),
    ],
    "kameo.duration": [case(lambda value: kameo.duration(value), value=1.5)],
    "kameo.ask": [
        case(lambda actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate:
             kameo.encode_request(kameo.ask(actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout=mailbox_timeout,
                                            reply_timeout=reply_timeout, immediate=immediate)),
             unnamed={"actor_remote_id", "message_remote_id", "payload", "immediate"},
             actor_id=1, actor_remote_id="a", message_remote_id="m", payload=b"xy", mailbox_timeout=1, reply_timeout=(1, 5),
             immediate=True),
    ],
    "kameo.tell": [
        case(lambda actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate:
             kameo.encode_request(kameo.tell(actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout=mailbox_timeout,
                                             immediate=immediate)),
             unnamed={"actor_remote_id", "message_remote_id", "payload", "immediate"},
             actor_id={"sequence_id": 1, "peer_id": PEER}, actor_remote_id="a", message_remote_id="m", payload=b"xy",
             mailbox_timeout={"secs": 1, "nanos": 2}, immediate=False),
    ],
    # ------------------------------------------------------------ kameo's Node (one node, on LOOP)
    "kameo.Node": [case(lambda key: kameo.Node(key), unnamed={"key"}, coded=True, key=1)],
    "kameo.Node.dial": [case(lambda multiaddr: on_node(lambda n: n.dial(multiaddr)), coded=True, multiaddr="/ip4/127.0.0.1/tcp/1")],
    "kameo.Node.lookup": [case(lambda name: on_node(lambda n: n.lookup(name)), name="nobody")],
    "kameo.Node.lookup_all": [case(lambda name: on_node(lambda n: first(n.lookup_all(name))), name="nobody")],
    "kameo.Node.register": [
        case(lambda name, handler, remote_id, raw: on_node(lambda n: register_once(n, name, handler, remote_id, raw)),
             callbacks={"handler"}, name="swept", handler=lambda m, v: v, remote_id="swept.Type", raw=False),
    ],
    "kameo.Node.unregister": [case(lambda name: on_node(lambda n: n.unregister(name)), name="nobody")],
    "kameo.RemoteActorRef": [case(lambda key: kameo.RemoteActorRef(key), unnamed={"key"}, coded=True, key=1)],
    "kameo.RemoteActorRef.ask": [
        case(lambda message_remote_id, value, mailbox_timeout, reply_timeout, immediate, raw: on_node(
                 lambda n: echo_ref(n).ask(message_remote_id, value, mailbox_timeout=mailbox_timeout, reply_timeout=reply_timeout,
                                           immediate=immediate, raw=raw)),
             unnamed={"value"}, coded=True, message_remote_id="m", value={"a": 1}, mailbox_timeout=1, reply_timeout=5.0,
             immediate=False, raw=False),
    ],
    "kameo.RemoteActorRef.tell": [
        case(lambda message_remote_id, value, mailbox_timeout, immediate, raw: on_node(
                 lambda n: echo_ref(n).tell(message_remote_id, value, mailbox_timeout=mailbox_timeout, immediate=immediate, raw=raw)),
             unnamed={"value"}, message_remote_id="m", value=[1], mailbox_timeout=None, immediate=False, raw=False),
    ],
}

# kameo's Node is asyncio: one node on one loop serves the sweep of its methods
# (and one AXON peer those of axon.Peer).
LOOP = None
NODE = None
ECHO = None
PEER_ = None


def _loop():
    global LOOP
    if LOOP is None:
        import asyncio

        LOOP = asyncio.new_event_loop()
    return LOOP


def on_peer(make):
    global PEER_
    if PEER_ is None:
        PEER_ = _loop().run_until_complete(axon.Peer.start())
    return _loop().run_until_complete(make(PEER_))


def on_peer_sync(call):
    async def run(p):
        return call(p)

    return on_peer(run)


def on_node(make):
    global NODE
    if NODE is None:
        NODE = _loop().run_until_complete(kameo.Node.start())
    return _loop().run_until_complete(make(NODE))


async def first(agen):
    async for item in agen:
        return item


async def register_once(node, name, handler, remote_id, raw):
    ref = await node.register(name, handler, remote_id=remote_id, raw=raw)
    await node.unregister(name)
    return ref


def echo_ref(node):
    global ECHO
    if ECHO is None:
        ECHO = LOOP.run_until_complete(node.register("echo", lambda m, v: v, remote_id="echo.Type"))
    return ECHO


# axon's DaemonClient: one fake daemon (tests-py/fake_axon_daemon.py) and one client on
# DLOOP serve the sweep of its methods; "<fake>" and "<peer>" stand for its socket and a
# peer it knows.
DLOOP = None
DAEMON = None
CLIENT = None
DAEMON_DIR = None


def on_daemon(make):
    global DLOOP, DAEMON, CLIENT, DAEMON_DIR
    if DLOOP is None:
        import asyncio
        import os
        import tempfile

        from fake_axon_daemon import FakeDaemon

        DLOOP = asyncio.new_event_loop()
        DAEMON_DIR = tempfile.mkdtemp(prefix="pwa-", dir="/tmp")

        async def start():
            fake = await FakeDaemon(os.path.join(DAEMON_DIR, "axon.sock")).start()
            fake.add(1)
            return fake, await axon.DaemonClient.connect(fake.path)

        DAEMON, CLIENT = DLOOP.run_until_complete(start())
    return DLOOP.run_until_complete(make(CLIENT))


def _fake_value(value):
    if value == "<fake>":
        return DAEMON.path
    if value == "<peer>":
        return next(iter(DAEMON.peers))
    return value


async def connect_and_close(path, timeout, max_events):
    client = await axon.DaemonClient.connect(_fake_value(path), timeout=timeout, max_events=max_events)
    await client.close()


@pytest.fixture(scope="module", autouse=True)
def close_the_node():
    yield
    if NODE is not None:
        LOOP.run_until_complete(NODE.close())
    if PEER_ is not None:
        LOOP.run_until_complete(PEER_.close())
    if LOOP is not None:
        LOOP.close()
    if DLOOP is not None:
        import shutil

        DLOOP.run_until_complete(CLIENT.close())
        DLOOP.run_until_complete(DAEMON.stop())
        DLOOP.close()
        shutil.rmtree(DAEMON_DIR, ignore_errors=True)


# Public callables that need no sweep entry, each with the reason.
EXEMPT = {
    "kado.MessageType": "an IntEnum: looking up a member is Python's own Enum behaviour",
    "toon.Delimiter": "a str Enum: looking up a member is Python's own Enum behaviour",
    "tether.MessageSend": "a NamedTuple that decoding returns (a record, no checks)",
    "tether.Answer": "a NamedTuple that decoding returns (a record, no checks)",
    "kado.FrameDecoder.finish": "takes no arguments",
    "toon.StreamDecoder.finish": "takes no arguments",
    "llm.LlmText": "the record encode_for_llm returns (a frozen dataclass; nothing is computed from its fields)",
    "kameo.Node.close": "takes no arguments",
    "axon.Peer.close": "takes no arguments",
    "axon.Peer.peers": "takes no arguments",
    "axon.Peer.inbound": "takes no arguments (an async iterator)",
    "axon.DaemonClient.default_path": "takes no arguments",
    "axon.DaemonClient.close": "takes no arguments",
    "axon.DaemonClient.peers": "takes no arguments",
    "axon.DaemonClient.status": "takes no arguments",
    "axon.DaemonClient.whoami": "takes no arguments",
    "axon.DaemonClient.events": "takes no arguments",
}


def public_callables() -> list[str]:
    out = []
    for format in (*FORMATS, "axon.axon1"):
        module = importlib.import_module(f"polywire.{format}")
        for name in module.__all__:
            value = getattr(module, name)
            if not callable(value) or (isinstance(value, type) and issubclass(value, BaseException)):
                continue
            out.append(f"{format}.{name}")
            if isinstance(value, type) and not issubclass(value, (enum.Enum, tuple)):
                for attr, member in vars(value).items():
                    # A staticmethod object is callable only from Python 3.10 on.
                    is_method = callable(member) or isinstance(member, staticmethod)
                    if not attr.startswith("_") and is_method and not isinstance(member, type):
                        out.append(f"{format}.{name}.{attr}")
    return out


def test_the_sweep_covers_every_public_callable():
    found = public_callables()
    assert len(found) > 75, found
    missing = [k for k in found if k not in SWEEP and k not in EXEMPT]
    assert missing == [], "public callables without a sweep entry (add one to SWEEP, or to EXEMPT with the reason)"
    stale = [k for k in [*SWEEP, *EXEMPT] if k not in found]
    assert stale == [], "sweep entries for no public callable"


def problem_of(key: str, call, args: dict, name: str | None) -> tuple[BaseException | None, str | None]:
    """Run a call: (its error, what is wrong with it); (None, None) when it returned."""
    try:
        call(**args)
        return None, None
    except Sentinel:
        return None, None
    except BaseException as e:  # noqa: BLE001 - the point of the test
        if isinstance(e.__cause__, Sentinel) or isinstance(e.__context__, Sentinel):
            return e, None
        desc = f"{type(e).__module__}.{type(e).__name__} (code {getattr(e, 'code', None)!r}): {e}"
        if not isinstance(e, (TypeError, ValueError)):
            return e, f"neither a TypeError nor a ValueError: {desc}"
        if isinstance(e, (OverflowError, UnicodeError)):
            return e, f"an OverflowError/UnicodeError: {desc}"
        if not isinstance(e, polywire.PolywireError):
            return e, f"not a PolywireError: {desc}"
        code = getattr(e, "code", None)
        axon_code = code in axon.ERROR_CODES or code in axon.DAEMON_ERROR_CODES
        if not (isinstance(code, str) and (CODE.match(code) or (key.startswith("axon.") and axon_code))):
            return e, f"no polywire code: {desc}"
        if str(e).startswith("argument '"):
            return e, f"PyO3's conversion message: {desc}"
        if name is not None and isinstance(e, polywire.PolywireTypeError) and name.rstrip("_") not in str(e):
            return e, f"the message does not name {name}: {desc}"
        return e, None


def test_every_argument_of_every_callable():
    problems: dict[str, dict] = {}
    calls = 0
    for key, cases in SWEEP.items():
        for n, (call, valid, unnamed, callbacks, coded) in enumerate(cases):
            where = f"{key} [case {n}]" if len(cases) > 1 else key
            error, problem = problem_of(key, call, dict(valid), None)
            calls += 1
            if problem or (error is not None and not coded):
                problems.setdefault(f"{where} (valid call)", {"example": problem or repr(error), "values": []})
            for param in valid:
                for label, bad in BAD:
                    if param in callbacks and callable(bad):
                        continue
                    args = dict(valid, **{param: bad})
                    _, problem = problem_of(key, call, args, None if param in unnamed else param)
                    calls += 1
                    if problem:
                        kind = problem.split(":")[0]
                        entry = problems.setdefault(f"{where} {param}: {kind}", {"example": problem, "values": []})
                        entry["values"].append(label)
    assert calls > 2500
    report = [f"{k}\n    with {', '.join(v['values'])}\n    e.g. {v['example']}" for k, v in problems.items()]
    assert not report, f"{len(report)} problems:\n" + "\n".join(report)


# ---------------------------------------------------------------- the same codes as Node


def code_of(call):
    try:
        call()
    except polywire.PolywireError as e:
        return type(e).__name__, e.code
    return None


def test_integer_bounds_and_codes():
    """The bounds the issue names, and wrong types for the helpers and
    constructors, with the class and code of each: the codes Node gives the
    same mistakes (tests-js/arguments.test.js, CODES)."""
    assert code_of(lambda: kado.encode(1, {}, 2**32 - 1, 0)) is None
    assert code_of(lambda: kado.encode(1, {}, 2**32, 0)) == ("KadoError", "KADO_INVALID_ARGUMENT")
    assert code_of(lambda: kado.encode(1, {}, -1, 0)) == ("KadoError", "KADO_INVALID_ARGUMENT")
    assert code_of(lambda: kado.encode(1, {}, "1", 0)) == ("PolywireTypeError", "KADO_INVALID_ARGUMENT")
    assert code_of(lambda: kado.encode(1, {}, 1, 2**64 - 1)) is None
    assert code_of(lambda: kado.encode(1, {}, 1, 2**64)) == ("KadoError", "KADO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.actor_id(2**64 - 1)) is None
    assert code_of(lambda: kameo.actor_id(2**64)) == ("KameoError", "KAMEO_INVALID_VALUE")
    assert code_of(lambda: kameo.actor_id("x")) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.actor_id(1, 5)) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.duration("1s")) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.metadata_key(1, PEER)) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kado.encode("x", {}, 1)) == ("PolywireTypeError", "KADO_INVALID_ARGUMENT")
    assert code_of(lambda: kado.encode(9, {}, 1)) == ("KadoError", "KADO_UNKNOWN_TYPE")
    assert code_of(lambda: tether.from_hex(5)) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.decode("x")) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.encode(1, latin1="yes")) == ("PolywireTypeError", "TETHER_INVALID_OPTION")
    assert code_of(lambda: axon.envelope(LOCAL, REMOTE, "query", {}, ts=2**64)) == ("AxonError", "invalid_envelope")
    assert code_of(lambda: axon.decode(axon.encode(REQUEST), fill_defaults="yes")) == ("PolywireTypeError", "invalid_envelope")
    assert code_of(lambda: axon.error_envelope(REQUEST, "internal", "m", retryable=1)) == ("PolywireTypeError", "invalid_envelope")
    assert code_of(lambda: axon.agent_id("x")) == ("PolywireTypeError", "invalid_envelope")
    assert code_of(lambda: axon.DaemonClient()) == ("PolywireTypeError", "AXON_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.actor_id(-1)) == ("KameoError", "KAMEO_INVALID_VALUE")
    assert code_of(lambda: kameo.actor_id({})) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.actor_id_to_bytes("1")) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.encode_registration(-1, None, "")) == ("KameoError", "KAMEO_INVALID_VALUE")
    assert code_of(lambda: kameo.encode_registration(1, None, 5)) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.tell("x", "a", "m", b"")) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.duration(-1)) == ("KameoError", "KAMEO_INVALID_VALUE")
    assert code_of(lambda: kameo.ask(1, "a", "m", b"", reply_timeout=True)) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.decode_request("text")) == ("PolywireTypeError", "KAMEO_INVALID_ARGUMENT")
    assert code_of(lambda: kameo.metadata_key("a", "not a peer id")) == ("KameoError", "KAMEO_INVALID_BASE58")
    assert code_of(lambda: tether.Symbol(5)) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.Proxy("5")) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.Proxy(True)) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.Proxy(-1)) == ("TetherError", "TETHER_EXPOSURE_HASH_RANGE")
    assert code_of(lambda: tether.decode_result_hex(None)) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.read_tool_result(5)) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.encode_handshake("1")) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.encode_message_send(1, 5, [])) == ("PolywireTypeError", "TETHER_UNSUPPORTED_TYPE")
    assert code_of(lambda: tether.encode(1, max_depth=-1)) == ("TetherError", "TETHER_INVALID_OPTION")
    assert code_of(lambda: toon.dumps({"a": "\ud800"})) == ("ToonEncodeError", "TOON_UNPAIRED_SURROGATE")
    assert code_of(lambda: toon.loads(5)) == ("PolywireTypeError", "TOON_INVALID_ARGUMENT")
    assert code_of(lambda: toon.loads("a: 1", parse_float=5)) == ("PolywireTypeError", "TOON_INVALID_ARGUMENT")
    assert code_of(lambda: toon.dump({}, None)) == ("PolywireTypeError", "TOON_INVALID_ARGUMENT")


def test_polywire_type_error_is_a_polywire_error():
    assert issubclass(polywire.PolywireTypeError, TypeError)
    assert issubclass(polywire.PolywireTypeError, polywire.PolywireError)
    with pytest.raises(polywire.PolywireError) as info:
        kado.compress("not bytes")
    assert isinstance(info.value, TypeError) and info.value.code == "KADO_INVALID_ARGUMENT"
