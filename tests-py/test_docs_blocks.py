"""Every fenced block of README.md and docs/*.md is checked (tests-py/doc_blocks.py says
how each kind is and what the ``<!-- check: ... -->`` markers mean):

- ``python``: runs in a fresh interpreter against the installed package, in an empty
  directory; an ``output`` block after it is its standard output.
- ``sh``: the page's shell blocks run in order in one directory (the ``file=`` blocks
  written there first), each line under ``set -euo pipefail``, once with the Python
  package's ``polywire`` command on PATH and once with the npm package's. Install and
  checkout lines (``pip install``, ``npm install``, ``git clone``, ``cargo install``) run
  stubs that only check that the command is one the project supports; ``npx polywire``
  runs the npm package's command; ``./scripts/*.sh`` after a ``git clone`` checks that the
  script exists.
- ``json`` / ``toon`` / ``text``: ``output`` (compared with the output of the block before)
  or ``file=`` (must parse).
- ``rust``: ``source=PATH``, the text appears verbatim in a file cargo compiles.
- ``run-by``: the named test file exists and mentions the block's id.
- ``js``: tests-js/docs.test.js and tests-js/readme.test.js run and type-check them; here
  only that they are well formed.

And every link of these pages resolves: README links to docs/ are absolute (they are read
on PyPI and npm too) and name files that exist; the docs' relative links name files and
headings that exist.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest

import doc_blocks
from conftest import NODE_PACKAGE, ROOT
from doc_blocks import Block, doc_files, parse, runnable_before, same_output

REPO_URL = "https://github.com/polywire/polywire"
BLOB = f"{REPO_URL}/blob/main/"
NODE = shutil.which("node")
LIMIT = 120


def page_blocks():
    return {p: parse(p) for p in doc_files()}


PAGES = page_blocks()
BLOCKS = [b for bs in PAGES.values() for b in bs]


def blocks_of(lang: str, run_here: bool = True) -> list:
    return [b for b in BLOCKS if b.lang == lang and (not run_here or "run-by" not in b.marks)]


def ids(blocks):
    return [b.name for b in blocks]


def output_after(block: Block):
    """The ``output`` block right after ``block`` (the next block of its page), if any."""
    page = PAGES[block.path]
    i = page.index(block)
    if i + 1 < len(page) and "output" in page[i + 1].marks:
        return page[i + 1]
    return None


# ---------------------------------------------------------------- the pages and markers


def test_every_page_parses_and_every_block_has_a_check():
    pages = {p.name for p in doc_files()}
    for name in ["README.md", "kado.md", "toon.md", "tether.md", "axon.md", "kameo.md", "llm.md", "command.md",
                 "hostile-input.md", "performance.md", "architecture.md", "contributing.md"]:
        assert name in pages, name
    for b in BLOCKS:
        if b.lang in ("json", "toon", "text"):
            assert "output" in b.marks or "file" in b.marks, f"{b.name}: a {b.lang} block needs output or file="
        if b.lang == "rust":
            assert "source" in b.marks, f"{b.name}: a rust block needs source=PATH"
        if "output" in b.marks:
            runnable_before(PAGES[b.path], PAGES[b.path].index(b))
        if "run-by" in b.marks:
            assert "id" in b.marks, f"{b.name}: run-by needs an id"


@pytest.mark.parametrize("b", [b for b in BLOCKS if "run-by" in b.marks], ids=ids([b for b in BLOCKS if "run-by" in b.marks]))
def test_blocks_run_elsewhere_are_run_there(b):
    path = ROOT / b.marks["run-by"]
    assert path.is_file(), f"{b.name}: run-by names a missing file {path}"
    assert b.marks["id"] in path.read_text(encoding="utf-8"), f"{b.name}: {path.name} never mentions {b.marks['id']}"
    ids_ = [x.marks.get("id") for x in BLOCKS if "id" in x.marks]
    assert ids_.count(b.marks["id"]) == 1, f"{b.name}: id {b.marks['id']} is not unique"


@pytest.mark.parametrize("b", blocks_of("rust"), ids=ids(blocks_of("rust")))
def test_rust_blocks_are_compiled_code(b):
    path = ROOT / b.marks["source"]
    assert path.is_file(), f"{b.name}: {path} is missing"
    # A file cargo compiles: under src/, tests/, examples/ or benches/ of a workspace member.
    members = re.search(r"members = \[(.*?)\]", (ROOT / "Cargo.toml").read_text()).group(1)
    rel = path.relative_to(ROOT).parts
    assert f'"{rel[0]}"' in members and rel[1] in ("src", "tests", "examples", "benches"), f"{b.name}: {path} is not compiled by cargo"
    assert b.text in path.read_text(encoding="utf-8"), f"{b.name}: the block is not verbatim in {path}"


@pytest.mark.parametrize("b", [b for b in BLOCKS if "file" in b.marks], ids=ids([b for b in BLOCKS if "file" in b.marks]))
def test_input_files_parse(b):
    if b.lang == "json":
        json.loads(b.text)
    elif b.lang == "toon":
        from polywire import toon

        toon.loads(b.text.rstrip("\n"))


def test_js_blocks_are_labelled_as_modules_or_commonjs():
    for b in blocks_of("js", run_here=False):
        esm = re.search(r"^import ", b.text, re.M) is not None
        cjs = "require(" in b.text
        assert not (esm and cjs), f"{b.name}: mixes import and require"
        if esm:
            assert re.match(r"// [\w.-]+\.mjs\b", b.text), f"{b.name}: an ES module block starts with `// NAME.mjs`"


# ---------------------------------------------------------------- links


def slugs(text: str) -> set:
    """GitHub's heading anchors of a Markdown text."""
    found, counts, in_code = set(), {}, False
    for line in text.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def check_target(page: pathlib.Path, file: pathlib.Path, anchor: str, link: str):
    assert file.exists(), f"{page.name} links to missing {link}"
    if anchor:
        assert file.suffix == ".md", f"{page.name}: an anchor into a non-Markdown file: {link}"
        assert anchor in slugs(file.read_text(encoding="utf-8")), f"{page.name} links to missing anchor {link}"


