'use strict'
// The `polywire` command of the package where the JavaScript command it
// replaced went wrong (tests-py/test_cli_safety.py checks the same of both
// installs): an output that is the input, a failure that destroyed the output
// file, write errors and closed standard streams, signals, a reader that goes
// away, --encoding, lone surrogates and directories, a decode error on a very
// long line, each command's help and a mistyped command, and --verbose.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawn, spawnSync } = require('node:child_process')
const { once } = require('node:events')

const PKG = path.dirname(require.resolve('polywire/package.json'))
const CLI = path.join(PKG, require('polywire/package.json').bin.polywire)
const POSIX = process.platform !== 'win32'

function cli(args, { input = '', cwd } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { input, cwd, timeout: 120000, maxBuffer: 1 << 26 })
  return { status: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') }
}

const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'polywire-safety-'))
test.after(() => fs.rmSync(ROOT, { recursive: true, force: true }))
const scratch = () => fs.mkdtempSync(path.join(ROOT, 'd-'))

const bigToon = (lines = 20000) => {
  let s = `rows[${lines}]{id,name}:\n`
  for (let i = 0; i < lines; i++) s += `  ${i},user${i}\n`
  return s
}
// The first 60 KB of a longer document (it fits in a pipe): its JSON is over
// 64 KiB, and the decoder then waits for the rest.
const unfinishedToon = () => {
  const text = Buffer.from(bigToon(50000)).subarray(0, 60000)
  return text.subarray(0, text.lastIndexOf(10) + 1)
}
const listing = (dir) => fs.readdirSync(dir).sort()

test('an output that is the input is refused', () => {
  const dir = scratch()
  const text = bigToon()
  fs.writeFileSync(path.join(dir, 'big.toon'), text)
  const outs = ['big.toon']
  if (POSIX) {
    fs.symlinkSync('big.toon', path.join(dir, 'alias.toon'))
    outs.push('alias.toon')
  }
  for (const out of outs) {
    const r = cli(['big.toon', '-o', out], { cwd: dir })
    assert.deepEqual(r, {
      status: 1,
      stdout: '',
      stderr: `polywire: ${out}: is the input file (write the output to another file, then move it over the input)\n`,
    })
    assert.equal(fs.readFileSync(path.join(dir, 'big.toon'), 'utf8'), text)
  }
})

test('a failing decode leaves the output file as it was', () => {
  const dir = scratch()
  const out = path.join(dir, 'out.json')
  fs.writeFileSync(out, 'precious\n')
  if (POSIX) fs.chmodSync(out, 0o640)
  const r = cli(['-d', '-o', 'out.json'], { input: bigToon() + 'end[2]: 1\n', cwd: dir })
  assert.equal(r.status, 1)
  assert.match(r.stderr, /^polywire: Failed to decode TOON at line 20002/)
  assert.equal(fs.readFileSync(out, 'utf8'), 'precious\n')
  assert.deepEqual(listing(dir), ['out.json'])
  const ok = cli(['-d', '-o', 'out.json'], { input: bigToon(), cwd: dir })
  assert.deepEqual(ok, { status: 0, stdout: '', stderr: 'Decoded `stdin` \u2192 `out.json`\n' })
  assert.deepEqual(JSON.parse(fs.readFileSync(out, 'utf8')).rows.at(-1), { id: 19999, name: 'user19999' })
  if (POSIX) assert.equal(fs.statSync(out).mode & 0o777, 0o640)
  assert.deepEqual(listing(dir), ['out.json'])
})

