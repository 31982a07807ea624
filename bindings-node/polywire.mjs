import polywire from './polywire.js'

export const { kado, toon, PolywireError, KadoError, TetherError, AxonError, KameoError } = polywire
export default polywire
