'use strict'
// polywire/kameo: the wire format of the Rust `kameo` crate 0.22.2 (remote
// actors), byte-identical to the crate (see kameo-parity).
//
// Values keep serde's externally tagged shape and field names:
//   { Ask: { actor_id: { sequence_id: 42, peer_id: '12D3KooW...' },
//            actor_remote_id: 'counter', message_remote_id: 'inc',
//            payload: Uint8Array, mailbox_timeout: { secs: 1, nanos: 500000000 },
//            reply_timeout: null, immediate: false } }
//   { Ask: { Ok: Uint8Array } }   { Tell: { Ok: null } }   { Tell: { Err: 'MailboxFull' } }
// Bytes are Uint8Arrays (Buffers on output); an integer beyond 2^53-1 is a
// BigInt on output (numbers and BigInts are both accepted on input).
//
// Values cross to Rust as JSON text with tagged one-entry objects for bytes,
// BigInts, non-finite numbers and Maps (see bindings-node/src/kameo.rs):
// JSON.stringify / JSON.parse do the walking, Rust the codec.

const native = require('./native.js')
const { KameoError, PolywireError, fromNative, argError, strArg, describe, hasCycle, isStackOverflow, bytesArg } = require('./errors.js')
const { serveInbound, runHandler, thrownText } = require('./peer_serve.js')

const INVALID = 'KAMEO_INVALID_ARGUMENT'

function toBytes(value, name) {
  return bytesArg(value, name, INVALID)
}

function str(value, name) {
  return strArg(value, name, INVALID)
}

const U64_MAX = 2n ** 64n - 1n

// A sequence id (u64): a number (an integer, beyond 2^53 - 1 the one the
// double is) or a BigInt. Another type is a TypeError KAMEO_INVALID_ARGUMENT;
// a number or BigInt out of 0..2^64-1 (or a fraction, NaN) is
// KAMEO_INVALID_VALUE, as the codec functions report it.
function sequenceIdArg(value, name) {
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value < 2 ** 64) return value
  } else if (typeof value === 'bigint') {
    if (value >= 0n && value <= U64_MAX) return value
  } else {
    throw argError(TypeError, INVALID, `${name} must be a non-negative integer (a number up to 2^53 - 1 or a BigInt up to 2^64 - 1), got ${describe(value)}`)
  }
  throw new KameoError(`${name} must be an integer from 0 to 2^64 - 1 (a BigInt beyond 2^53 - 1), got ${describe(value)}`, 'KAMEO_INVALID_VALUE')
}

// A peer id: base58 text, its bytes, or null/undefined (none).
function peerIdArg(value, name) {
  if (value === undefined || value === null) return null
  if (typeof value === 'string' || value instanceof Uint8Array) return value
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return toBytes(value, name)
  throw argError(TypeError, INVALID, `${name} must be a base58 peer id string, its bytes (Uint8Array) or null, got ${describe(value)}`)
}

const MESSAGING_PROTOCOL = '/kameo/messaging/1.0.0'
const REGISTRY_PROTOCOL = '/kameo/registry/1.0.0'
const MAX_REQUEST_SIZE = 1024 * 1024
const MAX_RESPONSE_SIZE = 10 * 1024 * 1024
const MAX_METADATA_SIZE = 64 * 1024
const MAX_DEPTH = 256
const MAX_VALUE_DEPTH = 256

const TAG_BYTES = '\u0000b'
const TAG_BIGINT = '\u0000n'
const TAG_FLOAT = '\u0000f'
const TAG_MAP = '\u0000m'

function rethrow(err) {
  throw fromNative(err, KameoError)
}

function call(fn, ...args) {
  try {
    return fn(...args)
  } catch (e) {
    rethrow(e)
  }
}

function base64(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
}

