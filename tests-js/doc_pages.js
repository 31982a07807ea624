'use strict'
// The tests of one page's JavaScript blocks (readme.test.js, docs.test.js).
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { name, outputAfter, sameOutput, scratchProject, runBlock, typeCheck, tsc } = require('./doc_blocks.js')

function checkPage(test, page, blocks) {
  const js = blocks.filter((b) => b.lang === 'js')
  const here = js.filter((b) => !b.marks['run-by'])
  if (!js.length) return
  test(`${page}: every JavaScript block runs`, async () => {
    const dir = scratchProject('polywire-doc-')
    try {
      for (const [i, b] of here.entries()) {
        // The fake AXON daemon listens on a Unix socket.
        if (b.marks.fixture && process.platform === 'win32') continue
        const r = await runBlock(b, i, dir)
        assert.equal(r.status, 0, `${name(b)}:\n${b.text}\n--- stderr:\n${r.stderr}`)
        const out = outputAfter(blocks, b)
        if (out) assert.ok(sameOutput(r.stdout, out.text), `${name(b)} printed:\n${r.stdout}\n--- the page shows (${name(out)}):\n${out.text}`)
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
  test(`${page}: every JavaScript block type-checks (tsc --strict)`, { skip: tsc ? false : 'typescript is not installed' }, () => {
    // The blocks run elsewhere (against a peer) are type-checked here too.
    const r = typeCheck(js)
    assert.equal(r.status, 0, r.output)
  })
}

module.exports = { checkPage }
