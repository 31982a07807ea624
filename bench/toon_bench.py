"""TOON text encode/decode throughput: polywire vs toons, etoon, toon-format, with orjson for scale.

Run from the repository root once polywire is installed:

    python bench/toon_bench.py [--quick] [--datasets orders,repos] [--reference-dir DIR]

Datasets (bench/toon_datasets.py, shaped like the official TOON benchmark's; the Node script
uses the same data): 500 e-commerce orders, 2,000 flat analytics rows, 100 repositories with long
descriptions, one deeply nested config object.

Contenders, each skipped with a note when it is not installed:

* polywire: ``polywire.toon.dumps(obj)`` / ``polywire.toon.loads(text)``.
* toons (Rust, PyO3): ``toons.dumps`` / ``toons.loads``.
* etoon (Rust; encode only): ``etoon.dumps``, which goes through ``orjson.dumps`` first.
* toon-format (the official pure-Python package): ``toon_format.dumps`` / ``loads``; timed with
  fewer repeats because it is slow.
* orjson: ``orjson.dumps(obj)`` / ``orjson.loads(bytes)`` of the same data: JSON, not TOON,
  the yardstick for "how fast can a Python extension turn these objects into text and back".

Before timing, each contender's text is compared byte for byte with the reference text:
polywire's when polywire is importable (polywire is byte-identical to @toon-format/toon 4.4.0),
else the texts in --reference-dir (``<dataset>.toon``, written by ``node bench/toon_bench.mjs
--write-texts DIR`` with the reference package), else the contenders are compared with each
other. Every decoder must give back the dataset, with the same types and key order, from the
reference text and from its own encoder's text (etoon's text is read back with the reference
decoder). A difference is reported in the tables and notes; it does not stop the run.

All TOON decoders are timed on the same text: the reference text, else the text of the first
encoder in the list above that is installed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toon_datasets  # noqa: E402  (the shared generator, next to this file)

# ---------------------------------------------------------------- contenders


class Contender:
    def __init__(self, name, version, encode=None, decode=None, slow=False, toon=True):
        self.name = name
        self.version = version
        self.encode = encode
        self.decode = decode
        self.slow = slow  # timed with fewer repeats
        self.toon = toon  # False for orjson: JSON text, not compared with TOON


def _version(mod, dist):
    v = getattr(mod, "__version__", None)
    if v:
        return v
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return "?"


def load_contenders(notes):
    out = []
    try:
        from polywire import toon as pw  # type: ignore
    except ImportError as e:
        notes.append(f"polywire.toon not importable ({e}): polywire skipped")
    else:
        out.append(Contender("polywire", _version(sys.modules.get("polywire"), "polywire"),
                             pw.dumps, pw.loads))
    try:
        import toons
    except ImportError:
        notes.append("toons not installed: skipped (pip install toons==0.9.0)")
    else:
        out.append(Contender("toons", _version(toons, "toons"), toons.dumps, toons.loads))
    try:
        import etoon
    except ImportError:
        notes.append("etoon not installed: skipped (pip install etoon==0.8.0)")
    else:
        out.append(Contender("etoon", _version(etoon, "etoon"), etoon.dumps, None))
    try:
        import toon_format
    except ImportError:
        notes.append("toon-format not installed: skipped (pip install toon-format==1.2.0)")
    else:
        out.append(Contender("toon-format", _version(toon_format, "toon-format"), toon_format.dumps,
                             toon_format.loads, slow=True))
    try:
        import orjson
    except ImportError:
        notes.append("orjson not installed: skipped (pip install orjson)")
    else:
        out.append(Contender("orjson", orjson.__version__, orjson.dumps, orjson.loads, toon=False))
    return out


# ---------------------------------------------------------------- checks


def strict_diff(a, b, path="$"):
    """Where a and b differ as JSON values (types, key order included), or None.
    Plain == is too lenient here: True == 1 and 1 == 1.0 in Python."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return None if (type(a) is type(b) and a == b) else f"{path}: {a!r} vs {b!r}"
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return None if (type(a) is type(b) and a == b) else f"{path}: {a!r} vs {b!r}"
    if isinstance(a, str) and isinstance(b, str):
        return None if a == b else f"{path}: {a!r} vs {b!r}"
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = strict_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)[:6]} vs {list(b)[:6]}"
        for k in a:
            d = strict_diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    return f"{path}: {type(a).__name__} {a!r:.40} vs {type(b).__name__} {b!r:.40}"


