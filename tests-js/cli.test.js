'use strict'
// The `polywire` command of the package (its `bin`, bindings-node/lib/cli.js), run
// as a subprocess: JSON <-> TOON as @toon-format/cli converts them, kado dump,
// tether hex/unhex, errors and exit statuses. tests-py/test_cli.py checks that
// the Python command writes the same bytes.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawnSync } = require('node:child_process')

const { encode } = require('polywire/toon')
const kado = require('polywire/kado')
const tether = require('polywire/tether')

// The package under test: the repository, or the installed tarball.
const PKG = path.dirname(require.resolve('polywire/package.json'))
const manifest = require('polywire/package.json')
const CLI = path.join(PKG, manifest.bin.polywire)

const DATA = { users: [{ id: 1, name: 'Ada' }, { id: 2, name: 'Bob' }], tags: ['a', 'b'], n: null }
const DATA_JSON = JSON.stringify(DATA)
const DATA_TOON = 'users[2]{id,name}:\n  1,Ada\n  2,Bob\ntags[2]: a,b\nn: null'
const DATA_PRETTY = JSON.stringify(DATA, null, 2)

/** Run the command; `input` (string or bytes) on stdin. */
function cli(args, { input = '', cwd, binary = false } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { input, cwd, timeout: 60000 })
  return { status: r.status, stdout: binary ? r.stdout : r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'polywire-cli-'))
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }))
fs.writeFileSync(path.join(tmp, 'data.json'), DATA_JSON)
fs.writeFileSync(path.join(tmp, 'data.toon'), DATA_TOON + '\n')

test('the package declares the command', () => {
  assert.equal(manifest.bin.polywire, 'bindings-node/lib/cli.js')
  assert.match(fs.readFileSync(CLI, 'utf8'), /^#!\/usr\/bin\/env node\n/)
})

test('encodes a file to stdout and decodes one', () => {
  assert.deepEqual(cli([path.join(tmp, 'data.json')]), { status: 0, stdout: DATA_TOON + '\n', stderr: '' })
  assert.deepEqual(cli([path.join(tmp, 'data.toon')]), { status: 0, stdout: DATA_PRETTY + '\n', stderr: '' })
})

test('reads stdin with - and without an argument', () => {
  assert.deepEqual(cli(['-'], { input: DATA_JSON }), { status: 0, stdout: DATA_TOON + '\n', stderr: '' })
  assert.deepEqual(cli([], { input: DATA_JSON }), { status: 0, stdout: DATA_TOON + '\n', stderr: '' })
  assert.deepEqual(cli(['-d'], { input: DATA_TOON }), { status: 0, stdout: DATA_PRETTY + '\n', stderr: '' })
  assert.deepEqual(cli(['--decode', '-'], { input: DATA_TOON }), { status: 0, stdout: DATA_PRETTY + '\n', stderr: '' })
})

test('writes -o files', () => {
  let r = cli(['data.json', '-o', 'out.toon'], { cwd: tmp })
  assert.deepEqual(r, { status: 0, stdout: '', stderr: 'Encoded `data.json` \u2192 `out.toon`\n' })
  assert.equal(fs.readFileSync(path.join(tmp, 'out.toon'), 'utf8'), DATA_TOON + '\n')
  r = cli(['--output', 'out.json', '-d'], { input: DATA_TOON, cwd: tmp })
  assert.deepEqual(r, { status: 0, stdout: '', stderr: 'Decoded `stdin` \u2192 `out.json`\n' })
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(tmp, 'out.json'), 'utf8')), DATA)
  assert.deepEqual(cli(['data.json', '-o', '-'], { cwd: tmp }), { status: 0, stdout: DATA_TOON + '\n', stderr: '' })
})

test('the mode comes from the extension unless forced', () => {
  fs.writeFileSync(path.join(tmp, 'json.txt'), DATA_JSON)
  fs.writeFileSync(path.join(tmp, 'toon.txt'), DATA_TOON)
  fs.writeFileSync(path.join(tmp, 'json.toon'), DATA_JSON)
  fs.writeFileSync(path.join(tmp, 'x.toon'), '{"a": [1]}')
  assert.equal(cli(['json.txt'], { cwd: tmp }).stdout, DATA_TOON + '\n')
  assert.equal(cli(['-d', 'toon.txt'], { cwd: tmp }).stdout, DATA_PRETTY + '\n')
  assert.equal(cli(['json.toon', '-e'], { cwd: tmp }).stdout, DATA_TOON + '\n')
  assert.equal(cli(['x.toon'], { cwd: tmp }).stdout, '{\n  "{\\"a\\"": "[1]}"\n}\n')
})

