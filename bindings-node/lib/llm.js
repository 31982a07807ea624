'use strict'
// polywire/llm: put data into a model's context in the fewest tokens,
// counted exactly.
//
// - countTokens(text, { encoding }) counts with the real BPE tokenizers,
//   offline: 'o200k_base' (default: GPT-4o, 4.1, 5, o-series) and
//   'cl100k_base', equal to tiktoken's encode_ordinary (special-token text is
//   ordinary text), or a Hugging Face tokenizer.json given by its path.
// - encodeForLlm(value, opts) renders TOON (each delimiter) and JSON, counts
//   each, and returns the rendering with the fewest tokens;
//   strategy: 'structure' decides by the design document's rules instead.
// - safeEncode(value, { fallbackToJson }) is TOON with a JSON fallback.
//
// JSON renderings are JSON.stringify's, as in the Python package, so both
// choose alike. Counting is native (Rust); a large set of candidates is
// counted on two threads.

const native = require('./native.js')
const toon = require('./toon.js')
const { LlmError, PolywireError, fromNative, argError, strArg, boolArg, describe } = require('./errors.js')

const INVALID = 'LLM_INVALID_ARGUMENT'
const DEFAULT_ENCODING = 'o200k_base'
const ENCODINGS = Object.freeze(['o200k_base', 'cl100k_base'])
const FORMATS = Object.freeze(['toon', 'toon-tab', 'toon-pipe', 'json', 'json-pretty'])
const DELIMITER_FORMAT = { ',': 'toon', '\t': 'toon-tab', '|': 'toon-pipe' }
const FORMAT_DELIMITER = { toon: ',', 'toon-tab': '\t', 'toon-pipe': '|' }

function call(fn) {
  try {
    return fn()
  } catch (e) {
    throw fromNative(e, LlmError)
  }
}

function optionsArg(options, name) {
  if (options === undefined || options === null) return {}
  if (typeof options === 'object' && !Array.isArray(options)) return options
  throw argError(TypeError, INVALID, `${name} must be an object, got ${describe(options)}`)
}

function encodingOf(o) {
  return o.encoding === undefined || o.encoding === null ? DEFAULT_ENCODING : strArg(o.encoding, 'encoding', INVALID)
}

/** The number of tokens of `text` ('o200k_base', 'cl100k_base' or a tokenizer.json path). */
function countTokens(text, options) {
  strArg(text, 'text', INVALID)
  const encoding = encodingOf(optionsArg(options, 'options'))
  return call(() => native.llmCountTokens(text, encoding))
}

function candidates(formats, delimiter) {
  if (!Array.isArray(formats)) throw argError(TypeError, INVALID, `formats must be an array of format names, got ${describe(formats)}`)
  if (delimiter !== undefined && delimiter !== null && !(typeof delimiter === 'string' && delimiter in DELIMITER_FORMAT)) {
    throw argError(RangeError, INVALID, `delimiter must be ',', '\\t', '|' or undefined, got ${describe(delimiter)}`)
  }
  const names = []
  for (const f of formats) {
    if (typeof f !== 'string' || !FORMATS.includes(f)) {
      throw argError(RangeError, INVALID, `formats holds ${describe(f)}; expected names among ${FORMATS.join(', ')}`)
    }
    const expanded = f !== 'toon' ? [f] : delimiter == null ? Object.values(DELIMITER_FORMAT) : [DELIMITER_FORMAT[delimiter]]
    for (const n of expanded) if (!names.includes(n)) names.push(n)
  }
  if (names.length === 0) throw argError(RangeError, INVALID, 'formats must name at least one format')
  return names
}

// The design document's serialize_for_llm_context rules, in order.
function structureRule(value) {
  const isObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x)
  if (Array.isArray(value) && value.length > 2 && value.every(isObject)) {
    const first = new Set(Object.keys(value[0]))
    const same = (x) => {
      const keys = Object.keys(x)
      return keys.length === first.size && keys.every((k) => first.has(k))
    }
    if (value.every(same)) return 'uniform-array'
  }
  const children = Array.isArray(value) ? value : isObject(value) ? Object.values(value) : []
  return children.some((c) => c !== null && typeof c === 'object') ? 'nested' : 'mixed'
}

