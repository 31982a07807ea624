'use strict'
// The package as users get it: a missing native binary is a clear, coded
// error naming the platform; every subpath resolves; the version matches.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawnSync } = require('node:child_process')

// The polywire package under test: the repository, or the installed tarball
// when the tests run from a project that installed it.
const PKG = path.dirname(require.resolve('polywire/package.json'))
const manifest = require('polywire/package.json')

test('without a native binary, loading fails with a coded error naming the platform', () => {
  // A copy of the JavaScript files alone, outside any node_modules tree, so
  // neither `polywire.<platform>.node` nor a platform package can be found.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'polywire-nobin-'))
  try {
    for (const sub of ['lib', 'native']) {
      fs.mkdirSync(path.join(dir, 'bindings-node', sub), { recursive: true })
      for (const f of fs.readdirSync(path.join(PKG, 'bindings-node', sub))) {
        if (f.endsWith('.js')) fs.copyFileSync(path.join(PKG, 'bindings-node', sub, f), path.join(dir, 'bindings-node', sub, f))
      }
    }
    fs.copyFileSync(path.join(PKG, 'package.json'), path.join(dir, 'package.json'))
    const script = `
      try { require(${JSON.stringify(path.join(dir, manifest.exports['./kado'].require.default))}); console.log('loaded') }
      catch (e) { console.log(JSON.stringify({ code: e.code, name: e.name, message: e.message, platform: e.platform, cause: !!e.cause })) }`
    const env = { ...process.env }
    delete env.NAPI_RS_NATIVE_LIBRARY_PATH
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env, cwd: dir })
    assert.equal(r.status, 0, r.stderr)
    const e = JSON.parse(r.stdout)
    assert.equal(e.code, 'POLYWIRE_NATIVE_BINARY_NOT_FOUND')
    assert.equal(e.name, 'PolywireError')
    assert.equal(e.cause, true)
    const libc = process.report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl'
    assert.equal(e.platform, `${process.platform}-${process.arch}${process.platform === 'linux' ? '-' + libc : ''}`)
    assert.match(e.message, new RegExp(`no native binary could be loaded for ${e.platform}`))
    assert.match(e.message, /polywire-linux-x64-gnu|publishes binaries for/)
    assert.match(e.message, /Rust toolchain/)
    assert.doesNotMatch(e.message, /npm has a bug/)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('every subpath export loads through require and import', async () => {
  const subpaths = Object.keys(manifest.exports).filter((k) => k !== './package.json')
  assert.deepEqual(subpaths, ['.', './kado', './toon', './tether', './axon', './kameo', './llm'])
  for (const sub of subpaths) {
    const spec = sub === '.' ? 'polywire' : `polywire/${sub.slice(2)}`
    const cjs = require(spec)
    const esm = await import(spec)
    assert.ok(Object.keys(cjs).length > 3, spec)
    for (const k of Object.keys(cjs)) assert.equal(esm[k], cjs[k], `${spec} export ${k}`)
  }
})

test('node10 type resolution (typesVersions) names the declarations each subpath export does', () => {
  const subs = Object.keys(manifest.exports).filter((k) => k !== '.' && k !== './package.json')
  assert.deepEqual(Object.keys(manifest.typesVersions['*']), subs.map((k) => k.slice(2)))
  for (const sub of subs) {
    assert.deepEqual(manifest.typesVersions['*'][sub.slice(2)], [manifest.exports[sub].require.types], sub)
    assert.ok(fs.existsSync(path.join(PKG, manifest.exports[sub].require.types)), sub)
  }
  assert.equal('./' + manifest.types, manifest.exports['.'].require.types)
})

test('the platform packages carry the main package version and a LICENSE ships', () => {
  assert.match(manifest.version, /^\d+\.\d+\.\d+/)
  assert.ok(fs.existsSync(path.join(PKG, 'LICENSE')), 'LICENSE in the package')
  assert.ok(!manifest.engines.node.includes('18'), 'Node 18 is end-of-life')
  for (const [dep, version] of Object.entries(manifest.optionalDependencies || {})) {
    assert.match(dep, /^polywire-/)
    assert.equal(version, manifest.version, dep)
  }
})
