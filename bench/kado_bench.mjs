// Kado frame encode+decode throughput in Node: upstream-style TypeScript code vs polywire.
//
// Run from the repository root once the Node binding is built:
//
//     node bench/kado_bench.mjs [--quick]
//
// Contenders (both produce and read the same frames):
// * upstream-style: the code of kado's packages/orchestrator/src/toon/{encoder,decoder,compression}.ts
//   (DataView header, JSON.stringify + TextEncoder, the RLE loop over number[] arrays,
//   TextDecoder + JSON.parse), transcribed to plain JS.
// * polywire: `TOONEncoder` / `TOONDecoder` from `polywire/kado` (or bindings-node/lib/kado.js of
//   this checkout when the package is not installed; POLYWIRE_KADO=<path> overrides).
//
// One operation is decode(encode(payload)). The loop count is calibrated so that one repeat takes
// about --target seconds, then several repeats; the table shows the median (and best) time per
// operation. Before timing, decoded payloads are compared, and polywire's bytes are compared with
// the upstream-style bytes for the same fixed timestamp.

import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import os from 'node:os';
import { calibrate, timeLoop } from './timing.mjs';

// ---------------------------------------------------------------- upstream-style code
const TOON_VERSION = 1;
const HEADER_SIZE = 18;
const COMPRESSION_THRESHOLD = 1024;
const MAGIC_COMPRESSED = 0x5a;
const INSTRUCTION = 0x01;
const TOOL_RESULT = 0x03;

function isCompressed(buffer) {
  return buffer.length > 0 && buffer[0] === MAGIC_COMPRESSED;
}

function simpleRLEEncode(data) {
  const result = [];
  let i = 0;
  while (i < data.length) {
    const byte = data[i] ?? 0;
    let count = 1;
    while (i + count < data.length && data[i + count] === byte && count < 255) {
      count++;
    }
    if (count > 3 || byte === 0xff) {
      result.push(0xff, byte, count);
    } else {
      for (let j = 0; j < count; j++) result.push(byte);
    }
    i += count;
  }
  return new Uint8Array(result);
}

function simpleRLEDecode(data) {
  const result = [];
  let i = 0;
  while (i < data.length) {
    if (data[i] === 0xff && i + 2 < data.length) {
      const byte = data[i + 1] ?? 0;
      const count = data[i + 2] ?? 0;
      for (let j = 0; j < count; j++) result.push(byte);
      i += 3;
    } else {
      result.push(data[i] ?? 0);
      i++;
    }
  }
  return new Uint8Array(result);
}

function compress(data) {
  if (data.length < COMPRESSION_THRESHOLD) return data;
  const encoded = simpleRLEEncode(data);
  if (encoded.length >= data.length) return data;
  const result = new Uint8Array(1 + encoded.length);
  result[0] = MAGIC_COMPRESSED;
  result.set(encoded, 1);
  return result;
}

