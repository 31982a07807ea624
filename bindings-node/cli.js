#!/usr/bin/env node
'use strict'
// The `polywire` command: JSON <-> TOON as @toon-format/cli converts them, and
// Kado and Tether tools. The Python package installs the same command
// (polywire/cli.py): same options, same output bytes, same messages.

const fs = require('node:fs')
const path = require('node:path')
const { once } = require('node:events')
const { parseArgs } = require('node:util')

// The format modules load the native binary: only when a command needs one, so
// --help and --version work without it.
const toonModule = () => require('./toon.js')
const kadoModule = () => require('./kado.js')
const tetherModule = () => require('./tether.js')
const nativeModule = () => require('./native.js')
const llmModule = () => require('./llm.js')
const polywireError = () => require('./errors.js').PolywireError

const HELP = `\
usage: polywire [INPUT|-] [-o OUT] [-e|-d] [--delimiter D] [--indent N] [--no-strict] [--stats]
                [--encoding E]
       polywire tokens [INPUT|-] [--encoding E]
       polywire choose [INPUT|-] [-o OUT] [--delimiter D] [--indent N] [--pretty] [--encoding E]
       polywire kado dump [INPUT|-] [-o OUT]
       polywire tether hex [INPUT|-] [-o OUT]
       polywire tether unhex [INPUT|-] [-o OUT] [--no-words]

Convert JSON to TOON and back, as @toon-format/cli does. INPUT is a file, or - (or nothing)
for standard input; .json encodes, .toon decodes, anything else (and standard input) encodes.
Write ./kado or ./tether for a file of that name.

options:
  -o, --output OUT      write to OUT instead of standard output (- is standard output)
  -e, --encode          encode JSON to TOON, whatever the extension
  -d, --decode          decode TOON to JSON, whatever the extension
  --delimiter D         delimiter of rows and inline arrays: , (default), tab ($'\\t' or \\t), |
  --indent N            spaces per indentation level, in TOON and in the JSON written (default 2)
  --strict              check lengths, indentation and duplicate keys when decoding (default)
  --no-strict           decode what strict mode refuses; the last of duplicate keys wins
  --stats               print the JSON and TOON sizes (tokens, bytes, characters) and the saving
                        to stderr
  --encoding E          the tokenizer of --stats, tokens and choose: o200k_base (default),
                        cl100k_base or the path of a Hugging Face tokenizer.json
  -h, --help            print this help and exit
  -v, --version         print the version and exit

commands:
  tokens                the number of tokens of INPUT (any text), exactly as the tokenizer counts
  choose                the rendering of the JSON (or .toon) INPUT with the fewest tokens: TOON with
                        each delimiter (or --delimiter's) or compact JSON (--pretty: and indented
                        JSON); the table of every candidate's tokens goes to stderr
  kado dump             each Kado frame of a capture as a JSON line: header, compressed, payload
  tether hex            the bytes of INPUT as lowercase hex, as the MCP send tool takes them
  tether unhex          hex text (spaces around it ignored) to raw bytes
  tether unhex --no-words  accept any whole number of bytes, not only 32-bit words of 8 digits
`

const HEADER_SIZE = 18
const MAGIC_COMPRESSED = 0x5a
const CHUNK = 1 << 16
const MAX_INDENT = 256
// The --delimiter spellings: the characters the reference takes, `\t` as typed, the names.
const DELIMITERS = { ',': ',', '\t': '\t', '|': '|', '\\t': '\t', comma: ',', tab: '\t', pipe: '|' }
// The measures --stats prints, in order.
const STATS_MEASURES = ['tokens', 'bytes', 'chars']
const DEFAULT_ENCODING = 'o200k_base'

/** A bad command line: exit status 2. */
class UsageError extends Error {}
/** A failure reported as `polywire: <message>`: exit status 1. */
class CliError extends Error {}

// --- Locating a JSON syntax error ---------------------------------------------
// JSON.parse often gives no position: both CLIs locate the first error with this
// same scanner (polywire/cli.py json_error), so they say the same.

