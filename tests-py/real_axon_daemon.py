"""Real upstream AXON daemons for tests, from the binary POLYWIRE_AXON_DAEMON_HEAD names
(built from hwbehrens/axon main or v0.7.x outside this repository), and the legacy v0.2.0
daemon (protocol "v2") from the binary POLYWIRE_AXON_DAEMON_V020 names (:class:`V020Daemon`).

The daemon binds 0.0.0.0 and has no flag to bind 127.0.0.1 only, so the daemons run in a
network namespace with only loopback up: a holder process made with ``unshare -rn``
(an unprivileged user namespace and a network namespace) keeps it, and each daemon
joins it with ``nsenter -U -n`` (so several daemons reach each other on 127.0.0.1, and
nothing reaches the outside). The IPC socket is a file, so the tests' clients reach it
from outside the namespace; inside, the daemon runs as the namespace's root, which is
this user, so its same-uid check passes. mDNS is off. Every wait is bounded.

A process already inside such a namespace (tests-py/axon_real_peer_scenario.py, which runs
polywire's QUIC peer beside the daemons) starts them with ``netns=None``: no ``nsenter``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

ENV = "POLYWIRE_AXON_DAEMON_HEAD"
ENV_V020 = "POLYWIRE_AXON_DAEMON_V020"
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


def write_identity_key(root: str, seed: bytes) -> None:
    """Upstream's identity.key: the 32-byte seed in standard padded base64, mode 0600 (both
    generations read it so), for a daemon whose agent id a test must know in advance."""
    assert len(seed) == 32
    os.makedirs(root, mode=0o700, exist_ok=True)
    path = os.path.join(root, "identity.key")
    with open(path, "w") as f:
        f.write(base64.b64encode(seed).decode())
    os.chmod(path, 0o600)


def head_identity(binary: str, root: str, addr: str, seed: bytes | None = None) -> dict:
    """``axon --state-root ROOT identity --json --addr ADDR`` (creates the key when missing):
    ``agent_id``, ``public_key`` and ``uri`` (the daemon's enrollment token)."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    if seed is not None:
        write_identity_key(root, seed)
    return _json_of([binary, "--state-root", root, "identity", "--json", "--addr", addr])


def _json_of(argv: list, **kwargs) -> dict:
    """Run an upstream CLI command that prints JSON; its output in the error if it does not."""
    out = subprocess.run(argv, capture_output=True, text=True, timeout=WAIT, **kwargs)
    try:
        assert out.returncode == 0
        return json.loads(out.stdout)
    except (AssertionError, ValueError):
        raise AssertionError(f"{argv} exited {out.returncode}: {out.stdout[-500:]}{out.stderr[-500:]}") from None


def _enter(netns) -> list:
    # None: this process is already in the namespace the daemon must run in.
    return [] if netns is None else netns.enter()


class Daemon:
    """A HEAD (axon/1) daemon on 127.0.0.1:``port`` with its state under ``root``. Optional:
    ``seed`` (its identity), ``connect`` (enrollment tokens pinned with upstream's own
    ``axon connect`` before it starts: their output is in ``connect_output``)."""

    def __init__(self, binary: str, root: str, port: int, netns: "RealDaemons | None" = None, *,
                 seed: bytes | None = None, connect: tuple = ()):
        self.binary = binary
        self.root = root
        self.port = port
        self.addr = f"127.0.0.1:{port}"
        self.socket = os.path.join(root, "axon.sock")
        os.makedirs(root, mode=0o700, exist_ok=True)
        with open(os.path.join(root, "config.yaml"), "w") as f:
            f.write(f"port: {port}\n")
        ident = head_identity(binary, root, self.addr, seed)
        self.agent_id = ident["agent_id"]
        self.public_key = ident["public_key"]
        self.token = ident["uri"]
        self.connect_output = []
        for token in connect:
            # Before the start it only appends the peer to config.yaml.
            out = subprocess.run([binary, "--state-root", root, "connect", token],
                                 capture_output=True, text=True, timeout=WAIT)
            if out.returncode != 0:
                raise AssertionError(f"`axon connect {token}` failed: {out.stdout}{out.stderr}")
            self.connect_output.append(out.stdout + out.stderr)
        self.log_path = os.path.join(root, "daemon.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            _enter(netns) + [binary, "--state-root", root, "daemon", "--port", str(port), "--disable-mdns"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + WAIT
        while not os.path.exists(self.socket):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"the daemon did not start: {open(self.log_path).read()}")
            time.sleep(0.02)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)
        self.log.close()

    def stop(self) -> None:
        """SIGTERM (HEAD shuts down gracefully and removes its socket), SIGKILL if it lingers."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


def v020_identity(binary: str, home: str, seed: bytes | None = None) -> dict:
    """``HOME=HOME axon identity`` of v0.2.0 (creates the key when missing): ``agent_id`` and
    ``public_key``. v0.2.0 keeps its state in ``$HOME/.axon`` and has no other option."""
    root = os.path.join(home, ".axon")
    os.makedirs(root, mode=0o700, exist_ok=True)
    if seed is not None:
        write_identity_key(root, seed)
    return _json_of([binary, "identity"], env=_v020_env(home))


def _v020_env(home: str) -> dict:
    env = dict(os.environ, HOME=home)
    env.pop("AXON_ROOT", None)
    return env


class V020Daemon:
    """A v0.2.0 (protocol "v2") daemon on 127.0.0.1:``port``, ``HOME=home`` (state in
    ``home/.axon``), pinning ``peers`` (mappings ``agent_id``, ``pubkey`` (standard base64),
    ``addr``) in config.toml. Only the lower agent id dials: start the side with the higher
    id first. v0.2.0 has no SIGTERM handler (it dies at once, its socket stays behind)."""

    def __init__(self, binary: str, home: str, port: int, netns: "RealDaemons | None" = None, *,
                 seed: bytes | None = None, peers: tuple = ()):
        self.binary = binary
        self.home = home
        self.root = os.path.join(home, ".axon")
        self.port = port
        self.addr = f"127.0.0.1:{port}"
        self.socket = os.path.join(self.root, "axon.sock")
        ident = v020_identity(binary, home, seed)
        self.agent_id = ident["agent_id"]
        self.public_key = ident["public_key"]
        lines = [f"port = {port}", ""]
        for p in peers:
            lines += ["[[peers]]", f'agent_id = "{p["agent_id"]}"', f'addr = "{p["addr"]}"', f'pubkey = "{p["pubkey"]}"', ""]
        with open(os.path.join(self.root, "config.toml"), "w") as f:
            f.write("\n".join(lines))
        if os.path.exists(self.socket):  # a stale one (v0.2.0 never removes it)
            os.unlink(self.socket)
        self.log_path = os.path.join(self.root, "daemon.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            _enter(netns) + [binary, "daemon", "--port", str(port), "--disable-mdns"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, env=_v020_env(home),
        )
        deadline = time.monotonic() + WAIT
        while not os.path.exists(self.socket):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"the v0.2.0 daemon did not start: {open(self.log_path).read()}")
            time.sleep(0.02)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)
        self.log.close()

    stop = kill  # SIGTERM would kill it just as abruptly


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
