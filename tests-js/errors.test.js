'use strict'
// `err instanceof PolywireError` holds for every error polywire throws: each
// format's class, ToonDecodeError (a SyntaxError, as the reference's is) and
// the coded TypeError/RangeError of a bad argument; and not for others.
const test = require('node:test')
const assert = require('node:assert/strict')

const { PolywireError } = require('polywire')
const kado = require('polywire/kado')
const toon = require('polywire/toon')
const tether = require('polywire/tether')
const axon = require('polywire/axon')
const kameo = require('polywire/kameo')

function thrown(f) {
  try {
    f()
  } catch (e) {
    return e
  }
  assert.fail('expected a throw')
}

const cycle = []
cycle.push(cycle)

const CASES = [
  ['KadoError', () => new kado.TOONDecoder().decode(new Uint8Array(3)), kado.KadoError],
  ['KadoError (RLE)', () => kado.decompress(Uint8Array.from([0x5a, 0xff])), kado.KadoError],
  ['ToonDecodeError', () => toon.decode('a[2]: 1'), toon.ToonDecodeError, SyntaxError],
  ['ToonEncodeError', () => toon.encode(cycle), toon.ToonEncodeError],
  ['TetherError', () => tether.decode(Uint8Array.from([0x20, 0, 0, 0x99])), tether.TetherError],
  ['AxonError', () => axon.decode('{"v": 1}'), axon.AxonError],
  ['KameoError', () => kameo.unpack(Uint8Array.from([0xc1])), kameo.KameoError],
  ['Kado argument', () => new kado.TOONEncoder().encode(2, {}, -1), RangeError],
  ['Kado argument type', () => new kado.TOONEncoder().encode(2, {}, 'seven'), TypeError],
  ['TOON option', () => toon.encode({}, { indent: -1 }), RangeError],
  ['Kameo argument', () => kameo.duration('1s'), TypeError],
]

for (const [name, f, ...classes] of CASES) {
  test(`${name} is a PolywireError with a code`, () => {
    const e = thrown(f)
    for (const C of classes) assert.ok(e instanceof C, `${name}: instanceof ${C.name}`)
    assert.ok(e instanceof PolywireError, `${name}: instanceof PolywireError`)
    assert.equal(typeof e.code, 'string', name)
    assert.match(e.code, /^[A-Za-z]+_[A-Za-z0-9_]+$/, name)
  })
}

test('errors that are not polywire\'s are not PolywireErrors', () => {
  for (const e of [new Error('x'), new TypeError('x'), new SyntaxError('x'), Object.assign(new RangeError('x'), { code: 'X_Y' })]) {
    assert.equal(e instanceof PolywireError, false)
  }
  for (const v of [null, undefined, 1, 'x', {}, Object.create(null)]) assert.equal(v instanceof PolywireError, false)
  // The subclasses keep the ordinary test: a KadoError is no TetherError.
  const k = thrown(() => new kado.TOONDecoder().decode(new Uint8Array(3)))
  assert.equal(k instanceof tether.TetherError, false)
  assert.equal(thrown(() => toon.decode('a[2]: 1')) instanceof kado.KadoError, false)
})