const END_OF_INPUT = 'Unexpected end of JSON input'
const WS = /[ \t\n\r]*/y
const PLAIN = /[^"\\\x00-\x1f]*/y
const DIGITS = /[0-9]*/y
const HEX = /[0-9a-fA-F]/

function skip(re, text, i) {
  re.lastIndex = i
  re.test(text)
  return re.lastIndex
}

function token(text, i) {
  const c = String.fromCodePoint(text.codePointAt(i))
  return `Unexpected token ${c.charCodeAt(0) < 0x20 ? `'\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}'` : `'${c}'`}`
}

function isDigit(c) {
  return c >= '0' && c <= '9'
}

/** `[index, message]` of the first error of `text` as JSON, or null if it is JSON. */
function jsonError(text) {
  const n = text.length
  const stack = []
  let i = skip(WS, text, 0)
  let state = 'value'
  for (;;) {
    if (state === 'value') {
      if (i >= n) return [n, END_OF_INPUT]
      const c = text[i]
      if (c === '{' || c === '[') {
        i = skip(WS, text, i + 1)
        if (i < n && text[i] === (c === '{' ? '}' : ']')) {
          i++
          state = 'after'
          continue
        }
        stack.push(c)
        if (c === '[') continue
        if (i >= n) return [n, END_OF_INPUT]
        if (text[i] !== '"') return [i, "Expected property name or '}'"]
        state = 'key'
        continue
      }
      if (c === '"') {
        const r = scanString(text, i)
        if (Array.isArray(r)) return r
        i = r
        state = 'after'
        continue
      }
      if (c === '-' || isDigit(c)) {
        const r = scanNumber(text, i)
        if (Array.isArray(r)) return r
        i = r
        state = 'after'
        continue
      }
      const literal = { t: 'true', f: 'false', n: 'null' }[c]
      if (literal === undefined) return [i, token(text, i)]
      for (let j = 0; j < literal.length; j++) {
        if (i + j >= n) return [n, END_OF_INPUT]
        if (text[i + j] !== literal[j]) return [i + j, token(text, i + j)]
      }
      i += literal.length
      state = 'after'
    } else if (state === 'key') {
      const r = scanString(text, i)
      if (Array.isArray(r)) return r
      i = skip(WS, text, r)
      if (i >= n) return [n, END_OF_INPUT]
      if (text[i] !== ':') return [i, "Expected ':' after property name"]
      i = skip(WS, text, i + 1)
      state = 'value'
    } else {
      i = skip(WS, text, i)
      if (stack.length === 0) return i < n ? [i, 'Unexpected non-whitespace character after JSON'] : null
      if (i >= n) return [n, END_OF_INPUT]
      const c = text[i]
      const close = stack[stack.length - 1] === '{' ? '}' : ']'
      if (c === close) {
        stack.pop()
        i++
      } else if (c !== ',') {
        return [i, close === '}' ? "Expected ',' or '}' after property value" : "Expected ',' or ']' after array element"]
      } else {
        i = skip(WS, text, i + 1)
        if (close === ']') state = 'value'
        else if (i >= n) return [n, END_OF_INPUT]
        else if (text[i] !== '"') return [i, 'Expected double-quoted property name']
        else state = 'key'
      }
    }
  }
}

function scanString(text, i) {
  const n = text.length
  i++
  for (;;) {
    i = skip(PLAIN, text, i)
    if (i >= n) return [n, 'Unterminated string in JSON']
    const c = text[i]
    if (c === '"') return i + 1
    if (c !== '\\') return [i, 'Bad control character in string literal']
    if (i + 1 >= n) return [n, 'Unterminated string in JSON']
    const e = text[i + 1]
    if (e === 'u') {
      for (let j = i + 2; j < i + 6; j++) {
        if (j >= n) return [n, 'Unterminated string in JSON']
        if (!HEX.test(text[j])) return [j, 'Bad Unicode escape']
      }
      i += 6
    } else if ('"\\/bfnrt'.includes(e)) {
      i += 2
    } else {
      return [i + 1, 'Bad escaped character']
    }
  }
}

function scanNumber(text, i) {
  const n = text.length
  if (text[i] === '-') i++
  if (i < n && text[i] === '0') i++
  else if (i < n && text[i] >= '1' && text[i] <= '9') i = skip(DIGITS, text, i)
  else return [i, 'No number after minus sign']
  if (i < n && text[i] === '.') {
    const j = skip(DIGITS, text, i + 1)
    if (j === i + 1) return [j, 'Unterminated fractional number']
    i = j
  }
  if (i < n && (text[i] === 'e' || text[i] === 'E')) {
    i++
    if (i < n && (text[i] === '+' || text[i] === '-')) i++
    const j = skip(DIGITS, text, i)
    if (j === i) return [i, 'Exponent part is missing a number']
    i = j
  }
  return i
}

/** Code points of a string (a Python str's length). */
function codePoints(s) {
  let surrogates = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        surrogates++
        i++
      }
    }
  }
  return s.length - surrogates
}