// JSON.stringify replacer: `this[key]` is the value before `toJSON` (a
// Buffer's toJSON would hide its bytes).
function replacer(key, value) {
  const v = this[key]
  switch (typeof v) {
    case 'bigint':
      return { [TAG_BIGINT]: v.toString() }
    case 'number':
      return Number.isFinite(v) ? v : { [TAG_FLOAT]: String(v) }
    case 'function':
    case 'symbol':
      throw new KameoError(`cannot encode a ${typeof v} (at key ${JSON.stringify(key)})`, 'KAMEO_INVALID_VALUE')
    case 'object':
      if (v === null) return null
      if (v instanceof Uint8Array) return { [TAG_BYTES]: base64(v) }
      if (v instanceof ArrayBuffer) return { [TAG_BYTES]: base64(new Uint8Array(v)) }
      if (ArrayBuffer.isView(v)) return { [TAG_BYTES]: base64(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) }
      if (v instanceof Map) return { [TAG_MAP]: Array.from(v) }
      return value
    default:
      return value
  }
}

function toJson(value) {
  let text
  try {
    text = JSON.stringify(value, replacer)
  } catch (e) {
    if (e instanceof PolywireError) throw e
    // A cycle, and nesting that overflows the stack, have codes of their
    // own (Python's depth code for the latter); an error the value's own
    // code threw (getter, toJSON, Proxy trap) is kept as `cause`.
    if ((e instanceof TypeError && /circular/i.test(e.message)) || (isStackOverflow(e) && hasCycle(value))) {
      throw new KameoError('cannot encode a circular value (an object or array contains itself)', 'KAMEO_CYCLE')
    }
    if (isStackOverflow(e)) {
      throw new KameoError(`expected at most ${MAX_VALUE_DEPTH} levels of nesting (the value overflowed the stack)`, 'KAMEO_DEPTH_LIMIT')
    }
    const err = new KameoError(`cannot encode the value: ${e instanceof Error ? e.message : String(e)}`, 'KAMEO_INVALID_VALUE')
    if (!(e instanceof RangeError || (e instanceof TypeError && /BigInt|circular/.test(e.message)))) err.cause = e
    throw err
  }
  if (text === undefined) {
    throw new KameoError(`cannot encode ${typeof value}`, 'KAMEO_INVALID_VALUE')
  }
  return text
}

function reviver(key, v) {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const keys = Object.keys(v)
    if (keys.length === 1 && keys[0].charCodeAt(0) === 0) {
      const inner = v[keys[0]]
      switch (keys[0]) {
        case TAG_BYTES:
          return Buffer.from(inner, 'base64')
        case TAG_BIGINT:
          return BigInt(inner)
        case TAG_FLOAT:
          return Number(inner)
        case TAG_MAP:
          return new Map(inner)
      }
    }
  }
  return v
}

function fromJson(text) {
  return JSON.parse(text, reviver)
}

// ---------------------------------------------------------------- messaging

/** CBOR bytes of a `SwarmRequest` ({ Ask }, { Tell }, { Link }, { Unlink }, { SignalLinkDied }). */
function encodeRequest(value) {
  return call(native.kameoEncodeRequest, toJson(value))
}

/** A `SwarmRequest` from CBOR bytes, as kameo reads it (bytes after the body are ignored). */
function decodeRequest(data) {
  return fromJson(call(native.kameoDecodeRequest, toBytes(data, 'data')))
}

/** CBOR bytes of a `SwarmResponse`. */
function encodeResponse(value) {
  return call(native.kameoEncodeResponse, toJson(value))
}

function decodeResponse(data) {
  return fromJson(call(native.kameoDecodeResponse, toBytes(data, 'data')))
}

// ---------------------------------------------------------------- ids and registry

function peerText(peerId) {
  if (typeof peerId === 'string') return peerId
  return call(native.kameoPeerIdFromBytes, toBytes(peerId, 'peerId'))
}

/** The value of an actor's registry metadata record. */
function encodeRegistration(sequenceId, peerId, remoteId) {
  const args = [sequenceIdArg(sequenceId, 'sequenceId'), peerIdArg(peerId, 'peerId'), str(remoteId, 'remoteId')]
  return call(native.kameoEncodeRegistration, toJson(args))
}

/** `{ sequence_id, peer_id, remote_id }` of a registry metadata record. */
function decodeRegistration(data) {
  return fromJson(call(native.kameoDecodeRegistration, toBytes(data, 'data')))
}

/** `{actorName}:meta:{base58 peer id}` */
function metadataKey(actorName, peerId) {
  return call(native.kameoMetadataKey, str(actorName, 'actorName'), peerText(peerId))
}

