'use strict'
// polywire/kado: Kado frames ("TOON protocol"), shaped like the Kado
// orchestrator's src/toon module (TOONEncoder, TOONDecoder, compress, ...).
//
// JSON is transcoded: JSON.stringify / JSON.parse run here (exact by
// definition and faster than converting values through N-API); framing, RLE,
// UTF-8 and all validation run in Rust.

const native = require('./native.js')
const { KadoError, PolywireError, fromNative, argError, intArg, describe, hasCycle, isStackOverflow, bytesArg, boolArg } = require('./errors.js')

const TOON_VERSION = 1
const HEADER_SIZE = 18
const COMPRESSION_THRESHOLD = 1024
const MAGIC_COMPRESSED = 0x5a
const DEFAULT_MAX_FRAME_SIZE = 16 * 1024 * 1024

// A TypeScript numeric enum, reverse mapping included.
const MessageType = {}
for (const [name, value] of [
  ['INSTRUCTION', 1], ['TOOL_CALL', 2], ['TOOL_RESULT', 3], ['STATUS', 4],
  ['ERROR', 5], ['HEARTBEAT', 6], ['CONTEXT_REQUEST', 7], ['CONTEXT_RESPONSE', 8],
]) {
  MessageType[name] = value
  MessageType[value] = name
}
Object.freeze(MessageType)

function rethrow(err) {
  // Nesting beyond the decoders' limit is a RangeError, as when
  // JSON.stringify itself overflows the stack (see stringifyError).
  if (err && err.code === 'KADO_TOO_DEEP') throw argError(RangeError, 'KADO_TOO_DEEP', err.message)
  throw fromNative(err, KadoError)
}

const INVALID = 'KADO_INVALID_ARGUMENT'
const U32_MAX = 0xffffffff
const U64_MAX = 2n ** 64n - 1n

function toBytes(value, name) {
  return bytesArg(value, name, INVALID)
}

// The message type: an integer (1 to 8 are known; other integers fail in
// Rust with KADO_UNKNOWN_TYPE). Never wrapped modulo 2^32 as N-API's u32
// conversion would (2^32 + 2 was TOOL_CALL).
function typeArg(type) {
  if (typeof type === 'number' && Number.isInteger(type) && type >= 1 && type <= 8) return type
  if (typeof type === 'number' && Number.isInteger(type)) {
    throw new KadoError(`unknown message type ${type} (expected 1..=8, INSTRUCTION to CONTEXT_RESPONSE)`, 'KADO_UNKNOWN_TYPE')
  }
  throw argError(typeof type === 'number' ? RangeError : TypeError, INVALID, `type must be a MessageType, an integer from 1 to 8, got ${describe(type)}`)
}

function u32Arg(value, name) {
  return intArg(value, name, 0, U32_MAX, INVALID)
}

// A timestamp in ms: a number up to 2^53 - 1 (beyond it a double is not
// exact), or a BigInt up to 2^64 - 1.
function timestampArg(ts) {
  if (typeof ts === 'bigint') {
    if (ts >= 0n && ts <= U64_MAX) return ts
    throw argError(RangeError, INVALID, `timestamp must be from 0 to 2^64 - 1, got ${ts}n`)
  }
  if (typeof ts === 'number' && Number.isSafeInteger(ts) && ts >= 0) return ts
  throw argError(
    typeof ts === 'number' ? RangeError : TypeError,
    INVALID,
    `timestamp must be an integer number of ms from 0 to 2^53 - 1 (a BigInt up to 2^64 - 1 beyond), got ${describe(ts)}`,
  )
}

// The bound on a decompressed payload (`maxSize` option), default 16 MiB.
function maxSizeArg(options) {
  if (options === undefined) return DEFAULT_MAX_FRAME_SIZE
  if (options === null || typeof options !== 'object') {
    throw argError(TypeError, INVALID, `options must be an object, got ${describe(options)}`)
  }
  const m = options.maxSize
  if (m === undefined) return DEFAULT_MAX_FRAME_SIZE
  return intArg(m, 'maxSize', 0, Number.MAX_SAFE_INTEGER, INVALID)
}

