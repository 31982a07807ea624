"""polywire.kameo against the shared vectors (bytes written, and verdicts given, by the
real kameo 0.22.2 crate in kameo-parity), plus the Python API's own behaviour."""

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_vectors, node_module
from polywire import KameoError, PolywireError, kameo

V = load_vectors("kameo.json")


def from_json(j):
    """The JSON form of values in vectors/kameo.json -> Python values."""
    if isinstance(j, dict):
        if len(j) == 1:
            ((k, v),) = j.items()
            if k == "$int":
                return int(v)
            if k == "$bytes":
                return bytes.fromhex(v)
            if k in ("$f64", "$f32"):
                return float(v)
            if k == "$map":
                return {hashable(from_json(a)): from_json(b) for a, b in v}
        return {k: from_json(v) for k, v in j.items()}
    if isinstance(j, list):
        return [from_json(x) for x in j]
    return j


def hashable(v):
    return tuple(hashable(x) for x in v) if isinstance(v, list) else v


def has_f32(j):
    if isinstance(j, dict):
        return "$f32" in j or any(has_f32(v) for v in j.values())
    if isinstance(j, list):
        return any(has_f32(v) for v in j)
    return False


def test_header_and_constants():
    assert V["format"] == "kameo"
    assert "kameo" in V["how"]
    assert kameo.MESSAGING_PROTOCOL == V["messaging_protocol"] == "/kameo/messaging/1.0.0"
    assert kameo.REGISTRY_PROTOCOL == V["registry_protocol"] == "/kameo/registry/1.0.0"
    assert kameo.MAX_REQUEST_SIZE == 1 << 20
    assert kameo.MAX_RESPONSE_SIZE == 10 << 20
    assert kameo.MAX_DEPTH == 256


@pytest.mark.parametrize("vec", V["requests"], ids=lambda v: v["name"])
def test_requests_are_byte_identical_to_kameo(vec):
    value = from_json(vec["value"])
    assert kameo.encode_request(value).hex() == vec["hex"]
    assert kameo.decode_request(bytes.fromhex(vec["hex"])) == value


@pytest.mark.parametrize("vec", V["responses"], ids=lambda v: v["name"])
def test_responses_are_byte_identical_to_kameo(vec):
    value = from_json(vec["value"])
    assert kameo.encode_response(value).hex() == vec["hex"]
    assert kameo.decode_response(bytes.fromhex(vec["hex"])) == value


@pytest.mark.parametrize("vec", V["decode"], ids=lambda v: v["name"])
def test_decoding_accepts_and_rejects_what_kameo_does(vec):
    data = bytes.fromhex(vec["hex"])
    decode, encode = (
        (kameo.decode_request, kameo.encode_request)
        if vec["kind"] == "request"
        else (kameo.decode_response, kameo.encode_response)
    )
    if vec["kameo"] == "ok":
        value = decode(data)
        if "value" in vec:
            assert value == from_json(vec["value"])
        assert encode(value).hex() == vec["canonical_hex"]
    else:  # "error", or "panic" where kameo itself panics
        with pytest.raises(KameoError) as info:
            decode(data)
        assert info.value.code == vec["error"]
        assert isinstance(info.value, ValueError) and isinstance(info.value, PolywireError)


@pytest.mark.parametrize("vec", V["registrations"], ids=lambda v: v["name"])
def test_registrations(vec):
    seq = from_json(vec["sequence_id"])
    data = kameo.encode_registration(seq, vec["peer_id"], vec["remote_id"])
    assert data.hex() == vec["hex"]
    assert kameo.decode_registration(data) == {
        "sequence_id": seq,
        "peer_id": vec["peer_id"],
        "remote_id": vec["remote_id"],
    }


@pytest.mark.parametrize("vec", V["registration_decode"], ids=lambda v: v["name"])
def test_registration_decoding(vec):
    data = bytes.fromhex(vec["hex"])
    if vec["kameo"] == "ok":
        assert kameo.decode_registration(data) == {
            "sequence_id": from_json(vec["sequence_id"]),
            "peer_id": vec["peer_id"],
            "remote_id": vec["remote_id"],
        }
    else:
        with pytest.raises(KameoError) as info:
            kameo.decode_registration(data)
        assert info.value.code == vec["error"]


@pytest.mark.parametrize("vec", V["peer_ids"], ids=lambda v: v.get("base58") or v.get("input_hex"))
def test_peer_ids(vec):
    if "ed25519_public_key" in vec:
        key = bytes.fromhex(vec["ed25519_public_key"])
        assert kameo.peer_id_from_public_key(key) == vec["base58"]
        assert kameo.peer_id_to_bytes(vec["base58"]).hex() == vec["hex"]
        # the protobuf encoding of the same key gives the same id
        assert kameo.peer_id_from_public_key(bytes.fromhex("08011220") + key) == vec["base58"]
        return
    data = bytes.fromhex(vec["input_hex"])
    if "error" in vec:
        with pytest.raises(KameoError) as info:
            kameo.peer_id_from_bytes(data)
        assert info.value.code == vec["error"]
    else:
        assert kameo.peer_id_from_bytes(data) == vec["base58"]
        assert kameo.peer_id_to_bytes(vec["base58"]).hex() == vec["hex"]


