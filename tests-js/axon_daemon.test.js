'use strict'
// polywire/axon DaemonClient, the client of a local upstream AXON daemon's
// Unix socket. Against a fake daemon (tests-js/fake_axon_daemon.js, written
// from upstream's IPC rules): every command and reply shape, every error code
// typed, events pushed between replies, replies out of order, many commands in
// flight, the 64 KiB line limit, abrupt closes, timeouts; all bounded in time.
// Against a real upstream daemon when POLYWIRE_AXON_DAEMON_HEAD names its
// binary (the end of the file; skipped otherwise).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const net = require('node:net')
const { spawn, spawnSync } = require('node:child_process')

const { PolywireError, AxonError } = require('polywire')
const axon = require('polywire/axon')
const {
  DaemonClient, AxonDaemonError, DaemonInvalidCommandError, DaemonCommandTooLargeError, DaemonPeerNotFoundError,
  DaemonSelfSendError, DaemonPeerUnreachableError, DaemonTimeoutError, DaemonInternalError, DaemonUnavailableError,
  DaemonDisconnectedError, DaemonClosedError, DaemonReplyTimeoutError, DaemonProtocolError,
} = axon
// The token decoder is internal (not exported): reach it beside the installed axon module,
// so this also runs against the packed package.
const { _decodeToken: decodeToken } = require(path.join(path.dirname(require.resolve('polywire/axon')), 'axon_daemon.js'))
const { FakeDaemon, TEXTS, newKey } = require('./fake_axon_daemon.js')

function sockDir() {
  return fs.mkdtempSync('/tmp/pwj-') // short: a socket path has at most 107 bytes
}

async function withDaemon(body, options = {}) {
  const dir = sockDir()
  const file = path.join(dir, 'axon.sock')
  const fake = await new FakeDaemon(file, options).start()
  const client = await DaemonClient.connect({ path: file, timeout: 5 })
  try {
    return await body(fake, client, file)
  } finally {
    await client.close()
    await fake.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function nextEvent(client, predicate = () => true, ms = 5000) {
  let timer
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('no event in time')), ms)))
  const find = (async () => {
    for await (const e of client.events()) if (predicate(e)) return e
    throw new Error('events ended')
  })()
  try {
    return await Promise.race([find, timeout])
  } finally {
    clearTimeout(timer)
  }
}

async function rejectsWith(promise, cls, code, message = undefined) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof cls, `${e?.constructor?.name}: ${e?.message}`)
    assert.equal(e.code, code)
    if (message !== undefined) {
      if (message instanceof RegExp) assert.match(e.message, message)
      else assert.equal(e.message, message)
    }
    return true
  })
}

// ---------------------------------------------------------------- the commands

test('whoami, status and peers', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const a = fake.add(1, { rttMs: 1.5 })
    const b = fake.add(2, { status: 'disconnected', source: 'discovered', addr: '127.0.0.1:7200' })
    const me = await client.whoami()
    assert.deepEqual(me, { agent_id: fake.agentId, public_key: fake.publicKey, name: 'alice', version: '0.7.2', uptime_secs: me.uptime_secs })
    const status = await client.status()
    assert.deepEqual(Object.keys(status).sort(), ['messages_received', 'messages_sent', 'peers_connected', 'uptime_secs'])
    assert.equal(status.peers_connected, 1)
    const peers = await client.peers()
    assert.deepEqual(peers.map((p) => p.agent_id), [a, b].sort())
    const byId = Object.fromEntries(peers.map((p) => [p.agent_id, p]))
    assert.deepEqual(byId[a], { agent_id: a, addr: '127.0.0.1:7100', status: 'connected', rtt_ms: 1.5, source: 'static' })
    assert.ok(!('rtt_ms' in byId[b]))
    const ids = fake.commands.map((c) => c.req_id)
    assert.equal(new Set(ids).size, 3)
    assert.ok(ids.every((i) => typeof i === 'string'))
  }, { name: 'alice' }))

test('a request resolves to the reply envelope, which the daemon also broadcasts', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const peer = fake.add(1)
    const reply = await client.send(peer, { question: 'hello' })
    assert.equal(reply.kind, 'error')
    assert.equal(reply.payload.code, 'unhandled')
    assert.deepEqual(Object.keys(reply), ['id', 'kind', 'ref', 'payload', 'from', 'to'])
    assert.equal(reply.from, peer)
    assert.equal(reply.to, fake.agentId)
    assert.equal(reply.payload.message, `no application handler registered for request '${reply.ref}'`)
    const sent = fake.commands.at(-1)
    assert.equal(sent.kind, 'request')
    assert.deepEqual(sent.payload, { question: 'hello' })
    assert.equal(sent.timeout_secs, null)
    const event = await nextEvent(client)
    assert.deepEqual(event, { event: 'inbound', from: peer, envelope: reply })
  }))

test('a request with a reply, timeoutSecs and ref', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const peer = fake.add(1, { reply: (req) => ['response', { echo: req.payload, ref: req.ref ?? null }] })
    const ref = '6FC0EC4F-E59F-4BEA-9D57-0D9FDD1108F1'
    const reply = await client.send(peer, { n: 1 }, { timeoutSecs: 7, ref: `{${ref}}` })
    assert.equal(reply.kind, 'response')
    assert.deepEqual(reply.payload, { echo: { n: 1 }, ref: ref.toLowerCase() })
    assert.equal(fake.commands.at(-1).timeout_secs, 7n)
    await client.send(peer, {}, { ref: `urn:uuid:${ref.toLowerCase()}` })
    await client.send(peer, {}, { ref: ref.replace(/-/g, ''), timeoutSecs: 2n ** 64n - 1n })
    assert.deepEqual(fake.commands.slice(-2).map((c) => c.ref), [ref.toLowerCase(), ref.toLowerCase()])
    // A big timeout is written as digits, never in exponent form.
    assert.match(fake.lines.at(-1).toString(), /"timeout_secs":18446744073709551615/)
  }))