function lineColumn(text, index) {
  const lineStart = text.lastIndexOf('\n', index - 1) + 1
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++
  return [line, codePoints(text.slice(lineStart, index)) + 1]
}

// --- Errors as both CLIs print them --------------------------------------------

function toonDecodeMessage(e) {
  const msg = e.line != null ? e.message.replace(/^Line \d+: /, '') : e.message
  if (e.line == null) return `Failed to decode TOON: ${msg}`
  const text = `Failed to decode TOON at line ${e.line}${e.column ? `, column ${e.column}` : ''}: ${msg}`
  if (!e.source) return text
  const visible = e.source.replace(/\t/g, '\u2192')
  const gutter = `  ${e.line} | `
  let caret
  if (e.column) caret = e.column - 1
  else {
    caret = visible.length - visible.replace(/^\s+/, '').length
    if (caret === visible.length) caret = 0
  }
  return `${text}\n\n${gutter}${visible}\n${' '.repeat(gutter.length + caret)}^`
}

function utf8Message(offset) {
  return `Input is not valid UTF-8 at byte ${offset}. Pass --no-strict to replace ill-formed bytes`
}

function fileError(file, e) {
  const reason = typeof e.code === 'string' ? e.message.replace(new RegExp(`^${e.code}: `), '').replace(/, \w+ '.*'$/, '') : e.message
  return new CliError(`${file}: ${reason}`)
}

// --- Input and output -----------------------------------------------------------

async function readInput(file) {
  if (file === null) {
    const chunks = []
    for await (const chunk of process.stdin) chunks.push(chunk)
    return Buffer.concat(chunks)
  }
  try {
    return fs.readFileSync(file)
  } catch (e) {
    throw fileError(file, e)
  }
}

async function* inputChunks(file) {
  if (file === null) {
    yield* process.stdin
    return
  }
  let fd
  try {
    fd = fs.openSync(file, 'r')
  } catch (e) {
    throw fileError(file, e)
  }
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(CHUNK)
      let n
      try {
        n = fs.readSync(fd, buf, 0, CHUNK, null)
      } catch (e) {
        throw fileError(file, e)
      }
      if (n === 0) return
      yield buf.subarray(0, n)
    }
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Standard output or a file opened when the first bytes are written (or at
 * close), written in chunks of 64 KiB.
 */
class Output {
  constructor(file) {
    this.file = file
    this.fd = null
    this.parts = []
    this.size = 0
  }

  /** Write a string (as UTF-8) or bytes. */
  async write(data) {
    this.parts.push(data)
    this.size += data.length
    if (this.size >= CHUNK) await this.flush()
  }

  open() {
    if (this.file !== null && this.fd === null) {
      try {
        this.fd = fs.openSync(this.file, 'w')
      } catch (e) {
        throw fileError(this.file, e)
      }
    }
  }

