// Write vectors/llm_choices.json: for values (the TOON spec corpus's encode inputs and the
// benchmark datasets), the token counts of their renderings and which rendering has the
// fewest tokens, all from the reference implementations: the TOON text from
// @toon-format/toon's encode, JSON from JSON.stringify, counts from gpt-tokenizer and
// js-tiktoken (a case is kept only where the two agree).
//
//   node scripts/gen_llm_choices.mjs
import fs from 'node:fs'
import { encode } from '@toon-format/toon'
import * as o200k from 'gpt-tokenizer/encoding/o200k_base'
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base'
import { Tiktoken } from 'js-tiktoken/lite'
import o200kRanks from 'js-tiktoken/ranks/o200k_base'
import cl100kRanks from 'js-tiktoken/ranks/cl100k_base'
import { DATASETS, Rng, SEED } from '../bench/toon_datasets.mjs'

const opts = { disallowedSpecial: new Set() }
const counters = {
  o200k_base: [(t) => o200k.countTokens(t, opts), ((e) => (t) => e.encode(t, [], []).length)(new Tiktoken(o200kRanks))],
  cl100k_base: [(t) => cl100k.countTokens(t, opts), ((e) => (t) => e.encode(t, [], []).length)(new Tiktoken(cl100kRanks))],
}
const DELIMS = { toon: ',', 'toon-tab': '\t', 'toon-pipe': '|' }
function render(name, value) {
  if (name in DELIMS) return encode(value, { delimiter: DELIMS[name] })
  return name === 'json-pretty' ? JSON.stringify(value, null, 2) : JSON.stringify(value)
}
function choose(value, formats, encoding) {
  const names = formats.flatMap((f) => (f === 'toon' ? ['toon', 'toon-tab', 'toon-pipe'] : [f]))
  const candidates = {}
  for (const n of names) {
    const text = render(n, value)
    const [a, b] = counters[encoding].map((c) => c(text))
    if (a !== b) return null
    candidates[n] = a
  }
  let best = names[0]
  for (const n of names) if (candidates[n] < candidates[best]) best = n
  return { candidates, format: best, tokens: candidates[best] }
}
const spec = JSON.parse(fs.readFileSync(new URL('../vectors/toon_spec.json', import.meta.url), 'utf8'))
const cases = []
let dropped = 0
spec.encode.forEach((c, i) => {
  if (c.options && Object.keys(c.options).length) return
  const encoding = i % 4 === 3 ? 'cl100k_base' : 'o200k_base'
  const formats = i % 2 ? ['toon', 'json', 'json-pretty'] : ['json', 'toon']
  let r
  try {
    r = choose(c.input, formats, encoding)
  } catch {
    return
  }
  if (r === null) return void dropped++
  cases.push({ name: `${c.file}: ${c.name}`, value: c.input, formats, encoding, ...r })
})
for (const [name, build] of Object.entries(DATASETS)) {
  for (const encoding of ['o200k_base', 'cl100k_base']) {
    const r = choose(build(new Rng(SEED)), ['toon', 'json', 'json-pretty'], encoding)
    if (r === null) throw new Error(`the reference tokenizers disagree on dataset ${name}`)
    cases.push({ name: `dataset ${name}`, dataset: name, formats: ['toon', 'json', 'json-pretty'], encoding, ...r })
  }
}
const doc = {
  format: 'llm',
  how: 'scripts/gen_llm_choices.mjs: renderings by @toon-format/toon 4.4.0 encode (each delimiter) and JSON.stringify (compact, and with indent 2 for json-pretty); counts by gpt-tokenizer 4.0.0 and js-tiktoken 1.0.21 (special tokens as ordinary text), kept only where both agree; format: the fewest tokens, ties to the first listed. Values: the TOON spec corpus encode inputs without options (vectors/toon_spec.json), and the benchmark datasets (bench/toon_datasets.*, seed 12345) by name.',
  cases,
}
fs.writeFileSync(new URL('../vectors/llm_choices.json', import.meta.url), JSON.stringify(doc, null, 1) + '\n')
console.error(`${cases.length} cases, ${dropped} dropped (the reference tokenizers disagree)`)
