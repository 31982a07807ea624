'use strict'
// Differential test against the pinned reference @toon-format/toon 4.4.0:
// seeded random documents (adversarial strings and keys, number edge cases,
// tabular / keyed / nested-field-group candidates, all delimiters, indent 2
// and 4) must encode byte-identically and decode equal; mutated texts must be
// accepted or rejected exactly as the reference does, failing on the same
// line with a message starting with the reference's. Set TOON_DIFF_SEED to
// explore other seeds, TOON_DIFF_DOCS for more documents.

const test = require('node:test')
const assert = require('node:assert/strict')

const toon = require('polywire/toon')
const { generator } = require('./toon_generator.js')

const SEED = Number(process.env.TOON_DIFF_SEED ?? 20240611)
const DOCS = Number(process.env.TOON_DIFF_DOCS ?? 5000)
const MUTANTS_PER_DOC = 2

function outcome(fn) {
  try {
    return { ok: true, value: fn() }
  } catch (e) {
    return { ok: false, error: e }
  }
}

// The events a stream decoder yields for `text` given as lines, and the
// error it throws after them, if any.
function streamOf(mod, text, options) {
  const events = []
  try {
    for (const event of mod.decodeStreamSync(text.split('\n'), options)) events.push(event)
  } catch (error) {
    return { events, error }
  }
  return { events, error: null }
}

// decodeStreamSync: the reference's events, in its order, up to the same
// fault (then the same error).
function assertSameStream(ref, text, options, where) {
  const r = streamOf(ref, text, options)
  const p = streamOf(toon, text, options)
  assert.deepStrictEqual(p.events, r.events, `${where}: events`)
  assert.equal(p.error === null, r.error === null, `${where}: reference ${r.error?.message}, polywire ${p.error?.message}`)
  if (r.error) {
    assert.ok(p.error instanceof toon.ToonDecodeError, where)
    assert.equal(p.error.line, r.error.line, `${where}: ${p.error.message} vs ${r.error.message}`)
    const cut = p.error.message.indexOf('\uFFFD')
    const [mine, theirs] = cut === -1 ? [p.error.message, r.error.message] : [p.error.message.slice(0, cut), r.error.message.slice(0, cut)]
    assert.ok(mine.startsWith(theirs), `${where}: ${p.error.message} vs ${r.error.message}`)
  }
  return r.error !== null
}

test(`${DOCS} random documents: encode byte-identical, decode and stream events equal; ${DOCS * MUTANTS_PER_DOC} mutants: same acceptance and error line, same events up to the fault`, async () => {
  const ref = await import('@toon-format/toon')
  const g = generator(SEED)
  const stats = { docs: 0, tabular: 0, keyed: 0, groups: 0, mutants: 0, rejected: 0, nonStrictRejected: 0, streamFaults: 0 }
  for (let n = 0; n < DOCS; n++) {
    const doc = g.document()
    const opts = { delimiter: g.pick([',', '\t', '|']), indentSize: g.pick([2, 4]) }
    const want = ref.encode(doc, opts)
    const got = toon.encode(doc, opts)
    const what = () => `seed ${SEED} doc ${n} ${JSON.stringify(opts)}: ${JSON.stringify(doc)}`
    assert.equal(got, want, what())
    stats.docs++
    if (/\]\{/.test(want)) stats.tabular++
    if (/\[\d+:/.test(want)) stats.keyed++
    if (/\{[^}\n]*\{/.test(want)) stats.groups++
    assert.deepStrictEqual(toon.decode(want, opts), ref.decode(want, opts), what())
    assertSameStream(ref, want, { indentSize: opts.indentSize }, what())

    for (let m = 0; m < MUTANTS_PER_DOC; m++) {
      const text = g.mutate(want)
      for (const strict of [true, false]) {
        const o = { indentSize: opts.indentSize, strict }
        const r = outcome(() => ref.decode(text, o))
        const p = outcome(() => toon.decode(text, o))
        const where = `seed ${SEED} doc ${n} mutant ${m} strict=${strict} ${JSON.stringify(text)}`
        assert.equal(p.ok, r.ok, `${where}: reference ${r.ok ? 'accepts' : 'rejects: ' + r.error.message}, polywire ${p.ok ? 'accepts' : 'rejects: ' + p.error.message}`)
        if (r.ok) {
          assert.deepStrictEqual(p.value, r.value, where)
          continue
        }
        if (strict) stats.rejected++
        else stats.nonStrictRejected++
        assert.ok(p.error instanceof toon.ToonDecodeError, where)
        assert.ok(r.error instanceof ref.ToonDecodeError, `${where}: reference threw ${r.error}`)
        assert.equal(p.error.line, r.error.line, `${where}: ${p.error.message} vs ${r.error.message}`)
        // A message quoting half of a surrogate pair (the reference slices
        // UTF-16 units) shows U+FFFD for it: compare up to there.
        const cut = p.error.message.indexOf('\uFFFD')
        const [mine, theirs] = cut === -1 ? [p.error.message, r.error.message] : [p.error.message.slice(0, cut), r.error.message.slice(0, cut)]
        assert.ok(mine.startsWith(theirs), `${where}: ${p.error.message} vs ${r.error.message}`)
      }
      for (const strict of [true, false]) {
        const where = `seed ${SEED} doc ${n} mutant ${m} strict=${strict} stream ${JSON.stringify(text)}`
        if (assertSameStream(ref, text, { indentSize: opts.indentSize, strict }, where)) stats.streamFaults++
      }
      stats.mutants++
    }
  }
  // The generator reaches every form, and enough mutants fail in strict mode.
  assert.equal(stats.docs, DOCS)
  assert.ok(stats.tabular > DOCS / 10 && stats.keyed > DOCS / 20 && stats.groups > DOCS / 50, JSON.stringify(stats))
  assert.ok(stats.rejected >= 500 && stats.streamFaults >= 500, JSON.stringify(stats))
  console.log(`# differential: ${JSON.stringify(stats)}`)
})
