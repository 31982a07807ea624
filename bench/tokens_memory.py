"""Memory and time of counting long texts: peak RSS over the text's size for runs of one
character, of spaces, of digits, and for random text, at 1, 10 and 100 MB, in Python
(``polywire.llm.count_tokens``) and Node (``countTokens``), each count in a fresh process.

    python bench/tokens_memory.py [--sizes 1,10,100] [--markdown]

Each child builds its text (a flat string: ``str`` in Python, a Buffer's Latin-1 string in
Node), notes its peak RSS, counts (o200k_base), and reports how much the peak grew during the
count and how long the count took. "Random text" is random words of 1 to 12 lowercase
letters, digits and punctuation between single spaces (short pieces); the runs are each one
piece of the whole text (a run of digits is pieces of three digits).

The growth to expect: Node copies the text once, as UTF-8, to count it (its own size);
Python counts a str in place. Counting itself needs memory that does not grow with a piece's
length (long pieces are merged 16 KB at a time; see core/src/tokens_long.rs).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
KINDS = ("one letter", "spaces", "digits", "random text")

PY = """
import json, random, resource, sys, time
from polywire import llm
llm.count_tokens("warm up")
kind, mb = sys.argv[1], int(sys.argv[2])
n = mb << 20
if kind == "one letter":
    text = "a" * n
elif kind == "spaces":
    text = " " * n
elif kind == "digits":
    text = "7" * n
else:
    rng = random.Random(1)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789.,;:!?"
    words = []
    size = 0
    while size < n:
        w = "".join(rng.choices(alphabet, k=rng.randint(1, 12)))
        words.append(w)
        size += len(w) + 1
    text = " ".join(words)[:n]
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
before = peak()
start = time.perf_counter()
tokens = llm.count_tokens(text)
took = time.perf_counter() - start
print(json.dumps({"tokens": tokens, "grew": peak() - before, "seconds": took, "peak": peak()}))
"""

JS = """
const llm = require(process.argv[1])
llm.countTokens('warm up')
const [kind, mb] = [process.argv[2], Number(process.argv[3])]
const n = mb * 1048576
let text
if (kind === 'one letter') text = Buffer.alloc(n, 'a').toString('latin1')
else if (kind === 'spaces') text = Buffer.alloc(n, ' ').toString('latin1')
else if (kind === 'digits') text = Buffer.alloc(n, '7').toString('latin1')
else {
  // The same words as the Python child's would take Python's random; any random words do.
  let seed = 1
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'
  const buf = Buffer.alloc(n, ' ')
  let i = 0
  while (i < n) {
    const len = 1 + Math.floor(rnd() * 12)
    for (let k = 0; k < len && i < n; k++) buf[i++] = alphabet.charCodeAt(Math.floor(rnd() * alphabet.length))
    i++
  }
  text = buf.toString('latin1')
}
const peak = () => process.resourceUsage().maxRSS * 1024
const before = peak()
const start = performance.now()
const tokens = llm.countTokens(text)
const seconds = (performance.now() - start) / 1000
console.log(JSON.stringify({ tokens, grew: peak() - before, seconds, peak: peak() }))
"""


def run(lang: str, kind: str, mb: int) -> dict:
    if lang == "python":
        cmd = [sys.executable, "-c", PY, kind, str(mb)]
    else:
        cmd = ["node", "-e", JS, str(ROOT / "bindings-node" / "lib" / "llm.js"), kind, str(mb)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10,100")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print("| text | MB | Python: peak RSS growth | growth / size | time | Node: peak RSS growth | growth / size | time |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in KINDS:
        for mb in sizes:
            cells = [kind, str(mb)]
            for lang in ("python", "node"):
                r = run(lang, kind, mb)
                size = mb << 20
                cells += [f"{r['grew'] / 2**20:,.1f} MB", f"{r['grew'] / size:.2f}", f"{r['seconds']:.2f} s"]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
