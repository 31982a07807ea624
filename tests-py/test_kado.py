"""polywire.kado against the shared vectors (bytes made by the upstream TypeScript and
Python code), plus the drop-in API, error and streaming behaviour."""

import json
import math
import struct
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_vectors
from polywire import KadoError, PolywireError, kado

V = load_vectors("kado.json")


def payload_of(v):
    """(encoder input, decoder output) of a vector, expanding payload_gen."""
    gen = v.get("payload_gen")
    if gen is None:
        return v["payload"], v["decoded"]
    if gen["kind"] == "repeat":
        value = {gen["key"]: gen["unit"] * gen["count"]}
    elif gen["kind"] == "nested_arrays":
        value = []
        for _ in range(gen["depth"] - 1):
            value = [value]
    else:
        raise AssertionError(gen["kind"])
    return value, value


def nested_depth(v):
    depth = 0
    while isinstance(v, list):
        depth += 1
        v = v[0] if v else None
    return depth


@pytest.mark.parametrize("vec", V["frames"], ids=lambda v: v["name"])
def test_encode_is_byte_identical_to_upstream_typescript(vec):
    value, decoded = payload_of(vec)
    frame = kado.encode(vec["type"], value, vec["sequence_id"], timestamp=vec["timestamp"])
    assert frame.hex() == vec["frame"]
    assert kado.is_compressed(frame[kado.HEADER_SIZE:]) is vec["compressed"]
    msg = kado.decode(bytes.fromhex(vec["frame"]))
    if vec.get("payload_gen", {}).get("kind") == "nested_arrays":
        assert nested_depth(msg["payload"]) == vec["payload_gen"]["depth"]
    else:
        assert msg["payload"] == decoded
    assert msg["header"] == {
        "version": 1,
        "type": vec["type"],
        "payload_length": len(frame) - kado.HEADER_SIZE,
        "timestamp": vec["timestamp"],
        "sequence_id": vec["sequence_id"],
    }


def test_encode_accepts_message_type_enum_and_float_spellings():
    a = kado.encode(kado.MessageType.STATUS, {"progress": 1.0, "n": [2.0, -0.0]}, 3, 7)
    b = kado.encode(4, {"progress": 1, "n": [2, 0]}, 3, 7)
    assert a == b
    assert a[kado.HEADER_SIZE:] == b'{"progress":1,"n":[2,0]}'


@pytest.mark.parametrize("vec", V["python_frames"], ids=lambda v: v["name"])
def test_frames_from_upstream_python_decode(vec):
    msg = kado.decode(bytes.fromhex(vec["frame"]))
    payload = msg["payload"]
    # The vector lists NaN/Infinity as null; we decode them to floats, as
    # json.loads does.
    for nf in vec.get("nonfinite", []):
        node = payload
        path = nf["path"]
        for step in path[:-1]:
            node = node[step]
        assert isinstance(node[path[-1]], float) and not math.isfinite(node[path[-1]])
        node[path[-1]] = None
    assert payload == vec["payload"]


@pytest.mark.parametrize("vec", V["rle"], ids=lambda v: v["name"])
def test_rle_matches_upstream(vec):
    data = bytes.fromhex(vec["input"])
    assert kado.compress(data).hex() == vec["compressed"]
    assert kado.decompress(bytes.fromhex(vec["compressed"])) == data


@pytest.mark.parametrize("vec", V["errors"], ids=lambda v: v["name"])
def test_error_vectors(vec):
    with pytest.raises(KadoError) as info:
        kado.decode(bytes.fromhex(vec["frame"]))
    assert info.value.code == vec["code"]
    assert info.value.offset == vec["offset"]
    assert isinstance(info.value, ValueError) and isinstance(info.value, PolywireError)
    assert str(info.value).endswith(f"at byte {vec['offset']}")


