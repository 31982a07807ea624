'use strict'
// polywire/axon: AXON v2 agent-to-agent JSON envelopes (hwbehrens/axon
// v0.1.0-v0.2.0). Envelopes are plain objects with the wire's field names
// ({v, id, from, to, ts, kind, ref, payload}); JSON.stringify/JSON.parse run
// here, validation, encoding, agent ids and the session run in Rust.

const native = require('./native.js')
const { AxonError, PolywireError, fromNative, toBytes } = require('./errors.js')

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
    throw new AxonError(`cannot send ${what} as JSON: ${e.message}`, 'invalid_envelope')
  }
  if (json === undefined) throw new AxonError(`cannot send ${what} (${typeof value}) as JSON`, 'invalid_envelope')
  return json
}

function bodyBytes(data) {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : toBytes(data, 'data')
}

/** Decode and validate one message body (at most 65,536 bytes); payload defaults filled unless `{fillDefaults: false}`. */
function decode(data, options = {}) {
  const { fillDefaults = true } = options
  const bytes = bodyBytes(data)
  return JSON.parse(call(() => native.axonDecode(bytes, fillDefaults)))
}

/** Validate an envelope (payload as given) and encode it as upstream writes it. */
function encode(envelope) {
  const json = stringify(envelope, 'the envelope')
  return Buffer.from(call(() => native.axonEncode(json)), 'utf8')
}

/** Validate an envelope; its normalized form (ids lowercase, ref null when absent, defaults filled). */
function validate(envelope, options = {}) {
  const { fillDefaults = true } = options
  const json = stringify(envelope, 'the envelope')
  return JSON.parse(call(() => native.axonValidate(json, fillDefaults)))
}

/** A new message: v 1, a fresh UUID v4 id and the current time unless given. */
function envelope(from, to, kind, payload, options = {}) {
  const { ref, id, ts } = options
  const p = stringify(payload, 'the payload')
  return JSON.parse(call(() => native.axonEnvelope(String(from), String(to), String(kind), p, ref ?? undefined, id ?? undefined, ts ?? undefined)))
}

/** A reply: ref = the request's id, from/to swapped, fresh id and time. */
function reply(request, kind, payload, options = {}) {
  const { id, ts } = options
  const r = stringify(request, 'the request')
  const p = stringify(payload, 'the payload')
  return JSON.parse(call(() => native.axonReply(r, String(kind), p, id ?? undefined, ts ?? undefined)))
}

/** An `error` reply to `request`. Make `message` instructive: what went wrong and what to try instead. */
function errorEnvelope(request, code, message, options = {}) {
  const { retryable = false, id, ts } = options
  const r = stringify(request, 'the request')
  return JSON.parse(call(() => native.axonErrorEnvelope(r, String(code), String(message), retryable, id ?? undefined, ts ?? undefined)))
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
  return call(() => native.axonNegotiate(Array.from(localVersions), Array.from(remoteVersions)))
}


/**
 * A sans-IO AXON connection endpoint: "nothing before hello completes"
 * (unidirectional messages dropped, bidirectional requests answered
 * `not_authorized`), replies matched to requests by `ref`, ids seen in the
 * last 300 s dropped as replays. Pass `nowMs` for a deterministic clock.
 */
class Session {
  constructor(localId, options = {}) {
    const config = {
      localId,
      protocolVersions: options.protocolVersions ?? null,
      features: options.features ?? null,
      agentName: options.agentName ?? null,
      expectedPeer: options.expectedPeer ?? null,
      replayWindowMs: options.replayWindowMs ?? null,
      replayCapacity: options.replayCapacity ?? null,
    }
    this._native = call(() => new native.AxonSession(stringify(config, 'the session options')))
  }

  /** Start the handshake: `{bytes, route, envelope}` of the hello to send. */
  hello(to, nowMs) {
    return outbound(call(() => this._native.hello(String(to), nowMs ?? undefined)))
  }

  /** Check and encode a message to send: `{bytes, route, envelope}`. */
  send(envelope, nowMs) {
    const json = stringify(envelope, 'the envelope')
    return outbound(call(() => this._native.send(json, nowMs ?? undefined)))
  }

  /** Process a received body; `stream` is "bidirectional" or "unidirectional". */
  receive(data, stream, nowMs) {
    const bytes = bodyBytes(data)
    const r = JSON.parse(call(() => this._native.receive(bytes, String(stream), nowMs ?? undefined)))
    if (r.action === 'respond') {
      r.bytes = Buffer.from(r.body, 'utf8')
      delete r.body
    }
    return r
  }

  /** Forget and return the requests whose deadline has passed. */
  expire(nowMs) {
    return JSON.parse(call(() => this._native.expire(nowMs ?? undefined)))
  }

  /** Stop waiting for the answer to a request; returns it, or null. */
  forget(id) {
    const p = this._native.forget(String(id))
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
}
