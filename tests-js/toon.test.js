'use strict'
// polywire/toon: the TOON spec v4.0 conformance fixtures (vectors/toon_spec.json:
// the fixtures' inputs with the @toon-format/toon 4.4.0 reference's results), the spec v3 key-folding and path-expansion fixtures
// of @toon-format/spec 3.3.2, the shared vectors, and the drop-in API of
// @toon-format/toon 4.4.0 (exports, options, errors, streams, BigInt,
// prototype safety).

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')

const toon = require('polywire/toon')
const { encode, decode, ToonDecodeError } = toon

const ROOT = path.join(__dirname, '..')
const SPEC = JSON.parse(fs.readFileSync(path.join(ROOT, 'vectors', 'toon_spec.json'), 'utf8'))
const V3 = path.join(ROOT, 'node_modules', '@toon-format', 'spec', 'tests', 'fixtures')
const reference = () => import('@toon-format/toon')

function fixtureFiles(dir) {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))])
}

test('spec v4.0 encode fixtures: byte-identical to the reference', () => {
  for (const t of SPEC.encode) assert.equal(encode(t.input, t.options), t.expected, `${t.file}: ${t.name}`)
  assert.equal(SPEC.encode.length, 173)
})

// Where the reference throws (the fixtures' error cases, and the four v4.0
// non-strict bracket-header cases that spec 4.1 and the 4.4 reference
// reject), polywire throws the reference's message on the reference's line.
test('spec v4.0 decode fixtures: the reference\'s values and errors', () => {
  let errors = 0
  let changed = 0
  for (const t of SPEC.decode) {
    const what = `${t.file}: ${t.name}`
    if ('error' in t) {
      errors++
      if (!t.fixture_should_error) changed++
      assert.throws(
        () => decode(t.input, t.options),
        (e) => e instanceof ToonDecodeError && e.message.includes(t.error) && e.line === t.line,
        what,
      )
      continue
    }
    assert.deepStrictEqual(decode(t.input, t.options), t.expected, what)
  }
  assert.deepEqual([SPEC.decode.length, errors, changed], [343, 83, 4])
})

test('spec v3 key-folding and path-expansion fixtures through the options', () => {
  const [[, folding]] = fixtureFiles(path.join(V3, 'encode')).filter(([f]) => f === 'key-folding.json')
  assert.equal(folding.tests.length, 12)
  for (const t of folding.tests) assert.equal(encode(t.input, t.options), t.expected, t.name)
  const [[, expansion]] = fixtureFiles(path.join(V3, 'decode')).filter(([f]) => f === 'path-expansion.json')
  assert.equal(expansion.tests.length, 12)
  for (const t of expansion.tests) {
    if (t.shouldError) assert.throws(() => decode(t.input, t.options), ToonDecodeError, t.name)
    else assert.deepStrictEqual(decode(t.input, t.options), t.expected, t.name)
  }
})

test('shared vectors: encode (vectors/toon_encode.json)', () => {
  const v = JSON.parse(fs.readFileSync(path.join(ROOT, 'vectors', 'toon_encode.json'), 'utf8'))
  assert.ok(v.cases.length >= 200)
  for (const c of v.cases) {
    const o = c.options
    const opts = { delimiter: o.delimiter, indentSize: o.indent }
    if (o.keyFolding) opts.keyFolding = o.keyFolding
    if (o.flattenDepth !== undefined) opts.flattenDepth = o.flattenDepth
    assert.equal(encode(JSON.parse(c.input_json), opts), c.expected, c.input_json)
  }
})

test('shared vectors: decode (vectors/toon_decode.json)', () => {
  const v = JSON.parse(fs.readFileSync(path.join(ROOT, 'vectors', 'toon_decode.json'), 'utf8'))
  assert.ok(v.cases.length >= 1000)
  for (const c of v.cases) {
    const opts = { strict: c.strict, indentSize: c.indent }
    if ('error' in c) {
      assert.throws(
        () => decode(c.input, opts),
        (e) => e instanceof ToonDecodeError && e.line === c.line && e.message.startsWith(`Line ${c.line}: ${c.error}`),
        JSON.stringify(c),
      )
    } else {
      assert.deepStrictEqual(decode(c.input, opts), c.value, JSON.stringify(c))
    }
  }
})

