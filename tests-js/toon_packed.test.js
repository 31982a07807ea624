'use strict'
// polywire/toon: the packed encode route (bindings-node/lib/toon.js `packValue`,
// bindings-node/src/toon/pack.rs) against the pinned reference
// @toon-format/toon 4.4.0: what a plain value is, the key table kept between
// calls (numbering, its cap, forgetting it after a failed call), re-entrant
// and throwing getters, numbers, strings, and malformed packed input handed
// to the native side directly (a typed error, never a crash).

const test = require('node:test')
const assert = require('node:assert/strict')

const toon = require('polywire/toon')
// The native module of the package under test (the repository's build, or an
// installed tarball's), reached past the public exports on purpose.
const native = require(require('node:path').join(require('node:path').dirname(require.resolve('polywire/package.json')), 'bindings-node', 'lib', 'native.js'))
const { rng: lcg } = require('./toon_generator.js')

const reference = () => import('@toon-format/toon')

// `{ value }` that `f` returns, or `{ error }` that it throws.
function outcome(f) {
  try {
    return { value: f() }
  } catch (error) {
    return { error }
  }
}

// Same text as the reference, or the same kind of error with the same message.
function assertLikeReference(ref, value, what, options) {
  const expected = outcome(() => ref.encode(value, options))
  const actual = outcome(() => toon.encode(value, options))
  if (expected.error) {
    assert.ok(actual.error, `${what}: the reference threw ${expected.error}, polywire gave ${JSON.stringify(actual.value)}`)
    assert.equal(actual.error.constructor.name, expected.error.constructor.name, `${what}: ${actual.error}`)
    assert.equal(actual.error.message, expected.error.message, what)
  } else {
    assert.ok(!actual.error, `${what}: polywire threw ${actual.error?.stack}`)
    assert.equal(actual.value, expected.value, what)
  }
}

test('packed: numbers are written as ECMAScript writes them', async () => {
  const ref = await reference()
  const next = lcg(7)
  const numbers = [
    0, -0, NaN, Infinity, -Infinity, 1, -1, 0.1, 0.5, 1e21, 1e-7, 1e-6, 9.999999999999999e20, 5e-324, -5e-324,
    Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53, 2 ** 53 - 1, 2 ** 53 + 2, -(2 ** 53), 2 ** 60, 2 ** 63, -(2 ** 63),
    2 ** 64, 123456789012345680000, 3540.24, 0.69, 1106.7, 68719476735.9999, 0.1 + 0.2,
  ]
  for (let i = 0; i < 3000; i++) {
    const bits = new Float64Array(new Uint32Array([(next() * 2 ** 32) >>> 0, (next() * 2 ** 32) >>> 0]).buffer)[0]
    numbers.push(bits, Math.round(next() * 2 ** 60) * (next() < 0.5 ? -1 : 1), Math.round(next() * 1e8) / 10 ** Math.floor(next() * 8))
  }
  assertLikeReference(ref, numbers, 'inline array')
  assertLikeReference(ref, { rows: numbers.map((n, i) => ({ i, n })) }, 'table')
  for (const n of numbers.slice(0, 40)) assertLikeReference(ref, n, `root ${n}`)
})

test('packed: strings and keys, ASCII or not, and index-like keys', async () => {
  const ref = await reference()
  const values = [
    '', ' padded ', 'true', 'null', '-5', '05', '1e3', 'a,b', 'a|b', 'a\tb', 'a:b', '"q"', '[x]', '{y}', '# c', '- item',
    'line\nbreak', '\u0000\u001f', 'é', '日本語', '🎓 emoji', '\ufeffbom', 'x'.repeat(5000), 'é'.repeat(3000),
  ]
  const keys = ['a', '', '0', '10', '01', '-1', '1.5', 'with space', 'a.b', '__proto__', 'constructor', 'é', '🎓', 'k'.repeat(64), 'k'.repeat(65), 'é'.repeat(70)]
  const obj = {}
  for (const [i, k] of keys.entries()) Object.defineProperty(obj, k, { value: values[i % values.length], enumerable: true, writable: true, configurable: true })
  assertLikeReference(ref, obj, 'keys')
  assertLikeReference(ref, values, 'values')
  assertLikeReference(ref, keys.map((k) => ({ [k]: 1, other: k })), 'key per row')
  assertLikeReference(ref, JSON.parse('{"__proto__": {"x": 1}, "a": [{"__proto__": 1, "b": 2}, {"__proto__": 3, "b": 4}]}'), '__proto__ keys')
  for (const delimiter of [',', '\t', '|']) assertLikeReference(ref, { rows: values.map((v) => ({ v, w: 1 })) }, `delimiter ${JSON.stringify(delimiter)}`, { delimiter })
})

