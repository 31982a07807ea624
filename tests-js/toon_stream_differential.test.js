'use strict'
// Differential test of the event streams (decodeStreamSync, decodeStream)
// and decodeFromLines against the pinned reference @toon-format/toon 4.4.0,
// on the seeded documents of toon_generator.js (another seed than
// toon_differential.test.js, which compares decodeStreamSync on its own
// documents too): valid documents and mutants, strict and non-strict,
// indent 2 and 4 (as encoded), given as lines; and sources the reference
// reads in its own way: a line holding '\n' (one line to the reference), a
// source ending early (`undefined`), an element that is no string (a
// TypeError once that line is needed), an iterator that throws (its error,
// once that line is needed). Events must be deepStrictEqual, up to the same
// fault, then the same error. Set TOON_STREAM_SEED / TOON_STREAM_DOCS to
// explore further.

const test = require('node:test')
const assert = require('node:assert/strict')

const toon = require('polywire/toon')
const { generator } = require('./toon_generator.js')

const SEED = Number(process.env.TOON_STREAM_SEED ?? 20251122)
const DOCS = Number(process.env.TOON_STREAM_DOCS ?? 2000)
/** One document in this many is also decoded with decodeStream from an async generator. */
const ASYNC_EVERY = 8

const reference = () => import('@toon-format/toon')

/** What a source that throws throws. */
const SOURCE_ERROR = new Error('the source failed')

// The events a stream decoder yields for a source, and what it throws after
// them (`threw`).
function streamOf(mod, source, options) {
  const events = []
  try {
    for (const event of mod.decodeStreamSync(source, options)) events.push(event)
  } catch (error) {
    return { events, threw: true, error }
  }
  return { events, threw: false }
}

async function asyncStreamOf(mod, source, options) {
  const events = []
  try {
    for await (const event of mod.decodeStream(source, options)) events.push(event)
  } catch (error) {
    return { events, threw: true, error }
  }
  return { events, threw: false }
}

function outcome(fn) {
  try {
    return { ok: true, value: fn() }
  } catch (error) {
    return { ok: false, error }
  }
}

// The same failure: a decode fault on the same line, from the same source
// line, with a message starting with the reference's (ours may add a note
// of what was expected; a message quoting half of a surrogate pair shows
// U+FFFD for it, compared up to there); a TypeError for an element that is
// no string (the reference's message is the engine's); the very error a
// source threw.
function assertSameError(ref, mine, theirs, where) {
  if (theirs === SOURCE_ERROR) {
    assert.equal(mine, theirs, `${where}: reference rethrew the source's error, polywire threw ${mine}`)
    return 'source'
  }
  if (theirs instanceof ref.ToonDecodeError) {
    assert.ok(mine instanceof toon.ToonDecodeError, `${where}: reference ${theirs.message}, polywire ${mine}`)
    assert.equal(mine.line, theirs.line, `${where}: ${mine.message} vs ${theirs.message}`)
    assert.equal(mine.source, theirs.source, `${where}: ${mine.message} vs ${theirs.message}`)
    const cut = mine.message.indexOf('\uFFFD')
    const [a, b] = cut === -1 ? [mine.message, theirs.message] : [mine.message.slice(0, cut), theirs.message.slice(0, cut)]
    assert.ok(a.startsWith(b), `${where}: ${mine.message} vs ${theirs.message}`)
    return 'fault'
  }
  assert.ok(theirs instanceof TypeError, `${where}: reference threw ${theirs}`)
  assert.ok(mine instanceof TypeError, `${where}: reference threw ${theirs}, polywire ${mine}`)
  return 'type'
}

function assertSameStream(ref, r, p, where) {
  assert.deepStrictEqual(p.events, r.events, `${where}: events`)
  assert.equal(p.threw, r.threw, `${where}: reference ${r.threw ? 'threw ' + r.error?.message : 'ended'}, polywire ${p.threw ? 'threw ' + p.error?.message : 'ended'}`)
  return r.threw ? assertSameError(ref, p.error, r.error, where) : 'none'
}

