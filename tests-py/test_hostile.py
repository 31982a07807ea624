"""Hostile inputs for the Python binding (Kado, TOON, AXON, Kameo; Tether is in
test_hostile_tether.py): dunders that mutate or free what is being walked,
re-entrant hooks, cycles, huge ints, out-of-range and wrong-type arguments.

Every case must end in a value or a typed polywire error (a ValueError /
TypeError / RuntimeError subclass with ``.code``): never a segfault, a
``PanicException``, an ``OverflowError`` or a ``UnicodeError``. The recipes that
crashed main run in a subprocess too, so a segfault fails a test instead of
killing pytest; scripts/memcheck.sh runs this module under valgrind.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import polywire
from polywire import axon, kado, kameo, llm, toon
from polywire._polywire import llm as _native_llm


class L(list):
    """A list subclass: freed straight to the allocator (no free list), so a
    read after free is visible to valgrind."""


def payload():
    return L(L([i, "x" * 40]) for i in range(30))


def typed(fn, *args, **kwargs):
    """Run ``fn``; return its value or the typed polywire error it raised."""
    try:
        return fn(*args, **kwargs)
    except (polywire.PolywireError, polywire.PolywireTypeError) as e:
        assert isinstance(e.code, str) and e.code, e
        return e
    except BaseException as e:  # noqa: BLE001 - the point of the test
        pytest.fail(f"untyped error {type(e).__module__}.{type(e).__name__}: {e}")


# ---------------------------------------------------------------- crash recipes of issue #16

RECIPES = {
    # Kado: a str subclass key with a lone surrogate whose encode() clears the dict.
    "kado_str_key_encode": """
        class Evil(str):
            def encode(self, *a, **k):
                d.clear()
                return str.encode(self, *a, **k)
        d = {Evil("a\\ud800"): payload()}
        out = kado.encode_payload(d)
        assert out.startswith(b'{"a\\\\ud800":[[0,'), out
    """,
    # Kado: an int subclass key past 64 bits whose __int__ clears the dict.
    "kado_int_key_int": """
        class Big(int):
            def __int__(self):
                d.clear()
                return -5
        d = {Big(2**70): payload()}
        out = kado.encode_payload(d)
        assert out.startswith(b'{"1180591620717411303424":[[0,'), out
    """,
    # TOON: rows of > 16 keys in another order, a str subclass key whose __eq__ frees the rows.
    "toon_table_key_eq": """
        class S(str):
            __hash__ = str.__hash__
            def __eq__(self, other):
                data.clear()
                return str.__eq__(self, other)
        keys = [f"k{i}" for i in range(20)]
        rows = L([{k: 0 for k in keys}])
        rows.append({(S(k) if k == "k5" else k): 1 for k in reversed(keys)})
        for j in range(30):
            rows.append({k: j for k in keys})
        data = {"rows": rows}
        del rows
        out = toon.dumps(data)
        assert out.startswith("rows[32]{k0,k1"), out
    """,
    # Kado: a dict re-walked in JavaScript key order while a key's conversion resizes it.
    "kado_js_order_resize": """
        class Evil(str):
            def encode(self, *a, **k):
                for i in range(100):
                    d[f"n{i}"] = i
                return str.encode(self, *a, **k)
        d = {"a": 1, "1": 2, Evil("x\\ud800"): 3}
        try:
            out = kado.encode_payload(d)
        except polywire.KadoError as e:
            assert e.code == "KADO_VALUE_CHANGED", e.code
        else:
            assert out == b'{"1":2,"a":1,"x\\\\ud800":3}', out
    """,
}

PRELUDE = """
import polywire
from polywire import kado, toon, axon, kameo
class L(list):
    pass
def payload():
    return L(L([i, "x" * 40]) for i in range(30))
