import tether from './tether.js'

export const {
  MAX_SMALL_INTEGER,
  MAX_EXPOSURE_HASH,
  DEFAULT_MAX_DEPTH,
  TetherSymbol,
  TetherProxy,
  TetherUuid,
  encode,
  decode,
  encodeMessageSend,
  decodeMessageSend,
  encodeAnswer,
  decodeAnswer,
  encodeHandshake,
  decodeHandshake,
  toHex,
  fromHex,
  toolArguments,
  decodeResultHex,
  readToolResult,
  toTyped,
  fromTyped,
  TetherError,
  PolywireError,
} = tether
export default tether