test('a message resolves to its id', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const peer = fake.add(1)
    const id = await client.send(peer, { data: [1, 2] }, { kind: 'message', ref: '6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1' })
    assert.match(id, /^[0-9a-f-]{36}$/)
    assert.equal(fake.commands.at(-1).kind, 'message')
    assert.ok(!fake.lines.at(-1).toString().includes('timeout_secs'))
    assert.equal((await client.status()).messages_sent, 1)
  }))

test('every daemon error code is typed', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const gone = fake.add(1, { reply: 'unreachable' })
    const slow = fake.add(2, { reply: 'hang' })
    const cases = [
      [client.send(`ed25519.${'0'.repeat(32)}`, {}), DaemonPeerNotFoundError, 'peer_not_found'],
      [client.send(fake.agentId, {}), DaemonSelfSendError, 'self_send'],
      [client.send(gone, {}, { kind: 'message' }), DaemonPeerUnreachableError, 'peer_unreachable'],
      [client.send(slow, {}, { timeoutSecs: 1 }), DaemonTimeoutError, 'timeout'],
      [client.addPeer({ pubkey: fake.publicKey, addr: '127.0.0.1:1' }), DaemonSelfSendError, 'self_send'],
      [client.addPeer({ pubkey: fake.peers.get(gone).pubkey, addr: '127.0.0.1:1' }), DaemonInvalidCommandError, 'invalid_command'],
      [client.addPeer({ pubkey: newKey(9)[1], addr: 'unresolvable.invalid:1' }), DaemonInvalidCommandError, 'invalid_command'],
    ]
    for (const [promise, cls, code] of cases) {
      await assert.rejects(promise, (e) => {
        assert.ok(e instanceof cls && e instanceof AxonDaemonError && e instanceof AxonError && e instanceof PolywireError)
        assert.equal(e.code, code)
        assert.equal(e.message, TEXTS[code])
        assert.equal(e.name, cls.name)
        assert.equal(e.offset, null)
        return true
      })
    }
  }))

test('internal_error, codes of newer daemons, and a reply without a message', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const replies = [
      { ok: false, error: 'internal_error', message: TEXTS.internal_error },
      { ok: false, error: 'overloaded_v99', message: 'a code of a newer daemon' },
      { ok: false, error: 'timeout' },
    ]
    fake.beforeCommand = async (command, c) => {
      c.write({ ...replies.shift(), req_id: command.req_id })
      return 'ignore'
    }
    await rejectsWith(client.status(), DaemonInternalError, 'internal_error')
    await assert.rejects(client.status(), (e) => e.constructor === AxonDaemonError && e.code === 'overloaded_v99' && e.message === 'a code of a newer daemon')
    await rejectsWith(client.status(), DaemonTimeoutError, 'timeout', TEXTS.timeout)
  }))

test('command_too_large from the daemon fails every command in flight', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const seen = []
    fake.beforeCommand = async (command, c) => {
      seen.push(command)
      if (seen.length === 3) {
        c.write({ ok: false, error: 'command_too_large', message: TEXTS.command_too_large })
        c.socket.end()
      }
      return 'ignore'
    }
    const results = await Promise.allSettled([client.status(), client.peers(), client.whoami()])
    for (const r of results) {
      assert.equal(r.status, 'rejected')
      assert.ok(r.reason instanceof DaemonCommandTooLargeError)
      assert.ok(r.reason.message.includes(TEXTS.command_too_large))
    }
    await rejectsWith(client.status(), DaemonDisconnectedError, 'AXON_DAEMON_DISCONNECTED')
  }))

// ---------------------------------------------------------------- demultiplexing

test('events pushed between replies, with many commands in flight', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const peer = fake.add(1, { reply: (req) => ['response', { n: req.payload.n }] })
    const [, strangerKey, stranger] = newKey(50)
    let count = 0
    fake.beforeCommand = async () => {
      count++
      fake.inbound(peer, 'message', { before: count })
      fake.pairRequest(stranger, strangerKey, count % 2 ? '127.0.0.1:9' : null)
    }
    const calls = []
    for (let n = 0; n < 40; n++) {
      calls.push(client.send(peer, { n }), client.status(), client.send(peer, { n }, { kind: 'message' }))
    }
    const results = await Promise.all(calls)
    for (let n = 0; n < 40; n++) {
      assert.deepEqual(results[3 * n].payload, { n })
      assert.equal(typeof results[3 * n + 1].uptime_secs, 'number')
      assert.equal(typeof results[3 * n + 2], 'string')
    }
    const events = []
    for await (const e of client.events()) {
      events.push(e)
      if (events.length === 280) break
    }
    const inbound = events.filter((e) => e.event === 'inbound')
    const pairs = events.filter((e) => e.event === 'pair_request')
    assert.deepEqual(inbound.filter((e) => 'before' in e.envelope.payload).map((e) => e.envelope.payload.before), Array.from({ length: 120 }, (_, i) => i + 1))
    assert.equal(inbound.filter((e) => e.envelope.kind === 'response').length, 40)
    assert.equal(pairs.length, 120)
    assert.deepEqual(pairs[0], { event: 'pair_request', agent_id: stranger, pubkey: strangerKey, addr: '127.0.0.1:9' })
    assert.ok(!('addr' in pairs[1]))
    assert.equal(client.droppedEvents, 0)
  }))

