import polywire from './polywire.js'

export const { kado, toon, tether, axon, kameo, PolywireError, KadoError, TetherError, AxonError, KameoError, ToonDecodeError, ToonEncodeError } = polywire
export default polywire
