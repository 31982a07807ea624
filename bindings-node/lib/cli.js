#!/usr/bin/env node
'use strict'
// The `polywire` command: one implementation, in Rust (the crate polywire-cli,
// cli/), which the Python package's console script runs too. It reads fd 0
// and writes fd 1 and 2 itself, so process.stdin and process.stdout are left
// alone here. The addon is taken from ../native/ (a build from source)
// or from its platform package when there, a few milliseconds sooner than
// through the full loader (native.js), which is the fallback.
let native
for (const abi of { linux: ['-gnu', '-musl'], win32: ['-msvc'] }[process.platform] ?? ['']) {
  const name = `${process.platform}-${process.arch}${abi}`
  for (const at of [`../native/polywire.${name}.node`, `polywire-${name}`]) {
    try {
      native ??= require(at)
    } catch {}
  }
}
process.exitCode = (native ?? require('./native.js')).cliMain(process.argv.slice(2))
