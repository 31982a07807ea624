/**
 * Base class of polywire's errors. `err instanceof PolywireError` is true for
 * every error polywire throws: the format classes below, `ToonDecodeError`
 * (a `SyntaxError`, as the reference's is) and the `TypeError`/`RangeError`
 * of a bad argument, which carry a `code` too.
 */
export declare class PolywireError extends Error {
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
export declare class KadoError extends PolywireError {}
export declare class TetherError extends PolywireError {}
export declare class AxonError extends PolywireError {}
export declare class KameoError extends PolywireError {}