@pytest.mark.parametrize("page", doc_files(), ids=[p.name for p in doc_files()])
def test_links_resolve(page):
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    for link in links:
        target, _, anchor = link.partition("#")
        if target.startswith(BLOB):
            check_target(page, ROOT / target[len(BLOB):], anchor, link)
        elif target.startswith(f"{REPO_URL}/tree/main/"):
            assert (ROOT / target[len(f"{REPO_URL}/tree/main/"):]).is_dir(), f"{page.name} links to missing {link}"
        elif re.match(r"^[a-z]+:", target):
            continue
        else:
            assert page.name != "README.md", f"README.md: {link} must be absolute ({BLOB}...): PyPI and npm show the README"
            check_target(page, (page.parent / target).resolve() if target else page, anchor, link)


def test_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in doc_files()[1:]:
        assert f"{BLOB}docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"


# ---------------------------------------------------------------- python blocks


def python_env(tmp: str) -> dict:
    env = dict(os.environ)
    env["AXON_ROOT"] = tmp  # never a real daemon of this machine
    env.pop("PYTHONPATH", None)
    return env


async def _with_fake_daemon(tmp: str, run):
    sys.path.insert(0, str(ROOT / "tests-py"))
    from fake_axon_daemon import FakeDaemon

    async with FakeDaemon(os.path.join(tmp, "axon.sock"), name="docs") as fake:
        fake.add(1, rtt_ms=0.4, reply=lambda request: ("response", {"echo": request["payload"]}))
        return await run()


def run_python(b: Block, tmp: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-c", b.text]
    fixture = b.marks.get("fixture")
    if fixture is None:
        return subprocess.run(argv, cwd=tmp, env=python_env(tmp), capture_output=True, text=True, timeout=LIMIT)
    assert fixture == "fake-axon-daemon", f"{b.name}: unknown fixture {fixture}"

    async def run():
        proc = await asyncio.create_subprocess_exec(*argv, cwd=tmp, env=python_env(tmp), stdout=subprocess.PIPE,
                                                    stderr=subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), LIMIT)
        return subprocess.CompletedProcess(argv, proc.returncode, out.decode(), err.decode())

    return asyncio.run(_with_fake_daemon(tmp, run))