@pytest.mark.parametrize("vec", V["rle_errors"], ids=lambda v: v["name"])
def test_rle_error_vectors(vec):
    with pytest.raises(KadoError) as info:
        kado.decompress(bytes.fromhex(vec["input"]))
    assert (info.value.code, info.value.offset) == (vec["code"], vec["offset"])


def test_upstream_module_shape():
    assert kado.TOON_VERSION == 1
    assert kado.HEADER_SIZE == struct.calcsize(kado.HEADER_FORMAT) == 18
    assert kado.COMPRESSION_THRESHOLD == 1024 and kado.MAGIC_COMPRESSED == 0x5A
    assert [m.name for m in kado.MessageType] == [
        "INSTRUCTION", "TOOL_CALL", "TOOL_RESULT", "STATUS", "ERROR", "HEARTBEAT",
        "CONTEXT_REQUEST", "CONTEXT_RESPONSE",
    ]
    header = kado.encode_header(kado.MessageType.TOOL_CALL, 5, 9, timestamp=1234)
    assert header == struct.pack(kado.HEADER_FORMAT, 1, 2, 5, 1234, 9)
    assert kado.decode_header(header + b"xxxxx") == {
        "version": 1, "type": 2, "payload_length": 5, "timestamp": 1234, "sequence_id": 9,
    }


def test_buffer_types_and_trailing_bytes():
    frame = kado.encode(1, {"instruction": "x"}, 1, 0)
    for buf in (frame, bytearray(frame), memoryview(frame), memoryview(b"\0" + frame)[1:], frame + b"tail"):
        assert kado.decode(buf)["payload"] == {"instruction": "x"}
        assert kado.validate(buf)
    with pytest.raises(TypeError, match="expected bytes"):
        kado.decode("not bytes")


def test_default_timestamp_is_now_in_ms():
    import time

    before = int(time.time() * 1000)
    ts = kado.decode(kado.encode(6, {}, 1))["header"]["timestamp"]
    assert before <= ts <= int(time.time() * 1000) + 1


def test_json_is_json_stringify_exact():
    payload = kado.encode_payload(
        {"b": 1, "2": "two", "1": "one", "s": "q\"\\\n\x01é\u2028", "f": [1e21, 1.5e-7, 1e-6, float("nan"), float("inf")],
         "big": 2**80, "t": (1, True, None)}
    )
    assert payload == (
        '{"1":"one","2":"two","b":1,"s":"q\\"\\\\\\n\\u0001é\u2028",'
        '"f":[1e+21,1.5e-7,0.000001,null,null],"big":1208925819614629174706176,"t":[1,true,null]}'
    ).encode()
    # Non-str keys as json.dumps converts them; lone surrogates as JSON.stringify writes them.
    assert kado.encode_payload({1: 0, 2.5: 0, False: 0, None: 0}) == b'{"1":0,"2.5":0,"false":0,"null":0}'
    assert kado.encode_payload("a\ud800b") == b'"a\\ud800b"'


def test_unsupported_values_raise_type_error():
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        kado.encode(1, {"x": {1, 2}}, 1)
    with pytest.raises(TypeError, match="keys must be"):
        kado.encode(1, {(1, 2): 0}, 1)
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="circular"):
        kado.encode(1, loop, 1)


def test_argument_errors():
    with pytest.raises(KadoError) as info:
        kado.encode(9, {}, 1)
    assert info.value.code == "KADO_UNKNOWN_TYPE"
    with pytest.raises(KadoError):
        kado.encode(1, {}, 2**32)
    with pytest.raises(KadoError):
        kado.encode(1, {}, 1, timestamp=-1)


def test_decode_raw_returns_decompressed_bytes():
    value = {"data": "z" * 4000}
    frame = kado.encode(3, value, 1, 0)
    assert kado.is_compressed(frame[18:])
    raw = kado.decode_raw(frame)
    assert raw["payload"] == kado.encode_payload(value)
    assert json.loads(raw["payload"]) == value


