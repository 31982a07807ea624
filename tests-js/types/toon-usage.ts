// Compiled (not run) by tests-js/types.test.js: the declarations must
// type-check code written against @toon-format/toon 4.4.0, plus polywire's
// extras (error code/column, keyFolding, expandPaths).
import {
  encode,
  decode,
  encodeLines,
  decodeFromLines,
  decodeStreamSync,
  decodeStream,
  ToonDecodeError,
  DELIMITERS,
  DEFAULT_DELIMITER,
  rawString,
  escapeString,
} from 'polywire/toon'
import type { DecodeOptions, EncodeOptions, EncodeReplacer, JsonStreamEvent, JsonValue, Delimiter } from 'polywire/toon'
import * as polywire from 'polywire'

const delimiter: Delimiter = DELIMITERS.pipe
const options: EncodeOptions = { indentSize: 4, delimiter, keyFolding: 'safe', flattenDepth: 2 }
const replacer: EncodeReplacer = (key, value, path) => (key === 'secret' ? undefined : path.length > 3 ? rawString(`"${escapeString(String(value))}"`) : value)
const text: string = encode({ users: [{ id: 1, name: 'Ada' }] }, { ...options, replacer })
const lines: string[] = Array.from(encodeLines({ a: 1 }, { delimiter: DEFAULT_DELIMITER }))
const decodeOptions: DecodeOptions = { indentSize: 2, strict: false, expandPaths: 'safe' }
const value: JsonValue = decode(text, decodeOptions)
const again: JsonValue = decodeFromLines(lines)
for (const event of decodeStreamSync(lines)) {
  const e: JsonStreamEvent = event
  if (e.type === 'startArray') console.log(e.length)
  if (e.type === 'key') console.log(e.key)
}
async function stream(source: AsyncIterable<string>): Promise<number> {
  let n = 0
  for await (const event of decodeStream(source)) if (event.type === 'primitive') n++
  return n
}
try {
  decode('a[2]: 1')
} catch (e) {
  if (e instanceof ToonDecodeError) {
    const line: number | undefined = e.line
    const source: string | undefined = e.source
    const code: string = e.code
    const column: number | undefined = e.column
    const syntax: SyntaxError = e
    console.log(line, source, code, column, syntax)
  }
}
const t: typeof polywire.toon.encode = polywire.toon.encode
console.log(value, again, stream, t)
