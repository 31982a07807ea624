"""``polywire -d`` streams (issue #18): TOON in, JSON text out as the events come, with
memory bounded by the open structure and the longest line, not by the input. A ~200 MB
TOON document generated on the fly is piped through the command, its output counted and
not kept: the child's peak RSS (``os.wait4``) must stay under 150 MB. The output is
the JSON the whole-text decoder writes (checked on a smaller document), and a fault
after more than a block of output leaves the same whole blocks from both commands.
(tests-js/cli_stream.test.js runs the Node command the same way.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from conftest import NODE_PACKAGE
from polywire import toon

NODE = shutil.which("node")
TARGET = 200_000_000
PEAK_RSS_MB = 150


def row(i: int) -> str:
    return f"  {i},user{i},user{i}@example.com,{i % 1000}.25,{'true' if i % 3 else 'false'},\"City, {i % 97}\"\n"


def item(i: int) -> str:
    return (
        f"  - id: {i}\n    title: \"Item {i}: a, b\"\n    tags[2]: x{i % 7},y\n    dims:\n      w: {i % 50}.5\n"
        f"      h: {i % 9}\n    parts[2]{{sku,qty}}:\n      A{i},2\n      B{i},{i % 5}\n"
    )


def toon_chunks(target: int):
    """About ``target`` bytes of TOON (UTF-8 pieces): a nested config object, a big
    table (60%), list items holding nested objects, inline arrays and tables (40%)."""
    yield b'meta:\n  name: "big export"\n  version: 3\n  tags[3]: a,b,c\n  owner:\n    id: 7\n    email: ada@example.com\n'
    n_rows = int(target * 0.6) // len(row(10**6))
    n_items = int(target * 0.4) // len(item(10**6))
    yield f"rows[{n_rows}]{{id,name,email,score,active,city}}:\n".encode()
    for s in range(0, n_rows, 2000):
        yield "".join(row(i) for i in range(s, min(s + 2000, n_rows))).encode()
    yield f"items[{n_items}]:\n".encode()
    for s in range(0, n_items, 1000):
        yield "".join(item(i) for i in range(s, min(s + 1000, n_items))).encode()
    yield b"end: true\n"


# The command runs as the child of a small Python process that reports its peak RSS
# (``os.wait4``): on Linux a process's peak RSS counts the memory of the process it was
# forked from (kept across exec), so a child of this test process would be charged with
# pytest's own RSS.
MEASURE = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:])\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "sys.stderr.write(f'peak-rss-kb {usage.ru_maxrss}\\n')\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def run_streamed(command: list[str], chunks) -> tuple[int, int, bytes, bytes, float, bytes]:
    """Pipe ``chunks`` to the command; (status, bytes out, first and last bytes out, peak
    RSS in MB, stderr). Nothing is kept but counts and the ends."""
    command = [sys.executable, "-c", MEASURE, *command]
    p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def feed():
        try:
            for c in chunks:
                p.stdin.write(c)
        except BrokenPipeError:
            pass
        finally:
            p.stdin.close()

    errors: list[bytes] = []
    writer = threading.Thread(target=feed)
    reader = threading.Thread(target=lambda: errors.append(p.stderr.read()))
    writer.start()
    reader.start()
    n, first, last = 0, b"", b""
    while True:
        b = p.stdout.read(1 << 20)
        if not b:
            break
        if len(first) < 200:
            first = (first + b)[:200]
        last = (last + b)[-200:]
        n += len(b)
    writer.join()
    reader.join()
    p.wait()
    err, _, report = b"".join(errors).rstrip(b"\n").rpartition(b"\n")
    if not report.startswith(b"peak-rss-kb "):
        err, report = report, b"peak-rss-kb 0"
    return p.returncode, n, first, last, int(report.split()[1]) / 1024, err


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="os.wait4 (the child's peak RSS) is POSIX only")
def test_200_mb_streams_in_bounded_memory():
    start = time.monotonic()
    status, n, first, last, rss, err = run_streamed([sys.executable, "-m", "polywire", "-d"], toon_chunks(TARGET))
    took = time.monotonic() - start
    assert (status, err) == (0, b"")
    assert first.startswith(b'{\n  "meta": {\n    "name": "big export",\n    "version": 3,\n    "tags": [\n      "a",')
    assert last.endswith(b'      ]\n    }\n  ],\n  "end": true\n}\n')
    assert n > 2 * TARGET  # the JSON of it (keys repeated, indented)
    print(f"\n# python -m polywire -d: 200 MB of TOON, {n / 1e6:.0f} MB of JSON, peak RSS {rss:.1f} MB, {took:.1f} s")
    assert rss < PEAK_RSS_MB, f"peak RSS {rss:.1f} MB"


def expected_json(text: str) -> bytes:
    """What the whole-text decoder reads, as JSON.stringify(value, null, 2) writes it (for
    this document json.dumps writes the same: no duplicate keys, no integer-like keys, no
    number Python writes otherwise)."""
    value = toon.loads(text)
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def test_output_is_the_whole_text_decoders():
    text = b"".join(toon_chunks(3_000_000)).decode()
    r = subprocess.run([sys.executable, "-m", "polywire", "-d"], input=text.encode(), capture_output=True, timeout=120)
    assert (r.returncode, r.stderr) == (0, b"")
    assert r.stdout == expected_json(text)


def test_a_fault_after_a_block_leaves_whole_blocks():
    # The fault is on the last line: the JSON before it is written in whole 64 KiB
    # blocks, the rest dropped, then the message with its line.
    body = b"".join(toon_chunks(400_000)).decode()
    lines = body.rstrip("\n").split("\n")
    bad = "\n".join(lines[:-1]) + "\nend[2]: 1\n"
    commands = [[sys.executable, "-m", "polywire", "-d"]]
    if NODE:
        commands.append([NODE, str(NODE_PACKAGE / "bindings-node" / "lib" / "cli.js"), "-d"])
    runs = [subprocess.run(c, input=bad.encode(), capture_output=True, timeout=120) for c in commands]
    r = runs[0]
    assert r.returncode == 1
    assert len(r.stdout) > 0 and len(r.stdout) % 65536 == 0
    assert expected_json("\n".join(lines)).startswith(r.stdout)
    assert r.stderr.decode().startswith(f"polywire: Failed to decode TOON at line {len(lines)}, column 1: Expected 2 inline-form values, but got 1")
    for other in runs[1:]:
        assert (other.returncode, other.stdout, other.stderr) == (r.returncode, r.stdout, r.stderr)
