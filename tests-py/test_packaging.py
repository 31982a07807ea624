"""Release metadata: one version everywhere (set in the workspace Cargo.toml), the
license and project metadata in the installed distribution, and a cheap import."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
from importlib import metadata

import polywire
from conftest import NODE_PACKAGE, ROOT


def cargo_version() -> str:
    text = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[)", text, re.M | re.S)
    assert section, "Cargo.toml has a [workspace.package] table"
    m = re.search(r'^version = "([^"]+)"', section.group(1), re.M)
    assert m, "[workspace.package] sets the version"
    return m.group(1)


def test_one_version_everywhere():
    version = cargo_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:[-.+][0-9A-Za-z.-]+)?", version)
    # Every crate inherits it.
    for manifest in ["core", "cli", "bindings-python", "bindings-node"]:
        text = (ROOT / manifest / "Cargo.toml").read_text(encoding="utf-8")
        assert "version.workspace = true" in text, manifest
    # maturin takes it from Cargo: pyproject does not spell it out.
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dynamic = \["version"\]', pyproject, re.M)
    assert not re.search(r"^version\s*=", pyproject, re.M)
    # The Python package, built from it.
    assert polywire.__version__ == version
    assert metadata.version("polywire") == version
    # npm: the main manifest, its lock file and every platform package.
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == version
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["version"] == version and lock["packages"][""]["version"] == version
    platforms = sorted((ROOT / "npm").glob("*/package.json"))
    assert len(platforms) == len(package["napi"]["targets"]) == 7
    for p in platforms:
        assert json.loads(p.read_text(encoding="utf-8"))["version"] == version, p
    # The Node package under test (the repository's, or an installed tarball).
    installed = json.loads((NODE_PACKAGE / "package.json").read_text(encoding="utf-8"))
    assert installed["version"] == version
    for dep, v in installed.get("optionalDependencies", {}).items():
        assert v == version, dep


def test_distribution_metadata():
    meta = metadata.metadata("polywire")
    assert meta["Name"] == "polywire"
    assert meta.get("License-Expression") == "MIT" or meta.get("License") == "MIT"
    classifiers = meta.get_all("Classifier") or []
    for minor in range(9, 14):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Repository", "Issues", "Changelog"} <= set(urls)
    files = [str(f) for f in metadata.files("polywire") or []]
    assert any(f.endswith("LICENSE") for f in files), files
    # (An editable install's RECORD does not list the package's files: look beside it.)
    assert (pathlib.Path(polywire.__file__).parent / "py.typed").is_file()


def test_import_is_cheap():
    # Importing the package must not import every format module's Python layer.
    code = "import sys, polywire; print(sorted(m for m in sys.modules if m.startswith('polywire.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(eval(out))
    assert loaded <= {"polywire._polywire"}, loaded


def test_submodules_as_attributes():
    # `import polywire` alone gives every format, loaded on first use.
    code = (
        "import sys, polywire\n"
        "assert 'polywire.toon' not in sys.modules\n"
        "assert polywire.toon.loads(polywire.toon.dumps({'a': [1, 2]})) == {'a': [1, 2]}\n"
        "assert polywire.kado.HEADER_SIZE == 18 and polywire.tether and polywire.axon and polywire.kameo\n"
        "assert {'toon', 'kado', 'tether', 'axon', 'kameo'} <= set(dir(polywire))\n"
        "try:\n    polywire.nope\nexcept AttributeError as e:\n    assert 'nope' in str(e)\nelse:\n    raise SystemExit('no AttributeError')\n"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_the_sdist_build_fails_at_once_without_rust(tmp_path):
    # Where no wheel fits, pip builds the sdist: without Rust, maturin alone would download a
    # toolchain (over a gigabyte) and compile in silence; polywire's backend stops at once.
    pytest_ = __import__("pytest")
    pytest_.importorskip("maturin")
    code = "import sys; sys.path.insert(0, sys.argv[1]); import polywire_build as b; print(b.get_requires_for_build_wheel())"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": ":".join(p for p in sys.path if p)}
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "build-backend")], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0
    assert "no Rust toolchain (cargo) was found on PATH" in r.stderr and "https://rustup.rs" in r.stderr, r.stderr
    # Asked for, maturin's download goes ahead.
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "build-backend")], capture_output=True, text=True, env={**env, "POLYWIRE_BUILD_INSTALL_RUST": "1"}, timeout=60)
    assert r.returncode == 0 and "puccinialin" in r.stdout, r.stderr
    # With Rust there, the requirements are maturin's.
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "build-backend")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "puccinialin" not in r.stdout, r.stderr


def test_the_sdist_ships_its_build_backend():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'build-backend = "polywire_build"' in text and 'backend-path = ["build-backend"]' in text
    assert '{ path = "build-backend/polywire_build.py", format = "sdist" }' in text


def test_tab_completion_lists_each_module_s_api_only():
    import importlib

    for name in ["polywire.kado", "polywire.toon", "polywire.tether", "polywire.kameo", "polywire.llm"]:
        module = importlib.import_module(name)
        shown = [n for n in dir(module) if not n.startswith("_")]
        assert shown == sorted(module.__all__), name
        assert "annotations" not in shown and "Any" not in shown
