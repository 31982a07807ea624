"""Kado frame encode+decode throughput: upstream-style Python vs orjson vs polywire.

Run from the repository root once polywire is installed:

    python bench/kado_bench.py [--quick]

Contenders (all produce and read the same frames):

* upstream-style: what kado's ``packages/ai-engine/src/toon`` does (``struct`` header,
  ``json.dumps``/``json.loads``), plus the RLE loop of ``compression.py``/``compression.ts`` on
  both sides. The upstream Python itself never compresses; the TS encoder does for payloads
  over 1024 bytes, so compressing here too makes the comparison like for like.
* orjson: the same code with ``orjson.dumps``/``orjson.loads``.
* polywire: ``polywire.kado.encode`` / ``polywire.kado.decode``.

One operation is ``decode(encode(payload))``, timed timeit-style: the loop count is chosen so
that one repeat takes about --target seconds, then several repeats; the table shows the
median (and best) time per operation. Before timing, every contender's output is checked
against the others, and polywire's bytes against the bytes the upstream TS encoder would
write (JSON.stringify spacing) for the same fixed timestamp.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import struct
import sys
import time
import timeit

# ---------------------------------------------------------------- upstream-style code
# Written after kado-autonomy/kado packages/ai-engine/src/toon/{protocol,compression}.py.

TOON_VERSION = 1
HEADER_SIZE = 18
HEADER_STRUCT = struct.Struct("<BBIQI")
COMPRESSION_THRESHOLD = 1024
MAGIC_COMPRESSED = 0x5A

INSTRUCTION = 0x01
TOOL_RESULT = 0x03


def _simple_rle_encode(data: bytes) -> bytes:
    result = bytearray()
    i = 0
    length = len(data)
    while i < length:
        byte = data[i]
        count = 1
        while i + count < length and data[i + count] == byte and count < 255:
            count += 1
        if count > 3 or byte == 0xFF:
            result.append(0xFF)
            result.append(byte)
            result.append(count)
        else:
            for _ in range(count):
                result.append(byte)
        i += count
    return bytes(result)


def _simple_rle_decode(data: bytes) -> bytes:
    result = bytearray()
    i = 0
    length = len(data)
    while i < length:
        if data[i] == 0xFF and i + 2 < length:
            byte = data[i + 1]
            count = data[i + 2]
            for _ in range(count):
                result.append(byte)
            i += 3
        else:
            result.append(data[i])
            i += 1
    return bytes(result)


def compress(data: bytes) -> bytes:
    if len(data) < COMPRESSION_THRESHOLD:
        return data
    encoded = _simple_rle_encode(data)
    if len(encoded) >= len(data):
        return data
    return bytes([MAGIC_COMPRESSED]) + encoded


def decompress(data: bytes) -> bytes:
    if not (len(data) > 0 and data[0] == MAGIC_COMPRESSED):
        return data
    return _simple_rle_decode(data[1:])


def encode_header(msg_type: int, payload_length: int, sequence_id: int, timestamp: int | None = None) -> bytes:
    if timestamp is None:
        timestamp = int(time.time() * 1000)
    return HEADER_STRUCT.pack(TOON_VERSION, int(msg_type), payload_length, timestamp, sequence_id)


def decode_header(buffer: bytes) -> dict:
    if len(buffer) < HEADER_SIZE:
        raise ValueError("Buffer too short for header")
    unpacked = HEADER_STRUCT.unpack_from(buffer)
    return {
        "version": unpacked[0],
        "type": unpacked[1],
        "payload_length": unpacked[2],
        "timestamp": unpacked[3],
        "sequence_id": unpacked[4],
    }


def _frame(msg_type: int, payload_bytes: bytes, sequence_id: int, timestamp: int | None) -> bytes:
    # As the TS encoder: compress only payloads longer than the threshold.
    if len(payload_bytes) > COMPRESSION_THRESHOLD:
        payload_bytes = compress(payload_bytes)
    return encode_header(msg_type, len(payload_bytes), sequence_id, timestamp) + payload_bytes


def _payload(buffer: bytes) -> tuple[dict, bytes]:
    header = decode_header(buffer)
    payload_end = HEADER_SIZE + header["payload_length"]
    if len(buffer) < payload_end:
        raise ValueError("Buffer too short for payload")
    return header, decompress(buffer[HEADER_SIZE:payload_end])


def up_encode(msg_type: int, data, sequence_id: int, timestamp: int | None = None) -> bytes:
    return _frame(msg_type, json.dumps(data).encode("utf-8"), sequence_id, timestamp)


def up_decode(buffer: bytes) -> dict:
    header, raw = _payload(buffer)
    return {"header": header, "payload": json.loads(raw.decode("utf-8"))}


def ts_bytes(msg_type: int, data, sequence_id: int, timestamp: int) -> bytes:
    """The frame the upstream TS encoder writes (JSON.stringify spacing). Equal to
    JSON.stringify for the benchmark payloads (ASCII strings, ints, bools)."""
    js = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return _frame(msg_type, js, sequence_id, timestamp)


try:
    import orjson
except ImportError:  # reported in main()
    orjson = None


def oj_encode(msg_type: int, data, sequence_id: int, timestamp: int | None = None) -> bytes:
    return _frame(msg_type, orjson.dumps(data), sequence_id, timestamp)


def oj_decode(buffer: bytes) -> dict:
    header, raw = _payload(buffer)
    return {"header": header, "payload": orjson.loads(raw)}


# ---------------------------------------------------------------- payloads
# Identical in bench/kado_bench.mjs.


def tool_result_4k() -> dict:
    lines = []
    i = 0
    while sum(len(x) + 2 for x in lines) < 4400:  # '\n' is 2 bytes in JSON
        lines.append(f"{'    ' * (i % 3)}result_{i} = process(item_{i}, retries={i % 5})  # step {i}")
        i += 1
    content = "\n".join(lines)

    def make(c):
        return {"success": True, "toolName": "file_read", "data": c, "durationMs": 12}

    # Trim to exactly 4096 bytes of compact JSON.
    while len(json.dumps(make(content), separators=(",", ":"))) > 4096:
        content = content[:-1]
    return make(content)


PAYLOADS = [
    ("83 B INSTRUCTION", INSTRUCTION,
     {"instruction": "Summarize the failing tests in packages/orchestrator", "priority": 2}),
    ("4 KB TOOL_RESULT", TOOL_RESULT, tool_result_4k()),
    ("64 KB runs", TOOL_RESULT, {"data": ("a" * 1000 + "0123456789" + " " * 14) * 64}),
]

FIXED_TS = 1_700_000_000_000

# ---------------------------------------------------------------- timing


def measure(fn, target: float, repeats: int) -> tuple[float, float]:
    """Median and best seconds per call: calibrate the loop count so that one repeat takes
    about `target` seconds (as timeit's autorange does), then time `repeats` repeats."""
    timer = timeit.Timer(fn)
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= target / 10:
            break
        number *= 10
    number = max(1, round(number * target / t))
    runs = [x / number for x in timer.repeat(repeats, number)]
    return statistics.median(runs), min(runs)


def fmt_ops(sec: float) -> str:
    ops = 1 / sec
    return f"{ops:,.0f}"


def fmt_us(sec: float) -> str:
    us = sec * 1e6
    return f"{us:,.2f}" if us < 100 else f"{us:,.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", type=float, default=0.15, help="seconds per repeat (default 0.15)")
    ap.add_argument("--repeats", type=int, default=7, help="repeats per measurement (default 7)")
    ap.add_argument("--quick", action="store_true", help="short run (0.03 s x 3) to check that it works")
    args = ap.parse_args()
    if args.quick:
        args.target, args.repeats = 0.03, 3

    print(f"# Kado frames: encode+decode, Python {platform.python_version()} on {platform.machine()}")
    print()
    contenders = [("upstream-style (json)", up_encode, up_decode)]
    if orjson is not None:
        print(f"- orjson {orjson.__version__} installed: variant 'orjson' included")
        contenders.append(("orjson", oj_encode, oj_decode))
    else:
        print("- orjson is not installed: variant 'orjson' skipped (pip install orjson)")
    try:
        from polywire import kado  # type: ignore
    except ImportError as e:
        kado = None
        print(f"- polywire not importable ({e}): variant 'polywire' skipped")
    if kado is not None:
        ver = getattr(sys.modules.get("polywire"), "__version__", "?")
        print(f"- polywire {ver} ({kado.__name__})")
        contenders.append(("polywire", kado.encode, kado.decode))

    # ---- checks before timing
    for label, t, payload in PAYLOADS:
        expect = ts_bytes(t, payload, 7, FIXED_TS)
        frames = {}
        for name, enc, dec in contenders:
            f = enc(t, payload, 7, FIXED_TS)
            frames[name] = f
            got = dec(f)["payload"]
            assert got == payload, f"{name}: decode(encode(x)) != x for {label}"
        if orjson is not None:
            assert frames["orjson"] == expect, f"orjson frame differs from the TS bytes for {label}"
        if kado is not None:
            assert frames["polywire"] == expect, (
                f"polywire frame differs from the upstream TS bytes for {label}: "
                f"{frames['polywire'][:40].hex()}... vs {expect[:40].hex()}...")
            # Cross-decoding: each side reads the other's frames (the upstream-style
            # frame uses Python's json.dumps spacing).
            assert kado.decode(frames["upstream-style (json)"])["payload"] == payload
            assert up_decode(frames["polywire"])["payload"] == payload
            m = kado.decode(expect)
            h = m["header"]
            seq = h.get("sequence_id") if isinstance(h, dict) else getattr(h, "sequence_id", None)
            ts = h.get("timestamp") if isinstance(h, dict) else getattr(h, "timestamp", None)
            if seq is None or ts is None:
                print(f"  (note: polywire header {h!r} has no sequence_id/timestamp field; not checked)")
            else:
                assert (seq, ts) == (7, FIXED_TS), f"polywire header {h!r}"
        compressed = expect[HEADER_SIZE] == MAGIC_COMPRESSED
        print(f"- {label}: JSON {len(json.dumps(payload, separators=(',', ':')))} B, frame {len(expect)} B"
              f"{' (RLE-compressed)' if compressed else ''}; all contenders agree")
    print()

    # ---- timing: the timestamp comes from the clock, as in real use
    results = {}
    for label, t, payload in PAYLOADS:
        for name, enc, dec in contenders:
            frame = enc(t, payload, 7)
            rt = measure(lambda: dec(enc(t, payload, 7)), args.target, args.repeats)
            e = measure(lambda: enc(t, payload, 7), args.target / 2, args.repeats)
            d = measure(lambda: dec(frame), args.target / 2, args.repeats)
            results[(label, name)] = (rt, e, d)

    names = [c[0] for c in contenders]
    has_oj = "orjson" in names
    print("| payload | contender | encode+decode ops/s (median) | best ops/s | encode µs | decode µs "
          "| vs upstream-style |" + (" vs orjson |" if has_oj else ""))
    print("|---|---|---:|---:|---:|---:|---:|" + ("---:|" if has_oj else ""))
    for label, _, _ in PAYLOADS:
        base = results[(label, names[0])][0][0]
        ojb = results[(label, "orjson")][0][0] if has_oj else None
        for name in names:
            (med, best), (emed, _), (dmed, _) = results[(label, name)]
            row = (f"| {label} | {name} | {fmt_ops(med)} | {fmt_ops(best)} | {fmt_us(emed)} | {fmt_us(dmed)} "
                   f"| {base / med:.2f}x |")
            if has_oj:
                row += f" {ojb / med:.2f}x |"
            print(row)
    print()
    print(f"Timing: median of {args.repeats} repeats of about {args.target} s each (encode/decode columns: "
          f"half that); ratios are ops/s relative to the named contender in the same run (higher is faster).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
