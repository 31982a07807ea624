'use strict'
// polywire/axon: AXON v2 agent-to-agent JSON envelopes (hwbehrens/axon
// v0.1.0-v0.2.0). Envelopes are plain objects with the wire's field names
// ({v, id, from, to, ts, kind, ref, payload}); JSON.stringify/JSON.parse run
// here, validation, encoding, agent ids and the session run in Rust.

const native = require('./native.js')
// The client of a local upstream daemon (plain JavaScript): axon_daemon.js.
const daemon = require('./axon_daemon.js')
const { serveInbound, runHandler, thrownText } = require('./peer_serve.js')
const { AxonError, PolywireError, fromNative, argError, describe, hasCycle, isStackOverflow, bytesArg, boolArg, strArg } = require('./errors.js')

// Bad arguments: TypeError/RangeError with the protocol's code for a bad
// envelope (the Rust side's code for a bad timestamp, too).
const INVALID = 'invalid_envelope'

function toBytes(value, name) {
  return bytesArg(value, name, INVALID)
}

// Text arguments are converted with String() as before; a Symbol or a value
// whose conversion throws becomes a coded TypeError.
function text(value, name) {
  if (typeof value === 'string') return value
  if (typeof value !== 'symbol') {
    try {
      return String(value)
    } catch {}
  }
  throw argError(TypeError, INVALID, `${name} must be a string, got ${describe(value)}`)
}

// A time in ms or undefined (now): numbers are checked in Rust; a BigInt
// within 2^53 - 1 is taken as its number.
function msArg(value, name) {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number') return value
  if (typeof value === 'bigint' && value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value)
  throw argError(typeof value === 'bigint' ? RangeError : TypeError, INVALID, `${name} must be a non-negative integer number of milliseconds, got ${describe(value)}`)
}

// A boolean option (as Python's: true/false only; undefined or null for the default).
function flag(value, name, fallback) {
  return boolArg(value, name, INVALID, fallback)
}

function optionsArg(options) {
  if (options === undefined) return {}
  if (options === null || typeof options !== 'object') throw argError(TypeError, INVALID, `options must be an object, got ${describe(options)}`)
  return options
}

function versionsArg(versions, name) {
  if (versions === null || typeof versions !== 'object' || typeof versions[Symbol.iterator] !== 'function') {
    throw argError(TypeError, INVALID, `${name} must be an array of version numbers, got ${describe(versions)}`)
  }
  const out = Array.from(versions)
  for (const v of out) {
    if (typeof v !== 'number') throw argError(TypeError, INVALID, `${name} must hold numbers, got ${describe(v)}`)
  }
  return out
}

const PROTOCOL_VERSION = 1
const MAX_MESSAGE_SIZE = 65536
const REPLAY_WINDOW_MS = 300000
const DEFAULT_DEADLINE_MS = 30000
const ERROR_CODES = Object.freeze([
  'not_authorized', 'unknown_domain', 'overloaded', 'internal', 'timeout',
  'cancelled', 'incompatible_version', 'unknown_kind', 'peer_not_found', 'invalid_envelope',
])
const KIND_RULES = deepFreeze(JSON.parse(native.axonKindRules()))
const KINDS = Object.freeze(Object.keys(KIND_RULES))
const REQUIRED_KINDS = Object.freeze(KINDS.filter((k) => KIND_RULES[k].required))
const OPTIONAL_KINDS = Object.freeze(KINDS.filter((k) => !KIND_RULES[k].required))
const PAYLOAD_DEFAULTS = deepFreeze(JSON.parse(native.axonPayloadDefaults()))

function deepFreeze(o) {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v)
  return Object.freeze(o)
}

function call(f) {
  try {
    return f()
  } catch (e) {
    throw fromNative(e, AxonError)
  }
}

function stringify(value, what) {
  let json
  try {
    json = JSON.stringify(value)
  } catch (e) {
    if (e instanceof PolywireError) throw e
    // Always invalid_envelope (the protocol's code); a cycle and nesting
    // that overflowed the stack are named, an error the value's own code
    // threw (getter, toJSON, Proxy trap) is kept as `cause`.
    const circular = (e instanceof TypeError && /circular/i.test(e.message)) || (isStackOverflow(e) && hasCycle(value))
    const reason = circular ? 'it is circular (an object contains itself)' : isStackOverflow(e) ? 'it nests too deeply' : e instanceof Error ? e.message : String(e)
    const err = new AxonError(`cannot send ${what} as JSON: ${reason}`, 'invalid_envelope')
    if (!circular && !(e instanceof RangeError) && !(e instanceof TypeError && /BigInt/.test(e.message))) err.cause = e
    throw err
  }
  if (json === undefined) throw new AxonError(`cannot send ${what} (${typeof value}) as JSON`, 'invalid_envelope')
  return json
}

