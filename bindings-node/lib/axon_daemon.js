'use strict'
// A client for a local upstream AXON daemon (hwbehrens/axon v0.7.x and main)
// over its Unix socket, in plain JavaScript: newline-delimited JSON, a
// `req_id` on every command, replies matched by it, events (`inbound`,
// `pair_request`) demultiplexed by their `event` key. Exported by
// polywire/axon; the behaviour is polywire.axon.DaemonClient's (Python), in
// camelCase with Promises. See axon_daemon.d.ts.

const net = require('node:net')
const crypto = require('node:crypto')
const { AxonError, argError, describe, isStackOverflow } = require('./errors.js')

const INVALID_ARGUMENT = 'AXON_INVALID_ARGUMENT'
const DAEMON_MAX_COMMAND_SIZE = 65536
const DAEMON_ERROR_CODES = Object.freeze([
  'invalid_command', 'command_too_large', 'peer_not_found', 'self_send',
  'peer_unreachable', 'timeout', 'internal_error',
])
// The texts the daemon sends with each code (upstream's IpcErrorCode::message).
const TEXTS = Object.freeze({
  invalid_command: 'malformed command, unknown cmd, or invalid field value',
  command_too_large: 'IPC command exceeds 64KB limit',
  peer_not_found: 'target agent_id not in peer table',
  self_send: 'cannot send messages to self',
  peer_unreachable: 'peer known but connection failed',
  timeout: 'request timed out waiting for peer response',
  internal_error: 'unexpected daemon error',
})
// serde_json's recursion limit lets a command line nest 127 deep (the command is 1).
const MAX_NESTING = 127
// The daemon's own timeouts: 30 s for a request unless timeout_secs, 10 s for a message.
const REQUEST_TIMEOUT = 30
const MESSAGE_TIMEOUT = 10
const U64_MAX = 2n ** 64n - 1n
const MAX_LINE_READ = 16 * 1024 * 1024
const MAX_TIMER = 2 ** 31 - 1 // setTimeout's longest delay, in ms

// ---------------------------------------------------------------- errors

class AxonDaemonError extends AxonError {
  constructor(message = undefined, code = undefined) {
    const c = code ?? new.target.code ?? 'AXON_DAEMON_ERROR'
    super(message ?? TEXTS[c] ?? 'the AXON daemon command failed', c)
  }
}
AxonDaemonError.code = 'AXON_DAEMON_ERROR'

function errorClass(name, code) {
  const cls = { [name]: class extends AxonDaemonError {} }[name]
  cls.code = code
  return cls
}

const DaemonInvalidCommandError = errorClass('DaemonInvalidCommandError', 'invalid_command')
const DaemonCommandTooLargeError = errorClass('DaemonCommandTooLargeError', 'command_too_large')
const DaemonPeerNotFoundError = errorClass('DaemonPeerNotFoundError', 'peer_not_found')
const DaemonSelfSendError = errorClass('DaemonSelfSendError', 'self_send')
const DaemonPeerUnreachableError = errorClass('DaemonPeerUnreachableError', 'peer_unreachable')
const DaemonTimeoutError = errorClass('DaemonTimeoutError', 'timeout')
const DaemonInternalError = errorClass('DaemonInternalError', 'internal_error')
const DaemonUnavailableError = errorClass('DaemonUnavailableError', 'AXON_DAEMON_UNAVAILABLE')
const DaemonDisconnectedError = errorClass('DaemonDisconnectedError', 'AXON_DAEMON_DISCONNECTED')
const DaemonClosedError = errorClass('DaemonClosedError', 'AXON_DAEMON_CLOSED')
const DaemonReplyTimeoutError = errorClass('DaemonReplyTimeoutError', 'AXON_DAEMON_TIMEOUT')
const DaemonProtocolError = errorClass('DaemonProtocolError', 'AXON_DAEMON_PROTOCOL')

