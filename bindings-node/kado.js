'use strict'
// polywire/kado: Kado frames ("TOON protocol"), shaped like the Kado
// orchestrator's src/toon module (TOONEncoder, TOONDecoder, compress, ...).
//
// JSON is transcoded: JSON.stringify / JSON.parse run here (exact by
// definition and faster than converting values through N-API); framing, RLE,
// UTF-8 and all validation run in Rust.

const native = require('./native.js')
const { KadoError, PolywireError, fromNative, toBytes } = require('./errors.js')

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
  throw fromNative(err, KadoError)
}

function stringify(data) {
  const json = JSON.stringify(data)
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
    const json = stringify(data)
    // The frame is allocated here (Buffer's pool serves small ones) and
    // completed in place by Rust: cheaper than returning a Rust allocation.
    const frame = Buffer.allocUnsafe(HEADER_SIZE + Buffer.byteLength(json))
    frame.utf8Write(json, HEADER_SIZE)
    let n
    try {
      n = native.kadoFinishFrame(frame, type, sequenceId, timestamp ?? Date.now())
    } catch (e) {
      rethrow(e)
    }
    return n === frame.length ? frame : frame.subarray(0, n)
  }

  encodeHeader(header) {
    try {
      return native.kadoEncodeHeader(header.version, header.type, header.payloadLength, header.sequenceId, header.timestamp)
    } catch (e) {
      rethrow(e)
    }
  }

  /** The JSON payload bytes, before compression. */
  encodePayload(data) {
    return Buffer.from(stringify(data), 'utf8')
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
  decode(buffer) {
    const bytes = toBytes(buffer, 'buffer')
    let text
    try {
      text = native.kadoPayloadText(bytes)
    } catch (e) {
      rethrow(e)
    }
    return { header: readHeader(bytes), payload: parsePayload(text, () => native.kadoRepairPayload(bytes)) }
  }

  /** Decode a frame without parsing JSON: the payload as bytes, decompressed. */
  decodeRaw(buffer) {
    const bytes = toBytes(buffer, 'buffer')
    let payload
    try {
      payload = native.kadoPayloadBytes(bytes)
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
  decodePayload(buffer, _type) {
    const bytes = toBytes(buffer, 'buffer')
    let text
    try {
      text = native.kadoPayloadToText(bytes)
    } catch (e) {
      rethrow(e)
    }
    return parsePayload(text, () => {
      const frame = Buffer.concat([native.kadoEncodeHeader(1, 1, bytes.length, 0, 0), bytes])
      try {
        return native.kadoRepairPayload(frame)
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

function decompress(data) {
  const bytes = toBytes(data, 'data')
  try {
    return native.kadoDecompress(bytes) ?? bytes
  } catch (e) {
    rethrow(e)
  }
}

function isCompressed(buffer) {
  return buffer.length > 0 && buffer[0] === MAGIC_COMPRESSED
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
    const { maxFrameSize = DEFAULT_MAX_FRAME_SIZE, raw = false } = options
    try {
      this._native = new native.KadoFrameDecoder(maxFrameSize, raw)
    } catch (e) {
      rethrow(e)
    }
    this._raw = raw
    this._pending = null
  }

  feed(chunk) {
    if (this._pending) {
      const e = this._pending
      this._pending = null
      this._failed = e
      throw e
    }
    if (this._failed) throw this._failed
    let frames
    try {
      frames = this._native.feed(toBytes(chunk, 'chunk'))
    } catch (e) {
      throw (this._failed = fromNative(e, KadoError))
    }
    const out = new Array(frames.length)
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i]
      let payload = f.payload
      if (!this._raw) {
        try {
          payload = JSON.parse(payload)
        } catch {
          try {
            payload = JSON.parse(this._native.repairJson(payload, f.offset, f.compressed))
          } catch (e) {
            const err = fromNative(e, KadoError)
            if (i === 0) throw (this._failed = err)
            this._pending = err
            return out.slice(0, i)
          }
        }
      }
      out[i] = {
        header: { version: f.version, type: f.msgType, payloadLength: f.payloadLength, timestamp: f.timestamp, sequenceId: f.sequenceId },
        payload,
      }
    }
    return out
  }

  /** Throw if the stream ended inside a frame (or the decoder failed). */
  finish() {
    if (this._pending) throw this._pending
    if (this._failed) throw this._failed
    try {
      this._native.finish()
    } catch (e) {
      rethrow(e)
    }
  }

  get buffered() {
    return this._native.buffered
  }

  get position() {
    return this._native.position
  }

  get maxFrameSize() {
    return this._native.maxFrameSize
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
