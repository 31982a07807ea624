'use strict'
// Property tests (fast-check) for the Node binding: JSON-like values round-trip
// through Kado and TOON; arbitrary bytes and text given to every decoder end in
// a value or an error with a polywire `code`; Tether values round-trip and
// whatever Tether decodes re-encodes to the same bytes. Short by default (a few seconds);
// a campaign: NUM_RUNS=100000 node --test tests-js/property.test.js
// (runs per property; SEED=<n> replays a run).
const test = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')

const kado = require('polywire/kado')
const toon = require('polywire/toon')
const axon = require('polywire/axon')
const kameo = require('polywire/kameo')
const tether = require('polywire/tether')

const NUM_RUNS = Number(process.env.NUM_RUNS || 300)
const params = { numRuns: NUM_RUNS, ...(process.env.SEED ? { seed: Number(process.env.SEED) } : {}) }
const counts = {}
function check(name, prop) {
  fc.assert(prop, params)
  counts[name] = NUM_RUNS
}
test.after(() => {
  if (process.env.NUM_RUNS) {
    const total = Object.values(counts).reduce((a, b) => a + b, 0)
    process.stdout.write(`# fast-check: ${Object.keys(counts).length} properties, ${total} cases\n`)
  }
})

const POLYWIRE_CODE = /^(KADO|TOON|JSON|KAMEO|TETHER)_[A-Z0-9_]+$/
function coded(f) {
  try {
    f()
    return true
  } catch (e) {
    if (e instanceof Error && typeof e.code === 'string' && (POLYWIRE_CODE.test(e.code) || axon.ERROR_CODES.includes(e.code)) && !/Failed to convert|call stack/.test(e.message)) return true
    throw e
  }
}

// What a JSON round trip makes of a value (-0 becomes 0).
const viaJson = (v) => JSON.parse(JSON.stringify(v))
const json = fc.jsonValue({ maxDepth: 6 })
const enc = new kado.TOONEncoder()
const dec = new kado.TOONDecoder()

test('kado: JSON values round-trip through encode/decode (and the stream decoder)', () => {
  check(
    'kado round trip',
    fc.property(json, fc.integer({ min: 1, max: 8 }), fc.nat(0xffffffff), fc.nat(Number.MAX_SAFE_INTEGER), (v, type, seq, ts) => {
      const frame = enc.encode(type, v, seq, ts)
      const m = dec.decode(frame)
      assert.deepStrictEqual(m.payload, viaJson(v))
      assert.deepStrictEqual([m.header.type, m.header.sequenceId, m.header.timestamp], [type, seq, ts])
      const out = new kado.FrameDecoder().feed(frame)
      assert.deepStrictEqual(out[0].payload, viaJson(v))
    }),
  )
})

test('toon: JSON values round-trip through encode/decode, with every delimiter', () => {
  check(
    'toon round trip',
    fc.property(json, fc.constantFrom(',', '\t', '|'), fc.integer({ min: 1, max: 4 }), (v, delimiter, indentSize) => {
      const text = toon.encode(v, { delimiter, indentSize })
      assert.deepStrictEqual(toon.decode(text, { indentSize }), viaJson(v))
    }),
  )
})

test('kado: arbitrary bytes, and mutated frames, to every decoder: a value or a coded error', () => {
  const frames = [enc.encode(1, { a: [1, 2, 'x'] }, 1, 0), enc.encode(3, { s: 'ab'.repeat(800) }, 2, 0)]
  const mutated = fc
    .tuple(fc.constantFrom(...frames), fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 6 }), fc.nat(2000))
    .map(([f, edits, cut]) => {
      const b = Buffer.from(f)
      for (const [i, x] of edits) b[i % b.length] = x
      return b.subarray(0, Math.max(0, b.length - (cut % 40)))
    })
  const bytes = fc.oneof(fc.uint8Array({ maxLength: 300 }), mutated)
  check(
    'kado bytes',
    fc.property(bytes, fc.nat(64), (b, split) => {
      coded(() => dec.decode(b))
      coded(() => dec.decodeRaw(b, { maxSize: 1000 }))
      coded(() => dec.decodeHeader(b))
      coded(() => dec.decodePayload(b))
      coded(() => kado.decompress(b, { maxSize: 500 }))
      dec.validate(b)
      coded(() => {
        const fd = new kado.FrameDecoder()
        fd.feed(b.subarray(0, split))
        fd.feed(b.subarray(split))
        fd.finish()
      })
    }),
  )
})

