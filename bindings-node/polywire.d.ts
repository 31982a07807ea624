export * as kado from './kado'
export { PolywireError, KadoError, TetherError, AxonError, KameoError } from './errors'