// JSON.stringify's own failures as coded errors of JavaScript's classes
// (upstream, JSON.stringify throws a TypeError for a cycle or a BigInt):
// a cycle (TypeError KADO_CYCLE), nesting that overflows the stack
// (RangeError KADO_TOO_DEEP, or KADO_CYCLE when the value holds a cycle
// reached through getters or toJSON), text beyond V8's longest string
// (RangeError KADO_PAYLOAD_TOO_LARGE; a sparse array with a huge length
// fails there at once), a BigInt (TypeError KADO_UNSERIALIZABLE). An error
// thrown by the value's own code (a getter, toJSON, a Proxy trap) becomes
// the `cause` of a KadoError KADO_UNSERIALIZABLE.
const CYCLE_MESSAGE = 'cannot encode a circular value as a JSON payload (an object contains itself)'

function stringifyError(e, data) {
  if (e instanceof PolywireError) return e
  if (e instanceof TypeError && /circular/i.test(e.message)) return argError(TypeError, 'KADO_CYCLE', CYCLE_MESSAGE)
  if (isStackOverflow(e)) {
    return hasCycle(data)
      ? argError(TypeError, 'KADO_CYCLE', CYCLE_MESSAGE)
      : argError(RangeError, 'KADO_TOO_DEEP', 'cannot encode the payload: nested too deeply for JSON.stringify')
  }
  if (e instanceof RangeError && /string length/i.test(e.message)) {
    return argError(RangeError, 'KADO_PAYLOAD_TOO_LARGE', 'cannot encode the payload: its JSON text is longer than the longest string V8 makes')
  }
  if (e instanceof TypeError && /BigInt/.test(e.message)) {
    return argError(TypeError, 'KADO_UNSERIALIZABLE', `cannot encode the payload: ${e.message} (send it as a string or number)`)
  }
  const err = new KadoError(`cannot encode the payload: ${e instanceof Error ? e.message : String(e)}`, 'KADO_UNSERIALIZABLE')
  err.cause = e
  return err
}

function stringify(data) {
  let json
  try {
    json = JSON.stringify(data)
  } catch (e) {
    throw stringifyError(e, data)
  }
  if (json === undefined) {
    throw new KadoError(`cannot encode ${typeof data} as a JSON payload (expected a JSON-serializable value)`, 'KADO_UNSERIALIZABLE')
  }
  return json
}

// Header fields of a frame whose header the native side already validated.
function readHeader(b) {
  return {
    version: b[0],
    type: b[1],
    payloadLength: (b[2] | (b[3] << 8) | (b[4] << 16)) + b[5] * 0x1000000,
    timestamp: (b[6] | (b[7] << 8) | (b[8] << 16)) + b[9] * 0x1000000 + ((b[10] | (b[11] << 8) | (b[12] << 16)) + b[13] * 0x1000000) * 0x100000000,
    sequenceId: (b[14] | (b[15] << 8) | (b[16] << 16)) + b[17] * 0x1000000,
  }
}

class TOONEncoder {
  /** Encode a frame; `timestamp` defaults to `Date.now()`. */
  encode(type, data, sequenceId, timestamp) {
    // Arguments checked before anything is serialized, each as Python checks
    // them (no silent wrapping).
    typeArg(type)
    u32Arg(sequenceId, 'sequenceId')
    const ts = timestamp === undefined || timestamp === null ? Date.now() : timestampArg(timestamp)
    const json = stringify(data)
    // The frame is allocated here (Buffer's pool serves small ones) and
    // completed in place by Rust: cheaper than returning a Rust allocation.
    const frame = Buffer.allocUnsafe(HEADER_SIZE + Buffer.byteLength(json))
    frame.utf8Write(json, HEADER_SIZE)
    let n
    try {
      n = native.kadoFinishFrame(frame, type, sequenceId, ts)
    } catch (e) {
      rethrow(e)
    }
    return n === frame.length ? frame : frame.subarray(0, n)
  }