function bodyBytes(data) {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : toBytes(data, 'data')
}

/** Decode and validate one message body (at most 65,536 bytes); payload defaults filled unless `{fillDefaults: false}`. */
function decode(data, options) {
  const fillDefaults = flag(optionsArg(options).fillDefaults, 'fillDefaults', true)
  const bytes = bodyBytes(data)
  return JSON.parse(call(() => native.axonDecode(bytes, fillDefaults)))
}

/** Validate an envelope (payload as given) and encode it as upstream writes it. */
function encode(envelope) {
  const json = stringify(envelope, 'the envelope')
  return Buffer.from(call(() => native.axonEncode(json)), 'utf8')
}

/** Validate an envelope; its normalized form (ids lowercase, ref null when absent, defaults filled). */
function validate(envelope, options) {
  const fillDefaults = flag(optionsArg(options).fillDefaults, 'fillDefaults', true)
  const json = stringify(envelope, 'the envelope')
  return JSON.parse(call(() => native.axonValidate(json, fillDefaults)))
}

/** A new message: v 1, a fresh UUID v4 id and the current time unless given. */
function envelope(from, to, kind, payload, options) {
  const { ref, id, ts } = optionsArg(options)
  const args = [text(from, 'from'), text(to, 'to'), text(kind, 'kind')]
  const refId = ref === undefined || ref === null ? undefined : text(ref, 'ref')
  const msgId = id === undefined || id === null ? undefined : text(id, 'id')
  const t = msArg(ts, 'ts')
  const p = stringify(payload, 'the payload')
  return JSON.parse(call(() => native.axonEnvelope(...args, p, refId, msgId, t)))
}

/** A reply: ref = the request's id, from/to swapped, fresh id and time. */
function reply(request, kind, payload, options) {
  const { id, ts } = optionsArg(options)
  const k = text(kind, 'kind')
  const msgId = id === undefined || id === null ? undefined : text(id, 'id')
  const t = msArg(ts, 'ts')
  const r = stringify(request, 'the request')
  const p = stringify(payload, 'the payload')
  return JSON.parse(call(() => native.axonReply(r, k, p, msgId, t)))
}

/** An `error` reply to `request`. Make `message` instructive: what went wrong and what to try instead. */
function errorEnvelope(request, code, message, options) {
  const { retryable: r, id, ts } = optionsArg(options)
  const retryable = flag(r, 'retryable', false)
  const c = text(code, 'code')
  const m = text(message, 'message')
  const msgId = id === undefined || id === null ? undefined : text(id, 'id')
  const t = msArg(ts, 'ts')
  const req = stringify(request, 'the request')
  return JSON.parse(call(() => native.axonErrorEnvelope(req, c, m, retryable, msgId, t)))
}

/** `"ed25519." + hex(sha256(publicKey)[:16])` for a 32-byte Ed25519 public key. */
function agentId(publicKey) {
  const b = toBytes(publicKey, 'publicKey')
  return call(() => native.axonAgentId(b))
}

/** The agent id of the key pair with this 32-byte private seed. */
function agentIdFromSeed(seed) {
  const b = toBytes(seed, 'seed')
  return call(() => native.axonAgentIdFromSeed(b))
}

function publicKeyFromSeed(seed) {
  const b = toBytes(seed, 'seed')
  return call(() => native.axonPublicKeyFromSeed(b))
}

function isAgentId(s) {
  return typeof s === 'string' && native.axonIsAgentId(s)
}

/** Compare agent ids as the protocol does (hex case-insensitive). */
function sameAgent(a, b) {
  return typeof a === 'string' && typeof b === 'string' && native.axonSameAgent(a, b)
}

/** The highest common version; AxonError `incompatible_version` when there is none. */
function negotiate(localVersions, remoteVersions) {
  const l = versionsArg(localVersions, 'localVersions')
  const r = versionsArg(remoteVersions, 'remoteVersions')
  return call(() => native.axonNegotiate(l, r))
}