test('packed: long strings with wide characters go apart, the rest as Latin-1 where it can', async () => {
  // toon.js sends strings of 64 units or more that hold a character beyond
  // U+00FF as a second text, and the rest as Latin-1 when none of it has one.
  const ref = await reference()
  const long = (s, n = 70) => s.repeat(Math.ceil(n / s.length)).slice(0, n)
  const wide = [long('日本語 '), long('a') + '🎓', '🎓' + long('b, c'), long('é') + 'Ā', long('x', 63) + '日', long('"q" 🎓 ,|\t')]
  const narrow = [long('é'), long('plain text, with commas'), long('ÿ'), 'x'.repeat(64), 'short é', '']
  const shortWide = ['日', '🎓 x']
  const sets = {
    'wide and narrow': [...wide, ...narrow],
    'narrow only': narrow,
    'wide only': wide,
    'short wide too': [...wide, ...narrow, ...shortWide],
  }
  for (const [name, strings] of Object.entries(sets)) {
    assertLikeReference(ref, strings, `${name}: array`)
    assertLikeReference(ref, { list: strings.map((s, i) => ({ i, s, t: strings[strings.length - 1 - i] })) }, `${name}: table`)
    assertLikeReference(ref, Object.fromEntries(strings.map((s, i) => [`k${i}`, s])), `${name}: object`)
    assertLikeReference(ref, { nested: strings.map((s) => ({ s, more: [s, { s }] })) }, `${name}: nested`)
    for (const delimiter of ['\t', '|']) assertLikeReference(ref, { list: strings.map((s) => ({ s, n: 1 })) }, `${name}: ${JSON.stringify(delimiter)}`, { delimiter })
  }
  // A lone surrogate in a long string: the reference's TypeError, and the next call is fine.
  for (const value of [{ a: long('日') + '\ud800' }, { rows: [{ s: long('x') + '\udc00🎓' }, { s: 'ok' }] }]) {
    assertLikeReference(ref, value, 'lone surrogate in a wide string')
    assertLikeReference(ref, { after: wide }, 'after the lone surrogate')
  }
})

test('packed: the key table stays in step across calls, past its cap', async () => {
  const ref = await reference()
  const next = lcg(11)
  // Well over 4096 distinct keys, met again and again, in changing orders,
  // in objects with more keys than a key cache holds (it grows from 8 to 64).
  for (let doc = 0; doc < 400; doc++) {
    const value = {}
    const n = 1 + Math.floor(next() * 90)
    for (let i = 0; i < n; i++) {
      const key = next() < 0.5 ? `k${Math.floor(next() * 6000)}` : ['id', 'name', 'x', 'y', 'nested'][Math.floor(next() * 5)]
      value[key] = next() < 0.2 ? { [key]: i, id: doc } : next() < 0.5 ? [{ id: i, [key]: 'v' }, { id: i + 1, [key]: 'w' }] : i
    }
    assertLikeReference(ref, value, `doc ${doc}`)
  }
})

class Point {
  constructor(x, y) {
    this.x = x
    this.y = y
  }
}

test('packed: a value that is not plain halfway leaves the table in step', async () => {
  const ref = await reference()
  const notPlain = [
    new Date(0),
    10n,
    2n ** 70n,
    undefined,
    () => 1,
    Symbol('s'),
    new Point(1, 2),
    new Map([[1, 'a']]),
    new Set([1, 2]),
    { toJSON: () => 'via toJSON' },
    { toJSON: 'not a function', a: 1 },
    { toJSON: undefined, a: 1 },
    Object.defineProperty({ a: 1 }, 'toJSON', { value: () => 'hidden', enumerable: false }),
    Object.defineProperty([1, 2], 'toJSON', { value: () => 'array', enumerable: false }),
    Object.assign(Object.create(null), { a: 1, b: [1, 2] }),
  ]
  for (const [i, bad] of notPlain.entries()) {
    // New keys first, then the value that sends the walk to the JSON route,
    // then the same keys again in a plain value.
    const fresh = `fresh${i}`
    assertLikeReference(ref, { [fresh]: 1, [`${fresh}b`]: { deep: [{ [fresh]: 2 }] }, bad, after: [undefined, null] }, `not plain ${i}`)
    assertLikeReference(ref, { [`${fresh}b`]: 3, [fresh]: { [fresh]: 4 } }, `after ${i}`)
    assertLikeReference(ref, [bad, { [fresh]: 5 }], `in array ${i}`)
  }
  // Holes and what JSON.stringify writes as null in arrays.
  // eslint-disable-next-line no-sparse-arrays
  assertLikeReference(ref, { a: [1, , 3], b: [undefined, () => 1, Symbol('x')] }, 'holes')
})

