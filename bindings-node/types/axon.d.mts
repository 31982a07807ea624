// ESM view of axon.d.ts (the .mjs entry re-exports the CommonJS module, whose
// exports are also its default export).
import * as axon from './axon.js'
export * from './axon.js'
export default axon