  async flush() {
    if (this.parts.length === 0) return
    const parts = this.parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p))
    const data = parts.length === 1 ? parts[0] : Buffer.concat(parts)
    this.parts = []
    this.size = 0
    if (this.file === null) {
      if (!process.stdout.write(data)) await once(process.stdout, 'drain')
      return
    }
    this.open()
    for (let off = 0; off < data.length; ) off += fs.writeSync(this.fd, data, off)
  }

  async close() {
    await this.flush()
    this.open()
    if (this.fd !== null) fs.closeSync(this.fd)
    this.fd = null
  }

  /** After an error: what is still buffered is dropped (a file opened is kept). */
  abort() {
    this.parts = []
    if (this.fd !== null) fs.closeSync(this.fd)
    this.fd = null
  }

  /** After an error in a stream of records: what was written stays. */
  async closeAfterError() {
    await this.flush()
    if (this.fd !== null) fs.closeSync(this.fd)
    this.fd = null
  }
}

function label(file) {
  if (file === null) return 'stdin'
  const full = path.resolve(file)
  return path.relative(process.cwd(), full) || path.basename(full)
}

function note(text) {
  process.stderr.write(text + '\n')
}

// --- --stats ---------------------------------------------------------------------

function size(text, bytes, encoding) {
  const out = { bytes: bytes === undefined ? Buffer.byteLength(text, 'utf8') : bytes, chars: codePoints(text) }
  if (encoding !== undefined) out.tokens = countTokens(text, encoding)
  return out
}

function countTokens(text, encoding) {
  return llmModule().countTokens(text, { encoding })
}

function measures(...sizes) {
  return STATS_MEASURES.filter((m) => sizes.every((s) => m in s))
}

function percent(saved, total) {
  if (total === 0) return '-'
  const tenths = Math.floor((Math.abs(saved) * 2000 + total) / (2 * total)) // |saved| / total in tenths of a percent, half up
  return `${saved < 0 && tenths ? '-' : ''}${Math.floor(tenths / 10)}.${tenths % 10}%`
}

/**
 * The --stats record: each measure (STATS_MEASURES) of the JSON and the TOON
 * text, what TOON saves and that saving in percent of the JSON.
 */
function computeStats(jsonSize, toonSize) {
  const record = { json: {}, toon: {}, saved: {}, savedPercent: {} }
  for (const m of measures(jsonSize, toonSize)) {
    record.json[m] = jsonSize[m]
    record.toon[m] = toonSize[m]
    record.saved[m] = jsonSize[m] - toonSize[m]
    record.savedPercent[m] = percent(record.saved[m], jsonSize[m])
  }
  return record
}

/** The --stats record as a table: one column per measure, one row per line. */
function formatStats(record) {
  const ms = Object.keys(record.json)
  const rows = [['', ...ms]]
  for (const [name, key] of [['JSON', 'json'], ['TOON', 'toon'], ['saved', 'saved'], ['saved %', 'savedPercent']]) {
    rows.push([name, ...ms.map((m) => String(record[key][m]))])
  }
  return table(rows)
}

/** Rows as columns: the first left-aligned, the others right-aligned, two spaces apart. */
function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

// --- JSON <-> TOON ------------------------------------------------------------------

function parseJson(text) {
  try {
    return JSON.parse(text)
  } catch (e) {
    const found = jsonError(text)
    if (found === null) throw new CliError(`Failed to parse JSON: ${e.message}`)
    const [line, column] = lineColumn(text, found[0])
    throw new CliError(`Failed to parse JSON at line ${line}, column ${column}: ${found[1]}`)
  }
}

