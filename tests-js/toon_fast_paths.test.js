'use strict'
// polywire/toon: the shortcuts of the native routes, against the pinned
// reference @toon-format/toon 4.4.0. Decoding reads number literals as
// JSON.parse would (-0, exponents, very long literals), finds lone
// surrogates natively (they take the JSON route: ASCII JSON with \u escapes,
// but planes 15 and 16 raw, where lone-surrogate stand-ins live); encoding
// writes numbers as ECMAScript does and reads JSON.stringify's escapes.

const test = require('node:test')
const assert = require('node:assert/strict')

const toon = require('polywire/toon')

const reference = () => import('@toon-format/toon')

// Seeded numbers in [0, 1).
function lcg(seed) {
  return () => {
    seed = (seed * 1103515245 + 12345) >>> 0
    return seed / 2 ** 32
  }
}

// Same value, same key order, and -0 told apart from 0.
function assertSame(actual, expected, what) {
  const tag = (v) => JSON.stringify(v, (k, x) => (Object.is(x, -0) ? '<-0>' : x))
  assert.equal(tag(actual), tag(expected), what)
  assert.deepEqual(actual, expected, what)
}

const NUMBERS = [
  '0', '-0', '-0.0', '-0.000', '0.0', '1.50', '-1.50', '1e3', '1E-3', '-1e-400', '1e-400', '1e400', '-1e400',
  '12345678901234567890123', '9007199254740993', '-9223372036854775808', '9223372036854775808', '0.1',
  '123.456000', '1' + '0'.repeat(320), '0.' + '0'.repeat(330) + '1', '-0.' + '0'.repeat(330), '-' + '9'.repeat(400),
  '05', '1.', '.5', '+1', '1e', '-', '--1', '1.5e+3', '-2.5E-2',
]

test('decode: number literals read as the reference reads them', async () => {
  const ref = await reference()
  for (const n of NUMBERS) {
    for (const text of [`a: ${n}`, n, `[2]: ${n},${n}`, `k[1]{a,b}:\n  ${n},x`, `[1]:\n  - ${n}`]) {
      assertSame(toon.decode(text), ref.decode(text), text.slice(0, 60))
      assertSame(toon.decode(text, { strict: false }), ref.decode(text, { strict: false }), text.slice(0, 60))
    }
  }
})

const STRINGS = [
  '', 'plain', 'é', 'ÿ', 'Ā', '中文', '😀', 'a😀b', '\u{F0000}', '\u{10FFFD}', 'x\u{F0001}y😀', '\u{FFFF}', '\u0001',
  '\u001f', '\u007f', 'tab\there', 'quote"in', 'back\\slash', 'new\nline', 'é'.repeat(40), '😀'.repeat(600),
  'a'.repeat(1023) + 'é', 'a'.repeat(1025), 'long ascii '.repeat(200),
]

test('decode: strings and keys of every kind come back whole', async () => {
  const ref = await reference()
  const value = {}
  STRINGS.forEach((s, i) => {
    value[`k${i}${s}`] = s
  })
  value.list = STRINGS
  value.rows = STRINGS.map((s) => ({ id: s, n: 1 }))
  const text = ref.encode(value)
  assertSame(toon.decode(text), value)
  assertSame(toon.decode(text), ref.decode(text))
  assert.deepEqual([...toon.decodeStreamSync(text.split('\n'))], [...ref.decodeStreamSync(text.split('\n'))])
})

test('decode: lone surrogates in the text, also beside plane-15 characters', async () => {
  const ref = await reference()
  for (const text of ['a: \uD800', 'a: x\uDC00y', '\uD800: 1', 'a: \uD800\u{F0000}', 'a[2]: \uDBFF,\u{10FFFD}', 'a: "\uD800"']) {
    let mine
    let theirs
    try {
      mine = toon.decode(text)
    } catch (e) {
      mine = e.message
    }
    try {
      theirs = ref.decode(text)
    } catch (e) {
      theirs = e.message
    }
    if (typeof mine === 'string' || typeof theirs === 'string') {
      assert.equal(typeof mine, typeof theirs, text)
    } else {
      assertSame(mine, theirs, text)
    }
  }
})

test('encode: numbers and escaped strings as the reference writes them', async () => {
  const ref = await reference()
  const values = [
    [0, -0, 1.5, 0.1, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 2 ** 53, 2 ** 60, -(2 ** 63), NaN, Infinity, -Infinity, 1 / 3],
    { nums: { a: -0, b: 1e21, c: 123456789012345680000 }, strs: STRINGS },
    STRINGS.map((s) => ({ [s]: s, x: 1e-7 })),
    { '0': 1, 'b': 2, '4294967295': 3, '4294967294': 4, '01': 5 },
  ]
  for (const v of values) {
    for (const delimiter of [',', '\t', '|']) {
      assert.equal(toon.encode(v, { delimiter }), ref.encode(v, { delimiter }))
    }
  }
})