test('packed: lone surrogates fail as in the reference, and the table stays in step', async () => {
  const ref = await reference()
  for (const [i, value] of [{ a: 'x\ud800y' }, { ['k\udc00']: 1 }, ['ok', '\udbff'], { b: [{ c: 'x\udfff' }] }].entries()) {
    assertLikeReference(ref, { [`new${i}`]: 1, value }, `lone ${i}`)
    assertLikeReference(ref, { [`new${i}`]: 2, ok: '\ud83c\udf93' }, `after lone ${i}`)
  }
})

test('packed: getters that throw or encode again', async () => {
  const ref = await reference()
  const boom = new Error('boom')
  const throwing = { first: 1, get second() { throw boom } }
  assert.throws(() => toon.encode({ newKey1: 1, inner: throwing }), (e) => e === boom)
  assertLikeReference(ref, { newKey1: 2, inner: { first: 3, second: 4 } }, 'after a throwing getter')
  // A getter that encodes while the outer value is being walked.
  const inner = { z: [1, 2], w: { v: 'x' } }
  const outer = (encode) => ({ a: 1, get b() { return encode(inner) }, c: [{ d: 1, e: 2 }, { d: 3, e: 4 }] })
  assert.equal(toon.encode(outer(toon.encode)), ref.encode(outer(ref.encode)))
  assertLikeReference(ref, { a: 1, b: 'x', c: [{ d: 1, e: 2 }], z: [1] }, 'after re-entry')
})

test('packed: keys inherited from a polluted Object.prototype are not written', async () => {
  const ref = await reference()
  Object.prototype.polluted = 'yes' // eslint-disable-line no-extend-native
  try {
    assertLikeReference(ref, { a: 1, b: { c: 2 } }, 'polluted')
  } finally {
    delete Object.prototype.polluted
  }
  assertLikeReference(ref, { a: 1, b: { c: 2 } }, 'clean again')
})

test('packed: deep values and options', async () => {
  const ref = await reference()
  let deep = 1
  for (let i = 0; i < 1100; i++) deep = { d: deep }
  // The reference has no limit; polywire stops at MAX_DEPTH (a stack bound).
  assert.throws(() => toon.encode(deep), (e) => e.code === 'TOON_TOO_DEEP')
  assertLikeReference(ref, { after: { deep: 1 } }, 'after too deep')
  let ok = 1
  for (let i = 0; i < 900; i++) ok = [ok]
  assertLikeReference(ref, { ok }, 'deep arrays')
  const value = { a: { b: { c: [1, 2] } }, rows: [{ x: 1, y: { z: 2 } }, { x: 3, y: { z: 4 } }] }
  for (const options of [{ indent: 4 }, { indentSize: 3 }, { delimiter: '|' }, { delimiter: '\t', indent: 1 }]) {
    assertLikeReference(ref, value, JSON.stringify(options), options)
  }
  // Key folding (a v3 feature the 4.4 reference no longer has) is polywire's own.
  assert.equal(toon.encode(value, { keyFolding: 'safe' }), 'a.b.c[2]: 1,2\nrows[2]{x,y{z}}:\n  1,2\n  3,4')
  assert.equal(toon.encode(value, { keyFolding: 'safe', flattenDepth: 2 }), 'a.b:\n  c[2]: 1,2\nrows[2]{x,y{z}}:\n  1,2\n  3,4')
})