  encodeHeader(header) {
    if (header === null || typeof header !== 'object') {
      throw argError(TypeError, INVALID, `header must be an object, got ${describe(header)}`)
    }
    const { version, type, payloadLength, sequenceId, timestamp } = header
    if (version !== TOON_VERSION) {
      if (typeof version !== 'number') throw argError(TypeError, INVALID, `header.version must be ${TOON_VERSION}, got ${describe(version)}`)
      throw new KadoError(`unsupported protocol version ${version} (expected ${TOON_VERSION})`, 'KADO_UNSUPPORTED_VERSION')
    }
    typeArg(type)
    u32Arg(payloadLength, 'header.payloadLength')
    u32Arg(sequenceId, 'header.sequenceId')
    const ts = timestamp === undefined || timestamp === null ? Date.now() : timestampArg(timestamp)
    try {
      return native.kadoEncodeHeader(version, type, payloadLength, sequenceId, ts)
    } catch (e) {
      rethrow(e)
    }
  }

  /** The JSON payload bytes, before compression. */
  encodePayload(data) {
    const bytes = Buffer.from(stringify(data), 'utf8')
    try {
      native.kadoCheckPayloadDepth(bytes)
    } catch (e) {
      rethrow(e)
    }
    return bytes
  }

  static encodeInstruction(instruction, seq) {
    return new TOONEncoder().encode(MessageType.INSTRUCTION, { instruction }, seq)
  }

  static encodeToolCall(toolName, args, seq) {
    return new TOONEncoder().encode(MessageType.TOOL_CALL, { toolName, args }, seq)
  }

  static encodeStatus(status, progress, seq) {
    return new TOONEncoder().encode(MessageType.STATUS, { status, progress }, seq)
  }
}

function parsePayload(text, repair) {
  try {
    return JSON.parse(text)
  } catch {
    // Error path: the native parser reports the byte offset, or repairs
    // Python's NaN/Infinity tokens, which JSON.parse rejects.
    try {
      return JSON.parse(repair())
    } catch (e) {
      rethrow(e)
    }
  }
}

class TOONDecoder {
  /** Decode and validate a frame; bytes after it are ignored. */
  decode(buffer, options) {
    const bytes = toBytes(buffer, 'buffer')
    const max = maxSizeArg(options)
    let text
    try {
      text = native.kadoPayloadText(bytes, max)
    } catch (e) {
      rethrow(e)
    }
    return { header: readHeader(bytes), payload: parsePayload(text, () => native.kadoRepairPayload(bytes, max)) }
  }

  /** Decode a frame without parsing JSON: the payload as bytes, decompressed. */
  decodeRaw(buffer, options) {
    const bytes = toBytes(buffer, 'buffer')
    const max = maxSizeArg(options)
    let payload
    try {
      payload = native.kadoPayloadBytes(bytes, max)
    } catch (e) {
      rethrow(e)
    }
    const header = readHeader(bytes)
    return { header, payload: payload ?? bytes.subarray(HEADER_SIZE, HEADER_SIZE + header.payloadLength) }
  }

  /** Read and validate (length, version, type) the 18-byte header. */
  decodeHeader(buffer) {
    const bytes = toBytes(buffer, 'buffer')
    try {
      native.kadoCheckHeader(bytes)
    } catch (e) {
      rethrow(e)
    }
    return readHeader(bytes)
  }

  /** A payload as on the wire (maybe compressed) -> its JSON value. */
  decodePayload(buffer, _type, options) {
    const bytes = toBytes(buffer, 'buffer')
    const max = maxSizeArg(options)
    let text
    try {
      text = native.kadoPayloadToText(bytes, max)
    } catch (e) {
      rethrow(e)
    }
    return parsePayload(text, () => {
      const frame = Buffer.concat([native.kadoEncodeHeader(1, 1, bytes.length, 0, 0), bytes])
      try {
        return native.kadoRepairPayload(frame, max)
      } catch (e) {
        // Offsets are reported within the payload.
        const err = fromNative(e, KadoError)
        if (err instanceof PolywireError && err.offset !== null && !isCompressed(bytes)) {
          err.offset -= HEADER_SIZE
          err.message = err.message.replace(/ at byte \d+$/, ` at byte ${err.offset}`)
        }
        throw err
      }
    })
  }

