"""polywire.toon: the TOON spec v4.0 conformance fixtures (vectors/toon_spec.json: the
fixtures' inputs with the @toon-format/toon 4.4.0 reference's results), the spec v3 key-folding / path-expansion fixtures (@toon-format/spec 3.3.2
from node_modules), the shared vectors (outputs of the @toon-format/toon reference), the
toon_format-shaped API, bad input, and the cross-language round trip with Node."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import json
import math
import pathlib
import random
import shutil
import subprocess
import uuid
from collections import Counter, OrderedDict
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, load_vectors, node_module
from polywire import PolywireError, ToonEncodeError, toon
from polywire.toon import Delimiter, ToonDecodeError

V3 = ROOT / "node_modules" / "@toon-format" / "spec" / "tests" / "fixtures"

def fixtures(directory: pathlib.Path):
    files = sorted(directory.glob("*.json"))
    assert files, f"no fixtures in {directory}"
    for path in files:
        for case in json.loads(path.read_text(encoding="utf-8"))["tests"]:
            yield path.name, case


def same(a, b) -> bool:
    """JSON equality with numbers compared as doubles (the reference's numbers are
    doubles; polywire's integers are exact) and object keys as sets."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    return type(a) is type(b) and a == b


def test_same_is_not_vacuous():
    assert same({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not same({"a": 1}, {"a": "1"})
    assert not same({"a": True}, {"a": 1})
    assert not same([1, 2], [2, 1])


def encode_options(options: dict | None) -> dict:
    o = dict(options or {})
    out = {}
    if "delimiter" in o:
        out["delimiter"] = o.pop("delimiter")
    if "indentSize" in o:
        out["indent_size"] = o.pop("indentSize")
    if "keyFolding" in o:
        out["key_folding"] = o.pop("keyFolding")
    if "flattenDepth" in o:
        out["flatten_depth"] = o.pop("flattenDepth")
    assert not o, f"unhandled options {o}"
    return out


def decode_options(options: dict | None) -> dict:
    o = dict(options or {})
    out = {}
    if "strict" in o:
        out["strict"] = o.pop("strict")
    if "indentSize" in o:
        out["indent_size"] = o.pop("indentSize")
    if "expandPaths" in o:
        out["expand_paths"] = o.pop("expandPaths")
    assert not o, f"unhandled options {o}"
    return out


# ---------------------------------------------------------------- fixtures and vectors


def test_spec_v4_encode_fixtures():
    cases = load_vectors("toon_spec.json")["encode"]
    for case in cases:
        assert toon.dumps(case["input"], **encode_options(case.get("options"))) == case["expected"], (case["file"], case["name"])
    assert len(cases) == 173


def test_spec_v4_decode_fixtures():
    """Where the reference throws (the fixtures' error cases, and the four v4.0 non-strict
    bracket-header cases that spec 4.1 and the 4.4 reference reject), polywire fails with
    the reference's message on the reference's line."""
    n = errors = changed = 0
    for case in load_vectors("toon_spec.json")["decode"]:
        n += 1
        opts = decode_options(case.get("options"))
        what = (case["file"], case["name"])
        if "error" in case:
            errors += 1
            changed += not case["fixture_should_error"]
            with pytest.raises(ToonDecodeError) as e:
                toon.loads(case["input"], **opts)
            assert e.value.msg.startswith(case["error"]) and e.value.line == case["line"], (what, e.value)
            continue
        got = toon.loads(case["input"], **opts)
        assert same(got, case["expected"]), (what, got)
    assert (n, errors, changed) == (343, 83, 4)


@pytest.mark.skipif(not V3.exists(), reason="npm install provides @toon-format/spec 3.3.2")
def test_spec_v3_key_folding_and_path_expansion_fixtures():
    folding = [c for name, c in fixtures(V3 / "encode") if name == "key-folding.json"]
    assert len(folding) == 12
    for case in folding:
        opts = encode_options(case.get("options"))
        assert toon.dumps(case["input"], **opts) == case["expected"], case["name"]
    expansion = [c for name, c in fixtures(V3 / "decode") if name == "path-expansion.json"]
    assert len(expansion) == 12
    for case in expansion:
        opts = decode_options(case.get("options"))
        if case.get("shouldError"):
            with pytest.raises(ToonDecodeError):
                toon.loads(case["input"], **opts)
        else:
            assert same(toon.loads(case["input"], **opts), case["expected"]), case["name"]


def test_encode_vectors():
    v = load_vectors("toon_encode.json")
    assert len(v["cases"]) >= 200
    for case in v["cases"]:
        o = case["options"]
        opts = {"delimiter": o["delimiter"], "indent_size": o["indent"]}
        if "keyFolding" in o:
            opts["key_folding"] = o["keyFolding"]
        if "flattenDepth" in o:
            opts["flatten_depth"] = o["flattenDepth"]
        assert toon.dumps(json.loads(case["input_json"]), **opts) == case["expected"], case


def test_decode_vectors():
    v = load_vectors("toon_decode.json")
    assert len(v["cases"]) >= 1000
    for case in v["cases"]:
        opts = {"strict": case["strict"], "indent_size": case["indent"]}
        if "error" in case:
            with pytest.raises(ToonDecodeError) as e:
                toon.loads(case["input"], **opts)
            assert e.value.line == case["line"] and e.value.msg.startswith(case["error"]), (case, e.value)
        else:
            got = toon.loads(case["input"], **opts)
            assert same(got, case["value"]), (case, got)


def test_path_expansion_vectors():
    v = load_vectors("toon_decode_expand.json")
    assert len(v["cases"]) >= 100
    for case in v["cases"]:
        opts = {"strict": case["strict"], "indent_size": v["indent"], "expand_paths": "safe"}
        if "error" in case:
            with pytest.raises(ToonDecodeError) as e:
                toon.loads(case["input"], **opts)
            assert e.value.line == case["line"] and e.value.msg.startswith(case["error"]), (case, e.value)
        else:
            assert same(toon.loads(case["input"], **opts), case["value"]), case


# ---------------------------------------------------------------- the toon_format-shaped API


def test_api_names_and_aliases():
    for name in ["Delimiter", "ToonDecodeError", "decode", "dump", "dumps", "encode", "load", "loads"]:
        assert name in toon.__all__ and hasattr(toon, name)
    assert toon.encode is toon.dumps and toon.decode is toon.loads
    assert issubclass(ToonDecodeError, ValueError) and issubclass(ToonDecodeError, PolywireError)
    assert Delimiter.PIPE == "|" and str(Delimiter.TAB) == "\t" and isinstance(Delimiter.COMMA, str)
    import inspect

    params = inspect.signature(toon.dumps).parameters
    assert params["indent_size"].default == 2 and params["delimiter"].default == ","
    assert params["sort_keys"].default is False and params["default"].default is None
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for n, p in params.items() if n != "obj")
    params = inspect.signature(toon.loads).parameters
    assert params["strict"].default is True and params["indent_size"].default == 2
    for hook in ["parse_float", "parse_int", "object_hook", "object_pairs_hook"]:
        assert params[hook].default is None


def test_options():
    value = {"a": {"b": [1, 2], "c": [{"x": 1, "y": "p|q"}, {"x": 2, "y": "r"}]}}
    assert toon.dumps(value, indent_size=4) == toon.encode(value, indent=4)
    assert toon.dumps(value, delimiter=Delimiter.PIPE) == toon.dumps(value, delimiter="|")
    assert toon.dumps(value, delimiter="|") == 'a:\n  b[2|]: 1|2\n  c[2|]{x|y}:\n    1|"p|q"\n    2|r'
    assert toon.loads("a:\n    b: 1", indent=4) == toon.decode("a:\n    b: 1", indent_size=4) == {"a": {"b": 1}}
    with pytest.raises(ValueError):
        toon.dumps(1, delimiter=";")
    with pytest.raises(TypeError):
        toon.dumps(1, indent_size=True)
    with pytest.raises(TypeError):
        toon.dumps(1, indent_size=2.0)
    with pytest.raises(ValueError):
        toon.loads("a: 1", indent_size=0)
    with pytest.raises(ValueError):
        toon.dumps(1, indent_size=10_000)
    with pytest.raises(TypeError):
        toon.loads("a: 1", indent_size=2, indent=4)
    with pytest.raises(ValueError):
        toon.dumps({}, key_folding="yes")
    assert toon.loads("a[3]: 1,2", strict=False) == {"a": [1, 2]}
    with pytest.raises(ToonDecodeError):
        toon.loads("a[3]: 1,2")


def test_key_folding_and_path_expansion_options():
    value = {"a": {"b": {"c": 1}}, "d": {"e": [1, 2]}}
    text = toon.dumps(value, key_folding="safe")
    assert text == "a.b.c: 1\nd.e[2]: 1,2"
    assert toon.dumps(value, key_folding="safe", flatten_depth=2) == "a.b:\n  c: 1\nd.e[2]: 1,2"
    assert toon.dumps(value, key_folding="safe", flatten_depth=math.inf) == text
    assert toon.dumps(value) == toon.dumps(value, key_folding="off")
    assert toon.loads(text) == {"a.b.c": 1, "d.e": [1, 2]}
    assert toon.loads(text, expand_paths="safe") == value
    with pytest.raises(ToonDecodeError):
        toon.loads("a.b: 1\na: 2", expand_paths="safe")


def test_dump_and_load_files():
    value = {"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]}
    buf = io.StringIO()
    toon.dump(value, buf, indent_size=4)
    assert buf.getvalue() == toon.dumps(value, indent_size=4)
    assert toon.load(io.StringIO(buf.getvalue()), indent_size=4) == value
    assert toon.load(io.BytesIO(buf.getvalue().encode()), indent_size=4) == value


def test_numbers_and_integers_of_any_size():
    assert toon.dumps([1.0, -0.0, 1e21, 1e20, 1e-7, 0.1, 5e-324, math.nan, -math.inf]) == (
        "[9]: 1,0,1e+21,100000000000000000000,1e-7,0.1,5e-324,null,null"
    )
    big = [2**53 + 1, -(2**64), 10**40, 2**63 - 1, -(2**63)]
    text = toon.dumps({"n": big})
    assert text == "n[5]: " + ",".join(map(str, big))
    assert toon.loads(text) == {"n": big}
    assert toon.loads("a: -0\nb: -0.0\nc: 1e999\nd: 1.5e3") == {"a": 0, "b": 0.0, "c": "1e999", "d": 1500.0}
    assert isinstance(toon.loads("a: 2")["a"], int) and isinstance(toon.loads("a: 2.0")["a"], float)


def test_hooks():
    text = "a: 1.10\nb: 12\nc[2]: 3,4.5\nd:\n  e: 99999999999999999999"
    assert toon.loads(text, parse_float=Decimal)["a"] == Decimal("1.10")
    got = toon.loads(text, parse_int=lambda s: f"int:{s}", parse_float=lambda s: f"float:{s}")
    assert got == {"a": "float:1.10", "b": "int:12", "c": ["int:3", "float:4.5"], "d": {"e": "int:99999999999999999999"}}
    assert toon.loads(text, object_pairs_hook=lambda p: p)[2] == ("c", [3, 4.5])
    assert toon.loads(text, object_hook=lambda d: ("D", d)) == ("D", {"a": 1.1, "b": 12, "c": [3, 4.5], "d": ("D", {"e": 99999999999999999999})})
    # object_pairs_hook wins over object_hook, as in json.loads.
    assert toon.loads("a: 1", object_hook=dict, object_pairs_hook=tuple) == (("a", 1),)
    # Hooks see expanded paths too.
    assert toon.loads("a.b: 1.5", expand_paths="safe", parse_float=Decimal) == {"a": {"b": Decimal("1.5")}}

    def boom(_):
        raise KeyError("hook")

    with pytest.raises(KeyError):
        toon.loads("a: 1", parse_int=boom)
    # A token that would overflow a double is a string, hooks or not.
    assert toon.loads("a: 1e999", parse_float=Decimal) == {"a": "1e999"}


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass
class Point:
    x: int
    y: list


def test_host_types_as_toon_format_accepts_them():
    value = {
        "tuple": (1, 2),
        "set": {3, 1, 2},
        "frozenset": frozenset(["b", "a"]),
        "decimal": [Decimal("1.10"), Decimal("-1e30"), Decimal("0.0000001"), Decimal("123456789.123456789123456789"), Decimal("NaN")],
        "date": datetime.date(2020, 1, 2),
        "datetime": datetime.datetime(2020, 1, 2, 3, 4, 5),
        "uuid": uuid.UUID(int=1),
        "path": pathlib.PurePosixPath("/a/b"),
        "enum": Color.RED,
        "intenum": Level.HIGH,
        "point": Point(1, [2]),
        "ordered": OrderedDict([("z", 1), ("a", 2)]),
        "keys": {1: "int", 2.5: "float", None: "none", True: "bool"},
    }
    assert toon.dumps(value) == (
        "tuple[2]: 1,2\n"
        "set[3]: 1,2,3\n"
        "frozenset[2]: a,b\n"
        "decimal[5]: 1.1,-1e+30,1e-7,123456789.123456789123456789,null\n"
        "date: 2020-01-02\n"
        'datetime: "2020-01-02T03:04:05"\n'
        "uuid: 00000000-0000-0000-0000-000000000001\n"
        "path: /a/b\n"
        "enum: red\n"
        "intenum: 3\n"
        "point:\n  x: 1\n  y[1]: 2\n"
        "ordered:\n  z: 1\n  a: 2\n"
        'keys:\n  "1": bool\n  "2.5": float\n  null: none'
    )


def test_default_and_unsupported_types_name_the_path():
    class Opaque:
        pass

    with pytest.raises(TypeError, match=r"Object of type Opaque is not TOON serializable \(at \$\.a\[1\]\[\"b c\"\]\)"):
        toon.dumps({"a": [1, {"b c": Opaque()}]})
    with pytest.raises(TypeError, match=r"Keys must be str.*not tuple \(at \$\.k\)"):
        toon.dumps({"k": {(1, 2): 1}})
    with pytest.raises(ValueError, match=r"Duplicate key after conversion: \"1\" \(at \$\)"):
        toon.dumps({1: "a", "1": "b"})
    with pytest.raises(ValueError, match=r"unpaired surrogate U\+D800.*\(at \$\.x\[1\]\)"):
        toon.dumps({"x": ["ok", "a\ud800"]})
    assert toon.dumps({"o": Opaque()}, default=lambda o: {"kind": type(o).__name__}) == "o:\n  kind: Opaque"
    assert toon.dumps([Opaque()], default=lambda o: [1, Decimal("2.50")]) == "[1]:\n  - [2]: 1,2.5"

    def refuse(o):
        raise TypeError(f"no {type(o).__name__}")

    with pytest.raises(TypeError, match="no Opaque"):
        toon.dumps(Opaque(), default=refuse)
    with pytest.raises(ValueError):
        toon.dumps(Opaque(), default=lambda o: o)


def test_sort_keys_and_javascript_key_order():
    value = {"b": 1, "a": {"d": 1, "c": 2}, "10": 3, "9": 4}
    # Keys that are array indices come first, as a JavaScript object orders them.
    assert toon.dumps(value) == '"9": 4\n"10": 3\nb: 1\na:\n  d: 1\n  c: 2'
    assert toon.dumps(value, sort_keys=True) == '"9": 4\n"10": 3\na:\n  c: 2\n  d: 1\nb: 1'


def test_text_of_every_width_comes_back_exactly():
    # polywire makes its result `str`s itself (not through CPython's UTF-8
    # decoder): one-, two- and four-byte storage, chosen from the widest
    # character, with ASCII runs around and across the 16-byte steps.
    rng = random.Random(7)
    alphabet = ["a", " ", ",", "\x7f", "\x80", "\xe9", "\xff", "\u0100", "\u4e2d", "\uffff", "\U0001f600", "\U0010ffff"]
    for _ in range(2000):
        n = rng.randrange(0, 80)
        s = "".join(rng.choice(alphabet) if rng.random() < 0.15 else "x" for _ in range(n))
        doc = {"k": s, "rows": [{"a": s, "b": 1}, {"a": s + "\xe9", "b": 2}]}
        text = toon.dumps(doc)
        # A str compares equal only to a str of the same storage width.
        assert text == text.encode("utf-8").decode("utf-8")
        assert toon.loads(text) == doc
        assert json.loads(json.dumps(toon.loads(text))) == doc
        if s and s.strip() == s and not set(s) & {",", "\x7f", "\x80"}:
            assert toon.dumps(s) == s


def test_repeated_table_headers_match_fresh_ones():
    # A table header is reused when the next table's field names are the
    # very same key objects; the text must equal that of fresh key objects
    # (copies, never reused) for same, reordered, renamed and regrouped fields.
    def fresh(v):
        if isinstance(v, dict):
            return {"".join(list(k)): fresh(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fresh(x) for x in v]
        return v

    x, y, z, g = "x", "y", "z", "g"
    doc = {
        "a": [{x: 1, y: 2}],
        "b": [{x: 3, y: 4}, {y: 5, x: 6}],
        "c": [{y: 1, x: 2}],
        "d": [{x: 1, z: 2}],
        "e": [{x: {g: 1}, y: 2}],
        "f": [{x: {g: 1, z: 0}, y: 2}],
        "h": [{x: {z: 1}, y: 2}],
        "i": {"r1": {x: 1, y: 2}, "r2": {x: 3, y: 4}},
        "j": [{x: 1, y: 2}],
    }
    text = toon.dumps(doc)
    assert text == toon.dumps(fresh(doc))
    assert "c[1]{y,x}:" in text and "f[1]{x{g,z},y}:" in text and "h[1]{x{z},y}:" in text
    assert toon.loads(text) == doc


def test_duplicate_keys_fail_where_the_reference_fails():
    # Without hooks, strict decoding lets the dicts tell a duplicate key and
    # decodes again to locate it; with a hook the decoder tracks keys as it
    # goes. Both must report the same fault, also when another fault follows.
    docs = [
        "a: 1\nb: 2\na: 3",
        "x:\n  a: 1\n  a: 2",
        "[2]:\n  - a: 1\n    a: 2\n  - b: 1",
        "a: 1\nb:\n  c: 1\n  c: [1]\n  d: [2]: 1",
        "k[2]{a,b}:\n  1,2\n  3,4\nk: 1",
        "o:\n  p: 1\n  q:\n    r: 1\n    r: 2\n  p: 3",
        "a: 1\nb: [1]: 1,2\na: 2",
        "rows[1]:\n  - id: 1\n    tags[1]: x\n    id: 2",
    ]
    for doc in docs:
        for data in (doc, doc.encode()):
            with pytest.raises(ToonDecodeError) as fast:
                toon.loads(data)
            with pytest.raises(ToonDecodeError) as tracked:
                toon.loads(data, parse_int=int)
            assert (fast.value.line, str(fast.value)) == (tracked.value.line, str(tracked.value)), doc
    assert toon.loads("a: 1\nb: 2\na: 3", strict=False) == {"a": 3, "b": 2}
    assert toon.loads("a:\n  x: 1\nb:\n  x: 2") == {"a": {"x": 1}, "b": {"x": 2}}


def test_dicts_are_walked_in_iteration_order():
    # The encoder reads a dict's entry table directly on CPython 3.11-3.13:
    # deleted entries, split tables (instance dicts), tables that once held a
    # non-str key, wide index tables and dict subclasses must all come out in
    # the order Python iterates them.
    class Obj:
        pass

    o = Obj()
    o.b, o.a, o.c = 1, [2, 3], {"z": None}
    split = o.__dict__
    holes = {f"k{i}": i for i in range(300)}
    for i in range(0, 300, 3):
        del holes[f"k{i}"]
    general = {1: "x", "a": 1, "b": {"c": 2}}
    del general[1]
    ordered = OrderedDict(a=1, b=2, c=3)
    ordered.move_to_end("a")
    counts = Counter("abracadabra")
    for d in (split, holes, general, ordered, counts):
        text = toon.dumps(d)
        assert list(toon.loads(text)) == [str(k) for k in d], type(d)
        assert text == toon.dumps(dict(d.items()))
        assert toon.dumps([d, d]) == toon.dumps([dict(d.items())] * 2)
    assert toon.dumps(ordered) == "b: 2\nc: 3\na: 1"
    assert toon.dumps(general) == "a: 1\nb:\n  c: 2"


def test_circular_and_deep_values():
    a: list = []
    a.append(a)
    with pytest.raises(ToonEncodeError) as e:
        toon.dumps(a)
    assert e.value.code == "TOON_TOO_DEEP" and isinstance(e.value, ValueError)
    deep = 1
    for _ in range(toon.MAX_DEPTH):
        deep = [deep]
    back = toon.loads(toon.dumps(deep))
    for _ in range(toon.MAX_DEPTH):
        assert isinstance(back, list) and len(back) == 1
        back = back[0]
    assert back == 1
    with pytest.raises(ToonEncodeError):
        toon.dumps([deep])


def test_decode_errors_name_line_column_and_source():
    with pytest.raises(ToonDecodeError) as e:
        toon.loads("a:\n  b: 1\n   c: 2")
    err = e.value
    assert (err.line, err.column, err.source, err.code) == (3, 4, "   c: 2", "TOON_INDENTATION")
    assert err.msg.startswith("Indentation must be exact multiple of 2") and "at line 3" in str(err)
    with pytest.raises(ToonDecodeError) as e:
        toon.loads("\ufeffa[2]: 1\r\nb: 2")
    assert (e.value.line, e.value.source) == (1, "a[2]: 1")
    with pytest.raises(ToonDecodeError) as e:
        toon.loads(b"a: 1\nb: \xff")
    assert (e.value.code, e.value.line, e.value.column) == ("TOON_INVALID_UTF8", 2, 4)
    with pytest.raises(ToonDecodeError) as e:
        toon.loads("a: \ud800")
    assert e.value.code == "TOON_INVALID_UTF8"
    with pytest.raises(TypeError):
        toon.loads(42)
    import pickle

    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, ToonDecodeError) and again.line == 3 and again.source == "   c: 2"


def test_bytes_like_input():
    assert toon.loads(b"a: 1") == toon.loads(bytearray(b"a: 1")) == toon.loads(memoryview(b"a: 1")) == {"a": 1}


def test_bad_input_is_bounded():
    deep = "a:\n" + "\n".join("  " * (i + 1) + "a:" for i in range(3000))
    with pytest.raises(ToonDecodeError) as e:
        toon.loads(deep)
    assert e.value.code == "TOON_TOO_DEEP"
    with pytest.raises(ToonDecodeError) as e:
        toon.loads("a[999999999]: 1")
    assert e.value.line == 1
    assert toon.loads("a[999999999]: 1", strict=False) == {"a": [1]}
    assert len(toon.loads("k: " + "x" * 5_000_000)["k"]) == 5_000_000


def test_decoding_keeps_keys_as_plain_data():
    assert toon.loads("__proto__:\n  polluted: 1\nconstructor: 2") == {"__proto__": {"polluted": 1}, "constructor": 2}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([",", "\t", "|"]), st.sampled_from([1, 2, 4]))
def test_round_trip(value, delimiter, indent):
    text = toon.dumps(value, delimiter=delimiter, indent_size=indent)
    back = toon.loads(text, indent_size=indent)
    # Numbers come back as the same doubles (2.0 is written 2, as the reference
    # writes it, and comes back as an int; -0.0 as 0).
    assert same(back, value)


number_tokens = st.from_regex(r"\A-?(0|[1-9][0-9]{0,22})(\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?\Z")


@settings(max_examples=500, deadline=None)
@given(number_tokens, st.booleans())
def test_number_tokens_read_exactly(token, tabular):
    """Short number tokens take a shortcut while the decoder checks their form; every
    token still reads as Python reads it: integer literals as exact ints, others as
    the correctly rounded float (-0.0 as 0.0), infinite ones as the string."""
    text = f"rows[1]{{n}}:\n  {token}" if tabular else f"n: {token}"
    got = toon.loads(text)
    got = got["rows"][0]["n"] if tabular else got["n"]
    if any(c in token for c in ".eE"):
        want = float(token)
        want = token if math.isinf(want) else (want or 0.0)
        assert type(got) is type(want) and got == want and str(got) == str(want), (token, got)
    else:
        assert type(got) is int and got == int(token), (token, got)


def test_same_text_as_toon_format_on_plain_documents():
    """The toon_format package, where both follow the spec the same way (string keys
    without array-index keys, floats below 2**53): the same text and values."""
    toon_format = pytest.importorskip("toon_format")
    docs = [
        {"users": [{"id": 1, "name": "Ada", "tags": ["a", "b"]}, {"id": 2, "name": "Bob", "tags": []}]},
        {"a": {"b": [1, 2.5, "x y", "", "true", "-1", "a,b"]}, "c": None, "d": [[1], {"e": 1}, "z"]},
        [{"a": {"x": 1, "y": 2}}, {"a": {"x": 3, "y": 4}}],
        {"k": {"p": {"v": 1}, "q": {"v": 2}}},
    ]
    for doc in docs:
        for delimiter in [",", "\t", "|"]:
            assert toon.dumps(doc, delimiter=delimiter) == toon_format.dumps(doc, delimiter=delimiter)
            text = toon.dumps(doc, delimiter=delimiter)
            assert toon.loads(text) == toon_format.loads(text)


# ---------------------------------------------------------------- cross-language with Node

NODE = shutil.which("node")

NODE_SCRIPT = r"""
const toon = require(process.argv[1]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const opts = (o) => ({ delimiter: o.delimiter, indentSize: o.indent_size });
const out = {
  encoded: input.docs.map((d) => toon.encode(d.value, opts(d))),
  decoded: input.texts.map((t) => JSON.stringify(toon.decode(t.text, opts(t)))),
};
import(process.argv[2]).then((ref) => {
  out.reference = input.docs.map((d) => ref.encode(d.value, opts(d)));
}, () => { out.reference = null }).finally(() => process.stdout.write(JSON.stringify(out)));
"""

WORDS = ["", " ", "a b", "true", "null", "-1", "1e5", "05", "a,b", "a|b", "a\tb", "k: v", '"q"', "[x]", "#c", "- x",
         "é", "日本", "😀", "\ufeffx", "\u0001", "x\ny", "plain", "v2.0"]
KEYS = ["id", "name", "a.b", "1", "10", "01", "", "k k", "-k", "é", "__proto__", "x_1", "true"]


def random_doc(r: random.Random, depth: int = 0):
    kind = r.randrange(8) if depth < 4 else 0
    if kind == 0:
        return r.choice([None, True, False, r.choice(WORDS), r.randint(-(2**53), 2**53), r.choice([0.1, -2.5, 1e21, 1e-7, 3.0, 1e300])])
    if kind == 1:
        return [random_doc(r, 4) for _ in range(r.randrange(5))]
    if kind in (2, 3):
        keys = r.sample(KEYS, r.randint(1, 3))
        return [{k: random_doc(r, 4) for k in keys} for _ in range(r.randint(1, 4))]
    if kind == 4:
        keys = r.sample(KEYS, r.randint(1, 3))
        return {k: {f: random_doc(r, 4) for f in keys} for k in r.sample(KEYS, r.randint(2, 3))}
    if kind == 5:
        return [random_doc(r, depth + 1) for _ in range(r.randrange(4))]
    return {k: random_doc(r, depth + 1) for k in r.sample(KEYS, r.randrange(5))}


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_cross_language_same_text_and_round_trip(root):
    r = random.Random(1234)
    docs = []
    for i in range(400):
        doc = random_doc(r) if i else {"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}], "n": 2.5}
        docs.append({"value": doc, "delimiter": r.choice([",", "\t", "|"]), "indent_size": r.choice([2, 4])})
    py_texts = [toon.dumps(d["value"], delimiter=d["delimiter"], indent_size=d["indent_size"]) for d in docs]
    texts = [{"text": t, "delimiter": d["delimiter"], "indent_size": d["indent_size"]} for t, d in zip(py_texts, docs)]
    reference = root / "node_modules" / "@toon-format" / "toon" / "dist" / "index.mjs"
    proc = subprocess.run(
        [NODE, "-e", NODE_SCRIPT, str(node_module("toon")), reference.as_uri()],
        input=json.dumps({"docs": docs, "texts": texts}),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = json.loads(proc.stdout)
    for d, py_text, node_text, node_decoded in zip(docs, py_texts, out["encoded"], out["decoded"]):
        # The same text in both languages...
        assert node_text == py_text, d
        # ... Python's text decodes in Node to the document, and Node's in Python.
        assert same(json.loads(node_decoded), d["value"]), (py_text, node_decoded)
        assert same(toon.loads(node_text, indent_size=d["indent_size"]), d["value"]), node_text
    if reference.exists():
        # Python writes what the reference (@toon-format/toon, npm) writes.
        assert out["reference"] == py_texts