/** `[actorName, peerId]` of a metadata record key, as kameo validates it. */
function parseMetadataKey(key) {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : toBytes(key, 'key')
  return call(native.kameoParseMetadataKey, bytes)
}

function providerKey(actorName) {
  return native.kameoProviderKey(str(actorName, 'actorName'))
}

/** Base58 peer id of a 32-byte Ed25519 public key or a protobuf-encoded key. */
function peerIdFromPublicKey(key) {
  return call(native.kameoPeerIdFromPublicKey, toBytes(key, 'key'))
}

function peerIdToBytes(peerId) {
  return call(native.kameoPeerIdToBytes, peerText(peerId))
}

function peerIdFromBytes(data) {
  return call(native.kameoPeerIdFromBytes, toBytes(data, 'data'))
}

function actorIdToBytes(sequenceId, peerId = null) {
  const args = [sequenceIdArg(sequenceId, 'sequenceId'), peerIdArg(peerId, 'peerId')]
  return call(native.kameoActorIdToBytes, toJson(args))
}

/** `{ sequence_id, peer_id }` of `ActorId::to_bytes` output. */
function actorIdFromBytes(data) {
  return fromJson(call(native.kameoActorIdFromBytes, toBytes(data, 'data')))
}

/** The id `#[remote_message]` gives `impl Message<messageType> for actorType`. */
function remoteMessageId(crateName, crateMajor, modulePath, messageType, actorType, implGenerics = '') {
  // crateMajor: a number, a BigInt or decimal digits (the range is checked
  // in Rust: KAMEO_INVALID_VALUE).
  if (typeof crateMajor !== 'number' && typeof crateMajor !== 'bigint' && !(typeof crateMajor === 'string' && /^[0-9]+$/.test(crateMajor))) {
    throw argError(TypeError, INVALID, `crateMajor must be a non-negative integer (a number, a BigInt or decimal digits), got ${describe(crateMajor)}`)
  }
  return call(
    native.kameoRemoteMessageId,
    str(crateName, 'crateName'),
    Number(crateMajor),
    str(modulePath, 'modulePath'),
    str(messageType, 'messageType'),
    str(actorType, 'actorType'),
    implGenerics === null ? '' : str(implGenerics, 'implGenerics'),
  )
}

/** The id `#[derive(RemoteActor)]` gives: `{modulePath}::{ident}`. */
function remoteActorId(modulePath, ident) {
  return native.kameoRemoteActorId(str(modulePath, 'modulePath'), str(ident, 'ident'))
}

// ---------------------------------------------------------------- MessagePack

/** MessagePack bytes of a value, as `rmp_serde::to_vec_named` writes the same data. */
function pack(value) {
  return call(native.kameoPack, toJson(value))
}

function unpack(data) {
  return fromJson(call(native.kameoUnpack, toBytes(data, 'data')))
}

// ---------------------------------------------------------------- helpers

/** An actor id value `{ sequence_id, peer_id }` (checked as `actorIdToBytes` checks them). */
function actorId(sequenceId, peerId = null) {
  return { sequence_id: sequenceIdArg(sequenceId, 'sequenceId'), peer_id: peerIdArg(peerId, 'peerId') }
}

/** `{ secs, nanos }` from seconds (a number), `[secs, nanos]` or such an object; null stays null. */
function duration(value) {
  return durationArg(value, 'value')
}

function durationArg(value, name) {
  if (value === null || value === undefined) return null
  if (Array.isArray(value)) {
    if (value.length !== 2) throw argError(TypeError, INVALID, `${name} as an array must be [secs, nanos], got an array of length ${value.length}`)
    return { secs: value[0], nanos: value[1] }
  }
  if (typeof value === 'object') return value
  if (typeof value === 'bigint') {
    if (value < 0n) throw new KameoError(`${name}: a Duration must be non-negative, got ${value}n`, 'KAMEO_INVALID_VALUE')
    return { secs: value, nanos: 0 }
  }
  if (typeof value !== 'number') {
    throw argError(TypeError, INVALID, `${name} must be a Duration: seconds (a number), [secs, nanos] or { secs, nanos }, got ${describe(value)}`)
  }
  if (!Number.isFinite(value) || value < 0) {
    throw new KameoError(`${name}: a Duration must be finite and non-negative, got ${value}`, 'KAMEO_INVALID_VALUE')
  }
  let secs = Math.floor(value)
  let nanos = Math.round((value - secs) * 1e9)
  if (nanos === 1e9) {
    secs += 1
    nanos = 0
  }
  return { secs, nanos }
}

