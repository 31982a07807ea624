import json
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT / "vectors"
# The Node package the cross-language tests run: the repository's build, or an
# installed npm package (POLYWIRE_NODE_PACKAGE=<project>/node_modules/polywire).
NODE_PACKAGE = pathlib.Path(os.environ.get("POLYWIRE_NODE_PACKAGE") or ROOT)


def load_vectors(name: str):
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def node_module(name: str) -> pathlib.Path:
    """The CommonJS entry of polywire/<name> in the Node package under test."""
    return NODE_PACKAGE / "bindings-node" / "lib" / f"{name}.js"


def pytest_configure(config):
    # POLYWIRE_EXPECT_INSTALLED=1 (CI's wheel runs): the tests must exercise an
    # installed wheel, not the source tree or an editable build of it.
    if os.environ.get("POLYWIRE_EXPECT_INSTALLED") == "1":
        import polywire
        import polywire._polywire as native

        for path in (polywire.__file__, native.__file__):
            p = pathlib.Path(path).resolve()
            assert ROOT not in p.parents, f"polywire imported from the source tree: {p}"
            assert pathlib.Path(sys.prefix).resolve() in p.parents, f"polywire not installed in {sys.prefix}: {p}"


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    return ROOT
