"""Cross-language: bytes written by Python decode in Node and the reverse, and the same
value gives the same bytes in both. Node runs as a subprocess over the built package."""

import json
import shutil
import subprocess

import pytest

from conftest import node_module
from polywire import kado

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

# Every message type, small (plain) and large (RLE-compressed) payloads, and
# values whose spelling differs between the languages' own JSON writers.
CASES = []
for t in kado.MessageType:
    CASES.append({"type": int(t), "seq": int(t), "payload": {"kind": t.name, "n": 1.0, "s": "é\n\u2028😀", "k": {"2": 0, "1": 1}}})
    CASES.append({"type": int(t), "seq": 100 + int(t), "payload": {"kind": t.name, "data": "x" * 3000, "list": [0] * 500}})

NODE_SCRIPT = r"""
const kado = require(process.argv[1]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const enc = new kado.TOONEncoder(), dec = new kado.TOONDecoder();
const out = {
  decoded: input.frames.map((h) => dec.decode(Buffer.from(h, 'hex'))),
  encoded: input.cases.map((c) => Buffer.from(enc.encode(c.type, c.payload, c.seq, 1700000000000)).toString('hex')),
};
// A stream of Python frames through the Node streaming decoder, 7 bytes at a time.
const stream = Buffer.concat(input.frames.map((h) => Buffer.from(h, 'hex')));
const fd = new kado.FrameDecoder();
out.streamed = [];
for (let i = 0; i < stream.length; i += 7) out.streamed.push(...fd.feed(stream.subarray(i, i + 7)));
process.stdout.write(JSON.stringify(out));
"""


def run_node(root, frames):
    proc = subprocess.run(
        [NODE, "-e", NODE_SCRIPT, str(node_module("kado"))],
        input=json.dumps({"frames": frames, "cases": CASES}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)


def test_python_to_node_and_back(root):
    py_frames = [kado.encode(c["type"], c["payload"], c["seq"], timestamp=1700000000000) for c in CASES]
    assert any(kado.is_compressed(f[18:]) for f in py_frames)
    assert any(not kado.is_compressed(f[18:]) for f in py_frames)
    out = run_node(root, [f.hex() for f in py_frames])

    # Python -> Node: every frame decodes to the same header and value.
    for case, frame, got in zip(CASES, py_frames, out["decoded"]):
        assert got["payload"] == json.loads(json.dumps(case["payload"]))
        assert got["header"] == {
            "version": 1,
            "type": case["type"],
            "payloadLength": len(frame) - 18,
            "timestamp": 1700000000000,
            "sequenceId": case["seq"],
        }
    assert [m["payload"] for m in out["streamed"]] == [m["payload"] for m in out["decoded"]]

    # Node -> Python: decodes, and the bytes are the very bytes Python wrote.
    for case, frame_hex, py_frame in zip(CASES, out["encoded"], py_frames):
        msg = kado.decode(bytes.fromhex(frame_hex))
        assert msg["payload"] == case["payload"]
        assert msg["header"]["sequence_id"] == case["seq"]
        assert frame_hex == py_frame.hex()
