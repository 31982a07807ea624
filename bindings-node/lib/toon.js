'use strict'
// polywire/toon: TOON text, a drop-in for @toon-format/toon 4.4.0 (same
// exports, options, output bytes, accepted inputs and error class), with the
// encoder and decoder in Rust.
//
// Values cross into Rust packed, both ways: a plain value is walked once
// here into ops with its numbers inline (a Float64Array) and its strings
// concatenated into one string, which Rust reads (`encodePacked`,
// src/toon/pack.rs); decoding, Rust writes ops (an Int32Array), the numbers
// (a Float64Array) and the strings from the decoder's calls and `unpack`
// builds the value. Keys cross once, as ids of a table each side keeps
// between calls. Measured against the two other
// ways (JSON text with JSON.stringify / JSON.parse, and building or reading
// the values through N-API: toonEncodeJson / toonDecodeJson and
// toonEncodeDirect / toonDecodeDirect in the native module), µs per call,
// median of 9, Node 20, bench/toon_bench.mjs datasets, same run:
//
//   dataset     encode: packed / JSON / direct     decode: packed / JSON / direct
//   orders              770 / 2087 / 3936                 786 / 1444 / 3075
//   analytics           433 / 1135 / 3765                 510 / 1077 / 2612
//   repos                78 /  135 /  355                  87 /  123 /  297
//   config               13 /   19 /   66                  16 /   24 /   58
//
// (The packed encode figures predate the walk's single array with one
// position in a local, which took a further 3-15% off, tables written as
// they are read, a fifth off the Rust side of analytics (see pack.rs), and
// faster numbers and strings in the core. In the final 2026-11-25 benchmark
// runs: orders about 750, analytics 305, repos 57, config 13.)
//
// The JSON route stays for what the packed route does not take: encoding
// with a replacer or raw strings, or a value that is not plain (`isPlain`:
// dates, Maps, Sets, BigInts, class instances, toJSON methods, undefined or
// functions go through `normalizeValue`, a port of the reference's, first);
// decoding text with lone surrogates, lines holding newlines, or over 64 MB.
// Neither route sets a prototype: a `__proto__` key becomes an own property,
// as in the reference.

const native = require('./native.js')
const { PolywireError, argError, brand, describe } = require('./errors.js')

const DELIMITERS = {
  comma: ',',
  tab: '\t',
  pipe: '|',
}
const DEFAULT_DELIMITER = DELIMITERS.comma

/** Deepest nesting encoded or decoded (containers in containers). */
const MAX_DEPTH = 1024
/** Largest indentSize accepted when encoding. */
const MAX_INDENT = 256

/**
 * Thrown when TOON text cannot be decoded. Like the reference's class it
 * extends SyntaxError, its message starts with `Line N: `, and it has `line`
 * and `source` (the offending line as written); polywire adds a stable `code`
 * (e.g. `TOON_LENGTH_MISMATCH`) and `column` where it applies.
 */
class ToonDecodeError extends SyntaxError {
  constructor(message, context) {
    const prefix = context?.line !== undefined ? `Line ${context.line}: ` : ''
    super(prefix + message, context?.cause !== undefined ? { cause: context.cause } : undefined)
    this.name = 'ToonDecodeError'
    this.line = context?.line
    this.source = context?.source
    this.code = context?.code ?? 'TOON_DECODE_ERROR'
    this.column = context?.column
  }
}

brand(ToonDecodeError.prototype)

/** Thrown when a value cannot be encoded (nesting beyond MAX_DEPTH, a cycle, a bad option). */
class ToonEncodeError extends PolywireError {}

/** Code of the TypeError / RangeError thrown for a bad argument or option. */
const INVALID = 'TOON_INVALID_ARGUMENT'
/** Nesting past which the normalisation looks for cycles among the
 * containers above (below it a depth counter is all it costs). */
const CYCLE_CHECK_DEPTH = 64
/** Most items an array may have: TOON text holds at least a character per
 * item, and V8's strings stop at 2^29 - 24 characters (a sparse array with
 * a huge length would otherwise be walked hole by hole, 1.7 GB taken). */
const MAX_ITEMS = 2 ** 29

function tooDeep() {
  return new ToonEncodeError(`expected values nested at most ${MAX_DEPTH} levels deep (is the value circular?)`, 'TOON_TOO_DEEP')
}

function cycle() {
  return new ToonEncodeError('cannot encode a circular value: an object or array contains itself', 'TOON_CYCLE')
}

function tooManyItems(n) {
  return new ToonEncodeError(`cannot encode an array of length ${n}: the text would exceed the longest string (at most ${MAX_ITEMS} items)`, 'TOON_TOO_LARGE')
}

// ------------------------------------------------------------ raw strings

const COMMENT_LINE = /(?:^\uFEFF?|\n) *#/

/** Text emitted verbatim at a primitive position (see `rawString`). */
class RawString {
  constructor(value) {
    if (typeof value !== 'string') throw argError(TypeError, INVALID, `Raw string must be a string, got ${describe(value)}`)
    if (COMMENT_LINE.test(value)) {
      throw argError(TypeError, INVALID, `Raw string must not contain a line starting with "#": ${JSON.stringify(value)}`)
    }
    this.value = value
  }
}

/** Wrap pre-formatted text to be emitted verbatim, typically from a replacer. */
function rawString(value) {
  return new RawString(value)
}

const ESCAPES = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** Escape a string as the encoder does inside quotes (without the quotes). */
function escapeString(value) {
  if (typeof value !== 'string') throw argError(TypeError, INVALID, `escapeString expects a string, got ${describe(value)}`)
  return value.replace(/[\\"\u0000-\u001F]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

// ------------------------------------------------------------ normalisation

// An own data property, never through the `__proto__` setter.
function setOwn(target, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    target[key] = value
  }
}

const SURROGATE = /[\uD800-\uDFFF]/

// The reference's TypeError (its class and message), with the code Python
// gives the same string (TOON_UNPAIRED_SURROGATE) and polywire's brand.
function surrogateError(message) {
  return argError(TypeError, 'TOON_UNPAIRED_SURROGATE', message)
}

function assertNoLoneSurrogate(value, what) {
  if (!SURROGATE.test(value)) return
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 0xd800 || c > 0xdfff) continue
    const next = value.charCodeAt(i + 1)
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++
      continue
    }
    throw surrogateError(`Cannot encode ${what} containing an unpaired surrogate U+${c.toString(16).toUpperCase()} at index ${i}`)
  }
}