// A typed error (not a crash, not a hang) for packed input that the walk in
// toon.js never makes.
function assertTypedError(f, what) {
  try {
    f()
  } catch (e) {
    assert.ok(['TOON_PACKED', 'TOON_TOO_DEEP', 'JSON_LONE_SURROGATE', 'TOON_INVALID_ARGUMENT', 'TOON_PACK_STALE'].includes(e.code), `${what}: ${e.code} ${e.message}`)
    return e
  }
  return null
}

test('packed: arrays of rows of one shape, and arrays that turn out not to be', async () => {
  const ref = await reference()
  // Rows read as a table (pack.rs `table`) unless some row differs; each
  // case with fresh keys (new to the key table in the first row, so a row
  // that differs later takes them back) and then again with known keys.
  const shapes = (k) => {
    const [a, b, c] = [`${k}a`, `${k}b`, `${k}c`]
    const row = (i) => ({ [a]: i, [b]: `s${i}`, [c]: i % 2 === 0 })
    return {
      table: [row(1), row(2), row(3)],
      one: [row(1)],
      lastDiffersInOrder: [row(1), row(2), { [b]: 's', [a]: 1, [c]: true }],
      lastHasMore: [row(1), row(2), { ...row(3), [`${k}d`]: null }],
      lastHasFewer: [row(1), { [a]: 1, [b]: 'x' }],
      lastHasObject: [row(1), row(2), { ...row(3), [c]: { x: 1 } }],
      lastHasArray: [row(1), { ...row(2), [b]: [1, 2] }],
      lastHasEmpty: [row(1), { ...row(2), [b]: {} }],
      newKeyInLast: [row(1), { [a]: 1, [b]: 'x', [`${k}new`]: 2 }],
      lastNotObject: [row(1), row(2), 3],
      firstHasObject: [{ ...row(1), [c]: { x: 1 } }, row(2)],
      emptyRows: [{}, {}],
      indexKeys: [{ 1: 'a', [a]: 2 }, { 1: 'b', [a]: 3 }],
      nullsAndStrings: [{ [a]: null, [b]: '' }, { [a]: 'null', [b]: 'a,b' }, { [a]: ' pad ', [b]: '-1' }],
      wide: [Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`${k}w${i}`, i])), Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`${k}w${i}`, -i]))],
      inList: [[row(1), row(2)], [row(3)]],
      firstFieldOfItem: [{ [a]: [row(1), row(2)], [b]: 1 }, 'x'],
      nestedInRow: [{ [a]: 1, [b]: { [c]: 2 } }, { [a]: 3, [b]: { [c]: 4 } }],
      // Field groups (read as tables too) and rows that turn out to differ.
      groups: [{ [a]: 1, [b]: { [c]: 'x', d: { e: null, f: true } } }, { [a]: 2.5, [b]: { [c]: 'y,z', d: { e: 'é', f: false } } }],
      groupsLastDiffersInside: [{ [a]: 1, [b]: { [c]: 2, d: 3 } }, { [a]: 1, [b]: { [c]: 2, e: 3 } }],
      groupsLastHasMoreInside: [{ [a]: 1, [b]: { [c]: 2 } }, { [a]: 1, [b]: { [c]: 2, d: 3 } }],
      groupsLastOrderInside: [{ [a]: 1, [b]: { [c]: 2, d: 3 } }, { [a]: 1, [b]: { d: 3, [c]: 2 } }],
      groupsLastHasEmpty: [{ [a]: 1, [b]: { [c]: 2 } }, { [a]: 1, [b]: {} }],
      groupsLastHasArray: [{ [a]: 1, [b]: { [c]: 2 } }, { [a]: 1, [b]: { [c]: [2] } }],
      groupsLastHasPrimitive: [{ [a]: 1, [b]: { [c]: 2 } }, { [a]: 1, [b]: 2 }],
      groupsFirstHasPrimitive: [{ [a]: 1, [b]: 2 }, { [a]: 1, [b]: { [c]: 2 } }],
      groupsEmptyFirst: [{ [a]: 1, [b]: {} }, { [a]: 1, [b]: {} }],
      groupsIndexKey: [{ [a]: 1, [b]: { 7: 2 } }, { [a]: 1, [b]: { 7: 3 } }],
      groupsLongKey: [{ [a]: { ['k'.repeat(80)]: 1 } }, { [a]: { ['k'.repeat(80)]: 2 } }],
      groupsDeep: [0, 1].map((i) => ({ [a]: i, [b]: JSON.parse('{"g":'.repeat(12) + i + '}'.repeat(12)) })),
      groupsWide: [0, 1].map((i) => ({ [a]: Object.fromEntries(Array.from({ length: 40 }, (_, j) => [`w${j}`, i])), [b]: Object.fromEntries(Array.from({ length: 40 }, (_, j) => [`v${j}`, -i])) })),
      keyed: { x: row(1), y: row(2) },
    }
  }
  for (let round = 0; round < 3; round++) {
    for (const [name, value] of Object.entries(shapes(`r${round}`))) {
      for (const options of [undefined, { delimiter: '|' }, { delimiter: '\t', indentSize: 4 }]) {
        for (const again of [1, 2]) {
          const wrapped = { [`outer${round}`]: { list: value }, after: value, tail: [{ r: round }, { r: again }] }
          assertLikeReference(ref, value, `${name} round ${round} call ${again} ${JSON.stringify(options)}`, options)
          assertLikeReference(ref, wrapped, `${name} wrapped round ${round} call ${again} ${JSON.stringify(options)}`, options)
        }
      }
    }
  }
})