def test_frame_decoder_byte_by_byte_and_in_chunks():
    frames = [bytes.fromhex(v["frame"]) for v in V["frames"]]
    stream = b"".join(frames)
    for size in (1, 5, 18, 4096, len(stream)):
        dec = kado.FrameDecoder()
        got = []
        for i in range(0, len(stream), size):
            got.extend(dec.feed(stream[i:i + size]))
        dec.finish()
        assert len(got) == len(frames)
        assert [m["header"]["sequence_id"] for m in got] == [v["sequence_id"] for v in V["frames"]]
        assert got[0]["payload"] == V["frames"][0]["decoded"]
    raw = kado.FrameDecoder(raw=True).feed(stream)
    assert [m["payload"] for m in raw] == [kado.decode_raw(f)["payload"] for f in frames]


def test_frame_decoder_limits_and_sticky_errors():
    dec = kado.FrameDecoder(max_frame_size=100)
    with pytest.raises(KadoError) as info:
        dec.feed(kado.encode_header(1, 1_000_000, 1, 0))
    assert info.value.code == "KADO_FRAME_TOO_LARGE"
    assert dec.buffered <= 18
    with pytest.raises(KadoError) as again:
        dec.feed(kado.encode(1, {}, 1, 0))
    assert again.value.code == "KADO_FRAME_TOO_LARGE"

    # Frames before a bad one are delivered; the error comes with the next call.
    good = kado.encode(1, {"a": 1}, 1, 0)
    bad = bytearray(kado.encode(1, {"a": 1}, 2, 0))
    bad[1] = 42
    dec = kado.FrameDecoder()
    assert [m["payload"] for m in dec.feed(good + bytes(bad))] == [{"a": 1}]
    with pytest.raises(KadoError) as info:
        dec.feed(b"")
    assert info.value.code == "KADO_UNKNOWN_TYPE"
    assert info.value.offset == len(good) + 1

    dec = kado.FrameDecoder()
    dec.feed(good[:10])
    with pytest.raises(KadoError) as info:
        dec.finish()
    assert info.value.code == "KADO_TRUNCATED_HEADER"


def test_deep_payload_does_not_crash():
    deep = b"[" * 100_000 + b"]" * 100_000
    frame = kado.encode_header(1, len(deep), 1, 0) + deep
    with pytest.raises(KadoError) as info:
        kado.decode(frame)
    assert info.value.code == "KADO_INVALID_JSON"


def as_js(v):
    """The value as JavaScript sees it: every number a double."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, list):
        return [as_js(x) for x in v]
    return {k: as_js(x) for k, x in v.items()}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=8), children, max_size=6),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values, msg_type=st.integers(1, 8), seq=st.integers(0, 2**32 - 1), ts=st.integers(0, 2**64 - 1))
def test_property_encode_decode_identity(value, msg_type, seq, ts):
    msg = kado.decode(kado.encode(msg_type, value, seq, timestamp=ts))
    # Numbers travel as JavaScript numbers: an integral float such as 4.6e16
    # is written in integer form and comes back as an int of the same value.
    assert as_js(msg["payload"]) == as_js(value)
    assert (msg["header"]["type"], msg["header"]["sequence_id"], msg["header"]["timestamp"]) == (msg_type, seq, ts)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=3000) | st.lists(st.sampled_from([b"\0" * 7, b"\xff", b"ab", b"\xff" * 300]), max_size=40).map(b"".join))
def test_property_compress_decompress_identity(data):
    packed = kado.compress(data)
    assert len(packed) <= len(data)
    if not (data[:1] == b"\x5a" and packed == data):
        assert kado.decompress(packed) == data


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200))
def test_property_garbage_never_crashes(data):
    for fn in (kado.decode, kado.decompress, kado.FrameDecoder(max_frame_size=4096).feed):
        try:
            fn(data)
        except KadoError:
            pass


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
