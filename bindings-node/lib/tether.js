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
const { TetherError, PolywireError, fromNative, argError, bytesArg, boolArg, describe } = require('./errors.js')

// A parameter of a type Tether cannot take: a coded TypeError (the code
// Python gives the same mistake); a bad option: TETHER_INVALID_OPTION.
const WRONG_TYPE = 'TETHER_UNSUPPORTED_TYPE'

function wrongType(message) {
  return argError(TypeError, WRONG_TYPE, message)
}

function toBytes(value, name) {
  return bytesArg(value, name, WRONG_TYPE)
}

// An exposure hash: an integer number (or BigInt) 0..MAX_EXPOSURE_HASH.
function exposureHashArg(value, what) {
  if (typeof value === 'bigint' && value >= 0n && value <= BigInt(MAX_EXPOSURE_HASH)) return Number(value)
  if (typeof value !== 'number' && typeof value !== 'bigint') {
    throw wrongType(`${what} exposure hash must be an integer number, got ${describe(value)}`)
  }
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_EXPOSURE_HASH) return value
  throw new TetherError(
    `${what} exposure hash ${describe(value)} is out of range: it must be an integer 0..=${MAX_EXPOSURE_HASH} (0x0ffffffe)`,
    'TETHER_EXPOSURE_HASH_RANGE',
  )
}

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
    if (typeof name !== 'string') throw wrongType(`a TetherSymbol's name must be a string, got ${describe(name)}`)
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
    this.exposureHash = exposureHashArg(exposureHash, "a TetherProxy's")
    Object.freeze(this)
  }
  equals(other) {
    return other instanceof TetherProxy && other.exposureHash === this.exposureHash
  }
}