// Tables of many rows (the packed route: src/toon/pack_decode.rs, toon.js
// `unpack`), with awkward keys. Each text is decoded several times: its keys
// are new to the key table the first time, known after.
const TAPE_KEYS = ['id', '__proto__', 'constructor', '0', '10', '1', 'é', '😀', 'a"b', 'back\\slash', 'new\nline', 'x.y', 'toString', '']

test('decode: tables of many rows read as the reference reads them', async () => {
  const ref = await reference()
  const rnd = lcg(5)
  const pick = (a) => a[Math.floor(rnd() * a.length)]
  const cell = (d) => {
    const r = rnd()
    if (d > 2 || r < 0.6) return pick([1, -2.5, 0, 'text', '', 'a,b', 'é😀', '\u{F0000}', null, true, false, 1e21])
    if (r < 0.75) return { k: cell(d + 1), [pick(TAPE_KEYS)]: cell(d + 1) }
    if (r < 0.9) return rows(d + 1)
    return [cell(d + 1), cell(d + 1)]
  }
  const rows = (d) => {
    const keys = [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(TAPE_KEYS)))]
    const n = d === 0 ? pick([1, 7, 31, 32, 40]) : pick([1, 2, 3])
    return Array.from({ length: n }, () => {
      const o = {}
      for (const k of keys) Object.defineProperty(o, k, { value: cell(d), enumerable: true, writable: true, configurable: true })
      return o
    })
  }
  let tapes = 0
  for (let i = 0; i < 300; i++) {
    const value = pick([() => rows(0), () => ({ list: rows(0), n: 1 }), () => ({ a: { b: rows(0) }, c: [rows(0), 2] })])()
    const text = ref.encode(value)
    for (const options of [{}, { strict: false }]) {
      const expected = ref.decode(text, options)
      for (let k = 0; k < 3; k++) assertSame(toon.decode(text, options), expected, text.slice(0, 80))
    }
    if (/\[(?:3[2-9]|[4-9]\d|\d\d\d+)\]/.test(text)) tapes++
  }
  assert.ok(tapes > 50, `only ${tapes} documents had a table of 32 rows or more`)
})

// Numbers leave Rust as doubles (the packed route's Float64Array); each must
// be the double the reference reads from the text.
test('decode: columns of doubles read as the reference reads them', async () => {
  const ref = await reference()
  const rnd = lcg(11)
  const digits = (n) => Array.from({ length: n }, () => Math.floor(rnd() * 10)).join('')
  const literal = () => {
    const r = rnd()
    const sign = rnd() < 0.3 ? '-' : ''
    if (r < 0.35) return `${sign}${1 + Math.floor(rnd() * 9)}${digits(Math.floor(rnd() * 8))}.${digits(1 + Math.floor(rnd() * 24))}`
    if (r < 0.5) return `${sign}0.${digits(1 + Math.floor(rnd() * 20))}`
    if (r < 0.6) return `${sign}${1 + Math.floor(rnd() * 9)}${digits(Math.floor(rnd() * 22))}`
    if (r < 0.7) return `${sign}${1 + Math.floor(rnd() * 9)}.${digits(Math.floor(rnd() * 5) + 1)}e${rnd() < 0.5 ? '-' : ''}${Math.floor(rnd() * 330)}`
    return [`${sign}0.0`, '-0.000', '0', '-0', '9007199254740993', '1.7976931348623157e308', '5e-324', '2.2250738585072014e-308', '0.1', '1.5'][Math.floor(rnd() * 10)]
  }
  for (const keys of [['id', 'price', 'rate'], ['__proto__', 'x', 'constructor'], ['a', 'p']]) {
    for (const n of [32, 100, 300]) {
      // A column of literals, one of integers, one mixing literals with strings.
      const lines = Array.from({ length: n }, (_, i) => `  ${literal()},${i},${rnd() < 0.05 ? 'x' : literal()}`.split(',').slice(0, keys.length).join(','))
      const text = `rows[${n}]{${keys.map((k) => JSON.stringify(k)).join(',')}}:\n${lines.join('\n')}\ntotal: 1.25`
      for (const options of [{}, { strict: false }]) {
        const expected = ref.decode(text, options)
        for (let k = 0; k < 2; k++) assertSame(toon.decode(text, options), expected, text.slice(0, 80))
      }
    }
  }
  // In a nested table, beside a lone surrogate (the text is mapped there and back).
  const nested = `orders[40]:\n${Array.from({ length: 40 }, (_, i) => `  - id: ${i}\n    items[2]{sku,price}:\n      a\uD800,${i}.5\n      b,0.${i}1`).join('\n')}`
  assertSame(toon.decode(nested), ref.decode(nested), 'nested tables with doubles')
})

