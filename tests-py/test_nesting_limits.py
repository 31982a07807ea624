"""One nesting limit and one code per format, in Python as in Node (vectors/nesting_limits.json,
also run by tests-js/nesting_limits.test.js): each encoder accepts a value nested exactly `max`
levels deep and its decoder reads it back; one level more fails in the encoder with
`encode_code`, and the decoder refuses that deeper document, built by hand, with `decode_code`.
So no encoder writes what a decoder refuses."""

import pytest

from conftest import load_vectors
from polywire import axon, kado, kameo, tether, toon

LIMITS = {f["format"]: f for f in load_vectors("nesting_limits.json")["formats"]}
LOCAL = "ed25519." + "a" * 32
REMOTE = "ed25519." + "b" * 32


def arrays(n):
    """n arrays around a leaf: [[...[1]...]]."""
    v = 1
    for _ in range(n):
        v = [v]
    return v


def objects(n):
    """n objects around a leaf: {"a": {"a": ... {"a": 1}}}."""
    v = 1
    for _ in range(n):
        v = {"a": v}
    return v


def shape(v):
    """(levels, leaf) of arrays(n) or objects(n), walked without recursion."""
    n = 0
    while isinstance(v, (list, dict)):
        assert len(v) == 1
        v = v[0] if isinstance(v, list) else v["a"]
        n += 1
    return n, v


def json_arrays(n):
    return "[" * n + "1" + "]" * n


def toon_objects(n):
    """The TOON text of objects(n), written by hand."""
    return "\n".join(["  " * i + "a:" for i in range(n - 1)] + ["  " * (n - 1) + "a: 1"])


def envelope(n):
    return axon.envelope(LOCAL, REMOTE, "query", {"question": "q", "extra": arrays(n)}, ts=1000)


def kado_frame(payload: str) -> bytes:
    body = payload.encode()
    return kado.encode_header(kado.MessageType.INSTRUCTION, len(body), 0, 0) + body


# format -> (make a value n deep, encode, decode, the encoding of a value n deep by hand)
CASES = {
    "kado": (arrays, lambda v: kado.encode(1, v, 1, 0), lambda b: kado.decode(b)["payload"],
             lambda n: kado_frame(json_arrays(n))),
    "toon": (objects, toon.dumps, toon.loads, toon_objects),
    "tether": (arrays, tether.encode, tether.decode, lambda n: tether.encode(arrays(n), max_depth=n)),
    "axon": (envelope, axon.encode, lambda b: axon.decode(b)["payload"]["extra"],
             lambda n: axon.encode(envelope(n - 1)).replace(json_arrays(n - 1).encode(), json_arrays(n).encode())),
    "kameo": (arrays, kameo.pack, kameo.unpack, lambda n: b"\x91" * n + b"\x01"),
}


def code_of(f, *args):
    with pytest.raises(ValueError) as info:
        f(*args)
    return info.value.code


@pytest.mark.parametrize("fmt", sorted(LIMITS))
def test_encoder_and_decoder_share_the_limit(fmt):
    limit = LIMITS[fmt]
    make, encode, decode, by_hand = CASES[fmt]
    n = limit["max"]
    deepest = encode(make(n))
    back = decode(deepest)
    assert shape(back) == (n, 1)
    assert code_of(encode, make(n + 1)) == limit["encode_code"]
    assert code_of(decode, by_hand(n + 1)) == limit["decode_code"]


def test_hand_built_encodings_are_right():
    # The hand-built documents are what the encoders write, where the encoders can write them.
    assert toon.dumps(objects(5)) == toon_objects(5)
    assert kado.decode(kado_frame(json_arrays(5)))["payload"] == arrays(5)
    assert kameo.unpack(b"\x91" * 5 + b"\x01") == arrays(5)