function actorArg(id) {
  if (typeof id === 'object' && id !== null) return id
  if (typeof id === 'number' || typeof id === 'bigint') return actorId(id)
  throw argError(TypeError, INVALID, `actor must be an actor id ({ sequence_id, peer_id }) or a sequence id, got ${describe(id)}`)
}

/** A `SwarmRequest::Ask` value. */
function optionsArg(options) {
  if (options === undefined) return {}
  if (options === null || typeof options !== 'object') throw argError(TypeError, INVALID, `options must be an object, got ${describe(options)}`)
  return options
}

function ask(actor, actorRemoteId, messageRemoteId, payload, options) {
  const { mailboxTimeout = null, replyTimeout = null, immediate = false } = optionsArg(options)
  return {
    Ask: {
      actor_id: actorArg(actor),
      actor_remote_id: actorRemoteId,
      message_remote_id: messageRemoteId,
      payload,
      mailbox_timeout: durationArg(mailboxTimeout, 'mailboxTimeout'),
      reply_timeout: durationArg(replyTimeout, 'replyTimeout'),
      immediate,
    },
  }
}

/** A `SwarmRequest::Tell` value. */
function tell(actor, actorRemoteId, messageRemoteId, payload, options) {
  const { mailboxTimeout = null, immediate = false } = optionsArg(options)
  return {
    Tell: {
      actor_id: actorArg(actor),
      actor_remote_id: actorRemoteId,
      message_remote_id: messageRemoteId,
      payload,
      mailbox_timeout: durationArg(mailboxTimeout, 'mailboxTimeout'),
      immediate,
    },
  }
}

// ---------------------------------------------------------------- the peer
//
// A Kameo node this program owns (the core's `polywire::kameo::peer`, on
// libp2p 0.56 as kameo 0.22.2 composes it): look up, ask and tell real Kameo
// actors, and register actors that Kameo programs look up and ask. Every
// operation returns a Promise; the node runs on a thread of its own.

class KameoRemoteError extends KameoError {
  constructor(message, code, variant = null) {
    super(message, code)
    this.variant = variant
  }
}

function remoteErrorClass(name, variant, code) {
  const cls = {
    [name]: class extends KameoRemoteError {
      constructor(message = name, c = code) {
        super(message, c, variant)
      }
    },
  }[name]
  cls.code = code
  cls.variant = variant
  return cls
}