test('packed: a table nested near the depth limit, whose rows the encoder walks after all', async () => {
  // Read as a table, its rows written ahead; near the limit the encoder
  // does not write it as a table and walks its rows instead, and the value
  // is then read again without tables (pack.rs `TABLE_UNREAD`).
  const ref = await reference()
  // ASCII text; Latin-1 text; and a long string with a wide character (its own text).
  const rowSets = [
    [{ x: 1, y: 'a b' }, { x: 2.5, y: '' }, { x: null, y: 'c' }],
    [{ x: 1, y: 'é' }, { x: true, y: 'ü, ö' }],
    [{ x: 1, y: '日本語'.repeat(30) }, { x: 2, y: 'x' }, { x: 3, y: '🎓'.repeat(40) }],
  ]
  let tested = 0
  for (let depth = 1010; depth < 1030; depth++) {
    for (const rows of rowSets) {
      let value = { t: rows, n: [rows, rows] }
      for (let i = 0; i < depth; i++) value = { d: value }
      const expected = outcome(() => ref.encode(value))
      const actual = outcome(() => toon.encode(value))
      if (actual.error) {
        assert.equal(actual.error.code, 'TOON_TOO_DEEP', `depth ${depth}: ${actual.error.stack}`)
        continue
      }
      assert.equal(actual.value, expected.value, `depth ${depth}`)
      assert.equal(toon.encode({ after: rows }), ref.encode({ after: rows }), `after depth ${depth}`)
      tested++
    }
  }
  assert.ok(tested >= 20, `${tested} encoded`)
})

