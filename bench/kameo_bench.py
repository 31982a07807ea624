"""Kameo ask round trips on loopback: Python -> kameo and Node -> kameo against Rust kameo ->
kameo, in the same run.

Run from the repository root once polywire is installed (Python and the Node build), with the
release build of the Kameo test node:

    cargo build --release -p kameo-parity --bin kameo-node
    python bench/kameo_bench.py [--asks N] [--markdown]

A kameo-node process (the real kameo =0.22.2 crate, kameo-parity/src/bin/kameo-node.rs) serves a
counter actor on 127.0.0.1. Three clients ask it ``get`` (a unit message, an ``i64`` reply), each
from its own process or thread of control:

* Rust: a second kameo-node process (kameo's own ``RemoteActorRef::ask``), its ``bench`` command;
* Python: ``polywire.kameo.Node`` in this process (asyncio);
* Node: ``polywire/kameo``'s ``Node`` (bench/kameo_bench.mjs, a subprocess).

Each client first warms up, then asks N times with 1 ask in flight (latency: p50, p99, asks/s)
and N times with 64 in flight (asks/s). The clients take turns for a few rounds; each figure is
the median over the rounds, and the ratios are to Rust's figures of the same run.
"""

from __future__ import annotations

import argparse
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


def binary() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("POLYWIRE_KAMEO_NODE_RELEASE") or ROOT / "target" / "release" / "kameo-node")
    if not path.is_file():
        sys.exit(f"{path} is missing: cargo build --release -p kameo-parity --bin kameo-node")
    return path


class KameoNode:
    def __init__(self, *args: str):
        self.proc = subprocess.Popen([str(binary()), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        words = self.readline().split()
        assert words[0] == "READY", words
        self.peer_id, self.addr = words[1], words[2]

    def readline(self, timeout: float = 600) -> str:
        out: list = []
        t = threading.Thread(target=lambda: out.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        assert out and out[0], "kameo-node did not answer"
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


def rust(server: KameoNode, asks: int) -> dict:
    client = KameoNode("--counter-name", "client-counter")
    try:
        assert client.command(f"dial {server.addr}") == "DIALED"
        client.command(f"bench counter {max(asks // 10, 100)} 1")  # warm up
        _, p50, p99, rate1 = client.command(f"bench counter {asks} 1").split()
        *_, rate64 = client.command(f"bench counter {asks} 64").split()
        return {"p50_us": float(p50), "p99_us": float(p99), "rate1": float(rate1), "rate64": float(rate64)}
    finally:
        client.close()


async def python_client(server: KameoNode, asks: int) -> dict:
    from polywire.kameo import Node

    async with await Node.start(bootstrap=[server.addr]) as node:
        counter = await node.lookup("counter")
        for _ in range(max(asks // 10, 100)):
            await counter.ask("get")
        latencies = []
        started = time.perf_counter()
        for _ in range(asks):
            t = time.perf_counter()
            await counter.ask("get")
            latencies.append((time.perf_counter() - t) * 1e6)
        rate1 = asks / (time.perf_counter() - started)
        latencies.sort()

        async def worker(n: int) -> None:
            for _ in range(n):
                await counter.ask("get")

        started = time.perf_counter()
        await asyncio.gather(*(worker(asks // 64) for _ in range(64)))
        rate64 = (asks // 64 * 64) / (time.perf_counter() - started)
        return {"p50_us": percentile(latencies, 0.5), "p99_us": percentile(latencies, 0.99), "rate1": rate1, "rate64": rate64}


def node_client(server: KameoNode, asks: int) -> dict:
    out = subprocess.run(
        ["node", str(ROOT / "bench" / "kameo_bench.mjs"), server.addr, str(asks)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--asks", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; each figure is the median")
    ap.add_argument("--quick", action="store_true", help="a short run, to check that it works")
    args = ap.parse_args()
    asks = 640 if args.quick else args.asks
    rounds = 1 if args.quick else args.rounds
    server = KameoNode()
    runs: dict = {"Rust kameo": [], "Python polywire": [], "Node polywire": []}
    try:
        for _ in range(rounds):
            runs["Rust kameo"].append(rust(server, asks))
            runs["Python polywire"].append(asyncio.run(python_client(server, asks)))
            runs["Node polywire"].append(node_client(server, asks))
    finally:
        server.close()
    results = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    base = results["Rust kameo"]
    print(f"# Kameo ask round trip on loopback, {asks} asks of `get`, median of {rounds} interleaved rounds; "
          f"{platform.machine()}, {os.cpu_count()} cores")
    print()
    print("| client -> kameo 0.22.2 | p50 (1 in flight) | p99 | asks/s, 1 in flight | asks/s, 64 in flight | p50 / Rust | asks/s (64) / Rust |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        print(
            f"| {name} | {r['p50_us']:.0f} µs | {r['p99_us']:.0f} µs | {r['rate1']:,.0f} | {r['rate64']:,.0f} "
            f"| {r['p50_us'] / base['p50_us']:.2f} | {r['rate64'] / base['rate64']:.2f} |"
        )


if __name__ == "__main__":
    main()
