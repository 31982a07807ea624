// Compiled (not run) by tests-js/types.test.js: the llm declarations
// accept what the runtime accepts and type what it returns.
import { countTokens, encodeForLlm, safeEncode, DEFAULT_ENCODING, ENCODINGS, FORMATS, LlmError } from 'polywire/llm'
import type { LlmText, LlmFormat, EncodeForLlmOptions } from 'polywire/llm'
import * as llm from 'polywire/llm'
import { llm as rootLlm, LlmError as RootLlmError } from 'polywire'

const n: number = countTokens('hello', { encoding: 'cl100k_base' })
const m: number = countTokens('hello')
const opts: EncodeForLlmOptions = { formats: ['toon', 'json', 'json-pretty'], delimiter: '\t', indentSize: 4, strategy: 'tokens' }
const r: LlmText = encodeForLlm([{ a: 1 }], opts)
const format: LlmFormat = r.format
const tokens: number | null = r.tokens
const table: Partial<Record<LlmFormat, number>> = r.candidates
const rule: 'uniform-array' | 'nested' | 'mixed' | null = r.rule
const s: string = safeEncode({ a: 1 }, { fallbackToJson: false })
const d: 'o200k_base' = DEFAULT_ENCODING
const e: readonly string[] = ENCODINGS
const f: readonly LlmFormat[] = FORMATS
const err: LlmError = new RootLlmError('x', 'LLM_UNKNOWN_ENCODING')
const same: typeof llm.countTokens = rootLlm.countTokens
// @ts-expect-error an unknown format
encodeForLlm([], { formats: ['yaml'] })
// @ts-expect-error a delimiter TOON has not
encodeForLlm([], { delimiter: ';' })
void [n, m, format, tokens, table, rule, s, d, e, f, err, same]
