'use strict'
// Every JavaScript code block of the README runs as written: `import` blocks as
// ES modules, the others as CommonJS, each in a scratch project where
// `polywire` resolves to the package under test (the repository, or an
// installed tarball, whose README is the same file).
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawnSync } = require('node:child_process')

const PKG = path.dirname(require.resolve('polywire/package.json'))
const README = fs.readFileSync(path.join(PKG, 'README.md'), 'utf8')
// Blocks that take a peer's address on the command line run in
// kameo_peer.test.js, against the kameo-node program.
const BLOCKS = [...README.matchAll(/^```js\n([\s\S]*?)^```/gm)].map((m) => m[1]).filter((b) => !b.includes('process.argv'))

test('the README has a JavaScript block for every format', () => {
  for (const name of ['kado', 'toon', 'tether', 'axon', 'kameo']) {
    assert.ok(BLOCKS.some((b) => b.includes(`'polywire/${name}'`)), name)
  }
})

test('every README JavaScript block runs', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polywire-readme-'))
  try {
    fs.mkdirSync(path.join(dir, 'node_modules'))
    fs.symlinkSync(PKG, path.join(dir, 'node_modules', 'polywire'), 'dir')
    BLOCKS.forEach((code, i) => {
      const file = path.join(dir, `block${i}.${/^import /m.test(code) ? 'mjs' : 'cjs'}`)
      fs.writeFileSync(file, code)
      const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 60000 })
      assert.equal(r.status, 0, `${code}\n--- stderr:\n${r.stderr}`)
    })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
