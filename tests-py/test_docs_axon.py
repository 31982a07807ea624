"""The README's AXON pairing example runs as written (the blocks marked id=axon-pair-python,
id=axon-pair-js and id=axon-pair-sh), in both languages, by tests-py/axon_docs_scenario.py:

- test_readme_pairing_with_a_real_daemon: when POLYWIRE_AXON_DAEMON_HEAD names an upstream
  ``axon`` binary (hwbehrens/axon main or v0.7.x, built outside this repository), the daemon's
  side is that binary running the shell block's own lines;
- test_readme_pairing_with_a_stand_in: always (where a network namespace can be made), a
  polywire peer with no handler stands in for the daemon, so that the program blocks run
  in every CI run.

Both run in a loopback-only network namespace (the README's fixed ports; the daemon binds
0.0.0.0), made as tests-py/real_axon_daemon.py makes it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import NODE_PACKAGE
from real_axon_daemon import ENV, RealDaemons

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "axon_docs_scenario.py")
LIMIT = 120.0
BLOCK_IDS = ("axon-pair-python", "axon-pair-js", "axon-pair-sh")


def run_scenario(binary: str | None) -> dict:
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: the README's AXON example runs in a loopback-only network namespace")
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    base = tempfile.mkdtemp(prefix="pwx-", dir="/tmp")  # short: Unix socket paths
    netns = None
    try:
        netns = RealDaemons(binary or "", base)  # skips when no namespace can be made
        argv = [sys.executable, SCENARIO, "--work", base, "--node-package", str(NODE_PACKAGE)]
        if binary:
            argv += ["--binary", binary]
        r = subprocess.run(netns.enter() + argv, capture_output=True, text=True, timeout=LIMIT)
        try:
            return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr
        except (IndexError, ValueError):
            raise AssertionError(f"the scenario exited {r.returncode} without results:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")
    finally:
        if netns is not None:
            netns.stop()
        shutil.rmtree(base, ignore_errors=True)


def check(results_and_log) -> None:
    results, log = results_and_log
    assert results == {"python": "ok", "js": "ok"}, f"{results}\n--- scenario stderr ---\n{log[-8000:]}"


def test_readme_pairing_with_a_stand_in():
    check(run_scenario(None))


def test_readme_pairing_with_a_real_daemon():
    binary = os.environ.get(ENV)
    if not binary:
        pytest.skip(f"{ENV} is not set: the path of an upstream `axon` binary (hwbehrens/axon main or v0.7.x) runs "
                    "the README's daemon side")
    assert os.path.isfile(binary) and os.access(binary, os.X_OK), f"{ENV}={binary} is not an executable file"
    check(run_scenario(binary))