test('every delimiter spelling', () => {
  for (const [spelling, char] of [[',', ','], ['\t', '\t'], ['|', '|'], ['\\t', '\t'], ['tab', '\t'], ['pipe', '|'], ['comma', ',']]) {
    const r = cli(['--delimiter', spelling], { input: DATA_JSON })
    assert.deepEqual(r, { status: 0, stdout: encode(DATA, { delimiter: char }) + '\n', stderr: '' }, spelling)
  }
  const r = cli(['--delimiter', ';'], { input: DATA_JSON })
  assert.equal(r.status, 2)
  assert.equal(r.stderr, 'polywire: Invalid delimiter ";". Valid delimiters are: comma (,), tab (\\t), pipe (|)\nTry \'polywire --help\'.\n')
})

test('--indent for TOON and for the JSON written', () => {
  const four = cli(['--indent', '4'], { input: DATA_JSON })
  assert.equal(four.stdout, encode(DATA, { indentSize: 4 }) + '\n')
  assert.equal(cli(['-d', '--indent', '4'], { input: four.stdout }).stdout, JSON.stringify(DATA, null, 4) + '\n')
  assert.equal(cli(['-d', '--indent=3'], { input: encode(DATA, { indentSize: 3 }) }).stdout, JSON.stringify(DATA, null, 3) + '\n')
  assert.equal(cli(['--indent', 'x'], { input: DATA_JSON }).status, 2)
  assert.equal(cli(['-d', '--indent', '0'], { input: DATA_TOON }).status, 2)
})

test('--no-strict accepts what strict mode refuses', () => {
  const r = cli(['-d'], { input: 'a[3]: 1,2\n' })
  assert.equal(r.status, 1)
  assert.equal(r.stdout, '')
  assert.equal(
    r.stderr,
    'polywire: Failed to decode TOON at line 1, column 1: Expected 3 inline-form values, but got 2\n\n  1 | a[3]: 1,2\n      ^\n',
  )
  assert.deepEqual(cli(['-d', '--no-strict'], { input: 'a[3]: 1,2\n' }), { status: 0, stdout: '{\n  "a": [\n    1,\n    2\n  ]\n}\n', stderr: '' })
  assert.equal(cli(['-d', '--no-strict'], { input: 'a: 1\na: 2\n' }).stdout, '{\n  "a": 1,\n  "a": 2\n}\n')
  assert.equal(cli(['-d', '--no-strict', '--strict'], { input: 'a[3]: 1,2\n' }).status, 1)
})

test('--stats prints tokens, sizes and the saving to stderr', () => {
  const { countTokens } = require('polywire/llm')
  const r = cli(['--stats'], { input: DATA_JSON })
  assert.equal(r.stdout, DATA_TOON + '\n')
  const j = DATA_JSON.length
  const t = DATA_TOON.length
  const [jt, tt] = [countTokens(DATA_JSON), countTokens(DATA_TOON)]
  const pct = (a, b) => `${(((a - b) / a) * 100).toFixed(1)}%`
  assert.deepEqual(
    r.stderr.split('\n').map((line) => line.trim().split(/\s+/)),
    [
      ['tokens', 'bytes', 'chars'],
      ['JSON', String(jt), String(j), String(j)],
      ['TOON', String(tt), String(t), String(t)],
      ['saved', String(jt - tt), String(j - t), String(j - t)],
      ['saved', '%', pct(jt, tt), pct(j, t), pct(j, t)],
      [''],
    ],
  )
  const c = cli(['--stats', '--encoding', 'cl100k_base'], { input: DATA_JSON })
  assert.equal(c.stderr.split('\n')[1].trim().split(/\s+/)[1], String(countTokens(DATA_JSON, { encoding: 'cl100k_base' })))
  const d = cli(['-d', '--stats'], { input: 'k: é\n' })
  assert.equal(d.stdout, '{\n  "k": "é"\n}\n')
  const rows = d.stderr.split('\n').map((line) => line.trim().split(/\s+/))
  assert.deepEqual(rows[1], ['JSON', String(countTokens(d.stdout.slice(0, -1))), String(Buffer.byteLength(d.stdout) - 1), String(d.stdout.length - 1)])
  assert.deepEqual(rows[2], ['TOON', String(countTokens('k: é\n')), '6', '5'])
})