test('packed: malformed packed input gives a typed error', () => {
  const state = native.toonPackState()
  const encode = (...args) => native.toonPackEncode(state, ...args)
  // Ops with each number inline after its number op, as the walk writes
  // them: an op is an int32 in its slot's first half (`op()` marks them),
  // a number a double.
  const call = (slots, text, reset = false) => {
    const b = new Float64Array(slots.length)
    const w = new Int32Array(b.buffer)
    slots.forEach((x, i) => {
      if (typeof x === 'object') {
        b[i] = 12345.678 // stale bytes in the other half
        w[2 * i] = x.op
      } else b[i] = x
    })
    return encode(b, slots.length, text, reset, 2, 44, false, Infinity, wideText, oneByte)
  }
  let wideText
  let oneByte
  const op = (tag, payload = 0) => ({ op: payload * 16 + tag })
  // Well-formed: {"a": [1, "x"]} with a new key, then the key by id.
  assert.equal(call([op(6, 1), op(7, 1), op(5, 2), op(3), 1, op(4, 1)], 'ax', true), 'a[2]: 1,x')
  assert.equal(call([op(6, 1), op(8, 0), op(2)], ''), 'a: true')
  // A number slot may hold any double, an op slot only an op.
  assert.equal(call([op(5, 3), op(3), -0.5, op(3), NaN, op(3), 2 ** 40 + 0.5], ''), '[3]: -0.5,null,1099511627776.5')
  const cases = {
    'ops end early': [[op(5, 3), op(0)], ''],
    'count beyond the ops': [[op(5, 2 ** 26)], ''],
    'object count beyond the ops': [[op(6, 1), op(8, 0)], ''],
    'unknown key id': [[op(6, 1), op(8, 999), op(0)], ''],
    'negative op': [[{ op: -16 }], ''],
    'op beyond int32': [[{ op: 2 ** 31 + 3 }], ''],
    'unknown tag': [[op(15)], ''],
    'key where a value goes': [[op(7, 1)], 'a'],
    'value where a key goes': [[op(6, 1), op(0), op(0)], ''],
    'number missing': [[op(3)], ''],
    'string beyond the text': [[op(4, 10)], 'abc'],
    'ops left over': [[op(0), op(0)], ''],
    'text left over': [[op(0)], 'xyz'],
    'lone surrogate': [[op(4, 1)], '\ud800'],
    'lone surrogate key': [[op(6, 1), op(7, 1), op(0)], '\udc00'],
    'too deep': [Array.from({ length: 3000 }, (_, i) => (i < 2999 ? op(5, 1) : op(0))), ''],
    // A number where an op goes reads its first half as the op.
    'number where an op goes': [[op(5, 2), op(0), 1e300], ''],
  }
  // A token whose numbering the native table does not follow (the table
  // is one per thread, see pack.rs PackState): TOON_PACK_STALE.
  assert.equal(assertTypedError(() => native.toonPackEncode(1e6, new Float64Array(1), 1, '', false, 2, 44, false, Infinity), 'no such state')?.code, 'TOON_PACK_STALE')
  assert.equal(call([op(0)], '', true), 'null')
  for (const [what, [slots, text]] of Object.entries(cases)) {
    assert.ok(assertTypedError(() => call(slots, text), what), `${what}: no error`)
  }
  // Lengths beyond the array handed over, and arrays of the wrong type.
  assertTypedError(() => encode(new Float64Array(2), 3, '', false, 2, 44, false, Infinity), 'opCount')
  assertTypedError(() => encode(new Int32Array(1), 1, '', false, 2, 44, false, Infinity), 'an Int32Array')
  assertTypedError(() => encode([0], 1, '', false, 2, 44, false, Infinity), 'not a typed array')
  // Tables (rows of one shape) with one slot changed: only typed errors or text.
  const table = [op(5, 3), op(6, 2), op(7, 1), op(3), 1.5, op(7, 1), op(4, 1),
    op(6, 2), op(8, 0), op(0), op(8, 1), op(4, 2), op(6, 2), op(8, 0), op(2), op(8, 1), op(4, 0)]
  assert.equal(call(table, 'abcde', true), '[3]{a,b}:\n  1.5,c\n  null,de\n  true,""')
  // Every slot swapped with each of these in turn.
  const swaps = [op(0), op(3), op(4, 1), op(5, 1), op(6, 1), op(6, 2), op(7, 1), op(8, 0), op(8, 1), op(8, 2), op(9, 1), 2.5]
  const eachSwap = (what, good, text) => {
    for (let at = 0; at < good.length; at++) {
      for (const swap of swaps) {
        const slots = good.slice()
        slots[at] = swap
        try {
          assert.equal(typeof call(slots, text, true), 'string')
        } catch (e) {
          assertTypedError(() => {
            throw e
          }, `${what} slot ${at} -> ${JSON.stringify(swap)}`)
        }
      }
    }
  }
  eachSwap('table', table, 'abcde')
  // The wide text and Latin-1 text.
  wideText = 'wide日'
  assert.equal(call([op(5, 3), op(4, 1), op(10, 4), op(10, 1)], 'é'), '[3]: é,wide,日')
  oneByte = true
  assert.equal(call([op(5, 3), op(4, 1), op(10, 4), op(10, 1)], 'é'), '[3]: é,wide,日')
  for (const [what, slots, text, wide] of [
    ['wide string beyond the wide text', [op(10, 9)], '', 'abc'],
    ['wide text left over', [op(0)], '', 'abc'],
    ['wide string of a lone surrogate', [op(10, 1)], '', '\ud800'],
    ['wide string beyond the text in a table', [op(5, 2), op(6, 1), op(7, 1), op(10, 1), op(6, 1), op(8, 0), op(10, 5)], 'a', 'x'],
  ]) {
    wideText = wide
    assert.ok(assertTypedError(() => call(slots, text), what), `${what}: no error`)
  }
  wideText = oneByte = undefined
  // A table with a field group, each slot changed likewise.
  const grouped = [op(5, 2), op(6, 1), op(7, 1), op(6, 1), op(7, 1), op(3), 1, op(6, 1), op(8, 0), op(6, 1), op(8, 1), op(4, 1)]
  assert.equal(call(grouped, 'abx', true), '[2]{a{b}}:\n  1\n  x')
  eachSwap('grouped', grouped, 'abx')
  // Random input: only typed errors or text.
  const next = lcg(3)
  const slot = () => {
    const r = next()
    if (r < 0.85) return op(Math.floor(next() * 11), Math.floor(next() * (next() < 0.8 ? 4 : 2 ** 27)))
    if (r < 0.9) return { op: [-1, 2 ** 31 - 1, -(2 ** 31), (next() * 2 ** 32) | 0][Math.floor(next() * 4)] }
    return [next() * 100, -1, 0.5, NaN, 2 ** 31, -0][Math.floor(next() * 6)]
  }
  for (let i = 0; i < 20000; i++) {
    const slots = Array.from({ length: 1 + Math.floor(next() * 14) }, slot)
    const text = 'abcdé\ud800'.slice(0, Math.floor(next() * 7))
    const reset = next() < 0.1
    wideText = next() < 0.3 ? '日x\ud800'.slice(0, Math.floor(next() * 4)) : undefined
    oneByte = next() < 0.3
    try {
      assert.equal(typeof call(slots, text, reset), 'string')
    } catch (e) {
      assertTypedError(() => {
        throw e
      }, `random ${i}: ${slots}`)
    }
  }
})