def first_difference(text, ref):
    a, b = text.split("\n"), ref.split("\n")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: {x[:70]!r} vs {y[:70]!r}"
    return f"{len(a)} lines vs {len(b)}"


# ---------------------------------------------------------------- timing


def calibrate(timer, target):
    """Loop count so that one repeat takes about `target` seconds (as timeit's autorange)."""
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= target / 10:
            break
        number *= 10
    return max(1, round(number * target / t))


def measure_group(fns, target):
    """Median and best seconds per call of each function: fns maps name -> (fn, repeats).
    Each is calibrated, then in every round each function runs one repeat in turn (until it has
    its repeats), so that load changes on a shared machine hit all contenders alike."""
    entries = []
    for name, (fn, repeats) in fns.items():
        timer = timeit.Timer(fn)
        entries.append((name, timer, calibrate(timer, target), repeats, []))
    for r in range(max((e[3] for e in entries), default=0)):
        for name, timer, number, repeats, runs in entries:
            if r < repeats:
                runs.append(timer.timeit(number) / number)
    return {name: (statistics.median(runs), min(runs)) for name, _, _, _, runs in entries}


def fmt_ops(sec):
    return f"{1 / sec:,.0f}" if 1 / sec >= 10 else f"{1 / sec:,.1f}"


def fmt_time(sec):
    if sec >= 1e-3:
        return f"{sec * 1e3:,.2f} ms"
    return f"{sec * 1e6:,.1f} µs"


