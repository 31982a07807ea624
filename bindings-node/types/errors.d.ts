/**
 * Base class of polywire's errors. `err instanceof PolywireError` is true for
 * every error polywire throws: the format classes below, `ToonDecodeError`
 * (a `SyntaxError`, as the reference's is) and the `TypeError`/`RangeError`
 * of a bad argument, which carry a `code` too.
 */
export declare class PolywireError extends Error {
  /**
   * `name` is the class's name; `offset`, `line` and `column` default to
   * `null`. (polywire constructs its errors; so may a caller.)
   */
  constructor(message: string, code: string, position?: { offset?: number; line?: number; column?: number | null })
  /** Stable machine-readable code, e.g. `KADO_TRUNCATED_PAYLOAD`. */
  readonly code: string
  /** Byte offset of the problem in the input, or `null`. */
  readonly offset: number | null
  /** 1-based line (text formats), or `null`. */
  readonly line: number | null
  /** 1-based column (text formats), or `null`. */
  readonly column: number | null
}
/** A Kado frame could not be encoded or decoded (codes `KADO_*`, with the byte `offset`). */
export declare class KadoError extends PolywireError {}
/** A Tether value could not be encoded or decoded (codes `TETHER_*`, with the byte `offset`). */
export declare class TetherError extends PolywireError {}
/** An AXON envelope is invalid; `code` is the protocol's error code (`invalid_envelope`, `unknown_kind`, ...). */
export declare class AxonError extends PolywireError {}
/** A Kameo message could not be encoded or decoded (codes `KAMEO_*`, with the byte `offset`). */
export declare class KameoError extends PolywireError {}
/** Tokens could not be counted (`polywire/llm`): an unknown encoding, a bad tokenizer.json. */
export declare class LlmError extends PolywireError {}