function decompress(data) {
  if (!isCompressed(data)) return data;
  return simpleRLEDecode(data.subarray(1));
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

class UpstreamEncoder {
  // `timestamp` is an addition for the byte comparison; upstream always uses Date.now().
  encode(type, data, sequenceId, timestamp) {
    const payload = this.encodePayload(data);
    const compressed = payload.length > COMPRESSION_THRESHOLD ? compress(payload) : payload;
    const header = {
      version: TOON_VERSION,
      type,
      payloadLength: compressed.length,
      timestamp: timestamp ?? Date.now(),
      sequenceId,
    };
    const headerBytes = this.encodeHeader(header);
    const result = new Uint8Array(headerBytes.length + compressed.length);
    result.set(headerBytes, 0);
    result.set(compressed, headerBytes.length);
    return result;
  }

  encodeHeader(header) {
    const buf = new ArrayBuffer(HEADER_SIZE);
    const view = new DataView(buf);
    view.setUint8(0, header.version);
    view.setUint8(1, header.type);
    view.setUint32(2, header.payloadLength, true);
    view.setBigUint64(6, BigInt(header.timestamp), true);
    view.setUint32(14, header.sequenceId, true);
    return new Uint8Array(buf);
  }

  encodePayload(data) {
    return textEncoder.encode(JSON.stringify(data));
  }
}

class UpstreamDecoder {
  decode(buffer) {
    const header = this.decodeHeader(buffer.subarray(0, HEADER_SIZE));
    const payloadBytes = buffer.subarray(HEADER_SIZE, HEADER_SIZE + header.payloadLength);
    const payload = this.decodePayload(payloadBytes, header.type);
    return { header, payload };
  }

  decodeHeader(buffer) {
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    return {
      version: view.getUint8(0),
      type: view.getUint8(1),
      payloadLength: view.getUint32(2, true),
      timestamp: Number(view.getBigUint64(6, true)),
      sequenceId: view.getUint32(14, true),
    };
  }

  decodePayload(buffer, _type) {
    const raw = isCompressed(buffer) ? decompress(buffer) : buffer;
    return JSON.parse(textDecoder.decode(raw));
  }
}

// ---------------------------------------------------------------- payloads (as in kado_bench.py)
function toolResult4k() {
  const lines = [];
  let i = 0;
  let size = 0;
  while (size < 4400) {
    const line = `${'    '.repeat(i % 3)}result_${i} = process(item_${i}, retries=${i % 5})  # step ${i}`;
    lines.push(line);
    size += line.length + 2; // '\n' is 2 bytes in JSON
    i++;
  }
  let content = lines.join('\n');
  const make = (c) => ({ success: true, toolName: 'file_read', data: c, durationMs: 12 });
  while (JSON.stringify(make(content)).length > 4096) content = content.slice(0, -1);
  return make(content);
}

const PAYLOADS = [
  ['83 B INSTRUCTION', INSTRUCTION, { instruction: 'Summarize the failing tests in packages/orchestrator', priority: 2 }],
  ['4 KB TOOL_RESULT', TOOL_RESULT, toolResult4k()],
  ['64 KB runs', TOOL_RESULT, { data: ('a'.repeat(1000) + '0123456789' + ' '.repeat(14)).repeat(64) }],
];
const FIXED_TS = 1_700_000_000_000;

// ---------------------------------------------------------------- polywire
async function loadPolywire() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const require = createRequire(import.meta.url);
  const tries = [];
  if (process.env.POLYWIRE_KADO) tries.push(path.resolve(process.env.POLYWIRE_KADO));
  tries.push('polywire/kado', path.join(here, '..', 'bindings-node', 'lib', 'kado.js'));
  const errors = [];
  for (const spec of tries) {
    try {
      const mod = require(spec);
      return { mod, from: spec };
    } catch (e) {
      try {
        const url = spec.startsWith('/') ? pathToFileURL(spec).href : spec;
        const mod = await import(url);
        return { mod, from: spec };
      } catch (e2) {
        errors.push(`${spec}: ${String(e.message).split('\n')[0]}`);
      }
    }
  }
  return { mod: null, errors };
}

// ---------------------------------------------------------------- timing
function measure(fn, target, repeats) {
  const n = calibrate(fn, target);
  timeLoop(fn, n); // warm-up at full length: lets the JIT settle before the timed repeats
  const runs = [];
  for (let r = 0; r < repeats; r++) runs.push(timeLoop(fn, n) / n);
  runs.sort((a, b) => a - b);
  const mid = runs.length >> 1;
  const median = runs.length % 2 ? runs[mid] : (runs[mid - 1] + runs[mid]) / 2;
  return [median, runs[0]];
}

const fmtOps = (s) => Math.round(1 / s).toLocaleString('en-US');
const fmtUs = (s) => (s * 1e6 < 100 ? (s * 1e6).toFixed(2) : Math.round(s * 1e6).toLocaleString('en-US'));

