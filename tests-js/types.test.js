'use strict'
// The TypeScript declarations (bindings-node/types/*.d.ts and *.d.mts, reached
// through the package's "exports", or its "typesVersions" under node10
// resolution) type-check real usage with `tsc --strict`, in a scratch project
// that has polywire in node_modules as a user would: once with nodenext
// resolution (ESM) and once with node10 (`"module": "commonjs"`, which ignores
// "exports").
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawnSync } = require('node:child_process')

function resolveOrNull(spec) {
  try {
    return require.resolve(spec)
  } catch {
    return null
  }
}

const tsc = resolveOrNull('typescript/bin/tsc')
const typesNode = resolveOrNull('@types/node/package.json')

function scratchProject() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polywire-types-'))
  const modules = path.join(dir, 'node_modules')
  fs.mkdirSync(path.join(modules, '@types'), { recursive: true })
  fs.symlinkSync(path.dirname(require.resolve('polywire/package.json')), path.join(modules, 'polywire'), 'dir')
  fs.symlinkSync(path.dirname(typesNode), path.join(modules, '@types', 'node'), 'dir')
  const src = path.join(__dirname, 'types')
  for (const f of fs.readdirSync(src)) fs.copyFileSync(path.join(src, f), path.join(dir, f))
  return dir
}

for (const [name, config] of [
  ['nodenext', 'tsconfig.json'],
  ['node10 (module commonjs)', 'tsconfig.node10.json'],
]) {
  test(`declarations type-check code written for the upstream API: ${name}`, { skip: !tsc || !typesNode ? 'typescript and @types/node are not installed' : false }, () => {
    const dir = scratchProject()
    try {
      const r = spawnSync(process.execPath, [tsc, '-p', path.join(dir, config)], { encoding: 'utf8' })
      assert.equal(r.status, 0, r.stdout + r.stderr)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
}