async function encodeCommand(args, delimiter, indent) {
  const raw = await readInput(args.input)
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(raw)
  const value = parseJson(text)
  const out = new Output(args.output)
  const toonSize = { bytes: 0, chars: 0 }
  // --stats counts the tokens of the whole text (a line's tokens depend on its neighbours).
  const toonPieces = args.stats ? [] : null
  let first = true
  try {
    // Line by line (encodeLines): the TOON text is never held whole.
    for (const line of toonModule().encodeLines(value, { indentSize: indent, delimiter })) {
      const piece = first ? line : '\n' + line
      first = false
      if (args.stats) {
        toonSize.bytes += Buffer.byteLength(piece, 'utf8')
        toonSize.chars += codePoints(piece)
        toonPieces.push(piece)
      }
      await out.write(piece)
    }
  } catch (e) {
    out.abort()
    throw e
  }
  await out.write('\n')
  await out.close()
  if (args.output !== null) note(`Encoded \`${label(args.input)}\` \u2192 \`${label(args.output)}\``)
  if (args.stats) {
    const encoding = args.encoding ?? DEFAULT_ENCODING
    toonSize.tokens = countTokens(toonPieces.join(''), encoding)
    note(formatStats(computeStats(size(text, raw.length, encoding), toonSize)))
  }
}

// --- tokens, choose -----------------------------------------------------------------

async function tokensCommand(args) {
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await readInput(args.input))
  process.stdout.write(`${countTokens(text, args.encoding ?? DEFAULT_ENCODING)}\n`)
}

async function chooseCommand(args) {
  const delimiter = delimiterArg(args.delimiter, undefined)
  const indent = indentArg(args.indent)
  if (indent > MAX_INDENT) throw new UsageError(`Invalid indent value: ${indent} (encoding takes 0 to ${MAX_INDENT})`)
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await readInput(args.input))
  let value
  if ((args.input || '').endsWith('.toon')) {
    try {
      value = toonModule().decode(text, { indentSize: Math.max(indent, 1) })
    } catch (e) {
      if (e instanceof toonModule().ToonDecodeError) throw new CliError(toonDecodeMessage(e))
      throw e
    }
  } else {
    value = parseJson(text)
  }
  const formats = args.pretty ? ['toon', 'json', 'json-pretty'] : ['toon', 'json']
  const encoding = args.encoding ?? DEFAULT_ENCODING
  const r = llmModule().encodeForLlm(value, { encoding, formats, delimiter, indentSize: indent })
  const out = new Output(args.output)
  await out.write(r.text + '\n')
  await out.close()
  const rows = [['', 'tokens', 'bytes', '']]
  for (const [name, count] of Object.entries(r.candidates)) {
    const rendering = name === r.format ? r.text : renderingOf(value, name, indent)
    rows.push([name, String(count), String(Buffer.byteLength(rendering, 'utf8')), name === r.format ? 'chosen' : ''])
  }
  note(table(rows))
}

function renderingOf(value, name, indent) {
  const delimiters = { toon: ',', 'toon-tab': '\t', 'toon-pipe': '|' }
  if (name in delimiters) return toonModule().encode(value, { indentSize: indent, delimiter: delimiters[name] })
  return name === 'json-pretty' ? JSON.stringify(value, null, 2) : JSON.stringify(value)
}

/**
 * A fault of the native decoder (`failure` of ToonJsonStream: JSON text) as
 * the error the command reports.
 */
function decodeFailure(json) {
  const f = JSON.parse(json)
  if (f.code === 'TOON_INVALID_UTF8') return new CliError(utf8Message(f.offset))
  const message = f.message.replace(/ at line \d+(?:, column \d+)?$/, '')
  return new CliError(toonDecodeMessage({ line: f.line, column: f.column, source: f.source ?? undefined, message }))
}