function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value)
  return proto === null || proto === Object.prototype
}

// The reference's normalisation: what a host value encodes as. `depth`:
// containers above; `above`: those from CYCLE_CHECK_DEPTH down (a cycle
// repeats, so it shows there), to tell a cycle (TOON_CYCLE) from nesting
// too deep (TOON_TOO_DEEP). Values nested deeper than the encoder takes
// fail here rather than overflow the stack (the encoder's own limit, one
// level shallower, gives its error first for anything else).
function normalizeValue(value, depth = 0, above = undefined) {
  if (value === null) return null
  if (value instanceof RawString) return value
  if (typeof value === 'object' && 'toJSON' in value && typeof value.toJSON === 'function') {
    const next = value.toJSON()
    if (next !== value) return normalizeValue(next, depth, above)
  }
  switch (typeof value) {
    case 'string':
      assertNoLoneSurrogate(value, 'string value')
      return value
    case 'boolean':
      return value
    case 'number':
      return Object.is(value, -0) ? 0 : Number.isFinite(value) ? value : null
    case 'bigint':
      return value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER ? Number(value) : value.toString()
    case 'object':
      break
    default:
      return null
  }
  if (value instanceof Date) return value.toISOString()
  if (depth > MAX_DEPTH) {
    if (above !== undefined && above.includes(value)) throw cycle()
    throw tooDeep()
  }
  if (depth >= CYCLE_CHECK_DEPTH) {
    above ??= []
    if (above.includes(value)) throw cycle()
    above.push(value)
    try {
      return normalizeContainer(value, depth, above)
    } finally {
      above.pop()
    }
  }
  return normalizeContainer(value, depth, above)
}

function normalizeContainer(value, depth, above) {
  const d = depth + 1
  if (Array.isArray(value)) {
    if (value.length > MAX_ITEMS) throw tooManyItems(value.length)
    return Array.from(value, (item) => normalizeValue(item, d, above))
  }
  if (value instanceof Set) {
    if (value.size > MAX_ITEMS) throw tooManyItems(value.size)
    return Array.from(value, (item) => normalizeValue(item, d, above))
  }
  if (value instanceof Map) {
    return Object.fromEntries(Array.from(value, ([k, v]) => [String(k), normalizeValue(v, d, above)]))
  }
  if (isPlainObject(value)) {
    const out = {}
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue
      assertNoLoneSurrogate(key, 'object key')
      setOwn(out, key, normalizeValue(value[key], d, above))
    }
    return out
  }
  return null
}

const isContainer = (v) => v !== null && typeof v === 'object' && !(v instanceof RawString)
const isPrimitiveLike = (v) => v === null || typeof v !== 'object' || v instanceof RawString

// The reference's replacer semantics: called for the root (key '', path []),
// every property and every element; `undefined` omits (except at the root);
// results are normalised again; a RawString for a container is ignored.
function applyReplacer(root, replacer) {
  const replaced = replacer('', root, [])
  if (replaced === undefined) return replaceChildren(root, replacer, [])
  return replaceValue(root, replaced, replacer, [])
}

function replaceValue(original, replaced, replacer, path) {
  if (replaced instanceof RawString && !isPrimitiveLike(original)) return replaceChildren(original, replacer, path)
  return replaceChildren(normalizeValue(replaced), replacer, path)
}

function replaceChildren(value, replacer, path) {
  if (!isContainer(value)) return value
  // A replacer that answers each value with a new container nests without
  // end (each result is normalised afresh, so no depth carries over).
  if (path.length > MAX_DEPTH) throw tooDeep()
  if (Array.isArray(value)) {
    const out = []
    for (let i = 0; i < value.length; i++) {
      const childPath = [...path, i]
      const r = replacer(String(i), value[i], childPath)
      if (r !== undefined) out.push(replaceValue(value[i], r, replacer, childPath))
    }
    return out
  }
  const out = {}
  for (const [key, v] of Object.entries(value)) {
    const childPath = [...path, key]
    const r = replacer(key, v, childPath)
    if (r !== undefined) setOwn(out, key, replaceValue(v, r, replacer, childPath))
  }
  return out
}

// Whether JSON.stringify(value) writes exactly the normalised value: only
// null, strings, numbers, booleans, arrays and plain objects without toJSON;
// no undefined, function or symbol property (JSON.stringify drops them, the
// reference writes null); no BigInt. (Lone surrogates are caught in Rust.)
function isPlain(value, depth) {
  if (depth > MAX_DEPTH) return false
  if (Array.isArray(value)) {
    if ('toJSON' in value || value.length >= P_MAX) return false
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      if (typeof item === 'object' ? item !== null && !isPlain(item, depth + 1) : typeof item === 'bigint') return false
    }
    return true
  }
  const proto = Object.getPrototypeOf(value)
  if ((proto !== Object.prototype && proto !== null) || 'toJSON' in value) return false
  for (const key in value) {
    const item = value[key]
    const t = typeof item
    if (t === 'object' ? item !== null && !isPlain(item, depth + 1) : t !== 'string' && t !== 'number' && t !== 'boolean') {
      return false
    }
  }
  return true
}

// ------------------------------------------------------------ options

// An option's value in a message, as the reference writes it: JSON for
// strings (a BigInt or a value whose conversion throws cannot fail here).
function shown(v, json) {
  if (typeof v === 'bigint') return `${v}n`
  try {
    return json ? JSON.stringify(v) : String(v)
  } catch {
    return typeof v
  }
}

// Options are read from an object (or undefined/null, the defaults); errors
// are TypeErrors/RangeErrors with code TOON_INVALID_ARGUMENT.
function checkOptions(options) {
  if (options !== undefined && options !== null && typeof options !== 'object' && typeof options !== 'function') {
    throw argError(TypeError, INVALID, `options must be an object, got ${describe(options)}`)
  }
}

function resolveIndent(options, max) {
  const n = options?.indentSize ?? options?.indent ?? 2
  // At most 2^31 - 1: the native side takes a u32 (larger would wrap).
  if (!Number.isInteger(n) || n < (max === undefined ? 1 : 0) || n > (max ?? 2 ** 31 - 1)) {
    throw argError(typeof n === 'number' ? RangeError : TypeError, INVALID, `Invalid indentSize ${shown(n)}: expected an integer from ${max === undefined ? 1 : 0} to ${max ?? 2 ** 31 - 1}`)
  }
  return n
}

