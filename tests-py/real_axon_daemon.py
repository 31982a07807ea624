"""Real upstream AXON daemons for tests, from the binary POLYWIRE_AXON_DAEMON_HEAD names
(built from hwbehrens/axon main or v0.7.x outside this repository).

The daemon binds 0.0.0.0 and has no flag to bind 127.0.0.1 only, so the daemons run in a
network namespace with only loopback up: a holder process made with ``unshare -rn``
(an unprivileged user namespace and a network namespace) keeps it, and each daemon
joins it with ``nsenter -U -n`` (so several daemons reach each other on 127.0.0.1, and
nothing reaches the outside). The IPC socket is a file, so the tests' clients reach it
from outside the namespace; inside, the daemon runs as the namespace's root, which is
this user, so its same-uid check passes. mDNS is off. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest

ENV = "POLYWIRE_AXON_DAEMON_HEAD"
WAIT = 15.0


def real_binary() -> str:
    path = os.environ.get(ENV)
    if not path:
        pytest.skip(f"{ENV} is not set: the path of an upstream `axon` binary (hwbehrens/axon main or v0.7.x, "
                    "built outside this repository) runs these tests")
    assert os.path.isfile(path) and os.access(path, os.X_OK), f"{ENV}={path} is not an executable file"
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: the real daemons run in a loopback-only network namespace")
    return path


class Daemon:
    def __init__(self, binary: str, root: str, port: int, netns: "RealDaemons"):
        self.root = root
        self.port = port
        self.addr = f"127.0.0.1:{port}"
        self.socket = os.path.join(root, "axon.sock")
        os.makedirs(root, mode=0o700, exist_ok=True)
        with open(os.path.join(root, "config.yaml"), "w") as f:
            f.write(f"port: {port}\n")
        out = subprocess.run([binary, "--state-root", root, "identity", "--json", "--addr", self.addr],
                             capture_output=True, text=True, timeout=WAIT, check=True)
        ident = json.loads(out.stdout)
        self.agent_id = ident["agent_id"]
        self.public_key = ident["public_key"]
        self.token = ident["uri"]
        self.log = open(os.path.join(root, "daemon.log"), "w")
        self.proc = subprocess.Popen(
            netns.enter() + [binary, "--state-root", root, "daemon", "--port", str(port), "--disable-mdns"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + WAIT
        while not os.path.exists(self.socket):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"the daemon did not start: {open(os.path.join(root, 'daemon.log')).read()}")
            time.sleep(0.02)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)
        self.log.close()


class RealDaemons:
    """Daemons in one loopback-only network namespace, under ``base``."""

    def __init__(self, binary: str, base: str):
        self.binary = binary
        self.base = base
        self.daemons: list = []
        self.holder = subprocess.Popen(
            ["unshare", "-rn", "sh", "-c", "ip link set lo up && echo up && exec cat"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = self.holder.stdout.readline()
        if line.strip() != "up":
            self.holder.kill()
            pytest.skip(f"cannot make a network namespace (unshare -rn): {self.holder.stderr.read()[:300]}")

    def enter(self) -> list:
        return ["nsenter", "-t", str(self.holder.pid), "-U", "-n", "--"]

    def start(self, name: str, port: int) -> Daemon:
        d = Daemon(self.binary, os.path.join(self.base, name), port, self)
        self.daemons.append(d)
        return d

    def stop(self) -> None:
        for d in self.daemons:
            d.kill()
        self.holder.stdin.close()
        try:
            self.holder.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.holder.kill()
            self.holder.wait(WAIT)
