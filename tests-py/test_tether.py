"""polywire.tether against the shared vectors (bytes made by upstream tether.js), the
Python value mapping, errors, properties, and bytes crossing to Node and back."""

import json
import shutil
import subprocess
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_vectors, node_module
from polywire import PolywireError, TetherError, tether
from polywire.tether import Answer, MessageSend, Proxy, Symbol

V = load_vectors("tether.json")


def typed(v):
    """The vectors' typed-value notation -> a Python value."""
    (k, x), = v.items()
    if k == "int":
        return x
    if k == "bool":
        return x
    if k == "nil":
        return None
    if k == "symbol":
        return Symbol(x)
    if k == "string":
        return x
    if k == "bytes":
        return bytes.fromhex(x)
    if k == "array":
        return [typed(i) for i in x]
    if k == "uuid":
        return uuid.UUID(x)
    if k == "proxy":
        return Proxy(x)
    raise AssertionError(k)


def latin1(v):
    return v.get("text") == "latin1"


@pytest.mark.parametrize("vec", V["values"], ids=lambda v: v["name"])
def test_values(vec):
    value = typed(vec["value"])
    data = tether.encode(value, latin1=latin1(vec))
    assert data.hex() == vec["hex"]
    assert tether.decode(bytes.fromhex(vec["hex"]), latin1=latin1(vec)) == value
    assert tether.to_hex(data) == vec["hex"]


@pytest.mark.parametrize("vec", V["message_sends"], ids=lambda v: v["name"])
def test_message_sends(vec):
    args = [typed(a) for a in vec["arguments"]]
    m = tether.decode_message_send(bytes.fromhex(vec["hex"]), latin1=latin1(vec))
    assert m == MessageSend(uuid.UUID(vec["uuid"]), vec["receiver"], vec["selector"], args)
    assert (m.uuid, m.receiver, m.selector, m.arguments) == tuple(m)
    data = tether.encode_message_send(vec["receiver"], vec["selector"], args, uuid=uuid.UUID(vec["uuid"]), latin1=latin1(vec))
    assert (data.hex() == vec["hex"]) is vec["encode"]
    # A Proxy receiver, a Symbol selector and a UUID string work too.
    again = tether.encode_message_send(Proxy(vec["receiver"]), Symbol(vec["selector"]), tuple(args), uuid=vec["uuid"], latin1=latin1(vec))
    assert again == data


@pytest.mark.parametrize("vec", V["answers"], ids=lambda v: v["name"])
def test_answers(vec):
    u = uuid.UUID(vec["uuid"]) if vec["uuid"] else None
    a = tether.decode_answer(bytes.fromhex(vec["hex"]))
    assert a == Answer(u, typed(vec["result"]))
    assert tether.encode_answer(typed(vec["result"]), uuid=u).hex() == vec["hex"]


@pytest.mark.parametrize("vec", V["handshakes"], ids=lambda v: str(v["exposure_hash"]))
def test_handshakes(vec):
    assert tether.encode_handshake(vec["exposure_hash"]).hex() == vec["hex"]
    assert tether.decode_handshake(bytes.fromhex(vec["hex"])) == vec["exposure_hash"]


def test_tool_helpers():
    for v in V["tool_arguments"]:
        got = tether.tool_arguments(typed(v["receiver"]), v["selector"], [typed(a) for a in v["arguments"]])
        assert json.dumps(got, separators=(",", ":")) == v["json"], v["name"]
    for v in V["tool_results"]:
        assert tether.read_tool_result(v["json"]) == typed(v["result"]), v["name"]
        assert tether.read_tool_result(v["json"].encode()) == typed(v["result"])
        assert tether.read_tool_result(json.loads(v["json"])) == typed(v["result"])
    for v in V["hex"]:
        assert tether.to_hex(tether.from_hex(v["hex"])) == v["bytes"]


def run_error(v):
    op, x = v["op"], v["input"]
    kw = {"latin1": True} if latin1(v) else {}
    if op == "encode":
        return tether.encode(typed(x), **kw)
    if op == "decode":
        return tether.decode(bytes.fromhex(x), **kw)
    if op == "decode_answer":
        return tether.decode_answer(bytes.fromhex(x), **kw)
    if op == "decode_message_send":
        return tether.decode_message_send(bytes.fromhex(x), **kw)
    if op == "decode_handshake":
        return tether.decode_handshake(bytes.fromhex(x))
    if op == "from_hex":
        return tether.from_hex(x)
    if op == "from_hex_bytes":
        return tether.from_hex(x, words=False)
    if op == "read_tool_result":
        return tether.read_tool_result(x)
    raise AssertionError(op)


@pytest.mark.parametrize("vec", V["errors"], ids=lambda v: v["name"])
def test_errors(vec):
    with pytest.raises(TetherError) as info:
        run_error(vec)
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, PolywireError)
    assert e.code == vec["code"], str(e)
    assert e.offset == vec["offset"], str(e)
    if "message_starts_with" in vec:
        assert e.msg.startswith(vec["message_starts_with"]), e.msg
    if "message_contains" in vec:
        assert vec["message_contains"] in e.msg, e.msg


