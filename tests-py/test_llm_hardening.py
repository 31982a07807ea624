"""Token counting held to the hostile-input standard: a long single piece (100 MB of one
character) counts in little memory and time, as tiktoken would count it; a tokenizer.json
path that is no regular file, or too large, is refused without blocking or reading
forever; a tokenizer.json whose patterns backtrack is refused at load, one whose matching
scans far ahead stops with LLM_TOKENIZER_TOO_SLOW; patterns that pass count exactly as
Hugging Face's tokenizers counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from polywire import llm
from test_llm import _train, fresh_random_texts, tiktoken_encodings  # noqa: F401 - a fixture

MB = 1 << 20


def _child(code: str) -> dict:
    """Run `code` in a fresh interpreter; it prints a JSON object, to which the child's
    peak RSS growth over what it had before `code`'s count (`rss_before`) is added."""
    prelude = textwrap.dedent(
        """
        import json, resource, sys
        from polywire import llm
        llm.count_tokens("warm up")
        def peak_mb():
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        """
    )
    out = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize(
    ("char", "per_token"),
    [("a", 8), (" ", 128), ("=", None)],
)
def test_a_hundred_megabytes_of_one_character_count_in_little_memory(char, per_token):
    # Before: about 44 bytes of memory per byte of such a piece (4.4 GB here) and minutes.
    r = _child(
        f"""
        text = {char!r} * (100 << 20)
        before = peak_mb()
        n = llm.count_tokens(text)
        print(json.dumps({{"n": n, "grew": peak_mb() - before}}))
        """
    )
    assert r["grew"] < 64, r
    if per_token:
        # "aaaaaaaa" and 128 spaces are tokens that merge no further (checked against tiktoken below).
        assert r["n"] == (100 << 20) // per_token
    assert r["n"] > 0


def test_long_runs_count_as_tiktoken_counts(tiktoken_encodings):  # noqa: F811
    enc = tiktoken_encodings["o200k_base"]
    # Runs long enough for the windowed merge (64 KB and more) are too slow for tiktoken's
    # quadratic merge; these check the per-token figures the test above relies on, and
    # the windows are checked against the whole-piece merge in the Rust tests.
    for char, n in [("a", 8 * 300), (" ", 128 * 40), ("=", 5000)]:
        assert llm.count_tokens(char * n) == len(enc.encode_ordinary(char * n)), char


def test_encode_for_llm_of_a_value_holding_a_long_string_takes_little_memory():
    # Before: 60 s and 5.7 GB for a 64 MB string.
    r = _child(
        """
        value = {"k": "a" * (64 << 20)}
        before = peak_mb()
        result = llm.encode_for_llm(value)
        print(json.dumps({"tokens": result.tokens, "n": llm.count_tokens(result.text), "grew": peak_mb() - before}))
        """
    )
    assert r["tokens"] == r["n"]
    # The renderings themselves (about 64 MB each, two of them and the chosen str) and
    # little more.
    assert r["grew"] < 400, r


def test_tokenizer_paths_that_are_not_regular_files_are_refused(tmp_path):
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    for path in (zero, fifo, folder):
        # In a child: a FIFO would block it forever before the fix, /dev/zero exhaust it.
        code = f"""
        from polywire import llm
        try:
            llm.count_tokens("x", {str(path)!r})
        except llm.LlmError as e:
            print(e.code, e)
        """
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("LLM_TOKENIZER_FILE") and "not a regular file" in out.stdout, out.stdout


def test_tokenizer_files_over_the_limit_are_refused(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(257 * MB)  # sparse: no disk used
    with pytest.raises(llm.LlmError) as e:
        llm.count_tokens("x", str(big))
    assert e.value.code == "LLM_TOKENIZER_FILE" and "256 MiB" in str(e.value)


def _with_pre_tokenizer(tmp_path, name: str, pre_tokenizer: dict) -> str:
    base = tmp_path / "base.json"
    _train("bpe", base)
    data = json.loads(base.read_text())
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [pre_tokenizer, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_backtracking_patterns_are_refused_at_load(tmp_path):
    for pattern in [r"(?=a)(a+)+$", r"(\w)\1", r"\s+(?=\S)"]:
        path = _with_pre_tokenizer(tmp_path, "bad.json", {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False})
        with pytest.raises(llm.LlmError) as e:
            llm.count_tokens("x", path)
        assert e.value.code == "LLM_INVALID_TOKENIZER" and "backtracking" in str(e.value), pattern


def test_patterns_that_scan_far_ahead_stop_within_their_budget(tmp_path):
    # No look-around, so accepted; but every match scans to the text's end first.
    path = _with_pre_tokenizer(tmp_path, "slow.json", {"type": "Split", "pattern": {"Regex": "a+$|a"}, "behavior": "Isolated", "invert": False})
    assert llm.count_tokens("aab a", path) > 0
    code = f"""
    import time
    from polywire import llm
    start = time.perf_counter()
    try:
        llm.count_tokens("a" * 300_000 + "b", {path!r})
    except llm.LlmError as e:
        print(e.code, round(time.perf_counter() - start, 1))
    """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("LLM_TOKENIZER_TOO_SLOW"), out.stdout


def test_split_and_replace_patterns_count_as_hugging_face_does(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Regex, normalizers, pre_tokenizers

    llama3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    base = tmp_path / "base.json"
    _train("bpe", base)
    for behavior, invert in [("isolated", False), ("removed", True), ("merged_with_previous", False)]:
        reference = tokenizers.Tokenizer.from_file(str(base))
        reference.normalizer = normalizers.Sequence([normalizers.Replace(Regex(r"[ \t]{2,}"), " "), normalizers.NFC()])
        reference.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(llama3), behavior=behavior, invert=invert), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
        )
        path = tmp_path / f"split-{behavior}.json"
        reference.save(str(path))
        texts = fresh_random_texts(300) + ["a  b\t\tc   d", "x's  y\n\n  z", ""]
        bad = [t[:60] for t in texts if llm.count_tokens(t, str(path)) != len(reference.encode(t, add_special_tokens=False).ids)]
        assert bad == [], behavior
