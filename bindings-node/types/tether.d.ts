/// <reference types="node" />
/**
 * Tether: Caffeine's 32-bit big-endian tagged object encoding. Integers
 * 0..0x1FFFFFFF (number or bigint) are SmallIntegers, `null` is nil, strings
 * are Strings (UTF-8 by default; `{latin1: true}` for the one-byte-per-character
 * form the Caffeine JS bridge writes), Uint8Array is ByteArray, arrays are
 * Arrays; Symbols, UUIDs and remote objects are `TetherSymbol`, `TetherUuid`
 * and `TetherProxy`. Errors are `TetherError`s with a stable `code`
 * (`TETHER_INTEGER_RANGE`, `TETHER_TRUNCATED`, `TETHER_HEX_LENGTH`, ...) and
 * the byte `offset`.
 *
 * Nesting is bounded by `maxDepth` and memory only (explicit stacks, no
 * recursion), and decoding is linear in the input. Encoding refuses sparse
 * arrays at their first hole (`TETHER_SPARSE_ARRAY`, so a huge `length` fails
 * fast), an array inside itself (`TETHER_CYCLE`) and an array whose length
 * changes while it is walked, by a getter or Proxy trap (`TETHER_MUTATED`); an
 * error thrown by such a getter or trap comes through unchanged. `maxDepth`
 * must be an integer 0..2^32-1 (`TETHER_INVALID_OPTION`). An argument of the
 * wrong type (bytes, hex text, a selector, an exposure hash, a typed value...)
 * is a `TypeError` with code `TETHER_UNSUPPORTED_TYPE` (the code Python gives
 * the same mistake), `instanceof PolywireError`. Returned Buffers are
 * V8-owned memory, collected without waiting for the event loop.
 */
import { TetherError, PolywireError } from './errors'
export { TetherError, PolywireError }

/** 0x1FFFFFFF: the largest integer with an encoding. */
export declare const MAX_SMALL_INTEGER: 0x1fffffff
/** 0x0FFFFFFE: the largest exposure hash a proxy word can carry. */
export declare const MAX_EXPOSURE_HASH: 0x0ffffffe
/** 256: the deepest Array nesting accepted by default (`maxDepth`). */
export declare const DEFAULT_MAX_DEPTH: 256

/** A Smalltalk Symbol (a selector such as `#printString`); frozen, compare with `equals` (or deepEqual). */
export declare class TetherSymbol {
  /** `name`: a string (anything else throws a TypeError `TETHER_UNSUPPORTED_TYPE`). */
  constructor(name: string)
  /** The Symbol's name, e.g. `printString`. */
  readonly name: string
  /** Whether `other` is a `TetherSymbol` of the same name. */
  equals(other: unknown): boolean
}

/** A reference to a remote object by its exposure hash; frozen, compare with `equals`. */
export declare class TetherProxy {
  /**
   * `exposureHash`: an integer (number or bigint) 0 to `MAX_EXPOSURE_HASH`;
   * outside it `TetherError` `TETHER_EXPOSURE_HASH_RANGE`, another type a
   * TypeError `TETHER_UNSUPPORTED_TYPE`.
   */
  constructor(exposureHash: number | bigint)
  /** The remote object's exposure hash (0 to `MAX_EXPOSURE_HASH`). */
  readonly exposureHash: number
  /** Whether `other` is a `TetherProxy` of the same exposure hash. */
  equals(other: unknown): boolean
}

/** A UUID value (Tether tag 0x20000011); frozen, compare with `equals`. */
export declare class TetherUuid {
  /**
   * `text`: a UUID as 8-4-4-4-12 hex digits, either case; another string
   * throws `TetherError` `TETHER_UNSUPPORTED_TYPE`, another type a TypeError
   * with that code.
   */
  constructor(text: string)
  /** Lowercase hyphenated text. */
  readonly value: string
  /** Whether `other` is a `TetherUuid` of the same value. */
  equals(other: unknown): boolean
}

/** What `encode` accepts. */
export type TetherInput =
  | number
  | bigint
  | boolean
  | null
  | string
  | TetherSymbol
  | Uint8Array
  | ArrayBuffer
  | TetherUuid
  | TetherProxy
  | TetherInput[]

/** What `decode` returns. */
export type TetherValue = number | boolean | null | string | TetherSymbol | Uint8Array | TetherUuid | TetherProxy | TetherValue[]

/**
 * Options of the encoding and decoding calls. An options argument that is
 * no object, or a bad `maxDepth`, throws `TetherError` `TETHER_INVALID_OPTION`.
 */
export interface TetherOptions {
  /** One byte per character (U+0000..U+00FF), as the Caffeine JS bridge writes text. */
  latin1?: boolean
  /** Deepest Array nesting (default 256): an integer 0..2^32-1. */
  maxDepth?: number
}

/** A decoded message send (`decodeMessageSend`). */
export interface MessageSend {
  /** Lowercase hyphenated UUID text. */
  uuid: string
  /** The receiver's exposure hash. */
  receiver: number
  /** The selector (the Symbol's name), e.g. `printString`. */
  selector: string
  /** The arguments, decoded as `decode` decodes values. */
  arguments: TetherValue[]
}

/** A decoded answer (`decodeAnswer`). */
export interface Answer {
  /** The send's UUID (wire form), or `null` (the MCP tool's form). */
  uuid: string | null
  /** The answered value, decoded as `decode` decodes values. */
  result: TetherValue
}

