"""The README is what a user reads first, on GitHub, PyPI and npm: what it must hold.

Its code blocks are run, compared and type-checked with those of docs/ by
tests-py/test_docs_blocks.py (Python and shell blocks, links), tests-js/readme.test.js
(JavaScript blocks) and the peer tests its markers name; here, that the README has a
quick start for every format in both languages, and the test command CI runs.
"""

from __future__ import annotations

import re

from conftest import ROOT
from doc_blocks import parse

README = ROOT / "README.md"
BLOCKS = parse(README)


def test_readme_has_a_python_and_a_javascript_block_for_every_format():
    python = "\n".join(b.text for b in BLOCKS if b.lang == "python")
    js = "\n".join(b.text for b in BLOCKS if b.lang == "js")
    for name in ["kado", "toon", "tether", "axon", "kameo", "llm"]:
        assert f"from polywire import {name}" in python, name
        assert f"'polywire/{name}'" in js, name
    assert any(b.lang == "sh" and re.search(r"^polywire ", b.text, re.M) for b in BLOCKS), "no block of the command"


def test_readme_gives_the_test_command_ci_runs():
    """.ci/run runs "the README's test command, verbatim": ./scripts/test.sh, given in the
    README's Development section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Development\n"):]
    section = section[: section.find("\n## ", 1)] if "\n## " in section[1:] else section
    shell = [b for b in parse(README) if b.lang == "sh" and b.text in section]
    assert any(re.search(r"^\./scripts/test\.sh\b", b.text, re.M) for b in shell), "the Development section lost ./scripts/test.sh"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^\./scripts/test\.sh$", ci, re.M), ".ci/run no longer runs ./scripts/test.sh"


def test_readme_states_the_published_platforms():
    text = README.read_text(encoding="utf-8")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    versions = re.findall(r"Programming Language :: Python :: 3\.(\d+)\"", pyproject)
    assert f"CPython 3.{min(map(int, versions))} to 3.{max(map(int, versions))}" in text
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert f"python3.{max(map(int, versions))}" in release, "the README names a Python the release does not build"
    assert "no free-threaded build" in text and "3.13t" in release  # the workflow says why there is none
    engines = re.search(r'"node": ">= (\d+)"', (ROOT / "package.json").read_text()).group(1)
    assert f"Node {engines} or newer" in text
