'use strict'
// Error classes shared by every format. Native errors arrive as plain
// `Error`s with a stable `code` and a message ending in the position
// ("at byte N" or "at line L, column C"); `fromNative` turns them into the
// format's class with `offset` / `line` / `column` set.

class PolywireError extends Error {
  constructor(message, code, position = {}) {
    super(message)
    this.name = new.target.name
    this.code = code
    this.offset = position.offset ?? null
    this.line = position.line ?? null
    this.column = position.column ?? null
  }
}

class KadoError extends PolywireError {}
class TetherError extends PolywireError {}
class AxonError extends PolywireError {}
class KameoError extends PolywireError {}

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

module.exports = { PolywireError, KadoError, TetherError, AxonError, KameoError, fromNative, toBytes }