function assertSameValue(ref, r, p, where) {
  assert.equal(p.ok, r.ok, `${where}: reference ${r.ok ? 'decodes' : 'throws ' + r.error?.message}, polywire ${p.ok ? 'decodes' : 'throws ' + p.error?.message}`)
  if (r.ok) assert.deepStrictEqual(p.value, r.value, where)
  else assertSameError(ref, p.error, r.error, where)
}

// Both decoders on one source (`make()` gives a fresh one for each run:
// iterators are used up): decodeStreamSync's events, then decodeFromLines.
function compare(ref, make, options, where, stats) {
  const kind = assertSameStream(ref, streamOf(ref, make(), options), streamOf(toon, make(), options), `${where} stream`)
  stats[kind]++
  assertSameValue(ref, outcome(() => ref.decodeFromLines(make(), options)), outcome(() => toon.decodeFromLines(make(), options)), `${where} decodeFromLines`)
}

// Sources the reference reads its own way, made from lines.
const VARIANTS = {
  // Two neighbouring lines as one element holding '\n'.
  newline(lines, g) {
    if (lines.length < 2) return () => [lines[0] + '\n']
    const i = g.int(lines.length - 1)
    const merged = [...lines.slice(0, i), `${lines[i]}\n${lines[i + 1]}`, ...lines.slice(i + 2)]
    return () => merged
  },
  // `undefined` ends the source early.
  ended(lines, g) {
    const k = g.int(lines.length + 1)
    const source = [...lines.slice(0, k), undefined, ...lines.slice(k)]
    return () => source
  },
  // An element that is no string.
  notString(lines, g) {
    const k = g.int(lines.length + 1)
    const source = [...lines.slice(0, k), g.pick([5, null, true, {}, 10n])]
    return () => source
  },
  // An iterator that throws instead of giving line k + 1.
  throws(lines, g) {
    const k = g.int(lines.length + 1)
    return () =>
      (function* failing() {
        yield* lines.slice(0, k)
        throw SOURCE_ERROR
      })()
  },
}

test(`${DOCS} random documents and ${DOCS} mutants as lines: the reference's events and values, strict and not; odd sources`, async () => {
  const ref = await reference()
  const g = generator(SEED)
  const stats = { docs: 0, mutants: 0, async: 0, none: 0, fault: 0, type: 0, source: 0 }
  const variants = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, 0]))
  for (let n = 0; n < DOCS; n++) {
    const doc = g.document()
    const opts = { delimiter: g.pick([',', '\t', '|']), indentSize: g.pick([2, 4]) }
    const text = ref.encode(doc, opts)
    const lines = text.split('\n')
    const mutant = g.mutate(text).split('\n')
    for (const strict of [true, false]) {
      const o = { indentSize: opts.indentSize, strict }
      compare(ref, () => lines, o, `seed ${SEED} doc ${n} strict=${strict} ${JSON.stringify(text)}`, stats)
      compare(ref, () => mutant, o, `seed ${SEED} doc ${n} mutant strict=${strict} ${JSON.stringify(mutant)}`, stats)
    }
    stats.docs++
    stats.mutants++

    const base = g.int(2) === 0 ? lines : mutant
    const kind = g.pick(Object.keys(VARIANTS))
    const make = VARIANTS[kind](base, g)
    const o = { indentSize: opts.indentSize, strict: g.int(3) > 0 }
    compare(ref, make, o, `seed ${SEED} doc ${n} ${kind} strict=${o.strict} ${JSON.stringify(base)}`, stats)
    variants[kind]++

    if (n % ASYNC_EVERY === 0) {
      const asyncLines = (source) =>
        (async function* slow() {
          for (const line of source) {
            await null
            yield line
          }
        })()
      for (const source of [lines, mutant]) {
        const where = `seed ${SEED} doc ${n} decodeStream ${JSON.stringify(source)}`
        assertSameStream(ref, await asyncStreamOf(ref, asyncLines(source), o), await asyncStreamOf(toon, asyncLines(source), o), where)
      }
      stats.async++
    }
  }
  // Every kind of outcome is reached often enough to mean something.
  assert.equal(stats.docs, DOCS)
  assert.ok(stats.mutants >= 1000 && stats.fault >= 1000 && stats.type >= 100 && stats.source >= 100, JSON.stringify({ stats, variants }))
  for (const [kind, count] of Object.entries(variants)) assert.ok(count >= DOCS / 8, `${kind}: ${count}`)
  console.log(`# stream differential: ${JSON.stringify({ stats, variants })}`)
})

