'use strict'
// polywire/axon: AXON v2 agent-to-agent JSON envelopes (hwbehrens/axon
// v0.1.0-v0.2.0). Envelopes are plain objects with the wire's field names
// ({v, id, from, to, ts, kind, ref, payload}); JSON.stringify/JSON.parse run
// here, validation, encoding, agent ids and the session run in Rust.

const native = require('./native.js')
// The client of a local upstream daemon (plain JavaScript): axon_daemon.js.
const daemon = require('./axon_daemon.js')
const { AxonError, PolywireError, fromNative, argError, describe, hasCycle, isStackOverflow, bytesArg, boolArg } = require('./errors.js')

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
  AxonError,
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