test('replies are matched by req_id in any order', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const held = []
    fake.beforeCommand = async (command, c) => {
      held.push([command, c])
      if (held.length === 10) {
        for (const [cmd, cl] of held.slice().reverse()) {
          cl.write({ event: 'inbound', from: 'x', envelope: {} })
          cl.write({ ok: true, agent_id: `id-${cmd.req_id}`, public_key: 'k', version: 'v', uptime_secs: Number(cmd.req_id), req_id: cmd.req_id })
        }
        c.write({ ok: true, agent_id: 'stray', req_id: 'nobody' })
        c.write({ ok: true, agent_id: 'stray' })
      }
      return 'ignore'
    }
    const results = await Promise.all(Array.from({ length: 10 }, () => client.whoami()))
    const sent = held.map(([c]) => Number(c.req_id))
    assert.deepEqual(results.map((r) => r.uptime_secs), sent)
    assert.deepEqual(results.map((r) => r.agent_id), sent.map((i) => `id-${i}`))
  }))

test('500 commands in flight are all answered', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const peer = fake.add(1, { reply: (req) => ['response', req.payload] })
    const results = await Promise.all(Array.from({ length: 500 }, (_, i) => (i % 2 ? client.send(peer, { i }) : client.send(peer, { i }, { kind: 'message' }))))
    assert.deepEqual(results.filter((_, i) => i % 2).map((r) => r.payload.i), Array.from({ length: 250 }, (_, i) => 2 * i + 1))
    assert.equal(new Set(results.filter((_, i) => i % 2 === 0)).size, 250)
    assert.equal(client.droppedEvents, 0)
  }))

test('maxEvents keeps the newest', { timeout: 30000 }, async () => {
  const dir = sockDir()
  const file = path.join(dir, 'axon.sock')
  const fake = await new FakeDaemon(file).start()
  try {
    const client = await DaemonClient.connect({ path: file, maxEvents: 3 })
    await client.status() // the daemon has the client: it gets the events
    for (let i = 0; i < 5; i++) fake.inbound(`ed25519.${'1'.repeat(32)}`, 'message', { i })
    await client.status()
    assert.equal(client.droppedEvents, 2)
    const got = []
    for await (const e of client.events()) {
      got.push(e.envelope.payload.i)
      if (got.length === 3) break
    }
    assert.deepEqual(got, [2, 3, 4])
    await client.close()
    const none = await DaemonClient.connect({ path: file, maxEvents: 0 })
    await none.status()
    fake.inbound(`ed25519.${'1'.repeat(32)}`, 'message', {})
    await none.status()
    assert.equal(none.droppedEvents, 1)
    await none.close()
  } finally {
    await fake.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('10,000 events nobody reads: the newest maxEvents are kept', { timeout: 30000 }, () =>
  withDaemon(async (fake, client, file) => {
    const few = await DaemonClient.connect({ path: file, maxEvents: 5 })
    await few.status()
    await client.status()
    for (let i = 0; i < 10000; i++) fake.inbound(`ed25519.${'1'.repeat(32)}`, 'message', { i })
    await few.status()
    await client.status()
    assert.equal(few.droppedEvents, 9995)
    assert.equal(client.droppedEvents, 10000 - 1024)
    const got = []
    for await (const e of few.events()) {
      got.push(e.envelope.payload.i)
      if (got.length === 5) break
    }
    assert.deepEqual(got, [9995, 9996, 9997, 9998, 9999])
    await few.close()
  }))

test('v0.7.2: a parse error without req_id goes to the oldest command', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    // A daemon without add_peer (before v0.6.0) that does not echo req_id (v0.7.2).
    await rejectsWith(client.addPeer({ pubkey: newKey(3)[1], addr: '127.0.0.1:9' }), DaemonInvalidCommandError, 'invalid_command', TEXTS.invalid_command)
    assert.equal((await client.whoami()).agent_id, fake.agentId)
  }, { echoParseReqId: false, commands: ['send', 'peers', 'status', 'whoami'] }))

// ---------------------------------------------------------------- limits and failures

test('lines over 64 KiB are refused before sending; exactly 64 KiB is sent', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const peer = fake.add(1)
    const probe = JSON.stringify({ cmd: 'send', to: peer, kind: 'message', payload: { d: '' }, req_id: '1' })
    await client.send(peer, { d: 'x'.repeat(65536 - probe.length) }, { kind: 'message' })
    assert.equal(fake.lines.at(-1).length, 65536)
    const before = fake.lines.length
    for (const payload of [{ d: 'x'.repeat(65537 - probe.length) }, { d: '\u00e9'.repeat(32768) }]) {
      await rejectsWith(client.send(peer, payload, { kind: 'message' }), DaemonCommandTooLargeError, 'command_too_large', /65536/)
    }
    assert.equal(fake.lines.length, before)
    assert.equal((await client.whoami()).agent_id, fake.agentId)
  }))