const BY_CODE = new Map([
  DaemonInvalidCommandError, DaemonCommandTooLargeError, DaemonPeerNotFoundError, DaemonSelfSendError,
  DaemonPeerUnreachableError, DaemonTimeoutError, DaemonInternalError,
].map((cls) => [cls.code, cls]))

function replyError(reply) {
  const code = reply.error
  if (typeof code !== 'string') return new DaemonProtocolError(`the daemon sent an error reply without a code: ${show(reply)}`)
  const message = typeof reply.message === 'string' ? reply.message : TEXTS[code] ?? 'the AXON daemon command failed'
  const cls = BY_CODE.get(code)
  return cls ? new cls(message) : new AxonDaemonError(message, code)
}

function show(value, limit = 200) {
  let text
  try {
    text = JSON.stringify(value)
  } catch {
    text = String(typeof value)
  }
  return text.length <= limit ? text : `${text.slice(0, limit)}...`
}

const invalid = (message) => new DaemonInvalidCommandError(message)
const typeError = (message) => argError(TypeError, INVALID_ARGUMENT, message)

// ---------------------------------------------------------------- argument checks

function str(value, name) {
  if (typeof value === 'string') return value
  throw typeError(`${name} must be a string, got ${describe(value)}`)
}

function optionsArg(options, name = 'options') {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object') throw typeError(`${name} must be an object, got ${describe(options)}`)
  return options
}

function secondsArg(value, name, fallback) {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number') throw typeError(`${name} must be a number of seconds, got ${describe(value)}`)
  if (!Number.isFinite(value) || value <= 0) throw argError(RangeError, INVALID_ARGUMENT, `${name} must be a finite number of seconds above 0, got ${describe(value)}`)
  return value
}

function countArg(value, name, fallback, max) {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number') throw typeError(`${name} must be an integer, got ${describe(value)}`)
  if (!Number.isInteger(value) || value < 0 || value > max) throw argError(RangeError, INVALID_ARGUMENT, `${name} must be an integer from 0 to ${max}, got ${describe(value)}`)
  return value
}

// Rust's char::is_whitespace (Unicode White_Space): what upstream's str::trim removes.
const RUST_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
const TRIM = new RegExp(`^[${RUST_SPACE}]+|[${RUST_SPACE}]+$`, 'g')
const trim = (text) => text.replace(TRIM, '')

// A UUID in the forms upstream's `uuid` crate parses (hyphenated, simple,
// braced, urn:uuid:; hex in any case), lowercase hyphenated; null if not one.
function uuidOf(text) {
  let s = text
  if (s.length === 38 && s[0] === '{' && s[37] === '}') s = s.slice(1, -1)
  else if (s.length === 45 && s.startsWith('urn:uuid:')) s = s.slice(9)
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)) return s.toLowerCase()
  if (/^[0-9a-f]{32}$/i.test(s)) {
    const h = s.toLowerCase()
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  }
  return null
}

const agentIdOf = (key) => `ed25519.${crypto.createHash('sha256').update(key).digest('hex').slice(0, 32)}`

// Standard base64 with canonical padding (the base64 crate's STANDARD).
function b64Standard(text) {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null
  const data = Buffer.from(text, 'base64')
  return data.toString('base64') === text ? data : null
}

// URL-safe base64 without padding, trailing bits zero (URL_SAFE_NO_PAD).
function b64UrlNoPad(text) {
  if (text.length % 4 === 1 || !/^[A-Za-z0-9_-]*$/.test(text)) return null
  const data = Buffer.from(text, 'base64url')
  return data.toString('base64url') === text ? data : null
}

