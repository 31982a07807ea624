import polywire from './polywire.js'

export const { kado, toon, tether, axon, kameo, llm, PolywireError, KadoError, TetherError, AxonError, KameoError, LlmError, ToonDecodeError, ToonEncodeError } = polywire
export default polywire