test('values the daemon would refuse are refused before sending', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const peer = fake.add(1)
    const nested = {}
    let inner = nested
    for (let i = 0; i < 125; i++) inner = inner.a = {}
    await client.send(peer, nested, { kind: 'message' }) // 126 levels: the daemon's limit exactly
    const before = fake.lines.length
    inner.a = {}
    const circular = {}
    circular.self = circular
    const bad = [
      [() => client.send(peer, nested, { kind: 'message' }), DaemonInvalidCommandError, /nests 127 deep/],
      [() => client.send(peer, { s: '\ud800' }, { kind: 'message' }), DaemonInvalidCommandError, /unpaired surrogate/],
      [() => client.send('\udc00', {}, { kind: 'message' }), DaemonInvalidCommandError, /unpaired surrogate/],
      [() => client.send(peer, circular), DaemonInvalidCommandError, /circular/i],
      [() => client.send(peer, { n: 1n }), TypeError, /BigInt/],
      [() => client.send(peer, [1]), TypeError, /payload must be an object/],
      [() => client.send(peer, new Date(0)), TypeError, /payload must be an object/],
      [() => client.send(peer, {}, { kind: 'notify' }), DaemonInvalidCommandError, /kind must be/],
      [() => client.send(peer, {}, { timeoutSecs: 0 }), DaemonInvalidCommandError, /timeout_secs must be >= 1/],
      [() => client.send(peer, {}, { timeoutSecs: 2n ** 64n }), DaemonInvalidCommandError, /at most/],
      [() => client.send(peer, {}, { kind: 'message', timeoutSecs: 5 }), DaemonInvalidCommandError, /only valid for request/],
      [() => client.send(peer, {}, { timeoutSecs: 1.5 }), RangeError, /timeoutSecs/],
      [() => client.send(peer, {}, { timeoutSecs: '5' }), TypeError, /timeoutSecs/],
      [() => client.send(peer, {}, { ref: 'not-a-uuid' }), DaemonInvalidCommandError, /ref must be a UUID/],
      [() => client.send(peer, {}, { ref: '{6fc0ec4fe59f4bea9d570d9fdd1108f1}' }), DaemonInvalidCommandError, /UUID/],
      [() => client.send(peer, {}, { ref: 'URN:uuid:6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1' }), DaemonInvalidCommandError, /UUID/],
    ]
    for (const [call, cls, text] of bad) {
      await assert.rejects(call(), (e) => {
        assert.ok(e instanceof cls, `${e.constructor.name}: ${e.message}`)
        assert.match(e.message, text)
        assert.ok(e instanceof PolywireError)
        assert.equal(e.code, cls === TypeError || cls === RangeError ? 'AXON_INVALID_ARGUMENT' : 'invalid_command')
        return true
      })
    }
    // A backslash before "ud800" in a string is not an escape.
    await client.send(peer, { s: '\\ud800' }, { kind: 'message' })
    assert.equal(fake.lines.length, before + 1)
  }))

test('the fake daemon refuses what the client refuses (lines written raw)', { timeout: 30000 }, async () => {
  const dir = sockDir()
  const file = path.join(dir, 'axon.sock')
  const fake = await new FakeDaemon(file).start()
  const peer = fake.add(1)
  const socket = net.createConnection({ path: file })
  await new Promise((resolve) => socket.once('connect', resolve))
  let buf = ''
  const lines = []
  let wake = null
  socket.on('data', (d) => {
    buf += d.toString()
    let nl
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, nl)))
      buf = buf.slice(nl + 1)
    }
    wake?.()
  })
  const next = async () => {
    while (lines.length === 0) await new Promise((resolve) => (wake = resolve))
    return lines.shift()
  }
  const raw = async (line) => {
    socket.write(Buffer.isBuffer(line) ? Buffer.concat([line, Buffer.from('\n')]) : `${line}\n`)
    return next()
  }
  try {
    const deep = '{"a":'.repeat(126) + '{}' + '}'.repeat(126)
    assert.equal((await raw(`{"cmd":"send","to":"${peer}","kind":"message","payload":${deep.slice(5, -1)},"req_id":"1"}`)).ok, true)
    assert.deepEqual(await raw(`{"cmd":"send","to":"${peer}","kind":"message","payload":${deep},"req_id":"2"}`), { ok: false, error: 'invalid_command', message: TEXTS.invalid_command })
    assert.equal((await raw('{"cmd":"status","req_id":5}')).error, 'invalid_command')
    assert.equal((await raw('{"cmd":"status","req_id":"7","extra":1}')).req_id, '7')
    assert.deepEqual(await raw('{"cmd":"status","cmd":"peers","req_id":"8"}'), { ok: false, error: 'invalid_command', message: TEXTS.invalid_command, req_id: '8' })
    assert.deepEqual(await raw(Buffer.from([0xff, 0xfe])), { ok: false, error: 'invalid_command', message: TEXTS.invalid_command })
    socket.write('x'.repeat(65537))
    assert.deepEqual(await next(), { ok: false, error: 'command_too_large', message: TEXTS.command_too_large })
    await new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', resolve)))
  } finally {
    socket.destroy()
    await fake.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('an abrupt close fails every command in flight', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const slow = fake.add(1, { reply: 'hang' })
    await client.status()
    fake.inbound(slow, 'message', { kept: true })
    await client.status()
    const pending = [1, 2, 3].map(() => client.send(slow, {}, { timeoutSecs: 20 }))
    pending.push(client.peers())
    await sleep(200)
    fake.dropClients()
    const t0 = Date.now()
    const results = await Promise.allSettled(pending)
    assert.ok(Date.now() - t0 < 2000)
    for (const r of results) assert.ok(r.status === 'rejected' && r.reason instanceof DaemonDisconnectedError, String(r.reason))
    assert.equal(results[0].reason.code, 'AXON_DAEMON_DISCONNECTED')
    await rejectsWith(client.whoami(), DaemonDisconnectedError, 'AXON_DAEMON_DISCONNECTED')
    const got = []
    await assert.rejects(async () => {
      for await (const e of client.events()) got.push(e)
    }, DaemonDisconnectedError)
    assert.deepEqual(got[0].envelope.payload, { kept: true })
  }))

