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
  KameoError,
  PolywireError,
}