async function decodeCommand(args, indent) {
  const toonSize = { bytes: 0, chars: 0 }
  const jsonSize = { bytes: 0, chars: 0 }
  const out = new Output(args.output)
  // Streamed: bytes in, JSON text out as the events come, from the resumable
  // decoder (ToonJsonStream, src/toon/stream.rs, as @toon-format/cli writes
  // it); memory stays bounded by the open structure and the longest line.
  // The text goes out in whole blocks of CHUNK bytes: a fault drops the
  // rest (so a document whose JSON before the fault is shorter writes none).
  const decoder = new (nativeModule().ToonJsonStream)(indent, args.strict)
  // --stats counts the tokens of the whole texts: they are kept.
  const inputs = args.stats ? [] : null
  const outputs = args.stats ? [] : null
  let pending = []
  let size = 0
  const write = async (buf) => {
    outputs?.push(buf)
    pending.push(buf)
    size += buf.length
    jsonSize.bytes += buf.length
    if (size < CHUNK) return
    const data = Buffer.concat(pending, size)
    const whole = size - (size % CHUNK)
    await out.write(data.subarray(0, whole))
    pending = [data.subarray(whole)]
    size -= whole
  }
  for await (const chunk of inputChunks(args.input)) {
    toonSize.bytes += chunk.length
    inputs?.push(chunk)
    await write(decoder.feed(chunk))
    if (decoder.failure !== null) break
  }
  if (decoder.failure === null) await write(decoder.finish())
  if (decoder.failure !== null) {
    out.abort()
    throw decodeFailure(decoder.failure)
  }
  for (const buf of pending) await out.write(buf)
  await out.write('\n')
  await out.close()
  toonSize.chars = decoder.inputChars
  jsonSize.chars = decoder.outputChars
  if (args.output !== null) note(`Decoded \`${label(args.input)}\` \u2192 \`${label(args.output)}\``)
  if (args.stats) {
    const encoding = args.encoding ?? DEFAULT_ENCODING
    jsonSize.tokens = countTokens(Buffer.concat(outputs).toString('utf8'), encoding)
    toonSize.tokens = countTokens(new TextDecoder('utf-8').decode(Buffer.concat(inputs)), encoding)
    note(formatStats(computeStats(jsonSize, toonSize)))
  }
}

// --- kado dump ------------------------------------------------------------------------

/**
 * Follows the frame boundaries of a Kado byte stream to tell, for each frame,
 * where it starts, whether its payload is compressed (the decoder's frames do
 * not say) and its exact timestamp (a u64; the decoder's is a Number).
 */
class FrameScanner {
  constructor() {
    this.position = 0
    this.next = 0
    this.head = []
    this.frames = []
  }

  feed(chunk) {
    const end = this.position + chunk.length
    for (;;) {
      const length = this.head.length >= HEADER_SIZE ? Buffer.from(this.head.slice(2, 6)).readUInt32LE(0) : -1
      const need = length === 0 ? HEADER_SIZE : HEADER_SIZE + 1
      if (this.head.length < need) {
        const at = this.next + this.head.length
        if (at >= end) break
        const i = at - this.position
        for (const b of chunk.subarray(i, i + need - this.head.length)) this.head.push(b)
        continue
      }
      const head = Buffer.from(this.head)
      this.frames.push({
        offset: this.next,
        compressed: length > 0 && head[HEADER_SIZE] === MAGIC_COMPRESSED,
        timestamp: head.readBigUInt64LE(6),
      })
      this.next += HEADER_SIZE + length
      this.head = []
    }
    this.position = end
  }
}

async function kadoDump(args) {
  const kado = kadoModule()
  const decoder = new kado.FrameDecoder()
  const scanner = new FrameScanner()
  const out = new Output(args.output)
  try {
    for await (const chunk of inputChunks(args.input)) {
      scanner.feed(chunk)
      for (const frame of decoder.feed(chunk)) {
        const { offset, compressed, timestamp } = scanner.frames.shift()
        const h = frame.header
        await out.write(
          `{"offset":${offset},"version":${h.version},"type":${h.type},"typeName":"${kado.MessageType[h.type]}",` +
            `"payloadLength":${h.payloadLength},"timestamp":${timestamp},"sequenceId":${h.sequenceId},` +
            `"compressed":${compressed},"payload":${JSON.stringify(frame.payload)}}\n`,
        )
      }
    }
    decoder.finish()
  } catch (e) {
    await out.closeAfterError()
    if (e instanceof kado.KadoError) throw new CliError(e.message)
    throw e
  }
  await out.close()
}

// --- tether hex / unhex ------------------------------------------------------------------

