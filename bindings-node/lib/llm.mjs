import llm from './llm.js'

export const {
  DEFAULT_ENCODING,
  ENCODINGS,
  FORMATS,
  LlmError,
  PolywireError,
  countTokens,
  encodeForLlm,
  safeEncode,
} = llm
export default llm