// Upstream's validate_addr (peer_token/mod.rs): ip:port or host:port.
function checkAddr(raw) {
  const addr = trim(raw)
  if (addr === '') throw invalid('peer token addr cannot be empty')
  const colon = addr.lastIndexOf(':')
  if (colon < 0) throw invalid('peer token addr must be host:port or ip:port')
  if (colon === 0) throw invalid('peer token addr host cannot be empty')
  const port = addr.slice(colon + 1)
  const digits = port.startsWith('+') ? port.slice(1) : port
  if (!/^[0-9]+$/.test(digits) || digits.replace(/^0+/, '').length > 5 || Number(digits) > 65535) {
    throw invalid(`peer token addr has invalid port '${port}'`)
  }
}

// An enrollment token `axon://<base64url public key>@host:port`, decoded with
// upstream's rules and messages (peer_token::decode).
function decodeToken(token) {
  if (!token.startsWith('axon://')) throw invalid("peer token must start with 'axon://'")
  const rest = token.slice('axon://'.length)
  const at = rest.indexOf('@')
  if (at < 0) throw invalid("peer token must contain '@' between pubkey and addr")
  const keyText = rest.slice(0, at)
  const addr = rest.slice(at + 1)
  if (keyText === '') throw invalid('peer token pubkey segment is empty')
  checkAddr(addr)
  const key = b64UrlNoPad(keyText)
  if (key === null) throw invalid('peer token pubkey is not valid base64url')
  if (key.length !== 32) throw invalid(`peer token pubkey must decode to 32 bytes, got ${key.length}`)
  return { pubkey: key.toString('base64'), addr: trim(addr), agentId: agentIdOf(key) }
}

const STRING = /"(?:[^"\\]|\\.)*"/gs
// JSON.stringify writes an unpaired surrogate as a \udXXX escape (and never a pair).
const LONE_SURROGATE = /(?<!\\)(?:\\\\)*\\ud[89a-f][0-9a-f]{2}/

// Refuse what serde_json, which parses the line in the daemon, would refuse
// although JSON.stringify writes it: an unpaired surrogate, nesting deeper
// than its recursion limit.
function checkParsable(text) {
  if (text.includes('\\ud') && LONE_SURROGATE.test(text)) {
    throw invalid('the command holds an unpaired surrogate, which is not valid Unicode text')
  }
  let opening = 0
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) opening++
  for (let i = text.indexOf('['); i >= 0; i = text.indexOf('[', i + 1)) opening++
  if (opening <= MAX_NESTING) return
  const bare = text.replace(STRING, '""')
  let depth = 0
  let top = 0
  for (let i = 0; i < bare.length; i++) {
    const c = bare.charCodeAt(i)
    if (c === 0x7b || c === 0x5b) {
      depth++
      if (depth > top) top = depth
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  if (top > MAX_NESTING) throw invalid(`the payload nests ${top - 1} deep: the daemon's JSON parser takes at most ${MAX_NESTING - 1}`)
}

// The JSON text of a payload: an object (not an array or null).
function payloadText(payload) {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw typeError(`payload must be an object (a JSON object), got ${Array.isArray(payload) ? 'an array' : describe(payload)}`)
  }
  let text
  try {
    text = JSON.stringify(payload)
  } catch (err) {
    if (isStackOverflow(err)) throw invalid('the payload nests too deeply to be written as JSON')
    if (err instanceof TypeError && /circular/i.test(err.message)) throw invalid(`payload is not JSON: ${err.message}`)
    if (err instanceof TypeError && /BigInt/i.test(err.message)) {
      const e = typeError(`payload is not JSON: ${err.message}`)
      e.cause = err
      throw e
    }
    throw err // the caller's own code (a toJSON or a getter) threw
  }
  if (typeof text !== 'string' || text[0] !== '{') throw typeError(`payload must be an object (a JSON object): it is written as ${show(text)}`)
  return text
}

// The line of a command whose fields are JSON texts already.
function encodeLine(fields) {
  const line = `{${fields.map(([k, v]) => `"${k}":${v}`).join(',')}}`
  checkSize(line)
  checkParsable(line)
  return `${line}\n`
}

