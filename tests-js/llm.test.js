'use strict'
// polywire/llm: token counts against the reference tokenizers that bundle the
// same ranks (gpt-tokenizer, js-tiktoken), the shared vectors (tiktoken's
// counts, vectors/token_counts.json) and the rendering choice
// (vectors/llm_choices.json, also run by tests-py/test_llm.py).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const llm = require('polywire/llm')
const { encode, ToonEncodeError } = require('polywire/toon')
const { PolywireError } = require('polywire')

const VECTORS = path.join(__dirname, '..', 'vectors')
const load = (name) => JSON.parse(fs.readFileSync(path.join(VECTORS, name), 'utf8'))
const tokens = load('token_counts.json')
const ENCODINGS = ['o200k_base', 'cl100k_base']
const LONG_RUN = /(.)\1{200}|\s{200}|\p{N}{200}/su

let datasets
async function buildDatasets() {
  datasets ??= await import('../bench/toon_datasets.mjs')
  return datasets
}

async function references() {
  const { Tiktoken } = await import('js-tiktoken/lite')
  const opts = { disallowedSpecial: new Set() }
  const out = {}
  for (const name of ENCODINGS) {
    const gpt = await import(`gpt-tokenizer/encoding/${name}`)
    const ranks = (await import(`js-tiktoken/ranks/${name}`)).default
    const jst = new Tiktoken(ranks)
    out[name] = { gpt: (t) => gpt.countTokens(t, opts), jst: (t) => jst.encode(t, [], []).length }
  }
  return out
}

// Seeded text over characters at the pre-tokenizers' class boundaries.
function randomTexts(n, seed = 11) {
  const alphabet = [...' \t\n\r aZ09\'sT/.,!{}"_-:|éñß\u00a0\u3000\u0301中文한ǅΣ٣', '😀', '🚀', '✨']
  let s = seed
  const rnd = () => {
    s = (s * 1103515245 + 12345) >>> 0
    return s / 2 ** 32
  }
  return Array.from({ length: n }, () => {
    const len = 1 + Math.floor(rnd() * 300)
    let t = ''
    for (let i = 0; i < len; i++) t += alphabet[Math.floor(rnd() * alphabet.length)]
    return t
  })
}

test('counts equal tiktoken on every shared vector', () => {
  assert.ok(tokens.cases.length > 2000)
  for (const encoding of ENCODINGS) {
    const bad = tokens.cases.filter((c) => llm.countTokens(c.text, { encoding }) !== c[encoding])
    assert.deepEqual(bad.map((c) => c.text.slice(0, 40)), [], encoding)
  }
})

test('counts equal gpt-tokenizer and js-tiktoken on thousands of texts', async () => {
  const refs = await references()
  const { DATASETS, Rng, SEED } = await buildDatasets()
  const texts = tokens.cases.filter((c) => !c.js_reference_differs).map((c) => c.text)
  for (const build of Object.values(DATASETS)) {
    const value = build(new Rng(SEED))
    for (const delimiter of [',', '\t', '|']) texts.push(encode(value, { delimiter }))
    texts.push(JSON.stringify(value), JSON.stringify(value, null, 2))
  }
  texts.push(...randomTexts(2000), ' '.repeat(3000), '7'.repeat(3000), '\n'.repeat(2000) + 'x', '<|endoftext|>'.repeat(20))
  assert.ok(texts.length > 4000)
  for (const encoding of ENCODINGS) {
    const bad = []
    for (const t of texts) {
      const ours = llm.countTokens(t, { encoding })
      const { gpt, jst } = refs[encoding]
      // js-tiktoken's merge is quadratic in a piece's length: long runs
      // (a piece each) are left to gpt-tokenizer, which takes seconds less.
      if (ours !== gpt(t) || (!LONG_RUN.test(t) && ours !== jst(t))) bad.push(t.slice(0, 40))
    }
    assert.deepEqual(bad, [], encoding)
  }
})

test('the default encoding is o200k_base; bad encodings and texts are typed errors', () => {
  const t = 'Token-Oriented Object Notation: 12345 tokens, 😀'
  assert.equal(llm.countTokens(t), llm.countTokens(t, { encoding: 'o200k_base' }))
  assert.notEqual(llm.countTokens(t), llm.countTokens(t, { encoding: 'cl100k_base' }))
  assert.equal(llm.DEFAULT_ENCODING, 'o200k_base')
  assert.deepEqual([...llm.ENCODINGS], ENCODINGS)
  assert.throws(() => llm.countTokens('x', { encoding: 'p50k_base' }), (e) => e instanceof llm.LlmError && e instanceof PolywireError && e.code === 'LLM_UNKNOWN_ENCODING')
  assert.throws(() => llm.countTokens('x', { encoding: '/nonexistent/tokenizer.json' }), { code: 'LLM_TOKENIZER_FILE' })
  for (const wrong of [undefined, null, 1, Buffer.from('x'), ['x']]) {
    assert.throws(() => llm.countTokens(wrong), (e) => e instanceof TypeError && e.code === 'LLM_INVALID_ARGUMENT')
  }
  assert.throws(() => llm.countTokens('x', { encoding: 5 }), { code: 'LLM_INVALID_ARGUMENT' })
  assert.throws(() => llm.countTokens('x', 'o200k_base'), { code: 'LLM_INVALID_ARGUMENT' })
  // A lone surrogate counts as U+FFFD, as tiktoken counts it.
  assert.equal(llm.countTokens('a\ud800b'), llm.countTokens('a\ufffdb'))
})