function resolveEncodeOptions(options) {
  checkOptions(options)
  const delimiter = options?.delimiter ?? DEFAULT_DELIMITER
  if (delimiter !== ',' && delimiter !== '\t' && delimiter !== '|') {
    throw argError(TypeError, INVALID, `Invalid delimiter ${shown(delimiter, true)}. Valid delimiters are: comma (,), tab (\\t), pipe (|)`)
  }
  const keyFolding = options?.keyFolding ?? 'off'
  if (keyFolding !== 'off' && keyFolding !== 'safe') {
    throw argError(TypeError, INVALID, `Invalid keyFolding ${shown(keyFolding, true)}. Valid values are: 'off', 'safe'`)
  }
  const flattenDepth = options?.flattenDepth ?? Infinity
  if (typeof flattenDepth !== 'number' || Number.isNaN(flattenDepth) || flattenDepth < 0) {
    throw argError(TypeError, INVALID, `Invalid flattenDepth ${shown(flattenDepth)}: expected a non-negative number`)
  }
  const replacer = options?.replacer
  if (replacer !== undefined && typeof replacer !== 'function') {
    throw argError(TypeError, INVALID, `Invalid replacer ${describe(replacer)}: expected a function`)
  }
  return {
    indentSize: resolveIndent(options, MAX_INDENT),
    delimiter: delimiter.charCodeAt(0),
    keyFolding: keyFolding === 'safe',
    flattenDepth: Math.floor(flattenDepth),
    replacer: options?.replacer,
  }
}

function resolveDecodeOptions(options) {
  checkOptions(options)
  const expandPaths = options?.expandPaths ?? 'off'
  if (expandPaths !== 'off' && expandPaths !== 'safe') {
    throw argError(TypeError, INVALID, `Invalid expandPaths ${shown(expandPaths, true)}. Valid values are: 'off', 'safe'`)
  }
  // strict is taken as the reference takes it: by truthiness.
  return { indentSize: resolveIndent(options), strict: Boolean(options?.strict ?? true), expandPaths: expandPaths === 'safe' }
}

// ------------------------------------------------------------ errors

const POSITION = / at line (\d+)(?:, column (\d+))?$/

// The line as the reference reports it: without `\r`, without a BOM on line 1.
function sourceLine(text, line) {
  let start = 0
  for (let i = 1; i < line; i++) {
    start = text.indexOf('\n', start) + 1
    if (start === 0) return undefined
  }
  let end = text.indexOf('\n', start)
  if (end === -1) end = text.length
  let s = text.slice(start, end)
  if (s.endsWith('\r')) s = s.slice(0, -1)
  if (line === 1 && s.startsWith('\uFEFF')) s = s.slice(1)
  return s
}

function isNativeError(e) {
  return e instanceof Error && typeof e.code === 'string' && /^(TOON|JSON)_[A-Z0-9_]+$/.test(e.code)
}

// `nl`: the stand-in for newlines inside lines given one by one, if any
// (see `linesText`), turned back into '\n' in the message and source line.
function decodeError(e, text, nl) {
  if (!isNativeError(e)) return e
  const message = nl ? e.message.replaceAll(nl, '\n') : e.message
  const m = POSITION.exec(message)
  if (!m) return new ToonDecodeError(message, { code: e.code })
  const line = Number(m[1])
  // The reference gives no source line for a blank line inside an array.
  const source = e.code === 'TOON_BLANK_LINE' ? undefined : sourceLine(text, line)
  return new ToonDecodeError(message.slice(0, m.index), {
    line,
    column: m[2] === undefined ? undefined : Number(m[2]),
    source: nl && source !== undefined ? source.replaceAll(nl, '\n') : source,
    code: e.code,
  })
}

function encodeError(e) {
  if (!isNativeError(e)) return e
  return new ToonEncodeError(e.message, e.code)
}

// ------------------------------------------------------------ encode

// JSON text of the value to encode, with raw strings (if any) as
// placeholder objects `{[rawKey]: index}`.
function toJson(input, replacer) {
  if (replacer === undefined) {
    const t = typeof input
    if (t === 'string' || t === 'number' || t === 'boolean' || input === null || (t === 'object' && isPlain(input, 0))) {
      return { json: JSON.stringify(input), rawKey: null, raws: null }
    }
  }
  return normalizedJson(input, replacer)
}

function normalizedJson(input, replacer) {
  let value = normalizeValue(input)
  if (replacer !== undefined) value = applyReplacer(value, replacer)
  let raws = null
  let rawKey = null
  const json = JSON.stringify(value, function (key, v) {
    if (!(v instanceof RawString)) return v
    if (raws === null) {
      raws = []
      rawKey = `\u0000polywire-raw-${Math.random().toString(36).slice(2)}`
    }
    raws.push(v.value)
    return { [rawKey]: raws.length - 1 }
  })
  return { json, rawKey, raws }
}

// ------------------------------------------------------------ packed route
//
// A plain value (what `isPlain` accepts) is walked once here into what Rust
// reads (bindings-node/src/toon/pack.rs, where the format is described):
// ops (`payload * 16 + tag`) with the numbers inline, in a Float64Array, and
// the strings joined into one string. Numbers stay doubles
// (V8 spends most of JSON.stringify's time on number-heavy data formatting
// them), and keys are numbered in a table kept between calls, so each key's
// text crosses once (figures at the top of this file).
//
// The key numbering here and the table in Rust must agree: a key's id is the
// order in which it was first sent. Whenever a call does not end in Rust
// successfully (the value turned out not plain, a getter threw, Rust failed),
// the numbering is forgotten and the next call tells Rust to forget its
// table too (`packReset`).

const P_NULL = 0
const P_FALSE = 1
const P_TRUE = 2
const P_NUM = 3
const P_STR = 4
const P_ARR = 5
const P_OBJ = 6
const P_KEY_NEW = 7
const P_KEY = 8
const P_KEY_TEXT = 9
/** A string of the wide text (see packStrs). */
const P_STR_WIDE = 10
const P_SHIFT = 4
/** `1 << P_SHIFT`: an op is `payload * P_UNIT + tag`. */
const P_UNIT = 16
/** Counts and string lengths must fit an op's payload (int32 ops). */
const P_MAX = 2 ** 27
/** Keys kept in the table at most (pack.rs's KEY_CAP), and their longest. */
const PACK_KEY_CAP = 4096
const PACK_KEY_MAX_LEN = 64