test('shared vectors: path expansion (vectors/toon_decode_expand.json)', () => {
  const v = JSON.parse(fs.readFileSync(path.join(ROOT, 'vectors', 'toon_decode_expand.json'), 'utf8'))
  assert.ok(v.cases.length >= 100)
  for (const c of v.cases) {
    const opts = { strict: c.strict, indentSize: v.indent, expandPaths: 'safe' }
    if ('error' in c) {
      const prefix = c.line === null ? '' : `Line ${c.line}: `
      assert.throws(
        () => decode(c.input, opts),
        (e) => e instanceof ToonDecodeError && e.line === (c.line ?? undefined) && e.message.startsWith(prefix + c.error),
        JSON.stringify(c),
      )
    } else {
      assert.deepStrictEqual(decode(c.input, opts), c.value, JSON.stringify(c))
    }
  }
})

test('the exports of the reference, with the same constants', async () => {
  const ref = await reference()
  for (const name of Object.keys(ref)) assert.ok(name in toon, `missing export ${name}`)
  assert.deepStrictEqual(toon.DELIMITERS, ref.DELIMITERS)
  assert.equal(toon.DEFAULT_DELIMITER, ref.DEFAULT_DELIMITER)
  const esm = await import('polywire/toon')
  for (const name of Object.keys(ref)) assert.equal(esm[name], toon[name], name)
  const root = require('polywire')
  assert.equal(root.toon, toon)
})

test('options: indentSize, deprecated indent, delimiter, invalid values', async () => {
  const ref = await reference()
  const value = { a: { b: [1, 2], c: [{ x: 1, y: 'p|q' }, { x: 2, y: 'r' }] } }
  for (const opts of [{ indentSize: 4 }, { indent: 3 }, { indentSize: 0 }, { delimiter: '|' }, { delimiter: '\t', indentSize: 1 }]) {
    assert.equal(encode(value, opts), ref.encode(value, opts), JSON.stringify(opts))
  }
  assert.throws(() => encode(1, { delimiter: ';' }), (e) => e instanceof TypeError && e.message === (() => {
    try {
      ref.encode(1, { delimiter: ';' })
    } catch (r) {
      return r.message
    }
  })())
  assert.throws(() => encode(1, { indentSize: 1.5 }), RangeError)
  assert.throws(() => decode('a: 1', { indentSize: 0 }), RangeError)
  assert.deepStrictEqual(decode('a:\n    b: 1', { indent: 4 }), { a: { b: 1 } })
  assert.deepStrictEqual(decode('a[3]: 1,2', { strict: false }), { a: [1, 2] })
  assert.throws(() => decode('a[3]: 1,2'), ToonDecodeError)
})

test('ToonDecodeError has the reference shape plus code and column', async () => {
  const ref = await reference()
  const cases = [
    'a[3]: 1,2',
    'a:\n  b: 1\n   c: 2',
    'items[2]:\n  - 1\n\n  - 2',
    '\uFEFFa: "x\r\nb: 1',
    'x: 1\nx: 2',
    'a[2]{p,q}:\n  1,2\n  3',
  ]
  for (const text of cases) {
    let want
    try {
      ref.decode(text)
    } catch (e) {
      want = e
    }
    assert.ok(want, text)
    assert.throws(() => decode(text), (e) => {
      assert.ok(e instanceof ToonDecodeError && e instanceof SyntaxError, text)
      assert.equal(e.name, 'ToonDecodeError')
      assert.equal(e.line, want.line, text)
      assert.equal(e.source, want.source, text)
      assert.ok(e.message.startsWith(want.message), `${JSON.stringify(e.message)} vs ${JSON.stringify(want.message)}`)
      assert.match(e.code, /^TOON_[A-Z_]+$/)
      return true
    })
  }
  const e = new ToonDecodeError('boom', { line: 3, source: 'x' })
  assert.equal(e.message, 'Line 3: boom')
  assert.equal(new ToonDecodeError('boom').message, 'boom')
})

test('decoding never touches prototypes', () => {
  const texts = [
    '__proto__:\n  polluted: 1',
    'constructor:\n  prototype:\n    polluted: 1',
    'a[1]{__proto__}:\n  1',
    'a[1]:\n  - __proto__:\n      polluted: 1',
    '"__proto__"[2]: 1,2',
    'k[2:]{__proto__}:\n  __proto__: 1\n  constructor: 2',
  ]
  for (const text of texts) {
    const v = decode(text)
    assert.equal({}.polluted, undefined)
    assert.equal(Object.prototype.polluted, undefined)
    assert.equal(Object.getPrototypeOf(v), Object.prototype)
  }
  const v = decode('__proto__:\n  polluted: 1')
  assert.ok(Object.hasOwn(v, '__proto__'))
  assert.deepStrictEqual(v.__proto__, { polluted: 1 })
  assert.equal(v.polluted, undefined)
  const events = [...toon.decodeStreamSync(['__proto__: 1'])]
  assert.deepStrictEqual(events[1], { type: 'key', key: '__proto__' })
})