def ratio(a, b):
    """ops/s of the contender whose median time is a, over that of the one with b."""
    return f"{b / a:.2f}x" if a and b else "–"


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", type=float, default=0.15, help="seconds per repeat (default 0.15)")
    ap.add_argument("--repeats", type=int, default=7, help="repeats per measurement (default 7; 3 for slow ones)")
    ap.add_argument("--quick", action="store_true", help="short run (0.02 s x 3) to check that it works")
    ap.add_argument("--datasets", default=",".join(toon_datasets.DATASETS), help="comma-separated subset")
    ap.add_argument("--reference-dir", help="directory of <dataset>.toon reference texts (used without polywire)")
    args = ap.parse_args()
    if args.quick:
        args.target, args.repeats = 0.02, 3
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    for n in names:
        if n not in toon_datasets.DATASETS:
            ap.error(f"unknown dataset {n!r}; choose from {', '.join(toon_datasets.DATASETS)}")

    notes = []
    contenders = load_contenders(notes)
    by_name = {c.name: c for c in contenders}
    pw = by_name.get("polywire")
    print(f"# TOON text: encode and decode, Python {platform.python_version()} on {platform.machine()}")
    print()
    print("- contenders: " + ", ".join(f"{c.name} {c.version}" for c in contenders))
    for n in notes:
        print(f"- {n}")

    all_data = toon_datasets.build_all()
    data = {n: all_data[n] for n in names}

    # ---- reference texts
    ref_texts, ref_source = {}, None
    if pw is not None:
        ref_source = "polywire"
        ref_texts = {n: pw.encode(v) for n, v in data.items()}
    elif args.reference_dir:
        ref_source = f"{args.reference_dir}/<dataset>.toon"
        for n in names:
            with open(os.path.join(args.reference_dir, n + ".toon"), encoding="utf-8", newline="") as f:
                ref_texts[n] = f.read()
    print(f"- reference text: {ref_source or 'none (no polywire, no --reference-dir): contenders compared with each other'}")
    ref_decoder = pw or by_name.get("toons") or by_name.get("toon-format")
    print()

    # ---- checks before timing
    findings = []  # differences found; reported after the tables
    toon_encoders = [c for c in contenders if c.toon and c.encode]
    status = {}  # (dataset, contender, "enc"/"dec") -> short status for the tables
    decode_inputs = {}
    print("| dataset | JSON bytes | TOON bytes | sha256 (JSON) | encoder outputs | round trips |")
    print("|---|---:|---:|---|---|---|")
    for n, value in data.items():
        texts = {}
        for c in toon_encoders:
            try:
                texts[c.name] = c.encode(value)
            except Exception as e:  # recorded, not fatal
                findings.append(f"{n}: {c.name} encode raised {type(e).__name__}: {e}")
                status[(n, c.name, "enc")] = "raises"
        ref = ref_texts.get(n)
        agree = []
        for c in toon_encoders:
            t = texts.get(c.name)
            if t is None:
                continue
            if ref is not None:
                if t == ref:
                    status[(n, c.name, "enc")] = "= ref"
                else:
                    status[(n, c.name, "enc")] = "differs"
                    findings.append(f"{n}: {c.name} text differs from the reference ({len(t)} vs {len(ref)} chars), "
                                 f"{first_difference(t, ref)}")
            else:
                groups = [g for g in agree if texts[g[0]] == t]
                if groups:
                    groups[0].append(c.name)
                else:
                    agree.append([c.name])
        if ref is None and agree:
            for i, g in enumerate(agree):
                for name in g:
                    status[(n, name, "enc")] = "= others" if len(agree) == 1 else f"group {i + 1}"
            if len(agree) > 1:
                base = texts[agree[0][0]]
                for g in agree[1:]:
                    findings.append(f"{n}: {'/'.join(g)} text differs from {'/'.join(agree[0])}'s, "
                                 f"{first_difference(texts[g[0]], base)}")
        # Round trips: every decoder on the reference text and on its own encoder's text.
        trips = []
        sample = ref if ref is not None else next(iter(texts.values()), None)
        for c in contenders:
            if not c.decode:
                continue
            if c.toon:
                inputs = [("ref", sample)] if sample is not None else []
                if texts.get(c.name) is not None and texts.get(c.name) != sample:
                    inputs.append(("own", texts[c.name]))
            else:
                inputs = [("own", c.encode(value))]
            verdict = "ok"
            for label, text in inputs:
                try:
                    d = strict_diff(c.decode(text), value)
                except Exception as e:
                    d = f"raised {type(e).__name__}: {e}"
                    if label == "ref":
                        verdict = "raises"
                if d:
                    verdict = "WRONG" if verdict == "ok" else verdict
                    findings.append(f"{n}: {c.name} decode of the {label} text != dataset: {d}")
            status[(n, c.name, "dec")] = verdict
            trips.append(f"{c.name} {verdict}")
        if "etoon" in texts and ref_decoder is not None:
            try:
                d = strict_diff(ref_decoder.decode(texts["etoon"]), value)
            except Exception as e:
                d = f"raised {type(e).__name__}: {e}"
            if d:
                findings.append(f"{n}: {ref_decoder.name} decode of etoon's text != dataset: {d}")
            trips.append(f"etoon (via {ref_decoder.name}) {'WRONG' if d else 'ok'}")
        decode_inputs[n] = sample
        json_len = len(toon_datasets.compact_json(value).encode("utf-8"))
        toon_len = len(sample.encode("utf-8")) if sample is not None else 0
        if ref is None and len(agree) == 1:
            outputs = f"all {len(agree[0])} identical"
        else:
            outputs = ", ".join(f"{c.name} {status.get((n, c.name, 'enc'), '–')}" for c in toon_encoders)
        print(f"| {n} | {json_len:,} | {toon_len:,} | {toon_datasets.digest(value)} | {outputs} | {', '.join(trips)} |")
    print()

    # ---- timing
    res = {}
    for n, value in data.items():
        text = decode_inputs[n]
        enc, dec = {}, {}
        for c in contenders:
            reps = min(args.repeats, 3) if c.slow else args.repeats
            if c.encode and status.get((n, c.name, "enc")) != "raises":
                enc[c.name] = ((lambda c=c: c.encode(value)), reps)
            if c.decode:
                src = text if c.toon else c.encode(value)
                if src is not None and status.get((n, c.name, "dec")) != "raises":
                    dec[c.name] = ((lambda c=c, src=src: c.decode(src)), reps)
        for kind, fns in (("enc", enc), ("dec", dec)):
            for name, r in measure_group(fns, args.target).items():
                res[(n, name, kind)] = r

    def med(n, name, kind):
        r = res.get((n, name, kind))
        return r[0] if r else None

    def table(kind, title, peer_label, peers):
        print(f"## {title}")
        print()
        print(f"| dataset | contender | ops/s (median) | time/op | best ops/s | vs {peer_label} | vs orjson | check |")
        print("|---|---|---:|---:|---:|---:|---:|---|")
        for n in data:
            peer_times = [med(n, p, kind) for p in peers if med(n, p, kind)]
            peer = min(peer_times) if peer_times else None
            oj = med(n, "orjson", kind)
            for c in contenders:
                r = res.get((n, c.name, kind))
                if not r:
                    continue
                m, best = r
                check = status.get((n, c.name, kind), "") if c.toon else "JSON"
                print(f"| {n} | {c.name} | {fmt_ops(m)} | {fmt_time(m)} | {fmt_ops(best)} | {ratio(m, peer)} "
                      f"| {ratio(m, oj)} | {check} |")
        print()

    table("enc", "Encode (object -> text)", "faster of toons/etoon", ["toons", "etoon"])
    table("dec", "Decode (text -> object)", "toons", ["toons"])

    print("## polywire")
    print()
    if pw is None:
        print("polywire skipped (polywire.toon not importable): no ratios.")
    else:
        print("| dataset | encode vs faster of toons/etoon | encode vs orjson.dumps | decode vs toons | decode vs orjson.loads |")
        print("|---|---:|---:|---:|---:|")
        for n in data:
            p_e, p_d = med(n, "polywire", "enc"), med(n, "polywire", "dec")
            peers = [t for t in (med(n, "toons", "enc"), med(n, "etoon", "enc")) if t]
            print(f"| {n} | {ratio(p_e, min(peers) if peers else None)} | {ratio(p_e, med(n, 'orjson', 'enc'))} "
                  f"| {ratio(p_d, med(n, 'toons', 'dec'))} | {ratio(p_d, med(n, 'orjson', 'dec'))} |")
    print()
    print(f"Timing: timeit-style, per contender the loop count calibrated so one repeat takes about {args.target} s; "
          f"then {args.repeats} rounds in which each contender runs one repeat in turn (toon-format: only the first "
          f"{min(args.repeats, 3)}); medians. Ratios are ops/s over the named "
          f"contender's ops/s in this run (higher is faster). TOON decoders all read the same text; orjson reads "
          f"its own bytes. 'check': '= ref' byte-identical to the reference text ('= others': to the other "
          f"contenders', when there is no reference), 'ok' decodes to the dataset exactly.")
    print()
    if findings:
        print("Differences found by the checks:")
        for f in findings:
            print(f"- {f}")
    elif not toon_encoders:
        print("No TOON contender was loaded: nothing was compared.")
    else:
        print("Checks: every contender's text equals the reference (or, without one, the others'), and every "
              "decoder gives back each dataset exactly.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