test('write errors are messages', { skip: !fs.existsSync('/dev/full') && 'needs /dev/full' }, () => {
  const dir = scratch()
  fs.writeFileSync(path.join(dir, 'data.json'), '{"a": 1}')
  assert.deepEqual(cli(['data.json', '-o', '/dev/full'], { cwd: dir }), { status: 1, stdout: '', stderr: 'polywire: /dev/full: no space left on device\n' })
  const full = fs.openSync('/dev/full', 'w')
  const r = spawnSync(process.execPath, [CLI, 'data.json'], { cwd: dir, stdio: ['pipe', full, 'pipe'] })
  fs.closeSync(full)
  assert.deepEqual([r.status, r.stderr.toString()], [1, 'polywire: stdout: no space left on device\n'])
})

test('closed standard streams are messages', { skip: !POSIX && 'POSIX shell' }, () => {
  const dir = scratch()
  fs.writeFileSync(path.join(dir, 'data.json'), '{"a": 1}')
  const closed = (redirect, ...args) => {
    const r = spawnSync('sh', ['-c', `exec "$@" ${redirect}`, 'sh', process.execPath, CLI, ...args], { cwd: dir })
    return [r.status, r.stderr.toString()]
  }
  assert.deepEqual(closed('>&-', 'data.json'), [1, 'polywire: standard output is closed\n'])
  assert.deepEqual(closed('<&-', '-d'), [1, 'polywire: standard input is closed\n'])
  assert.deepEqual(closed('<&- >&-', 'data.json', '-o', 'out.toon'), [0, 'Encoded `data.json` \u2192 `out.toon`\n'])
  assert.equal(fs.readFileSync(path.join(dir, 'out.toon'), 'utf8'), 'a: 1\n')
})

