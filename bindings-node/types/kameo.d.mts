// ESM view of kameo.d.ts (the .mjs entry re-exports the CommonJS module, whose
// exports are also its default export).
import * as kameo from './kameo.js'
export * from './kameo.js'
export default kameo