function checkSize(line) {
  const size = Buffer.byteLength(line, 'utf8')
  if (size > DAEMON_MAX_COMMAND_SIZE) {
    throw new DaemonCommandTooLargeError(`the command is ${size} bytes as JSON; the daemon reads at most ${DAEMON_MAX_COMMAND_SIZE} bytes a line (refused before sending)`)
  }
}

// ---------------------------------------------------------------- the client

const INTERNAL = Symbol('polywire.axon.DaemonClient')
const STATE = Symbol('polywire.axon.DaemonClient.state')

function defaultPath() {
  const root = process.env.AXON_ROOT
  if (root !== undefined && trim(root) !== '') return root.endsWith('/') ? `${root}axon.sock` : `${root}/axon.sock`
  const home = process.env.HOME
  if (home === undefined) throw new DaemonUnavailableError('neither AXON_ROOT nor HOME is set: pass the socket\'s path')
  return `${home}${home.endsWith('/') ? '' : '/'}.axon/axon.sock`
}

// setTimeout for delays past its 24.8-day limit too.
function longTimeout(fn, ms) {
  const handle = { timer: null }
  const arm = (left) => {
    handle.timer = setTimeout(() => (left > MAX_TIMER ? arm(left - MAX_TIMER) : fn()), Math.min(left, MAX_TIMER))
  }
  arm(Math.max(0, ms))
  return handle
}

/** A connection to a local AXON daemon's Unix socket. */
class DaemonClient {
  constructor(key) {
    if (key !== INTERNAL) throw typeError('connect with: const client = await DaemonClient.connect({ path })')
  }

  /** The daemon's socket as upstream finds it. */
  static defaultPath() {
    return defaultPath()
  }

  /** Connect to the daemon's socket. */
  static async connect(options = undefined) {
    const opts = typeof options === 'string' ? { path: options } : optionsArg(options)
    const timeout = secondsArg(opts.timeout, 'timeout', 10)
    const maxEvents = countArg(opts.maxEvents, 'maxEvents', 1024, 2 ** 31 - 1)
    const path = opts.path === undefined || opts.path === null ? defaultPath() : str(opts.path, 'path')
    const socket = await new Promise((resolve, reject) => {
      let s
      const fail = (why) => {
        clearTimeout(timer)
        s?.destroy()
        reject(new DaemonUnavailableError(`cannot connect to the AXON daemon socket ${JSON.stringify(path)}: ${why} (is \`axon daemon\` running? pass its <root>/axon.sock or set AXON_ROOT)`))
      }
      const timer = setTimeout(() => fail(`no connection within ${timeout} s`), Math.min(timeout * 1000, MAX_TIMER))
      try {
        s = net.createConnection({ path })
      } catch (err) {
        fail(err.message)
        return
      }
      // (After the connection, an error is the client's 'error' handler's; this
      // one then only rejects a settled promise and destroys a failed socket.)
      s.once('error', (err) => fail(err.code ? `${err.code} (${err.message})` : err.message))
      s.once('connect', () => {
        clearTimeout(timer)
        resolve(s)
      })
    })
    const client = new DaemonClient(INTERNAL)
    Object.defineProperty(client, STATE, {
      value: {
        path,
        socket,
        timeout,
        nextId: 1,
        pending: new Map(), // req_id -> { resolve, reject, timer }
        horizon: 0,
        events: [],
        eventsHead: 0,
        maxEvents,
        dropped: 0,
        waiters: [],
        failure: null, // a function making the error every later call throws
        closed: false,
        chunks: [],
        buffered: 0,
        decoder: new TextDecoder('utf-8', { fatal: true }),
      },
    })
    const st = client[STATE]
    socket.on('data', (chunk) => onData(st, chunk))
    socket.on('error', (err) => lost(st, () => new DaemonDisconnectedError(`the connection to the AXON daemon failed: ${err.message}`)))
    socket.on('close', () => lost(st, () => new DaemonDisconnectedError('the AXON daemon closed the connection')))
    return client
  }