/** The MCP `send` tool's arguments (`toolArguments`). */
export interface ToolArguments {
  /** The receiver, Tether-encoded, as hex. */
  receiver: string
  /** The selector as text. */
  selector: string
  /** The arguments Array, Tether-encoded, as hex. */
  arguments: string
}

/**
 * Tether bytes of a value (see `TetherInput`). Strings are UTF-8 unless
 * `latin1`; Arrays nest at most `maxDepth` levels (`TETHER_TOO_DEEP`).
 * Throws `TetherError`: `TETHER_INTEGER_RANGE` (an integer outside
 * 0..MAX_SMALL_INTEGER), `TETHER_UNSUPPORTED_TYPE` (a fraction, undefined, an
 * object of no Tether type), `TETHER_UNENCODABLE_CHARACTER`, ...
 */
export declare function encode(value: TetherInput, options?: TetherOptions): Buffer
/**
 * Decode exactly one value; bytes left after it are an error
 * (`TETHER_TRAILING_BYTES`). Throws `TetherError` with `code` and the byte
 * `offset` (`TETHER_TRUNCATED`, `TETHER_UNKNOWN_TAG`, ...).
 */
export declare function decode(data: Uint8Array | ArrayBuffer, options?: TetherOptions): TetherValue
/**
 * A message-send frame: `receiver` is the exposure hash (an integer 0 to
 * `MAX_EXPOSURE_HASH`, or a `TetherProxy`), `selector` a string or
 * `TetherSymbol`, `args` an array of values; a random UUID unless
 * `options.uuid` is given (a UUID string or `TetherUuid`).
 */
export declare function encodeMessageSend(
  receiver: number | bigint | TetherProxy,
  selector: string | TetherSymbol,
  args: TetherInput[],
  options?: TetherOptions & { uuid?: string | TetherUuid },
): Buffer
/**
 * Decode a message-send frame (a receiver in the proxy form tether.js
 * writes is accepted too).
 */
export declare function decodeMessageSend(data: Uint8Array | ArrayBuffer, options?: TetherOptions): MessageSend
/** An answer frame: with `options.uuid` the wire form, without it the MCP tool's form. */
export declare function encodeAnswer(value: TetherInput, options?: TetherOptions & { uuid?: string | TetherUuid }): Buffer
/** Decode an answer frame, wire form (with UUID) or MCP form (without: `uuid` null). */
export declare function decodeAnswer(data: Uint8Array | ArrayBuffer, options?: TetherOptions): Answer
/**
 * The one-word handshake `0x60000001 + exposureHash`; `exposureHash` as for
 * `TetherProxy` (`TETHER_EXPOSURE_HASH_RANGE`, TypeError
 * `TETHER_UNSUPPORTED_TYPE`).
 */
export declare function encodeHandshake(exposureHash: number | bigint): Buffer
/**
 * The exposure hash of a handshake word (exactly 4 bytes, `0x60000001 +
 * exposureHash`). Throws `TetherError`: `TETHER_TRUNCATED` (fewer than 4
 * bytes), `TETHER_TRAILING_BYTES` (more), `TETHER_UNEXPECTED_TAG` (another word).
 */
export declare function decodeHandshake(data: Uint8Array | ArrayBuffer): number
/** Lowercase hex: 8 characters per 32-bit word. */
export declare function toHex(data: Uint8Array | ArrayBuffer): string
/**
 * Parse hex under the send tool's checklist: hex digits only (either case)
 * and (with `words`, the default) a length that is a multiple of 8; errors
 * (`TETHER_HEX_LENGTH`, `TETHER_HEX_DIGIT`) name the offending word.
 * `{words: false}` accepts any whole number of bytes.
 */
export declare function fromHex(hex: string, options?: { words?: boolean }): Buffer
/**
 * The MCP `send` tool's `{receiver, selector, arguments}`: the receiver (any
 * value, typically a `TetherProxy`) and the arguments Array as hex, the
 * selector as text.
 */
export declare function toolArguments(receiver: TetherInput, selector: string | TetherSymbol, args: TetherInput[], options?: TetherOptions): ToolArguments
/** The `send` tool's hex result -> its value (answer tag optional). */
export declare function decodeResultHex(hex: string, options?: TetherOptions): TetherValue
/**
 * The `send` tool's output `{"result": "<hex>"}` (an object, JSON text or
 * its UTF-8 bytes) -> the result value; another shape throws
 * `TETHER_BAD_TOOL_RESULT`.
 */
export declare function readToolResult(output: string | Uint8Array | ArrayBuffer | { result: string }, options?: TetherOptions): TetherValue

/** A typed-notation value, as in vectors/tether.json. */
export type Typed =
  | { int: number | string }
  | { bool: boolean }
  | { nil: null }
  | { string: string }
  | { symbol: string }
  | { bytes: string }
  | { array: Typed[] }
  | { uuid: string }
  | { proxy: number }
/**
 * A value in the typed notation, walked as `encode` walks it (types, holes,
 * cycles, `maxDepth`: default 256, an integer 0..2^32-1); integer ranges and
 * characters are not checked (large or negative integers become `{int}` digits).
 */
export declare function toTyped(value: TetherInput, maxDepth?: number): Typed
/**
 * The typed notation -> a value (`{int}` may hold decimal digits). A
 * malformed typed value throws a TypeError `TETHER_UNSUPPORTED_TYPE`.
 */
export declare function fromTyped(typed: Typed): TetherValue
