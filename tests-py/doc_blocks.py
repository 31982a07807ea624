"""The fenced code blocks of README.md and docs/*.md (not docs/api/, which
test_api_docs.py checks), and how each one is checked: the shared reader of
tests-py/test_readme.py and tests-py/test_docs_blocks.py (tests-js/doc_blocks.js is its
JavaScript twin and must agree with it).

A block is a fence at the start of a line: ```` ```LANG ```` ... ```` ``` ````. The line right
before the opening fence may be a marker, an HTML comment (invisible on GitHub, PyPI and
npm) that says how the block is checked::

    <!-- check: KEY[=VALUE] KEY[=VALUE] ... -->

Keys:

- ``output``: the block is what the runnable block before it in the same page prints on
  standard output (compared line by line, trailing spaces ignored).
- ``file=NAME``: the block is an input file that the page's shell blocks use; it is
  written as ``NAME`` into the page's working directory before the next shell block runs
  (and must parse: ``json`` with ``json.loads``, ``toon`` with ``polywire.toon.loads``).
- ``id=NAME run-by=PATH``: the block needs a peer or a daemon, and the test in ``PATH``
  (which must mention ``NAME``, and find the block with :func:`block`) runs it; nothing
  here runs it.
- ``fixture=NAME``: the block runs here with a fixture in place (``fake-axon-daemon``:
  a fake upstream AXON daemon listening at ``$AXON_ROOT/axon.sock``).
- ``source=PATH``: (``rust``) the block's text appears verbatim in ``PATH``, a file cargo
  compiles.

Kinds, by LANG: ``python``; ``js`` (run by tests-js, which also type-checks it with
``tsc --strict``); ``sh`` (every line runs, in order, in one working directory per page);
``json``, ``toon`` and ``text`` (each needs ``output`` or ``file=``); ``rust`` (needs
``source=``). Any other LANG, a fence without one, or an indented fence is an error, so no
block goes unchecked.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parent.parent
KINDS = {"python", "js", "sh", "json", "toon", "text", "rust"}
MARKER = re.compile(r"^<!-- check: (.*?) -->$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")


@dataclass
class Block:
    path: pathlib.Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    marks: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list:
    """README.md and every page of docs/ (docs/api/ is generated and checked apart)."""
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def parse(path: pathlib.Path) -> list:
    """The blocks of one page, in order. Raises ValueError for a fence or marker that
    breaks the rules above."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if MARKER.match(lines[i]) and not (i + 1 < len(lines) and lines[i + 1].startswith("```")):
                raise ValueError(f"{path.name}:{i + 1}: a check marker must be right before a fence")
            i += 1
            continue
        indent, fence, info = m.groups()
        where = f"{path.relative_to(ROOT)}:{i + 1}"
        if indent or fence != "```":
            raise ValueError(f"{where}: fences start at column 0 with ``` (an indented or ~~~ fence is not checked)")
        lang = info.strip()
        if lang not in KINDS:
            raise ValueError(f"{where}: fence language {lang!r} is none of {sorted(KINDS)}")
        marks = {}
        if i > 0 and (mm := MARKER.match(lines[i - 1])):
            for item in mm.group(1).split():
                key, _, value = item.partition("=")
                marks[key] = value or True
        j = i + 1
        while j < len(lines) and lines[j] != "```":
            if FENCE.match(lines[j]):
                raise ValueError(f"{where}: a fence inside the block (line {j + 1}), or the block is not closed by ``` alone")
            j += 1
        if j == len(lines):
            raise ValueError(f"{where}: the block is not closed")
        blocks.append(Block(path, i + 1, lang, "\n".join(lines[i + 1 : j]) + "\n", marks))
        i = j + 1
    return blocks


def all_blocks() -> list:
    return [b for p in doc_files() for b in parse(p)]


def block(block_id: str) -> Block:
    """The one block marked ``id=block_id``."""
    found = [b for b in all_blocks() if b.marks.get("id") == block_id]
    assert len(found) == 1, f"{len(found)} blocks are marked id={block_id}"
    return found[0]


def runnable_before(blocks: list, index: int) -> Block:
    """The runnable block (python, js, sh) before blocks[index] in the same page: what an
    ``output`` block shows."""
    for b in reversed(blocks[:index]):
        if b.path != blocks[index].path:
            break
        if b.lang in ("python", "js", "sh"):
            return b
    raise AssertionError(f"{blocks[index].name}: an output block with no runnable block before it")


def same_output(actual: str, expected: str) -> bool:
    norm = lambda s: [line.rstrip() for line in s.rstrip("\n").split("\n")]  # noqa: E731
    return norm(actual) == norm(expected)