async function tetherHex(args) {
  const data = await readInput(args.input)
  const out = new Output(args.output)
  await out.write(tetherModule().toHex(data) + '\n')
  await out.close()
}

async function tetherUnhex(args) {
  const tether = tetherModule()
  const text = new TextDecoder().decode(await readInput(args.input)).replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '')
  let data
  try {
    data = tether.fromHex(text, { words: args.words })
  } catch (e) {
    if (e instanceof tether.TetherError) throw new CliError(e.message)
    throw e
  }
  const out = new Output(args.output)
  await out.write(data)
  await out.close()
}

// --- The command line -------------------------------------------------------------------

const COMMON_OPTIONS = {
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
}
const MAIN_OPTIONS = {
  ...COMMON_OPTIONS,
  encode: { type: 'boolean', short: 'e' },
  decode: { type: 'boolean', short: 'd' },
  delimiter: { type: 'string' },
  indent: { type: 'string' },
  strict: { type: 'boolean' },
  'no-strict': { type: 'boolean' },
  stats: { type: 'boolean' },
  encoding: { type: 'string' },
}
const TOKENS_OPTIONS = { help: COMMON_OPTIONS.help, version: COMMON_OPTIONS.version, encoding: { type: 'string' } }
const CHOOSE_OPTIONS = {
  ...COMMON_OPTIONS,
  delimiter: { type: 'string' },
  indent: { type: 'string' },
  pretty: { type: 'boolean' },
  encoding: { type: 'string' },
}
const SINGLE_COMMANDS = {
  tokens: [TOKENS_OPTIONS, tokensCommand],
  choose: [CHOOSE_OPTIONS, chooseCommand],
}
const UNHEX_OPTIONS = { ...COMMON_OPTIONS, words: { type: 'boolean' }, 'no-words': { type: 'boolean' } }

const COMMANDS = {
  'kado dump': [COMMON_OPTIONS, kadoDump],
  'tether hex': [COMMON_OPTIONS, tetherHex],
  'tether unhex': [UNHEX_OPTIONS, tetherUnhex],
}

/** parseArgs, with argparse's messages (polywire/cli.py) and --x/--no-x where the last wins. */
function parse(argv, options) {
  // argparse takes a negative number as an option's value (`--indent -1`); parseArgs refuses it.
  const args = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--') {
      args.push(...argv.slice(i))
      break
    }
    const long = /^--([\w-]+)$/.exec(argv[i])?.[1]
    const name = long ?? Object.keys(options).find((k) => argv[i] === `-${options[k].short}`)
    if (name && options[name]?.type === 'string' && /^-(\d+|\d*\.\d+)$/.test(argv[i + 1] ?? '')) {
      args.push(`--${name}=${argv[++i]}`)
    } else {
      args.push(argv[i])
    }
  }
  let parsed
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true, tokens: true })
  } catch (e) {
    const unknown = /^Unknown option '([^']+)'/.exec(e.message)
    if (unknown) throw new UsageError(`unrecognized arguments: ${unknown[1]}`)
    const missing = /^Option '(?:-\w, )?(--[\w-]+)(?: <value>)?' argument (?:missing|is ambiguous)/.exec(e.message)
    if (missing) {
      const short = options[missing[1].slice(2)].short
      throw new UsageError(`argument ${short ? `-${short}/` : ''}${missing[1]}: expected one argument`)
    }
    throw new UsageError(e.message.split('\n')[0])
  }
  const values = { ...parsed.values }
  for (const t of parsed.tokens) {
    if (t.kind === 'option' && t.name.startsWith('no-')) values[t.name.slice(3)] = false
    else if (t.kind === 'option' && `no-${t.name}` in options) values[t.name] = true
  }
  if (parsed.positionals.length > 1) throw new UsageError(`unrecognized arguments: ${parsed.positionals.slice(1).join(' ')}`)
  const orStdio = (v) => (v === undefined || v === '-' ? null : v)
  return { ...values, input: orStdio(parsed.positionals[0]), output: orStdio(values.output) }
}