test('tokens and choose', () => {
  const llm = require('polywire/llm')
  const text = DATA_JSON + '\n😀 <|endoftext|>'
  for (const extra of [[], ['--encoding', 'cl100k_base']]) {
    const r = cli(['tokens', ...extra], { input: text })
    assert.deepEqual(r, { status: 0, stdout: `${llm.countTokens(text, { encoding: extra[1] })}\n`, stderr: '' })
  }
  const value = JSON.parse(DATA_JSON)
  const r = cli(['choose', '--pretty'], { input: DATA_JSON })
  const want = llm.encodeForLlm(value, { formats: ['toon', 'json', 'json-pretty'] })
  assert.equal(r.stdout, want.text + '\n')
  const rows = r.stderr.trimEnd().split('\n').map((line) => line.trim().split(/\s+/))
  assert.deepEqual(rows[0], ['tokens', 'bytes'])
  assert.deepEqual(rows.slice(1).map((row) => row.slice(0, 2)), Object.entries(want.candidates).map(([n, c]) => [n, String(c)]))
  assert.deepEqual(rows.slice(1).filter((row) => row.at(-1) === 'chosen').map((row) => row[0]), [want.format])
  const p = cli(['choose', '--delimiter', '|', '--encoding', 'cl100k_base'], { input: DATA_JSON })
  assert.deepEqual(p.stderr.trimEnd().split('\n').slice(1).map((line) => line.split(/\s+/)[0]), ['toon-pipe', 'json'])
  assert.equal(cli(['tokens', '--encoding', 'nope'], { input: 'x' }).status, 1)
})

test('bad TOON exits 1 with its line', () => {
  const r = cli(['-d'], { input: 'a:\n   b: 1\n' })
  assert.equal(r.status, 1)
  assert.match(r.stderr, /^polywire: Failed to decode TOON at line 2, column 4: Indentation must be exact multiple of 2/)
  const u = cli(['-d'], { input: Buffer.from('a: "\xff"\n', 'latin1') })
  assert.deepEqual(u, { status: 1, stdout: '', stderr: 'polywire: Input is not valid UTF-8 at byte 4. Pass --no-strict to replace ill-formed bytes\n' })
})

test('bad JSON exits 1 with its position', () => {
  for (const [text, where] of [
    ['{"a": [1,2,}', "line 1, column 12: Unexpected token '}'"],
    ['{\n  "a": 1\n  "b": 2\n}', "line 3, column 3: Expected ',' or '}' after property value"],
    ['', 'line 1, column 1: Unexpected end of JSON input'],
    ['[1, NaN]', "line 1, column 5: Unexpected token 'N'"],
    ['["😀", x]', "line 1, column 7: Unexpected token 'x'"],
  ]) {
    assert.deepEqual(cli([], { input: text }), { status: 1, stdout: '', stderr: `polywire: Failed to parse JSON at ${where}\n` }, text)
  }
})

function capture() {
  const enc = new kado.TOONEncoder()
  const frames = [
    enc.encode(kado.MessageType.TOOL_CALL, { toolName: 'read', args: { path: 'a.txt', 2: 1 } }, 1, 1700000000000),
    enc.encode(kado.MessageType.TOOL_RESULT, { text: 'x'.repeat(4000) }, 2, 1700000000001),
    enc.encode(kado.MessageType.HEARTBEAT, null, 3, 2n ** 64n - 1n),
  ]
  assert.ok(kado.isCompressed(frames[1].subarray(18)) && !kado.isCompressed(frames[0].subarray(18)))
  return frames
}

test('kado dump: one JSON line per frame, from a file or stdin', () => {
  const frames = capture()
  const file = path.join(tmp, 'capture.kado')
  fs.writeFileSync(file, Buffer.concat(frames))
  const r = cli(['kado', 'dump', file])
  assert.equal(r.status, 0, r.stderr)
  const dec = new kado.TOONDecoder()
  let offset = 0
  const expected = frames.map((f) => {
    const { header: h, payload } = dec.decode(f)
    const line = {
      offset,
      version: 1,
      type: h.type,
      typeName: kado.MessageType[h.type],
      payloadLength: h.payloadLength,
      timestamp: h.timestamp,
      sequenceId: h.sequenceId,
      compressed: kado.isCompressed(f.subarray(18)),
      payload,
    }
    offset += f.length
    return line
  })
  assert.deepEqual(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l)), expected)
  assert.ok(r.stdout.includes('"timestamp":18446744073709551615'), 'the exact u64 timestamp')
  assert.deepEqual(cli(['kado', 'dump', '-'], { input: Buffer.concat(frames) }), r)
  assert.deepEqual(cli(['kado', 'dump'], { input: Buffer.concat(frames) }), r)
})