for (const [sig, number] of [['SIGINT', 2], ['SIGTERM', 15]]) {
  test(`${sig} stops a decode quietly`, { skip: !POSIX && 'signals' }, async () => {
    const dir = scratch()
    const child = spawn(process.execPath, [CLI, '-d'], { cwd: dir })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.stdin.write(unfinishedToon())
    await once(child.stdout, 'readable') // decoding: the first block is out
    const closed = once(child, 'close')
    child.kill(sig)
    const [code] = await closed
    assert.deepEqual([code, stderr], [128 + number, ''])
    // Writing a file: the temporary file goes, the file stays.
    fs.writeFileSync(path.join(dir, 'out.json'), 'precious\n')
    const writer = spawn(process.execPath, [CLI, '-d', '-o', 'out.json'], { cwd: dir, stdio: ['pipe', 'ignore', 'pipe'] })
    let err = ''
    writer.stderr.on('data', (d) => (err += d))
    writer.stdin.write(unfinishedToon())
    const deadline = Date.now() + 30000
    while (listing(dir).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.equal(listing(dir).length, 2)
    const done = once(writer, 'close')
    writer.kill(sig)
    assert.deepEqual([(await done)[0], err], [128 + number, ''])
    assert.deepEqual(listing(dir), ['out.json'])
    assert.equal(fs.readFileSync(path.join(dir, 'out.json'), 'utf8'), 'precious\n')
  })
}

test('a reader that goes away ends the command by SIGPIPE, quietly', { skip: !POSIX && 'SIGPIPE' }, async () => {
  const dir = scratch()
  fs.writeFileSync(path.join(dir, 'big.json'), JSON.stringify(Array.from({ length: 100000 }, (_, i) => ({ id: i, name: `user${i}` }))))
  fs.writeFileSync(path.join(dir, 'big.toon'), bigToon(100000))
  for (const args of [['big.json'], ['-d', 'big.toon']]) {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    await once(child.stdout, 'readable')
    assert.ok(child.stdout.read(10)) // head -c 10
    child.stdout.destroy()
    const [code, signal] = await once(child, 'close')
    assert.deepEqual([code, signal, stderr], [null, 'SIGPIPE', ''], args.join(' '))
  }
})

test('--encoding names are checked, and a tokenizer.json path works', () => {
  const dir = scratch()
  for (const name of ['', 'gpt4']) {
    const message = `polywire: expected o200k_base, cl100k_base or the path of a tokenizer.json, got ${JSON.stringify(name)}\n`
    for (const args of [['tokens', '--encoding', name], ['--encoding', name], ['choose', '--encoding', name]]) {
      assert.deepEqual(cli(args, { input: '{}', cwd: dir }), { status: 1, stdout: '', stderr: message }, args.join(' '))
    }
  }
  fs.writeFileSync(
    path.join(dir, 'tok.json'),
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [{ id: 0, content: '[UNK]', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
      normalizer: { type: 'Lowercase' },
      pre_tokenizer: { type: 'Whitespace' },
      post_processor: null,
      decoder: null,
      model: { type: 'WordLevel', vocab: { '[UNK]': 0, hello: 1, world: 2, ',': 3, '!': 4 }, unk_token: '[UNK]' },
    }),
  )
  assert.deepEqual(cli(['tokens', '--encoding', 'tok.json'], { input: 'Hello, world! Bye', cwd: dir }), { status: 0, stdout: '5\n', stderr: '' })
})

test('one message for a lone surrogate, and for a directory', () => {
  assert.deepEqual(cli([], { input: '{\n  "a": "x\\udc00y"}' }), {
    status: 1,
    stdout: '',
    stderr:
      "polywire: Failed to parse JSON at line 2, column 10: Unpaired surrogate '\\udc00' in string (text holds whole characters only: a high surrogate escape followed by a low one)\n",
  })
  if (POSIX) {
    const dir = scratch()
    fs.mkdirSync(path.join(dir, 'd'))
    assert.deepEqual(cli(['d'], { cwd: dir }), { status: 1, stdout: '', stderr: 'polywire: d: is a directory\n' })
  }
})

test('a decode error on a very long line shows the line around the error', () => {
  const r = cli(['-d'], { input: 'a[2]: ' + 'x'.repeat(5000000) + '\n' })
  assert.equal(r.status, 1)
  assert.ok(r.stderr.length < 400, `${r.stderr.length} characters`)
  const lines = r.stderr.split('\n')
  assert.equal(lines[0], 'polywire: Failed to decode TOON at line 1, column 1: Expected 2 inline-form values, but got 1')
  assert.equal(lines[2], '  1 | a[2]: ' + 'x'.repeat(94) + '\u2026')
  assert.equal(lines[3], '      ^')
})

test("each command's --help is its own; a mistyped command gets a hint", () => {
  const main = cli(['--help']).stdout
  assert.ok(main.includes('write ./tokens') && main.includes('a key given twice is written twice') && main.includes('--verbose'))
  for (const args of [['tokens'], ['choose'], ['kado', 'dump'], ['tether', 'hex'], ['tether', 'unhex']]) {
    const r = cli([...args, '--help'])
    assert.equal(r.status, 0)
    assert.ok(r.stdout.startsWith(`usage: polywire ${args.join(' ')} `) && r.stdout !== main, args.join(' '))
  }
  const dir = scratch()
  fs.writeFileSync(path.join(dir, 'x.json'), '{}')
  assert.deepEqual(cli(['chose', 'x.json'], { cwd: dir }), {
    status: 2,
    stdout: '',
    stderr: "polywire: unknown command 'chose'; did you mean 'choose'?\nTry 'polywire --help'.\n",
  })
  fs.writeFileSync(path.join(dir, 'chose'), '{"a": 1}')
  assert.deepEqual(cli(['chose'], { cwd: dir }), { status: 0, stdout: 'a: 1\n', stderr: '' })
})

test('--verbose prints the cause', () => {
  const r = cli(['-d', '--verbose'], { input: 'a:\n\tb: 1\n' })
  assert.equal(r.status, 1)
  assert.match(r.stderr, /^polywire: Failed to decode TOON at line 2, column 1: /)
  assert.match(r.stderr, /\n\nCaused by: toon error TOON_/)
  assert.doesNotMatch(cli(['-d'], { input: 'a:\n\tb: 1\n' }).stderr, /Caused by/)
})