function indentArg(value) {
  if (value === undefined) return 2
  if (!/^[0-9]+$/.test(value)) throw new UsageError(`Invalid indent value: ${value}`)
  return Number(value)
}

function delimiterArg(value, fallback) {
  if (value === undefined) return fallback
  if (Object.hasOwn(DELIMITERS, value)) return DELIMITERS[value]
  throw new UsageError(`Invalid delimiter ${JSON.stringify(value)}. Valid delimiters are: comma (,), tab (\\t), pipe (|)`)
}

function helpOrVersion(help, version) {
  if (help) process.stdout.write(HELP)
  else if (version) process.stdout.write(`polywire ${require('../package.json').version}\n`)
  return Boolean(help || version)
}

async function run(argv) {
  const beforeDashes = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv
  if (helpOrVersion(beforeDashes.includes('-h') || beforeDashes.includes('--help'), beforeDashes.includes('-v') || beforeDashes.includes('--version'))) return
  if (Object.hasOwn(SINGLE_COMMANDS, argv[0] ?? '')) {
    const [options, command] = SINGLE_COMMANDS[argv[0]]
    const args = parse(argv.slice(1), options)
    if (helpOrVersion(args.help, args.version)) return
    await command(args)
    return
  }
  if (argv[0] === 'kado' || argv[0] === 'tether') {
    const group = argv[0]
    const actions = Object.keys(COMMANDS).filter((k) => k.startsWith(group + ' ')).map((k) => k.split(' ')[1]).sort()
    const entry = argv.length > 1 ? COMMANDS[`${group} ${argv[1]}`] : undefined
    if (!entry) throw new UsageError(`${group}: expected ${actions.join(' or ')}, got ${argv.length > 1 ? `'${argv[1]}'` : 'nothing'}`)
    const args = parse(argv.slice(2), entry[0])
    if (helpOrVersion(args.help, args.version)) return
    if (args.words === undefined) args.words = true
    await entry[1](args)
    return
  }
  const args = parse(argv, MAIN_OPTIONS)
  if (helpOrVersion(args.help, args.version)) return
  if (args.strict === undefined) args.strict = true
  const indent = indentArg(args.indent)
  const delimiter = delimiterArg(args.delimiter, ',')
  const encode = args.encode || (!args.decode && !(args.input || '').endsWith('.toon'))
  if (encode) {
    if (indent > MAX_INDENT) throw new UsageError(`Invalid indent value: ${indent} (encoding takes 0 to ${MAX_INDENT})`)
    await encodeCommand(args, delimiter, indent)
  } else {
    if (indent < 1) throw new UsageError(`Invalid indent value: ${indent} (decoding takes at least 1)`)
    await decodeCommand(args, indent)
  }
}

/**
 * Run the `polywire` command with `argv` (default: the process's arguments);
 * resolves to the exit status: 0, 1 after an error (`polywire: <message>` on
 * stderr), 2 for a bad command line.
 */
async function main(argv = process.argv.slice(2)) {
  try {
    await run(argv)
    return 0
  } catch (e) {
    if (e instanceof UsageError) {
      note(`polywire: ${e.message}\nTry 'polywire --help'.`)
      return 2
    }
    if (e instanceof CliError) {
      note(`polywire: ${e.message}`)
      return 1
    }
    let PolywireError
    try {
      PolywireError = polywireError()
    } catch {
      PolywireError = null
    }
    if ((PolywireError && e instanceof PolywireError) || (e && typeof e.code === 'string' && e.code.startsWith('TOON_'))) {
      note(`polywire: ${e.message.replace(/^polywire: /, '')}`)
      return 1
    }
    throw e
  }
}

module.exports = { main }

if (require.main === module) {
  // The reader went away (`polywire big.json | head`): stop quietly.
  process.stdout.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(1)
    throw e
  })
  main().then(
    (status) => {
      process.exitCode = status
    },
    (e) => {
      note(e && e.stack ? e.stack : String(e))
      process.exitCode = 1
    },
  )
}
