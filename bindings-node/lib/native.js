'use strict'
// The native addon, loaded through the loader napi-rs generates (../native/index.js).
// That loader looks for `polywire.<platform>.node` beside it, then for the
// platform package (`polywire-linux-x64-gnu`, ...); when neither is there it
// throws a generic message that blames npm's optional dependencies. This file
// replaces it with one that names the platform, the platforms we publish and
// what to do, with a stable `code`; the loader's own errors stay as `cause`.

const { PolywireError } = require('./errors.js')

const PLATFORM_NAMES = require('./platforms.js')

function currentPlatform() {
  let name = `${process.platform}-${process.arch}`
  if (process.platform === 'linux') {
    let glibc = null
    try {
      glibc = process.report.getReport().header.glibcVersionRuntime
    } catch {}
    name += glibc ? '-gnu' : '-musl'
  } else if (process.platform === 'win32') {
    name += '-msvc'
  }
  return name
}

function published() {
  try {
    return require('../../package.json').napi.targets.map((t) => PLATFORM_NAMES[t] || t)
  } catch {
    return Object.values(PLATFORM_NAMES)
  }
}

function noBinary(cause) {
  const platform = currentPlatform()
  const targets = published()
  const isPublished = targets.includes(platform)
  const what = isPublished
    ? `The binary for ${platform} comes in the optional package "polywire-${platform}", which is not installed: ` +
      'reinstall without omitting optional dependencies (no --omit=optional / --no-optional, and not a ' +
      'lockfile made on another platform), or add it explicitly: npm install polywire-' + platform + '.'
    : `polywire publishes binaries for ${targets.join(', ')}; ${platform} is not among them.`
  const err = new PolywireError(
    `polywire: no native binary could be loaded for ${platform} (Node ${process.version}). ${what} ` +
      'To build it from source instead, install a Rust toolchain (https://rustup.rs) and run ' +
      '`npm install` in a clone of the repository (it runs `napi build`). What was tried is in `cause`.',
    'POLYWIRE_NATIVE_BINARY_NOT_FOUND',
  )
  err.platform = platform
  err.cause = cause
  return err
}

let binding
try {
  binding = require('../native/index.js')
} catch (cause) {
  throw noBinary(cause)
}

module.exports = binding
