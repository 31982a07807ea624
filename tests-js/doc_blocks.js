'use strict'
// The JavaScript blocks of README.md and docs/*.md, and the runner that
// checks them: the twin of tests-py/doc_blocks.py (which documents the
// fences and the `<!-- check: ... -->` markers; the two must agree).
//
// Each ```js block (except those marked run-by=, which the named test runs
// against a peer) is:
// - run with node in a scratch project where `polywire` resolves to the
//   package under test: as an ES module when it starts with `// NAME.mjs`
//   (a user pastes it into a .mjs file), else as CommonJS; an `output` block
//   after it is its standard output;
// - type-checked as a user's JavaScript with `tsc --strict` (checkJs, module
//   nodenext), so that a union the code does not narrow, or a possibly null
//   result used as an object, fails here as it would in a user's editor.
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawn, spawnSync } = require('node:child_process')

const MARKER = /^<!-- check: (.*?) -->$/
const FENCE = /^(\s*)(```+|~~~+)(.*)$/

/** The blocks of one Markdown text: { file, line, lang, text, marks }. */
function parse(text, file) {
  const lines = text.split('\n')
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE.exec(lines[i])
    if (!m) continue
    const where = `${file}:${i + 1}`
    if (m[1] || m[2] !== '```') throw new Error(`${where}: fences start at column 0 with \`\`\``)
    const marks = {}
    const mm = i > 0 ? MARKER.exec(lines[i - 1]) : null
    if (mm) {
      for (const item of mm[1].split(/\s+/)) {
        const eq = item.indexOf('=')
        if (eq < 0) marks[item] = true
        else marks[item.slice(0, eq)] = item.slice(eq + 1)
      }
    }
    let j = i + 1
    while (j < lines.length && lines[j] !== '```') j++
    if (j === lines.length) throw new Error(`${where}: the block is not closed`)
    blocks.push({ file, line: i + 1, lang: m[3].trim(), text: lines.slice(i + 1, j).join('\n') + '\n', marks })
    i = j
  }
  return blocks
}

const name = (b) => `${b.file}:${b.line}`
const isModule = (b) => /^\/\/ [\w.-]+\.mjs\b/.test(b.text)

/** The output block right after `b` among `blocks`, if any. */
function outputAfter(blocks, b) {
  const next = blocks[blocks.indexOf(b) + 1]
  return next && next.marks.output ? next : null
}

function sameOutput(actual, expected) {
  const norm = (s) => s.replace(/\n+$/, '').split('\n').map((l) => l.trimEnd())
  return JSON.stringify(norm(actual)) === JSON.stringify(norm(expected))
}

/** A scratch project with polywire (the package under test) and @types/node in node_modules. */
function scratchProject(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  fs.mkdirSync(path.join(dir, 'node_modules', '@types'), { recursive: true })
  fs.symlinkSync(path.dirname(require.resolve('polywire/package.json')), path.join(dir, 'node_modules', 'polywire'), 'dir')
  const typesNode = resolveOrNull('@types/node/package.json')
  if (typesNode) fs.symlinkSync(path.dirname(typesNode), path.join(dir, 'node_modules', '@types', 'node'), 'dir')
  return dir
}

function resolveOrNull(spec) {
  try {
    return require.resolve(spec)
  } catch {
    return null
  }
}

const fileOf = (b, i) => `block${i}.${isModule(b) ? 'mjs' : 'cjs'}`

/** Run one block (as fileOf names it) in `dir`; resolves to { status, stdout, stderr }. */
async function runBlock(b, i, dir) {
  const file = path.join(dir, fileOf(b, i))
  fs.writeFileSync(file, b.text)
  const env = { ...process.env, AXON_ROOT: dir }
  let fake = null
  if (b.marks.fixture) {
    if (b.marks.fixture !== 'fake-axon-daemon') throw new Error(`${name(b)}: unknown fixture ${b.marks.fixture}`)
    const { FakeDaemon } = require('./fake_axon_daemon.js')
    fake = await new FakeDaemon(path.join(dir, 'axon.sock'), { name: 'docs' }).start()
    fake.add(1, { rttMs: 0.4, reply: (request) => ['response', { echo: request.payload }] })
  }
  try {
    return await new Promise((resolve) => {
      const child = spawn(process.execPath, [file], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      const timer = setTimeout(() => child.kill('SIGKILL'), 120000)
      child.on('exit', (status) => {
        clearTimeout(timer)
        resolve({ status, stdout, stderr })
      })
    })
  } finally {
    if (fake) await fake.stop()
  }
}

const tsc = resolveOrNull('typescript/bin/tsc')
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    allowJs: true,
    checkJs: true,
    noEmit: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    types: ['node'],
    skipLibCheck: false,
  },
}

/** `tsc --strict` over the blocks, each in its own file; returns tsc's result. */
function typeCheck(blocks) {
  const dir = scratchProject('polywire-doc-tsc-')
  try {
    const files = blocks.map((b, i) => {
      const file = fileOf(b, i)
      fs.writeFileSync(path.join(dir, file), b.text)
      return file
    })
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, files }))
    const r = spawnSync(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' })
    // Name the blocks in tsc's messages, not the scratch files.
    const told = (r.stdout + r.stderr).replace(/\S*block(\d+)\.[cm]js\((\d+),(\d+)\)/g, (_, n, l, c) => `${name(blocks[Number(n)])} + line ${l}, column ${c}`)
    return { status: r.status, output: told }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

module.exports = { parse, name, isModule, outputAfter, sameOutput, scratchProject, runBlock, typeCheck, tsc }