@pytest.mark.parametrize("vec", V["keys"], ids=lambda v: v["actor_name"])
def test_registry_keys(vec):
    assert kameo.provider_key(vec["actor_name"]).hex() == vec["provider_key_hex"]
    assert kameo.metadata_key(vec["actor_name"], vec["peer_id"]) == vec["metadata_key"]
    peer_bytes = kameo.peer_id_to_bytes(vec["peer_id"])
    assert kameo.metadata_key(vec["actor_name"], peer_bytes) == vec["metadata_key"]
    assert kameo.parse_metadata_key(vec["metadata_key"]) == (vec["actor_name"], vec["peer_id"])
    assert kameo.parse_metadata_key(vec["metadata_key"].encode()) == (vec["actor_name"], vec["peer_id"])


@pytest.mark.parametrize("vec", V["remote_ids"], ids=lambda v: v["id"])
def test_remote_ids(vec):
    if vec["kind"] == "message":
        got = kameo.remote_message_id(
            vec["crate_name"],
            vec["crate_major"],
            vec["module_path"],
            vec["message_type"],
            vec["actor_type"],
            vec["impl_generics"],
        )
    else:
        got = kameo.remote_actor_id(vec["module_path"], vec["ident"])
    assert got == vec["id"]


@pytest.mark.parametrize("vec", V["msgpack"], ids=lambda v: v["name"])
def test_msgpack_matches_rmp_serde(vec):
    value = from_json(vec["value"])
    data = bytes.fromhex(vec["hex"])
    assert kameo.unpack(data) == value
    if has_f32(vec["value"]):
        # Python floats are doubles: an f32 field re-packs as float 64, which
        # rmp_serde reads back into an f32 all the same.
        assert kameo.unpack(kameo.pack(value)) == value
    else:
        assert kameo.pack(value).hex() == vec["hex"]


def test_ask_and_tell_helpers_build_kameo_requests():
    by_name = {v["name"]: v for v in V["requests"]}
    vec = by_name["ask_typical"]["value"]["Ask"]
    peer = vec["actor_id"]["peer_id"]
    req = kameo.ask(
        kameo.actor_id(42, peer),
        "counter",
        "inc",
        kameo.pack({"amount": 5}),
        mailbox_timeout=1.5,
        reply_timeout=datetime.timedelta(seconds=5),
    )
    assert kameo.encode_request(req).hex() == by_name["ask_typical"]["hex"]
    tell = kameo.tell(
        kameo.actor_id(42, peer), "counter", "inc", kameo.pack({"amount": 5}), mailbox_timeout=(0, 250_000_000)
    )
    assert kameo.encode_request(tell).hex() == by_name["tell_typical"]["hex"]
    # a bare sequence id is a local actor id
    assert kameo.decode_request(kameo.encode_request(kameo.tell(0, "", "", b"")))["Tell"]["actor_id"] == {
        "sequence_id": 0,
        "peer_id": None,
    }


def test_duration_helper():
    assert kameo.duration(None) is None
    assert kameo.duration(2) == {"secs": 2, "nanos": 0}
    assert kameo.duration(0.25) == {"secs": 0, "nanos": 250_000_000}
    assert kameo.duration(datetime.timedelta(days=1, microseconds=7)) == {"secs": 86400, "nanos": 7000}
    assert kameo.duration((3, 4)) == {"secs": 3, "nanos": 4}
    with pytest.raises(KameoError) as info:
        kameo.duration(-1.0)
    assert info.value.code == "KAMEO_INVALID_VALUE"
    with pytest.raises(TypeError):
        kameo.duration("1s")


def test_value_errors_are_typed():
    with pytest.raises(KameoError) as info:
        kameo.encode_request({"Ask": {"actor_id": {"sequence_id": -1}}})
    assert info.value.code == "KAMEO_INVALID_VALUE"
    assert "Ask" in str(info.value)
    with pytest.raises(KameoError) as info:
        kameo.encode_request(kameo.tell(1, "a", "m", [1, 2, 3]))
    assert info.value.code == "KAMEO_INVALID_VALUE" and "payload" in str(info.value)
    with pytest.raises(KameoError) as info:
        kameo.encode_response({"Tell": {"Err": {"HandlerError": b""}}})
    assert info.value.code == "KAMEO_INVALID_VALUE"
    with pytest.raises(KameoError) as info:
        kameo.encode_request(kameo.tell(kameo.actor_id(1, "not-a-peer-id"), "a", "m", b""))
    assert info.value.code == "KAMEO_INVALID_VALUE"
    with pytest.raises(KameoError) as info:
        kameo.pack(2**64)
    assert info.value.code == "KAMEO_MSGPACK_INTEGER_RANGE"
    with pytest.raises(TypeError):
        kameo.pack(object())
    with pytest.raises(TypeError):
        kameo.decode_request("not bytes")


