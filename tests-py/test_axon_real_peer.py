"""polywire's QUIC AXON peer (``polywire.axon.Peer``) against REAL upstream AXON daemons
(hwbehrens/axon, built outside this repository), both protocol generations:

* ``POLYWIRE_AXON_DAEMON_HEAD``: an ``axon`` built from upstream main (protocol "axon/1";
  checked with 17bb9c903d6a, version 0.7.2);
* ``POLYWIRE_AXON_DAEMON_V020``: one built from tag v0.2.0 (protocol "v2"; ca62587828d6).

Each test skips with a message saying which binary it wants when its variable is unset, and
when no network namespace can be made.

Why a child process: the daemons bind 0.0.0.0 (no option for 127.0.0.1), so they run in a
loopback-only network namespace (a holder made with ``unshare -rn``, see
real_axon_daemon.py), and our peer must be in the SAME namespace to reach them over UDP. A
network namespace belongs to a process, not to a thread, so this test process cannot join it
for a while: it runs tests-py/axon_real_peer_scenario.py inside with ``nsenter``. The
scenario starts the daemon(s) as its children, runs polywire peers and every check (each
bounded; the whole run takes well under a second here, at most ~60 s), and prints one JSON
line ``{check: "ok" | "failed: detail"}``. It runs once per flavor (cached for the module);
each check is one test here, so a failure names the check and carries the scenario's
diagnostics (upstream's daemon log tail among them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

from axon_real_peer_scenario import CHECKS
from real_axon_daemon import ENV, ENV_V020, RealDaemons

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "axon_real_peer_scenario.py")
LIMIT = 90.0  # the scenario bounds itself at ~60 s; this is the backstop

WANTED = {
    "head": (ENV, "an upstream `axon` binary built from hwbehrens/axon main (protocol axon/1; "
                  "checked with commit 17bb9c903d6a, version 0.7.2)"),
    "v020": (ENV_V020, "an upstream `axon` binary built from hwbehrens/axon tag v0.2.0 (protocol v2; "
                       "commit ca62587828d6)"),
}


class Scenarios:
    """One scenario run per flavor, shared by that flavor's tests: ``("ok", (results,
    stderr))``, ``("skip", why)`` or ``("error", why)`` (the scenario itself broke)."""

    def __init__(self):
        self.runs: dict = {}

    def get(self, flavor: str) -> tuple[dict, str]:
        if flavor not in self.runs:
            self.runs[flavor] = self._run(flavor)
        kind, value = self.runs[flavor]
        if kind == "skip":
            pytest.skip(value)
        if kind == "error":
            pytest.fail(value, pytrace=False)
        return value

    def _run(self, flavor: str) -> tuple:
        env, what = WANTED[flavor]
        binary = os.environ.get(env)
        if not binary:
            return "skip", f"{env} is not set: the path of {what}, built outside this repository, runs these tests"
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            return "error", f"{env}={binary} is not an executable file"
        for tool in ("unshare", "nsenter", "ip"):
            if shutil.which(tool) is None:
                return "skip", f"{tool} is not installed: the real daemons run in a loopback-only network namespace"
        # Short: the daemon's Unix socket path must stay under 108 bytes.
        base = tempfile.mkdtemp(prefix="pwr-", dir="/tmp")
        netns = None
        try:
            try:
                netns = RealDaemons(binary, base)
            except pytest.skip.Exception as e:
                return "skip", str(e.msg)
            # Its own session, so that on a timeout the scenario and the daemons it started
            # (same process group) are killed together.
            proc = subprocess.Popen(
                netns.enter() + [sys.executable, SCENARIO, "--flavor", flavor, "--binary", binary, "--work", base],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True,
            )
            try:
                out, err = proc.communicate(timeout=LIMIT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                return "error", f"the {flavor} scenario did not finish within {LIMIT:g} s:\n{err[-4000:]}"
            lines = out.strip().splitlines()
            try:
                results = json.loads(lines[-1])
            except (IndexError, ValueError):
                return "error", f"the {flavor} scenario exited {proc.returncode} without results:\n{out[-2000:]}\n{err[-4000:]}"
            return "ok", (results, err)
        finally:
            if netns is not None:
                netns.stop()
            shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def scenarios():
    return Scenarios()


def assert_check(scenarios: Scenarios, flavor: str, check: str) -> None:
    results, diagnostics = scenarios.get(flavor)
    outcome = results.get(check, "failed: the scenario did not report this check")
    assert outcome == "ok", f"{flavor}: {check}: {outcome}\n--- scenario stderr ---\n{diagnostics[-8000:]}"


@pytest.mark.parametrize("check", CHECKS["head"])
def test_axon1_peer_against_upstream_head(scenarios, check):
    assert_check(scenarios, "head", check)


@pytest.mark.parametrize("check", CHECKS["v020"])
def test_v2_peer_against_upstream_v020(scenarios, check):
    assert_check(scenarios, "v020", check)


def test_scenario_reports_exactly_the_checks(scenarios):
    """No check is silently added or dropped by the scenario (each flavor that ran)."""
    ran = 0
    for flavor in CHECKS:
        try:
            results, _ = scenarios.get(flavor)
        except pytest.skip.Exception:
            continue
        ran += 1
        assert list(results) == CHECKS[flavor], (flavor, list(results))
    if not ran:
        pytest.skip(f"neither {ENV} nor {ENV_V020} is set: the upstream `axon` binaries run these tests")