test('decode: table edge cases (duplicate keys, nested tables, rows that differ)', async () => {
  const ref = await reference()
  const rowsOf = (n, f) => Array.from({ length: n }, (_, i) => f(i))
  const texts = [
    // duplicate keys in list-item objects (non-strict): the last value, the first position
    rowsOf(33, (i) => `- a: ${i}\n  b: x\n  a: y${i}`).join('\n'),
    // the same keys in another order on one row: not a table
    rowsOf(33, (i) => (i === 4 ? `- b: 1\n  a: 2` : `- a: ${i}\n  b: 2`)).join('\n'),
    // an empty object among the rows
    rowsOf(33, (i) => (i === 0 ? '-' : `- a: ${i}`)).join('\n'),
    // a table of tables, and a table of objects holding tables
    ref.encode(rowsOf(33, (i) => ({ name: `g${i}`, rows: rowsOf(33, (j) => ({ x: j, y: `${i}` })) }))),
    ref.encode({ g: rowsOf(33, (i) => ({ inner: { deep: rowsOf(33, (j) => ({ v: i * j })) }, n: i })) }),
    // lone surrogates in the cells
    `rows[33]{a,b}:\n${rowsOf(33, (i) => `  \uD800${i},"\uDC00"`).join('\n')}`,
    // columns of objects: the same keys (a group), other keys on one row, a nested value, an empty one
    ref.encode({ g: rowsOf(33, (i) => ({ n: i, c: { id: i, name: `c${i}` }, d: i === 3 ? { id: 1, x: 2 } : { id: 1, name: 'y' } })) }),
    ref.encode({ g: rowsOf(33, (i) => ({ n: i, c: i === 8 ? { id: i, name: [1] } : { id: i, name: 'z' } })) }),
    ref.encode({ g: rowsOf(33, (i) => ({ n: i, c: i === 8 ? {} : { id: i } })) }),
    // short tables (one row, two rows) of one shape inside a long one, and a lone shape
    ref.encode({ o: rowsOf(40, (i) => ({ id: i, items: rowsOf(1 + (i % 3), (j) => ({ sku: `s${j}`, q: j })), one: [{ z: i }] })) }),
    // a root table and a key that is an array index
    `[33]{0,1,__proto__}:\n${rowsOf(33, (i) => `  ${i},y,z`).join('\n')}`,
  ]
  for (const text of texts) {
    for (const options of [{ strict: false }, {}]) {
      let expected, error
      try {
        expected = ref.decode(text, options)
      } catch (e) {
        error = e
      }
      if (error) {
        assert.throws(() => toon.decode(text, options), { message: error.message }, text.slice(0, 60))
      } else {
        for (let k = 0; k < 2; k++) {
          const actual = toon.decode(text, options)
          assertSame(actual, expected, text.slice(0, 60))
          if (Array.isArray(actual)) assert.equal(Object.getPrototypeOf(actual[0]), Object.getPrototypeOf(expected[0]))
        }
      }
    }
  }
})

test('decode: expanded paths in the rows of a long table', () => {
  const text = `rows[33]{a.b,a.c,d}:\n${Array.from({ length: 33 }, (_, i) => `  ${i},x,${i}`).join('\n')}`
  const expected = { rows: Array.from({ length: 33 }, (_, i) => ({ a: { b: i, c: 'x' }, d: i })) }
  for (let k = 0; k < 2; k++) assertSame(toon.decode(text, { expandPaths: 'safe' }), expected)
})

test('decode: documents of many table shapes, and wide tables', async () => {
  const ref = await reference()
  const rows = (n, keys) => Array.from({ length: n }, (_, i) => Object.fromEntries(keys.map((k, j) => [k, i * j])))
  const many = { long: rows(32, ['a', 'b']) }
  for (let s = 0; s < 80; s++) many[`t${s}`] = rows(40, [`k${s}`, '__proto__', `x${s % 3}`])
  const wide = rows(33, Array.from({ length: 300 }, (_, j) => `c${j}`))
  for (const value of [many, wide]) {
    const text = ref.encode(value)
    for (let k = 0; k < 2; k++) assertSame(toon.decode(text), ref.decode(text))
  }
})

test('decode: never calls a setter on Object.prototype (as JSON.parse does not)', async () => {
  const ref = await reference()
  const rows = Array.from({ length: 33 }, (_, i) => ({ id: i, trap: i, c: { trap: i } }))
  const texts = [ref.encode({ trap: 1, rows }), ref.encode({ g: Array.from({ length: 33 }, (_, s) => ({ n: s, t: { [`k${s}`]: [{ trap: s }] } })) })]
  const expected = texts.map((t) => JSON.parse(JSON.stringify(ref.decode(t))))
  let calls = 0
  Object.defineProperty(Object.prototype, 'trap', { set() { calls++ }, configurable: true })
  try {
    for (let k = 0; k < 2; k++) texts.forEach((t, i) => assert.equal(JSON.stringify(toon.decode(t)), JSON.stringify(expected[i])))
  } finally {
    delete Object.prototype.trap
  }
  assert.equal(calls, 0)
})

