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
const polywireError = () => require('./errors.js').PolywireError

const HELP = `\
usage: polywire [INPUT|-] [-o OUT] [-e|-d] [--delimiter D] [--indent N] [--no-strict] [--stats]
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
  --stats               print the JSON and TOON sizes (bytes, characters) and the saving to stderr
  -h, --help            print this help and exit
  -v, --version         print the version and exit

commands:
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
// The measures --stats prints, in order (a later change adds token counts here).
const STATS_MEASURES = ['bytes', 'chars']

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

/** Index of the first byte of the first ill-formed UTF-8 sequence in `buf`, or -1. */
function utf8ErrorIndex(buf) {
  let i = 0
  while (i < buf.length) {
    const b = buf[i]
    let need
    let lo = 0x80
    let hi = 0xbf
    if (b < 0x80) {
      i++
      continue
    } else if (b >= 0xc2 && b <= 0xdf) need = 1
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2
      if (b === 0xe0) lo = 0xa0
      if (b === 0xed) hi = 0x9f
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3
      if (b === 0xf0) lo = 0x90
      if (b === 0xf4) hi = 0x8f
    } else return i
    for (let k = 1; k <= need; k++) {
      const c = buf[i + k]
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i
    }
    i += need + 1
  }
  return -1
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

function size(text, bytes) {
  return { bytes: bytes === undefined ? Buffer.byteLength(text, 'utf8') : bytes, chars: codePoints(text) }
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
  const saved = {}
  const savedPercent = {}
  for (const m of STATS_MEASURES) {
    saved[m] = jsonSize[m] - toonSize[m]
    savedPercent[m] = percent(saved[m], jsonSize[m])
  }
  return { json: { ...jsonSize }, toon: { ...toonSize }, saved, savedPercent }
}

/** The --stats record as a table: one column per measure, one row per line. */
function formatStats(record) {
  const rows = [['', ...STATS_MEASURES]]
  for (const [name, key] of [['JSON', 'json'], ['TOON', 'toon'], ['saved', 'saved'], ['saved %', 'savedPercent']]) {
    rows.push([name, ...STATS_MEASURES.map((m) => String(record[key][m]))])
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n')
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
  let first = true
  try {
    // Line by line (encodeLines): the TOON text is never held whole.
    for (const line of toonModule().encodeLines(value, { indentSize: indent, delimiter })) {
      const piece = first ? line : '\n' + line
      first = false
      if (args.stats) {
        toonSize.bytes += Buffer.byteLength(piece, 'utf8')
        toonSize.chars += codePoints(piece)
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
  if (args.stats) note(formatStats(computeStats(size(text, raw.length), toonSize)))
}

async function* linesOf(chunks, strict, counts) {
  const decoder = new TextDecoder('utf-8', { fatal: strict })
  let tail = Buffer.alloc(0) // the last bytes read, to locate an ill-formed sequence
  let consumed = 0
  let buffer = ''
  const decode = (chunk) => {
    try {
      return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true })
    } catch {
      // Ill-formed: the sequence starts in this chunk or in the (at most 3) bytes before it.
      let start = 0
      while (start < tail.length && (tail[start] & 0xc0) === 0x80) start++
      const bytes = Buffer.concat([tail.subarray(start), chunk || Buffer.alloc(0)])
      const index = utf8ErrorIndex(bytes)
      throw new CliError(utf8Message(consumed - tail.length + start + Math.max(index, 0)))
    }
  }
  for await (const chunk of chunks) {
    counts.bytes += chunk.length
    const text = decode(chunk)
    counts.chars += codePoints(text)
    consumed += chunk.length
    tail = Buffer.concat([tail, chunk]).subarray(-3)
    buffer += text
    const lines = buffer.split('\n')
    buffer = lines.pop()
    yield* lines
  }
  const rest = decode(undefined)
  counts.chars += codePoints(rest)
  buffer += rest
  if (buffer.length > 0) yield buffer
}

/** JSON text from the events of decodeStream, as @toon-format/cli writes it. */
async function* jsonFromEvents(events, indent) {
  const stack = []
  const newline = (depth) => (indent > 0 ? '\n' + ' '.repeat(depth * indent) : '')
  const prefix = (parent) => (parent && parent.type === 'array' ? (parent.needsComma ? ',' : '') + newline(stack.length) : '')
  for await (const event of events) {
    const parent = stack[stack.length - 1]
    switch (event.type) {
      case 'startObject':
      case 'startArray': {
        const type = event.type === 'startObject' ? 'object' : 'array'
        yield prefix(parent) + (type === 'object' ? '{' : '[')
        stack.push({ type, needsComma: false })
        break
      }
      case 'endObject':
      case 'endArray': {
        const context = stack.pop()
        yield (context.needsComma ? newline(stack.length) : '') + (context.type === 'object' ? '}' : ']')
        if (stack.length > 0) stack[stack.length - 1].needsComma = true
        break
      }
      case 'key':
        yield (parent.needsComma ? ',' : '') + newline(stack.length) + JSON.stringify(event.key) + (indent > 0 ? ': ' : ':')
        parent.needsComma = true
        break
      case 'primitive':
        yield prefix(parent) + JSON.stringify(event.value)
        if (parent) parent.needsComma = true
        break
    }
  }
}

async function decodeCommand(args, indent) {
  const toonSize = { bytes: 0, chars: 0 }
  const jsonSize = { bytes: 0, chars: 0 }
  const out = new Output(args.output)
  // Streamed: lines in, events (decodeStream) out as JSON text; memory stays bounded.
  const lines = linesOf(inputChunks(args.input), args.strict, toonSize)
  const events = toonModule().decodeStream(lines, { indentSize: indent, strict: args.strict })
  try {
    for await (const piece of jsonFromEvents(events, indent)) {
      if (args.stats) {
        jsonSize.bytes += Buffer.byteLength(piece, 'utf8')
        jsonSize.chars += codePoints(piece)
      }
      await out.write(piece)
    }
  } catch (e) {
    out.abort()
    if (e instanceof toonModule().ToonDecodeError) throw new CliError(toonDecodeMessage(e))
    throw e
  }
  await out.write('\n')
  await out.close()
  if (args.output !== null) note(`Decoded \`${label(args.input)}\` \u2192 \`${label(args.output)}\``)
  if (args.stats) note(formatStats(computeStats(jsonSize, toonSize)))
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

function helpOrVersion(help, version) {
  if (help) process.stdout.write(HELP)
  else if (version) process.stdout.write(`polywire ${require('../package.json').version}\n`)
  return Boolean(help || version)
}

async function run(argv) {
  const beforeDashes = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv
  if (helpOrVersion(beforeDashes.includes('-h') || beforeDashes.includes('--help'), beforeDashes.includes('-v') || beforeDashes.includes('--version'))) return
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
  let indent = 2
  if (args.indent !== undefined) {
    if (!/^[0-9]+$/.test(args.indent)) throw new UsageError(`Invalid indent value: ${args.indent}`)
    indent = Number(args.indent)
  }
  const delimiter = args.delimiter === undefined ? ',' : Object.hasOwn(DELIMITERS, args.delimiter) ? DELIMITERS[args.delimiter] : undefined
  if (delimiter === undefined) {
    throw new UsageError(`Invalid delimiter ${JSON.stringify(args.delimiter)}. Valid delimiters are: comma (,), tab (\\t), pipe (|)`)
  }
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
