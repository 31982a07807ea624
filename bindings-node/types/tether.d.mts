// ESM view of tether.d.ts (the .mjs entry re-exports the CommonJS module, whose
// exports are also its default export).
import * as tether from './tether.js'
export * from './tether.js'
export default tether