function render(name, value, toonOptions) {
  if (name in FORMAT_DELIMITER) return toon.encode(value, { ...toonOptions, delimiter: FORMAT_DELIMITER[name] })
  // The value TOON writes, as JSON (a value JSON.stringify cannot take, a
  // BigInt, say, is taken as TOON normalises it).
  let text
  try {
    text = name === 'json-pretty' ? JSON.stringify(value, null, 2) : JSON.stringify(value)
  } catch {
    const plain = toon.decode(toon.encode(value, toonOptions))
    text = name === 'json-pretty' ? JSON.stringify(plain, null, 2) : JSON.stringify(plain)
  }
  // JSON.stringify(undefined) and of a function is undefined: TOON writes null.
  return text === undefined ? 'null' : text
}

/**
 * Render `value` in each of `formats` and return the rendering with the
 * fewest tokens: `{ text, format, tokens, candidates, encoding, rule }`.
 */
function encodeForLlm(value, options) {
  const o = optionsArg(options, 'options')
  const strategy = o.strategy ?? 'tokens'
  if (strategy !== 'tokens' && strategy !== 'structure') {
    throw argError(RangeError, INVALID, `strategy must be 'tokens' or 'structure', got ${describe(strategy)}`)
  }
  const names = candidates(o.formats ?? ['toon', 'json'], o.delimiter)
  const encoding = encodingOf(o)
  const toonOptions = {}
  if (o.indentSize !== undefined) toonOptions.indentSize = o.indentSize
  if (o.replacer !== undefined) toonOptions.replacer = o.replacer
  if (strategy === 'structure') {
    const rule = structureRule(value)
    const format = rule === 'uniform-array' ? DELIMITER_FORMAT[o.delimiter ?? ','] : 'json'
    return { text: render(format, value, toonOptions), format, tokens: null, candidates: {}, encoding, rule }
  }
  const name = call(() => native.llmCheckEncoding(encoding))
  // A plain value is rendered in every format and counted in one native
  // call (no JSON.stringify, no text crossing over to be counted); any
  // other value, or a replacer, renders here format by format.
  let choice = o.replacer === undefined ? toon.packedChoice(value, o.indentSize, names, encoding) : undefined
  if (choice === undefined) {
    const texts = names.map((n) => render(n, value, toonOptions))
    const counts = call(() => native.llmCountMany(texts, encoding))
    let index = 0
    for (let i = 1; i < counts.length; i++) if (counts[i] < counts[index]) index = i
    choice = { index, text: texts[index], counts }
  }
  const { index, text, counts } = choice
  const table = {}
  names.forEach((n, i) => {
    table[n] = counts[i]
  })
  return {
    text,
    format: names[index],
    tokens: counts[index],
    candidates: table,
    encoding: name === 'tokenizer.json' ? encoding : name,
    rule: null,
  }
}

/**
 * TOON text of `value`; when TOON cannot encode it and `fallbackToJson`
 * (default true), `JSON.stringify(value)` instead.
 */
function safeEncode(value, options) {
  const o = optionsArg(options, 'options')
  const fallback = boolArg(o.fallbackToJson, 'fallbackToJson', INVALID, true)
  try {
    return toon.encode(value)
  } catch (e) {
    if (!fallback || !(e instanceof toon.ToonEncodeError || e instanceof TypeError || e instanceof RangeError)) throw e
    // When JSON cannot either (a cycle, nesting too deep for V8, a BigInt,
    // a getter that throws), TOON's error goes out: it has a code, where
    // JSON.stringify's errors have none.
    let text
    try {
      text = JSON.stringify(value)
    } catch (jsonError) {
      if (e.cause === undefined) {
        try {
          e.cause = jsonError
        } catch {}
      }
      throw e
    }
    if (typeof text !== 'string') throw e
    return text
  }
}

module.exports = {
  DEFAULT_ENCODING,
  ENCODINGS,
  FORMATS,
  LlmError,
  PolywireError,
  countTokens,
  encodeForLlm,
  safeEncode,
}