/** A UUID value (Tether tag 0x20000011); kept as lowercase hyphenated text. */
class TetherUuid {
  constructor(text) {
    if (typeof text !== 'string') throw wrongType(`a TetherUuid's text must be a string (a UUID, 8-4-4-4-12 hex), got ${describe(text)}`)
    const s = text.toLowerCase()
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

const MAX_U32 = 0xffffffff

function invalidOption(message) {
  return new TetherError(message, 'TETHER_INVALID_OPTION')
}

// `maxDepth`: an integer 0..2^32-1 (TETHER_INVALID_OPTION otherwise).
function maxDepthArg(maxDepth) {
  if (typeof maxDepth !== 'number' || !Number.isInteger(maxDepth) || maxDepth < 0 || maxDepth > MAX_U32) {
    throw invalidOption(`maxDepth must be an integer 0..${MAX_U32}, got ${describe(maxDepth)}`)
  }
  return maxDepth
}

function unsupported(v) {
  return new TetherError(
    `cannot encode ${v === undefined ? 'undefined' : typeof v === 'symbol' ? 'a symbol' : typeof v === 'function' ? 'a function' : Object.prototype.toString.call(v)} as Tether: use an integer, bigint, boolean, null, string, TetherSymbol, Uint8Array, array, TetherUuid or TetherProxy`,
    'TETHER_UNSUPPORTED_TYPE',
  )
}

// A value that is not an array -> its tape token (see src/tether.rs: the
// tape lists a value's tokens in prefix order, an Array as the number -1 - n
// then its n elements).
function scalarToken(v) {
  switch (typeof v) {
    case 'number':
      // Negative numbers are Array headers on the tape: send those as digits.
      if (Number.isInteger(v)) return v >= 0 && Number.isSafeInteger(v) ? v : ['i', BigInt(v).toString()]
      throw new TetherError(`cannot encode ${v}: only integers have a Tether encoding (send it as a String)`, 'TETHER_UNSUPPORTED_TYPE')
    case 'bigint':
      return ['i', v.toString()]
    case 'boolean':
    case 'string':
      return v
  }
  if (v === null) return null
  if (v instanceof TetherSymbol) return ['y', v.name]
  if (v instanceof TetherProxy) return ['p', v.exposureHash]
  if (v instanceof TetherUuid) return ['u', v.value]
  if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) {
    const b = toBytes(v, 'value')
    return ['b', Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')]
  }
  throw unsupported(v)
}

/**
 * A JavaScript value -> its tape, walking arrays with an explicit stack (no
 * recursion, so nesting is bounded by maxDepth and memory only). Holes
 * (sparse arrays) are refused at the first one, so a huge `length` fails
 * fast; an array inside itself is TETHER_CYCLE; an array whose length
 * changes while it is walked (a getter or Proxy trap mutating it) is
 * TETHER_MUTATED.
 */
function toTape(value, maxDepth = DEFAULT_MAX_DEPTH) {
  const tape = []
  const arrays = []
  const next = []
  const lengths = []
  let v = value
  for (;;) {
    if (Array.isArray(v)) {
      if (arrays.length >= maxDepth) {
        // A cycle always runs into the depth limit, so it is looked for only
        // here (once, over the open arrays), not on every array.
        if (arrays.includes(v) || new Set(arrays).size !== arrays.length) {
          throw new TetherError('an array contains itself: Tether has no references', 'TETHER_CYCLE')
        }
        throw new TetherError(`Arrays nested deeper than ${maxDepth} levels (raise maxDepth if this is intended)`, 'TETHER_TOO_DEEP')
      }
      const n = v.length
      if (!Number.isInteger(n) || n < 0 || n > MAX_U32) throw new TetherError(`an array's length ${String(n)} is not a valid length`, 'TETHER_UNSUPPORTED_TYPE')
      tape.push(-1 - n)
      if (n > 0) {
        arrays.push(v)
        next.push(0)
        lengths.push(n)
      }
    } else {
      tape.push(scalarToken(v))
    }
    for (;;) {
      const top = arrays.length - 1
      if (top < 0) return tape
      const a = arrays[top]
      const i = next[top]
      if (i < lengths[top]) {
        next[top] = i + 1
        if (!(i in a)) {
          throw new TetherError(
            `the array at depth ${top} has a hole at index ${i} (length ${lengths[top]}): sparse arrays have no Tether encoding; fill the holes (e.g. with null)`,
            'TETHER_SPARSE_ARRAY',
          )
        }
        v = a[i]
        if (a.length !== lengths[top]) {
          throw new TetherError(`the array at depth ${top} changed length from ${lengths[top]} to ${a.length} while it was encoded`, 'TETHER_MUTATED')
        }
        break
      }
      // Closing: a getter or trap further in may have resized this array.
      if (a.length !== lengths[top]) {
        throw new TetherError(`the array at depth ${top} changed length from ${lengths[top]} to ${a.length} while it was encoded`, 'TETHER_MUTATED')
      }
      arrays.pop()
      next.pop()
      lengths.pop()
    }
  }
}

function tokenValue(t) {
  switch (t[0]) {
    case 'y':
      return new TetherSymbol(t[1])
    case 'b':
      return new Uint8Array(Buffer.from(t[1], 'hex'))
    case 'u':
      return new TetherUuid(t[1])
    case 'p':
      return new TetherProxy(t[1])
    case 'i':
      return Number(t[1])
  }
  throw new TetherError(`not a Tether tape token: ${JSON.stringify(t)}`, 'TETHER_INTERNAL')
}

/** A tape -> the JavaScript value, building arrays with an explicit stack. */
function fromTape(tape) {
  const arrays = []
  const left = []
  let i = 0
  let root
  for (;;) {
    const t = tape[i++]
    let v = t
    let n = 0
    if (typeof t === 'number') {
      if (t < 0) {
        v = []
        n = -1 - t
      }
    } else if (t !== null && typeof t === 'object') {
      v = tokenValue(t)
    }
    const top = arrays.length - 1
    if (top < 0) {
      root = v
    } else {
      arrays[top].push(v)
      if (--left[top] === 0) {
        arrays.pop()
        left.pop()
      }
    }
    if (n > 0) {
      arrays.push(v)
      left.push(n)
    }
    if (arrays.length === 0) return root
  }
}

/** A JavaScript value -> the typed notation ({int}, {string}, {array}, ...). */
function toTyped(v, maxDepth = DEFAULT_MAX_DEPTH) {
  const tape = toTape(v, maxDepthArg(maxDepth))
  const arrays = []
  const left = []
  let root
  for (const t of tape) {
    let typed
    let n = 0
    if (t === null) typed = { nil: null }
    else if (typeof t === 'number') {
      if (t < 0) {
        typed = { array: [] }
        n = -1 - t
      } else typed = { int: t }
    }
    else if (typeof t === 'boolean') typed = { bool: t }
    else if (typeof t === 'string') typed = { string: t }
    else {
      switch (t[0]) {
        case 'y':
          typed = { symbol: t[1] }
          break
        case 'b':
          typed = { bytes: t[1] }
          break
        case 'u':
          typed = { uuid: t[1] }
          break
        case 'p':
          typed = { proxy: t[1] }
          break
        default:
          typed = { int: t[1] }
      }
    }
    const top = arrays.length - 1
    if (top < 0) root = typed
    else {
      arrays[top].push(typed)
      if (--left[top] === 0) {
        arrays.pop()
        left.pop()
      }
    }
    if (n > 0) {
      arrays.push(typed.array)
      left.push(n)
    }
  }
  return root
}

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/
const DIGITS_RE = /^-?[0-9]+$/

// One typed-notation value ({int}, {string}, {array}, ...) -> `{v}` (and
// `items` for an array); anything else is a coded TypeError naming the tag.
function typedOne(t) {
  const bad = (what) => wrongType(`typed must be a typed Tether value ({int}, {string}, {bool}, {nil}, {symbol}, {bytes}, {array}, {uuid} or {proxy}): ${what}`)
  if (t === null || typeof t !== 'object' || Array.isArray(t)) throw bad(`got ${describe(t)}`)
  let keys
  try {
    keys = Object.keys(t)
  } catch {
    throw bad('its keys cannot be read')
  }
  if (keys.length !== 1) throw bad(`got an object with ${keys.length} keys`)
  const tag = keys[0]
  const x = t[tag]
  const must = (ok, what) => {
    if (!ok) throw wrongType(`{${tag}} must hold ${what}, got ${describe(x)}`)
  }
  switch (tag) {
    case 'int':
      if (typeof x === 'string') {
        must(DIGITS_RE.test(x), 'an integer (a number or decimal digits)')
        return { v: Number(x) }
      }
      must(typeof x === 'number' && Number.isInteger(x), 'an integer (a number or decimal digits)')
      return { v: x }
    case 'string':
      must(typeof x === 'string', 'a string')
      return { v: x }
    case 'array':
      must(Array.isArray(x), 'an array of typed values')
      return { v: [], items: x }
    case 'bool':
      must(typeof x === 'boolean', 'a boolean')
      return { v: x }
    case 'nil':
      must(x === null, 'null')
      return { v: null }
    case 'symbol':
      return { v: new TetherSymbol(x) }
    case 'bytes':
      must(typeof x === 'string' && HEX_RE.test(x), 'hex text (an even number of hex digits)')
      return { v: new Uint8Array(Buffer.from(x, 'hex')) }
    case 'uuid':
      return { v: new TetherUuid(x) }
    case 'proxy':
      return { v: new TetherProxy(x) }
  }
  throw bad(`unknown tag ${JSON.stringify(tag)}`)
}

/** The typed notation -> a JavaScript value (an explicit stack, no recursion). */
function fromTyped(typed) {
  const first = typedOne(typed)
  const stack = first.items ? [{ out: first.v, items: first.items, i: 0 }] : []
  while (stack.length > 0) {
    const top = stack[stack.length - 1]
    if (top.i >= top.items.length) {
      stack.pop()
      continue
    }
    const r = typedOne(top.items[top.i++])
    top.out.push(r.v)
    if (r.items) stack.push({ out: r.v, items: r.items, i: 0 })
  }
  return first.v
}

function opts(options) {
  if (options === undefined || options === null) return { latin1: false, maxDepth: DEFAULT_MAX_DEPTH }
  if (typeof options !== 'object') throw invalidOption(`options must be an object, got ${describe(options)}`)
  const { latin1 = false, maxDepth = DEFAULT_MAX_DEPTH } = options
  return { latin1: boolArg(latin1, 'options.latin1', 'TETHER_INVALID_OPTION', false), maxDepth: maxDepthArg(maxDepth) }
}

function selectorArg(selector) {
  const sel = selector instanceof TetherSymbol ? selector.name : selector
  if (typeof sel !== 'string') throw wrongType(`the selector must be a string or TetherSymbol, got ${describe(selector)}`)
  return sel
}

function tapeJson(value, maxDepth) {
  return JSON.stringify(toTape(value, maxDepth))
}

function uuidText(uuid) {
  if (uuid === undefined || uuid === null) return undefined
  if (uuid instanceof TetherUuid) return uuid.value
  if (typeof uuid === 'string') return uuid
  throw wrongType(`uuid must be a string, a TetherUuid or undefined, got ${describe(uuid)}`)
}

/** Encode one value. `{latin1: true}`: one byte per character (U+0000..U+00FF). */
function encode(value, options) {
  const o = opts(options)
  const tape = tapeJson(value, o.maxDepth)
  return call(() => native.tetherEncode(tape, o.latin1, o.maxDepth))
}

/** Decode exactly one value; leftover bytes are an error. */
function decode(data, options) {
  const o = opts(options)
  const bytes = toBytes(data, 'data')
  return fromTape(JSON.parse(call(() => native.tetherDecode(bytes, o.latin1, o.maxDepth))))
}

/**
 * A message-send frame: `receiver` is the exposure hash (a number or a
 * TetherProxy), `selector` a string or TetherSymbol; a random UUID unless
 * `options.uuid` is given.
 */
function encodeMessageSend(receiver, selector, args, options) {
  const o = opts(options)
  const hash = receiver instanceof TetherProxy ? receiver.exposureHash : receiver
  if (typeof hash !== 'number' && typeof hash !== 'bigint') {
    throw wrongType(`the receiver must be an exposure hash (an integer number) or a TetherProxy, got ${describe(receiver)}`)
  }
  const receiverHash = exposureHashArg(hash, "the receiver's")
  const sel = selectorArg(selector)
  if (!Array.isArray(args)) throw wrongType(`arguments must be an array, got ${describe(args)}`)
  const tape = tapeJson(args, o.maxDepth)
  return call(() => native.tetherEncodeMessageSend(receiverHash, sel, tape, uuidText(options?.uuid), o.latin1, o.maxDepth))
}

/** `{uuid, receiver, selector, arguments}` of a message-send frame. */
function decodeMessageSend(data, options) {
  const o = opts(options)
  const bytes = toBytes(data, 'data')
  const m = JSON.parse(call(() => native.tetherDecodeMessageSend(bytes, o.latin1, o.maxDepth)))
  return { uuid: m.uuid, receiver: m.receiver, selector: m.selector, arguments: fromTape(m.arguments) }
}

/** An answer frame: with `options.uuid` the wire form, without it the MCP tool's form. */
function encodeAnswer(value, options) {
  const o = opts(options)
  const tape = tapeJson(value, o.maxDepth)
  return call(() => native.tetherEncodeAnswer(tape, uuidText(options?.uuid), o.latin1, o.maxDepth))
}

/** `{uuid, result}` of an answer frame of either form (`uuid` null for the MCP form). */
function decodeAnswer(data, options) {
  const o = opts(options)
  const bytes = toBytes(data, 'data')
  const a = JSON.parse(call(() => native.tetherDecodeAnswer(bytes, o.latin1, o.maxDepth)))
  return { uuid: a.uuid, result: fromTape(a.result) }
}

function encodeHandshake(exposureHash) {
  const h = exposureHashArg(exposureHash, "the handshake's")
  return call(() => native.tetherEncodeHandshake(h))
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
function fromHex(hex, options) {
  if (options !== undefined && options !== null && typeof options !== 'object') throw invalidOption(`options must be an object, got ${describe(options)}`)
  const { words = true } = options ?? {}
  if (typeof hex !== 'string') throw wrongType(`hex must be a string, got ${describe(hex)}`)
  const w = boolArg(words, 'options.words', 'TETHER_INVALID_OPTION', true)
  return call(() => native.tetherFromHex(hex, w))
}

/** The MCP `send` tool's `{receiver, selector, arguments}` (receiver and arguments as hex). */
function toolArguments(receiver, selector, args, options) {
  const o = opts(options)
  if (!Array.isArray(args)) throw wrongType(`arguments must be an array, got ${describe(args)}`)
  const sel = selectorArg(selector)
  const r = tapeJson(receiver, o.maxDepth)
  const a = tapeJson(args, o.maxDepth)
  return JSON.parse(call(() => native.tetherToolArguments(r, sel, a, o.latin1, o.maxDepth)))
}

/** The `send` tool's hex result -> value (answer tag optional). */
function decodeResultHex(hex, options) {
  const o = opts(options)
  if (typeof hex !== 'string') throw wrongType(`hex must be a string, got ${describe(hex)}`)
  return fromTape(JSON.parse(call(() => native.tetherDecodeResultHex(hex, o.latin1, o.maxDepth))))
}

/** The `send` tool's output `{"result": "<hex>"}` (object or JSON text) -> value. */
function readToolResult(output, options) {
  const o = opts(options)
  let text
  if (typeof output === 'string') text = output
  else if (ArrayBuffer.isView(output) || output instanceof ArrayBuffer) text = Buffer.from(toBytes(output, 'output')).toString('utf8')
  else if (output !== null && typeof output === 'object' && !Array.isArray(output)) {
    // Only the result field matters; stringifying the whole object would
    // walk whatever else it holds.
    const result = output.result
    text = typeof result === 'string' ? JSON.stringify({ result }) : '{}'
  } else throw wrongType(`output must be a string, bytes or an object {result}, got ${describe(output)}`)
  return fromTape(JSON.parse(call(() => native.tetherReadToolResult(text, o.latin1, o.maxDepth))))
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
