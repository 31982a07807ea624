export * as kado from './kado'
export * as toon from './toon'
export { PolywireError, KadoError, TetherError, AxonError, KameoError } from './errors'
