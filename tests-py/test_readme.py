"""Every Python code block of the README runs as written (each in a fresh interpreter,
against the installed package), so the documentation cannot drift from the API."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT

ALL_BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(encoding="utf-8"), re.M | re.S)
# Blocks that take a peer's address on the command line run in test_kameo_peer.py,
# against the kameo-node program.
BLOCKS = [b for b in ALL_BLOCKS if "sys.argv" not in b]
PEER_BLOCKS = [b for b in ALL_BLOCKS if "sys.argv" in b]


def test_readme_has_python_blocks_for_every_format():
    joined = "\n".join(BLOCKS)
    for name in ["kado", "toon", "tether", "axon", "kameo"]:
        assert f"from polywire import {name}" in joined, name


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(code, tmp_path):
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"{code}\n--- stderr:\n{r.stderr}"
