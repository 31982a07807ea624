// ESM view of polywire.d.ts (the .mjs entry re-exports the CommonJS module, whose
// exports are also its default export).
import * as polywire from './polywire.js'
export * from './polywire.js'
export default polywire
