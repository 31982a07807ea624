/**
 * Kado frames ("TOON protocol"): an 18-byte little-endian header (version,
 * type, payload length on the wire, timestamp ms, sequence id) and a UTF-8
 * JSON payload, RLE-compressed when longer than 1024 bytes and smaller that
 * way. Byte-identical to the Kado orchestrator's encoder; decoding validates
 * everything and throws `KadoError` with a stable `code` and the byte `offset`.
 */
import { KadoError, PolywireError } from './errors'
export { KadoError, PolywireError }

export declare const TOON_VERSION: 1
export declare const HEADER_SIZE: 18
export declare const COMPRESSION_THRESHOLD: 1024
export declare const MAGIC_COMPRESSED: 0x5a
export declare const DEFAULT_MAX_FRAME_SIZE: number

export declare enum MessageType {
  INSTRUCTION = 0x01,
  TOOL_CALL = 0x02,
  TOOL_RESULT = 0x03,
  STATUS = 0x04,
  ERROR = 0x05,
  HEARTBEAT = 0x06,
  CONTEXT_REQUEST = 0x07,
  CONTEXT_RESPONSE = 0x08,
}

export interface TOONHeader {
  version: number
  type: MessageType
  /** Bytes of payload on the wire (after compression). */
  payloadLength: number
  /** Milliseconds since the Unix epoch. */
  timestamp: number
  sequenceId: number
}

export interface TOONMessage<T = unknown> {
  header: TOONHeader
  payload: T
}

export interface TOONRawMessage {
  header: TOONHeader
  /** The payload bytes, decompressed. */
  payload: Buffer
}

/**
 * Options of the decoding calls that decompress: `maxSize` bounds the
 * decompressed payload (RLE expands up to 85x); past it they throw
 * `KADO_FRAME_TOO_LARGE` before allocating beyond it. A non-negative safe
 * integer; default 16 MiB (`DEFAULT_MAX_FRAME_SIZE`). Anything else throws a
 * TypeError/RangeError with code `KADO_INVALID_ARGUMENT`.
 */
export interface DecompressOptions {
  maxSize?: number
}

export declare class TOONEncoder {
  /**
   * Encode a frame; `timestamp` defaults to `Date.now()`. `type` must be an
   * integer (1 to 8; other integers throw `KADO_UNKNOWN_TYPE`), `sequenceId`
   * an integer from 0 to 2^32 - 1, `timestamp` an integer from 0 to
   * 2^53 - 1 (a BigInt up to 2^64 - 1): nothing is wrapped or truncated;
   * other values throw a TypeError/RangeError with code
   * `KADO_INVALID_ARGUMENT`. A circular payload throws a TypeError
   * `KADO_CYCLE`, one nested beyond the stack a RangeError `KADO_TOO_DEEP`.
   */
  encode(type: MessageType, data: unknown, sequenceId: number, timestamp?: number | bigint): Buffer
  encodeHeader(header: TOONHeader): Buffer
  /** The JSON payload bytes, before compression. */
  encodePayload(data: unknown): Buffer
  static encodeInstruction(instruction: string, seq: number): Buffer
  static encodeToolCall(toolName: string, args: Record<string, unknown>, seq: number): Buffer
  static encodeStatus(status: string, progress: number, seq: number): Buffer
}

export declare class TOONDecoder {
  /** Decode and validate a frame; bytes after it are ignored. */
  decode<T = unknown>(buffer: Uint8Array | ArrayBuffer, options?: DecompressOptions): TOONMessage<T>
  /** Like `decode` without parsing JSON: the payload bytes, decompressed. */
  decodeRaw(buffer: Uint8Array | ArrayBuffer, options?: DecompressOptions): TOONRawMessage
  /** Read and validate (length, version, type) the 18-byte header. */
  decodeHeader(buffer: Uint8Array | ArrayBuffer): TOONHeader
  /** A payload as on the wire (maybe compressed) to its JSON value. */
  decodePayload(buffer: Uint8Array | ArrayBuffer, type?: MessageType, options?: DecompressOptions): unknown
  /** Whether a whole frame with a known version and type is present. */
  validate(buffer: Uint8Array | ArrayBuffer): boolean
}

/** RLE-compress with the magic prefix; input shorter than 1024 bytes or that does not shrink is returned as is. */
export declare function compress(data: Uint8Array): Uint8Array
/**
 * Undo `compress`; input without the magic byte is returned as is. Throws
 * `KADO_INVALID_RLE` on malformed RLE, `KADO_FRAME_TOO_LARGE` past
 * `maxSize` (default 16 MiB).
 */
export declare function decompress(data: Uint8Array, options?: DecompressOptions): Uint8Array
export declare function isCompressed(buffer: Uint8Array): boolean

export interface FrameDecoderOptions {
  /** Largest frame (header + payload) and decompressed payload accepted. Default 16 MiB. */
  maxFrameSize?: number
  /** Return payloads as decompressed bytes instead of parsed JSON. */
  raw?: boolean
}

/**
 * Incremental decoder for streams: feed chunks of any size, get complete
 * messages in order. After an error it stays failed and throws it again.
 */
export declare class FrameDecoder {
  constructor(options?: FrameDecoderOptions & { raw?: false })
  constructor(options: FrameDecoderOptions & { raw: true })
  feed(chunk: Uint8Array | ArrayBuffer): TOONMessage[] | TOONRawMessage[]
  /** Throw if the stream ended inside a frame (or the decoder failed). */
  finish(): void
  readonly buffered: number
  readonly position: number
  readonly maxFrameSize: number
}
