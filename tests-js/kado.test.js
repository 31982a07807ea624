'use strict'
// polywire/kado against the shared vectors (bytes made by the upstream
// TypeScript and Python code), plus the drop-in API, errors and streaming.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')

const kado = require('polywire/kado')
const { TOONEncoder, TOONDecoder, FrameDecoder, MessageType, KadoError, PolywireError } = kado

const V = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'vectors', 'kado.json'), 'utf8'))
const hex = (s) => Buffer.from(s, 'hex')
const enc = new TOONEncoder()
const dec = new TOONDecoder()

function payloadOf(v) {
  const gen = v.payload_gen
  if (!gen) return [v.payload, v.decoded]
  if (gen.kind === 'repeat') {
    const value = { [gen.key]: gen.unit.repeat(gen.count) }
    return [value, value]
  }
  if (gen.kind === 'nested_arrays') {
    const value = JSON.parse('['.repeat(gen.depth) + ']'.repeat(gen.depth))
    return [value, value]
  }
  throw new Error(gen.kind)
}

test('encode is byte-identical to the upstream TypeScript encoder', () => {
  for (const v of V.frames) {
    const [input, decoded] = payloadOf(v)
    const frame = enc.encode(v.type, input, v.sequence_id, v.timestamp)
    assert.equal(frame.toString('hex'), v.frame, v.name)
    assert.equal(kado.isCompressed(frame.subarray(18)), v.compressed, v.name)
    const msg = dec.decode(hex(v.frame))
    assert.deepEqual(msg.payload, decoded, v.name)
    assert.deepEqual(msg.header, {
      version: 1,
      type: v.type,
      payloadLength: frame.length - 18,
      timestamp: v.timestamp,
      sequenceId: v.sequence_id,
    })
  }
})

test('frames written by the upstream Python encoder decode', () => {
  for (const v of V.python_frames) {
    const msg = dec.decode(hex(v.frame))
    // NaN and Infinity tokens become null, what JSON.stringify writes for them.
    assert.deepEqual(msg.payload, v.payload, v.name)
  }
})

test('RLE matches upstream compress/decompress', () => {
  for (const v of V.rle) {
    assert.equal(Buffer.from(kado.compress(hex(v.input))).toString('hex'), v.compressed, v.name)
    assert.equal(Buffer.from(kado.decompress(hex(v.compressed))).toString('hex'), v.input, v.name)
  }
})

test('error vectors throw KadoError with code and offset', () => {
  for (const v of V.errors) {
    assert.throws(() => dec.decode(hex(v.frame)), (e) => {
      assert.ok(e instanceof KadoError && e instanceof PolywireError && e instanceof Error, v.name)
      assert.equal(e.code, v.code, `${v.name}: ${e.message}`)
      assert.equal(e.offset, v.offset, `${v.name}: ${e.message}`)
      return true
    })
    assert.equal(dec.validate(hex(v.frame)), ['KADO_TRUNCATED_HEADER', 'KADO_UNSUPPORTED_VERSION', 'KADO_UNKNOWN_TYPE', 'KADO_TRUNCATED_PAYLOAD'].includes(v.code) ? false : true, v.name)
  }
  for (const v of V.rle_errors) {
    assert.throws(() => kado.decompress(hex(v.input)), (e) => e.code === v.code && e.offset === v.offset, v.name)
  }
})

