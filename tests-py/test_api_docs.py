"""The API reference (docs/api/) cannot drift from the declarations it documents.

- scripts/gen_api_docs.py --check: every page is exactly what the stubs (.pyi), the .d.ts
  files and the docstrings give now (a changed signature, docstring or JSDoc fails here
  until `python scripts/gen_api_docs.py` is run and the pages committed).
- Every name in a format module's runtime ``__all__`` is documented on its Python page, and
  every export of the Node subpath (its .d.ts, read here with a regex independent of the
  generator's parser, and the loaded CommonJS module) on its Node page: a declaration file
  that loses a name fails here even when the pages were regenerated from it.
- The pages' links point at files and headings that exist.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, node_module

FORMATS = ["kado", "toon", "tether", "axon", "kameo"]
DOCS = ROOT / "docs" / "api"
NODE = shutil.which("node")


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_api_docs", ROOT / "scripts" / "gen_api_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = load_generator()


def page(fmt: str) -> str:
    return (DOCS / f"{fmt}.md").read_text(encoding="utf-8").replace("\r\n", "\n")


def part(fmt: str, language: str) -> str:
    """The Python or the Node half of a format page."""
    text = page(fmt)
    py = text.index(f"\n## Python (`polywire.{fmt}`)\n")
    node = text.index(f"\n## Node (`polywire/{fmt}`)\n")
    assert py < node
    return text[py:node] if language == "python" else text[node:]


def documented(text: str, name: str) -> bool:
    """Whether a page documents `name`: as a heading or as a list entry of its own."""
    return re.search(rf"^(?:#### |- )`{re.escape(name)}(?![\w$])", text, re.M) is not None


def test_generated_pages_are_up_to_date(capsys):
    rc = GEN.main(["--check"])
    out = capsys.readouterr().out
    assert rc == 0, out


def test_every_format_has_a_page_and_the_index_links_it():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for fmt in FORMATS:
        assert (DOCS / f"{fmt}.md").is_file()
        assert f"]({fmt}.md)" in index


@pytest.mark.parametrize("fmt", FORMATS)
def test_python_page_documents_the_runtime_all(fmt):
    module = importlib.import_module(f"polywire.{fmt}")
    text = part(fmt, "python")
    missing = [name for name in module.__all__ if not documented(text, name)]
    assert not missing, f"docs/api/{fmt}.md (Python) does not document {missing}"


_DTS_EXPORT = re.compile(
    r"^export\s+(?:declare\s+)?(?:abstract\s+)?(?:const\s+enum|function|class|const|let|var|enum|interface|type)\s+([\w$]+)",
    re.M,
)
_DTS_REEXPORT = re.compile(r"^export\s+(?:type\s+)?\{([^}]*)\}", re.M)


def dts_exports(fmt: str) -> set:
    text = (ROOT / "bindings-node" / "types" / f"{fmt}.d.ts").read_text(encoding="utf-8")
    names = set(_DTS_EXPORT.findall(text))
    for group in _DTS_REEXPORT.findall(text):
        names.update(p.split(" as ")[-1].strip() for p in group.split(",") if p.strip())
    return names


@pytest.mark.parametrize("fmt", FORMATS)
def test_node_page_documents_every_dts_export(fmt):
    names = dts_exports(fmt)
    assert names
    text = part(fmt, "node")
    missing = sorted(name for name in names if not documented(text, name))
    assert not missing, f"docs/api/{fmt}.md (Node) does not document {missing}"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_node_page_documents_every_runtime_export():
    script = (
        "const out = {};"
        "for (const [name, path] of JSON.parse(process.argv[1])) out[name] = Object.keys(require(path));"
        "process.stdout.write(JSON.stringify(out));"
    )
    paths = [[fmt, str(node_module(fmt))] for fmt in FORMATS]
    proc = subprocess.run([NODE, "-e", script, json.dumps(paths)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    exports = json.loads(proc.stdout)
    for fmt in FORMATS:
        text = part(fmt, "node")
        missing = sorted(name for name in exports[fmt] if name != "default" and not documented(text, name))
        assert not missing, f"docs/api/{fmt}.md (Node) does not document runtime exports {missing}"


def slugs(markdown: str) -> set:
    """GitHub's heading anchors of a Markdown file."""
    found: set = set()
    counts: dict = {}
    in_code = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
            continue
        m = None if in_code else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


@pytest.mark.parametrize("name", ["README"] + FORMATS)
def test_links_resolve(name):
    path = DOCS / f"{name}.md"
    text = path.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    for link in links:
        if re.match(r"^[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        assert file.is_file(), f"{name}.md links to missing {link}"
        if anchor:
            assert anchor in slugs(file.read_text(encoding="utf-8")), f"{name}.md links to missing anchor {link}"


def test_readme_links_the_reference():
    assert "docs/api/README.md" in (ROOT / "README.md").read_text(encoding="utf-8")