// This instance's packed-route state in Rust (its key tables), made on
// first use.
let packState = -1
// The ops, numbers inline (a number op is followed by the number): one
// array of 8-byte slots and one position, which the walk keeps in a local
// and hands down and back (module variables would be loaded and stored at
// every op). An op is an int32 in the first half of its slot
// (`packOps32[2 * at]`), a number a double (`packBuf[at]`).
let packBuf = new Float64Array(2048)
let packOps32 = new Int32Array(packBuf.buffer)
// The walk's text, in two strings appended with `+=`, each a rope that V8
// flattens once at the end (by WIDE_CHAR's test, or as Rust reads it):
// * text: the strings and new keys, in walk order;
// * wide: strings of at least PACK_WIDE_MIN units that hold a character
//   beyond U+00FF, so that `text` can stay one-byte and go to Rust as
//   Latin-1 (V8 flattens a one-byte rope with plain copies; a two-byte one
//   is widened piece by piece, and then read at twice the bytes). A
//   regular expression that needs such a character fails on a one-byte
//   string without looking at it (11 ns); on a two-byte string it scans,
//   hence only long strings, where the text is, are checked.
// They are properties of an object made for each call rather than module
// variables: a store into the module's (old) context of a new rope piece
// takes the write barrier's slow path every time, a store into a young
// object does not (repos 2-4% faster). Pushed to an array and joined
// instead of `+=`, the array had to grow and the join cost more than the
// flattening: 3-6% slower on every benchmark dataset.
let packStrs = { text: '', wide: '' }
const PACK_NO_STRS = packStrs
const WIDE_CHAR = /[^\x00-\xff]/
const PACK_WIDE_MIN = 64
const packKeyIds = new Map()
// Per parent key, the first keys of the last object packed under it and
// their ids: objects under one key mostly share their keys (rows under
// their array's key), and a string comparison costs less than a Map
// lookup. The cache slot of an object is its key's id + 1 (of an array's
// items, the array's), 0 for the root and for keys without an id. (Per
// nesting depth instead, as before, config's objects, siblings with
// different keys, missed 70 times in 185: their walk took 10% longer.)
// A cache starts at PACK_CACHE_START keys and grows to PACK_CACHE_SLOTS,
// so that a document with many parent keys keeps little.
let packKeyCache = []
let packKeyCacheIds = []
const PACK_CACHE_START = 8
const PACK_CACHE_SLOTS = 64

// Strings only (no holes), so that comparing with a key is a string
// compare; a cache of `size` keys with the first `keep` of `from`'s.
function newKeyCache(slot, size = PACK_CACHE_START, from = undefined, keep = 0) {
  const ids = new Int32Array(size).fill(-1)
  const keys = new Array(size).fill('')
  for (let i = 0; i < keep; i++) {
    keys[i] = from[i]
    ids[i] = packKeyCacheIds[slot][i]
  }
  packKeyCacheIds[slot] = ids
  return (packKeyCache[slot] = keys)
}
let packReset = true
// Set while a value is walked: a getter that encodes again takes the JSON
// route rather than the shared arrays.
let packing = false

// Room for at least `at + 8` slots; the (new) array (and `packOps32` its
// int32 view).
function packGrow(at) {
  const b = new Float64Array(Math.max(packBuf.length * 2, at + 8))
  b.set(packBuf)
  packOps32 = new Int32Array(b.buffer)
  return (packBuf = b)
}

// A string value appended to its text; its op's tag.
function packString(item) {
  if (item.length >= PACK_WIDE_MIN && WIDE_CHAR.test(item)) {
    packStrs.wide += item
    return P_STR_WIDE
  }
  packStrs.text += item
  return P_STR
}

// The walk: each function writes one value's ops from `at` and returns the
// position after them, or -1 when the value is not plain (see isPlain) or
// too large for an op. A caller makes room for four slots (a key op and a
// number, or a value op) before each item; a container grows the array
// itself as its items need and callers then read `packBuf` again. `slot`:
// the key cache of the objects there (see packKeyCache).

// One value of any kind (the containers' loops write strings and numbers
// themselves and call this for the rest; the root comes here too). With
// `inArray`, undefined, functions and symbols are null, as both
// JSON.stringify and the reference have them in arrays.
function packOther(item, at, depth, inArray, slot) {
  // Each test a `typeof item === '...'` of its own: V8 compiles that to a
  // check, but calls a builtin for a typeof whose string is kept or switched on.
  if (typeof item === 'object') {
    if (item === null) {
      packOps32[at << 1] = P_NULL
      return at + 1
    }
    return Array.isArray(item) ? packArray(item, at, depth + 1, slot) : packObject(item, at, depth + 1, slot)
  }
  if (typeof item === 'boolean') {
    packOps32[at << 1] = item ? P_TRUE : P_FALSE
    return at + 1
  }
  if (typeof item === 'string') {
    if (item.length >= P_MAX) return -1
    packOps32[at << 1] = item.length * P_UNIT + packString(item)
    return at + 1
  }
  if (typeof item === 'number') {
    packOps32[at << 1] = P_NUM
    packBuf[at + 1] = item
    return at + 2
  }
  if (typeof item === 'bigint' || !inArray) return -1
  packOps32[at << 1] = P_NULL
  return at + 1
}

// A toJSON that is not undefined (the reference calls it when it is a
// function) sends the value to the JSON route, which normalises as the
// reference does; a load costs less than `'toJSON' in value`.
function packArray(value, at, depth, slot) {
  if (depth > MAX_DEPTH || value.toJSON !== undefined) return -1
  const n = value.length
  if (n >= P_MAX) return -1
  let b = packBuf
  let w = packOps32
  w[at++ << 1] = n * P_UNIT + P_ARR
  for (let i = 0; i < n; i++) {
    if (at + 4 > b.length) {
      b = packGrow(at)
      w = packOps32
    }
    const item = value[i]
    if (typeof item === 'number') {
      w[at << 1] = P_NUM
      b[at + 1] = item
      at += 2
    } else {
      at = packOther(item, at, depth, true, slot)
      if (at < 0) return -1
      b = packBuf
      w = packOps32
    }
  }
  return at
}