/**
 * A sans-IO AXON connection endpoint: "nothing before hello completes"
 * (unidirectional messages dropped, bidirectional requests answered
 * `not_authorized`), replies matched to requests by `ref`, ids seen in the
 * last 300 s dropped as replays. Pass `nowMs` for a deterministic clock.
 */
class Session {
  constructor(localId, options) {
    options = optionsArg(options)
    // Checked here as Python checks them: a non-string `expectedPeer` must
    // not turn peer pinning off by being dropped on the way to Rust.
    const optText = (v, name) => {
      if (v === undefined || v === null || typeof v === 'string') return v ?? null
      throw argError(TypeError, INVALID, `options.${name} must be a string, got ${describe(v)}`)
    }
    const versions = options.protocolVersions
    const config = {
      localId,
      protocolVersions: versions === undefined || versions === null ? null : versionsArg(versions, 'options.protocolVersions'),
      features: options.features ?? null,
      agentName: optText(options.agentName, 'agentName'),
      expectedPeer: optText(options.expectedPeer, 'expectedPeer'),
      replayWindowMs: options.replayWindowMs ?? null,
      replayCapacity: options.replayCapacity ?? null,
    }
    this._native = call(() => new native.AxonSession(stringify(config, 'the session options')))
  }

  /** Start the handshake: `{bytes, route, envelope}` of the hello to send. */
  hello(to, nowMs) {
    const t = text(to, 'to')
    const now = msArg(nowMs, 'nowMs')
    return outbound(call(() => this._native.hello(t, now)))
  }

  /** Check and encode a message to send: `{bytes, route, envelope}`. */
  send(envelope, nowMs) {
    const now = msArg(nowMs, 'nowMs')
    const json = stringify(envelope, 'the envelope')
    return outbound(call(() => this._native.send(json, now)))
  }

  /** Process a received body; `stream` is "bidirectional" or "unidirectional". */
  receive(data, stream, nowMs) {
    const bytes = bodyBytes(data)
    const s = text(stream, 'stream')
    const now = msArg(nowMs, 'nowMs')
    const r = JSON.parse(call(() => this._native.receive(bytes, s, now)))
    if (r.action === 'respond') {
      r.bytes = Buffer.from(r.body, 'utf8')
      delete r.body
    }
    return r
  }

  /** Forget and return the requests whose deadline has passed. */
  expire(nowMs) {
    const now = msArg(nowMs, 'nowMs')
    return JSON.parse(call(() => this._native.expire(now)))
  }

  /** Stop waiting for the answer to a request; returns it, or null. */
  forget(id) {
    const p = this._native.forget(text(id, 'id'))
    return p === null || p === undefined ? null : JSON.parse(p)
  }

  get localId() {
    return this._native.localId
  }
  get ready() {
    return this._native.ready
  }
  get peer() {
    return this._native.peer ?? null
  }
  get version() {
    return this._native.version ?? null
  }
  get peerFeatures() {
    return this._native.peerFeatures ?? null
  }
  get pending() {
    return JSON.parse(this._native.pending)
  }
}

function outbound(text) {
  const o = JSON.parse(text)
  return { bytes: Buffer.from(o.body, 'utf8'), route: o.route, envelope: o.envelope }
}

// ---------------------------------------------------------------- axon/1

// The envelopes of today's protocol, AXON protocol version 1 (upstream
// v0.3.0 and later): {id, kind, ref?, payload}, ALPN axon/1.
function axon1Payload(payload) {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw argError(TypeError, INVALID, `payload must be an object, got ${describe(payload)}`)
  }
  return stringify(payload, 'the payload')
}

function axon1Envelope(value, name) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw argError(TypeError, INVALID, `${name} must be an envelope object, got ${describe(value)}`)
  }
  return stringify(value, name)
}

function optText(value, name) {
  return value === undefined || value === null ? undefined : strArg(value, name, INVALID)
}