  /** Whether a whole frame with a known version and type is present. */
  validate(buffer) {
    return native.kadoValidate(toBytes(buffer, 'buffer'))
  }
}

function compress(data) {
  const bytes = toBytes(data, 'data')
  return native.kadoCompress(bytes) ?? bytes
}

function decompress(data, options) {
  const bytes = toBytes(data, 'data')
  const max = maxSizeArg(options)
  try {
    return native.kadoDecompress(bytes, max) ?? bytes
  } catch (e) {
    rethrow(e)
  }
}

function isCompressed(buffer) {
  const b = toBytes(buffer, 'buffer')
  return b.length > 0 && b[0] === MAGIC_COMPRESSED
}

/**
 * Incremental decoder for streams: feed chunks of any size, get complete
 * messages in order. The frame size is checked from the header against
 * `maxFrameSize` before the payload is buffered. After an error the decoder
 * stays failed; messages completed before the error in the same `feed` are
 * returned and the error is thrown by the next call.
 */
class FrameDecoder {
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') {
      throw argError(TypeError, INVALID, `options must be an object, got ${describe(options)}`)
    }
    const { maxFrameSize = DEFAULT_MAX_FRAME_SIZE, raw = false } = options
    this._max = intArg(maxFrameSize, 'maxFrameSize', HEADER_SIZE, Number.MAX_SAFE_INTEGER, INVALID)
    this._raw = boolArg(raw, 'options.raw', INVALID, false)
    // The state lives here, in memory V8 owns and frees (a native object
    // per decoder was freed only when the event loop turned): the bytes not
    // yet consumed (a copy, the caller may reuse its chunk) and their
    // stream offset.
    this._rest = null
    this._offset = 0
    this._pending = null
    this._failed = null
  }

  feed(chunk) {
    if (this._pending) {
      const e = this._pending
      this._pending = null
      this._failed = e
      throw e
    }
    if (this._failed) throw this._failed
    const bytes = toBytes(chunk, 'chunk')
    const data = this._rest === null ? bytes : Buffer.concat([this._rest, bytes])
    let r
    try {
      r = native.kadoStreamFeed(data, this._offset, this._max, this._raw)
    } catch (e) {
      throw (this._failed = fromNative(e, KadoError))
    }
    const { frames, consumed } = r
    this._offset += consumed
    this._rest = consumed === data.length ? null : Buffer.from(data.subarray(consumed))
    let failure = r.error ? fromNative(r.error, KadoError) : null
    const out = []
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i]
      let payload = f.payload
      if (!this._raw) {
        try {
          payload = JSON.parse(payload)
        } catch {
          try {
            payload = JSON.parse(native.kadoStreamRepairJson(payload, f.offset, f.compressed))
          } catch (e) {
            failure = fromNative(e, KadoError)
            break
          }
        }
      }
      out.push({
        header: { version: f.version, type: f.msgType, payloadLength: f.payloadLength, timestamp: f.timestamp, sequenceId: f.sequenceId },
        payload,
      })
    }
    if (failure) {
      // Frames completed before the error are returned; the error comes
      // with the next call.
      this._rest = null
      if (out.length === 0) throw (this._failed = failure)
      this._pending = failure
    }
    return out
  }

  /** Throw if the stream ended inside a frame (or the decoder failed). */
  finish() {
    if (this._pending) throw this._pending
    if (this._failed) throw this._failed
    if (this._rest === null) return
    try {
      native.kadoStreamFinish(this._rest, this._offset, this._max)
    } catch (e) {
      rethrow(e)
    }
  }

  get buffered() {
    return this._rest === null ? 0 : this._rest.length
  }

  get position() {
    return this._offset
  }

  get maxFrameSize() {
    return this._max
  }
}

module.exports = {
  TOON_VERSION,
  HEADER_SIZE,
  COMPRESSION_THRESHOLD,
  MAGIC_COMPRESSED,
  DEFAULT_MAX_FRAME_SIZE,
  MessageType,
  TOONEncoder,
  TOONDecoder,
  FrameDecoder,
  compress,
  decompress,
  isCompressed,
  KadoError,
  PolywireError,
}
