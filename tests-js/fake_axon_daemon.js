'use strict'
// A fake upstream AXON daemon for tests: a Unix-socket server that speaks the
// daemon's IPC as upstream hwbehrens/axon defines it (axon/src/ipc and
// axon/src/daemon/command_handler.rs at main; v0.7.2 where it differs),
// written from those rules (no upstream code). The same behaviour as
// tests-py/fake_axon_daemon.py:
// - `\n`-terminated lines; more than 65,536 bytes before the newline:
//   command_too_large without req_id, then the connection closes; not UTF-8:
//   invalid_command without req_id; not a command (serde's rules: `cmd` tag,
//   required fields and their types, duplicate fields, nesting of at most 127,
//   numbers within a double, no lone surrogate escapes): invalid_command with
//   the line's string req_id (main) or without (`echoParseReqId: false`, v0.7.2);
// - commands run one at a time, for every client, in arrival order; `send`
//   checks self_send, the peer table (lowercased), the payload (an object),
//   then timeout_secs; a request's reply is also pushed to every client as an
//   `inbound` event; at most 64 clients.
// Hooks: push(event), per-peer `reply` (a function of the request giving
// [kind, payload], 'unreachable' or 'hang'), `beforeCommand(command, client)`
// (async; may return 'close' or 'ignore'), dropClients().

const net = require('node:net')
const fs = require('node:fs')
const crypto = require('node:crypto')

const MAX_LINE = 64 * 1024
const MAX_CLIENTS = 64
const TEXTS = {
  invalid_command: 'malformed command, unknown cmd, or invalid field value',
  command_too_large: 'IPC command exceeds 64KB limit',
  peer_not_found: 'target agent_id not in peer table',
  self_send: 'cannot send messages to self',
  peer_unreachable: 'peer known but connection failed',
  timeout: 'request timed out waiting for peer response',
  internal_error: 'unexpected daemon error',
}
const ALL_COMMANDS = ['send', 'peers', 'status', 'whoami', 'add_peer']
const U64 = 2n ** 64n - 1n

const agentIdOf = (key) => `ed25519.${crypto.createHash('sha256').update(key).digest('hex').slice(0, 32)}`

/** A made-up key n: [key, its standard base64, its agent id]. */
function newKey(n) {
  const key = crypto.createHash('sha256').update(`fake-key-${n}`).digest()
  return [key, key.toString('base64'), agentIdOf(key)]
}

class ParseError extends Error {}

function depth(text) {
  const bare = text.replace(/"(?:[^"\\]|\\.)*"/gs, '""')
  let d = 0
  let top = 0
  for (const ch of bare) {
    if (ch === '[' || ch === '{') top = Math.max(top, ++d)
    else if (ch === ']' || ch === '}') d--
  }
  return top
}

// JSON as serde_json reads it: duplicate keys, nesting, lone surrogates, numbers.
function loads(text, duplicates = true) {
  if (depth(text) > 127) throw new ParseError('recursion limit exceeded')
  for (const m of text.matchAll(/(?<!\\)((?:\\\\)*)\\u([dD][89a-fA-F][0-9a-fA-F]{2})(\\u([dD][c-fC-F][0-9a-fA-F]{2}))?/g)) {
    if (parseInt(m[2], 16) >= 0xdc00 || m[3] === undefined) throw new ParseError('lone surrogate')
  }
  let value
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new ParseError(e.message)
  }
  // Duplicate keys and numbers beyond a double: a second look at the text.
  if (/(?<![\w.])[0-9]{309,}/.test(text.replace(/"(?:[^"\\]|\\.)*"/gs, '""'))) {
    for (const m of text.replace(/"(?:[^"\\]|\\.)*"/gs, '""').matchAll(/-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/g)) {
      if (!Number.isFinite(Number(m[0]))) throw new ParseError('number out of range')
    }
  }
  if (duplicates) checkDuplicates(text) // serde's derive refuses them; a serde_json Value keeps the last
  return value
}