const ActorNotRunning = remoteErrorClass('ActorNotRunning', 'ActorNotRunning', 'KAMEO_ACTOR_NOT_RUNNING')
const ActorStopped = remoteErrorClass('ActorStopped', 'ActorStopped', 'KAMEO_ACTOR_STOPPED')
const BadActorType = remoteErrorClass('BadActorType', 'BadActorType', 'KAMEO_BAD_ACTOR_TYPE')
const MailboxFull = remoteErrorClass('MailboxFull', 'MailboxFull', 'KAMEO_MAILBOX_FULL')
const ReplyTimeout = remoteErrorClass('ReplyTimeout', 'ReplyTimeout', 'KAMEO_REPLY_TIMEOUT')
const SerializeMessage = remoteErrorClass('SerializeMessage', 'SerializeMessage', 'KAMEO_SERIALIZE_MESSAGE')
const DeserializeMessage = remoteErrorClass('DeserializeMessage', 'DeserializeMessage', 'KAMEO_DESERIALIZE_MESSAGE')
const SerializeReply = remoteErrorClass('SerializeReply', 'SerializeReply', 'KAMEO_SERIALIZE_REPLY')
const SerializeHandlerError = remoteErrorClass('SerializeHandlerError', 'SerializeHandlerError', 'KAMEO_SERIALIZE_HANDLER_ERROR')
const DeserializeHandlerError = remoteErrorClass('DeserializeHandlerError', 'DeserializeHandlerError', 'KAMEO_DESERIALIZE_HANDLER_ERROR')
const SwarmNotBootstrapped = remoteErrorClass('SwarmNotBootstrapped', 'SwarmNotBootstrapped', 'KAMEO_SWARM_NOT_BOOTSTRAPPED')
const DialFailure = remoteErrorClass('DialFailure', 'DialFailure', 'KAMEO_DIAL_FAILURE')
const NetworkTimeout = remoteErrorClass('NetworkTimeout', 'NetworkTimeout', 'KAMEO_NETWORK_TIMEOUT')
const ConnectionClosed = remoteErrorClass('ConnectionClosed', 'ConnectionClosed', 'KAMEO_CONNECTION_CLOSED')
const UnsupportedProtocols = remoteErrorClass('UnsupportedProtocols', 'UnsupportedProtocols', 'KAMEO_UNSUPPORTED_PROTOCOLS')
const RemoteIoError = remoteErrorClass('RemoteIoError', 'Io', 'KAMEO_IO')
const RegistryError = remoteErrorClass('RegistryError', null, 'KAMEO_REGISTRY_ERROR')
const NodeClosed = remoteErrorClass('NodeClosed', null, 'KAMEO_NODE_CLOSED')
const NodeStartError = remoteErrorClass('NodeStartError', null, 'KAMEO_START_FAILED')
const UnknownActor = remoteErrorClass('UnknownActor', 'UnknownActor', 'KAMEO_UNKNOWN_ACTOR')
const UnknownMessage = remoteErrorClass('UnknownMessage', 'UnknownMessage', 'KAMEO_UNKNOWN_MESSAGE')

/** The actor's handler returned an error: `value` is the error value (unpacked from
 * `payload`, its MessagePack bytes). Throw `new HandlerError(value)` from a served
 * handler to reply with that error value. */
class HandlerError extends KameoRemoteError {
  constructor(value, options = {}) {
    super(options.message ?? `the actor's handler returned an error: ${describeValue(value)}`, 'KAMEO_HANDLER_ERROR', 'HandlerError')
    this.value = value
    this.payload = options.payload ?? null
  }
}
HandlerError.code = 'KAMEO_HANDLER_ERROR'
HandlerError.variant = 'HandlerError'

