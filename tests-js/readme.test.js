'use strict'
// Every JavaScript block of the README runs as written and type-checks under
// `tsc --strict` (tests-js/doc_blocks.js says how), read from the package
// under test: the repository, or an installed tarball, whose README is the
// same file. docs.test.js does the same for docs/*.md.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const { checkPage } = require('./doc_pages.js')
const { parse } = require('./doc_blocks.js')

const PKG = path.dirname(require.resolve('polywire/package.json'))
const BLOCKS = parse(fs.readFileSync(path.join(PKG, 'README.md'), 'utf8'), 'README.md')

test('the README has a JavaScript block for every format, the command aside', () => {
  for (const name of ['kado', 'toon', 'tether', 'axon', 'kameo', 'llm']) {
    assert.ok(BLOCKS.some((b) => b.lang === 'js' && b.text.includes(`'polywire/${name}'`)), name)
  }
})

checkPage(test, 'README.md', BLOCKS)
