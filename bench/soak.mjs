// Soak: N calls (default 1,000,000) of each format's encode+decode in one
// synchronous loop per format, RSS sampled every N/10 calls. Native memory
// that is freed only when the event loop turns (finalizers), or per-call
// state that is never freed, shows as RSS that keeps growing.
//   node bench/soak.mjs [N]
import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const kado = require('polywire/kado')
const toon = require('polywire/toon')
const tether = require('polywire/tether')
const axon = require('polywire/axon')
const kameo = require('polywire/kameo')

const N = Number(process.argv[2] || 1_000_000)
const value = { tool: 'read_file', args: { path: 'src/a.ts', lines: [1, 2, 3] }, ok: true, note: null }
const rows = { users: [{ id: 1, name: 'Ada', role: 'admin' }, { id: 2, name: 'Bob', role: 'user' }] }
const encoder = new kado.TOONEncoder()
const decoder = new kado.TOONDecoder()
const a = axon.agentIdFromSeed(new Uint8Array(32))
const b = axon.agentIdFromSeed(new Uint8Array(32).fill(1))
const env = axon.envelope(a, b, 'query', { question: 'status?' })
const frame = encoder.encode(kado.MessageType.TOOL_CALL, value, 1)
const stream = new kado.FrameDecoder()

const cases = {
  'kado encode+decode': (i) => decoder.decode(encoder.encode(kado.MessageType.TOOL_CALL, value, i % 1000)),
  'kado FrameDecoder feed': () => stream.feed(frame),
  'toon encode+decode': () => toon.decode(toon.encode(rows)),
  'tether encode+decode': () => tether.decode(tether.encode(['read', 42, null, true, [1, 2]])),
  'axon encode+decode': () => axon.decode(axon.encode(env)),
  'kameo pack+unpack': () => kameo.unpack(kameo.pack(value)),
}

const mb = () => process.memoryUsage().rss / 1048576
console.log(`| case (${N.toLocaleString('en')} calls) | RSS start MB | RSS peak MB | RSS end MB | growth MB | µs/call |`)
console.log('|---|---:|---:|---:|---:|---:|')
for (const [name, f] of Object.entries(cases)) {
  globalThis.gc?.()
  const start = mb()
  let peak = start
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < N; i++) {
    f(i)
    if (i % (N / 10) === 0) peak = Math.max(peak, mb())
  }
  const us = Number(process.hrtime.bigint() - t0) / 1e3 / N
  const end = mb()
  peak = Math.max(peak, end)
  console.log(`| ${name} | ${start.toFixed(0)} | ${peak.toFixed(0)} | ${end.toFixed(0)} | ${(end - start).toFixed(1)} | ${us.toFixed(2)} |`)
}
