export * as kado from './kado'
export * as kameo from './kameo'
export { PolywireError, KadoError, TetherError, AxonError, KameoError } from './errors'