test('kado dump: the frames before a fault, then the error', async () => {
  const stream = Buffer.concat(capture())
  const r = cli(['kado', 'dump'], { input: stream.subarray(0, -3) })
  assert.equal(r.status, 1)
  assert.deepEqual(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).sequenceId), [1, 2])
  assert.match(r.stderr, /^polywire: .* at byte \d+\n$/)
  const t = cli(['kado', 'dump'], { input: Buffer.concat([Buffer.from([1, 9]), Buffer.alloc(16)]) })
  assert.deepEqual(t, { status: 1, stdout: '', stderr: 'polywire: unknown message type 9 (expected 1..=8, INSTRUCTION to CONTEXT_RESPONSE) at byte 1\n' })
  // Fed in small pieces (a live stream): the same lines.
  const { spawn } = require('node:child_process')
  const child = spawn(process.execPath, [CLI, 'kado', 'dump'])
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  for (let i = 0; i < stream.length; i += 7) {
    child.stdin.write(stream.subarray(i, i + 7))
    await new Promise((resolve) => setImmediate(resolve))
  }
  child.stdin.end()
  const [code] = await require('node:events').once(child, 'close')
  assert.equal(code, 0)
  assert.equal(out, cli(['kado', 'dump'], { input: stream }).stdout)
})

test('tether hex and unhex round trip', () => {
  const send = tether.encodeMessageSend(5, 'printString', [1, 'é'], { uuid: '00000000-0000-0000-0000-000000000001' })
  for (const [data, flags] of [[send, ['--no-words']], [tether.encode([1, 2, null]), []]]) {
    const hex = cli(['tether', 'hex'], { input: data })
    assert.deepEqual(hex, { status: 0, stdout: tether.toHex(data) + '\n', stderr: '' })
    const back = cli(['tether', 'unhex', '-', ...flags], { input: hex.stdout, binary: true })
    assert.deepEqual(back, { status: 0, stdout: Buffer.from(data), stderr: '' })
  }
  assert.equal(cli(['tether', 'unhex'], { input: tether.toHex(send) }).status, 1) // words by default
  const bad = cli(['tether', 'unhex'], { input: 'abcd' })
  assert.equal(bad.status, 1)
  assert.match(bad.stderr, /^polywire: 4 hex characters is not a multiple of 8.* at byte 0\n$/)
})

test('--help lists every option and command; --version is the package version', () => {
  const r = cli(['--help'])
  assert.equal(r.status, 0)
  for (const item of ['-o, --output', '-e, --encode', '-d, --decode', '--delimiter', '--indent', '--strict', '--no-strict',
    '--stats', '-h, --help', '-v, --version', 'kado dump', 'tether hex', 'tether unhex', '--no-words']) {
    assert.ok(r.stdout.includes(item), item)
  }
  assert.equal(cli(['-h']).stdout, r.stdout)
  // Each command's --help is its own (it was the global help).
  assert.match(cli(['kado', 'dump', '--help']).stdout, /^usage: polywire kado dump/)
  assert.deepEqual(cli(['--version']), { status: 0, stdout: `polywire ${manifest.version}\n`, stderr: '' })
  assert.equal(cli(['-v']).stdout, `polywire ${manifest.version}\n`)
})

test('usage errors exit 2', () => {
  for (const [args, message] of [
    [['--bogus'], 'unrecognized arguments: --bogus'],
    [['a.json', 'b.json'], 'unrecognized arguments: b.json'],
    [['--indent'], 'argument --indent: expected one argument'],
    [['kado'], 'kado: expected dump, got nothing'],
    [['tether', 'dump'], "tether: expected hex or unhex, got 'dump'"],
  ]) {
    assert.deepEqual(cli(args), { status: 2, stdout: '', stderr: `polywire: ${message}\nTry 'polywire --help'.\n` }, args.join(' '))
  }
  assert.deepEqual(cli(['nope.json'], { cwd: tmp }), { status: 1, stdout: '', stderr: 'polywire: nope.json: no such file or directory\n' })
})
