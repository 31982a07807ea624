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
 * must be an integer 0..2^32-1 (`TETHER_INVALID_OPTION`). Returned Buffers
 * are V8-owned memory, collected without waiting for the event loop.
 */
import { TetherError, PolywireError } from './errors'
export { TetherError, PolywireError }

export declare const MAX_SMALL_INTEGER: 0x1fffffff
export declare const MAX_EXPOSURE_HASH: 0x0ffffffe
export declare const DEFAULT_MAX_DEPTH: 256

export declare class TetherSymbol {
  constructor(name: string)
  readonly name: string
  equals(other: unknown): boolean
}

export declare class TetherProxy {
  /** Throws `TetherError` (`TETHER_EXPOSURE_HASH_RANGE`) outside 0..MAX_EXPOSURE_HASH. */
  constructor(exposureHash: number)
  readonly exposureHash: number
  equals(other: unknown): boolean
}

export declare class TetherUuid {
  constructor(text: string)
  /** Lowercase hyphenated text. */
  readonly value: string
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

export interface TetherOptions {
  /** One byte per character (U+0000..U+00FF), as the Caffeine JS bridge writes text. */
  latin1?: boolean
  /** Deepest Array nesting (default 256): an integer 0..2^32-1. */
  maxDepth?: number
}

export interface MessageSend {
  /** Lowercase hyphenated UUID text. */
  uuid: string
  /** The receiver's exposure hash. */
  receiver: number
  selector: string
  arguments: TetherValue[]
}

export interface Answer {
  /** The send's UUID (wire form), or `null` (the MCP tool's form). */
  uuid: string | null
  result: TetherValue
}

export interface ToolArguments {
  receiver: string
  selector: string
  arguments: string
}

export declare function encode(value: TetherInput, options?: TetherOptions): Buffer
export declare function decode(data: Uint8Array | ArrayBuffer, options?: TetherOptions): TetherValue
export declare function encodeMessageSend(
  receiver: number | TetherProxy,
  selector: string | TetherSymbol,
  args: TetherInput[],
  options?: TetherOptions & { uuid?: string | TetherUuid },
): Buffer
export declare function decodeMessageSend(data: Uint8Array | ArrayBuffer, options?: TetherOptions): MessageSend
export declare function encodeAnswer(value: TetherInput, options?: TetherOptions & { uuid?: string | TetherUuid }): Buffer
export declare function decodeAnswer(data: Uint8Array | ArrayBuffer, options?: TetherOptions): Answer
export declare function encodeHandshake(exposureHash: number): Buffer
export declare function decodeHandshake(data: Uint8Array | ArrayBuffer): number
export declare function toHex(data: Uint8Array | ArrayBuffer): string
export declare function fromHex(hex: string, options?: { words?: boolean }): Buffer
export declare function toolArguments(receiver: TetherInput, selector: string | TetherSymbol, args: TetherInput[], options?: TetherOptions): ToolArguments
export declare function decodeResultHex(hex: string, options?: TetherOptions): TetherValue
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
export declare function toTyped(value: TetherInput, maxDepth?: number): Typed
export declare function fromTyped(typed: Typed): TetherValue
