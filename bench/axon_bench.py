"""AXON request round trips on loopback: Python -> polywire and Node -> polywire against a
minimal Rust quinn request/reply pair with the same TLS and framing (the floor), in the same run.

Run from the repository root once polywire is installed (Python and the Node build), with the
release builds of the test programs:

    cargo build --release -p axon-interop
    python bench/axon_bench.py [--requests N] [--rounds R] [--quick]

One server, ``axon-floor serve`` (axon-interop/src/bin/axon-floor.rs: quinn with the peer's TLS
from ``polywire::axon::peer::tls``: TLS 1.3, pinned Ed25519 certificates both ways, ALPN
``axon/1``, upstream's transport settings; one axon/1 envelope per bidirectional stream; it
answers each request with ``{"echo": <payload>}``), is asked ``{"i": k}`` by four clients, each
in its own process or thread of control, all with the same client identity:

* floor: ``axon-floor bench``, the same minimal quinn client (no peer, no binding);
* Rust polywire: ``polywire::axon::peer::Peer`` (``axon-node``'s ``bench`` command);
* Python polywire: ``polywire.axon.Peer`` in this process (asyncio);
* Node polywire: ``polywire/axon``'s ``Peer`` (bench/axon_bench.mjs, a subprocess).

Each client warms up, then sends N requests with 1 in flight and 4N with 64 in flight (p50 and
p99 of each request's round trip, requests/s). The clients take turns for a few rounds; each
figure is the median over the rounds, and the ratios are to the floor's figures of the same run.
(Each connection allows 8 bidirectional streams at once, upstream's setting: with 64 in flight,
56 wait for a stream in every client alike.)
"""

from __future__ import annotations

import argparse
import base64
import asyncio
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CLIENT_SEED = bytes([2]) * 32


def binary(name: str) -> pathlib.Path:
    path = ROOT / "target" / "release" / name
    if not path.is_file():
        sys.exit(f"{path} is missing: cargo build --release -p axon-interop")
    return path


class Program:
    """A line-driven program (axon-floor serve, axon-node)."""

    def __init__(self, *argv: str):
        self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.ready = self.readline().split()
        assert self.ready[0] == "READY", self.ready

    def readline(self, timeout: float = 600) -> str:
        out: list = []
        t = threading.Thread(target=lambda: out.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        assert out and out[0], "the program did not answer"
        return out[0].strip()

    def command(self, line: str) -> str:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.readline()

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def percentile(sorted_values: list, q: float) -> float:
    return sorted_values[round((len(sorted_values) - 1) * q)]


def bench_line(line: str) -> tuple:
    head, p50, p99, rate = line.split()
    assert head == "BENCH", line
    return float(p50), float(p99), float(rate)


def row(one: tuple, many: tuple) -> dict:
    return {"p50_1": one[0], "p99_1": one[1], "rate1": one[2], "p50_64": many[0], "p99_64": many[1], "rate64": many[2]}


def floor(token: str, n: int) -> dict:
    def run(count: int, in_flight: int) -> tuple:
        out = subprocess.run([str(binary("axon-floor")), "bench", token, str(count), str(in_flight)],
                             capture_output=True, text=True, check=True, timeout=600)
        return bench_line(out.stdout.strip())

    return row(run(n, 1), run(4 * n, 64))


def rust_peer(token: str, agent_id: str, n: int) -> dict:
    client = Program(str(binary("axon-node")), "--seed", CLIENT_SEED.hex())
    try:
        assert client.command(f"add {token}").startswith("ADDED"), "add"
        return row(bench_line(client.command(f"bench {agent_id} {n} 1")), bench_line(client.command(f"bench {agent_id} {4 * n} 64")))
    finally:
        client.close()


async def python_peer(token: str, agent_id: str, n: int) -> dict:
    from polywire import axon

    async with await axon.Peer.start(identity=CLIENT_SEED, peers=[token]) as peer:
        for i in range(100):
            await peer.request(agent_id, {"i": i})

        async def timed(i: int) -> float:
            t = time.perf_counter()
            reply = await peer.request(agent_id, {"i": i})
            assert reply["echo"]["i"] == i
            return (time.perf_counter() - t) * 1e6

        latencies = []
        started = time.perf_counter()
        for i in range(n):
            latencies.append(await timed(i))
        rate1 = n / (time.perf_counter() - started)
        latencies.sort()
        one = (percentile(latencies, 0.5), percentile(latencies, 0.99), rate1)

        many_latencies: list = []

        async def worker(w: int, count: int) -> None:
            for i in range(count):
                many_latencies.append(await timed(w * count + i))

        started = time.perf_counter()
        per = 4 * n // 64
        await asyncio.gather(*(worker(w, per) for w in range(64)))
        rate64 = per * 64 / (time.perf_counter() - started)
        many_latencies.sort()
        return row(one, (percentile(many_latencies, 0.5), percentile(many_latencies, 0.99), rate64))


def node_peer(token: str, agent_id: str, n: int) -> dict:
    out = subprocess.run(
        ["node", str(ROOT / "bench" / "axon_bench.mjs"), token, agent_id, str(n), CLIENT_SEED.hex()],
        capture_output=True, text=True, check=True, timeout=600,
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=5000, help="requests with 1 in flight (4x that with 64)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; each figure is the median")
    ap.add_argument("--quick", action="store_true", help="a short run, to check that it works")
    args = ap.parse_args()
    n = 640 if args.quick else args.requests
    rounds = 1 if args.quick else args.rounds
    from polywire import axon

    client_key = base64.b64encode(axon.public_key_from_seed(CLIENT_SEED)).decode()
    server = Program(str(binary("axon-floor")), "serve", client_key)
    agent_id, token = server.ready[1], server.ready[2]
    runs: dict = {"floor: Rust quinn": [], "Rust polywire peer": [], "Python polywire": [], "Node polywire": []}
    try:
        for _ in range(rounds):
            runs["floor: Rust quinn"].append(floor(token, n))
            runs["Rust polywire peer"].append(rust_peer(token, agent_id, n))
            runs["Python polywire"].append(asyncio.run(python_peer(token, agent_id, n)))
            runs["Node polywire"].append(node_peer(token, agent_id, n))
    finally:
        server.close()
    results = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    base = results["floor: Rust quinn"]
    print(f"# AXON (axon/1) request round trip on loopback, {n} requests with 1 in flight and {4 * n} with 64, "
          f"median of {rounds} interleaved rounds; {platform.machine()}, {os.cpu_count()} cores")
    print()
    print("| client -> quinn echo server | p50, 1 in flight | p99, 1 | req/s, 1 | p50, 64 in flight | p99, 64 | req/s, 64 "
          "| p50 (1) / floor | req/s (1) / floor | req/s (64) / floor |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        print(
            f"| {name} | {r['p50_1']:.0f} µs | {r['p99_1']:.0f} µs | {r['rate1']:,.0f} | {r['p50_64']:.0f} µs "
            f"| {r['p99_64']:.0f} µs | {r['rate64']:,.0f} | {r['p50_1'] / base['p50_1']:.2f} "
            f"| {r['rate1'] / base['rate1']:.2f} | {r['rate64'] / base['rate64']:.2f} |"
        )


if __name__ == "__main__":
    main()
