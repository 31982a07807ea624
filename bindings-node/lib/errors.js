'use strict'
// Error classes shared by every format. Native errors arrive as plain
// `Error`s with a stable `code` and a message ending in the position
// ("at byte N" or "at line L, column C"); `fromNative` turns them into the
// format's class with `offset` / `line` / `column` set.

// Errors polywire throws that cannot extend PolywireError carry this brand:
// ToonDecodeError extends SyntaxError (as the reference's does, for drop-in
// use) and bad arguments are TypeErrors/RangeErrors, as JavaScript's own are.
// `err instanceof PolywireError` is true for them too.
const BRAND = Symbol.for('polywire.error')

class PolywireError extends Error {
  constructor(message, code, position = {}) {
    super(message)
    this.name = new.target.name
    this.code = code
    this.offset = position.offset ?? null
    this.line = position.line ?? null
    this.column = position.column ?? null
  }

  static [Symbol.hasInstance](value) {
    // Subclasses (KadoError, ...) keep the ordinary prototype-chain test.
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    return this === PolywireError && value !== null && typeof value === 'object' && value[BRAND] === true
  }
}

// Mark an error (or an error class's prototype) as polywire's.
function brand(target) {
  Object.defineProperty(target, BRAND, { value: true, enumerable: false })
  return target
}

class KadoError extends PolywireError {}
class TetherError extends PolywireError {}
class AxonError extends PolywireError {}
class KameoError extends PolywireError {}
class LlmError extends PolywireError {}

const BYTE_RE = / at byte (\d+)$/
const LINE_RE = / at line (\d+)(?:, column (\d+))?$/

function positionOf(message) {
  let m = BYTE_RE.exec(message)
  if (m) return { offset: Number(m[1]) }
  m = LINE_RE.exec(message)
  if (m) return { line: Number(m[1]), column: m[2] === undefined ? null : Number(m[2]) }
  return {}
}

// Convert an error thrown by the native module; anything else (a TypeError
// from argument conversion, say) passes through unchanged.
function fromNative(err, ErrorClass) {
  if (err instanceof PolywireError) return err
  if (err && typeof err.code === 'string' && /^[A-Za-z]+_[A-Za-z0-9_]+$/.test(err.code) && !err.code.startsWith('ERR_')) {
    const e = new ErrorClass(err.message, err.code, positionOf(err.message))
    return e
  }
  return err
}

function toBytes(value, name) {
  if (value instanceof Uint8Array) return value
  if (value instanceof ArrayBuffer) return new Uint8Array(value)
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  throw new TypeError(`${name} must be a Uint8Array, Buffer or ArrayBuffer, got ${value === null ? 'null' : typeof value}`)
}

// A TypeError or RangeError (what JavaScript throws for an argument of the
// wrong type or out of range) carrying a stable polywire `code`.
function argError(Ctor, code, message) {
  const e = new Ctor(message)
  e.code = code
  return brand(e)
}

function describe(value) {
  if (value === null) return 'null'
  if (typeof value === 'number' || typeof value === 'bigint') return `${typeof value} ${String(value)}${typeof value === 'bigint' ? 'n' : ''}`
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '...' : value)}`
  return typeof value
}

// An integer argument from `min` to `max` (both safe integers): a TypeError
// for anything but a number, a RangeError for NaN, fractions and integers
// out of range. Never wrapped, truncated or converted.
function intArg(value, name, min, max, code) {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value
  const what = `${name} must be an integer from ${min} to ${max}, got ${describe(value)}`
  throw argError(typeof value === 'number' ? RangeError : TypeError, code, what)
}

// A string argument, not coerced (a Symbol or an object with a throwing
// toString would otherwise escape with V8's uncoded errors).
function strArg(value, name, code) {
  if (typeof value === 'string') return value
  throw argError(TypeError, code, `${name} must be a string, got ${describe(value)}`)
}

// The payload of a nesting or cycle failure of a JSON-like walk (JSON.stringify
// overflowing the stack, or a walk's own depth limit): whether `root` holds
// a cycle among its plain own-property containers, looked for with an
// explicit stack (no recursion) and at most `budget` containers visited.
// Only on error paths.
function hasCycle(root, budget = 1e6) {
  if (root === null || typeof root !== 'object') return false
  const onPath = new Set()
  const stack = [[root, null]]
  while (stack.length > 0) {
    const top = stack[stack.length - 1]
    const [obj] = top
    if (top[1] === null) {
      if (onPath.has(obj)) return true
      if (--budget < 0) return false
      onPath.add(obj)
      let keys
      try {
        keys = Array.isArray(obj) ? null : Object.keys(obj)
      } catch {
        keys = []
      }
      top[1] = { keys, i: 0, n: keys === null ? Math.min(obj.length >>> 0, 1e6) : keys.length }
    }
    const it = top[1]
    if (it.i >= it.n) {
      onPath.delete(obj)
      stack.pop()
      continue
    }
    let child
    try {
      child = it.keys === null ? obj[it.i] : obj[it.keys[it.i]]
    } catch {
      child = undefined
    }
    it.i++
    if (child !== null && typeof child === 'object') {
      if (onPath.has(child)) return true
      stack.push([child, null])
    }
  }
  return false
}

// `toBytes` with the TypeError carrying `code` (and the brand: it is a
// PolywireError).
function bytesArg(value, name, code) {
  if (value instanceof Uint8Array) return value
  if (value instanceof ArrayBuffer) return new Uint8Array(value)
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  throw argError(TypeError, code, `${name} must be a Uint8Array, Buffer or ArrayBuffer, got ${describe(value)}`)
}

// A boolean argument or option: true/false, or undefined/null for `fallback`.
function boolArg(value, name, code, fallback) {
  if (value === undefined || value === null) return fallback
  if (typeof value === 'boolean') return value
  throw argError(TypeError, code, `${name} must be a boolean, got ${describe(value)}`)
}

// Whether an error is V8's stack overflow (a RangeError without a code).
function isStackOverflow(e) {
  return e instanceof RangeError && e.code === undefined && /call stack/i.test(e.message)
}

module.exports = { brand, PolywireError, KadoError, TetherError, AxonError, KameoError, LlmError, fromNative, toBytes, argError, intArg, strArg, describe, hasCycle, isStackOverflow, bytesArg, boolArg }