function checkDuplicates(text) {
  // A small JSON scanner: object keys per nesting level.
  const stack = []
  let i = 0
  let expectKey = false
  while (i < text.length) {
    const c = text[i]
    if (c === '"') {
      let j = i + 1
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      const raw = text.slice(i, j + 1)
      const top = stack[stack.length - 1]
      if (top && top.keys && expectKey) {
        const key = JSON.parse(raw)
        if (top.keys.has(key)) throw new ParseError('duplicate field')
        top.keys.add(key)
        expectKey = false
      }
      i = j + 1
      continue
    }
    if (c === '{') {
      stack.push({ keys: new Set() })
      expectKey = true
    } else if (c === '[') {
      stack.push({ keys: null })
      expectKey = false
    } else if (c === '}' || c === ']') {
      stack.pop()
    } else if (c === ',') {
      const top = stack[stack.length - 1]
      expectKey = Boolean(top && top.keys)
    }
    i++
  }
}

function parseUuid(value) {
  if (typeof value !== 'string') throw new ParseError('uuid')
  let s = value
  if (s.length === 38 && s[0] === '{' && s[37] === '}') s = s.slice(1, -1)
  else if (s.length === 45 && s.startsWith('urn:uuid:')) s = s.slice(9)
  let hex
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)) hex = s.replace(/-/g, '')
  else if (/^[0-9a-f]{32}$/i.test(s)) hex = s
  else throw new ParseError('uuid')
  hex = hex.toLowerCase()
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

function parseCommand(line, commands = ALL_COMMANDS) {
  const obj = loads(line)
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new ParseError('not an object')
  const cmd = obj.cmd
  if (typeof cmd !== 'string' || !commands.includes(cmd)) throw new ParseError('unknown cmd')
  const reqId = obj.req_id ?? null
  if (reqId !== null && typeof reqId !== 'string') throw new ParseError('req_id')
  const out = { cmd, req_id: reqId }
  const reqStr = (name) => {
    if (typeof obj[name] !== 'string') throw new ParseError(name)
    return obj[name]
  }
  if (cmd === 'send') {
    out.to = reqStr('to')
    if (obj.kind !== 'request' && obj.kind !== 'message') throw new ParseError('kind')
    out.kind = obj.kind
    if (!('payload' in obj)) throw new ParseError('payload')
    out.payload = obj.payload
    const t = obj.timeout_secs ?? null
    if (t !== null) {
      // The exact digits: a JSON number may be past 2^53.
      const m = /"timeout_secs"\s*:\s*(-?[0-9.eE+-]+)/.exec(line)
      if (!m || !/^[0-9]+$/.test(m[1]) || BigInt(m[1]) > U64) throw new ParseError('timeout_secs')
      out.timeout_secs = BigInt(m[1])
    } else out.timeout_secs = null
    out.ref = obj.ref === undefined || obj.ref === null ? null : parseUuid(obj.ref)
  } else if (cmd === 'add_peer') {
    out.pubkey = reqStr('pubkey')
    out.addr = reqStr('addr')
  }
  return out
}

function extractReqId(line) {
  try {
    const v = loads(line, false)
    return v && typeof v === 'object' && typeof v.req_id === 'string' ? v.req_id : null
  } catch {
    return null
  }
}

function envelope(id, kind, payload, ref, from, to) {
  const e = { id, kind }
  if (ref !== null && ref !== undefined) e.ref = ref
  e.payload = payload
  if (from) e.from = from
  if (to) e.to = to
  return e
}

class Client {
  constructor(socket) {
    this.socket = socket
    this.closed = false
  }

  write(objOrText) {
    if (this.closed) return
    this.socket.write(`${typeof objOrText === 'string' ? objOrText : JSON.stringify(objOrText)}\n`)
  }

  abort() {
    if (!this.closed) {
      this.closed = true
      this.socket.destroy()
    }
  }
}

class FakeDaemon {
  constructor(path, { name = null, version = '0.7.2', echoParseReqId = true, commands = ALL_COMMANDS } = {}) {
    this.path = path
    ;[, this.publicKey, this.agentId] = newKey(0)
    this.name = name
    this.version = version
    this.echoParseReqId = echoParseReqId
    this.knownCommands = commands
    this.peers = new Map()
    this.clients = new Set()
    this.commands = []
    this.lines = []
    this.beforeCommand = null
    this.sent = 0
    this.received = 0
    this.queue = []
    this.wakeMain = null
    this.started = Date.now()
    this.stopped = false
  }

