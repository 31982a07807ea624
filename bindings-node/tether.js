'use strict'
// polywire/tether: Tether, Caffeine's 32-bit big-endian tagged object
// encoding (ccrraaiigg/caffeine deno/tether.js).
//
// JavaScript values map to Tether as: integer numbers and bigints ->
// SmallInteger (0..0x1FFFFFFF), booleans, null -> nil, strings -> String,
// TetherSymbol -> Symbol, Uint8Array/Buffer/ArrayBuffer -> ByteArray (decodes
// to Uint8Array), arrays -> Array, TetherUuid -> UUID, TetherProxy -> proxy.
// Values cross to Rust in a typed JSON notation (the vectors file's); all
// encoding, decoding and validation run in Rust.

const native = require('./native.js')
const { TetherError, PolywireError, fromNative, toBytes } = require('./errors.js')

const MAX_SMALL_INTEGER = 0x1fffffff
const MAX_EXPOSURE_HASH = 0x0ffffffe
const DEFAULT_MAX_DEPTH = 256
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function rethrow(err) {
  throw fromNative(err, TetherError)
}

function call(f) {
  try {
    return f()
  } catch (e) {
    rethrow(e)
  }
}

/** A Smalltalk Symbol; compare with `equals` (or deepEqual). */
class TetherSymbol {
  constructor(name) {
    if (typeof name !== 'string') throw new TypeError(`a TetherSymbol's name must be a string, got ${typeof name}`)
    this.name = name
    Object.freeze(this)
  }
  equals(other) {
    return other instanceof TetherSymbol && other.name === this.name
  }
  toString() {
    return this.name
  }
}

/** A remote object reference by exposure hash (0..MAX_EXPOSURE_HASH). */
class TetherProxy {
  constructor(exposureHash) {
    if (!Number.isInteger(exposureHash) || exposureHash < 0 || exposureHash > MAX_EXPOSURE_HASH) {
      throw new TetherError(
        `exposure hash ${exposureHash} is out of range: it must be an integer 0..=${MAX_EXPOSURE_HASH} (0x0ffffffe)`,
        'TETHER_EXPOSURE_HASH_RANGE',
      )
    }
    this.exposureHash = exposureHash
    Object.freeze(this)
  }
  equals(other) {
    return other instanceof TetherProxy && other.exposureHash === this.exposureHash
  }
}

/** A UUID value (Tether tag 0x20000011); kept as lowercase hyphenated text. */
class TetherUuid {
  constructor(text) {
    const s = typeof text === 'string' ? text.toLowerCase() : ''
    if (!UUID_RE.test(s)) throw new TetherError(`${JSON.stringify(text)} is not a UUID (8-4-4-4-12 hex)`, 'TETHER_UNSUPPORTED_TYPE')
    this.value = s
    Object.freeze(this)
  }
  equals(other) {
    return other instanceof TetherUuid && other.value === this.value
  }
  toString() {
    return this.value
  }
}

/** A JavaScript value -> the typed notation ({int}, {string}, ...). */
function toTyped(v, maxDepth = DEFAULT_MAX_DEPTH, depth = 0) {
  switch (typeof v) {
    case 'number':
      if (Number.isInteger(v)) return { int: v }
      throw new TetherError(`cannot encode ${v}: only integers have a Tether encoding (send it as a String)`, 'TETHER_UNSUPPORTED_TYPE')
    case 'bigint':
      return { int: v.toString() }
    case 'boolean':
      return { bool: v }
    case 'string':
      return { string: v }
  }
  if (v === null) return { nil: null }
  if (v instanceof TetherSymbol) return { symbol: v.name }
  if (v instanceof TetherProxy) return { proxy: v.exposureHash }
  if (v instanceof TetherUuid) return { uuid: v.value }
  if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) {
    const b = toBytes(v, 'value')
    return { bytes: Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex') }
  }
  if (Array.isArray(v)) {
    if (depth >= maxDepth) {
      throw new TetherError(`Arrays nested deeper than ${maxDepth} levels (is the array circular?)`, 'TETHER_TOO_DEEP')
    }
    return { array: v.map((x) => toTyped(x, maxDepth, depth + 1)) }
  }
  throw new TetherError(
    `cannot encode ${v === undefined ? 'undefined' : Object.prototype.toString.call(v)} as Tether: use an integer, bigint, boolean, null, string, TetherSymbol, Uint8Array, array, TetherUuid or TetherProxy`,
    'TETHER_UNSUPPORTED_TYPE',
  )
}

/** The typed notation -> a JavaScript value. */
function fromTyped(t) {
  if ('int' in t) return typeof t.int === 'string' ? Number(t.int) : t.int
  if ('string' in t) return t.string
  if ('array' in t) return t.array.map(fromTyped)
  if ('bool' in t) return t.bool
  if ('nil' in t) return null
  if ('symbol' in t) return new TetherSymbol(t.symbol)
  if ('bytes' in t) return new Uint8Array(Buffer.from(t.bytes, 'hex'))
  if ('uuid' in t) return new TetherUuid(t.uuid)
  if ('proxy' in t) return new TetherProxy(t.proxy)
  throw new TypeError(`not a typed Tether value: ${JSON.stringify(t)}`)
}

function opts(options = {}) {
  const { latin1 = false, maxDepth = DEFAULT_MAX_DEPTH } = options
  return { latin1: Boolean(latin1), maxDepth }
}

function typedJson(value, maxDepth) {
  return JSON.stringify(toTyped(value, maxDepth))
}

function uuidText(uuid) {
  if (uuid === undefined || uuid === null) return undefined
  if (uuid instanceof TetherUuid) return uuid.value
  if (typeof uuid === 'string') return uuid
  throw new TetherError(`uuid must be a string, a TetherUuid or undefined, got ${typeof uuid}`, 'TETHER_UNSUPPORTED_TYPE')
}