test('a Hugging Face tokenizer.json counts as the tokenizers library does', () => {
  // A word-level tokenizer written by hand: lower-cased, split on white space
  // and punctuation, unknown words one [UNK] each.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polywire-llm-'))
  const file = path.join(dir, 'tokenizer.json')
  fs.writeFileSync(
    file,
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [{ id: 0, content: '[UNK]', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
      normalizer: { type: 'Lowercase' },
      pre_tokenizer: { type: 'Whitespace' },
      post_processor: null,
      decoder: null,
      model: { type: 'WordLevel', vocab: { '[UNK]': 0, hello: 1, world: 2, ',': 3, '!': 4 }, unk_token: '[UNK]' },
    }),
  )
  assert.equal(llm.countTokens('Hello, WORLD! hello unknown', { encoding: file }), 6)
  const r = llm.encodeForLlm({ hello: 'world' }, { encoding: file })
  assert.equal(r.encoding, file)
  assert.equal(r.tokens, llm.countTokens(r.text, { encoding: file }))
  fs.writeFileSync(file, '{not json')
  assert.throws(() => llm.countTokens('x', { encoding: file }), { code: 'LLM_INVALID_TOKENIZER' })
  fs.rmSync(dir, { recursive: true })
})

const ROWS = Array.from({ length: 30 }, (_, i) => ({ id: i, name: `user${i}`, active: i % 2 === 0 }))

test('encodeForLlm weighs every candidate and picks the fewest tokens', () => {
  const r = llm.encodeForLlm(ROWS)
  assert.deepEqual(Object.keys(r.candidates), ['toon', 'toon-tab', 'toon-pipe', 'json'])
  const texts = {
    toon: encode(ROWS),
    'toon-tab': encode(ROWS, { delimiter: '\t' }),
    'toon-pipe': encode(ROWS, { delimiter: '|' }),
    json: JSON.stringify(ROWS),
  }
  for (const [name, text] of Object.entries(texts)) assert.equal(r.candidates[name], llm.countTokens(text), name)
  const best = Math.min(...Object.values(r.candidates))
  assert.equal(r.tokens, best)
  assert.equal(r.format, Object.keys(r.candidates).find((n) => r.candidates[n] === best))
  assert.equal(r.text, texts[r.format])
  assert.equal(r.rule, null)
  assert.equal(r.encoding, 'o200k_base')
  const p = llm.encodeForLlm(ROWS, { delimiter: '|', formats: ['json', 'toon', 'json-pretty'] })
  assert.deepEqual(Object.keys(p.candidates), ['json', 'toon-pipe', 'json-pretty'])
  assert.equal(p.candidates['json-pretty'], llm.countTokens(JSON.stringify(ROWS, null, 2)))
  const tie = llm.encodeForLlm(7, { formats: ['toon', 'json'], delimiter: ',' })
  assert.deepEqual([tie.candidates, tie.format, tie.text], [{ toon: 1, json: 1 }, 'toon', '7'])
  const four = llm.encodeForLlm(ROWS, { formats: ['toon-tab'], indentSize: 4, encoding: 'cl100k_base' })
  assert.equal(four.text, encode(ROWS, { delimiter: '\t', indentSize: 4 }))
  // JSON cannot take a BigInt: the JSON rendering is of the value TOON writes.
  assert.equal(llm.encodeForLlm({ n: 10n }, { formats: ['json'] }).text, '{"n":10}')
})

test('encodeForLlm strategy structure follows the design document', () => {
  const r = llm.encodeForLlm(ROWS, { strategy: 'structure' })
  assert.deepEqual(r, { text: encode(ROWS), format: 'toon', tokens: null, candidates: {}, encoding: 'o200k_base', rule: 'uniform-array' })
  assert.equal(llm.encodeForLlm(ROWS, { strategy: 'structure', delimiter: '\t' }).format, 'toon-tab')
  assert.equal(llm.encodeForLlm(ROWS.slice(0, 2), { strategy: 'structure' }).rule, 'nested')
  assert.equal(llm.encodeForLlm([1, 'a', null], { strategy: 'structure' }).rule, 'mixed')
  const mixed = [...ROWS.slice(0, 3), { other: 1 }]
  const m = llm.encodeForLlm(mixed, { strategy: 'structure' })
  assert.deepEqual([m.format, m.rule, m.text], ['json', 'nested', JSON.stringify(mixed)])
  assert.equal(llm.encodeForLlm({ a: 1, b: 'x' }, { strategy: 'structure' }).rule, 'mixed')
  assert.equal(llm.encodeForLlm([{ a: 1, b: 2 }, { b: 3, a: 4 }, { a: 5, b: 6 }], { strategy: 'structure' }).rule, 'uniform-array')
})