function packObject(value, at, depth, slot) {
  // toJSON first: the load checks the object's map, which lets V8 inline
  // getPrototypeOf (without it, a runtime call per object).
  if (depth > MAX_DEPTH || value.toJSON !== undefined) return -1
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return -1
  let b = packBuf
  let w = packOps32
  const head = at++
  let count = 0
  let cache = packKeyCache[slot] ?? newKeyCache(slot)
  let cacheIds = packKeyCacheIds[slot]
  for (const key in value) {
    if (at + 4 > b.length) {
      b = packGrow(at)
      w = packOps32
    }
    // A slot not yet filled holds '' with id -1 (an empty key is a key too).
    let id = count < cache.length && cache[count] === key ? cacheIds[count] : -1
    if (id >= 0) {
      w[at++ << 1] = id * P_UNIT + P_KEY
    } else {
      id = packKeyIds.get(key) ?? -1
      if (id >= 0) {
        w[at++ << 1] = id * P_UNIT + P_KEY
      } else if (key.length <= PACK_KEY_MAX_LEN && packKeyIds.size < PACK_KEY_CAP) {
        id = packKeyIds.size
        packKeyIds.set(key, id)
        w[at++ << 1] = key.length * P_UNIT + P_KEY_NEW
        packStrs.text += key
      } else {
        if (key.length >= P_MAX) return -1
        w[at++ << 1] = key.length * P_UNIT + P_KEY_TEXT
        packStrs.text += key
      }
      if (id >= 0 && count < PACK_CACHE_SLOTS) {
        if (count >= cache.length) {
          cache = newKeyCache(slot, PACK_CACHE_SLOTS, cache, count)
          cacheIds = packKeyCacheIds[slot]
        }
        cache[count] = key
        cacheIds[count] = id
      }
    }
    // Strings and numbers here (most values), the rest in a call.
    const item = value[key]
    if (typeof item === 'number') {
      w[at << 1] = P_NUM
      b[at + 1] = item
      at += 2
    } else if (typeof item === 'string') {
      if (item.length >= P_MAX) return -1
      w[at++ << 1] = item.length * P_UNIT + packString(item)
    } else {
      // Under a key without an id (P_KEY_TEXT), the root's slot.
      at = packOther(item, at, depth, false, id + 1)
      if (at < 0) return -1
      b = packBuf
      w = packOps32
    }
    count++
  }
  if (count >= P_MAX) return -1
  w[head << 1] = count * P_UNIT + P_OBJ
  return at
}

// Whether for...in sees inherited keys: then it is not the own keys that
// JSON.stringify and the reference write.
function objectPrototypeEnumerable() {
  for (const key in Object.prototype) return true
  return false
}

function forgetKeys() {
  packKeyIds.clear()
  packKeyCache = []
  packKeyCacheIds = []
  packReset = true
}

/** The TOON text of a plain value through the packed route; undefined when the value is not plain. */
// The native call that takes the packed value: TOON text by default;
// `llm.js` passes `native.llmPackChoose` (through `packedChoice`).
function packEncode(state, ops, end, text, reset, o, wide, oneByte) {
  return native.toonPackEncode(state, ops, end, text, reset, o.indentSize, o.delimiter, o.keyFolding, o.flattenDepth, wide, oneByte)
}

function encodePacked(input, o, finish = packEncode) {
  if (objectPrototypeEnumerable()) return undefined
  if (packKeyIds.size >= PACK_KEY_CAP) forgetKeys()
  packStrs = { text: '', wide: '' }
  packing = true
  let end = -1
  try {
    // The root container is at depth 0, as in isPlain.
    end = packOther(input, 0, -1, false, 0)
  } catch (e) {
    forgetKeys()
    throw e
  } finally {
    packing = false
  }
  const { text, wide } = packStrs
  packStrs = PACK_NO_STRS
  if (end < 0) {
    forgetKeys()
    return undefined
  }
  if (packState < 0) packState = native.toonPackState()
  const reset = packReset
  packReset = false
  try {
    // One-byte text fails the test at once (a two-byte one is scanned to
    // its first wide character).
    const oneByte = !WIDE_CHAR.test(text)
    return finish(packState, packBuf, end, text, reset, o, wide === '' ? undefined : wide, oneByte)
  } catch (e) {
    forgetKeys()
    // The native key table follows another instance of this module (see
    // pack.rs, PackState): walk again, sending every key.
    if (e?.code === 'TOON_PACK_STALE' && !reset) return encodePacked(input, o, finish)
    // A lone surrogate: the JSON route's normalisation throws the
    // reference's TypeError.
    if (e?.code === 'JSON_LONE_SURROGATE') return undefined
    throw encodeError(e)
  }
}

function encodeNative(input, o) {
  let packed = false
  if (o.replacer === undefined && !packing) {
    const t = typeof input
    if (t === 'object' || t === 'string' || t === 'number' || t === 'boolean') {
      const text = encodePacked(input, o)
      if (text !== undefined) return text
      packed = true
    }
  }
  // A value the packed route gave back needs the reference's normalisation
  // (the plainness walk would only say so a second time).
  let { json, rawKey, raws } = packed ? normalizedJson(input, undefined) : toJson(input, o.replacer)
  for (let attempt = 0; ; attempt++) {
    try {
      return native.toonEncodeJson(json, o.indentSize, o.delimiter, o.keyFolding, o.flattenDepth, rawKey, raws)
    } catch (e) {
      if (e?.code === 'JSON_LONE_SURROGATE' && attempt === 0) {
        // The reference's normalisation throws its TypeError for a string
        // or key; what is left is a raw string holding one.
        ;({ json, rawKey, raws } = normalizedJson(input, o.replacer))
        continue
      }
      if (e?.code === 'JSON_LONE_SURROGATE') throw surrogateError('Cannot encode raw string containing an unpaired surrogate')
      throw encodeError(e)
    }
  }
}

/** Encode a value as TOON text (no trailing newline). */
function encode(input, options) {
  return encodeNative(input, resolveEncodeOptions(options))
}

/** Encode a value as TOON lines (joined with '\n' they are `encode`'s text). */
function encodeLines(input, options) {
  const o = resolveEncodeOptions(options)
  const text = encodeNative(input, o)
  // Empty text (an empty root object, an empty raw root) is no line.
  const lines = text === '' ? [] : text.split('\n')
  return (function* encodedLines() {
    yield* lines
  })()
}

// ------------------------------------------------------------ decode

// Text holding lone surrogates (the reference reads them as ordinary
// characters) cannot cross into Rust as UTF-8: each one stands in for a
// private-use character absent from the text while decoding, and the JSON
// produced (values, keys, messages) gets it back as a `\uDxxx` escape.
function surrogateStandIns(text) {
  for (const base of [0xf0000, 0x100000]) {
    const last = base + 0x7ff
    let used = false
    for (const ch of text) {
      const c = ch.codePointAt(0)
      if (c >= base && c <= last) {
        used = true
        break
      }
    }
    if (!used) return base
  }
  return undefined
}

