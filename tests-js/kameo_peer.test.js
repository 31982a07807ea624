'use strict'
// polywire/kameo's Node against a real Kameo node: kameo-node
// (kameo-parity/src/bin), a program on the real kameo =0.22.2 crate, run as a
// subprocess on 127.0.0.1. Both directions: Node looks up, asks and tells
// kameo's actors, and kameo looks up and asks an actor Node hosts. Every wait
// is bounded; nothing leaves 127.0.0.1.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const net = require('node:net')
const readline = require('node:readline')
const { spawn } = require('node:child_process')

const kameo = require('polywire/kameo')
const { Node } = kameo

const ROOT = path.join(__dirname, '..')
const WAIT = 20000

// $POLYWIRE_KAMEO_NODE (the test command sets it, and then it must exist),
// else target/debug/kameo-node from `cargo test`.
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

function within(promise, what) {
  let timer
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${WAIT} ms`)), WAIT)
    }),
  ]).finally(() => clearTimeout(timer))
}

// The kameo-node subprocess, driven by lines.
async function startKameoNode(binary) {
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: child.stdout })
  const queue = []
  const waiters = []
  lines.on('line', (line) => (waiters.length ? waiters.shift()(line) : queue.push(line)))
  const next = (what) => within(new Promise((resolve) => (queue.length ? resolve(queue.shift()) : waiters.push(resolve))), what)
  const ready = (await next('READY')).split(' ')
  assert.equal(ready[0], 'READY')
  return {
    peerId: ready[1],
    addr: ready[2],
    command(line) {
      child.stdin.write(`${line}\n`)
      return next(line)
    },
    kill() {
      child.kill('SIGKILL')
    },
  }
}

test('Node asks and tells kameo actors', async (t) => {
  const binary = kameoNodeBinary(t)
  if (!binary) return
  const kn = await startKameoNode(binary)
  t.after(() => kn.kill())
  const node = await Node.start({ bootstrap: [kn.addr] })
  t.after(() => node.close())

  const counter = await within(node.lookup('counter'), 'lookup')
  assert.ok(counter instanceof kameo.RemoteActorRef)
  assert.equal(counter.remoteId, 'polywire.test.Counter')
  assert.equal(counter.peerId, kn.peerId)
  assert.equal(typeof counter.actorId.sequence_id, 'number')

  assert.equal(await counter.ask('inc', { amount: 5 }), 5)
  assert.equal(await counter.tell('inc', { amount: 2 }), undefined)
  assert.equal(await counter.ask('get'), 7)
  assert.deepEqual(await counter.ask('echo', { value: { a: [1, 'x', null, 2.5] } }), { a: [1, 'x', null, 2.5] })
  assert.deepEqual(await counter.ask('get', kameo.pack(null), { raw: true }), kameo.pack(7))

  await assert.rejects(counter.ask('fail', { message: 'boom' }), (e) => {
    assert.ok(e instanceof kameo.HandlerError && e instanceof kameo.KameoRemoteError && e instanceof kameo.KameoError)
    assert.equal(e.code, 'KAMEO_HANDLER_ERROR')
    assert.equal(e.value, 'boom')
    assert.deepEqual(e.payload, kameo.pack('boom'))
    return true
  })
  await assert.rejects(counter.ask('nope'), (e) => {
    assert.ok(e instanceof kameo.UnknownMessage)
    assert.equal(e.code, 'KAMEO_UNKNOWN_MESSAGE')
    assert.equal(e.actorRemoteId, 'polywire.test.Counter')
    assert.equal(e.messageRemoteId, 'nope')
    return true
  })
  await assert.rejects(counter.ask('inc', 'not a struct'), kameo.DeserializeMessage)

  const started = Date.now()
  await assert.rejects(counter.ask('sleep', { ms: 3000 }, { replyTimeout: 0.2 }), (e) => e instanceof kameo.ReplyTimeout && e.code === 'KAMEO_REPLY_TIMEOUT')
  assert.ok(Date.now() - started < 2500)

  const doomed = await node.lookup('doomed')
  assert.equal(await kn.command('stop'), 'STOPPED')
  await assert.rejects(doomed.ask('get'), (e) => e instanceof kameo.ActorNotRunning || e instanceof kameo.ActorStopped)

  assert.equal(await within(node.lookup('no-such-actor'), 'lookup'), null)
  const all = []
  for await (const ref of node.lookupAll('counter')) all.push(ref)
  assert.equal(all.length, 1)
  assert.ok(all[0].equals(counter))
})

test('kameo asks an actor Node hosts', async (t) => {
  const binary = kameoNodeBinary(t)
  if (!binary) return
  const kn = await startKameoNode(binary)
  t.after(() => kn.kill())
  const node = await Node.start({ bootstrap: [kn.addr] })
  t.after(() => node.close())

  const told = []
  const handler = {
    ask(message, value) {
      if (message === 'echo') return value.value
      if (message === 'fail') throw new kameo.HandlerError({ why: value.message })
      throw new kameo.UnknownMessage()
    },
    async tell(message, value) {
      told.push([message, value])
    },
  }
  const me = await node.register('js_side', handler, { remoteId: 'polywire.test.Peerside' })
  assert.equal(me.peerId, node.peerId)
  assert.equal(me.remoteId, 'polywire.test.Peerside')

  assert.equal(await kn.command('ask js_side echo {"a":[1,2,{"b":null}],"s":"é"}'), 'REPLY {"a":[1,2,{"b":null}],"s":"é"}')
  assert.equal(await kn.command('ask js_side fail "bad input"'), 'ERROR HandlerError {"why":"bad input"}')
  assert.equal(await kn.command('tell js_side inc 3'), 'TOLD')
  for (let i = 0; i < 100 && told.length === 0; i++) await new Promise((r) => setTimeout(r, 20))
  assert.deepEqual(told, [['inc', { amount: 3 }]])

  await node.register(
    'js_fn',
    async (message, value) => {
      await null
      if (message === 'fail') throw new Error(`no: ${value.message}`)
      return value.value * 2
    },
    { remoteId: 'polywire.test.Peerside' },
  )
  assert.equal(await kn.command('ask js_fn echo 21'), 'REPLY 42')
  assert.equal(await kn.command('ask js_fn fail "x"'), 'ERROR HandlerError "no: x"')

  // A raw handler: the message's bytes in, the reply's bytes out (anything else
  // is a SerializeReply error).
  await node.register('js_raw', (message, payload) => (message === 'echo' ? payload : 'not bytes'), {
    remoteId: 'polywire.test.Peerside',
    raw: true,
  })
  const raw = await node.lookup('js_raw')
  assert.deepEqual(await raw.ask('echo', kameo.pack([1, 'x']), { raw: true }), kameo.pack([1, 'x']))
  await assert.rejects(raw.ask('other', kameo.pack(null), { raw: true }), (e) => {
    assert.ok(e instanceof kameo.KameoRemoteError)
    assert.equal(e.code, 'KAMEO_SERIALIZE_REPLY')
    assert.equal(e.variant, 'SerializeReply')
    assert.match(e.message, /reply must be a Uint8Array, Buffer or ArrayBuffer, got string/)
    return true
  })

  const own = await node.lookup('js_side')
  assert.ok(own.equals(me))
  assert.deepEqual(await own.ask('echo', { value: [1, 2] }), [1, 2])

  await assert.rejects(node.register('js_side', handler, { remoteId: 'polywire.test.Peerside' }), (e) => e instanceof kameo.RegistryError && e.code === 'KAMEO_NAME_ALREADY_REGISTERED')
  assert.equal(await node.unregister('js_side'), true)
  assert.equal(await node.unregister('js_side'), false)
  assert.ok(['NOTFOUND', 'ERROR ActorNotRunning null'].includes(await kn.command('ask js_side echo 1')))
})

function closedPort() {
  return new Promise((resolve) => {
    const s = net.createServer()
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

test('faults fail and never hang', async (t) => {
  const binary = kameoNodeBinary(t)
  if (!binary) return
  const port = await closedPort()
  const node = await Node.start({ dialTimeout: 2 })
  const started = Date.now()
  await assert.rejects(node.dial(`/ip4/127.0.0.1/tcp/${port}`), (e) => e instanceof kameo.DialFailure && e.code === 'KAMEO_DIAL_FAILURE')
  assert.ok(Date.now() - started < 3000)
  await assert.rejects(node.dial('not a multiaddr'), kameo.KameoError)
  await node.close()
  await assert.rejects(Node.start({ bootstrap: [`/ip4/127.0.0.1/tcp/${port}`], dialTimeout: 2 }), kameo.DialFailure)

  // The kameo node dies in the middle of an ask: the ask fails.
  const kn = await startKameoNode(binary)
  const peer = await Node.start({ bootstrap: [kn.addr] })
  t.after(() => peer.close())
  let counter = await peer.lookup('counter')
  // (Each rejection is expected from the start, so it is never unhandled.)
  let failed = assert.rejects(within(counter.ask('sleep', { ms: 10000 }), 'ask'), (e) => e instanceof kameo.ConnectionClosed || e instanceof kameo.RemoteIoError)
  await new Promise((r) => setTimeout(r, 300))
  kn.kill()
  await failed

  // close() with an ask in flight rejects it.
  const other = await startKameoNode(binary)
  t.after(() => other.kill())
  await peer.dial(other.addr)
  counter = await peer.lookup('counter')
  assert.equal(counter.peerId, other.peerId)
  failed = assert.rejects(within(counter.ask('sleep', { ms: 10000 }), 'ask'), (e) => e instanceof kameo.NodeClosed && e.code === 'KAMEO_NODE_CLOSED')
  await new Promise((r) => setTimeout(r, 200))
  await peer.close()
  await failed
  assert.equal(peer.closed, true)
  await assert.rejects(peer.lookup('counter'), kameo.NodeClosed)
  await peer.close()
})

function count(dir) {
  return fs.readdirSync(dir).length
}

test('100 start/close cycles leak no threads or descriptors', async () => {
  for (let i = 0; i < 3; i++) await (await Node.start()).close()
  const threads = count('/proc/self/task')
  const fds = count('/proc/self/fd')
  for (let i = 0; i < 100; i++) {
    const node = await Node.start()
    assert.equal(node.listenAddrs.length, 1)
    assert.ok(node.listenAddrs[0].endsWith(`/p2p/${node.peerId}`))
    await node.close()
  }
  // The start and close threads end on their own; give them a moment.
  await new Promise((r) => setTimeout(r, 200))
  assert.ok(count('/proc/self/task') <= threads + 4, `threads ${threads} -> ${count('/proc/self/task')}`)
  assert.ok(count('/proc/self/fd') <= fds + 4, `descriptors ${fds} -> ${count('/proc/self/fd')}`)
})

test('arguments are checked', async () => {
  await assert.rejects(Node.start({ keypairSeed: Buffer.alloc(5) }), (e) => e instanceof kameo.KameoError && e.code === 'KAMEO_INVALID_ARGUMENT')
  await assert.rejects(Node.start({ listen: [1] }), TypeError)
  await assert.rejects(Node.start({ listen: ['/ip4/203.0.113.7/tcp/0'] }), kameo.NodeStartError)
  await assert.rejects(Node.start({ listen: ['not a multiaddr'] }), (e) => e.code === 'KAMEO_INVALID_ARGUMENT')
  assert.throws(() => new Node(), TypeError)
  const seed = Buffer.from(Array.from({ length: 32 }, (_, i) => i))
  const a = await Node.start({ keypairSeed: seed })
  const peerId = a.peerId
  await a.close()
  const b = await Node.start({ keypairSeed: seed })
  try {
    assert.equal(b.peerId, peerId)
    await assert.rejects(b.register('x', {}, { remoteId: 'r' }), TypeError)
    await assert.rejects(b.lookup(5), TypeError)
    const ref = await b.register('x', (m, v) => v, { remoteId: 'r' })
    await assert.rejects(ref.ask('m', 'v', { raw: true }), TypeError)
    await assert.rejects(ref.ask('m', null, { replyTimeout: -1 }), kameo.KameoError)
    assert.deepEqual(await ref.ask('m', { k: 1 }), { k: 1 })
  } finally {
    await b.close()
  }
})

test('the Node peer example of docs/kameo.md runs against kameo', async (t) => {
  // The block marked id=kameo-peer-js, as written.
  const binary = kameoNodeBinary(t)
  if (!binary) return
  const os = require('node:os')
  const { parse } = require('./doc_blocks.js')
  const PKG = path.dirname(require.resolve('polywire/package.json'))
  const page = fs.readFileSync(path.join(__dirname, '..', 'docs', 'kameo.md'), 'utf8')
  const blocks = parse(page, 'docs/kameo.md').filter((b) => b.marks.id === 'kameo-peer-js')
  assert.equal(blocks.length, 1)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polywire-docs-peer-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.mkdirSync(path.join(dir, 'node_modules'))
  fs.symlinkSync(PKG, path.join(dir, 'node_modules', 'polywire'), 'dir')
  fs.writeFileSync(path.join(dir, 'example.mjs'), blocks[0].text)
  const kn = await startKameoNode(binary)
  t.after(() => kn.kill())
  const child = spawn(process.execPath, ['example.mjs', kn.addr, '4'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) => child.on('exit', resolve))
  const deadline = Date.now() + WAIT
  let answer = await kn.command('ask greeter echo "hi from Rust"')
  while (answer === 'NOTFOUND' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100))
    answer = await kn.command('ask greeter echo "hi from Rust"')
  }
  assert.equal(answer, 'REPLY "hi from Rust"')
  assert.equal(await within(exited, 'the example'), 0, err)
  assert.deepEqual(out.trim().split('\n'), ['5', 'boom'])
})