test('module shape of the orchestrator src/toon', () => {
  assert.equal(kado.TOON_VERSION, 1)
  assert.equal(kado.HEADER_SIZE, 18)
  assert.equal(kado.COMPRESSION_THRESHOLD, 1024)
  assert.equal(MessageType.TOOL_CALL, 2)
  assert.equal(MessageType[2], 'TOOL_CALL')
  const f = TOONEncoder.encodeToolCall('file_read', { path: 'a.ts' }, 5)
  assert.deepEqual(dec.decode(f).payload, { toolName: 'file_read', args: { path: 'a.ts' } })
  assert.deepEqual(dec.decode(TOONEncoder.encodeInstruction('go', 1)).payload, { instruction: 'go' })
  assert.deepEqual(dec.decode(TOONEncoder.encodeStatus('busy', 0.5, 2)).payload, { status: 'busy', progress: 0.5 })
  const header = { version: 1, type: MessageType.STATUS, payloadLength: 3, timestamp: 1234, sequenceId: 9 }
  const hb = enc.encodeHeader(header)
  assert.equal(hb.length, 18)
  assert.deepEqual(dec.decodeHeader(hb), header)
  assert.deepEqual(Buffer.from(enc.encodePayload({ a: [1, 'é'] })).toString(), '{"a":[1,"é"]}')
  const big = { data: 'q'.repeat(3000) }
  const wire = enc.encode(3, big, 1, 0).subarray(18)
  assert.ok(kado.isCompressed(wire))
  assert.deepEqual(dec.decodePayload(wire, 3), big)
  assert.equal(dec.decodeRaw(enc.encode(3, big, 1, 0)).payload.toString(), JSON.stringify(big))
})

test('inputs: Uint8Array, Buffer, ArrayBuffer; trailing bytes ignored', () => {
  const f = enc.encode(1, { instruction: 'x' }, 1, 0)
  const copy = new Uint8Array(f)
  for (const b of [f, copy, copy.buffer, Buffer.concat([f, Buffer.from('tail')])]) {
    assert.deepEqual(dec.decode(b).payload, { instruction: 'x' })
  }
  assert.throws(() => dec.decode('nope'), TypeError)
})

test('encode errors', () => {
  assert.throws(() => enc.encode(9, {}, 1), (e) => e instanceof KadoError && e.code === 'KADO_UNKNOWN_TYPE')
  assert.throws(() => enc.encode(1, undefined, 1), (e) => e.code === 'KADO_UNSERIALIZABLE')
  assert.throws(() => enc.encodeHeader({ version: 2, type: 1, payloadLength: 0, timestamp: 0, sequenceId: 0 }), (e) => e.code === 'KADO_UNSUPPORTED_VERSION')
  assert.throws(() => enc.encode(1, 10n, 1), TypeError) // JSON.stringify refuses BigInt, as upstream
})

test('default timestamp is Date.now()', () => {
  const before = Date.now()
  const ts = dec.decode(enc.encode(6, {}, 1)).header.timestamp
  assert.ok(ts >= before && ts <= Date.now())
})

test('lone surrogate escapes are rejected like the other bindings', () => {
  const frame = Buffer.concat([enc.encodeHeader({ version: 1, type: 1, payloadLength: 8, timestamp: 0, sequenceId: 0 }), Buffer.from('"\\ud800"')])
  assert.throws(() => dec.decode(frame), (e) => e.code === 'KADO_INVALID_JSON' && e.offset === 19)
  // Escaped pairs (Python's ensure_ascii output) are fine.
  const pair = Buffer.concat([enc.encodeHeader({ version: 1, type: 1, payloadLength: 14, timestamp: 0, sequenceId: 0 }), Buffer.from('"\\ud83d\\ude00"')])
  assert.equal(dec.decode(pair).payload, '😀')
})

test('FrameDecoder: every vector frame, byte by byte and in chunks', () => {
  const frames = V.frames.map((v) => hex(v.frame))
  const stream = Buffer.concat(frames)
  for (const size of [1, 5, 18, 4096, stream.length]) {
    const fd = new FrameDecoder()
    const got = []
    for (let i = 0; i < stream.length; i += size) got.push(...fd.feed(stream.subarray(i, i + size)))
    fd.finish()
    assert.equal(got.length, frames.length)
    assert.deepEqual(got.map((m) => m.header.sequenceId), V.frames.map((v) => v.sequence_id))
    assert.deepEqual(got[0].payload, V.frames[0].decoded)
  }
  const raw = new FrameDecoder({ raw: true }).feed(stream)
  assert.deepEqual(raw.map((m) => Buffer.from(m.payload).toString('hex')), frames.map((f) => Buffer.from(dec.decodeRaw(f).payload).toString('hex')))
})