function withLoneSurrogates(input, run) {
  const base = surrogateStandIns(input)
  if (base === undefined) return run(input.toWellFormed())
  const mapped = input.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (c) =>
    String.fromCodePoint(base + c.charCodeAt(0) - 0xd800),
  )
  const back = (s) =>
    s.replace(/[\u{F0000}-\u{F07FF}\u{100000}-\u{1007FF}]/gu, (c) => {
      const u = c.codePointAt(0) - base
      return u >= 0 && u < 0x800 ? `\\u${(0xd800 + u).toString(16)}` : c
    })
  try {
    return back(run(mapped))
  } catch (e) {
    if (e instanceof Error && typeof e.message === 'string') e.message = back(e.message).replace(/\\u(d[89a-f][0-9a-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))
    throw e
  }
}

function nativeDecode(fn, input, o, nl) {
  if (typeof input !== 'string') throw argError(TypeError, INVALID, `Expected TOON text as a string (the input), got ${describe(input)}`)
  const run = (text) => fn(text, o.indentSize, o.strict, o.expandPaths)
  try {
    try {
      return run(input)
    } catch (e) {
      // The native side found a lone surrogate (checking here first costs
      // a pass over every two-byte string).
      if (e?.code === 'TOON_LONE_SURROGATE_INPUT') return withLoneSurrogates(input, run)
      throw e
    }
  } catch (e) {
    throw decodeError(e, input, nl)
  }
}

// The JSON route, for what the packed route does not take (lone
// surrogates, lines holding newlines): the value through JSON text.
function decodeJsonRoute(input, o, nl) {
  const out = nativeDecode(native.toonDecodeJson, input, o, nl)
  return JSON.parse(nl ? newlinesBack(out, nl) : out)
}

// An own data property, as JSON.parse and object literals make them: never
// through a setter (not even one on Object.prototype).
function defineOwn(target, key, value) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

// ------------------------------------------------------------ packed decode
//
// `decode` gets its value from Rust packed (see
// bindings-node/src/toon/pack_decode.rs, with the figures that chose it):
// ops (`payload << 4 | tag`, the encoder's), doubles and one joined string,
// built into values here with plain object and array code. Keys cross once:
// Rust numbers them in a table kept between calls, and `decodeKeys` holds
// the same strings by id. Rust takes back the keys of a call that failed; a
// failure here after a call forgets both tables. Strings are slices of the
// joined string (as the reference's are slices of its input lines).

const PACK_KEEP = 1 << 16
// The result header is `dOps[0..D_HEAD]` (pack_decode.rs HEAD_*: route,
// ops, numbers, reset, pending, new keys); the ops follow it.
const D_HEAD = 6
let dOps = new Int32Array(1024)
let dNums = new Float64Array(256)
const decodeKeys = []
let decodeKeysLost = false
let uOps = dOps
let uNums = dNums
let uText = ''
let uOp = 0
let uNum = 0
let uAt = 0

// The string itself as a property key (internalised once, not at each store).
function propertyKey(s) {
  const o = { [s]: null }
  for (const k in o) return k
  return s
}

function unpackValue() {
  const op = uOps[uOp++]
  const tag = op & 15
  if (tag === P_OBJ) return unpackObject(op >>> P_SHIFT)
  if (tag === P_STR) {
    const end = uAt + (op >>> P_SHIFT)
    const s = uText.slice(uAt, end)
    uAt = end
    return s
  }
  if (tag === P_NUM) return uNums[uNum++]
  if (tag === P_ARR) {
    const n = op >>> P_SHIFT
    const a = []
    for (let i = 0; i < n; i++) a.push(unpackValue())
    return a
  }
  if (tag === P_NULL) return null
  if (tag === P_TRUE) return true
  if (tag === P_FALSE) return false
  throw new PolywireError(`malformed packed value at op ${uOp - 1}`, 'TOON_PACKED')
}

function unpackObject(n) {
  const o = {}
  for (let i = 0; i < n; i++) {
    const kop = uOps[uOp++]
    let key
    let inherited
    if ((kop & 15) === P_KEY) {
      key = decodeKeys[kop >>> P_SHIFT]
      inherited = decodeKeyInherited[kop >>> P_SHIFT]
    } else {
      const end = uAt + (kop >>> P_SHIFT)
      key = uText.slice(uAt, end)
      uAt = end
      inherited = key in Object.prototype
    }
    const v = unpackValue()
    // An own data property, as JSON.parse makes it. Assignment costs several
    // times less and does the same unless Object.prototype has the key: it
    // would set the prototype (`__proto__`), call a setter, or fail on a
    // read-only property (frozen intrinsics).
    if (inherited) defineOwn(o, key, v)
    else o[key] = v
  }
  return o
}

// Whether Object.prototype has each key of `decodeKeys` (own or not: it has
// no prototype), made again whenever its own property names changed (a key
// it has stays flagged however it is redefined).
const decodeKeyInherited = []
let prototypeNames = []

