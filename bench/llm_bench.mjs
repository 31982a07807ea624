// Token counting and encodeForLlm in Node: polywire/llm against gpt-tokenizer and js-tiktoken
// (the npm tokenizers that bundle the same ranks), same run, as ratios.
//
//   node bench/llm_bench.mjs [--quick]
//
// 1. counting speed, MB/s of text, on each dataset's TOON and compact JSON texts
//    (bench/toon_datasets.mjs, the datasets of the TOON benchmarks): countTokens against
//    gpt-tokenizer's countTokens and js-tiktoken's encode().length, special tokens counted as
//    ordinary text by all three (every count is checked equal first);
// 2. counting next to encoding: countTokens of a dataset's TOON text over encode() of the
//    dataset, and encodeForLlm over two candidates (TOON with the comma, compact JSON) over
//    one encode().
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildAll } from './toon_datasets.mjs'
import { measureGroup } from './timing.mjs'

const require = createRequire(import.meta.url)
let llm, toon
try {
  llm = require('polywire/llm')
  toon = require('polywire/toon')
} catch {
  llm = require('../bindings-node/lib/llm.js')
  toon = require('../bindings-node/lib/toon.js')
}
const gpt = await import('gpt-tokenizer/encoding/o200k_base')
const { Tiktoken } = await import('js-tiktoken/lite')
const jst = new Tiktoken((await import('js-tiktoken/ranks/o200k_base')).default)
const opts = { disallowedSpecial: new Set() }

const quick = process.argv.includes('--quick')
const [target, repeats] = quick ? [0.02, 3] : [0.2, 7]
const data = buildAll()
const mb = (bytes, s) => (bytes / s / 1e6).toFixed(1)

// (js-tiktoken's exports do not include its package.json.)
const versionOf = (pkg) => JSON.parse(fs.readFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'node_modules', pkg, 'package.json'), 'utf8')).version
console.log(`# polywire/llm, Node ${process.version} on ${os.arch()}, gpt-tokenizer ${versionOf('gpt-tokenizer')}, js-tiktoken ${versionOf('js-tiktoken')}`)
console.log()
console.log('## Counting speed (o200k_base), MB/s of text')
console.log()
console.log('| text | bytes | polywire | gpt-tokenizer | js-tiktoken | polywire / gpt-tokenizer | polywire / js-tiktoken |')
console.log('|---|---:|---:|---:|---:|---:|---:|')
for (const [name, value] of Object.entries(data)) {
  for (const [kind, text] of [['TOON', toon.encode(value)], ['JSON', JSON.stringify(value)]]) {
    const counts = [llm.countTokens(text), gpt.countTokens(text, opts), jst.encode(text, [], []).length]
    if (new Set(counts).size !== 1) throw new Error(`${name} ${kind}: counts differ ${counts}`)
    const bytes = Buffer.byteLength(text)
    const t = measureGroup(
      {
        polywire: () => llm.countTokens(text),
        gpt: () => gpt.countTokens(text, opts),
        jst: () => jst.encode(text, [], []).length,
      },
      target,
      repeats,
    )
    const [p, g, j] = [t.polywire[0], t.gpt[0], t.jst[0]]
    console.log(`| ${name} ${kind} | ${bytes.toLocaleString('en-US')} | ${mb(bytes, p)} | ${mb(bytes, g)} | ${mb(bytes, j)} | ${(g / p).toFixed(2)}x | ${(j / p).toFixed(2)}x |`)
  }
}
console.log()
console.log('## Counting next to encoding')
console.log()
console.log('| dataset | encode | countTokens(TOON text) | count / encode | encodeForLlm (TOON `,` + JSON) | encodeForLlm / encode |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const [name, value] of Object.entries(data)) {
  const text = toon.encode(value)
  const t = measureGroup(
    {
      encode: () => toon.encode(value),
      count: () => llm.countTokens(text),
      choose: () => llm.encodeForLlm(value, { formats: ['toon', 'json'], delimiter: ',' }),
    },
    target,
    repeats,
  )
  const [e, c, ch] = [t.encode[0], t.count[0], t.choose[0]]
  console.log(`| ${name} | ${(e * 1e3).toFixed(2)} ms | ${(c * 1e3).toFixed(2)} ms | ${(c / e).toFixed(2)} | ${(ch * 1e3).toFixed(2)} ms | ${(ch / e).toFixed(2)} |`)
}
console.log()
console.log(`- cpu: ${os.cpus().length} cores; medians of ${repeats} interleaved repeats of about ${target} s`)