test('BigInt and integer precision as the reference', async () => {
  const ref = await reference()
  const values = [
    12n,
    -(2n ** 53n) + 1n,
    2n ** 53n,
    2n ** 64n,
    { a: [1n, 2n ** 70n], b: 9007199254740993 },
    [Number.MAX_SAFE_INTEGER, 2 ** 64, 1e21, 1e-7, -0, NaN, -Infinity],
  ]
  for (const v of values) assert.equal(encode(v), ref.encode(v), String(v))
  for (const text of ['a: 9007199254740993', 'a: 12345678901234567890123', 'a[3]: 1e400,-0,0.1e-400', 'a: 1.0000000000000002']) {
    assert.deepStrictEqual(decode(text), ref.decode(text), text)
  }
})

test('host values normalised as the reference does', async () => {
  const ref = await reference()
  class Point {
    constructor() {
      this.x = 1
    }
  }
  const values = [
    { d: new Date(0), m: new Map([[1, { a: 1 }], ['k', [1]]]), s: new Set(['a', 'b']) },
    { u: undefined, f() {}, sym: Symbol('s'), p: new Point(), n: null },
    [undefined, () => 1, new Point(), new String('x'), new Number(1)],
    { t: { toJSON: () => ({ a: 1 }) }, nested: [{ toJSON: () => 'z' }] },
    undefined,
    Object.assign(Object.create(null), { a: 1 }),
    JSON.parse('{"__proto__": {"x": 1}, "constructor": 2}'),
    { a: [1, , 3] }, // eslint-disable-line no-sparse-arrays
    new Uint8Array([1, 2]),
  ]
  for (const v of values) assert.equal(encode(v), ref.encode(v))
  for (const bad of ['a\uD800', { ['k\uDC00']: 1 }, ['ok', '\uDBFF']]) {
    assert.throws(() => encode(bad), (e) => {
      assert.throws(() => ref.encode(bad), (r) => r.message === e.message && r.constructor === e.constructor)
      return true
    })
  }
})

test('replacer and rawString as the reference', async () => {
  const ref = await reference()
  const value = { name: 'Ada', age: 30, password: 'x', tags: ['a', 'b'], rows: [{ a: 1 }, { a: 2 }], n: { deep: { er: 1 } } }
  const replacers = [
    (key, v) => (key === 'password' ? undefined : v),
    (key, v, p) => (p.length === 0 ? { ...v, extra: true } : v),
    (key, v) => (typeof v === 'number' ? v * 2 : v),
    (key, v) => (key === '0' ? undefined : v),
    () => undefined,
  ]
  for (const r of replacers) assert.equal(encode(value, { replacer: r }), ref.encode(value, { replacer: r }))
  const raw = (mod) => (key, v) => (typeof v === 'string' ? mod.rawString(`"${mod.escapeString(v)}"`) : key === 'n' ? mod.rawString('ignored') : v)
  assert.equal(encode(value, { replacer: raw(toon) }), ref.encode(value, { replacer: raw(ref) }))
  assert.equal(encode(toon.rawString('a,b')), ref.encode(ref.rawString('a,b')))
  assert.equal(encode([toon.rawString('')]), ref.encode([ref.rawString('')]))
  assert.throws(() => toon.rawString('x\n  # comment'), TypeError)
  for (const s of ['plain', 'q"\\', 'a\nb\r\tc', '\u0001\u001f\u007f']) assert.equal(toon.escapeString(s), ref.escapeString(s))
})

