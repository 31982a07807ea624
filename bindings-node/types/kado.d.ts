/**
 * Kado frames ("TOON protocol"): an 18-byte little-endian header (version,
 * type, payload length on the wire, timestamp ms, sequence id) and a UTF-8
 * JSON payload, RLE-compressed when longer than 1024 bytes and smaller that
 * way. Byte-identical to the Kado orchestrator's encoder; decoding validates
 * everything and throws `KadoError` with a stable `code` and the byte `offset`.
 */
import { KadoError, PolywireError } from './errors'
export { KadoError, PolywireError }

/** The protocol version written in every header and the only one decoded. */
export declare const TOON_VERSION: 1
/** Bytes in a frame header. */
export declare const HEADER_SIZE: 18
/** Payloads longer than this many bytes are RLE-compressed by `encode` when that makes them smaller. */
export declare const COMPRESSION_THRESHOLD: 1024
/** First byte of a compressed payload. */
export declare const MAGIC_COMPRESSED: 0x5a
/** Default `maxSize` of the decoding calls and `maxFrameSize` of `FrameDecoder`: 16 MiB. */
export declare const DEFAULT_MAX_FRAME_SIZE: 16777216

/**
 * The frame types of the Kado protocol (the header's second byte). A
 * TypeScript numeric enum at runtime too: `MessageType[1]` is `'INSTRUCTION'`.
 */
export declare enum MessageType {
  /** An instruction (`TOONEncoder.encodeInstruction` sends `{instruction}`). */
  INSTRUCTION = 0x01,
  /** A tool call (`TOONEncoder.encodeToolCall` sends `{toolName, args}`). */
  TOOL_CALL = 0x02,
  /** The result of a tool call. */
  TOOL_RESULT = 0x03,
  /** A status update (`TOONEncoder.encodeStatus` sends `{status, progress}`). */
  STATUS = 0x04,
  /** An error. */
  ERROR = 0x05,
  /** A heartbeat (keep-alive). */
  HEARTBEAT = 0x06,
  /** A request for context. */
  CONTEXT_REQUEST = 0x07,
  /** The answer to a context request. */
  CONTEXT_RESPONSE = 0x08,
}

/** A frame header, as the decoders return it and `TOONEncoder.encodeHeader` takes it. */
export interface TOONHeader {
  /** The protocol version (`TOON_VERSION`). */
  version: number
  /** The frame type. */
  type: MessageType
  /** Bytes of payload on the wire (after compression). */
  payloadLength: number
  /** Milliseconds since the Unix epoch. */
  timestamp: number
  /** The sender's sequence number (0 to 2^32 - 1). */
  sequenceId: number
}

/** A decoded frame: its header and its payload's JSON value. */
export interface TOONMessage<T = unknown> {
  /** The frame's header. */
  header: TOONHeader
  /** The payload's JSON value (`JSON.parse` of it). */
  payload: T
}

/** A decoded frame with its payload unparsed (`decodeRaw`, `FrameDecoder` with `raw: true`). */
export interface TOONRawMessage {
  /** The frame's header. */
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
  /** Largest decompressed payload accepted, in bytes. Default 16 MiB. */
  maxSize?: number
}

/** Encodes frames, as the Kado orchestrator's `TOONEncoder` does (same methods, same bytes). */
export declare class TOONEncoder {
  /**
   * Encode a frame; `timestamp` defaults to `Date.now()`. `type` must be an
   * integer (1 to 8; other integers throw `KADO_UNKNOWN_TYPE`), `sequenceId`
   * an integer from 0 to 2^32 - 1, `timestamp` an integer from 0 to
   * 2^53 - 1 (a BigInt up to 2^64 - 1): nothing is wrapped or truncated;
   * other values throw a TypeError/RangeError with code
   * `KADO_INVALID_ARGUMENT`. A circular payload throws a TypeError
   * `KADO_CYCLE`, one nested deeper than 1024 levels (the decoders' limit,
   * in every language) a RangeError `KADO_TOO_DEEP`.
   */
  encode(type: MessageType, data: unknown, sequenceId: number, timestamp?: number | bigint): Buffer
  /**
   * The 18-byte header of `header`: `version` must be 1 (another number
   * throws `KADO_UNSUPPORTED_VERSION`), `type`, `sequenceId` and `timestamp`
   * as for `encode` (`timestamp` may be left out: now), `payloadLength` (bytes
   * on the wire, after compression) an integer from 0 to 2^32 - 1.
   */
  encodeHeader(header: TOONHeader): Buffer
  /**
   * The JSON payload bytes, before compression; the same errors as
   * `encode` for the payload.
   */
  encodePayload(data: unknown): Buffer
  /** An `INSTRUCTION` frame of payload `{instruction}`, timestamped now; errors as `encode`. */
  static encodeInstruction(instruction: string, seq: number): Buffer
  /** A `TOOL_CALL` frame of payload `{toolName, args}`, timestamped now; errors as `encode`. */
  static encodeToolCall(toolName: string, args: Record<string, unknown>, seq: number): Buffer
  /** A `STATUS` frame of payload `{status, progress}`, timestamped now; errors as `encode`. */
  static encodeStatus(status: string, progress: number, seq: number): Buffer
}

/**
 * Decodes frames, as the Kado orchestrator's `TOONDecoder` does. Failures
 * throw `KadoError` with `code` and the byte `offset`; an argument that is no
 * bytes is a TypeError `KADO_INVALID_ARGUMENT`.
 */
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
/**
 * Whether `buffer` starts with the compression magic byte `0x5A`
 * (`MAGIC_COMPRESSED`); false when empty. Input that is no bytes throws a
 * TypeError `KADO_INVALID_ARGUMENT`.
 */
export declare function isCompressed(buffer: Uint8Array): boolean

/** Options of `new FrameDecoder(options)`. */
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
export declare class FrameDecoder<Raw extends boolean = false> {
  /**
   * `maxFrameSize`: an integer from 18 (`HEADER_SIZE`) to 2^53 - 1, default
   * 16 MiB; anything else throws a TypeError/RangeError
   * `KADO_INVALID_ARGUMENT`. Yields `TOONMessage`s, or with `raw: true`
   * `TOONRawMessage`s (payloads decompressed, not parsed): the type follows
   * the `raw` option.
   */
  constructor(options?: FrameDecoderOptions & { raw?: Raw })
  /**
   * Feed a chunk of any size (copied); returns the messages it completed, in
   * order (`[]` while a frame is incomplete). Throws `KadoError` with the
   * frame's code (`KADO_FRAME_TOO_LARGE`, `KADO_UNKNOWN_TYPE`, ...) and its
   * `offset` in the stream.
   */
  feed(chunk: Uint8Array | ArrayBuffer): Raw extends true ? TOONRawMessage[] : TOONMessage[]
  /** Throw if the stream ended inside a frame (or the decoder failed). */
  finish(): void
  /** Bytes buffered towards the next frame (fed but not yet a complete frame). */
  readonly buffered: number
  /** Stream offset just after the last complete frame: the bytes consumed as frames. */
  readonly position: number
  /** The largest frame (header and payload, and the largest decompressed payload) accepted, in bytes. */
  readonly maxFrameSize: number
}
