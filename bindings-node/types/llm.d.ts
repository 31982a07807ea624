// polywire/llm: put data into a model's context in the fewest tokens, counted exactly.
import { PolywireError, LlmError } from './errors'
import type { EncodeReplacer } from './toon'

export { PolywireError, LlmError }

/** The encoding counts use unless told otherwise. */
export declare const DEFAULT_ENCODING: 'o200k_base'
/** The built-in encodings; any other name must be the path of a Hugging Face `tokenizer.json`. */
export declare const ENCODINGS: readonly ['o200k_base', 'cl100k_base']
/** The renderings `encodeForLlm` can weigh. */
export declare const FORMATS: readonly ['toon', 'toon-tab', 'toon-pipe', 'json', 'json-pretty']

/** A rendering `encodeForLlm` can weigh. */
export type LlmFormat = 'toon' | 'toon-tab' | 'toon-pipe' | 'json' | 'json-pretty'

/** Options of `countTokens`. */
export interface CountTokensOptions {
  /** `'o200k_base'` (default), `'cl100k_base'` or the path of a `tokenizer.json`. */
  encoding?: string
}

/** Options of `encodeForLlm`. */
export interface EncodeForLlmOptions {
  /** `'o200k_base'` (default), `'cl100k_base'` or the path of a `tokenizer.json`. */
  encoding?: string
  /** The renderings to weigh (default `['toon', 'json']`); `'toon'` is every delimiter when `delimiter` is not given. */
  formats?: readonly LlmFormat[]
  /** TOON's delimiter: only this one is weighed. */
  delimiter?: ',' | '\t' | '|'
  /** TOON's `indentSize` (default 2). */
  indentSize?: number
  /** TOON's `replacer`. */
  replacer?: EncodeReplacer
  /** `'tokens'` (default): count every rendering; `'structure'`: the design document's rules, no counting. */
  strategy?: 'tokens' | 'structure'
}

/** A value's rendering for a model's context. */
export interface LlmText {
  /** The rendering. */
  text: string
  /** Which rendering it is. */
  format: LlmFormat
  /** The tokens of `text` (`null` with `strategy: 'structure'`). */
  tokens: number | null
  /** The tokens of every rendering weighed, in the order weighed. */
  candidates: Partial<Record<LlmFormat, number>>
  /** The encoding counted with (the path, for a `tokenizer.json`). */
  encoding: string
  /** `strategy: 'structure'`: the rule that decided; `null` when tokens decided. */
  rule: 'uniform-array' | 'nested' | 'mixed' | null
}

/** Options of `safeEncode`. */
export interface SafeEncodeOptions {
  /** Return `JSON.stringify(value)` when TOON cannot encode the value (default true). */
  fallbackToJson?: boolean
}

/** The number of tokens of `text`, as tiktoken's `encode_ordinary` counts them (or the tokenizer.json's). */
export declare function countTokens(text: string, options?: CountTokensOptions): number
/** Render `value` in each format and return the rendering with the fewest tokens (ties: the first listed). */
export declare function encodeForLlm(value: unknown, options?: EncodeForLlmOptions): LlmText
/** TOON text of `value`, or `JSON.stringify(value)` when TOON cannot encode it and `fallbackToJson`. */
export declare function safeEncode(value: unknown, options?: SafeEncodeOptions): string
