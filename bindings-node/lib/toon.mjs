import toon from './toon.js'

export const {
  DEFAULT_DELIMITER,
  DELIMITERS,
  MAX_DEPTH,
  MAX_INDENT,
  PolywireError,
  ToonDecodeError,
  ToonEncodeError,
  decode,
  decodeFromLines,
  decodeStream,
  decodeStreamSync,
  encode,
  encodeLines,
  escapeString,
  rawString,
} = toon
export default toon