test('the daemon closing on a command', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    fake.beforeCommand = async (command) => (command.cmd === 'peers' ? 'close' : undefined)
    await client.status()
    await rejectsWith(client.peers(), DaemonDisconnectedError, 'AXON_DAEMON_DISCONNECTED')
  }))

test('garbage from the daemon is a protocol error', { timeout: 30000 }, async () => {
  for (const garbage of [Buffer.from('not json'), Buffer.from('[1,2]'), Buffer.from('{"ok":true,"req_id":"1"'), Buffer.from([0xff])]) {
    await withDaemon(async (fake, client) => {
      fake.beforeCommand = async (command, c) => {
        c.socket.write(Buffer.concat([garbage, Buffer.from('\n')]))
        return 'ignore'
      }
      await rejectsWith(client.status(), DaemonProtocolError, 'AXON_DAEMON_PROTOCOL')
      await rejectsWith(client.peers(), DaemonProtocolError, 'AXON_DAEMON_PROTOCOL')
    })
  }
})

test('replies missing their fields are protocol errors', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const peer = fake.add(1)
    const replies = [{ ok: true, msg_id: 5 }, { ok: true, response: null }, { ok: true, peers: {} }, { ok: true, agent_id: 1 }, {}]
    fake.beforeCommand = async (command, c) => {
      c.write({ ...replies.shift(), req_id: command.req_id })
      return 'ignore'
    }
    for (const call of [
      () => client.send(peer, {}, { kind: 'message' }),
      () => client.send(peer, {}),
      () => client.peers(),
      () => client.addPeer({ pubkey: newKey(7)[1], addr: '127.0.0.1:1' }),
      () => client.status(),
    ]) {
      await rejectsWith(call(), DaemonProtocolError, 'AXON_DAEMON_PROTOCOL')
    }
  }))

