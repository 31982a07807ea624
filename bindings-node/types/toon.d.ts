/// <reference types="node" />
/**
 * TOON text (Token-Oriented Object Notation): a drop-in for
 * `@toon-format/toon` 4.4.0 with the same exports, options and output bytes,
 * implemented in Rust. Beyond the reference (spec v3 features, off by
 * default): `keyFolding: 'safe'` with `flattenDepth` when encoding and
 * `expandPaths: 'safe'` when decoding.
 */
import { PolywireError } from './errors'
export { PolywireError }

/** The delimiters TOON supports, by name (`encode`'s `delimiter` option takes the characters). */
export declare const DELIMITERS: {
  readonly comma: ','
  readonly tab: '\t'
  readonly pipe: '|'
}
/** A name of `DELIMITERS`: `'comma'`, `'tab'` or `'pipe'`. */
export type DelimiterKey = keyof typeof DELIMITERS
/** A delimiter character: `','`, `'\t'` or `'|'`. */
export type Delimiter = (typeof DELIMITERS)[DelimiterKey]
/** The default delimiter, `','` (`DELIMITERS.comma`). */
export declare const DEFAULT_DELIMITER: Delimiter
/** Deepest nesting encoded or decoded. */
export declare const MAX_DEPTH: 1024
/** Largest `indentSize` accepted when encoding. */
export declare const MAX_INDENT: 256

/** A JSON primitive. */
export type JsonPrimitive = string | number | boolean | null
/** A JSON object. */
export type JsonObject = { [Key in string]: JsonValue } & { [Key in string]?: JsonValue | undefined }
/** A JSON array. */
export type JsonArray = JsonValue[] | readonly JsonValue[]
/** A value of the JSON data model: what `decode` returns. */
export type JsonValue = JsonPrimitive | JsonObject | JsonArray

/**
 * Transforms or filters values during encoding, as `JSON.stringify`'s
 * replacer does, with the path from the root. Return `undefined` to omit a
 * property or element (at the root: no change).
 */
export type EncodeReplacer = (key: string, value: JsonValue, path: readonly (string | number)[]) => unknown

/**
 * Options of `encode` and `encodeLines`. An option of the wrong type or out
 * of range throws a TypeError/RangeError with code `TOON_INVALID_ARGUMENT`.
 */
export interface EncodeOptions {
  /** Spaces per indentation level (0 to 256). @default 2 */
  indentSize?: number
  /** @deprecated Use `indentSize` instead. */
  indent?: number
  /** Delimiter of tabular rows and inline arrays. @default DELIMITERS.comma */
  delimiter?: Delimiter
  /** Called for the root and every property and element. */
  replacer?: EncodeReplacer
  /** Fold chains of single-key objects into dotted keys (spec v3). @default 'off' */
  keyFolding?: 'off' | 'safe'
  /** Most segments in a folded key. @default Infinity */
  flattenDepth?: number
}

/**
 * Options of `decode` and `decodeFromLines`. An option of the wrong type or
 * out of range throws a TypeError/RangeError with code `TOON_INVALID_ARGUMENT`.
 */
export interface DecodeOptions {
  /** Spaces per indentation level (at least 1). @default 2 */
  indentSize?: number
  /** @deprecated Use `indentSize` instead. */
  indent?: number
  /** Validate lengths, indentation, blank lines and duplicate keys. @default true */
  strict?: boolean
  /** Expand dotted keys into nested objects (spec v3). @default 'off' */
  expandPaths?: 'off' | 'safe'
}
/**
 * Options of `decodeStream` and `decodeStreamSync`, as the reference's; the
 * events are never path-expanded (`expandPaths` is ignored).
 */
export type DecodeStreamOptions = DecodeOptions

/**
 * An event of `decodeStream`/`decodeStreamSync`: the document as a
 * sequence of object and array boundaries, keys and primitives (an array's
 * `length` is the one its header declares).
 */
export type JsonStreamEvent =
  | { type: 'startObject' }
  | { type: 'endObject' }
  | { type: 'startArray'; length: number }
  | { type: 'endArray' }
  | { type: 'key'; key: string }
  | { type: 'primitive'; value: JsonPrimitive }

/**
 * Thrown when TOON text cannot be decoded. Extends `SyntaxError`; the
 * message starts with `Line N: `.
 */
export declare class ToonDecodeError extends SyntaxError {
  /** 1-based line of the problem, if known. */
  readonly line?: number
  /** The offending line as written (including indentation), if known. */
  readonly source?: string
  /** Stable machine-readable code, e.g. `TOON_LENGTH_MISMATCH`. */
  readonly code: string
  /** 1-based column of the problem, where it applies. */
  readonly column?: number
  /**
   * The message is prefixed with `Line N: ` when `context.line` is given;
   * `code` defaults to `TOON_DECODE_ERROR`.
   */
  constructor(
    message: string,
    context?: { line?: number; source?: string; cause?: unknown; code?: string; column?: number },
  )
}

/**
 * Thrown when a value cannot be encoded. Codes: `TOON_TOO_DEEP` (nested
 * beyond MAX_DEPTH), `TOON_CYCLE` (an object or array contains itself,
 * also through toJSON or a replacer), `TOON_TOO_LARGE` (an array longer
 * than any text V8 can hold, e.g. a sparse array with a huge length).
 * Bad arguments and options throw TypeError/RangeError with code
 * `TOON_INVALID_ARGUMENT` (a line that is no string too); a string with an
 * unpaired surrogate throws the reference's TypeError with code
 * `TOON_UNPAIRED_SURROGATE`. All are `instanceof PolywireError`.
 */
export declare class ToonEncodeError extends PolywireError {}

/** Text emitted verbatim at a primitive position. */
export interface RawString {
  /** The text, emitted as is. */
  readonly value: string
}
/** Wrap pre-formatted text to be emitted verbatim (typically from a replacer). */
export declare function rawString(value: string): RawString
/** Escape a string as the encoder does inside quotes (without the quotes). */
export declare function escapeString(value: string): string

/** Encode a value as TOON text (no trailing newline). */
export declare function encode(input: unknown, options?: EncodeOptions): string
/** Decode TOON text to a value. */
export declare function decode(input: string, options?: DecodeOptions): JsonValue
/** Encode a value as TOON lines. */
export declare function encodeLines(input: unknown, options?: EncodeOptions): Iterable<string>
/** Decode TOON given as lines. */
export declare function decodeFromLines(lines: Iterable<string>, options?: DecodeOptions): JsonValue
/**
 * Decode TOON lines to JSON events, as the reference yields them: read as
 * they are needed; on malformed input, the events before the fault, then a
 * `ToonDecodeError`. Each element is one line (a `\n` in it included);
 * `undefined` ends the lines.
 */
export declare function decodeStreamSync(lines: Iterable<string>, options?: DecodeStreamOptions): Iterable<JsonStreamEvent>
/**
 * Decode TOON lines from a sync or async iterable to JSON events, each
 * yielded as soon as the line that decides it has come. The decoder resumes
 * where it stopped: each line is read once, and memory is bounded by the
 * open structure and the longest line.
 */
export declare function decodeStream(
  source: AsyncIterable<string> | Iterable<string>,
  options?: DecodeStreamOptions,
): AsyncIterable<JsonStreamEvent>