"""


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_issue_recipe_in_process(name):
    exec(PRELUDE + textwrap.dedent(RECIPES[name]), {})


@pytest.mark.parametrize("name", ["kado_str_key_encode", "toon_table_key_eq"])
def test_issue_recipe_in_subprocess(name):
    # The nastiest recipes once more where a segfault cannot take pytest down.
    code = PRELUDE + textwrap.dedent(RECIPES[name])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])


# ---------------------------------------------------------------- hostile dunders, every encoder

def _encoders():
    return [
        ("kado", lambda v: kado.encode_payload(v)),
        ("kado_frame", lambda v: kado.encode(1, v, 1, 0)),
        ("toon", lambda v: toon.dumps(v)),
        ("toon_sorted", lambda v: toon.dumps(v, sort_keys=True)),
        ("axon", lambda v: axon.validate({"v": 1, "id": "a", "from": "x", "to": "y", "kind": "notify", "ts": 1, "payload": {"x": v}})),
        ("kameo", lambda v: kameo.pack(v)),
        # Every candidate rendered and counted in one native call, and the function
        # around it (which goes format by format when that call gives up).
        ("llm_choose", lambda v: _native_llm.choose(v, ["toon", "toon-tab", "json", "json-pretty"], 2, "o200k_base")),
        ("encode_for_llm", lambda v: llm.encode_for_llm(v)),
    ]


ENCODERS = _encoders()


def _mutating_values():
    """(name, factory) pairs: each factory builds a fresh hostile value."""
    out = []

    def str_eq_clears():
        class S(str):
            __hash__ = str.__hash__
            def __eq__(self, o):
                box.clear()
                return str.__eq__(self, o)
        box = {S("k"): payload(), "a": payload()}
        return box
    out.append(("str_eq_clears", str_eq_clears))

    def str_hash_clears():
        class S(str):
            def __hash__(self):
                box.clear()
                return str.__hash__(self)
            __eq__ = str.__eq__
        box = {}
        box[str("k")] = payload()
        box["z"] = [S("v")]
        return box
    out.append(("str_hash_clears", str_hash_clears))

    def str_str_clears():
        class S(str):
            def __str__(self):
                box.clear()
                return "s"
            def encode(self, *a, **k):
                box.clear()
                return b""
        box = {S("k\ud800"): payload(), "b": [S("v\udc00")]}
        return box
    out.append(("str_str_clears", str_str_clears))

    def int_dunders_clear():
        class I(int):
            def __int__(self):
                box.clear()
                return 1
            __index__ = __int__
            def __str__(self):
                box.clear()
                return "1"
            __repr__ = __str__
        box = {I(2**80): payload(), "b": [I(3), I(2**90)], "c": payload()}
        return box
    out.append(("int_dunders_clear", int_dunders_clear))

    def float_dunders_clear():
        class F(float):
            def __float__(self):
                box.clear()
                return 1.0
            def __repr__(self):
                box.clear()
                return "1.0"
        box = {"a": F(2.5), "b": payload(), 1.5: F(3.0)}
        return box
    out.append(("float_dunders_clear", float_dunders_clear))

    def dict_subclass_items_mutates():
        class D(dict):
            def keys(self):
                box.clear()
                return dict.keys(self)
            def items(self):
                box.clear()
                return dict.items(self)
            def __iter__(self):
                box.clear()
                return dict.__iter__(self)
            def __len__(self):
                box.clear()
                return dict.__len__(self)
        box = {"a": D(x=payload()), "b": payload()}
        return box
    out.append(("dict_subclass_items_mutates", dict_subclass_items_mutates))

    def list_subclass_iter_mutates():
        class M(L):
            def __iter__(self):
                box.clear()
                self.clear()
                return iter([])
            def __len__(self):
                box.clear()
                return 0
            def __getitem__(self, i):
                box.clear()
                raise IndexError
        box = {"a": M([payload(), payload()]), "b": payload()}
        return box
    out.append(("list_subclass_iter_mutates", list_subclass_iter_mutates))

    def dict_grows_in_key():
        class S(str):
            __hash__ = str.__hash__
            def __eq__(self, o):
                for i in range(50):
                    box[f"g{i}"] = i
                return str.__eq__(self, o)
            def encode(self, *a, **k):
                for i in range(50):
                    box[f"h{i}"] = i
                return str.encode(self, *a, **k)
        box = {"0": 1, S("k\ud800"): payload(), S("q"): 2}
        return box
    out.append(("dict_grows_in_key", dict_grows_in_key))
    return out


@pytest.mark.parametrize("enc_name,enc", ENCODERS, ids=[e[0] for e in ENCODERS])
@pytest.mark.parametrize("val_name,make", _mutating_values(), ids=[v[0] for v in _mutating_values()])
def test_mutating_dunders(enc_name, enc, val_name, make):
    typed(enc, make())


@pytest.mark.parametrize("enc_name,enc", ENCODERS, ids=[e[0] for e in ENCODERS])
def test_cycles_are_typed(enc_name, enc):
    a: list = []
    a.append(a)
    d: dict = {}
    d["d"] = d
    for v in (a, d):
        r = typed(enc, v)
        assert isinstance(r, (polywire.PolywireError, polywire.PolywireTypeError)), r


@pytest.mark.parametrize("enc_name,enc", ENCODERS, ids=[e[0] for e in ENCODERS])
def test_huge_ints_and_surrogates_to_encode(enc_name, enc):
    for v in (10**5000, -(10**5000), {"k": 10**5000}, "a\ud800b", {"a\udfff": 1}, [2**64], [-(2**63) - 1]):
        typed(enc, v)


def test_toon_default_reentrant_and_mutating():
    class Opaque:
        pass

    box = {"a": [Opaque(), payload()], "b": payload()}

    def default(o):
        box.clear()  # free what the walk has seen
        toon.dumps(box)  # re-enter the encoder
        kado.encode_payload({"x": [1, 2]})
        return "replaced"

    typed(toon.dumps, box, default=default)

    def default_loop(o):
        return Opaque()

    assert isinstance(typed(toon.dumps, [Opaque()], default=default_loop), polywire.PolywireError)


def test_toon_hooks_reentrant():
    doc = "a:\n  b: 1\n  c: 99999999999999999999999\nlist[2]: 1,2"

    def object_hook(d):
        toon.loads(doc)  # re-entrant decode
        toon.dumps(d)
        d.clear()
        return d

    assert typed(toon.loads, doc, object_hook=object_hook) == {}
    assert typed(toon.loads, doc, parse_int=lambda s: toon.loads("x: " + s)) is not None


# ---------------------------------------------------------------- huge ints to decode

def test_kado_huge_int_payload_is_kado_error():
    frame = kado.encode_header(1, 5001, 1, 0) + b"1" * 5001
    e = typed(kado.decode, frame)
    assert isinstance(e, polywire.KadoError) and e.code == "KADO_INTEGER_TOO_LARGE"
    dec = kado.FrameDecoder()
    e = typed(dec.feed, frame)
    assert isinstance(e, polywire.KadoError) and e.code == "KADO_INTEGER_TOO_LARGE"


def test_toon_huge_int_text_is_toon_error():
    e = typed(toon.loads, "a: " + "7" * 5000)
    # A 5000-digit token is not finite as a double: the reference reads it as a string.
    assert e == {"a": "7" * 5000} or isinstance(e, polywire.ToonDecodeError)
    e = typed(toon.loads, "a: " + "7" * 300 + "0" * 4200)
    assert isinstance(e, (dict, polywire.ToonDecodeError))


def test_huge_int_to_encode_is_typed():
    for fn, cls in ((kado.encode_payload, polywire.KadoError), (toon.dumps, polywire.ToonEncodeError)):
        e = typed(fn, {"n": 10**5000})
        assert isinstance(e, cls) and e.code.endswith("INTEGER_TOO_LARGE"), e


# ---------------------------------------------------------------- decompression bombs

def _bomb(n):
    # FF 61 FF repeated: each escape expands to 255 bytes.
    return bytes([kado.MAGIC_COMPRESSED]) + b"\xff\x61\xff" * n


def test_decompress_bounded():
    e = typed(kado.decompress, _bomb(70_000))  # ~17.8 MB out
    assert isinstance(e, polywire.KadoError) and e.code == "KADO_FRAME_TOO_LARGE"
    e = typed(kado.decompress, _bomb(100), max_size=1000)
    assert e.code == "KADO_FRAME_TOO_LARGE"
    assert len(kado.decompress(_bomb(100), max_size=25500)) == 25500


def test_decode_bounded():
    body = _bomb(1000)
    frame = kado.encode_header(1, len(body), 1, 0) + body
    for fn in (kado.decode, kado.decode_raw):
        e = typed(fn, frame, max_size=1000)
        assert isinstance(e, polywire.KadoError) and e.code == "KADO_FRAME_TOO_LARGE"


@pytest.mark.parametrize("fn", [kado.decode, kado.decode_raw, kado.decompress])
@pytest.mark.parametrize("bad", [-1, 2**64 + 1, 2**200, -(2**200), "1", 1.5, True])
def test_max_size_validated(fn, bad):
    e = typed(fn, b"\x01" * 40, max_size=bad)
    assert isinstance(e, (polywire.PolywireError, polywire.PolywireTypeError))
    assert e.code == "KADO_INVALID_ARGUMENT"


# ---------------------------------------------------------------- integer options out of range, wrong types

BAD_INTS = [-1, 2**32, 2**64, 2**200, -(2**200)]
BAD_TYPES = ["1", 1.5, b"1", [1], object(), True]
ENV = {"v": 1, "id": "i1", "from": "a", "to": "b", "kind": "notify", "ts": 1, "payload": {"event": "e"}}

INT_CALLS = [
    ("kado.encode type", lambda x: kado.encode(x, {}, 1, 0)),
    ("kado.encode seq", lambda x: kado.encode(1, {}, x, 0)),
    ("kado.encode ts", lambda x: kado.encode(1, {}, 1, x)),
    ("kado.encode_header len", lambda x: kado.encode_header(1, x, 1, 0)),
    ("kado.encode_header seq", lambda x: kado.encode_header(1, 1, x, 0)),
    ("kado.encode_header ts", lambda x: kado.encode_header(1, 1, 1, x)),
    ("kado.FrameDecoder", lambda x: kado.FrameDecoder(x)),
    ("toon.dumps indent", lambda x: toon.dumps({}, indent_size=x)),
    ("toon.dumps flatten", lambda x: toon.dumps({}, flatten_depth=x)),
    ("toon.loads indent", lambda x: toon.loads("a: 1", indent_size=x)),
    ("axon.envelope ts", lambda x: axon.envelope("a", "b", "notify", {"event": "e"}, ts=x)),
    ("axon.reply ts", lambda x: axon.reply(ENV, "ack", {}, ts=x)),
    ("axon.error_envelope ts", lambda x: axon.error_envelope(ENV, "internal", "m", ts=x)),
    ("axon.Session window", lambda x: axon.Session("a", replay_window_ms=x)),
    ("axon.Session capacity", lambda x: axon.Session("a", replay_capacity=x)),
    ("axon.Session.hello", lambda x: axon.Session("a").hello("b", now_ms=x)),
    ("axon.Session.expire", lambda x: axon.Session("a").expire(now_ms=x)),
    ("axon.negotiate", lambda x: axon.negotiate([x], [1])),
    ("kameo.actor_id_to_bytes", lambda x: kameo.actor_id_to_bytes(x)),
    ("kameo.encode_registration", lambda x: kameo.encode_registration(x, None, "r")),
    ("kameo.remote_message_id", lambda x: kameo.remote_message_id("c", x, "m", "T", "A")),
    ("kameo.pack", lambda x: kameo.pack(x)),
]


@pytest.mark.parametrize("name,call", INT_CALLS, ids=[c[0] for c in INT_CALLS])
def test_int_options_out_of_range_and_wrong_type(name, call):
    for x in BAD_INTS + BAD_TYPES:
        typed(call, x)


STR_CALLS = [
    ("axon.decode", lambda s: axon.decode(s)),
    ("axon.envelope from", lambda s: axon.envelope(s, "b", "notify", {"event": "e"})),
    ("axon.envelope kind", lambda s: axon.envelope("a", "b", s, {"event": "e"})),
    ("axon.envelope payload", lambda s: axon.envelope("a", "b", "notify", {"event": s})),
    ("axon.envelope id", lambda s: axon.envelope("a", "b", "notify", {"event": "e"}, id=s)),
    ("axon.error_envelope", lambda s: axon.error_envelope(ENV, "internal", s)),
    ("axon.is_agent_id", lambda s: axon.is_agent_id(s)),
    ("axon.same_agent", lambda s: axon.same_agent(s, "x")),
    ("axon.Session", lambda s: axon.Session(s)),
    ("axon.Session features", lambda s: axon.Session("a", features=[s])),
    ("axon.Session.receive", lambda s: axon.Session("a").receive(b"{}", s)),
    ("axon.Session.forget", lambda s: axon.Session("a").forget(s)),
    ("axon.encode", lambda s: axon.encode({**ENV, "payload": {"event": s, "l": [s]}})),
    ("kameo.pack", lambda s: kameo.pack({"k": [s]})),
    ("kameo.metadata_key", lambda s: kameo.metadata_key(s, "x")),
    ("kameo.parse_metadata_key", lambda s: kameo.parse_metadata_key(s)),
    ("kameo.provider_key", lambda s: kameo.provider_key(s)),
    ("kameo.remote_actor_id", lambda s: kameo.remote_actor_id(s, "x")),
    ("kameo.remote_message_id", lambda s: kameo.remote_message_id(s, 1, s, s, s, s)),
    ("kameo.encode_registration", lambda s: kameo.encode_registration(1, None, s)),
    ("kameo.encode_request", lambda s: kameo.encode_request({"Ask": {"actor_id": s}})),
    ("toon.dumps", lambda s: toon.dumps({"k": s, "l": [s]})),
    ("toon.dumps delimiter", lambda s: toon.dumps([1], delimiter=s)),
    ("toon.loads", lambda s: toon.loads(s)),
    ("kado.encode_payload", lambda s: kado.encode_payload({"k": s, "l": [s]})),
]


@pytest.mark.parametrize("name,call", STR_CALLS, ids=[c[0] for c in STR_CALLS])
def test_text_inputs_surrogates_and_wrong_types(name, call):
    for s in ["a\ud800", "\udfff", "ok"] + BAD_TYPES:
        typed(call, s)


BYTES_CALLS = [
    kado.decode, kado.decode_raw, kado.decode_header, kado.validate, kado.compress, kado.decompress,
    kado.is_compressed, lambda b: kado.FrameDecoder().feed(b), axon.agent_id, axon.agent_id_from_seed,
    axon.public_key_from_seed, lambda b: axon.Session("a").receive(b, "bidi"), kameo.decode_request,
    kameo.decode_response, kameo.decode_registration, kameo.peer_id_from_public_key, kameo.peer_id_from_bytes,
    kameo.actor_id_from_bytes, kameo.unpack, kameo.peer_id_to_bytes, toon.loads,
]


@pytest.mark.parametrize("call", BYTES_CALLS)
def test_bytes_inputs_wrong_types(call):
    for x in [None, 1, 1.5, "x\ud800", [1], object(), 2**200]:
        typed(call, x)


@pytest.mark.parametrize("call", [
    lambda x: kado.FrameDecoder(raw=x), lambda x: toon.dumps({}, sort_keys=x), lambda x: toon.loads("a: 1", strict=x),
    lambda x: axon.decode(b"{}", fill_defaults=x), lambda x: axon.error_envelope(ENV, "internal", "m", retryable=x),
    lambda x: toon.dumps({}, key_folding=x), lambda x: toon.loads("a: 1", expand_paths=x),
])
def test_flag_options_wrong_types(call):
    for x in [1, "yes", None, 2**200, [1]]:
        typed(call, x)


def test_wrong_type_errors_are_typeerrors_with_code():
    for call in (lambda: kado.encode("1", {}, 1), lambda: kado.decode(1), lambda: toon.loads(1),
                 lambda: axon.same_agent(1, "x"), lambda: kameo.pack(object()), lambda: kado.encode_payload({1j: 1})):
        with pytest.raises(polywire.PolywireTypeError) as info:
            call()
        assert isinstance(info.value, TypeError) and info.value.code


def test_out_of_range_is_the_format_error_not_overflow():
    with pytest.raises(polywire.KadoError) as info:
        kado.encode(1, {}, 2**64)
    assert info.value.code == "KADO_INVALID_ARGUMENT"
    with pytest.raises(polywire.KameoError):
        kameo.actor_id_to_bytes(-1)
    with pytest.raises(polywire.AxonError):
        axon.envelope("a", "b", "notify", {"event": "e"}, ts=-1)


def test_surrogates_are_format_errors():
    with pytest.raises(polywire.AxonError):
        axon.envelope("a\ud800", "b", "notify", {"event": "e"})
    with pytest.raises(polywire.KameoError):
        kameo.pack("a\ud800")
    with pytest.raises(polywire.ToonEncodeError):
        toon.dumps({"a": "\ud800"})