test('encodeLines, decodeFromLines and the event streams as the reference', async () => {
  const ref = await reference()
  const values = [{}, { a: { b: [1, 2], c: [{ x: 1 }, { x: 2 }] } }, [], 'x', [[1], { k: [] }]]
  for (const v of values) assert.deepStrictEqual([...toon.encodeLines(v)], [...ref.encodeLines(v)], JSON.stringify(v))
  assert.deepStrictEqual([...toon.encodeLines(toon.rawString(''))], [...ref.encodeLines(ref.rawString(''))])
  const texts = ['', 'a: 1\nb[2]{x,y}:\n  1,2\n  3,4\nc[2]:\n  - 1\n  - d: []', '[2]: x,y', 'hello', 'k[2:]{v}:\n  p: 1\n  q: 2', 'b: 1\n"1": 2']
  for (const text of texts) {
    const lines = text.split('\n')
    assert.deepStrictEqual(toon.decodeFromLines(lines), ref.decodeFromLines(lines), text)
    assert.deepStrictEqual([...toon.decodeStreamSync(lines)], [...ref.decodeStreamSync(lines)], text)
    const got = []
    for await (const e of toon.decodeStream((async function* () { yield* lines })())) got.push(e)
    const want = []
    for await (const e of ref.decodeStream(lines)) want.push(e)
    assert.deepStrictEqual(got, want, text)
  }
  // Non-strict duplicate keys: two key events, as in the reference.
  const dup = ['a: 1', 'a: 2']
  assert.deepStrictEqual([...toon.decodeStreamSync(dup, { strict: false })], [...ref.decodeStreamSync(dup, { strict: false })])
  assert.throws(() => [...toon.decodeStreamSync(['a[2]: 1'])], ToonDecodeError)
})

test('event streams read their lines as they need them', async () => {
  // A long source: the first events come, and a consumer that stops
  // has made the source produce a few lines only (the text read is decoded
  // again each time it doubles).
  let pulled = 0
  function* endless() {
    pulled++
    yield 'items[1000000]:'
    // (Bounded, so that a decoder reading ahead fails the test, not the run.)
    while (pulled < 100000) {
      pulled++
      yield '  - x'
    }
  }
  const first = []
  for (const e of toon.decodeStreamSync(endless())) {
    first.push(e)
    if (first.length === 6) break
  }
  assert.deepStrictEqual(first.slice(0, 4), [{ type: 'startObject' }, { type: 'key', key: 'items' }, { type: 'startArray', length: 1000000 }, { type: 'primitive', value: 'x' }])
  assert.ok(pulled <= 16, `pulled ${pulled} lines`)

  // Lines that come slowly (a model writing), and lines in a burst then a
  // pause: the events of a line come before the line after next, and those
  // of a burst's last line during the pause, not when the next line does.
  const slow = await streamUntil(['name: Ada', 'age: 36', 'city: London', 'role: engineer'], 30, 36)
  assert.ok(slow.early, 'the events of a line came only once the source had ended')
  const burst = await streamUntil(['a: 1', 'b: 2', 'c: 3', 'd: 4'], 0, 3)
  assert.ok(burst.early, 'the events of a burst waited for the line after the pause')
  assert.deepStrictEqual(burst.keys, ['a', 'b', 'c', 'd'])
  assert.deepStrictEqual(slow.keys, ['name', 'age', 'city', 'role'])
})

// decodeStream over `lines` coming `delay` ms apart, the last one only once
// the primitive `until` has been yielded (or after two seconds, which fails
// the test rather than hanging it): whether it came before the last line,
// and the keys.
async function streamUntil(lines, delay, until) {
  let seen = false
  let early = false
  let release
  let timer
  const gate = new Promise((resolve) => {
    release = resolve
    timer = setTimeout(resolve, 2000)
  })
  async function* source() {
    for (const [i, line] of lines.slice(0, -1).entries()) {
      if (i > 0 && delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
      yield line
    }
    await gate
    early = seen
    yield lines.at(-1)
  }
  const keys = []
  for await (const e of toon.decodeStream(source())) {
    if (e.type === 'key') keys.push(e.key)
    if (e.type === 'primitive' && e.value === until) {
      seen = true
      release()
    }
  }
  clearTimeout(timer)
  return { early, keys }
}

test('bad input neither crashes nor allocates ahead of the data', () => {
  const deep = 'a:\n' + Array.from({ length: 3000 }, (_, i) => ' '.repeat(2 * (i + 1)) + 'a:').join('\n')
  assert.throws(() => decode(deep), (e) => e instanceof ToonDecodeError && e.code === 'TOON_TOO_DEEP')
  assert.throws(() => decode('a[999999999]: 1'), (e) => e.code === 'TOON_LENGTH_MISMATCH' && e.line === 1)
  assert.throws(() => decode('a[999999999]{x}:\n  1'), ToonDecodeError)
  assert.deepStrictEqual(decode('a[999999999]: 1', { strict: false }), { a: [1] })
  const long = 'k: ' + 'x'.repeat(5_000_000)
  assert.equal(decode(long).k.length, 5_000_000)
  let nested = 1
  for (let i = 0; i < 1100; i++) nested = { k: nested }
  assert.throws(() => encode(nested), (e) => e instanceof toon.ToonEncodeError && e.code === 'TOON_TOO_DEEP')
  assert.throws(() => decode(42), TypeError)
})