// Expected events derived by running the reference 4.4.0 (decodeStreamSync
// over the lines, strict and non-strict).
test('event streams of four documents, strict and not (as the reference 4.4.0 yields them)', () => {
  const events = (text, strict) => {
    const out = []
    try {
      for (const e of toon.decodeStreamSync(text.split('\n'), { strict })) out.push(e)
    } catch (e) {
      out.push(`${e.constructor.name} ${e.message}`)
    }
    return out
  }
  const so = { type: 'startObject' }
  const eo = { type: 'endObject' }
  const ea = { type: 'endArray' }
  const key = (k) => ({ type: 'key', key: k })
  const sa = (length) => ({ type: 'startArray', length })
  const p = (value) => ({ type: 'primitive', value })
  const cases = [
    ['a[3]: 1,2', true, [so, key('a'), sa(3), 'ToonDecodeError Line 1: Expected 3 inline-form values, but got 2']],
    ['a[3]: 1,2', false, [so, key('a'), sa(3), p(1), p(2), ea, eo]],
    ['a[3]:\n  - 1\n  - 2', true, [so, key('a'), sa(3), p(1), p(2), 'ToonDecodeError Line 3: Expected 3 list-form items, but got 2']],
    ['a[3]:\n  - 1\n  - 2', false, [so, key('a'), sa(3), p(1), p(2), ea, eo]],
    ['a[1]{x}:\n  1\n  2', true, [so, key('a'), sa(1), so, key('x'), p(1), eo, 'ToonDecodeError Line 3: Expected 1 tabular rows, but found more']],
    ['a[1]{x}:\n  1\n  2', false, [so, key('a'), sa(1), so, key('x'), p(1), eo, so, key('x'), p(2), eo, ea, eo]],
    ['k: 1\nb[2]: x\nc: [oops', true, [so, key('k'), p(1), key('b'), sa(2), 'ToonDecodeError Line 2: Expected 2 inline-form values, but got 1']],
    ['k: 1\nb[2]: x\nc: [oops', false, [so, key('k'), p(1), key('b'), sa(2), p('x'), ea, key('c'), p('[oops'), eo]],
  ]
  for (const [text, strict, want] of cases) {
    const got = events(text, strict)
    // (Our messages may add a note of what was expected.)
    const last = got.length - 1
    if (typeof want[last] === 'string' && typeof got[last] === 'string' && got[last].startsWith(want[last])) got[last] = want[last]
    assert.deepStrictEqual(got, want, `${JSON.stringify(text)} strict=${strict}`)
  }
})