function describeValue(value) {
  try {
    const text = JSON.stringify(value, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))
    return text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}...` : text
  } catch {
    return typeof value
  }
}

const BY_VARIANT = new Map(
  [ActorNotRunning, ActorStopped, BadActorType, MailboxFull, ReplyTimeout, SerializeMessage, DeserializeMessage,
    SerializeReply, SerializeHandlerError, DeserializeHandlerError, SwarmNotBootstrapped, DialFailure, NetworkTimeout,
    ConnectionClosed, UnsupportedProtocols, RemoteIoError, UnknownActor, UnknownMessage].map((c) => [c.variant, c]),
)
const REGISTRY_CODES = new Set(['KAMEO_NAME_ALREADY_REGISTERED', 'KAMEO_INVALID_REGISTRATION', 'KAMEO_BAD_ACTOR_TYPE'])

function peerError(info, raw = false) {
  const { code, message, variant } = info
  let e
  if (variant === 'HandlerError') {
    let value = null
    if (info.payload && !raw) {
      try {
        value = unpack(info.payload)
      } catch {
        value = info.payload
      }
    }
    e = new HandlerError(value, { payload: info.payload ?? null, message })
  } else if (variant && BY_VARIANT.has(variant)) {
    e = new (BY_VARIANT.get(variant))(message, code)
  } else if (code === 'KAMEO_NODE_CLOSED') {
    e = new NodeClosed(message)
  } else if (code === 'KAMEO_START_FAILED') {
    e = new NodeStartError(message)
  } else if (code.startsWith('KAMEO_REGISTRY') || REGISTRY_CODES.has(code)) {
    e = new RegistryError(message, code)
  } else {
    e = new KameoRemoteError(message, code, null)
  }
  if (info.actorRemoteId != null) e.actorRemoteId = info.actorRemoteId
  if (info.messageRemoteId != null) e.messageRemoteId = info.messageRemoteId
  return e
}

// Seconds for the native side from anything `duration` takes.
function secondsArg(value, name) {
  const d = durationArg(value, name)
  if (d === null) return null
  const secs = typeof d.secs === 'bigint' ? Number(d.secs) : d.secs
  if (typeof secs !== 'number' || typeof d.nanos !== 'number') {
    throw argError(TypeError, INVALID, `${name} must be a Duration with numeric secs and nanos`)
  }
  if (!(secs >= 0 && secs < 2 ** 64 && d.nanos >= 0 && d.nanos < 1e9)) {
    throw new KameoError(`${name}: a Duration needs secs in 0 to 2^64 - 1 and nanos in 0 to 999999999`, 'KAMEO_INVALID_VALUE')
  }
  return secs + d.nanos / 1e9
}

function boolArg(value, name) {
  if (typeof value !== 'boolean') throw argError(TypeError, INVALID, `${name} must be a boolean, got ${describe(value)}`)
  return value
}

function addrsArg(value, name) {
  if (typeof value === 'string') return [value]
  if (value === null || typeof value !== 'object' || typeof value[Symbol.iterator] !== 'function') {
    throw argError(TypeError, INVALID, `${name} must be a multiaddr (string) or an iterable of them, got ${describe(value)}`)
  }
  const out = []
  for (const item of value) out.push(str(item, name))
  return out
}

function outcome(o, raw = false) {
  if (o.kind === 4) throw peerError(o.error, raw)
  return o
}

function sequenceIdOf(decimal) {
  const n = BigInt(decimal)
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
}

const NATIVE = Symbol('polywire.kameo.native')

/** An actor found by `node.lookup` (or registered by `node.register`). */
class RemoteActorRef {
  constructor(key, node, actor) {
    if (key !== NATIVE) throw argError(TypeError, INVALID, 'references come from node.lookup, node.lookupAll and node.register')
    Object.defineProperty(this, NATIVE, { value: { node, idBytes: actor.idBytes } })
    /** `{ sequence_id, peer_id }`, as `actorId()` builds it. */
    this.actorId = { sequence_id: sequenceIdOf(actor.sequenceId), peer_id: actor.peerId ?? null }
    /** The actor type's `RemoteActor::REMOTE_ID`. */
    this.remoteId = actor.remoteId
  }

  /** The base58 id of the peer hosting the actor. */
  get peerId() {
    return this.actorId.peer_id
  }

  /** The node this reference sends through. */
  get node() {
    return this[NATIVE].node
  }

  /** Whether `other` names the same actor. */
  equals(other) {
    return other instanceof RemoteActorRef && Buffer.compare(other[NATIVE].idBytes, this[NATIVE].idBytes) === 0 && other.remoteId === this.remoteId
  }

  /** Ask the actor: `value` is packed as `rmp_serde::to_vec_named` writes it and the
   * reply unpacked; with `raw: true` both are bytes as they are. */
  async ask(messageRemoteId, value = null, options = undefined) {
    const { mailboxTimeout = null, replyTimeout = null, immediate = false, raw = false } = optionsArg(options)
    const payload = payloadArg(value, boolArg(raw, 'raw'))
    const { node, idBytes } = this[NATIVE]
    const o = outcome(
      await node[NATIVE].native.ask(
        idBytes, this.remoteId, str(messageRemoteId, 'messageRemoteId'), payload,
        secondsArg(mailboxTimeout, 'mailboxTimeout'), secondsArg(replyTimeout, 'replyTimeout'), boolArg(immediate, 'immediate'),
      ),
      raw,
    )
    return raw ? o.bytes : unpack(o.bytes)
  }

  /** Tell the actor (no reply); resolves once the remote node has the message. */
  async tell(messageRemoteId, value = null, options = undefined) {
    const { mailboxTimeout = null, immediate = false, raw = false } = optionsArg(options)
    const payload = payloadArg(value, boolArg(raw, 'raw'))
    const { node, idBytes } = this[NATIVE]
    outcome(
      await node[NATIVE].native.tell(
        idBytes, this.remoteId, str(messageRemoteId, 'messageRemoteId'), payload,
        secondsArg(mailboxTimeout, 'mailboxTimeout'), boolArg(immediate, 'immediate'),
      ),
    )
  }
}

function payloadArg(value, raw) {
  if (raw) return Buffer.from(toBytes(value, 'value'))
  return pack(value)
}

/** A Kameo node this program owns: `const node = await Node.start({...})`. */
class Node {
  constructor(key) {
    if (key !== NATIVE) throw argError(TypeError, INVALID, 'start a node with: const node = await Node.start(options)')
  }

  /** Start a node listening on `listen` and dial the `bootstrap` peers before it resolves. */
  static async start(options = undefined) {
    const {
      keypairSeed = null,
      listen = ['/ip4/127.0.0.1/tcp/0'],
      bootstrap = [],
      mdns = false,
      requestTimeout = 10,
      dialTimeout = 10,
    } = optionsArg(options)
    const seed = keypairSeed === null || keypairSeed === undefined ? null : Buffer.from(toBytes(keypairSeed, 'keypairSeed'))
    const args = [seed, addrsArg(listen, 'listen'), addrsArg(bootstrap, 'bootstrap'), boolArg(mdns, 'mdns'),
      secondsArg(requestTimeout, 'requestTimeout') ?? 10, secondsArg(dialTimeout, 'dialTimeout') ?? 10]
    let started
    try {
      started = await native.kameoPeerStart(...args)
    } catch (err) {
      throw new KameoError(err.message, INVALID)
    }
    if (!(started instanceof native.KameoPeerNode)) throw peerError(started.error)
    const node = new Node(NATIVE)
    const state = { native: started, handlers: new Map(), closed: false }
    Object.defineProperty(node, NATIVE, { value: state })
    serveInbound(started, (req) => serveOne(state.handlers, req))
    return node
  }

  /** This node's peer id, base58. */
  get peerId() {
    return this[NATIVE].native.peerId
  }

  /** The addresses it listens on, each ending in `/p2p/<peer id>`. */
  get listenAddrs() {
    return this[NATIVE].native.listenAddrs
  }

  /** Whether `close()` was called. */
  get closed() {
    return this[NATIVE].closed
  }

  #check() {
    if (this[NATIVE].closed) throw new NodeClosed('the node is closed')
    return this[NATIVE].native
  }

  /** Dial a peer; rejects with `DialFailure` if it cannot be reached within `dialTimeout`. */
  async dial(multiaddr) {
    outcome(await this.#check().dial(str(multiaddr, 'multiaddr')))
  }

  /** The first actor registered under `name`, or `null` once the DHT query ends without one. */
  async lookup(name) {
    for await (const ref of this.lookupAll(name)) return ref
    return null
  }

  /** Every actor registered under `name`: `for await (const ref of node.lookupAll(name))`. */
  async *lookupAll(name) {
    const lookup = this.#check().lookup(str(name, 'name'))
    for (;;) {
      const o = outcome(await lookup.next())
      if (o.kind === 2) return
      yield new RemoteActorRef(NATIVE, this, o.actor)
    }
  }

  /** Register an actor of type `remoteId` under `name`, as kameo does; its asks and
   * tells go to `handler` (an object with `ask(messageRemoteId, value)` / `tell(...)`
   * methods, or a function for both; sync or async). What `ask` returns is the reply;
   * a thrown `HandlerError(value)` replies with that error value, another thrown error
   * with its message (a string), a thrown `KameoRemoteError` subclass with its variant. */
  async register(name, handler, options = undefined) {
    const { remoteId, raw = false } = optionsArg(options)
    const nativeNode = this.#check()
    str(name, 'name')
    str(remoteId, 'remoteId')
    boolArg(raw, 'raw')
    const ok = typeof handler === 'function' || (handler !== null && typeof handler === 'object' && (typeof handler.ask === 'function' || typeof handler.tell === 'function'))
    if (!ok) throw argError(TypeError, INVALID, `handler must have ask/tell methods or be a function, got ${describe(handler)}`)
    const handlers = this[NATIVE].handlers
    if (handlers.has(name)) throw new RegistryError(`'${name}' is already registered by this node`, 'KAMEO_NAME_ALREADY_REGISTERED')
    handlers.set(name, { handler, raw })
    try {
      return new RemoteActorRef(NATIVE, this, outcome(await nativeNode.register(name, remoteId)).actor)
    } catch (err) {
      handlers.delete(name)
      throw err
    }
  }

  /** Stop serving `name`; resolves to whether it was registered. */
  async unregister(name) {
    const nativeNode = this.#check()
    this[NATIVE].handlers.delete(str(name, 'name'))
    return outcome(await nativeNode.unregister(name)).flag
  }

  /** Close the node; operations in flight reject with `NodeClosed`. Idempotent. */
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

// Serving (peer_serve.js): every failure is the caller's error reply.
function serveOne(handlers, req) {
  try {
    serveRequest(handlers, req)
  } catch (err) {
    failSafely(req, err)
  }
}

function serveRequest(handlers, req) {
  const entry = handlers.get(req.name)
  if (!entry) return req.fail('ActorNotRunning')
  const { handler, raw } = entry
  let value
  if (raw) value = req.payload
  else {
    try {
      value = unpack(req.payload)
    } catch (err) {
      return req.fail('DeserializeMessage', null, thrownText(err))
    }
  }
  let fn
  if (typeof handler === 'function') fn = handler
  else if (req.isAsk) fn = typeof handler.ask === 'function' ? handler.ask.bind(handler) : null
  else fn = typeof handler.tell === 'function' ? handler.tell.bind(handler) : typeof handler.ask === 'function' ? handler.ask.bind(handler) : null
  if (!fn) return req.fail('UnknownMessage')
  runHandler(req, () => fn(req.messageRemoteId, value), raw ? answerRaw : answer, failSafely)
}

function answerRaw(req, result) {
  if (!req.isAsk) return
  try {
    req.respond(Buffer.from(toBytes(result, 'reply')))
  } catch (err) {
    req.fail('SerializeReply', null, thrownText(err))
  }
}

function answer(req, result) {
  if (!req.isAsk) return
  let payload
  try {
    payload = pack(result === undefined ? null : result)
  } catch (err) {
    return req.fail('SerializeReply', null, thrownText(err))
  }
  req.respond(payload)
}

function failWith(req, err) {
  if (err instanceof HandlerError) {
    let payload
    try {
      payload = err.payload ?? pack(err.value === undefined ? null : err.value)
    } catch (pe) {
      return req.fail('SerializeHandlerError', null, thrownText(pe))
    }
    return req.fail('HandlerError', payload)
  }
  if (err instanceof KameoRemoteError && err.variant) return req.fail(err.variant, null, thrownText(err))
  req.fail('HandlerError', pack(thrownText(err)))
}

/** The error reply for `err`; if building it throws in turn (a subclass
 * whose getters throw, a Proxy), a plain HandlerError with a text. */
function failSafely(req, err) {
  try {
    failWith(req, err)
  } catch {
    try {
      req.fail('HandlerError', pack('the handler failed, and its error could not be turned into a reply'))
    } catch {}
  }
}

module.exports = {
  MESSAGING_PROTOCOL,
  REGISTRY_PROTOCOL,
  MAX_REQUEST_SIZE,
  MAX_RESPONSE_SIZE,
  MAX_METADATA_SIZE,
  MAX_DEPTH,
  MAX_VALUE_DEPTH,
  encodeRequest,
  decodeRequest,
  encodeResponse,
  decodeResponse,
  encodeRegistration,
  decodeRegistration,
  metadataKey,
  parseMetadataKey,
  providerKey,
  peerIdFromPublicKey,
  peerIdToBytes,
  peerIdFromBytes,
  actorIdToBytes,
  actorIdFromBytes,
  remoteMessageId,
  remoteActorId,
  pack,
  unpack,
  actorId,
  duration,
  ask,
  tell,
  Node,
  RemoteActorRef,
  KameoRemoteError,
  ActorNotRunning,
  ActorStopped,
  BadActorType,
  ConnectionClosed,
  DeserializeHandlerError,
  DeserializeMessage,
  DialFailure,
  HandlerError,
  MailboxFull,
  NetworkTimeout,
  NodeClosed,
  NodeStartError,
  RegistryError,
  RemoteIoError,
  ReplyTimeout,
  SerializeHandlerError,
  SerializeMessage,
  SerializeReply,
  SwarmNotBootstrapped,
  UnknownActor,
  UnknownMessage,
  UnsupportedProtocols,
  KameoError,
  PolywireError,
}