test('toon: arbitrary text to every decoder: a value or a coded error', () => {
  const line = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom('a:', '  b: 1', '- x', '[2]: 1,2', 'k[2]{a,b}:', '  1,2', '"q": "\\u0041"', '  - [1]: x', 'a.b.c: 1', '\t', ''),
  )
  const text = fc.oneof(fc.string({ maxLength: 200, unit: 'grapheme' }), fc.array(line, { maxLength: 12 }).map((ls) => ls.join('\n')))
  check(
    'toon text',
    fc.property(text, fc.boolean(), fc.constantFrom('off', 'safe'), (t, strict, expandPaths) => {
      coded(() => toon.decode(t, { strict, expandPaths }))
      coded(() => [...toon.decodeStreamSync(t.split('\n'), { strict })])
    }),
  )
})

test('axon and kameo: arbitrary bytes to every decoder: a value or a coded error', () => {
  const req = kameo.encodeRequest(kameo.ask({ sequence_id: 3, peer_id: null }, 'a', 'm', new Uint8Array([1, 2]), { mailboxTimeout: 1.5 }))
  const packed = kameo.pack({ a: [1, 'x', null], b: new Uint8Array(3), c: 2n ** 60n })
  const mutate = (base) =>
    fc.tuple(fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 4 }), fc.nat(10)).map(([edits, cut]) => {
      const b = Buffer.from(base)
      for (const [i, x] of edits) b[i % b.length] = x
      return b.subarray(0, b.length - (cut % b.length))
    })
  const bytes = fc.oneof(fc.uint8Array({ maxLength: 200 }), mutate(req), mutate(packed))
  check(
    'kameo/axon bytes',
    fc.property(bytes, (b) => {
      coded(() => kameo.decodeRequest(b))
      coded(() => kameo.decodeResponse(b))
      coded(() => kameo.unpack(b))
      coded(() => kameo.decodeRegistration(b))
      coded(() => kameo.actorIdFromBytes(b))
      coded(() => kameo.peerIdFromBytes(b))
      coded(() => kameo.parseMetadataKey(b))
      coded(() => axon.decode(b))
    }),
  )
  check(
    'axon text',
    fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
      coded(() => axon.decode(JSON.stringify(v)))
      coded(() => axon.validate(v))
      coded(() => axon.encode(v))
    }),
  )
})

test('kameo: JSON-like values round-trip through pack/unpack', () => {
  check(
    'kameo round trip',
    fc.property(fc.jsonValue({ maxDepth: 5 }), (v) => {
      // Integers beyond 2^53 - 1 come back as BigInts (kameo.js's contract).
      const out = JSON.parse(JSON.stringify(kameo.unpack(kameo.pack(v)), (k, x) => (typeof x === 'bigint' ? Number(x) : x)))
      assert.deepStrictEqual(out, viaJson(v))
    }),
  )
})

test('tether: arbitrary bytes to every decoder, and values round-trip', () => {
  const frame = tether.encode([1, 'x', new tether.TetherSymbol('at:put:'), null, true, new Uint8Array([1, 2]), [[]]])
  const mutate = fc.tuple(fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 4 }), fc.nat(12)).map(([edits, cut]) => {
    const b = Buffer.from(frame)
    for (const [i, x] of edits) b[i % b.length] = x
    return b.subarray(0, b.length - (cut % b.length))
  })
  check(
    'tether bytes',
    fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }), mutate), fc.boolean(), (b, latin1) => {
      coded(() => tether.decode(b, { latin1 }))
      coded(() => tether.decodeAnswer(b, { latin1 }))
      coded(() => tether.decodeMessageSend(b, { latin1 }))
      coded(() => tether.decodeHandshake(b))
      const text = Buffer.from(b).toString('latin1')
      coded(() => tether.fromHex(text))
      coded(() => tether.decodeResultHex(text))
      let v
      try {
        v = tether.decode(b)
      } catch {
        return
      }
      // Whatever decodes re-encodes to the same bytes (as the cargo-fuzz target checks in Rust).
      assert.deepEqual(Buffer.from(tether.encode(v)), Buffer.from(b))
    }),
  )
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.integer({ min: 0, max: tether.MAX_SMALL_INTEGER }),
      fc.boolean(),
      fc.constant(null),
      fc.string(),
      fc.string().map((s) => new tether.TetherSymbol(s)),
      fc.uint8Array({ maxLength: 16 }),
      fc.array(tie('value'), { maxLength: 4 }),
    ),
  }))
  check(
    'tether round trip',
    fc.property(value, fc.boolean(), (v, latin1) => {
      let bytes
      try {
        bytes = tether.encode(v, { latin1 })
      } catch (e) {
        // Only text with no Latin-1 form may fail, and only with latin1.
        assert.ok(latin1 && e.code === 'TETHER_UNENCODABLE_CHARACTER', `${e.code} ${e.message}`)
        return
      }
      const back = tether.decode(bytes, { latin1 })
      assert.deepEqual(Buffer.from(tether.encode(back, { latin1 })), Buffer.from(bytes))
    }),
  )
})
