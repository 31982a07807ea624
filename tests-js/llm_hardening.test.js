'use strict'
// Token counting and safeEncode held to the hostile-input standard: 100 MB of
// one character count in little memory (a child process reports its peak
// RSS), a text too long for memory is an error with a code rather than an
// abort, and safeEncode's errors when JSON cannot take the value either
// (a cycle, nesting too deep for V8) are TOON's, with their code.

const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')

const llm = require('polywire/llm')
const toon = require('polywire/toon')

function child(code) {
  const prelude = `
    const llm = require('polywire/llm')
    llm.countTokens('warm up')
    const peakMb = () => process.resourceUsage().maxRSS / 1024
  `
  const r = spawnSync(process.execPath, ['-e', prelude + code], { encoding: 'utf8', timeout: 120000, cwd: __dirname })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

for (const [char, perToken] of [['a', 8], [' ', 128], ['=', null]]) {
  test(`100 MB of ${JSON.stringify(char)} count in little memory`, () => {
    const r = child(`
      // A flat string (repeat's rope would be flattened by the count, in V8's heap).
      const text = Buffer.alloc(100 << 20, ${JSON.stringify(char)}).toString('latin1')
      const before = peakMb()
      const n = llm.countTokens(text)
      console.log(JSON.stringify({ n, grew: peakMb() - before }))
    `)
    // The text is copied once as UTF-8 to be counted (100 MB); the counting
    // itself adds little (before: about 44 bytes a byte, 4.4 GB, minutes).
    assert.ok(r.grew < 100 + 48, JSON.stringify(r))
    if (perToken) assert.equal(r.n, Math.floor((100 << 20) / perToken))
    assert.ok(r.n > 0)
  })
}

test('safeEncode: when JSON cannot encode the value either, TOON\'s error (with its code) is thrown', () => {
  const cycle = { a: 1 }
  cycle.self = cycle
  assert.throws(
    () => llm.safeEncode(cycle),
    (e) => e instanceof toon.ToonEncodeError && e.code === 'TOON_CYCLE' && e.cause instanceof TypeError,
  )
  let deep = 1
  for (let i = 0; i < 100000; i++) deep = [deep]
  assert.throws(() => llm.safeEncode(deep), (e) => typeof e.code === 'string' && e.code.startsWith('TOON_'))
  assert.throws(() => llm.safeEncode({ n: 10n ** 30n, self: cycle }), (e) => typeof e.code === 'string' && e.code.startsWith('TOON_'))
  // What TOON can take is TOON; what only JSON can take, JSON.
  assert.equal(llm.safeEncode({ deep: 'value' }), 'deep: value')
  let justJson = 1
  for (let i = 0; i < 2000; i++) justJson = [justJson]
  assert.equal(llm.safeEncode(justJson), JSON.stringify(justJson))
})