def test_document_examples():
    # 3 + 4: receiver 40000003, arguments 200000080000000140000004, result 40000007.
    args = tether.tool_arguments(3, "+", [4])
    assert args == {"receiver": "40000003", "selector": "+", "arguments": "200000080000000140000004"}
    assert tether.read_tool_result({"result": "40000007"}) == 7
    assert tether.decode_answer(bytes.fromhex("2000001d40000007")).result == 7
    hello = tether.decode_answer(bytes.fromhex("2000001d200000050000000568656c6c6f"))
    assert hello == Answer(None, "hello")
    # The document's answer-tag bytes are wrong; the tag is 20 00 00 1d.
    assert tether.encode_answer(7)[:4] == bytes([0x20, 0x00, 0x00, 0x1D])


def test_value_mapping():
    assert tether.decode(tether.encode((1, 2))) == [1, 2]
    assert tether.decode(tether.encode(bytearray(b"\x01"))) == b"\x01"
    assert tether.decode(tether.encode(memoryview(b"\x02"))) == b"\x02"
    assert tether.decode(tether.encode(True)) is True
    assert tether.decode(tether.encode(None)) is None
    assert Symbol("a") == Symbol("a") and Symbol("a") != Symbol("b") and Symbol("a") != "a"
    assert hash(Symbol("a")) == hash(Symbol("a")) and repr(Symbol("a")) == "Symbol('a')"
    assert Proxy(3) == Proxy(3) and Proxy(3) != Proxy(4) and {Proxy(3): 1}[Proxy(3)] == 1
    import pickle
    assert pickle.loads(pickle.dumps([Symbol("x"), Proxy(9)])) == [Symbol("x"), Proxy(9)]
    with pytest.raises(TetherError) as info:
        tether.encode(1.5)
    assert info.value.code == "TETHER_UNSUPPORTED_TYPE"
    with pytest.raises(TetherError) as info:
        tether.encode(2**100)
    assert info.value.code == "TETHER_INTEGER_RANGE"
    assert str(info.value).startswith("no Tether encoding for 1267650600228229401496703205376: ")
    with pytest.raises(TetherError) as info:
        Proxy(-1)
    assert info.value.code == "TETHER_EXPOSURE_HASH_RANGE"
    circular = []
    circular.append(circular)
    with pytest.raises(TetherError) as info:
        tether.encode(circular)
    assert info.value.code == "TETHER_CYCLE"


def test_random_uuid_and_defaults():
    a = tether.decode_message_send(tether.encode_message_send(1, "foo", []))
    b = tether.decode_message_send(tether.encode_message_send(1, "foo", []))
    assert a.uuid != b.uuid and a.uuid.version == 4
    assert tether.decode_answer(tether.encode_answer([1], uuid=a.uuid)) == Answer(a.uuid, [1])


values = st.recursive(
    st.one_of(
        st.integers(0, tether.MAX_SMALL_INTEGER),
        st.booleans(),
        st.none(),
        st.text(),
        st.text().map(Symbol),
        st.binary(max_size=20),
        st.uuids(),
        st.integers(0, tether.MAX_EXPOSURE_HASH).map(Proxy),
    ),
    lambda inner: st.lists(inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_roundtrip(v):
    data = tether.encode(v)
    assert tether.decode(data) == v
    assert tether.from_hex(tether.to_hex(data), words=False) == data


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_garbage_never_crashes(b):
    for f in (tether.decode, tether.decode_answer, tether.decode_message_send, tether.decode_handshake):
        try:
            f(b)
        except TetherError:
            pass


NODE = shutil.which("node")

NODE_SCRIPT = r"""
const t = require(process.argv[1]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = {
  decoded: input.py.map((h) => t.toTyped(t.decode(Buffer.from(h, 'hex')))),
  encoded: input.values.map((v) => Buffer.from(t.encode(t.fromTyped(v))).toString('hex')),
  send: t.decodeMessageSend(Buffer.from(input.send, 'hex')),
};
out.send = { uuid: out.send.uuid, receiver: out.send.receiver, selector: out.send.selector, arguments: out.send.arguments.map(t.toTyped) };
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_cross_language(root):
    typed_values = [v["value"] for v in V["values"] if v["text"] == "utf8"]
    py_bytes = [tether.encode(typed(v)).hex() for v in typed_values]
    send = tether.encode_message_send(0x2A, "at:put:", [1, Symbol("x"), b"\x00", [uuid.UUID(int=5)]])
    proc = subprocess.run(
        [NODE, "-e", NODE_SCRIPT, str(node_module("tether"))],
        input=json.dumps({"py": py_bytes, "values": typed_values, "send": send.hex()}),
        capture_output=True, text=True, timeout=60, check=True,
    )
    out = json.loads(proc.stdout)
    assert out["decoded"] == typed_values  # Python -> Node
    assert out["encoded"] == py_bytes  # Node -> same bytes as Python
    m = tether.decode_message_send(send)
    assert out["send"] == {"uuid": str(m.uuid), "receiver": 0x2A, "selector": "at:put:",
                           "arguments": [{"int": 1}, {"symbol": "x"}, {"bytes": "00"}, {"array": [{"uuid": str(uuid.UUID(int=5))}]}]}