  /** The socket's path. */
  get path() {
    return this[STATE].path
  }

  /** Whether `close()` was called. */
  get closed() {
    return this[STATE].closed
  }

  /** How many events were dropped because `maxEvents` were already waiting. */
  get droppedEvents() {
    return this[STATE].dropped
  }

  /** Close the connection; commands in flight reject with `DaemonClosedError`. Idempotent. */
  async close() {
    const st = this[STATE]
    if (st.closed) return
    st.closed = true
    failAll(st, () => new DaemonClosedError('the client was closed'))
    await new Promise((resolve) => {
      if (st.socket.destroyed) return resolve()
      st.socket.once('close', resolve)
      st.socket.destroy()
    })
  }

  async [Symbol.asyncDispose]() {
    await this.close()
  }

  /** Send a request (its reply envelope) or a message (its id). */
  async send(to, payload, options = undefined) {
    const { kind = 'request', timeoutSecs = null, ref = null } = optionsArg(options)
    str(to, 'to')
    const body = payloadText(payload)
    str(kind, 'kind')
    if (kind !== 'request' && kind !== 'message') throw invalid(`kind must be 'request' or 'message', not ${JSON.stringify(kind)}`)
    const fields = [['cmd', '"send"'], ['to', JSON.stringify(to)], ['kind', JSON.stringify(kind)], ['payload', body]]
    let secs = null
    if (timeoutSecs !== undefined && timeoutSecs !== null) {
      if (typeof timeoutSecs === 'number') {
        if (!Number.isInteger(timeoutSecs)) throw argError(RangeError, INVALID_ARGUMENT, `timeoutSecs must be an integer, got ${describe(timeoutSecs)}`)
        secs = BigInt(timeoutSecs)
      } else if (typeof timeoutSecs === 'bigint') {
        secs = timeoutSecs
      } else {
        throw typeError(`timeoutSecs must be an integer (a number or a BigInt), got ${describe(timeoutSecs)}`)
      }
      if (kind !== 'request') throw invalid('timeout_secs is only valid for request kind')
      if (secs < 1n) throw invalid('timeout_secs must be >= 1')
      if (secs > U64_MAX) throw invalid('timeout_secs must be at most 2**64 - 1')
      fields.push(['timeout_secs', secs.toString()])
    }
    if (ref !== undefined && ref !== null) {
      const uuid = uuidOf(str(ref, 'ref'))
      if (uuid === null) throw invalid(`ref must be a UUID, not ${JSON.stringify(ref.slice(0, 60))}`)
      fields.push(['ref', JSON.stringify(uuid)])
    }
    const budget = kind === 'request' ? (secs === null ? REQUEST_TIMEOUT : Number(secs)) : MESSAGE_TIMEOUT
    const reply = await call(this[STATE], 'send', fields, budget)
    if (kind === 'request') {
      const response = reply.response
      if (response === null || typeof response !== 'object' || Array.isArray(response)) {
        throw new DaemonProtocolError(`the AXON daemon's reply to a request has no response envelope: ${show(reply)}`)
      }
      return response
    }
    if (typeof reply.msg_id !== 'string') throw new DaemonProtocolError(`the AXON daemon's reply to a message has no msg_id: ${show(reply)}`)
    return reply.msg_id
  }

  /** The daemon's peer table. */
  async peers() {
    const reply = await call(this[STATE], 'peers', [['cmd', '"peers"']], 0)
    if (!Array.isArray(reply.peers)) throw new DaemonProtocolError(`the AXON daemon's peers reply has no list: ${show(reply)}`)
    return reply.peers
  }

  /** `{uptime_secs, peers_connected, messages_sent, messages_received}`. */
  async status() {
    return fieldsOf(await call(this[STATE], 'status', [['cmd', '"status"']], 0))
  }

  /** The daemon's identity. */
  async whoami() {
    return fieldsOf(await call(this[STATE], 'whoami', [['cmd', '"whoami"']], 0))
  }