const axon1 = Object.freeze({
  ALPN: 'axon/1',
  MAX_MESSAGE_SIZE: 65536,
  KINDS: Object.freeze(['request', 'response', 'message', 'error']),
  /** Decode and validate one axon/1 message as upstream HEAD does: `{id, kind, ref, payload}`. */
  decode(data) {
    const bytes = bodyBytes(data)
    return JSON.parse(call(() => native.axon1Decode(bytes)))
  },
  /** Validate an envelope and encode it for the wire (`{"id","kind","ref"?,"payload"}`). */
  encode(envelope) {
    const json = axon1Envelope(envelope, 'envelope')
    return call(() => native.axon1Encode(json))
  },
  /** A `request` with a fresh UUID v4 id (or `options.id`). */
  request(payload, options) {
    const { id } = optionsArg(options)
    const p = axon1Payload(payload)
    return JSON.parse(call(() => native.axon1Message('request', p, undefined, optText(id, 'id'))))
  },
  /** A message (any kind but `request`; `message` by default) with a fresh id. */
  message(payload, options) {
    const { kind = 'message', ref, id } = optionsArg(options)
    const k = strArg(kind, 'kind', INVALID)
    const p = axon1Payload(payload)
    return JSON.parse(call(() => native.axon1Message(k, p, optText(ref, 'ref'), optText(id, 'id'))))
  },
  /** A `response` to `request`: `ref` = its id, a fresh id. */
  response(request, payload, options) {
    const { id } = optionsArg(options)
    const r = axon1Envelope(request, 'request')
    const p = axon1Payload(payload)
    return JSON.parse(call(() => native.axon1Reply(r, p, undefined, undefined, undefined, optText(id, 'id'))))
  },
  /** An `error` reply to `request`: payload `{code, message, retryable}`. */
  error(request, code, message, options) {
    const { retryable, id } = optionsArg(options)
    const r = axon1Envelope(request, 'request')
    const c = strArg(code, 'code', INVALID)
    const m = strArg(message, 'message', INVALID)
    const flagValue = flag(retryable, 'retryable', false)
    return JSON.parse(call(() => native.axon1Reply(r, undefined, c, m, flagValue, optText(id, 'id'))))
  },
})

// ---------------------------------------------------------------- the peer

const PEER_INVALID = 'AXON_INVALID_ARGUMENT'
const PROTOCOLS = Object.freeze(['axon/1', 'v2'])
// The longest busyPoll window `Peer.start` accepts, in seconds: longer spins
// would hold back the peer's own timers (acknowledgements, keep-alives).
const MAX_BUSY_POLL = 0.001

/** An operation of a `Peer` failed; `code` is stable (`AXON_TIMEOUT`, ...). */
class AxonPeerError extends AxonError {}

/** The peer answered with an `error`: `remoteCode`, `message` and `retryable` are the
 * reply's (`code` is `AXON_REMOTE_ERROR`). Throw `new AxonRemoteError(code, message,
 * { retryable })` from a served handler to reply with that error. */
class AxonRemoteError extends AxonPeerError {
  constructor(code = '', message = '', options = undefined) {
    super(String(message), 'AXON_REMOTE_ERROR')
    this.remoteCode = String(code)
    this.remoteMessage = String(message)
    let retryable = false
    try {
      retryable = options !== null && typeof options === 'object' && options.retryable === true
    } catch {}
    this.retryable = retryable
  }
}

function peerErrorClass(name, code) {
  const cls = { [name]: class extends AxonPeerError {
    constructor(message) {
      super(message, code)
    }
  } }[name]
  return cls
}

const AxonTimeoutError = peerErrorClass('AxonTimeoutError', 'AXON_TIMEOUT')
const AxonHandshakeError = peerErrorClass('AxonHandshakeError', 'AXON_HANDSHAKE_REFUSED')
const AxonUnreachableError = peerErrorClass('AxonUnreachableError', 'AXON_UNREACHABLE')
const AxonUnknownPeerError = peerErrorClass('AxonUnknownPeerError', 'AXON_UNKNOWN_PEER')
const AxonInvalidReplyError = peerErrorClass('AxonInvalidReplyError', 'AXON_INVALID_REPLY')
const AxonMessageTooLargeError = peerErrorClass('AxonMessageTooLargeError', 'AXON_MESSAGE_TOO_LARGE')
const AxonConnectionLostError = peerErrorClass('AxonConnectionLostError', 'AXON_CONNECTION_LOST')
const AxonClosedError = peerErrorClass('AxonClosedError', 'AXON_CLOSED')
const AxonStartError = peerErrorClass('AxonStartError', 'AXON_START_FAILED')
const AxonInvalidArgumentError = peerErrorClass('AxonInvalidArgumentError', 'AXON_INVALID_ARGUMENT')

