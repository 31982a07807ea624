"""polywire.toon.decode_stream and StreamDecoder: the resumable event decoder.

Every decode case of the spec fixtures (vectors/toon_spec.json) and of the reference
vectors (vectors/toon_decode.json), and seeded random documents, decoded line by line
(decode_stream), fed in random pieces of text, and fed as bytes split anywhere (inside
characters too): the same events and the same error, and events that describe what
``loads`` reads (or its error, at the same line and column). Then what streaming is for:
events as soon as the lines decide them, lines read lazily, memory bounded and work
linear in the input. The events are Node's (``decodeStreamSync``) too.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from conftest import load_vectors, node_module
from polywire import PolywireTypeError, toon

NODE = shutil.which("node")


def value_of(events):
    """The value the events describe (the reference's ``buildValueFromEvents``: a
    repeated key keeps its place and takes the last value)."""
    stack, root = [], []
    key = None
    for e in events:
        t = e["type"]
        if t in ("startObject", "startArray"):
            stack.append(({} if t == "startObject" else [], key))
            key = None
        elif t in ("endObject", "endArray"):
            v, key = stack.pop()
            put(stack, root, key, v)
            key = None
        elif t == "key":
            key = e["key"]
        else:
            put(stack, root, key, e["value"])
            key = None
    assert not stack
    return root[0]


def put(stack, root, key, v):
    if not stack:
        root.append(v)
    elif isinstance(stack[-1][0], list):
        stack[-1][0].append(v)
    else:
        stack[-1][0][key] = v


def outcome(run):
    """(events, error as (code, line, column, msg, source)) of a decoding."""
    events = []
    try:
        run(events)
    except toon.ToonDecodeError as e:
        events.extend(getattr(e, "events", []))
        return events, (e.code, e.line, e.column, e.msg, e.source)
    return events, None


def by_lines(text, **opts):
    return outcome(lambda out: out.extend(toon.decode_stream(text.split("\n"), **opts)))


def in_pieces(text, rng, as_bytes, **opts):
    def run(out):
        d = toon.StreamDecoder(**opts)
        data = text.encode() if as_bytes else text
        i = 0
        while i < len(data):
            n = rng.choice([1, 2, 3, 5, 8, 13, 64, 700])
            out.extend(d.feed(data[i : i + n]))
            i += n
        out.extend(d.finish())

    return outcome(run)


def loads_outcome(text, **opts):
    try:
        return toon.loads(text, **opts), None
    except toon.ToonDecodeError as e:
        return None, (e.code, e.line, e.column)


def check(text, rng, **opts):
    events, error = by_lines(text, **opts)
    for as_bytes in (False, True):
        assert in_pieces(text, rng, as_bytes, **opts) == (events, error), (text, opts, as_bytes)
    value, want = loads_outcome(text, **opts)
    if want is None:
        assert error is None, (text, opts, error)
        assert value_of(events) == value, (text, opts)
    else:
        assert error is not None and error[:3] == want, (text, opts, error, want)
        if error[0] != "TOON_BLANK_LINE":
            line = text.split("\n")[error[1] - 1]
            line = line.removesuffix("\r")
            assert error[4] == (line.removeprefix("\ufeff") if error[1] == 1 else line)
        else:
            assert error[4] is None  # as in the reference
    return error


def test_spec_fixtures_and_reference_vectors():
    rng = random.Random(7)
    cases = 0
    for test in load_vectors("toon_spec.json")["decode"]:
        o = test.get("options", {})
        check(test["input"], rng, strict=o.get("strict", True), indent_size=o.get("indentSize", 2))
        cases += 1
    for case in load_vectors("toon_decode.json")["cases"]:
        check(case["input"], rng, strict=case["strict"], indent_size=case["indent"])
        cases += 1
    assert cases > 1700


def random_value(rng, depth=0):
    leaves = [None, True, False, 0, -7, 2.5, 1e21, 2**70, "", "a", "b c", "x,y", 'q"t', "é😀", "- x", "#", "[1]", "k: v"]
    if depth > 3 or rng.random() < 0.3:
        return rng.choice(leaves)
    kind = rng.randrange(4)
    if kind == 0:
        return [rng.choice(leaves) for _ in range(rng.randrange(5))]
    if kind == 1:
        keys = [f"f{i}" for i in range(rng.randrange(1, 4))]
        return [{k: rng.choice(leaves) for k in keys} for _ in range(rng.randrange(6))]
    if kind == 2:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{i}": random_value(rng, depth + 1) for i in range(rng.randrange(5))}


def mutate(text, rng):
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    what = rng.randrange(5)
    if what == 0:
        del lines[i]
    elif what == 1:
        lines.insert(i, lines[i])
    elif what == 2:
        lines[i] = " " + lines[i]
    elif what == 3:
        lines.insert(i, "")
    else:
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    return "\n".join(lines)


def test_random_documents():
    rng = random.Random(20251126)
    faults = 0
    for n in range(600):
        indent = rng.choice([1, 2, 4])
        text = toon.dumps(random_value(rng), indent_size=indent, delimiter=rng.choice([",", "\t", "|"]))
        if n % 2:
            text = mutate(text, rng)
        for strict in (True, False):
            faults += check(text, rng, strict=strict, indent_size=indent) is not None
    assert faults > 100


def test_events_come_as_the_lines_decide_them():
    d = toon.StreamDecoder()
    assert d.feed("a: 1\nb") == []  # a lone first line could be a primitive
    assert d.feed(": 2\n") == [
        {"type": "startObject"}, {"type": "key", "key": "a"}, {"type": "primitive", "value": 1},
        {"type": "key", "key": "b"}, {"type": "primitive", "value": 2},
    ]
    assert d.feed("c[2]{x,y}:\n  1,") == [{"type": "key", "key": "c"}, {"type": "startArray", "length": 2}]
    assert d.feed("2\n") == [
        {"type": "startObject"}, {"type": "key", "key": "x"}, {"type": "primitive", "value": 1},
        {"type": "key", "key": "y"}, {"type": "primitive", "value": 2}, {"type": "endObject"},
    ]
    assert d.feed_line("  3,4") == [
        {"type": "startObject"}, {"type": "key", "key": "x"}, {"type": "primitive", "value": 3},
        {"type": "key", "key": "y"}, {"type": "primitive", "value": 4}, {"type": "endObject"},
    ]
    assert d.finish() == [{"type": "endArray"}, {"type": "endObject"}]
    assert d.finish() == []


def test_numbers_as_loads_reads_them():
    text = "a: 12345678901234567890123\nb: -0\nc: 1.0\nd: 1e999\ne[3]: 05,-1.5e-7,9007199254740993"
    events = list(toon.decode_stream(text.split("\n")))
    assert value_of(events) == toon.loads(text)
    values = [e["value"] for e in events if e["type"] == "primitive"]
    assert [type(v) for v in values] == [int, int, float, str, str, float, int]
    long = list(toon.decode_stream(["a[" + "9" * 400 + "]:"], strict=False))
    assert long[2] == {"type": "startArray", "length": float("inf")}


def test_lines_are_read_as_needed():
    pulled = 0

    def endless():
        nonlocal pulled
        pulled += 1
        yield "items[1000000]:"
        while pulled < 10_000:
            pulled += 1
            yield "  - x"

    events = toon.decode_stream(endless())
    first = [next(events) for _ in range(6)]
    assert first[:4] == [{"type": "startObject"}, {"type": "key", "key": "items"}, {"type": "startArray", "length": 1000000}, {"type": "primitive", "value": "x"}]
    assert pulled <= 5


def test_faults_and_argument_errors():
    events = []
    with pytest.raises(toon.ToonDecodeError) as e:
        for ev in toon.decode_stream(["k: 1", "b[2]: x", "c: 2"]):
            events.append(ev)
    assert events == [{"type": "startObject"}, {"type": "key", "key": "k"}, {"type": "primitive", "value": 1}, {"type": "key", "key": "b"}, {"type": "startArray", "length": 2}]
    assert (e.value.code, e.value.line, e.value.column, e.value.source) == ("TOON_LENGTH_MISMATCH", 2, 1, "b[2]: x")
    # The class raises at once, with the events before the fault; then stays failed.
    d = toon.StreamDecoder()
    with pytest.raises(toon.ToonDecodeError) as e:
        d.feed("k: 1\nb[2]: x\n")
    assert [ev["type"] for ev in e.value.events] == ["startObject", "key", "primitive", "key", "startArray"]
    with pytest.raises(toon.ToonDecodeError) as again:
        d.finish()
    assert again.value.code == "TOON_LENGTH_MISMATCH" and again.value.events == []
    # Bytes: split inside a character is fine; ill-formed UTF-8 is an error at its offset.
    d = toon.StreamDecoder()
    assert d.feed(b"k: \xc3") == [] and d.feed(bytearray(b"\xa9\n")) == [] and d.feed(memoryview(b"x: 1\n"))[2] == {"type": "primitive", "value": "é"}
    with pytest.raises(toon.ToonDecodeError) as e:
        toon.StreamDecoder().feed(b"k: 1\nv: \xff\n")
    assert (e.value.code, e.value.offset) == ("TOON_INVALID_UTF8", 8)
    with pytest.raises(toon.ToonDecodeError) as e:
        toon.StreamDecoder().feed("k: \ud800")
    assert e.value.code == "TOON_INVALID_UTF8"
    with pytest.raises(PolywireTypeError) as t:
        list(toon.decode_stream(["a: 1", 5]))
    assert t.value.code == "TOON_INVALID_ARGUMENT" and "line 2" in str(t.value)
    with pytest.raises(PolywireTypeError):
        toon.decode_stream(5)
    with pytest.raises(toon.ToonDecodeError):
        toon.StreamDecoder(indent_size=0)
    # A newline inside a line given as one is part of it, as in the reference.
    assert value_of(toon.decode_stream(['a: "x\ny"', "b: 1"])) == {"a": "x\ny", "b": 1}


def big_document(rows):
    head = "meta:\n  name: stream\n  tags[2]: a,b\n"
    table = f"rows[{rows}]{{id,name,score}}:\n" + "".join(f"  {i},user{i},{i % 97}.5\n" for i in range(rows))
    items = f"items[{rows}]:\n" + "".join(f"  - id: {i}\n    tags[2]: x,y\n    note: \"{'n' * (i % 40)}\"\n" for i in range(rows))
    return head + table + items + "long: " + "z" * 100_000 + "\n"


def test_memory_is_bounded_and_work_linear():
    def run(text, piece):
        d = toon.StreamDecoder()
        events = held = 0
        data = text.encode()
        for i in range(0, len(data), piece):
            events += len(d.feed(data[i : i + piece]))
            held = max(held, d.buffered)
        events += len(d.finish())
        return d.scanned, events, held

    small, big = big_document(20_000), big_document(40_000)
    for piece in (7, 4096, 1 << 16):
        s1, e1, h1 = run(small, piece)
        s2, e2, h2 = run(big, piece)
        assert e2 > 1.9 * e1
        # Twice the input, twice the work (the long line is in both).
        assert 1.9 < (s2 - 100_000) / (s1 - 100_000) < 2.1, (piece, s1, s2)
        assert s2 < 3 * len(big)
        # The longest line (100 kB), a piece and what is let go in bulk: not the input.
        assert max(h1, h2) < 100_000 + piece + 2 * 4096 + 200, (piece, h1, h2)


def as_doubles(events):
    return [{k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in e.items()} for e in events]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_node_gives_the_same_events():
    rng = random.Random(5)
    texts = [toon.dumps(random_value(rng)) for _ in range(200)]
    texts += [mutate(t, rng) for t in texts[:100]]
    script = (
        "const toon = require(process.argv[1]);"
        "const out = JSON.parse(require('fs').readFileSync(0, 'utf8')).map((t) => {"
        "  const events = []; try { for (const e of toon.decodeStreamSync(t.split('\\n'))) events.push(e) }"
        "  catch (e) { return { events, error: [e.code, e.line] } } return { events, error: null } });"
        "process.stdout.write(JSON.stringify(out))"
    )
    proc = subprocess.run([NODE, "-e", script, str(node_module("toon"))], input=json.dumps(texts), capture_output=True, text=True, timeout=120, check=True)
    for text, node in zip(texts, json.loads(proc.stdout)):
        events, error = by_lines(text)
        # (Numbers as doubles: Python's integers are exact, Node's are not beyond 2**53.)
        assert as_doubles(events) == as_doubles(node["events"]), text
        assert (None if error is None else [error[0], error[1]]) == node["error"], text
