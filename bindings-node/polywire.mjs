import polywire from './polywire.js'

export const { kado, kameo, PolywireError, KadoError, TetherError, AxonError, KameoError } = polywire
export default polywire
