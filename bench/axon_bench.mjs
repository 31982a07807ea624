// The Node row of bench/axon_bench.py: requests to the floor's echo server
// with 1 and with 64 in flight; prints JSON { p50_1, p99_1, rate1, p50_64, p99_64, rate64 }.
// Usage: node bench/axon_bench.mjs <server token> <server agent id> [requests] [client seed hex]

import axon from 'polywire/axon'

const [token, agentId, nArg = '5000', seedHex = '02'.repeat(32)] = process.argv.slice(2)
const n = Number(nArg)
const peer = await axon.Peer.start({ identity: Buffer.from(seedHex, 'hex'), peers: [token] })
try {
  for (let i = 0; i < 100; i++) await peer.request(agentId, { i })
  const timed = async (i, into) => {
    const t = performance.now()
    const reply = await peer.request(agentId, { i })
    if (reply.echo.i !== i) throw new Error('a wrong reply')
    into.push((performance.now() - t) * 1000)
  }
  const at = (list, q) => list[Math.round((list.length - 1) * q)]
  const one = []
  let started = performance.now()
  for (let i = 0; i < n; i++) await timed(i, one)
  const rate1 = n / ((performance.now() - started) / 1000)
  one.sort((a, b) => a - b)
  const many = []
  const per = Math.floor((4 * n) / 64)
  started = performance.now()
  await Promise.all(
    Array.from({ length: 64 }, async (_, w) => {
      for (let i = 0; i < per; i++) await timed(w * per + i, many)
    }),
  )
  const rate64 = (per * 64) / ((performance.now() - started) / 1000)
  many.sort((a, b) => a - b)
  console.log(JSON.stringify({ p50_1: at(one, 0.5), p99_1: at(one, 0.99), rate1, p50_64: at(many, 0.5), p99_64: at(many, 0.99), rate64 }))
} finally {
  await peer.close()
}