test('encodeForLlm arguments are typed errors', () => {
  for (const [opts, Ctor] of [
    [{ strategy: 'cheapest' }, RangeError],
    [{ formats: ['yaml'] }, RangeError],
    [{ formats: [] }, RangeError],
    [{ formats: 'toon' }, TypeError],
    [{ delimiter: ';' }, RangeError],
    [{ encoding: 'gpt2' }, llm.LlmError],
    [{ encoding: 2 }, TypeError],
  ]) {
    assert.throws(() => llm.encodeForLlm(ROWS, opts), (e) => e instanceof Ctor && e instanceof PolywireError && e.code.startsWith('LLM_'), JSON.stringify(opts))
  }
  assert.throws(() => llm.encodeForLlm(ROWS, 'json'), { code: 'LLM_INVALID_ARGUMENT' })
})

test('choices equal the shared vectors (the reference renderings and tokenizers)', async () => {
  const { DATASETS, Rng, SEED } = await buildDatasets()
  const doc = load('llm_choices.json')
  assert.ok(doc.cases.length > 100)
  for (const c of doc.cases) {
    const value = c.dataset ? DATASETS[c.dataset](new Rng(SEED)) : c.value
    const r = llm.encodeForLlm(value, { formats: c.formats, encoding: c.encoding })
    assert.deepEqual(r.candidates, c.candidates, c.name)
    assert.deepEqual([r.format, r.tokens], [c.format, c.tokens], c.name)
  }
})

test('the one-call route renders exactly what encode and JSON.stringify write', async () => {
  // Plain values are rendered and counted natively in one call (the packed
  // walk); its texts must be the reference renderings, format by format.
  const toon = require('polywire/toon')
  const { DATASETS, Rng, SEED } = await buildDatasets()
  const values = load('llm_choices.json').cases.map((c) => (c.dataset ? DATASETS[c.dataset](new Rng(SEED)) : c.value))
  values.push({ big: 1e21, tiny: 1e-7, neg: -0, nan: NaN, inf: -Infinity, esc: 'q"\\\n\u0001\u2028é😀', arr: [undefined, () => 1, null] })
  values.push({ 10: 'a', b: { 2: [1, 2], 1: 'x' }, 0: true })
  const formats = ['toon', 'toon-tab', 'toon-pipe', 'json', 'json-pretty']
  const reference = {
    toon: (v) => encode(v),
    'toon-tab': (v) => encode(v, { delimiter: '\t' }),
    'toon-pipe': (v) => encode(v, { delimiter: '|' }),
    json: (v) => JSON.stringify(v),
    'json-pretty': (v) => JSON.stringify(v, null, 2),
  }
  let native = 0
  for (const value of values) {
    const all = toon.packedChoice(value, undefined, formats, 'o200k_base')
    if (all === undefined) continue
    native++
    const texts = formats.map((f) => reference[f](value))
    assert.deepEqual(all.counts, texts.map((t) => llm.countTokens(t)))
    assert.equal(all.text, texts[all.index])
    for (const [i, f] of formats.entries()) {
      const one = toon.packedChoice(value, 4, [f], 'cl100k_base')
      const text = f.startsWith('toon') ? encode(value, { delimiter: { toon: ',', 'toon-tab': '\t', 'toon-pipe': '|' }[f], indentSize: 4 }) : texts[i]
      assert.deepEqual(one, { index: 0, text, counts: [llm.countTokens(text, { encoding: 'cl100k_base' })] }, f)
    }
  }
  assert.ok(native > 100, `${native} values took the one-call route`)
  // Values the packed walk gives up go format by format, as before.
  for (const value of [{ d: new Date(0) }, { u: undefined, a: 1 }, new Map([['k', 1]]), { toJSON: () => 'x' }, undefined]) {
    assert.equal(toon.packedChoice(value, undefined, formats, 'o200k_base'), undefined)
    const r = llm.encodeForLlm(value, { formats: ['toon', 'json'], delimiter: ',' })
    assert.equal(r.candidates.toon, llm.countTokens(encode(value)))
  }
  // A getter that fails fails the call as encode does.
  const bad = { get x() { throw new RangeError('boom') } }
  assert.throws(() => llm.encodeForLlm(bad), { message: 'boom' })
})

test('safeEncode falls back to JSON as the design document defines', () => {
  assert.equal(llm.safeEncode({ a: 1 }), 'a: 1')
  let deep = []
  for (let i = 0; i < 1100; i++) deep = [deep]
  assert.throws(() => llm.safeEncode(deep, { fallbackToJson: false }), ToonEncodeError)
  assert.equal(llm.safeEncode(deep), JSON.stringify(deep))
  assert.throws(() => llm.safeEncode({}, { fallbackToJson: 'yes' }), { code: 'LLM_INVALID_ARGUMENT' })
})
