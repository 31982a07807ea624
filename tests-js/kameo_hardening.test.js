'use strict'
// Kameo peers under load and with handlers that fail oddly: 10,000 asks at
// once to a real kameo node are all answered (at most 64 in flight, the rest
// wait within their timeout); a handler that throws or rejects with a value
// String() cannot convert (Object.create(null), an Error whose getters throw,
// a revoked Proxy, a thenable whose `then` throws) gets an error reply, and
// neither the node nor the process goes down.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const readline = require('node:readline')
const { spawn } = require('node:child_process')

const kameo = require('polywire/kameo')
const { Node } = kameo

const ROOT = path.join(__dirname, '..')
const ASKS = 10000

function kameoNodeBinary(t) {
  const env = process.env.POLYWIRE_KAMEO_NODE
  if (env) {
    assert.ok(fs.existsSync(env), `POLYWIRE_KAMEO_NODE=${env} does not exist`)
    return env
  }
  const p = path.join(ROOT, 'target', 'debug', 'kameo-node')
  if (!fs.existsSync(p)) t.skip('kameo-node is not built (cargo build -p kameo-parity --bin kameo-node)')
  return fs.existsSync(p) ? p : null
}

async function startKameoNode(binary) {
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: child.stdout })
  const ready = await new Promise((resolve) => lines.once('line', resolve))
  const [word, peerId, addr] = ready.split(' ')
  assert.equal(word, 'READY')
  return { peerId, addr, kill: () => child.kill('SIGKILL') }
}

test('ten thousand asks at once to a kameo node are all answered', async (t) => {
  const binary = kameoNodeBinary(t)
  if (!binary) return
  const kn = await startKameoNode(binary)
  t.after(() => kn.kill())
  const node = await Node.start({ bootstrap: [kn.addr] })
  t.after(() => node.close())
  const counter = await node.lookup('counter')
  const results = await Promise.allSettled(Array.from({ length: ASKS }, () => counter.ask('get')))
  const failed = results.filter((r) => r.status === 'rejected')
  assert.equal(failed.length, 0, `${failed.length} of ${ASKS} failed, e.g. ${failed.slice(0, 3).map((r) => r.reason)}`)
  assert.ok(results.every((r) => r.value === 0))
  assert.equal(await counter.ask('get'), 0)
})

function oddValues() {
  const nullProto = Object.create(null)
  const badMessage = new Error('x')
  Object.defineProperty(badMessage, 'message', {
    get() {
      throw new Error('no message for you')
    },
  })
  const badEverything = new Error('y')
  for (const key of ['message', 'name']) {
    Object.defineProperty(badEverything, key, {
      get() {
        throw new Error('nothing')
      },
    })
  }
  badEverything.toString = () => {
    throw new Error('no string either')
  }
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return { nullProto, badMessage, badEverything, revoked: proxy, symbol: Symbol('s'), nullValue: null }
}

test('handlers that throw values String() cannot convert get error replies, and the node serves on', async () => {
  const server = await Node.start()
  const client = await Node.start({ bootstrap: server.listenAddrs })
  try {
    const odd = oddValues()
    const thenGetterThrows = {
      get then() {
        throw Object.create(null)
      },
    }
    const thenThrows = { then: () => { throw odd.nullProto } }
    const handlers = {
      sync: (message, value) => {
        if (message in odd) throw odd[message]
        return value
      },
      async: async (message, value) => {
        await null
        if (message in odd) throw odd[message]
        return value
      },
      thenable: (message, value) => (message === 'getter' ? thenGetterThrows : message === 'then' ? thenThrows : value),
    }
    for (const [name, fn] of Object.entries(handlers)) await server.register(name, fn, { remoteId: 'polywire.test.Peerside' })
    // (register reads `ask` to check the handler; later reads throw.)
    let reads = 0
    const askGetterThrows = {
      get ask() {
        if (reads++ > 0) throw odd.nullProto
        return () => 1
      },
      tell() {},
    }
    await server.register('object', askGetterThrows, { remoteId: 'polywire.test.Peerside' })

    for (const name of ['sync', 'async']) {
      const ref = await client.lookup(name)
      for (const message of Object.keys(odd)) {
        await assert.rejects(ref.ask(message, 1), (e) => e instanceof kameo.HandlerError && typeof e.value === 'string', `${name} ${message}`)
      }
      // Healthy asks made at once with failing ones are all answered.
      const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => ref.ask(i % 3 === 0 ? 'nullProto' : 'echo', i)))
      results.forEach((r, i) => {
        if (i % 3 === 0) assert.ok(r.status === 'rejected' && r.reason instanceof kameo.HandlerError, String(i))
        else assert.equal(r.value, i)
      })
    }
    const thenable = await client.lookup('thenable')
    await assert.rejects(thenable.ask('getter', 1), kameo.HandlerError)
    await assert.rejects(thenable.ask('then', 1), kameo.HandlerError)
    await assert.rejects((await client.lookup('object')).ask('echo', 1), kameo.HandlerError)
    assert.equal(await (await client.lookup('sync')).ask('echo', 'still serving'), 'still serving')
  } finally {
    await client.close()
    await server.close()
  }
})