test('FrameDecoder: size limit from the header, sticky errors', () => {
  const fd = new FrameDecoder({ maxFrameSize: 100 })
  const header = enc.encodeHeader({ version: 1, type: 1, payloadLength: 1000000, timestamp: 0, sequenceId: 1 })
  assert.throws(() => fd.feed(header), (e) => e.code === 'KADO_FRAME_TOO_LARGE')
  assert.ok(fd.buffered <= 18)
  assert.throws(() => fd.feed(enc.encode(1, {}, 1, 0)), (e) => e.code === 'KADO_FRAME_TOO_LARGE')

  const good = enc.encode(1, { a: 1 }, 1, 0)
  const bad = Buffer.from(enc.encode(1, { a: 1 }, 2, 0))
  bad[1] = 42
  const fd2 = new FrameDecoder()
  assert.deepEqual(fd2.feed(Buffer.concat([good, bad])).map((m) => m.payload), [{ a: 1 }])
  assert.throws(() => fd2.feed(new Uint8Array(0)), (e) => e.code === 'KADO_UNKNOWN_TYPE' && e.offset === good.length + 1)

  // A JSON error in a streamed frame carries its stream offset.
  const broken = Buffer.concat([enc.encodeHeader({ version: 1, type: 1, payloadLength: 3, timestamp: 0, sequenceId: 0 }), Buffer.from('{x}')])
  const fd3 = new FrameDecoder()
  assert.throws(() => fd3.feed(Buffer.concat([broken])), (e) => e.code === 'KADO_INVALID_JSON' && e.offset === 19)
  assert.throws(() => fd3.feed(good), (e) => e.code === 'KADO_INVALID_JSON')

  const fd4 = new FrameDecoder()
  fd4.feed(good.subarray(0, 10))
  assert.throws(() => fd4.finish(), (e) => e.code === 'KADO_TRUNCATED_HEADER')
})

test('ESM import works', async () => {
  const m = await import('polywire/kado')
  assert.equal(typeof m.TOONEncoder, 'function')
  assert.equal(m.MessageType.HEARTBEAT, 6)
  const root = await import('polywire')
  assert.equal(root.kado.HEADER_SIZE, 18)
})

test('property: encode/decode identity and compress/decompress identity', () => {
  let seed = 12345
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const pick = (a) => a[Math.floor(rnd() * a.length)]
  const leaf = () => pick([null, true, false, 0, -1, 1.5, 1e21, 1e-7, 'x', '', 'é\n"\\', 'a'.repeat(2000), Math.floor(rnd() * 1e15)])
  const value = (d) => {
    if (d > 3 || rnd() < 0.3) return leaf()
    if (rnd() < 0.5) return Array.from({ length: Math.floor(rnd() * 5) }, () => value(d + 1))
    const o = {}
    for (let i = 0; i < rnd() * 5; i++) o[pick(['a', 'b', '1', '10', 'key', 'é'])] = value(d + 1)
    return o
  }
  for (let i = 0; i < 500; i++) {
    const v = value(0)
    const t = 1 + (i % 8)
    const msg = dec.decode(enc.encode(t, v, i, i))
    assert.deepEqual(msg.payload, JSON.parse(JSON.stringify(v)))
    assert.equal(msg.header.type, t)
    const data = Buffer.from(Array.from({ length: Math.floor(rnd() * 3000) }, () => pick([0, 0, 0, 0xff, 7, Math.floor(rnd() * 256)])))
    const packed = kado.compress(data)
    if (!(data[0] === 0x5a && packed === data)) assert.deepEqual(Buffer.from(kado.decompress(packed)), data)
  }
})