  async start() {
    this.server = net.createServer((socket) => this.#client(socket))
    await new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(this.path, resolve)
    })
    fs.chmodSync(this.path, 0o600)
    this.#main()
    return this
  }

  async stop() {
    this.stopped = true
    this.wakeMain?.()
    this.dropClients()
    await new Promise((resolve) => this.server.close(() => resolve()))
  }

  /** A peer; `reply`: null (upstream's default error/unhandled), a function, 'unreachable' or 'hang'. */
  add(n, { addr = '127.0.0.1:7100', status = 'connected', reply = null, source = 'static', rttMs = null } = {}) {
    const [, pub, id] = newKey(n)
    this.peers.set(id, { agent_id: id, addr, status, source, pubkey: pub, reply, rtt_ms: rttMs })
    return id
  }

  push(event) {
    for (const c of this.clients) c.write(event)
  }

  inbound(from, kind, payload, ref = null) {
    const event = { event: 'inbound', from, envelope: envelope(crypto.randomUUID(), kind, payload, ref, from, this.agentId) }
    this.push(event)
    return event
  }

  pairRequest(agentId, pubkey, addr = null) {
    const event = { event: 'pair_request', agent_id: agentId, pubkey }
    if (addr !== null) event.addr = addr
    this.push(event)
    return event
  }

  dropClients() {
    for (const c of this.clients) c.abort()
  }

  #client(socket) {
    const client = new Client(socket)
    if (this.clients.size >= MAX_CLIENTS) {
      client.abort()
      return
    }
    this.clients.add(client)
    let buf = Buffer.alloc(0)
    socket.on('error', () => {})
    socket.on('close', () => {
      client.closed = true
      this.clients.delete(client)
    })
    socket.on('data', (chunk) => {
      if (client.closed) return
      buf = Buffer.concat([buf, chunk])
      for (;;) {
        const nl = buf.indexOf(10)
        if (nl < 0) {
          if (buf.length > MAX_LINE) this.#tooLarge(client)
          return
        }
        if (nl > MAX_LINE) return this.#tooLarge(client)
        const line = buf.subarray(0, nl)
        buf = buf.subarray(nl + 1)
        this.lines.push(Buffer.from(line))
        let text
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(line)
        } catch {
          client.write({ ok: false, error: 'invalid_command', message: TEXTS.invalid_command })
          continue
        }
        let command
        try {
          command = parseCommand(text, this.knownCommands)
        } catch (e) {
          if (!(e instanceof ParseError)) throw e
          const reply = { ok: false, error: 'invalid_command', message: TEXTS.invalid_command }
          const rid = this.echoParseReqId ? extractReqId(text) : null
          if (rid !== null) reply.req_id = rid
          client.write(reply)
          continue
        }
        this.commands.push(command)
        this.queue.push([client, command])
        this.wakeMain?.()
      }
    })
  }

  #tooLarge(client) {
    client.write({ ok: false, error: 'command_too_large', message: TEXTS.command_too_large })
    client.closed = true
    client.socket.end()
  }

  async #main() {
    while (!this.stopped) {
      if (this.queue.length === 0) {
        await new Promise((resolve) => (this.wakeMain = resolve))
        this.wakeMain = null
        continue
      }
      const [client, command] = this.queue.shift()
      if (this.beforeCommand) {
        const verdict = await this.beforeCommand(command, client)
        if (verdict === 'close') {
          client.abort()
          continue
        }
        if (verdict === 'ignore') continue
      }
      try {
        await this.#handle(client, command)
      } catch (e) {
        this.#error(client, 'internal_error', command.req_id)
      }
    }
  }

  #error(client, code, reqId) {
    const reply = { ok: false, error: code, message: TEXTS[code] }
    if (reqId !== null && reqId !== undefined) reply.req_id = reqId
    client.write(reply)
  }

  #ok(client, fields, reqId) {
    const reply = { ok: true, ...fields }
    if (reqId !== null && reqId !== undefined) reply.req_id = reqId
    client.write(reply)
  }

  async #handle(client, c) {
    const rid = c.req_id
    const uptime = Math.floor((Date.now() - this.started) / 1000)
    if (c.cmd === 'peers') {
      const peers = [...this.peers.keys()].sort().map((id) => {
        const p = this.peers.get(id)
        const e = { agent_id: id, addr: p.addr, status: p.status }
        if (p.rtt_ms !== null) e.rtt_ms = p.rtt_ms
        e.source = p.source
        return e
      })
      this.#ok(client, { peers }, rid)
    } else if (c.cmd === 'status') {
      const connected = [...this.peers.values()].filter((p) => p.status === 'connected').length
      this.#ok(client, { uptime_secs: uptime, peers_connected: connected, messages_sent: this.sent, messages_received: this.received }, rid)
    } else if (c.cmd === 'whoami') {
      const fields = { agent_id: this.agentId, public_key: this.publicKey }
      if (this.name !== null) fields.name = this.name
      Object.assign(fields, { version: this.version, uptime_secs: uptime })
      this.#ok(client, fields, rid)
    } else if (c.cmd === 'add_peer') {
      this.#addPeer(client, c)
    } else {
      await this.#send(client, c)
    }
  }

  #addPeer(client, c) {
    const rid = c.req_id
    const text = c.pubkey.trim()
    const key = Buffer.from(text, 'base64')
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || key.toString('base64') !== text || key.length !== 32) return this.#error(client, 'invalid_command', rid)
    const id = agentIdOf(key)
    if (id === this.agentId) return this.#error(client, 'self_send', rid)
    if (this.peers.has(id)) return this.#error(client, 'invalid_command', rid)
    const m = /^(.+):([0-9]+)$/.exec(c.addr.trim())
    if (!m || Number(m[2]) > 65535 || !['127.0.0.1', 'localhost', '[::1]'].includes(m[1])) return this.#error(client, 'invalid_command', rid)
    const host = m[1] === 'localhost' ? '127.0.0.1' : m[1]
    this.peers.set(id, { agent_id: id, addr: `${host}:${Number(m[2])}`, status: 'disconnected', source: 'static', pubkey: c.pubkey, reply: null, rtt_ms: null })
    this.#ok(client, { agent_id: id }, rid)
  }

  async #send(client, c) {
    const rid = c.req_id
    if (c.to === this.agentId) return this.#error(client, 'self_send', rid)
    const peer = this.peers.get(c.to.toLowerCase())
    if (!peer) return this.#error(client, 'peer_not_found', rid)
    if (c.payload === null || typeof c.payload !== 'object' || Array.isArray(c.payload)) return this.#error(client, 'invalid_command', rid)
    let secs
    if (c.kind === 'request') {
      secs = c.timeout_secs === null ? 30 : Number(c.timeout_secs)
      if (secs === 0) return this.#error(client, 'invalid_command', rid)
    } else {
      if (c.timeout_secs !== null) return this.#error(client, 'invalid_command', rid)
      secs = 10
    }
    const msgId = crypto.randomUUID()
    const request = envelope(msgId, c.kind, c.payload, c.ref, this.agentId, peer.agent_id)
    let timer
    const outcome = await Promise.race([
      this.#deliver(peer.reply, request),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve('timed out'), Math.min(secs * 1000, 2 ** 31 - 1))
        timer.unref() // a stopped fake keeps nothing alive
      }),
    ])
    clearTimeout(timer)
    if (outcome === 'timed out') return this.#error(client, c.kind === 'request' ? 'timeout' : 'peer_unreachable', rid)
    if (outcome === null) return this.#error(client, 'peer_unreachable', rid)
    this.sent++
    const reply = { ok: true, msg_id: msgId }
    if (rid !== null) reply.req_id = rid
    let response = null
    if (c.kind === 'request') {
      const [kind, payload] = outcome
      this.received++
      response = envelope(crypto.randomUUID(), kind, payload, msgId, peer.agent_id, this.agentId)
      reply.response = response
    }
    client.write(reply)
    if (response !== null) this.push({ event: 'inbound', from: peer.agent_id, envelope: response })
  }

  async #deliver(behaviour, request) {
    if (behaviour === 'unreachable') return null
    if (behaviour === 'hang') return new Promise(() => {})
    if (request.kind === 'message') return []
    if (behaviour === null) {
      return ['error', { code: 'unhandled', message: `no application handler registered for request '${request.id}'`, retryable: false }]
    }
    return await behaviour(request)
  }
}

module.exports = { FakeDaemon, TEXTS, newKey, agentIdOf, parseCommand }
