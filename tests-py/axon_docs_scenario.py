"""The README's AXON pairing example, as written, run by tests-py/test_docs_axon.py:

    python tests-py/axon_docs_scenario.py --work DIR --node-package DIR [--binary PATH]

It must run INSIDE a loopback-only network namespace: the programs listen on the fixed ports
the README gives (the daemon on 7100, the program on 7102), and upstream's daemon binds
0.0.0.0. For each language it runs the program block (id ``axon-pair-python``, then
``axon-pair-js``) with the daemon's token as its argument, and the daemon's side:

- with ``--binary`` (a real upstream ``axon``, main or v0.7.x): the shell block
  ``axon-pair-sh`` line by line, with that binary as ``axon`` and ``AXON_ROOT`` set to a
  fresh state root; ``<peer key>`` and ``<peer id>`` are filled from the token the program
  printed (and the line's token must then be exactly that token), the daemon's token comes
  from the ``identity`` line's ``uri``;
- without it: a polywire peer with no handler stands in for the daemon (it answers requests
  ``unhandled``, as the daemon does) and does what the shell lines do: it pins the program's
  token, sends the request ``{"message": "Ada"}`` and the message ``{"data": {"done": true}}``.

The program must print its token, ``daemon: unhandled`` and the message, and exit 0; the
request must be answered ``{"answer": "hello, Ada"}``. Prints ONE JSON line on stdout,
``{"python": "ok" | "failed: ...", "js": ...}``; diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from doc_blocks import block  # noqa: E402

from polywire import axon  # noqa: E402

STEP = 15.0
EXPECTED_MESSAGE = {"python": "message {'data': {'done': True}}", "js": "message { data: { done: true } }"}
PROGRAMS = {"python": "axon-pair-python", "js": "axon-pair-js"}
SHELL = "axon-pair-sh"


def key_and_id(token: str) -> tuple:
    """The base64url key of an ``axon://KEY@addr`` token, and its agent id."""
    key = token[len("axon://"):].split("@", 1)[0]
    raw = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    return key, axon.agent_id(raw)


class Program:
    """The README's program for one language, started with the daemon's token."""

    def __init__(self, lang: str, work: str, node_package: str, daemon_token: str):
        code = block(PROGRAMS[lang]).text
        if lang == "python":
            argv = [sys.executable, "-c", code, daemon_token]
        else:
            os.makedirs(os.path.join(work, "node_modules"), exist_ok=True)
            link = os.path.join(work, "node_modules", "polywire")
            if not os.path.exists(link):
                os.symlink(node_package, link)
            with open(os.path.join(work, "pair.mjs"), "w") as f:
                f.write(code)
            argv = ["node", "pair.mjs", daemon_token]
        self.proc = subprocess.Popen(argv, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.lines: list = []

    def token(self) -> str:
        line = self.proc.stdout.readline().strip()  # bounded by the scenario's alarm
        self.lines.append(line)
        if not line.startswith("axon://"):
            raise AssertionError(f"the program printed {line!r} where its token was expected; stderr: {self.stderr()}")
        return line

    def finish(self) -> list:
        try:
            out, err = self.proc.communicate(timeout=STEP)
        except subprocess.TimeoutExpired:
            self.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"the program did not end within {STEP:g} s; stdout {out!r}, stderr {err[-2000:]}")
        if self.proc.returncode != 0:
            raise AssertionError(f"the program exited {self.proc.returncode}: {err[-2000:]}")
        return self.lines + out.strip().splitlines()

    def stderr(self) -> str:
        self.kill()
        return self.proc.stderr.read()[-2000:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)


def shell_lines() -> list:
    lines = []
    for line in block(SHELL).text.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        if line:
            lines.append(line)
    return lines


def with_real_daemon(lang: str, work: str, node_package: str, binary: str) -> None:
    root = os.path.join(work, "root")
    os.makedirs(root, mode=0o700)
    env = dict(os.environ, AXON_ROOT=root)
    daemon = program = None
    try:
        daemon_token = peer_token = None
        for line in shell_lines():
            if peer_token is not None:
                key, agent = key_and_id(peer_token)
                line = line.replace("axon://<peer key>@", f"axon://{key}@").replace("ed25519.<peer id>", agent)
            argv = shlex.split(line.rstrip("&").strip())
            assert argv[0] == "axon", f"{line!r}: the daemon's side is upstream's `axon` command"
            argv[0] = binary
            if line.endswith("&"):
                assert argv[1:] == ["daemon", "--disable-mdns"], line
                log = open(os.path.join(work, "daemon.log"), "w")
                daemon = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
                deadline = time.monotonic() + STEP
                while not os.path.exists(os.path.join(root, "axon.sock")):
                    assert daemon.poll() is None and time.monotonic() < deadline, \
                        f"the daemon did not start: {open(os.path.join(work, 'daemon.log')).read()[-2000:]}"
                    time.sleep(0.05)
                continue
            if argv[1] == "connect":
                assert argv[2] == peer_token, f"{line!r} gives {argv[2]}, the program's token is {peer_token}"
            r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=STEP)
            assert r.returncode == 0, f"{line!r} exited {r.returncode}: {r.stdout[-1000:]}{r.stderr[-1000:]}"
            print(f"[{lang}] $ {shlex.join(argv[1:])}\n{r.stdout.strip()}", file=sys.stderr)
            if argv[1] == "identity":
                daemon_token = json.loads(r.stdout)["uri"]
                program = Program(lang, work, node_package, daemon_token)
                peer_token = program.token()
            elif argv[1] == "request":
                reply = json.loads(r.stdout)
                assert reply["response"]["payload"] == {"answer": "hello, Ada"}, reply
        assert program is not None, "the shell block never ran `axon identity`"
        lines = program.finish()
        assert lines == [peer_token, "daemon: unhandled", EXPECTED_MESSAGE[lang]], lines
    finally:
        if program is not None:
            program.kill()
        if daemon is not None and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(STEP)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()


async def with_stand_in(lang: str, work: str, node_package: str) -> None:
    async with await axon.Peer.start(listen="127.0.0.1:7100") as daemon:
        program = Program(lang, work, node_package, daemon.token)
        try:
            peer_token = await asyncio.wait_for(asyncio.to_thread(program.token), STEP)
            agent = await daemon.add_peer(peer_token)
            answer = await daemon.request(agent, {"message": "Ada"}, timeout=STEP)
            assert answer == {"answer": "hello, Ada"}, answer
            await daemon.send(agent, {"data": {"done": True}})
            lines = await asyncio.to_thread(program.finish)
            assert lines == [peer_token, "daemon: unhandled", EXPECTED_MESSAGE[lang]], lines
        finally:
            program.kill()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--node-package", required=True)
    ap.add_argument("--binary")
    args = ap.parse_args()
    signal.alarm(90)  # a backstop: every step is bounded
    results = {}
    for lang in PROGRAMS:
        work = os.path.join(args.work, lang)
        os.makedirs(work)
        try:
            if args.binary:
                with_real_daemon(lang, work, args.node_package, args.binary)
            else:
                asyncio.run(asyncio.wait_for(with_stand_in(lang, work, args.node_package), 4 * STEP))
            results[lang] = "ok"
        except Exception as e:  # noqa: BLE001 - reported per language
            traceback.print_exc()
            results[lang] = f"failed: {e!r}"[:3000]
    print(json.dumps(results))


if __name__ == "__main__":
    main()
