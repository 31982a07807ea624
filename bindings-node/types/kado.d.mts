// ESM view of kado.d.ts (the .mjs entry re-exports the CommonJS module, whose
// exports are also its default export).
import * as kado from './kado.js'
export * from './kado.js'
export default kado