const BY_CODE = new Map([AxonTimeoutError, AxonHandshakeError, AxonUnreachableError, AxonUnknownPeerError, AxonInvalidReplyError,
  AxonMessageTooLargeError, AxonConnectionLostError, AxonClosedError, AxonStartError, AxonInvalidArgumentError].map((c) => [new c('').code, c]))

function peerError(e) {
  if (e.code === 'AXON_REMOTE_ERROR') {
    return new AxonRemoteError(e.remoteCode ?? '', e.remoteMessage ?? '', { retryable: e.retryable === true })
  }
  const Cls = BY_CODE.get(e.code)
  if (Cls) return new Cls(e.message)
  return new AxonPeerError(e.message, e.code)
}

// A native error thrown synchronously (a bad token, ...): its typed class.
function rethrowPeer(err) {
  if (err && typeof err.code === 'string' && err.code.startsWith('AXON_')) throw peerError(err)
  throw err
}

function outcome(o) {
  if (o.kind === 4) throw peerError(o.error)
  return o
}

function peerText(value, name) {
  return strArg(value, name, PEER_INVALID)
}

function peerOptText(value, name) {
  return value === undefined || value === null ? undefined : peerText(value, name)
}

function secondsArg(value, name) {
  if (typeof value !== 'number') throw argError(TypeError, PEER_INVALID, `${name} must be a number of seconds, got ${describe(value)}`)
  if (!(value >= 0 && value <= 1e9)) throw new AxonInvalidArgumentError(`${name} must be a finite number of seconds from 0 to 1e9, got ${value}`)
  return value
}

function busyPollArg(value) {
  const s = secondsArg(value, 'busyPoll')
  if (s > MAX_BUSY_POLL) throw new AxonInvalidArgumentError(`busyPoll must be from 0 to ${MAX_BUSY_POLL} seconds (1 ms), got ${value}`)
  return s
}

function peerObject(value, name) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw argError(TypeError, PEER_INVALID, `${name} must be an object, got ${describe(value)}`)
  }
  let json
  try {
    json = JSON.stringify(value)
  } catch (e) {
    const err = new AxonInvalidArgumentError(`${name} cannot be sent as JSON: ${isStackOverflow(e) ? 'it nests too deeply' : thrownText(e)}`)
    throw err
  }
  if (typeof json !== 'string' || json[0] !== '{') throw new AxonInvalidArgumentError(`${name} cannot be sent as a JSON object`)
  return json
}

// A peer to pin: an enrollment token, or `{agentId?, pubkey, addr?}` (or upstream's
// snake_case `agent_id`).
function peerSpec(value) {
  if (typeof value === 'string') return { token: value }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw argError(TypeError, PEER_INVALID, `a peer must be an enrollment token (string) or an object with pubkey and addr, got ${describe(value)}`)
  }
  const get = (k) => {
    try {
      return Object.prototype.hasOwnProperty.call(value, k) ? value[k] : undefined
    } catch (e) {
      throw new AxonInvalidArgumentError(`the peer object's ${k} could not be read: ${thrownText(e)}`)
    }
  }
  const agentId = get('agentId') ?? get('agent_id')
  const pubkey = get('pubkey') ?? get('publicKey')
  if (pubkey === undefined || pubkey === null) throw new AxonInvalidArgumentError('a peer object needs a pubkey (standard base64 of the 32-byte Ed25519 public key)')
  return { agentId: peerOptText(agentId, 'agentId'), pubkey: peerText(pubkey, 'pubkey'), addr: peerOptText(get('addr'), 'addr') }
}

function identityArg(value) {
  if (value === undefined || value === null) return {}
  if (typeof value === 'string') return { keyFile: value }
  if (value instanceof Uint8Array || value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    const seed = Buffer.from(bytesArg(value, 'identity', PEER_INVALID))
    if (seed.length !== 32) throw new AxonInvalidArgumentError(`identity must be a 32-byte seed, got ${seed.length} bytes`)
    return { seed }
  }
  throw argError(TypeError, PEER_INVALID, `identity must be a 32-byte seed, the path of an identity.key file, or null, got ${describe(value)}`)
}