  /** Pin a peer in the daemon; resolves to its agent id. */
  async addPeer(token) {
    let key
    let addr
    if (typeof token === 'string') {
      const decoded = decodeToken(token)
      key = decoded.pubkey
      addr = decoded.addr
    } else if (token !== null && typeof token === 'object' && !Array.isArray(token)) {
      key = trim(str(token.pubkey, 'pubkey'))
      addr = str(token.addr, 'addr')
      const raw = b64Standard(key)
      if (raw === null) throw invalid('pubkey is not valid base64 (standard alphabet, padded)')
      if (raw.length !== 32) throw invalid(`pubkey must decode to 32 bytes, got ${raw.length}`)
    } else {
      throw typeError(`addPeer takes a token (a string) or { pubkey, addr }, got ${describe(token)}`)
    }
    const reply = await call(this[STATE], 'add_peer', [['cmd', '"add_peer"'], ['pubkey', JSON.stringify(key)], ['addr', JSON.stringify(addr)]], 0)
    if (typeof reply.agent_id !== 'string') throw new DaemonProtocolError(`the AXON daemon's add_peer reply has no agent_id: ${show(reply)}`)
    return reply.agent_id
  }

  /** The daemon's events as they arrive: `for await (const e of client.events())`. */
  async *events() {
    const st = this[STATE]
    for (;;) {
      if (st.eventsHead < st.events.length) {
        const e = st.events[st.eventsHead]
        st.events[st.eventsHead++] = undefined
        compact(st)
        yield e
        continue
      }
      if (st.closed) return
      if (st.failure !== null) throw st.failure()
      await new Promise((resolve) => st.waiters.push(resolve))
    }
  }
}

// The event queue is an array read from `eventsHead`: drop the slots before it
// once they are most of it.
function compact(st) {
  if (st.eventsHead > 1024 && st.eventsHead * 2 > st.events.length) {
    st.events = st.events.slice(st.eventsHead)
    st.eventsHead = 0
  }
}

function fieldsOf(reply) {
  const out = {}
  for (const [k, v] of Object.entries(reply)) if (k !== 'ok' && k !== 'req_id') out[k] = v
  return out
}

// -------------------------------------------------------------- the connection

function wake(st) {
  const waiters = st.waiters
  st.waiters = []
  for (const w of waiters) w()
}

// Every later call throws make(); the commands in flight reject with pendingMake().
function failAll(st, make, pendingMake = make) {
  if (st.failure === null) st.failure = make
  const pending = st.pending
  st.pending = new Map()
  for (const p of pending.values()) {
    clearTimeout(p.timer.timer)
    p.reject(pendingMake())
  }
  wake(st)
}

// The connection is unusable: fail everything, close the socket.
function lost(st, make, pendingMake = make) {
  if (st.closed || st.failure !== null) return
  failAll(st, make, pendingMake)
  st.socket.destroy()
}

function onData(st, chunk) {
  let start = 0
  for (;;) {
    const nl = chunk.indexOf(10, start)
    if (nl < 0) break
    const piece = chunk.subarray(start, nl)
    let line = piece
    if (st.buffered > 0) {
      st.chunks.push(piece)
      line = Buffer.concat(st.chunks)
      st.chunks = []
      st.buffered = 0
    }
    dispatch(st, line)
    if (st.failure !== null || st.closed) return
    start = nl + 1
  }
  if (start < chunk.length) {
    const rest = chunk.subarray(start)
    st.chunks.push(rest)
    st.buffered += rest.length
    if (st.buffered > MAX_LINE_READ) lost(st, () => new DaemonProtocolError(`the AXON daemon sent a line of more than ${MAX_LINE_READ} bytes`))
  }
}

