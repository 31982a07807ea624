// ESM view of llm.d.ts (the .mjs entry re-exports the CommonJS module, whose
// exports are also its default export).
import * as llm from './llm.js'
export * from './llm.js'
export default llm