test('no reply in time is a reply timeout, and a late reply is ignored', { timeout: 30000 }, async () => {
  const dir = sockDir()
  const file = path.join(dir, 'axon.sock')
  const fake = await new FakeDaemon(file).start()
  try {
    const held = []
    fake.beforeCommand = async (command, c) => {
      held.push([command, c])
      return 'ignore'
    }
    const client = await DaemonClient.connect({ path: file, timeout: 0.3 })
    const t0 = Date.now()
    await rejectsWith(client.whoami(), DaemonReplyTimeoutError, 'AXON_DAEMON_TIMEOUT')
    const took = Date.now() - t0
    assert.ok(took >= 250 && took < 2000, `${took} ms`)
    const [command, c] = held[0]
    c.write({ ok: true, agent_id: 'late', req_id: command.req_id })
    fake.beforeCommand = null
    assert.equal((await client.whoami()).agent_id, fake.agentId)
    await client.close()
  } finally {
    await fake.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a command waits for the daemon to finish the ones before it', { timeout: 30000 }, async () => {
  const dir = sockDir()
  const file = path.join(dir, 'axon.sock')
  const fake = await new FakeDaemon(file).start()
  try {
    const slow = fake.add(1, { reply: 'hang' })
    const client = await DaemonClient.connect({ path: file, timeout: 0.5 })
    const request = client.send(slow, {}, { timeoutSecs: 1 })
    const peers = await client.peers()
    assert.deepEqual(peers.map((p) => p.agent_id), [slow])
    await rejectsWith(request, DaemonTimeoutError, 'timeout')
    await client.close()
  } finally {
    await fake.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('close fails commands in flight and ends events', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const slow = fake.add(1, { reply: 'hang' })
    await client.status()
    fake.inbound(slow, 'message', { i: 1 })
    await client.status()
    const pending = client.send(slow, {}, { timeoutSecs: 20 }).then(() => null, (e) => e)
    const events = []
    const consumer = (async () => {
      for await (const e of client.events()) events.push(e)
    })()
    await sleep(100)
    await client.close()
    await client.close() // idempotent
    const error = await pending
    assert.ok(error instanceof DaemonClosedError && error.code === 'AXON_DAEMON_CLOSED', String(error))
    await consumer
    assert.deepEqual(events.map((e) => e.envelope.payload), [{ i: 1 }])
    assert.equal(client.closed, true)
    await rejectsWith(client.peers(), DaemonClosedError, 'AXON_DAEMON_CLOSED')
    const after = []
    for await (const e of client.events()) after.push(e)
    assert.deepEqual(after, [])
  }))

test('Symbol.asyncDispose closes the client', { timeout: 30000 }, () =>
  withDaemon(async (fake, client, file) => {
    const other = await DaemonClient.connect(file)
    await other.status()
    await other[Symbol.asyncDispose]()
    assert.equal(other.closed, true)
  }))

test('the daemon drops a 65th client', { timeout: 30000 }, async () => {
  const dir = sockDir()
  const file = path.join(dir, 'axon.sock')
  const fake = await new FakeDaemon(file).start()
  try {
    const clients = []
    for (let i = 0; i < 64; i++) clients.push(await DaemonClient.connect(file))
    await Promise.all(clients.map((c) => c.status()))
    const extra = await DaemonClient.connect(file)
    await rejectsWith(extra.status(), DaemonDisconnectedError, 'AXON_DAEMON_DISCONNECTED')
    await extra.close()
    await Promise.all(clients.map((c) => c.close()))
  } finally {
    await fake.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// ---------------------------------------------------------------- connecting

test('connection failures are DaemonUnavailableError', { timeout: 30000 }, async () => {
  const dir = sockDir()
  try {
    const missing = path.join(dir, 'nothing.sock')
    await rejectsWith(DaemonClient.connect(missing), DaemonUnavailableError, 'AXON_DAEMON_UNAVAILABLE', new RegExp(missing.replace(/[/.]/g, '\\$&')))
    fs.writeFileSync(path.join(dir, 'file'), '')
    await rejectsWith(DaemonClient.connect({ path: path.join(dir, 'file') }), DaemonUnavailableError, 'AXON_DAEMON_UNAVAILABLE')
    await rejectsWith(DaemonClient.connect(`/tmp/${'x'.repeat(200)}`), DaemonUnavailableError, 'AXON_DAEMON_UNAVAILABLE')
    await assert.rejects(DaemonClient.connect({ path: 5 }), (e) => e instanceof TypeError && e.code === 'AXON_INVALID_ARGUMENT' && /path/.test(e.message))
    await assert.rejects(DaemonClient.connect({ path: missing, timeout: 0 }), (e) => e instanceof RangeError && /timeout/.test(e.message))
    assert.throws(() => new DaemonClient(), (e) => e instanceof TypeError && e instanceof PolywireError && /connect/.test(e.message))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('the default path', { timeout: 30000 }, async () => {
  const saved = { AXON_ROOT: process.env.AXON_ROOT, HOME: process.env.HOME }
  const dir = sockDir()
  try {
    process.env.AXON_ROOT = '/srv/axon'
    assert.equal(DaemonClient.defaultPath(), '/srv/axon/axon.sock')
    process.env.AXON_ROOT = ' \u3000'
    process.env.HOME = '/home/me'
    assert.equal(DaemonClient.defaultPath(), '/home/me/.axon/axon.sock')
    delete process.env.AXON_ROOT
    assert.equal(DaemonClient.defaultPath(), '/home/me/.axon/axon.sock')
    delete process.env.HOME
    assert.throws(() => DaemonClient.defaultPath(), DaemonUnavailableError)
    process.env.AXON_ROOT = dir
    const fake = await new FakeDaemon(path.join(dir, 'axon.sock')).start()
    const client = await DaemonClient.connect()
    assert.equal(client.path, path.join(dir, 'axon.sock'))
    assert.equal((await client.whoami()).agent_id, fake.agentId)
    await client.close()
    await fake.stop()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// ---------------------------------------------------------------- addPeer and tokens

// From /work/notes (computed with Python `cryptography`, the seeds 32 x 0x07, 0x2a, 0x00).
const TOKENS = [
  ['axon://6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw@127.0.0.1:7100', '6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw=', 'ed25519.fe812c12f3ab4ce6ac5db69ac352f906'],
  ['axon://GX9rI-FshTLGq8g4-s1ep4m-DHaykgM0A5v6iz02jWE@127.0.0.1:7100', 'GX9rI+FshTLGq8g4+s1ep4m+DHaykgM0A5v6iz02jWE=', 'ed25519.b600306cfa76723fdec395e53a9b3d9f'],
  ['axon://O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik@127.0.0.1:7100', 'O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik=', 'ed25519.139e3940e64b5491722088d9a0d74162'],
]
const KEY_URL = 'O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik'

test('token vectors', () => {
  for (const [token, pubkey, agentId] of TOKENS) assert.deepEqual(decodeToken(token), { pubkey, addr: '127.0.0.1:7100', agentId })
  assert.equal(decodeToken(`axon://${KEY_URL}@ host.example:+80\u3000`).addr, 'host.example:+80')
  assert.equal(decodeToken(`axon://${KEY_URL}@[::1]:7100`).addr, '[::1]:7100')
  assert.equal(decodeToken(`axon://${KEY_URL}@user@host:1`).addr, 'user@host:1')
  // U+FEFF is not Rust whitespace (JavaScript's trim would remove it).
  assert.throws(() => decodeToken(`axon://${KEY_URL}@h:1\ufeff`), { message: "peer token addr has invalid port '1\ufeff'" })
})

const TOKEN_ERRORS = [
  ['http://abc@127.0.0.1:7100', "peer token must start with 'axon://'"],
  [`AXON://${KEY_URL}@127.0.0.1:1`, "peer token must start with 'axon://'"],
  [`axon://${KEY_URL}`, "peer token must contain '@' between pubkey and addr"],
  ['axon://@@127.0.0.1:7100', 'peer token pubkey segment is empty'],
  [`axon://${KEY_URL}@`, 'peer token addr cannot be empty'],
  [`axon://${KEY_URL}@ \t`, 'peer token addr cannot be empty'],
  [`axon://${KEY_URL}@host-without-port`, 'peer token addr must be host:port or ip:port'],
  [`axon://${KEY_URL}@:7100`, 'peer token addr host cannot be empty'],
  [`axon://${KEY_URL}@host:`, "peer token addr has invalid port ''"],
  [`axon://${KEY_URL}@host:65536`, "peer token addr has invalid port '65536'"],
  [`axon://${KEY_URL}@host:-1`, "peer token addr has invalid port '-1'"],
  [`axon://${KEY_URL}@host:+`, "peer token addr has invalid port '+'"],
  [`axon://${KEY_URL}@host:\u0661`, "peer token addr has invalid port '\u0661'"],
  ['axon://!!!@nohost', 'peer token addr must be host:port or ip:port'],
  [`axon://${KEY_URL}=@h:1`, 'peer token pubkey is not valid base64url'],
  [`axon://${KEY_URL.replace(/-/g, '+')}+@h:1`, 'peer token pubkey is not valid base64url'],
  ['axon://O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2il@h:1', 'peer token pubkey is not valid base64url'],
  ['axon://A@h:1', 'peer token pubkey is not valid base64url'],
  ['axon://AQEBAQEBAQE@h:1', 'peer token pubkey must decode to 32 bytes, got 8'],
]

test('token errors: upstream messages', () => {
  for (const [token, message] of TOKEN_ERRORS) {
    assert.throws(() => decodeToken(token), (e) => {
      assert.ok(e instanceof DaemonInvalidCommandError, token)
      assert.equal(e.code, 'invalid_command')
      assert.equal(e.message, message, token)
      return true
    })
  }
})

test('addPeer with a token or { pubkey, addr }', { timeout: 30000 }, () =>
  withDaemon(async (fake, client) => {
    const [token, pubkey, agentId] = TOKENS[0]
    assert.equal(await client.addPeer(token), agentId)
    const c = fake.commands.at(-1)
    assert.deepEqual({ ...c, req_id: null }, { cmd: 'add_peer', req_id: null, pubkey, addr: '127.0.0.1:7100' })
    const [, pubkey2, agent2] = TOKENS[1]
    assert.equal(await client.addPeer({ pubkey: ` ${pubkey2}\n`, addr: 'localhost:7200' }), agent2)
    assert.equal(fake.commands.at(-1).pubkey, pubkey2)
    const peers = Object.fromEntries((await client.peers()).map((p) => [p.agent_id, p]))
    assert.equal(peers[agentId].addr, '127.0.0.1:7100')
    assert.equal(peers[agent2].addr, '127.0.0.1:7200')
    await rejectsWith(client.addPeer(token), DaemonInvalidCommandError, 'invalid_command')
    for (const [arg, text] of [
      [{ pubkey: 'not base64!', addr: 'h:1' }, /pubkey is not valid base64/],
      [{ pubkey: Buffer.alloc(31, 120).toString('base64'), addr: 'h:1' }, /32 bytes, got 31/],
      [{ pubkey: pubkey.replace(/=+$/, ''), addr: 'h:1' }, /pubkey is not valid base64/],
    ]) {
      await rejectsWith(client.addPeer(arg), DaemonInvalidCommandError, 'invalid_command', text)
    }
    for (const arg of [undefined, null, 5, [token], { pubkey }, { addr: 'h:1' }]) {
      await assert.rejects(client.addPeer(arg), (e) => e instanceof TypeError && e.code === 'AXON_INVALID_ARGUMENT')
    }
  }))

// ---------------------------------------------------------------- a real upstream daemon
//
// POLYWIRE_AXON_DAEMON_HEAD: an `axon` binary built from upstream
// hwbehrens/axon (main or v0.7.x) outside this repository. The daemons run in
// one network namespace with only loopback (a holder made with `unshare -rn`,
// each daemon joining it with `nsenter -U -n`): the daemon binds 0.0.0.0 and
// has no flag for 127.0.0.1. The IPC socket is a file and reaches across.

const BINARY = process.env.POLYWIRE_AXON_DAEMON_HEAD
const REAL_SKIP = !BINARY
  ? 'POLYWIRE_AXON_DAEMON_HEAD is not set: the path of an upstream `axon` binary (hwbehrens/axon main or v0.7.x, built outside this repository) runs these tests'
  : ['unshare', 'nsenter', 'ip'].some((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0)
    ? 'unshare, nsenter and ip are needed: the real daemons run in a loopback-only network namespace'
    : false

class RealDaemons {
  constructor(base) {
    this.base = base
    this.daemons = []
  }

  async open() {
    this.holder = spawn('unshare', ['-rn', 'sh', '-c', 'ip link set lo up && echo up && exec cat'], { stdio: ['pipe', 'pipe', 'pipe'] })
    const line = await new Promise((resolve) => {
      let out = ''
      this.holder.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(out.trim())
      })
      this.holder.on('exit', () => resolve(out.trim()))
    })
    assert.equal(line, 'up', 'a loopback-only network namespace (unshare -rn)')
    return this
  }

  async start(name, port) {
    const root = path.join(this.base, name)
    fs.mkdirSync(root, { recursive: true, mode: 0o700 })
    fs.writeFileSync(path.join(root, 'config.yaml'), `port: ${port}\n`)
    const addr = `127.0.0.1:${port}`
    const ident = spawnSync(BINARY, ['--state-root', root, 'identity', '--json', '--addr', addr], { encoding: 'utf8', timeout: 15000 })
    assert.equal(ident.status, 0, ident.stderr)
    const id = JSON.parse(ident.stdout)
    const log = fs.openSync(path.join(root, 'daemon.log'), 'w')
    const proc = spawn('nsenter', ['-t', String(this.holder.pid), '-U', '-n', '--', BINARY, '--state-root', root, 'daemon', '--port', String(port), '--disable-mdns'], { stdio: ['ignore', log, log] })
    const d = { root, addr, socket: path.join(root, 'axon.sock'), agentId: id.agent_id, publicKey: id.public_key, token: id.uri, proc, log }
    d.kill = async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((resolve) => proc.once('exit', resolve))
        proc.kill('SIGKILL')
        await exited
      }
    }
    this.daemons.push(d)
    const deadline = Date.now() + 15000
    while (!fs.existsSync(d.socket)) {
      assert.ok(Date.now() < deadline && proc.exitCode === null, `the daemon did not start: ${fs.readFileSync(path.join(root, 'daemon.log'), 'utf8')}`)
      await sleep(20)
    }
    return d
  }

  async stop() {
    for (const d of this.daemons) {
      await d.kill()
      fs.closeSync(d.log)
    }
    if (this.holder) {
      this.holder.stdin.end()
      await new Promise((resolve) => (this.holder.exitCode !== null ? resolve() : this.holder.once('exit', resolve)))
    }
  }
}

async function withReal(body) {
  const dir = sockDir()
  const real = await new RealDaemons(dir).open()
  try {
    await body(real)
  } finally {
    await real.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

test('a real daemon: every command, events, error codes', { skip: REAL_SKIP, timeout: 60000 }, () =>
  withReal(async (real) => {
    const a = await real.start('a', 17201)
    const b = await real.start('b', 17202)
    const ca = await DaemonClient.connect(a.socket)
    const cb = await DaemonClient.connect(b.socket)
    try {
      const me = await ca.whoami()
      assert.equal(me.agent_id, a.agentId)
      assert.equal(me.public_key, a.publicKey)
      assert.equal(typeof me.version, 'string')
      assert.deepEqual(Object.keys(await ca.status()).sort(), ['messages_received', 'messages_sent', 'peers_connected', 'uptime_secs'])
      assert.deepEqual(await ca.peers(), [])
      assert.equal(await ca.addPeer(b.token), b.agentId)
      assert.equal(await cb.addPeer({ pubkey: a.publicKey, addr: a.addr }), a.agentId)
      const peers = await ca.peers()
      assert.deepEqual(peers.map((p) => p.agent_id), [b.agentId])
      const reply = await ca.send(b.agentId, { question: 'hi' }, { timeoutSecs: 10 })
      assert.equal(reply.kind, 'error')
      assert.equal(reply.payload.code, 'unhandled')
      assert.equal(reply.from, b.agentId)
      assert.equal(reply.to, a.agentId)
      const seen = await nextEvent(cb, (e) => e.event === 'inbound' && e.envelope.kind === 'request', 10000)
      assert.equal(seen.from, a.agentId)
      assert.deepEqual(seen.envelope.payload, { question: 'hi' })
      assert.equal(seen.envelope.id, reply.ref)
      const echoed = await nextEvent(ca, (e) => e.event === 'inbound' && e.envelope.id === reply.id, 10000)
      assert.equal(echoed.envelope.kind, 'error')
      const msgId = await ca.send(b.agentId, { data: 1 }, { kind: 'message', ref: reply.ref })
      const got = await nextEvent(cb, (e) => e.event === 'inbound' && e.envelope.id === msgId, 10000)
      assert.equal(got.envelope.kind, 'message')
      assert.deepEqual(got.envelope.payload, { data: 1 })
      assert.equal(got.envelope.ref, reply.ref)
      await rejectsWith(ca.send(`ed25519.${'0'.repeat(32)}`, {}), DaemonPeerNotFoundError, 'peer_not_found', TEXTS.peer_not_found)
      await rejectsWith(ca.send(a.agentId, {}), DaemonSelfSendError, 'self_send', TEXTS.self_send)
      await rejectsWith(ca.addPeer({ pubkey: a.publicKey, addr: '127.0.0.1:1' }), DaemonSelfSendError, 'self_send')
      await rejectsWith(ca.addPeer(b.token), DaemonInvalidCommandError, 'invalid_command', TEXTS.invalid_command)
      await rejectsWith(ca.send(b.agentId, { d: 'x'.repeat(70000) }), DaemonCommandTooLargeError, 'command_too_large')
      const [, ghostKey, ghost] = newKey(77)
      assert.equal(await ca.addPeer({ pubkey: ghostKey, addr: '127.0.0.1:17299' }), ghost)
      await rejectsWith(ca.send(ghost, {}, { timeoutSecs: 1 }), DaemonTimeoutError, 'timeout', TEXTS.timeout)
      // An agent the daemon does not know: pair_request.
      const c = await real.start('c', 17203)
      const cc = await DaemonClient.connect(c.socket)
      await cc.addPeer(a.token)
      await assert.rejects(cc.send(a.agentId, {}, { timeoutSecs: 3 }), (e) => e instanceof DaemonPeerUnreachableError || e instanceof DaemonTimeoutError)
      const pair = await nextEvent(ca, (e) => e.event === 'pair_request', 15000)
      assert.equal(pair.agent_id, c.agentId)
      assert.equal(pair.pubkey, c.publicKey)
      await cc.close()
      // The daemon dies: commands fail, typed, at once.
      await a.kill()
      await rejectsWith(ca.peers(), DaemonDisconnectedError, 'AXON_DAEMON_DISCONNECTED')
    } finally {
      await ca.close()
      await cb.close()
    }
  }))
