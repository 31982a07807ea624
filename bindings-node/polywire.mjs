import polywire from './polywire.js'

export const { kado, tether, axon, kameo, PolywireError, KadoError, TetherError, AxonError, KameoError } = polywire
export default polywire
