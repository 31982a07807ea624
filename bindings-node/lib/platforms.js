'use strict'
// Rust target triple -> the platform name napi-rs uses in file and package
// names (`polywire.linux-x64-gnu.node`, `polywire-linux-x64-gnu`). One table
// for the loader's error message (native.js) and for packing the platform
// packages (scripts/npm-pack.sh).
module.exports = {
  'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
  'x86_64-unknown-linux-musl': 'linux-x64-musl',
  'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
  'aarch64-unknown-linux-musl': 'linux-arm64-musl',
  'x86_64-apple-darwin': 'darwin-x64',
  'aarch64-apple-darwin': 'darwin-arm64',
  'x86_64-pc-windows-msvc': 'win32-x64-msvc',
}