function sameBytes(a, b) {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

function assert(cond, msg) {
  if (!cond) {
    console.error('CHECK FAILED: ' + msg);
    process.exit(1);
  }
}

async function main() {
  const argv = process.argv.slice(2);
  let target = 0.15;
  let repeats = 7;
  if (argv.includes('--quick')) [target, repeats] = [0.03, 3];

  console.log(`# Kado frames: encode+decode, Node ${process.version} on ${os.arch()}\n`);
  const upEnc = new UpstreamEncoder();
  const upDec = new UpstreamDecoder();
  const contenders = [
    ['upstream-style', (t, d, s, ts) => upEnc.encode(t, d, s, ts), (b) => upDec.decode(b)],
  ];

  const pw = await loadPolywire();
  if (pw.mod) {
    const m = pw.mod.default && !pw.mod.TOONEncoder ? pw.mod.default : pw.mod;
    const enc = new m.TOONEncoder();
    const D = m.TOONDecoder;
    const dec = typeof D.decode === 'function' ? D : new D();
    console.log(`- polywire from ${pw.from}`);
    contenders.push([
      'polywire',
      (t, d, s, ts) => (ts === undefined ? enc.encode(t, d, s) : enc.encode(t, d, s, ts)),
      (b) => dec.decode(b),
    ]);
  } else {
    console.log(`- polywire not loadable, skipped (${pw.errors.join('; ')})`);
  }

  // ---- checks before timing
  for (const [label, type, payload] of PAYLOADS) {
    const want = JSON.stringify(payload);
    const expect = upEnc.encode(type, payload, 7, FIXED_TS);
    const frames = {};
    for (const [name, enc, dec] of contenders) {
      const f = enc(type, payload, 7, FIXED_TS);
      frames[name] = f;
      const m = dec(f);
      assert(JSON.stringify(m.payload) === want, `${name}: decode(encode(x)) != x for ${label}`);
      assert(m.header.sequenceId === 7 && m.header.timestamp === FIXED_TS && m.header.type === type,
        `${name}: header ${JSON.stringify(m.header)} for ${label}`);
    }
    if (frames.polywire) {
      assert(sameBytes(frames.polywire, expect), `polywire bytes differ from upstream-style bytes for ${label}`);
      const pdec = contenders[1][2];
      assert(JSON.stringify(pdec(expect).payload) === want, `polywire cannot decode the upstream frame for ${label}`);
      assert(JSON.stringify(upDec.decode(frames.polywire).payload) === want, `upstream cannot decode polywire's frame for ${label}`);
    }
    const compressed = expect[HEADER_SIZE] === MAGIC_COMPRESSED;
    console.log(`- ${label}: JSON ${textEncoder.encode(want).length} B, frame ${expect.length} B${compressed ? ' (RLE-compressed)' : ''}; all contenders agree`);
  }
  console.log('');

  // ---- timing: the timestamp comes from the clock, as in real use
  const results = new Map();
  for (const [label, type, payload] of PAYLOADS) {
    for (const [name, enc, dec] of contenders) {
      const frame = enc(type, payload, 7);
      const rt = measure(() => dec(enc(type, payload, 7)), target, repeats);
      const e = measure(() => enc(type, payload, 7), target / 2, repeats);
      const d = measure(() => dec(frame), target / 2, repeats);
      results.set(`${label}|${name}`, [rt, e, d]);
    }
  }

  console.log('| payload | contender | encode+decode ops/s (median) | best ops/s | encode µs | decode µs | vs upstream-style |');
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const [label] of PAYLOADS) {
    const base = results.get(`${label}|upstream-style`)[0][0];
    for (const [name] of contenders) {
      const [[med, best], [emed], [dmed]] = results.get(`${label}|${name}`);
      console.log(`| ${label} | ${name} | ${fmtOps(med)} | ${fmtOps(best)} | ${fmtUs(emed)} | ${fmtUs(dmed)} | ${(base / med).toFixed(2)}x |`);
    }
  }
  console.log(`\nTiming: median of ${repeats} repeats of about ${target} s each (encode/decode columns: half that); ratios are ops/s relative to upstream-style in the same run (higher is faster).`);
}

main();