// ---------------------------------------------------------------- decode

// Same value (key order, -0 told apart from 0) as the reference's, or the
// same error message.
function assertDecodesLikeReference(ref, text, what, options) {
  const expected = outcome(() => ref.decode(text, options))
  const actual = outcome(() => toon.decode(text, options))
  if (expected.error) {
    assert.ok(actual.error, `${what}: the reference threw ${expected.error.message}`)
    // polywire's messages go on to say what was expected.
    assert.ok(actual.error.message.startsWith(expected.error.message), `${what}: ${actual.error.message} / ${expected.error.message}`)
    return
  }
  assert.ok(!actual.error, `${what}: polywire threw ${actual.error?.stack}`)
  const tag = (v) => JSON.stringify(v, (k, x) => (Object.is(x, -0) ? '<-0>' : x))
  assert.equal(tag(actual.value), tag(expected.value), what)
  assert.deepEqual(actual.value, expected.value, what)
}

test('packed decode: the key table stays in step across calls, failures and long tables', async () => {
  const ref = await reference()
  const next = lcg(5)
  for (let doc = 0; doc < 600; doc++) {
    const r = next()
    let text
    if (r < 0.1) {
      // A long table whose keys are new.
      const k = `t${doc}`
      text = `rows[40]{${k},x}:\n` + Array.from({ length: 40 }, (_, i) => `  ${i},${k}`).join('\n')
    } else if (r < 0.2) {
      // Fails after new keys were met.
      text = `n${doc}: 1\nm${doc}:\n  a: 1\n  bad line`
    } else if (r < 0.25) {
      // A lone surrogate (the JSON route) after new keys.
      text = `s${doc}: 1\nv: "x\ud800"`
    } else {
      const lines = []
      const n = 1 + Math.floor(next() * 30)
      for (let i = 0; i < n; i++) {
        const key = next() < 0.6 ? `k${Math.floor(next() * 7000)}` : ['id', 'name', 'é', '🎓', 'x'.repeat(70)][Math.floor(next() * 5)]
        lines.push(next() < 0.3 ? `"${key}":\n  "${key}": ${i}\n  z: ${key.length}` : `"${key}": v${i}`)
      }
      text = lines.join('\n')
    }
    assertDecodesLikeReference(ref, text, `doc ${doc}: ${text.slice(0, 60)}`)
  }
})