function dispatch(st, line) {
  let msg
  try {
    msg = JSON.parse(st.decoder.decode(line))
  } catch {
    const shown = line.subarray(0, 120).toString('utf8')
    lost(st, () => new DaemonProtocolError(`the AXON daemon sent a line that is not JSON: ${JSON.stringify(shown)}`))
    return
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
    lost(st, () => new DaemonProtocolError(`the AXON daemon sent a line that is not a JSON object: ${show(msg)}`))
    return
  }
  if (Object.prototype.hasOwnProperty.call(msg, 'event')) {
    if (st.events.length - st.eventsHead >= st.maxEvents) {
      st.dropped++
      if (st.maxEvents === 0) return
      st.events[st.eventsHead++] = undefined
    }
    st.events.push(msg)
    compact(st)
    wake(st)
    return
  }
  const reqId = msg.req_id
  const p = typeof reqId === 'string' ? st.pending.get(reqId) : undefined
  if (p !== undefined) {
    st.pending.delete(reqId)
    clearTimeout(p.timer.timer)
    p.resolve(msg)
    return
  }
  if (msg.ok === false && (reqId === undefined || reqId === null)) {
    // An error the daemon could not tie to a command: command_too_large (then
    // it closes the connection), or invalid_command for a line it could not
    // parse (v0.7.2 never echoes req_id then; it answers such lines at once,
    // so the oldest command waiting is the best guess).
    const error = replyError(msg)
    if (error instanceof DaemonCommandTooLargeError) {
      const text = error.message
      lost(st, () => new DaemonDisconnectedError(`the AXON daemon closed the connection after answering: ${text}`),
        () => new DaemonCommandTooLargeError(`${text} (the AXON daemon closes the connection after it: every command in flight failed)`))
    } else if (st.pending.size > 0) {
      const [oldest, q] = st.pending.entries().next().value
      st.pending.delete(oldest)
      clearTimeout(q.timer.timer)
      q.reject(error)
    }
  }
  // Anything else is the late reply to a command that timed out.
}

function check(st) {
  if (st.closed) throw new DaemonClosedError('the client is closed')
  if (st.failure !== null) throw st.failure()
}

// Send a command (fields checked, as JSON texts), wait for its reply: the
// reply of an ok command, or its error thrown.
async function call(st, name, fields, budget) {
  check(st)
  const reqId = String(st.nextId++)
  const line = encodeLine([...fields, ['req_id', JSON.stringify(reqId)]])
  const now = performance.now()
  // The daemon answers in turn: this command is due after those sent before it.
  const start = st.pending.size > 0 ? Math.max(now, st.horizon) : now
  const deadline = (st.horizon = start + (st.timeout + budget) * 1000)
  const reply = await new Promise((resolve, reject) => {
    const timer = longTimeout(() => {
      if (st.pending.get(reqId)?.timer !== timer) return
      st.pending.delete(reqId)
      reject(new DaemonReplyTimeoutError(`the AXON daemon did not answer '${name}' within ${((deadline - now) / 1000).toPrecision(3)} s`))
    }, deadline - now)
    st.pending.set(reqId, { resolve, reject, timer })
    st.socket.write(line)
  })
  if (reply.ok === true) return reply
  if (reply.ok === false) throw replyError(reply)
  throw new DaemonProtocolError(`the AXON daemon sent a reply without ok: ${show(reply)}`)
}

module.exports = {
  DAEMON_ERROR_CODES,
  DAEMON_MAX_COMMAND_SIZE,
  DaemonClient,
  AxonDaemonError,
  DaemonInvalidCommandError,
  DaemonCommandTooLargeError,
  DaemonPeerNotFoundError,
  DaemonSelfSendError,
  DaemonPeerUnreachableError,
  DaemonTimeoutError,
  DaemonInternalError,
  DaemonUnavailableError,
  DaemonDisconnectedError,
  DaemonClosedError,
  DaemonReplyTimeoutError,
  DaemonProtocolError,
  // For the tests (not exported by polywire/axon).
  _decodeToken: decodeToken,
}