@pytest.mark.parametrize("b", blocks_of("python"), ids=ids(blocks_of("python")))
def test_python_block_runs(b):
    if "fixture" in b.marks and os.name != "posix":
        pytest.skip("the fake AXON daemon listens on a Unix socket")
    tmp = tempfile.mkdtemp(prefix="pwdoc-", dir="/tmp")  # short: Unix socket paths
    try:
        r = run_python(b, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert r.returncode == 0, f"{b.name}:\n{b.text}\n--- stderr:\n{r.stderr}"
    out = output_after(b)
    if out is not None:
        assert same_output(r.stdout, out.text), f"{b.name} printed:\n{r.stdout}\n--- the page shows ({out.name}):\n{out.text}"


# ---------------------------------------------------------------- shell blocks

# The stubs: each checks that the command is one the documentation may show, and fails
# the block otherwise. What they accept is what the project publishes: the PyPI package
# (with the extras pyproject.toml declares) or the repository, the npm package, a
# checkout, `cargo install --path cli` in a checkout.
EXTRAS = re.findall(r"^(\w+) = \[", (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1].split("\n[")[0], re.M)
PRELUDE = r"""
set -euo pipefail
stub_fail() { echo "stub: $*" >&2; return 1; }
pip() {
  [ "${1:-}" = install ] || stub_fail "only 'pip install' is documented, not: pip $*"
  shift; [ $# -gt 0 ] || stub_fail "pip install of nothing"
  for a in "$@"; do
    [[ "$a" =~ ^polywire(\[(EXTRAS)\])?$ || "$a" == "git+REPO" ]] || stub_fail "pip install: unexpected $a"
  done
}
npm() {
  [ "${1:-}" = install ] || stub_fail "only 'npm install' is documented, not: npm $*"
  if [ $# = 1 ]; then [ -f package.json ] || stub_fail "npm install outside a checkout"; return 0; fi
  [ $# = 2 ] && [ "$2" = polywire ] || stub_fail "npm install: unexpected ${*:2}"
}
git() {
  [ "${1:-}" = clone ] && [ "${2:-}" = REPO ] && [ $# -le 3 ] || stub_fail "only 'git clone REPO [DIR]' is documented, not: git $*"
  local dir=${3:-polywire}
  mkdir -p "$dir/scripts"
  cp ROOT/package.json "$dir/"
  for s in ROOT/scripts/*.sh; do
    printf '#!/bin/sh\n# stub of %s\n[ -x "%s" ]\n' "$s" "$s" > "$dir/scripts/$(basename "$s")"
    chmod +x "$dir/scripts/$(basename "$s")"
  done
}
cargo() {
  [ "$*" = "install --path cli" ] && [ -f package.json ] || stub_fail "only 'cargo install --path cli' in a checkout is documented, not: cargo $*"
  [ -f ROOT/cli/Cargo.toml ] || stub_fail "no cli crate"
}
npx() { [ "${1:-}" = polywire ] || stub_fail "npx $*"; shift; node NODECLI "$@"; }
"""


def prelude() -> str:
    return (PRELUDE.replace("EXTRAS", "|".join(EXTRAS)).replace("REPO", REPO_URL).replace("ROOT", str(ROOT))
            .replace("NODECLI", str(NODE_PACKAGE / "bindings-node" / "lib" / "cli.js")))


def command_dir(flavor: str, tmp: pathlib.Path) -> pathlib.Path:
    """A directory whose `polywire` (and `python`) is the flavor's command."""
    d = tmp / f".bin-{flavor}"
    d.mkdir()
    # A script, not a link: a link to a venv's python outside the venv is not that venv.
    (d / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    (d / "python").chmod(0o755)
    if flavor == "python":
        script = pathlib.Path(sys.executable).parent / "polywire"
        assert script.exists(), f"no polywire console script beside {sys.executable}"
        (d / "polywire").symlink_to(script)
    else:
        (d / "polywire").write_text(f'#!/bin/sh\nexec node {shlex.quote(str(NODE_PACKAGE / "bindings-node" / "lib" / "cli.js"))} "$@"\n')
        (d / "polywire").chmod(0o755)
    return d


SH_PAGES = [p for p, bs in PAGES.items() if any(b.lang == "sh" and "run-by" not in b.marks for b in bs)]


@pytest.mark.parametrize("flavor", ["python", "node"])
@pytest.mark.parametrize("page", SH_PAGES, ids=[p.name for p in SH_PAGES])
def test_shell_blocks_run_in_order(page, flavor, tmp_path):
    if os.name != "posix" or shutil.which("bash") is None:
        pytest.skip("the shell blocks run under bash, on POSIX")
    if flavor == "node" and NODE is None:
        pytest.skip("node is not installed")
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ)
    env["PATH"] = f"{command_dir(flavor, tmp_path)}{os.pathsep}{env['PATH']}"
    env["AXON_ROOT"] = str(tmp_path)
    for b in PAGES[page]:
        if "file" in b.marks:
            (work / b.marks["file"]).write_text(b.text, encoding="utf-8")
        if b.lang != "sh" or "run-by" in b.marks:
            continue
        r = subprocess.run(["bash", "-c", prelude() + b.text], cwd=work, env=env, capture_output=True, text=True,
                           timeout=LIMIT)
        assert r.returncode == 0, f"{b.name} ({flavor} command):\n{b.text}\n--- stderr:\n{r.stderr}"
        out = output_after(b)
        if out is not None:
            assert same_output(r.stdout, out.text), f"{b.name} ({flavor}) printed:\n{r.stdout}\n--- the page shows ({out.name}):\n{out.text}"


def test_the_harness_can_fail(tmp_path):
    """A broken block fails each runner (so a green run means the blocks ran)."""
    broken = Block(ROOT / "README.md", 0, "python", "raise SystemExit(3)\n")
    assert run_python(broken, str(tmp_path)).returncode == 3
    assert not same_output("a\nb\n", "a\nc\n")
    if os.name != "posix" or shutil.which("bash") is None:
        return
    env = dict(os.environ, PATH=f"{command_dir('python', tmp_path)}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run(["bash", "-c", prelude() + "polywire --no-such-option\necho unreachable\n"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=LIMIT)
    assert r.returncode == 2 and "unreachable" not in r.stdout
    for bad in ["pip install polywyre", "npm install polywire-beta", "git clone https://example.com/x", "cargo install polywire"]:
        r = subprocess.run(["bash", "-c", prelude() + bad], cwd=tmp_path, capture_output=True, text=True, timeout=LIMIT)
        assert r.returncode != 0, bad


@pytest.mark.skipif(os.name != "posix" or NODE is None, reason="POSIX descriptors, node")
def test_command_page_on_a_read_write_dev_null(tmp_path):
    """docs/command.md, "Standard streams": the npm package's command takes a read-write
    /dev/null as its standard output for a closed one (Node opens /dev/null read-write in
    place of a closed descriptor) and refuses it; write-only and pipes work; the Python
    package's command takes both."""
    page = (ROOT / "docs" / "command.md").read_text(encoding="utf-8")
    assert "read-write `/dev/null`" in page and "`1<>/dev/null`" in page
    (tmp_path / "data.json").write_text('{"a": 1}')
    commands = {flavor: str(command_dir(flavor, tmp_path) / "polywire") for flavor in ("python", "node")}

    def run(flavor, flags):
        fd = os.open(os.devnull, flags)
        try:
            return subprocess.run([commands[flavor], "data.json"], cwd=tmp_path, stdout=fd, stderr=subprocess.PIPE,
                                  text=True, timeout=LIMIT)
        finally:
            os.close(fd)

    for flavor in commands:
        assert run(flavor, os.O_WRONLY).returncode == 0, flavor
    assert run("python", os.O_RDWR).returncode == 0
    r = run("node", os.O_RDWR)
    assert r.returncode == 1 and "standard output is closed" in r.stderr, r
