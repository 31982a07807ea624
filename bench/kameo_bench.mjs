// The Node row of bench/kameo_bench.py: ask a kameo node's counter `get`
// with 1 and with 64 asks in flight; prints JSON { p50_us, p99_us, rate1, rate64 }.
// Usage: node bench/kameo_bench.mjs <kameo node multiaddr> [asks]

import kameo from 'polywire/kameo'

const [addr, asksArg = '5000'] = process.argv.slice(2)
const asks = Number(asksArg)
const node = await kameo.Node.start({ bootstrap: [addr] })
try {
  const counter = await node.lookup('counter')
  for (let i = 0; i < Math.max(asks / 10, 100); i++) await counter.ask('get')
  const latencies = []
  let started = performance.now()
  for (let i = 0; i < asks; i++) {
    const t = performance.now()
    await counter.ask('get')
    latencies.push((performance.now() - t) * 1000)
  }
  const rate1 = asks / ((performance.now() - started) / 1000)
  latencies.sort((a, b) => a - b)
  const at = (q) => latencies[Math.round((latencies.length - 1) * q)]
  const perWorker = Math.floor(asks / 64)
  started = performance.now()
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = 0; i < perWorker; i++) await counter.ask('get')
    }),
  )
  const rate64 = (perWorker * 64) / ((performance.now() - started) / 1000)
  console.log(JSON.stringify({ p50_us: at(0.5), p99_us: at(0.99), rate1, rate64 }))
} finally {
  await node.close()
}
