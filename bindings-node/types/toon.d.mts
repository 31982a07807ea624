// ESM view of toon.d.ts (the .mjs entry re-exports the CommonJS module, whose
// exports are also its default export).
import * as toon from './toon.js'
export * from './toon.js'
export default toon
