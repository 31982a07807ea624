'use strict'
// `polywire -d` streams (issue #18): TOON in, JSON text out as the events
// come, memory bounded by the open structure and the longest line. A ~200 MB
// TOON document generated on the fly is piped through the command and its
// output counted, not kept; a preload reports the child's peak RSS
// (process.resourceUsage().maxRSS at exit), which must stay under 150 MB.
// And the work of the decoder (the bytes it goes through) is linear in the
// input. (tests-py/test_cli_stream.py runs the Python command the same way.)
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawn } = require('node:child_process')
const { once } = require('node:events')

const PKG = path.dirname(require.resolve('polywire/package.json'))
const CLI = path.join(PKG, require('polywire/package.json').bin.polywire)
const native = require(path.join(PKG, 'bindings-node', 'lib', 'native.js'))

const TARGET = 200_000_000
const PEAK_RSS_MB = 150

const row = (i) => `  ${i},user${i},user${i}@example.com,${i % 1000}.25,${i % 3 ? 'true' : 'false'},"City, ${i % 97}"\n`
const item = (i) =>
  `  - id: ${i}\n    title: "Item ${i}: a, b"\n    tags[2]: x${i % 7},y\n    dims:\n      w: ${i % 50}.5\n` +
  `      h: ${i % 9}\n    parts[2]{sku,qty}:\n      A${i},2\n      B${i},${i % 5}\n`

/** About `target` bytes of TOON, in pieces: a nested config object, a big
 * table (60%), list items holding nested objects, inline arrays and tables. */
function* toonChunks(target) {
  yield 'meta:\n  name: "big export"\n  version: 3\n  tags[3]: a,b,c\n  owner:\n    id: 7\n    email: ada@example.com\n'
  const rows = Math.floor((target * 0.6) / row(1e6).length)
  const items = Math.floor((target * 0.4) / item(1e6).length)
  yield `rows[${rows}]{id,name,email,score,active,city}:\n`
  for (let s = 0; s < rows; s += 2000) {
    let block = ''
    for (let i = s; i < Math.min(s + 2000, rows); i++) block += row(i)
    yield block
  }
  yield `items[${items}]:\n`
  for (let s = 0; s < items; s += 1000) {
    let block = ''
    for (let i = s; i < Math.min(s + 1000, items); i++) block += item(i)
    yield block
  }
  yield 'end: true\n'
}

test('a 200 MB document streams through `polywire -d` in bounded memory', { skip: process.platform === 'win32' && 'needs sh' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polywire-stream-'))
  const preload = path.join(dir, 'rss.js')
  fs.writeFileSync(preload, "process.on('exit', () => require('fs').writeSync(2, `peak-rss-kb ${process.resourceUsage().maxRSS}\\n`))\n")
  // Through sh, which forks the command: on Linux a process's peak RSS counts
  // the memory of the process it was forked from, and this one's is not small.
  const start = performance.now()
  const child = spawn('sh', ['-c', '"$@"; exit $?', 'sh', process.execPath, '--require', preload, CLI, '-d'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (s) => (stderr += s))
  let bytes = 0
  let first = Buffer.alloc(0)
  let last = Buffer.alloc(0)
  child.stdout.on('data', (b) => {
    bytes += b.length
    if (first.length < 200) first = Buffer.concat([first, b]).subarray(0, 200)
    last = Buffer.concat([last, b.subarray(-200)]).subarray(-200)
  })
  const exited = once(child, 'close')
  child.stdin.on('error', () => {})
  for (const chunk of toonChunks(TARGET)) {
    if (!child.stdin.write(chunk)) await once(child.stdin, 'drain')
  }
  child.stdin.end()
  const [status] = await exited
  const took = (performance.now() - start) / 1000
  fs.rmSync(dir, { recursive: true, force: true })
  const m = /peak-rss-kb (\d+)\n$/.exec(stderr)
  assert.ok(m, stderr)
  assert.equal(stderr.slice(0, m.index), '')
  assert.equal(status, 0)
  assert.ok(first.toString().startsWith('{\n  "meta": {\n    "name": "big export",\n    "version": 3,\n    "tags": [\n      "a",'), first.toString())
  assert.ok(last.toString().endsWith('      ]\n    }\n  ],\n  "end": true\n}\n'), last.toString())
  assert.ok(bytes > 2 * TARGET, `${bytes} bytes of JSON`)
  const rss = Number(m[1]) / 1024
  console.log(`# node polywire -d: 200 MB of TOON, ${(bytes / 1e6).toFixed(0)} MB of JSON, peak RSS ${rss.toFixed(1)} MB, ${took.toFixed(1)} s`)
  assert.ok(rss < PEAK_RSS_MB, `peak RSS ${rss.toFixed(1)} MB`)
})

test('the decoder goes through each byte a bounded number of times, whatever the pieces', () => {
  const scanned = (target, piece) => {
    const d = new native.ToonJsonStream(2, true)
    const text = Buffer.from([...toonChunks(target)].join(''))
    let out = 0
    for (let i = 0; i < text.length; i += piece) out += d.feed(text.subarray(i, i + piece)).length
    out += d.finish().length
    assert.equal(d.failure, null)
    return { scanned: d.scanned, input: text.length, out }
  }
  for (const piece of [7, 4096, 65536]) {
    const a = scanned(1_000_000, piece)
    const b = scanned(2_000_000, piece)
    assert.ok(b.out > 1.9 * a.out)
    // Twice the input, twice the work (and a few times the input at most).
    const ratio = b.scanned / a.scanned
    assert.ok(ratio > 1.9 && ratio < 2.1, `pieces of ${piece}: ${a.scanned} then ${b.scanned}`)
    assert.ok(b.scanned < 3 * b.input, `pieces of ${piece}: ${b.scanned} for ${b.input}`)
  }
})
