'use strict'
// polywire's Node AXON peer as a program driven line by line on stdin,
// answering on stdout: the Node peer of the Python suite
// (tests-py/test_axon_peer.py), with the line protocol of the Rust
// `axon-node` (axon-interop/src/bin/axon-node.rs) for the commands add,
// serve, request, send, burst, flood, events, count, peers and quit. It
// serves with the test handler every language's test peer shares (see
// axon-interop/src/lib.rs).
//
//   node tests-js/axon_node.js [--protocol axon/1|v2] [--serve]

const readline = require('node:readline')
const axon = require(process.env.POLYWIRE_NODE_AXON || '../bindings-node/lib/axon.js')

function testHandler(protocol) {
  return async (sender, kind, payload) => {
    if (Number.isInteger(payload.sleep_ms)) await new Promise((r) => setTimeout(r, payload.sleep_ms))
    const fail = payload.fail
    if (fail !== null && typeof fail === 'object') {
      throw new axon.AxonRemoteError(fail.code ?? '', fail.message ?? '', { retryable: fail.retryable === true })
    }
    const echo = { echo: payload, from: sender }
    if (protocol === 'axon/1') return echo
    if (kind === 'query') return { data: echo, summary: 'echo' }
    return { accepted: true }
  }
}

function errorLine(e) {
  const detail = { message: e.message }
  if (e instanceof axon.AxonRemoteError) Object.assign(detail, { remote_code: e.remoteCode, remote_message: e.remoteMessage, retryable: e.retryable })
  return `ERROR ${e.code} ${JSON.stringify(detail)}`
}

async function main(argv) {
  const protocol = argv.includes('--protocol') ? argv[argv.indexOf('--protocol') + 1] : 'axon/1'
  const peer = await axon.Peer.start({ protocol })
  if (argv.includes('--serve')) peer.serve(testHandler(protocol))
  const seen = { message: 0, error: 0, pair_request: 0 }
  let last = []
  ;(async () => {
    for await (const event of peer.inbound()) {
      seen[event.type]++
      last.push(event)
      if (last.length > 1000) last = last.slice(-1000)
    }
  })()
  process.stdout.write(`READY ${peer.agentId} ${peer.listenAddr} ${peer.token} ${peer.publicKey}\n`)
  const kindOf = protocol === 'v2' ? 'query' : 'request'
  const rl = readline.createInterface({ input: process.stdin })
  for await (const raw of rl) {
    const line = raw.trim()
    if (!line) continue
    const words = line.split(' ')
    const cmd = words[0]
    const rest = (n) => words.slice(n).join(' ')
    let out
    try {
      if (cmd === 'quit') break
      else if (cmd === 'add') out = `ADDED ${await peer.addPeer(words[1])}`
      else if (cmd === 'serve') {
        peer.serve(words[1] === 'on' ? testHandler(protocol) : null)
        out = 'OK'
      } else if (cmd === 'request') {
        const r = await peer.request(words[1], JSON.parse(rest(4)), { kind: words[2], timeout: Number(words[3]) })
        out = `REPLY ${JSON.stringify(r)}`
      } else if (cmd === 'send') {
        out = `SENT ${await peer.send(words[1], JSON.parse(rest(3)), { kind: words[2] })}`
      } else if (cmd === 'burst') {
        const [to, n, timeout] = [words[1], Number(words[2]), Number(words[3])]
        const one = async (i) => {
          const p = protocol === 'v2' ? { i, question: String(i) } : { i }
          try {
            const r = await peer.request(to, p, { kind: kindOf, timeout })
            const echo = protocol === 'v2' ? r.data.echo : r.echo
            return echo.i === i
          } catch {
            return false
          }
        }
        const results = await Promise.all(Array.from({ length: n }, (_, i) => one(i)))
        const ok = results.filter(Boolean).length
        out = `BURST ${ok} ${n - ok}`
      } else if (cmd === 'flood') {
        const [to, n] = [words[1], Number(words[2])]
        for (let i = 0; i < n; i++) {
          if (protocol === 'v2') await peer.send(to, { topic: 'flood', data: i }, { kind: 'notify' })
          else await peer.send(to, { i })
        }
        out = `FLOODED ${n}`
      } else if (cmd === 'events') {
        out = `EVENTS ${JSON.stringify(last)}`
        last = []
      } else if (cmd === 'count') out = `COUNT ${seen.message} ${seen.error} ${seen.pair_request}`
      else if (cmd === 'peers') out = `PEERS ${JSON.stringify(await peer.peers())}`
      else out = `ERROR BAD_COMMAND ${JSON.stringify({ message: `unknown command ${cmd}` })}`
    } catch (e) {
      out = e instanceof axon.AxonPeerError ? errorLine(e) : `ERROR BAD_COMMAND ${JSON.stringify({ message: String(e) })}`
    }
    process.stdout.write(out + '\n')
  }
  await peer.close()
}

main(process.argv.slice(2)).catch((e) => {
  process.stdout.write(`ERROR START ${JSON.stringify({ message: String(e) })}\n`)
  process.exit(1)
})