/** Encode one value. `{latin1: true}`: one byte per character (U+0000..U+00FF). */
function encode(value, options) {
  const o = opts(options)
  const typed = typedJson(value, o.maxDepth)
  return call(() => native.tetherEncode(typed, o.latin1, o.maxDepth))
}

/** Decode exactly one value; leftover bytes are an error. */
function decode(data, options) {
  const o = opts(options)
  const bytes = toBytes(data, 'data')
  return fromTyped(JSON.parse(call(() => native.tetherDecode(bytes, o.latin1, o.maxDepth))))
}

/**
 * A message-send frame: `receiver` is the exposure hash (a number or a
 * TetherProxy), `selector` a string or TetherSymbol; a random UUID unless
 * `options.uuid` is given.
 */
function encodeMessageSend(receiver, selector, args, options = {}) {
  const o = opts(options)
  const hash = receiver instanceof TetherProxy ? receiver.exposureHash : receiver
  if (typeof hash !== 'number') {
    throw new TetherError(`the receiver must be an exposure hash (number) or a TetherProxy, got ${typeof receiver}`, 'TETHER_UNSUPPORTED_TYPE')
  }
  const sel = selector instanceof TetherSymbol ? selector.name : selector
  if (typeof sel !== 'string') throw new TetherError(`the selector must be a string or TetherSymbol, got ${typeof selector}`, 'TETHER_UNSUPPORTED_TYPE')
  if (!Array.isArray(args)) throw new TetherError(`arguments must be an array, got ${typeof args}`, 'TETHER_UNSUPPORTED_TYPE')
  const typed = typedJson(args, o.maxDepth)
  return call(() => native.tetherEncodeMessageSend(hash, sel, typed, uuidText(options.uuid), o.latin1, o.maxDepth))
}

/** `{uuid, receiver, selector, arguments}` of a message-send frame. */
function decodeMessageSend(data, options) {
  const o = opts(options)
  const bytes = toBytes(data, 'data')
  const m = JSON.parse(call(() => native.tetherDecodeMessageSend(bytes, o.latin1, o.maxDepth)))
  return { uuid: m.uuid, receiver: m.receiver, selector: m.selector, arguments: m.arguments.map(fromTyped) }
}

/** An answer frame: with `options.uuid` the wire form, without it the MCP tool's form. */
function encodeAnswer(value, options = {}) {
  const o = opts(options)
  const typed = typedJson(value, o.maxDepth)
  return call(() => native.tetherEncodeAnswer(typed, uuidText(options.uuid), o.latin1, o.maxDepth))
}

/** `{uuid, result}` of an answer frame of either form (`uuid` null for the MCP form). */
function decodeAnswer(data, options) {
  const o = opts(options)
  const bytes = toBytes(data, 'data')
  const a = JSON.parse(call(() => native.tetherDecodeAnswer(bytes, o.latin1, o.maxDepth)))
  return { uuid: a.uuid, result: fromTyped(a.result) }
}

function encodeHandshake(exposureHash) {
  return call(() => native.tetherEncodeHandshake(exposureHash))
}

function decodeHandshake(data) {
  const bytes = toBytes(data, 'data')
  return call(() => native.tetherDecodeHandshake(bytes))
}

/** Lowercase hex, 8 characters per 32-bit word. */
function toHex(data) {
  return native.tetherToHex(toBytes(data, 'data'))
}

/**
 * Parse hex under the send tool's checklist (hex digits only, a multiple of
 * 8 characters); errors name the offending word. `{words: false}` accepts
 * any whole number of bytes.
 */
function fromHex(hex, options = {}) {
  const { words = true } = options
  if (typeof hex !== 'string') throw new TypeError(`hex must be a string, got ${typeof hex}`)
  return call(() => native.tetherFromHex(hex, words))
}

/** The MCP `send` tool's `{receiver, selector, arguments}` (receiver and arguments as hex). */
function toolArguments(receiver, selector, args, options = {}) {
  const o = opts(options)
  if (!Array.isArray(args)) throw new TetherError(`arguments must be an array, got ${typeof args}`, 'TETHER_UNSUPPORTED_TYPE')
  const r = typedJson(receiver, o.maxDepth)
  const a = typedJson(args, o.maxDepth)
  return JSON.parse(call(() => native.tetherToolArguments(r, String(selector), a, o.latin1)))
}

/** The `send` tool's hex result -> value (answer tag optional). */
function decodeResultHex(hex, options) {
  const o = opts(options)
  return fromTyped(JSON.parse(call(() => native.tetherDecodeResultHex(String(hex), o.latin1))))
}

/** The `send` tool's output `{"result": "<hex>"}` (object or JSON text) -> value. */
function readToolResult(output, options) {
  const o = opts(options)
  const text = typeof output === 'string' ? output : ArrayBuffer.isView(output) ? Buffer.from(toBytes(output, 'output')).toString('utf8') : JSON.stringify(output)
  return fromTyped(JSON.parse(call(() => native.tetherReadToolResult(text, o.latin1))))
}

module.exports = {
  MAX_SMALL_INTEGER,
  MAX_EXPOSURE_HASH,
  DEFAULT_MAX_DEPTH,
  TetherSymbol,
  TetherProxy,
  TetherUuid,
  encode,
  decode,
  encodeMessageSend,
  decodeMessageSend,
  encodeAnswer,
  decodeAnswer,
  encodeHandshake,
  decodeHandshake,
  toHex,
  fromHex,
  toolArguments,
  decodeResultHex,
  readToolResult,
  toTyped,
  fromTyped,
  TetherError,
  PolywireError,
}
