"""A Kado frame encoded in Python is decoded in Node, and one encoded in Node is decoded
in Python; both sides write the same bytes for the same value."""

import json
import pathlib
import subprocess

from polywire import kado

ROOT = pathlib.Path(__file__).resolve().parent.parent
value = {"toolName": "file_read", "args": {"path": "src/services/user.ts"}, "progress": 0.5}

frame = kado.encode(kado.MessageType.TOOL_CALL, value, 42, timestamp=1700000000000)
print(f"Python encoded a TOOL_CALL frame: {len(frame)} bytes, {frame[:18].hex()} + {frame[18:].decode()}")

node = r"""
const { TOONEncoder, TOONDecoder } = require(process.argv[1]);
const [frameHex, valueJson] = require('fs').readFileSync(0, 'utf8').split('\n');
const msg = new TOONDecoder().decode(Buffer.from(frameHex, 'hex'));
console.log('Node decoded it:', JSON.stringify(msg));
const back = new TOONEncoder().encode(msg.header.type, JSON.parse(valueJson), 43, 1700000000001);
console.log(Buffer.from(back).toString('hex'));
"""
out = subprocess.run(
    ["node", "-e", node, str(ROOT / "bindings-node" / "lib" / "kado.js")],
    input=f"{frame.hex()}\n{json.dumps(value)}",
    capture_output=True, text=True, check=True,
).stdout.splitlines()
print(out[0])
reply = bytes.fromhex(out[1])
decoded = kado.decode(reply)
print(f"Node encoded a reply, Python decoded it: {decoded}")
assert decoded["payload"] == value
assert reply[18:] == frame[18:], "same value, same payload bytes in both languages"
print("Same payload bytes from Python and Node: yes")

# TOON, the headline format: the same value as TOON from Python and from Node (the same
# text), read back on the other side, and its size against JSON.
from polywire import toon  # noqa: E402

orders = {
    "orders": [
        {"id": 1001, "customer": "Ada", "total": 42.5, "status": "shipped"},
        {"id": 1002, "customer": "Bob", "total": 17.0, "status": "pending"},
        {"id": 1003, "customer": "Cy", "total": 99.99, "status": "shipped"},
    ]
}
text = toon.dumps(orders)
node = r"""
const toon = require(process.argv[1]);
const value = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({ text: toon.encode(value), back: toon.decode(toon.encode(value)) }));
"""
out = json.loads(subprocess.run(
    ["node", "-e", node, str(ROOT / "bindings-node" / "lib" / "toon.js")],
    input=json.dumps(orders), capture_output=True, text=True, check=True,
).stdout)
compact_json = json.dumps(orders, separators=(",", ":"))
print(f"\nPython wrote TOON ({len(text)} bytes; compact JSON: {len(compact_json)} bytes, "
      f"{100 * (1 - len(text) / len(compact_json)):.0f}% smaller):\n{text}")
assert out["text"] == text, "Node writes the same TOON text"
assert out["back"] == orders and toon.loads(text) == orders
print("Node wrote the same TOON text and read it back; so did Python: yes")