const NATIVE = Symbol('polywire.axon.native')

/** An AXON peer this program owns: `const peer = await Peer.start({...})`. */
class Peer {
  constructor(key) {
    if (key !== NATIVE) throw argError(TypeError, PEER_INVALID, 'start a peer with: const peer = await Peer.start(options)')
  }

  /** Start a peer listening on `listen` (UDP `ip:port`); `identity` a 32-byte seed, the path
   * of an upstream `identity.key` or null; `peers` tokens or `{agentId, pubkey, addr}`;
   * `protocol` `"axon/1"` (default) or `"v2"`; `busyPoll` the seconds (0 to MAX_BUSY_POLL)
   * the network thread spins before it sleeps (and the event loop turns, for twice that,
   * while a request or send is awaited). */
  static async start(options = undefined) {
    const {
      identity = null,
      listen = '127.0.0.1:0',
      peers = [],
      protocol = 'axon/1',
      capabilities = null,
      agentName = null,
      requestTimeout = 30,
      handlerTimeout = 30,
      busyPoll = 50e-6,
    } = peerOptions(options)
    const id = identityArg(identity)
    const list = typeof peers === 'string' || (peers !== null && typeof peers === 'object' && !Array.isArray(peers) && typeof peers[Symbol.iterator] !== 'function') ? [peers] : peers
    if (list === null || typeof list !== 'object' || typeof list[Symbol.iterator] !== 'function') {
      throw argError(TypeError, PEER_INVALID, `peers must be an array of tokens or peer objects, got ${describe(peers)}`)
    }
    const specs = Array.from(list, peerSpec)
    const proto = peerText(protocol, 'protocol')
    if (!PROTOCOLS.includes(proto)) throw new AxonInvalidArgumentError(`protocol must be "axon/1" or "v2", got ${JSON.stringify(proto)}`)
    const native_options = {
      ...id,
      listen: peerText(listen, 'listen'),
      peers: specs,
      protocol: proto,
      capabilities: capabilities === null || capabilities === undefined ? undefined : peerObject(capabilities, 'capabilities'),
      agentName: peerOptText(agentName, 'agentName'),
      handlerTimeout: secondsArg(handlerTimeout, 'handlerTimeout'),
      busyPoll: busyPollArg(busyPoll),
    }
    const timeout = secondsArg(requestTimeout, 'requestTimeout')
    let started
    try {
      started = await native.axonPeerStart(native_options)
    } catch (err) {
      rethrowPeer(err)
    }
    if (!(started instanceof native.AxonPeerNode)) throw peerError(started.error)
    const peer = new Peer(NATIVE)
    const state = { native: started, handler: null, closed: false, timeout, spin: null }
    state.spin = loopSpin(state, native_options.busyPoll)
    Object.defineProperty(peer, NATIVE, { value: state })
    serveInbound(started, (req) => serveOne(state, req))
    return peer
  }

  /** This peer's agent id. */
  get agentId() {
    return this[NATIVE].native.agentId
  }

  /** Its Ed25519 public key, standard base64. */
  get publicKey() {
    return this[NATIVE].native.publicKey
  }

  /** The address it listens on, `"ip:port"`. */
  get listenAddr() {
    return this[NATIVE].native.listenAddr
  }

  /** Its enrollment token, `axon://<base64url key>@<listenAddr>`. */
  get token() {
    return this[NATIVE].native.token
  }

  /** `"axon/1"` or `"v2"`. */
  get protocol() {
    return this[NATIVE].native.protocol
  }

  /** Whether `close()` was called. */
  get closed() {
    return this[NATIVE].closed
  }

