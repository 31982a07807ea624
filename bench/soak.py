"""Soak: N calls (default 1,000,000) of each format's encode+decode in one loop per
format, RSS sampled every N/10 calls. A leak in the native code (a reference never
released, a buffer never freed) shows as RSS that keeps growing.

    python bench/soak.py [N]
"""

import resource
import sys
import time

from polywire import axon, kado, kameo, tether, toon


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 1048576


N = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
value = {"tool": "read_file", "args": {"path": "src/a.ts", "lines": [1, 2, 3]}, "ok": True, "note": None}
rows = {"users": [{"id": 1, "name": "Ada", "role": "admin"}, {"id": 2, "name": "Bob", "role": "user"}]}
a = axon.agent_id_from_seed(bytes(32))
b = axon.agent_id_from_seed(bytes([1]) * 32)
env = axon.envelope(a, b, "query", {"question": "status?"})
frame = kado.encode(kado.MessageType.TOOL_CALL, value, 1)
stream = kado.FrameDecoder()

cases = {
    "kado encode+decode": lambda i: kado.decode(kado.encode(kado.MessageType.TOOL_CALL, value, i % 1000)),
    "kado FrameDecoder feed": lambda i: stream.feed(frame),
    "toon dumps+loads": lambda i: toon.loads(toon.dumps(rows)),
    "tether encode+decode": lambda i: tether.decode(tether.encode(["read", 42, None, True, [1, 2]])),
    "axon encode+decode": lambda i: axon.decode(axon.encode(env)),
    "kameo pack+unpack": lambda i: kameo.unpack(kameo.pack(value)),
}

print(f"| case ({N:,} calls) | RSS start MB | RSS peak MB | RSS end MB | growth MB | µs/call |")
print("|---|---:|---:|---:|---:|---:|")
for name, f in cases.items():
    start = peak = rss_mb()
    t0 = time.perf_counter()
    step = max(N // 10, 1)
    for i in range(N):
        f(i)
        if i % step == 0:
            peak = max(peak, rss_mb())
    us = (time.perf_counter() - t0) / N * 1e6
    end = rss_mb()
    peak = max(peak, end)
    print(f"| {name} | {start:.0f} | {peak:.0f} | {end:.0f} | {end - start:.1f} | {us:.2f} |")
