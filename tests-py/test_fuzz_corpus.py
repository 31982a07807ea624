"""Replays the committed atheris corpus (fuzz/python/corpus/<target>/) through
the same binding-level targets as fuzz/python/fuzz_<target>.py, without atheris:
only typed polywire errors may escape (the targets catch those)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parent.parent / "fuzz" / "python"
sys.path.insert(0, str(FUZZ))
from targets import TARGETS  # noqa: E402

CASES = sorted((t, p) for t in TARGETS for p in (FUZZ / "corpus" / t).glob("*")) if (FUZZ / "corpus").is_dir() else []


def test_corpus_present():
    assert {t for t, _ in CASES} == set(TARGETS)


@pytest.mark.parametrize("target,path", CASES, ids=[f"{t}/{p.name}" for t, p in CASES])
def test_corpus_input(target, path):
    TARGETS[target](path.read_bytes())