  #check() {
    if (this[NATIVE].closed) throw new AxonClosedError('the peer is closed')
    return this[NATIVE].native
  }

  #timeout(timeout) {
    return timeout === undefined || timeout === null ? this[NATIVE].timeout : secondsArg(timeout, 'timeout')
  }

  /** Pin a peer (a token or `{agentId, pubkey, addr}`); resolves to its agent id. */
  async addPeer(peer) {
    const n = this.#check()
    const spec = peerSpec(peer)
    try {
      return n.addPeer(spec)
    } catch (err) {
      rethrowPeer(err)
    }
  }

  /** Unpin a peer and close its connections; whether it was known. */
  async removePeer(agentId) {
    const n = this.#check()
    const id = peerText(agentId, 'agentId')
    try {
      return n.removePeer(id)
    } catch (err) {
      rethrowPeer(err)
    }
  }

  /** The known peers: `[{agent_id, addr, status, rtt_ms}]`. */
  async peers() {
    return JSON.parse(this.#check().peers())
  }

  /** Send a request; resolves to the reply's payload. `kind`: `request` (axon/1), or with
   * v2 `query` (default), `delegate`, `discover`, `ping`, `cancel`. Rejects with
   * `AxonRemoteError` for an `error` reply, else another `AxonPeerError`. */
  async request(agentId, payload, options = undefined) {
    const n = this.#check()
    const { kind, timeout } = peerOptions(options)
    const to = peerText(agentId, 'agentId')
    const json = peerObject(payload, 'payload')
    const k = peerOptText(kind, 'kind') ?? (this.protocol === 'v2' ? 'query' : 'request')
    const o = await this[NATIVE].spin(callNative(() => n.request(to, k, json, this.#timeout(timeout))))
    return JSON.parse(outcome(o).json)
  }

  /** Send a message (axon/1: any kind but `request`, `message` by default; v2: `notify` by
   * default, `result`, `error`); resolves to its id once written. */
  async send(agentId, payload, options = undefined) {
    const n = this.#check()
    const { kind, ref, timeout } = peerOptions(options)
    const to = peerText(agentId, 'agentId')
    const json = peerObject(payload, 'payload')
    const k = peerOptText(kind, 'kind') ?? (this.protocol === 'v2' ? 'notify' : 'message')
    const r = peerOptText(ref, 'ref')
    const o = await this[NATIVE].spin(callNative(() => n.send(to, k, json, r, this.#timeout(timeout))))
    return outcome(o).text
  }

  /** Answer requests with `handler(fromAgentId, kind, payload)` (sync or async): what it
   * returns (an object, or undefined/null for `{}`) is the reply's payload; a thrown
   * `AxonRemoteError` replies with that error, anything else thrown `handler_error` with its
   * text. `serve(null)` stops serving. */
  serve(handler) {
    const n = this.#check()
    if (handler !== null && handler !== undefined && typeof handler !== 'function') {
      throw argError(TypeError, PEER_INVALID, `handler must be a function or null, got ${describe(handler)}`)
    }
    this[NATIVE].handler = handler ?? null
    n.setServing(this[NATIVE].handler !== null)
  }

  /** Messages, unsolicited errors and refused peers as they arrive:
   * `for await (const event of peer.inbound())`; ends when the peer closes. */
  async *inbound() {
    const state = this[NATIVE]
    while (!state.closed) {
      let o
      try {
        o = await state.native.nextEvents()
      } catch {
        return
      }
      if (o.kind === 4) return
      for (const event of JSON.parse(o.json)) yield event
    }
  }

  /** Close the peer; operations in flight reject with `AxonClosedError`. Idempotent. */
  async close() {
    const state = this[NATIVE]
    if (state.closed) return
    state.closed = true
    await state.native.close()
  }

  async [Symbol.asyncDispose]() {
    await this.close()
  }
}

function peerOptions(options) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object') throw argError(TypeError, PEER_INVALID, `options must be an object, got ${describe(options)}`)
  return options
}

// While a request or send of the peer is in flight, the event loop does not
// sleep for up to twice busyPoll after the last one was made: it turns
// (setImmediate), giving the processor away at each turn (sched_yield), so
// that an answer is taken as soon as the peer's thread delivers it rather
// than after the loop's thread has been woken, which costs 10-15 µs of a
// 50-60 µs loopback round trip on a VM (docs/performance.md#axon). Twice:
// the network thread waits for one datagram, the loop for a whole round trip.
function loopSpin(state, busyPoll) {
  const window = 2 * busyPoll * 1000
  if (window === 0) return (promise) => promise
  let inFlight = 0
  let until = 0
  let turning = false
  const landed = () => {
    inFlight--
  }
  const turn = () => {
    if (inFlight > 0 && !state.closed && performance.now() < until) {
      native.axonYield()
      setImmediate(turn)
    } else {
      turning = false
    }
  }
  return (promise) => {
    inFlight++
    until = performance.now() + window
    if (!turning) {
      turning = true
      setImmediate(turn)
    }
    promise.then(landed, landed)
    return promise
  }
}

async function callNative(f) {
  try {
    return await f()
  } catch (err) {
    rethrowPeer(err)
  }
}

// Serving (peer_serve.js): every failure is the caller's error reply.
function serveOne(state, req) {
  try {
    serveRequest(state, req)
  } catch (err) {
    failSafely(req, err)
  }
}

function serveRequest(state, req) {
  const handler = state.handler
  if (handler === null) return req.fail('unhandled', `no application handler registered for request '${req.id}'`, false)
  const payload = JSON.parse(req.payload)
  runHandler(req, () => handler(req.sender, req.kind, payload), answer, failSafely)
}

function answer(req, result) {
  if (result === undefined || result === null) result = {}
  if (typeof result !== 'object' || Array.isArray(result)) {
    return req.fail('handler_error', `the handler returned ${describe(result)}, not an object (the reply's payload)`, false)
  }
  let json
  try {
    json = JSON.stringify(result)
  } catch (err) {
    return req.fail('handler_error', `the handler's reply could not be sent: ${thrownText(err)}`, false)
  }
  if (typeof json !== 'string' || json[0] !== '{') return req.fail('handler_error', "the handler's reply is not a JSON object", false)
  try {
    req.respond(json)
  } catch (err) {
    req.fail('handler_error', `the handler's reply could not be sent: ${thrownText(err)}`, false)
  }
}

function failWith(req, err) {
  if (err instanceof AxonRemoteError) {
    const code = typeof err.remoteCode === 'string' && err.remoteCode ? err.remoteCode : 'handler_error'
    const message = typeof err.remoteMessage === 'string' ? err.remoteMessage : thrownText(err)
    return req.fail(code, message, err.retryable === true)
  }
  req.fail('handler_error', thrownText(err), false)
}

function failSafely(req, err) {
  try {
    failWith(req, err)
  } catch {
    try {
      req.fail('handler_error', 'the handler failed, and its error could not be turned into a reply', false)
    } catch {}
  }
}

module.exports = {
  PROTOCOL_VERSION,
  MAX_MESSAGE_SIZE,
  REPLAY_WINDOW_MS,
  DEFAULT_DEADLINE_MS,
  ERROR_CODES,
  KIND_RULES,
  KINDS,
  REQUIRED_KINDS,
  OPTIONAL_KINDS,
  PAYLOAD_DEFAULTS,
  decode,
  encode,
  validate,
  envelope,
  reply,
  errorEnvelope,
  agentId,
  agentIdFromSeed,
  publicKeyFromSeed,
  isAgentId,
  sameAgent,
  negotiate,
  Session,
  axon1,
  PROTOCOLS,
  MAX_BUSY_POLL,
  Peer,
  AxonError,
  AxonPeerError,
  AxonRemoteError,
  AxonTimeoutError,
  AxonHandshakeError,
  AxonUnreachableError,
  AxonUnknownPeerError,
  AxonInvalidReplyError,
  AxonMessageTooLargeError,
  AxonConnectionLostError,
  AxonClosedError,
  AxonStartError,
  AxonInvalidArgumentError,
  PolywireError,
  DAEMON_ERROR_CODES: daemon.DAEMON_ERROR_CODES,
  DAEMON_MAX_COMMAND_SIZE: daemon.DAEMON_MAX_COMMAND_SIZE,
  DaemonClient: daemon.DaemonClient,
  AxonDaemonError: daemon.AxonDaemonError,
  DaemonInvalidCommandError: daemon.DaemonInvalidCommandError,
  DaemonCommandTooLargeError: daemon.DaemonCommandTooLargeError,
  DaemonPeerNotFoundError: daemon.DaemonPeerNotFoundError,
  DaemonSelfSendError: daemon.DaemonSelfSendError,
  DaemonPeerUnreachableError: daemon.DaemonPeerUnreachableError,
  DaemonTimeoutError: daemon.DaemonTimeoutError,
  DaemonInternalError: daemon.DaemonInternalError,
  DaemonUnavailableError: daemon.DaemonUnavailableError,
  DaemonDisconnectedError: daemon.DaemonDisconnectedError,
  DaemonClosedError: daemon.DaemonClosedError,
  DaemonReplyTimeoutError: daemon.DaemonReplyTimeoutError,
  DaemonProtocolError: daemon.DaemonProtocolError,
}
