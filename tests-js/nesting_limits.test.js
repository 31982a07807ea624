'use strict'
// One nesting limit and one code per format, in Node as in Python
// (vectors/nesting_limits.json, also run by tests-py/test_nesting_limits.py):
// each encoder accepts a value nested exactly `max` levels deep and its
// decoder reads it back; one level more fails in the encoder with
// `encode_code`, and the decoder refuses that deeper document, built by hand,
// with `decode_code`. So no encoder writes what a decoder refuses.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')

const kado = require('polywire/kado')
const toon = require('polywire/toon')
const tether = require('polywire/tether')
const axon = require('polywire/axon')
const kameo = require('polywire/kameo')
const { PolywireError } = require('polywire')

const LIMITS = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'vectors', 'nesting_limits.json'), 'utf8')).formats
const LOCAL = 'ed25519.' + 'a'.repeat(32)
const REMOTE = 'ed25519.' + 'b'.repeat(32)

const arrays = (n) => {
  let v = 1
  for (let i = 0; i < n; i++) v = [v]
  return v
}
const objects = (n) => {
  let v = 1
  for (let i = 0; i < n; i++) v = { a: v }
  return v
}
// [levels, leaf] of arrays(n) or objects(n), walked without recursion.
function shape(v) {
  let n = 0
  while (v !== null && typeof v === 'object') {
    const items = Array.isArray(v) ? v : Object.values(v)
    assert.equal(items.length, 1)
    v = items[0]
    n++
  }
  return [n, v]
}
const jsonArrays = (n) => '['.repeat(n) + '1' + ']'.repeat(n)
const toonObjects = (n) => [...Array.from({ length: n - 1 }, (_, i) => '  '.repeat(i) + 'a:'), '  '.repeat(n - 1) + 'a: 1'].join('\n')
const envelope = (n) => axon.envelope(LOCAL, REMOTE, 'query', { question: 'q', extra: arrays(n) }, { ts: 1000 })
const enc = new kado.TOONEncoder()
const dec = new kado.TOONDecoder()
function kadoFrame(payload) {
  const body = Buffer.from(payload)
  return Buffer.concat([enc.encodeHeader({ version: 1, type: 1, payloadLength: body.length, sequenceId: 0, timestamp: 0 }), body])
}

// format -> [make a value n deep, encode, decode, the encoding of a value n deep by hand]
const CASES = {
  kado: [arrays, (v) => enc.encode(1, v, 1, 0), (b) => dec.decode(b).payload, (n) => kadoFrame(jsonArrays(n))],
  toon: [objects, (v) => toon.encode(v), (t) => toon.decode(t), toonObjects],
  tether: [arrays, (v) => tether.encode(v), (b) => tether.decode(b), (n) => tether.encode(arrays(n), { maxDepth: n })],
  axon: [
    envelope,
    (v) => axon.encode(v),
    (b) => axon.decode(b).payload.extra,
    (n) => Buffer.from(axon.encode(envelope(n - 1)).toString().replace(jsonArrays(n - 1), jsonArrays(n))),
  ],
  kameo: [arrays, (v) => kameo.pack(v), (b) => kameo.unpack(b), (n) => Buffer.concat([Buffer.alloc(n, 0x91), Buffer.from([1])])],
}

function codeOf(f) {
  try {
    f()
  } catch (e) {
    assert.ok(e instanceof PolywireError, `${e}`)
    return e.code
  }
  assert.fail('no error')
}

for (const limit of LIMITS) {
  test(`${limit.format}: the encoder and the decoder share the limit of ${limit.max} levels`, () => {
    const [make, encode, decode, byHand] = CASES[limit.format]
    const n = limit.max
    assert.deepEqual(shape(decode(encode(make(n)))), [n, 1])
    assert.equal(codeOf(() => encode(make(n + 1))), limit.encode_code)
    assert.equal(codeOf(() => decode(byHand(n + 1))), limit.decode_code)
  })
}

test('the hand-built encodings are what the encoders write', () => {
  assert.equal(toon.encode(objects(5)), toonObjects(5))
  assert.deepEqual(dec.decode(kadoFrame(jsonArrays(5))).payload, arrays(5))
  assert.deepEqual(kameo.unpack(Buffer.concat([Buffer.alloc(5, 0x91), Buffer.from([1])])), arrays(5))
})

test('every format of the table is checked', () => {
  assert.deepEqual(LIMITS.map((l) => l.format).sort(), Object.keys(CASES).sort())
})