def test_decode_errors_carry_offsets():
    with pytest.raises(KameoError) as info:
        kameo.decode_request(bytes.fromhex("a1635368"))
    assert info.value.code == "KAMEO_EOF"
    assert info.value.offset == 2
    with pytest.raises(KameoError) as info:
        kameo.decode_registration(bytes.fromhex("00 01 00 00"))
    assert info.value.code == "KAMEO_REGISTRATION_TRUNCATED"


def test_buffer_inputs_and_ids():
    vec = V["requests"][1]
    data = bytes.fromhex(vec["hex"])
    expected = from_json(vec["value"])
    assert kameo.decode_request(bytearray(data)) == expected
    assert kameo.decode_request(memoryview(data)) == expected
    peer = V["keys"][0]["peer_id"]
    raw = kameo.actor_id_to_bytes(2**64 - 1, peer)
    assert raw[:8] == b"\xff" * 8
    assert kameo.actor_id_from_bytes(raw) == {"sequence_id": 2**64 - 1, "peer_id": peer}
    assert kameo.actor_id_to_bytes(5) == (5).to_bytes(8, "little")
    with pytest.raises(KameoError) as info:
        kameo.actor_id_from_bytes(b"1234567")
    assert info.value.code == "KAMEO_ACTOR_ID_TOO_SHORT"


def test_unpack_map_keys_and_limits():
    assert kameo.unpack(kameo.pack({(1, 2): "t"})) == {(1, 2): "t"}
    with pytest.raises(KameoError) as info:
        kameo.unpack(bytes.fromhex("81 81 00 00 00"))  # a map used as a map key
    assert info.value.code == "KAMEO_MSGPACK_UNHASHABLE_KEY"
    deep = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(KameoError) as info:
        kameo.pack(deep)
    assert info.value.code == "KAMEO_DEPTH_LIMIT"
    with pytest.raises(KameoError) as info:
        kameo.unpack(b"\x91" * 300)
    assert info.value.code == "KAMEO_DEPTH_LIMIT"


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=8), inner, max_size=8),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_pack_round_trip(value):
    assert kameo.unpack(kameo.pack(value)) == value


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_decoders_never_crash(data):
    for decode in (kameo.decode_request, kameo.decode_response, kameo.decode_registration, kameo.unpack):
        try:
            decode(data)
        except KameoError:
            pass


NODE_SCRIPT = r"""
const kameo = require(process.argv[1]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const again = (decode, encode) => (h) => encode(decode(Buffer.from(h, 'hex'))).toString('hex');
process.stdout.write(JSON.stringify({
  requests: input.requests.map(again(kameo.decodeRequest, kameo.encodeRequest)),
  responses: input.responses.map(again(kameo.decodeResponse, kameo.encodeResponse)),
  packed: input.packed.map(again(kameo.unpack, kameo.pack)),
  registrations: input.registrations.map(again(kameo.decodeRegistration,
    (r) => kameo.encodeRegistration(r.sequence_id, r.peer_id, r.remote_id))),
}));
"""


def test_python_bytes_round_trip_through_node(root):
    """Values Python encodes decode in Node and re-encode to the very same bytes."""
    import random
    import shutil
    import subprocess
    import json

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    rng = random.Random(7)
    peer = V["keys"][0]["peer_id"]
    requests, responses, packed, registrations = [], [], [], []
    for i in range(60):
        seq = rng.choice([0, 1, 2**53 - 1, 2**53, 2**64 - 1, rng.randrange(2**64)])
        payload = kameo.pack({"n": rng.randrange(-(2**63), 2**64), "s": "é" * (i % 5), "b": bytes(rng.randrange(256) for _ in range(i)), "f": (i + 0.5) / 7})  # integral floats would come back from JS as ints
        req = kameo.ask(
            kameo.actor_id(seq, peer if i % 2 else None),
            "zähler",
            str(i),
            payload,
            mailbox_timeout=(rng.randrange(2**64), rng.randrange(10**9)),
            immediate=bool(i % 3),
        )
        requests.append(kameo.encode_request(req).hex())
        responses.append(kameo.encode_response({"Ask": {"Ok": payload}} if i % 2 else {"Tell": {"Err": {"UnknownActor": {"actor_remote_id": str(i)}}}}).hex())
        packed.append(payload.hex())
        registrations.append(kameo.encode_registration(seq, peer if i % 3 else None, "r" * i).hex())
    proc = subprocess.run(
        [node, "-e", NODE_SCRIPT, str(node_module("kameo"))],
        input=json.dumps({"requests": requests, "responses": responses, "packed": packed, "registrations": registrations}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    out = json.loads(proc.stdout)
    assert out == {"requests": requests, "responses": responses, "packed": packed, "registrations": registrations}
