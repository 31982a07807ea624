#!/usr/bin/env node
'use strict'
// The `polywire` command: one implementation, in Rust (the crate polywire-cli,
// cli/), which the Python package's console script runs too. It reads fd 0
// and writes fd 1 and 2 itself, so process.stdin and process.stdout are left
// alone here.
process.exitCode = require('./native.js').cliMain(process.argv.slice(2))
