import polywire from './polywire.js'

export const { kado, PolywireError, KadoError, TetherError, AxonError, KameoError } = polywire
export default polywire