test('lines holding a newline are one line each, as in the reference (values, events, errors)', async () => {
  const ref = await reference()
  const rows = (n, cell) => Array.from({ length: n }, (_, i) => `  ${i},${cell(i)}`)
  const sources = [
    ['a: x\ny'],
    ['a: "x\ny"', 'b: 1'],
    ['a: 1\nb: 2'],
    ['a[2]: 1,2\n'],
    ['\n'],
    ['  \n'],
    ['k\n: 1'],
    ['a:\n  b: 1'],
    ['- x\n'],
    ['k: "\\uab\ncd"'],
    ['a: "\\\\ue000"', 'b: x\ny'],
    ['a: \ue000', 'b: x\ny', 'c: \ue001\n'],
    ['a: "x\\\ny"'],
    ['a: \uD800\n\uDC00', 'b: "\uDBFF\n"'],
    ['k: 1', 'k: 2\n'],
    ['x[2]:', '  - a\nb', '  - "c\nd"'],
    ['t[2]{a,b}:', '  1,x\ny', '  2,"p\nq"'],
    // Long tables with newlines in their cells (the JSON route), with a
    // column of doubles and beside a lone surrogate.
    ['rows[40]{id,name}:', ...rows(40, (i) => `n${i}\nx`)],
    ['rows[40]{id,price,name}:', ...rows(40, (i) => `${i}.5,"a\nb${i}"`)],
    ['s: \uD800', 'rows[33]{id,v}:', ...rows(33, (i) => `v\n${i}`)],
  ]
  for (const lines of sources) {
    for (const strict of [true, false]) {
      const o = { strict }
      const where = `${JSON.stringify(lines)} strict=${strict}`
      assertSameStream(ref, streamOf(ref, lines, o), streamOf(toon, lines, o), where)
      assertSameValue(ref, outcome(() => ref.decodeFromLines(lines, o)), outcome(() => toon.decodeFromLines(lines, o)), where)
    }
  }
  // (What the reference gives, written out for two of them.)
  assert.deepStrictEqual(toon.decodeFromLines(['a: 1\nb: 2']), { a: '1\nb: 2' })
  assert.deepStrictEqual(toon.decodeFromLines(['t[2]{a,b}:', '  1,x\ny', '  2,"p\nq"']), { t: [{ a: 1, b: 'x\ny' }, { a: 2, b: 'p\nq' }] })
})

test('a source that ends early, fails or throws: the events its lines decide, then what the reference throws', async () => {
  const ref = await reference()
  const so = { type: 'startObject' }
  const key = (k) => ({ type: 'key', key: k })
  const p = (value) => ({ type: 'primitive', value })
  // `undefined` ends the source: the lines after it are never read.
  assert.deepStrictEqual([...toon.decodeStreamSync(['a: 1', undefined, 'b: 2'])], [...ref.decodeStreamSync(['a: 1', undefined, 'b: 2'])])
  assert.deepStrictEqual(toon.decodeFromLines(['a: 1', undefined, 'b: 2']), { a: 1 })
  // No string: a TypeError once the decoder needs that line, after the
  // events before it; a fault before it comes first.
  const failing = ['a:', '  b: 1', 'c:', '  d: 1', 5]
  const got = streamOf(toon, failing)
  assert.deepStrictEqual(got.events, [so, key('a'), so, key('b'), p(1), { type: 'endObject' }, key('c'), so, key('d'), p(1)])
  assert.ok(got.error instanceof TypeError)
  assertSameStream(ref, streamOf(ref, failing), got, 'a number as line 5')
  for (const [lines, kind] of [
    [['a: 1', 5], TypeError],
    [['a[2]: 1', null], TypeError],
    [['[2]: 1', null], toon.ToonDecodeError],
    [['a: 1', 'b[2]: 1', null], toon.ToonDecodeError],
  ]) {
    assert.throws(() => toon.decodeFromLines(lines), kind)
    assertSameValue(ref, outcome(() => ref.decodeFromLines(lines)), outcome(() => toon.decodeFromLines(lines)), String(lines))
  }
  // String objects are lines.
  assert.deepStrictEqual(toon.decodeFromLines([new String('a: 1')]), { a: 1 })
  // An iterator that throws: its error, after the events before that line
  // (a document long enough that the stream decodes in several passes).
  const many = Array.from({ length: 300 }, (_, i) => `k${i}: ${i}`)
  for (const k of [0, 1, 7, 150, 300]) {
    const make = () =>
      (function* failing() {
        yield* many.slice(0, k)
        throw SOURCE_ERROR
      })()
    const where = `throws after ${k} lines`
    assertSameStream(ref, streamOf(ref, make(), {}), streamOf(toon, make(), {}), where)
    const makeAsync = () =>
      (async function* failing() {
        for (const line of many.slice(0, k)) yield line
        throw SOURCE_ERROR
      })()
    assertSameStream(ref, await asyncStreamOf(ref, makeAsync(), {}), await asyncStreamOf(toon, makeAsync(), {}), `${where} (async)`)
    assert.throws(() => toon.decodeFromLines(make()), (e) => e === SOURCE_ERROR)
  }
})
