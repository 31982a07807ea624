'use strict'
// Root entry point: every format as a namespace, plus the error classes.
// Prefer the subpath exports (`polywire/kado`, ...) in application code.
const errors = require('./errors.js')
const toon = require('./toon.js')

module.exports = {
  kado: require('./kado.js'),
  toon,
  tether: require('./tether.js'),
  axon: require('./axon.js'),
  kameo: require('./kameo.js'),
  llm: require('./llm.js'),
  PolywireError: errors.PolywireError,
  KadoError: errors.KadoError,
  TetherError: errors.TetherError,
  AxonError: errors.AxonError,
  KameoError: errors.KameoError,
  LlmError: errors.LlmError,
  ToonDecodeError: toon.ToonDecodeError,
  ToonEncodeError: toon.ToonEncodeError,
}