test('packed decode: strings, keys and numbers as the reference reads them', async () => {
  const ref = await reference()
  const strings = ['', 'é', '日本語', '🎓 emoji', 'a🎓b🎓', '\ufeff', 'x'.repeat(300), 'é🎓'.repeat(200)]
  const value = { s: strings, k: Object.fromEntries(strings.map((s, i) => [s || 'empty', i])), rows: strings.map((s) => ({ s, n: s.length })) }
  assertDecodesLikeReference(ref, toon.encode(value), 'strings')
  assertDecodesLikeReference(ref, '__proto__: 1\nconstructor:\n  __proto__: 2\nnested[2]{__proto__,b}:\n  1,2\n  3,4', '__proto__ keys')
  const decoded = toon.decode('__proto__:\n  polluted: yes')
  assert.equal(Object.getPrototypeOf(decoded), Object.prototype)
  assert.equal({}.polluted, undefined)
  const numbers = ['0', '-0', '-0.0', '1.5', '-1.50', '1e3', '-1e-400', '1e400', '9007199254740993', '12345678901234567890123', '0.1', '123.456000', '1' + '0'.repeat(320), '05', '-']
  assertDecodesLikeReference(ref, numbers.map((n, i) => `n${i}: ${n}`).join('\n'), 'numbers')
  assertDecodesLikeReference(ref, `a[${numbers.length}]: ${numbers.join(',')}`, 'inline numbers')
  for (const strict of [true, false]) assertDecodesLikeReference(ref, 'a: 1\na: 2\nb[2]: 1', `duplicates, strict ${strict}`, { strict })
  // Path expansion (a v3 feature the 4.4 reference no longer has) is polywire's own.
  assert.deepEqual(toon.decode('a.b.c: 1\na.b.d: 2\ne: 3', { expandPaths: 'safe' }), { a: { b: { c: 1, d: 2 } }, e: 3 })
})

test('packed decode: results larger than the shared arrays', async () => {
  const ref = await reference()
  // More ops and numbers than the arrays toon.js starts with, under the
  // 16 KB limit of the route, then small documents again.
  const many = Array.from({ length: 3000 }, (_, i) => i * 1.5)
  assertDecodesLikeReference(ref, `a[${many.length}]: ${many.join(',')}`, 'many numbers')
  assertDecodesLikeReference(ref, Array.from({ length: 1500 }, (_, i) => `k${i}: ${i % 2 ? 'x' : i}`).join('\n'), 'many keys')
  assertDecodesLikeReference(ref, 'a: 1', 'small after')
  // Few ops, long text (buffers let go after the call, the result kept).
  assertDecodesLikeReference(ref, `a: ${'x'.repeat(300000)}\nb: "${'é'.repeat(200000)}"`, 'long strings')
  assertDecodesLikeReference(ref, 'a: 2', 'small after long strings')
})

test('packed decode: keys Object.prototype has (setters, read-only) become own properties', () => {
  // The keys are met first while Object.prototype is plain, then again
  // after it gained a setter and a read-only property of those names.
  const text = 'trap: 1\nro: 2\nnested:\n  trap: 3\n  ro: 4\ntoString: 5\nconstructor: 6'
  const expected = { trap: 1, ro: 2, nested: { trap: 3, ro: 4 }, toString: 5, constructor: 6 }
  assert.deepEqual({ ...toon.decode(text) }, expected)
  let calls = 0
  Object.defineProperty(Object.prototype, 'trap', { set() { calls++ }, configurable: true })
  Object.defineProperty(Object.prototype, 'ro', { value: 'read-only', writable: false, configurable: true })
  try {
    for (const t of [text, `${'x'.repeat(70)}: 0\n${text}`]) {
      const v = toon.decode(t)
      assert.equal(Object.getOwnPropertyDescriptor(v, 'trap')?.value, 1)
      assert.equal(Object.getOwnPropertyDescriptor(v, 'ro')?.value, 2)
      assert.equal(Object.getOwnPropertyDescriptor(v.nested, 'trap')?.value, 3)
      assert.equal(Object.getOwnPropertyDescriptor(v, 'toString')?.value, 5)
    }
  } finally {
    delete Object.prototype.trap
    delete Object.prototype.ro
  }
  assert.equal(calls, 0)
  assert.deepEqual({ ...toon.decode(text) }, expected)
  // One property gone and another come: as many names as before.
  Object.defineProperty(Object.prototype, 'gone', { value: 1, configurable: true })
  toon.decode(text)
  delete Object.prototype.gone
  Object.defineProperty(Object.prototype, 'trap', { set() { calls++ }, configurable: true })
  try {
    assert.equal(Object.getOwnPropertyDescriptor(toon.decode(text), 'trap')?.value, 1)
  } finally {
    delete Object.prototype.trap
  }
  assert.equal(calls, 0)
})
