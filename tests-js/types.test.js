'use strict'
// The TypeScript declarations (bindings-node/*.d.ts, reached through the
// package's "exports") type-check real usage, with the TypeScript compiler the
// napi-rs CLI already brings in.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

test('declarations type-check code written for the upstream API', () => {
  let tsc
  try {
    tsc = require.resolve('typescript/bin/tsc')
  } catch {
    return test.skip('typescript is not installed')
  }
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(__dirname, 'types')], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stdout + r.stderr)
})