function sameNames(a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

function unpack(text) {
  if (dOps[3] === 1) {
    decodeKeys.length = 0
    decodeKeyInherited.length = 0
  }
  const names = Object.getOwnPropertyNames(Object.prototype)
  if (!sameNames(names, prototypeNames)) {
    prototypeNames = names
    for (let i = 0; i < decodeKeys.length; i++) decodeKeyInherited[i] = decodeKeys[i] in Object.prototype
  }
  const newKeys = dOps[5]
  if (dOps[4] === 1) {
    const opCount = dOps[1]
    const numCount = dOps[2]
    dOps = new Int32Array(Math.max(D_HEAD + opCount, dOps.length * 2))
    dNums = new Float64Array(Math.max(numCount, dNums.length * 2))
    native.toonPackTake(packState, dOps, dNums)
  }
  uOps = dOps
  uNums = dNums
  uText = text
  uAt = 0
  uNum = 0
  for (let i = D_HEAD; i < D_HEAD + newKeys; i++) {
    const end = uAt + (dOps[i] >>> P_SHIFT)
    const key = propertyKey(text.slice(uAt, end))
    decodeKeys.push(key)
    decodeKeyInherited.push(key in Object.prototype)
    uAt = end
  }
  uOp = D_HEAD + newKeys
  try {
    return unpackValue()
  } finally {
    uText = ''
    // Arrays a large document made large are let go.
    if (dOps.length > PACK_KEEP) dOps = new Int32Array(1024)
    if (dNums.length > PACK_KEEP) dNums = new Float64Array(256)
    uOps = dOps
    uNums = dNums
  }
}

/** Decode TOON text to a value. */
function decode(input, options) {
  const o = resolveDecodeOptions(options)
  if (typeof input !== 'string') return decodeJsonRoute(input, o)
  return decodeText(input, o)
}

// The packed route, or the JSON route for what it does not take.
function decodeText(input, o) {
  if (packState < 0) packState = native.toonPackState()
  const reset = decodeKeysLost
  if (reset) {
    decodeKeys.length = 0
    decodeKeyInherited.length = 0
    decodeKeysLost = false
  }
  let out
  try {
    out = native.toonPackDecode(packState, input, o.indentSize, o.strict, o.expandPaths, dOps, dNums, reset)
  } catch (e) {
    // The native table may have been reset (another instance's, or full)
    // before the failure: start both afresh next time.
    decodeKeysLost = true
    // Lone surrogates: the JSON route maps them.
    if (e?.code === 'TOON_LONE_SURROGATE_INPUT') return decodeJsonRoute(input, o)
    throw decodeError(e, input)
  }
  if (dOps[0] === 0) {
    // The JSON route: the native table may have been reset all the same.
    if (dOps[3] === 1) {
      decodeKeys.length = 0
      decodeKeyInherited.length = 0
    }
    return JSON.parse(out)
  }
  try {
    return unpack(out)
  } catch (e) {
    decodeKeysLost = true
    throw e
  }
}

// ------------------------------------------------------------ lines

// Lines given one by one are taken as the reference's line reader takes
// them: a string (or String object) is one line, whatever it holds (a '\n'
// in it is an ordinary character, not a line break); `undefined` ends the
// source there; anything else is no line, and the reference fails (a
// TypeError, with a message of the engine's) once it needs that line,
// having decoded as far as the lines before it take it. The same holds for
// an iterator that throws: its error comes where the decoder needs the line
// it failed to give. (Elements that are other objects with string-like
// methods, such as arrays, get a little further in the reference before its
// TypeError; here they fail as any non-string does.)
class Lines {
  constructor() {
    this.lines = []
    /** Characters so far, with a separator per line. */
    this.size = 0
    /** Whether a line holds '\n'. */
    this.newlines = false
    /** Whether the source failed (then `failure` is what to throw). */
    this.failed = false
    this.failure = undefined
  }

  /** Take the source's next element; false when it ends the source. */
  push(value) {
    if (value === undefined) return false
    if (typeof value !== 'string') {
      if (!(value instanceof String)) {
        const what = value === null ? 'null' : typeof value
        this.fail(argError(TypeError, INVALID, `Expected each TOON line as a string, got ${what} (line ${this.lines.length + 1})`))
        return false
      }
      value = String(value)
    }
    this.lines.push(value)
    this.size += value.length + 1
    if (!this.newlines && value.includes('\n')) this.newlines = true
    return true
  }

  fail(error) {
    this.failed = true
    this.failure = error
  }

  /** Every element of a sync iterable, until it ends, fails or throws. */
  static read(source) {
    const lines = new Lines()
    let it
    try {
      it = source[Symbol.iterator]()
      for (;;) {
        const next = it.next()
        if (next.done || !lines.push(next.value)) break
      }
    } catch (e) {
      lines.fail(e)
    }
    return lines
  }

  /** The lines as one text for the native decoder (see `linesText`). */
  text() {
    return linesText(this.lines, this.newlines)
  }
}

// The native decoder splits its text at '\n'. A line holding '\n' has each
// stood in for by a private-use character (of the Basic Multilingual
// Plane, so that it is one UTF-16 unit as '\n' is, for the messages that
// count them) that no line holds; `newlinesBack` turns its escapes in the
// decoder's JSON text back into '\n', `decodeError` its occurrences in
// messages. (A text holding all 6400 candidates is split at its newlines.)
function linesText(lines, newlines) {
  const text = lines.join('\n')
  if (!newlines) return { text, nl: null }
  for (let c = 0xe000; c <= 0xf8ff; c++) {
    const nl = String.fromCharCode(c)
    if (!text.includes(nl)) return { text: lines.map((line) => line.replaceAll('\n', nl)).join('\n'), nl }
  }
  return { text, nl: null }
}

// JSON text written by the native side holds a character of the Basic
// Multilingual Plane beyond ASCII as a `\uxxxx` escape (lowercase hex); an
// escape is one when an even number of backslashes precede it.
function newlinesBack(json, nl) {
  const escape = new RegExp(`(?<!\\\\)((?:\\\\\\\\)*)\\\\u${nl.charCodeAt(0).toString(16)}`, 'g')
  return json.replace(escape, '$1\\n')
}

// A source of lines: anything iterable (async too, for decodeStream).
function checkIterable(source, name, async = false) {
  if (source !== null && source !== undefined && (typeof source[Symbol.iterator] === 'function' || (async && typeof source[Symbol.asyncIterator] === 'function'))) return
  throw argError(TypeError, INVALID, `${name} must be an iterable of lines${async ? ' (or an async iterable)' : ''}, got ${describe(source)}`)
}

/** Decode TOON given as lines, as the reference's `decodeFromLines`. */
function decodeFromLines(lines, options) {
  checkIterable(lines, 'lines')
  const o = resolveDecodeOptions(options)
  const source = Lines.read(lines)
  if (source.failed) {
    // The reference decodes until it needs the line the source failed to
    // give, so a fault before that line comes first.
    const stream = new EventStream(o)
    for (const line of source.lines) {
      const { error } = stream.push(line)
      if (error) throw error
    }
    throw source.failure
  }
  const { text, nl } = source.text()
  // (Key texts holding the newline stand-in must not join the key table:
  // the same text elsewhere means itself.)
  return nl ? decodeJsonRoute(text, o, nl) : decodeText(text, o)
}

// Stand-ins for lone surrogates (see `withLoneSurrogates`) in a stream: the
// first range of the two whose characters no line before the first lone
// surrogate held (their high surrogates: U+F0000-U+F07FF is \uDB80
// \uDB81, U+100000-U+1007FF is \uDBC0 \uDBC1). A stream whose lines hold
// characters of both ranges before its first lone surrogate reads lone
// surrogates as U+FFFD from there on; one whose lines hold characters of the
// range chosen after it reads them back as lone surrogates (a whole text
// is checked at once: `withLoneSurrogates`).
const STAND_IN_RANGES = [/[\uDB80\uDB81]/, /[\uDBC0\uDBC1]/]
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const STAND_INS = { [0xf0000]: /[\u{F0000}-\u{F07FF}]/gu, [0x100000]: /[\u{100000}-\u{1007FF}]/gu }

// A stream's lines given to the resumable native decoder (ToonEventStream,
// src/toon/stream.rs) one at a time: each call returns the events that line
// decides (every event the lines so far decide has then come), and the
// decoder keeps its state in between, reading each line once.
class EventStream {
  constructor(o) {
    this.native = new native.ToonEventStream(o.indentSize, o.strict)
    /** The stand-in range in use (undefined: none yet; null: U+FFFD). */
    this.base = undefined
    /** Stand-in ranges seen in lines so far (bit 0: plane 15, bit 1: plane 16). */
    this.seen = 0
  }

  /** One line: `{ events, error }` (the error to throw once the events are yielded). */
  push(line) {
    if (this.base === undefined && this.seen !== 3) {
      for (let k = 0; k < 2; k++) if (STAND_IN_RANGES[k].test(line)) this.seen |= 1 << k
    }
    return this.run(() => this.native.pushLine(this.base ? this.mapped(line) : line), line)
  }

  /** The end of the lines: `{ events, error }`. */
  finish() {
    return this.run(() => this.native.finish())
  }

  mapped(line) {
    if (this.base === null) return line.toWellFormed()
    return line.replace(LONE_SURROGATE, (c) => String.fromCodePoint(this.base + c.charCodeAt(0) - 0xd800))
  }

  run(call, line) {
    let json
    try {
      json = call()
    } catch (e) {
      if (e?.code !== 'TOON_LONE_SURROGATE_INPUT' || line === undefined) throw e
      if (this.base === undefined) this.base = !(this.seen & 1) ? 0xf0000 : !(this.seen & 2) ? 0x100000 : null
      json = this.native.pushLine(this.mapped(line))
    }
    const base = this.base
    const standIn = base ? STAND_INS[base] : null
    const back = standIn ? (s) => s.replace(standIn, (c) => String.fromCharCode(0xd800 + c.codePointAt(0) - base)) : null
    // (JSON text: a stand-in goes back as the escape of its lone surrogate.)
    const out = JSON.parse(standIn ? json.replace(standIn, (c) => `\\u${(0xd800 + c.codePointAt(0) - base).toString(16)}`) : json)
    if (out.error) out.error = streamError(out.error, back)
    return out
  }
}

// The native decoder's error as the reference's ToonDecodeError.
function streamError({ code, message, line, column, source }, back) {
  const m = POSITION.exec(message)
  const text = m ? message.slice(0, m.index) : message
  return new ToonDecodeError(back ? back(text) : text, {
    line: line ?? undefined,
    column: column ?? undefined,
    source: source == null ? undefined : back ? back(source) : source,
    code,
  })
}

// A stream's next line as the reference takes it: `undefined` ends the
// source (`done`), a String object is its string, another element that is no
// string is a TypeError (thrown once the decoder needs that line: the only
// time one is read).
function lineOf(value, n) {
  if (value === undefined || typeof value === 'string') return value
  if (value instanceof String) return String(value)
  const what = value === null ? 'null' : typeof value
  throw argError(TypeError, INVALID, `Expected each TOON line as a string, got ${what} (line ${n})`)
}

/** Decode TOON lines to JSON events (startObject, key, primitive, ...), as they are read. */
function decodeStreamSync(lines, options) {
  checkIterable(lines, 'lines')
  return (function* events() {
    const o = resolveStreamOptions(options)
    const stream = new EventStream(o)
    const it = lines[Symbol.iterator]()
    for (let n = 1; ; n++) {
      // The next line is read only when the events of those before it have
      // all been taken: the decoder needs it.
      const next = it.next()
      const line = next.done ? undefined : lineOf(next.value, n)
      const { events, error } = line === undefined ? stream.finish() : stream.push(line)
      yield* events
      if (error) throw error
      if (line === undefined) return
    }
  })()
}

/** Decode TOON lines from a sync or async iterable to JSON events, as they come. */
function decodeStream(source, options) {
  checkIterable(source, 'source', true)
  return (async function* events() {
    const o = resolveStreamOptions(options)
    const stream = new EventStream(o)
    const async = source != null && typeof source[Symbol.asyncIterator] === 'function'
    const it = async ? source[Symbol.asyncIterator]() : source[Symbol.iterator]()
    for (let n = 1; ; n++) {
      const next = await it.next()
      const line = next.done ? undefined : lineOf(next.value, n)
      const { events, error } = line === undefined ? stream.finish() : stream.push(line)
      yield* events
      if (error) throw error
      if (line === undefined) return
    }
  })()
}

function resolveStreamOptions(options) {
  checkOptions(options)
  return { indentSize: resolveIndent(options), strict: Boolean(options?.strict ?? true) }
}

/**
 * For `llm.js`: `encodeForLlm`'s choice among `formats` (names of
 * `llm.FORMATS`) for a plain value, rendered and counted in one native call
 * from the packed walk (`{ index, text, counts }`); `undefined` when the
 * walk gives the value up (not plain: the caller renders each format
 * itself) or the native side fails (the caller's own rendering then
 * reports the failure as `encode` does).
 */
function packedChoice(input, indentSize, formats, encoding) {
  if (packing) return undefined
  const o = resolveEncodeOptions({ indentSize })
  const choose = (state, ops, end, text, reset, _o, wide, oneByte) =>
    native.llmPackChoose(state, ops, end, text, reset, o.indentSize, formats, encoding, wide, oneByte)
  try {
    return encodePacked(input, o, choose)
  } catch {
    return undefined
  }
}

module.exports = {
  DEFAULT_DELIMITER,
  DELIMITERS,
  MAX_DEPTH,
  MAX_INDENT,
  PolywireError,
  ToonDecodeError,
  ToonEncodeError,
  decode,
  decodeFromLines,
  decodeStream,
  decodeStreamSync,
  encode,
  encodeLines,
  escapeString,
  rawString,
}

// Not part of the API (non-enumerable): the packed walk for `llm.js`.
Object.defineProperty(module.exports, 'packedChoice', { value: packedChoice })
