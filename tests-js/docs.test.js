'use strict'
// Every JavaScript block of docs/*.md (not docs/api/, which is generated)
// runs as written and type-checks under `tsc --strict` (tests-js/doc_blocks.js
// says how). The pages are read beside this directory: the repository, or
// the copy scripts/check-dist.sh makes beside an installed package.
const test = require('node:test')
const path = require('node:path')
const fs = require('node:fs')
const { checkPage } = require('./doc_pages.js')
const { parse } = require('./doc_blocks.js')

const DOCS = path.join(__dirname, '..', 'docs')
const pages = fs.readdirSync(DOCS).filter((f) => f.endsWith('.md')).sort()

test('the docs pages are there', () => {
  for (const page of ['kado.md', 'toon.md', 'tether.md', 'axon.md', 'kameo.md', 'llm.md', 'command.md']) {
    if (!pages.includes(page)) throw new Error(`docs/${page} is missing`)
  }
})

for (const page of pages) {
  checkPage(test, `docs/${page}`, parse(fs.readFileSync(path.join(DOCS, page), 'utf8'), `docs/${page}`))
}

test('the harness can fail: a block that throws, a wrong output, a type error', async () => {
  const assert = require('node:assert/strict')
  const fsm = require('node:fs')
  const { runBlock, scratchProject, sameOutput, typeCheck, tsc } = require('./doc_blocks.js')
  const dir = scratchProject('polywire-doc-fail-')
  try {
    const thrown = await runBlock({ file: 'x', line: 1, text: "require('polywire/toon').decode('a[2]: 1')\n", marks: {} }, 0, dir)
    assert.notEqual(thrown.status, 0)
    assert.ok(!sameOutput('a\nb\n', 'a\nc\n'))
  } finally {
    fsm.rmSync(dir, { recursive: true, force: true })
  }
  if (tsc) {
    const bad = { file: 'x', line: 1, text: "const { decode } = require('polywire/tether')\nconsole.log(decode(Buffer.alloc(4))[0])\n", marks: {} }
    assert.notEqual(typeCheck([bad]).status, 0)
  }
})
