export * as kado from './kado'
export * as tether from './tether'
export * as axon from './axon'
export { PolywireError, KadoError, TetherError, AxonError, KameoError } from './errors'
