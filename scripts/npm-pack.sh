#!/usr/bin/env bash
# Pack the npm packages in napi-rs's multi-package layout from built binaries:
#   - one platform package per `polywire.<platform>.node` file in BINARIES
#     (from npm/<platform>/package.json, with LICENSE), and
#   - the main package: the JavaScript (bindings-node/lib), the declarations
#     (bindings-node/types) and the napi-generated loader (bindings-node/native), no
#     binary, a package.json without install-time scripts or devDependencies, and
#     optionalDependencies naming one platform package per napi target (what
#     `napi pre-publish` writes).
# Used by scripts/dist.sh (one Linux binary) and the release workflow (all of them).
# Usage: scripts/npm-pack.sh BINARIES OUT   (tarballs are written to OUT)
set -euo pipefail
cd "$(dirname "$0")/.."
binaries=$(cd "${1:?usage: npm-pack.sh BINARIES OUT}" && pwd)
out=$(mkdir -p "${2:?usage: npm-pack.sh BINARIES OUT}" && cd "$2" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

shopt -s nullglob
nodes=("$binaries"/polywire.*.node)
[ ${#nodes[@]} -gt 0 ] || { echo "npm-pack.sh: no polywire.<platform>.node in $binaries" >&2; exit 1; }
for node in "${nodes[@]}"; do
  platform=$(basename "$node" .node)
  platform=${platform#polywire.}
  [ -f "npm/$platform/package.json" ] || { echo "npm-pack.sh: no npm/$platform/package.json for $node" >&2; exit 1; }
  mkdir -p "$stage/$platform"
  cp "npm/$platform/package.json" LICENSE "$stage/$platform/"
  [ -f "npm/$platform/README.md" ] && cp "npm/$platform/README.md" "$stage/$platform/"
  cp "$node" "$stage/$platform/"
  (cd "$stage/$platform" && npm pack --silent --pack-destination "$out" >/dev/null)
done

main=$stage/polywire
mkdir -p "$main/bindings-node/lib" "$main/bindings-node/types" "$main/bindings-node/native"
cp bindings-node/lib/*.js bindings-node/lib/*.mjs "$main/bindings-node/lib/"
cp bindings-node/types/*.d.ts bindings-node/types/*.d.mts "$main/bindings-node/types/"
cp bindings-node/native/index.js bindings-node/native/index.d.ts "$main/bindings-node/native/"
cp README.md LICENSE CHANGELOG.md "$main/"
node - "$main/package.json" <<'EOF'
const fs = require('fs')
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'))
delete pkg.scripts
delete pkg.devDependencies
pkg.files = pkg.files.filter((f) => !f.endsWith('.node'))
const names = require(require('path').resolve('bindings-node/lib/platforms.js'))
pkg.optionalDependencies = {}
for (const t of pkg.napi.targets) {
  if (!names[t]) throw new Error(`no platform name for napi target ${t}`)
  const dir = `npm/${names[t]}/package.json`
  const platform = JSON.parse(fs.readFileSync(dir, 'utf8'))
  if (platform.version !== pkg.version) throw new Error(`${dir} has version ${platform.version}, package.json ${pkg.version}`)
  pkg.optionalDependencies[platform.name] = pkg.version
}
fs.writeFileSync(process.argv[2], JSON.stringify(pkg, null, 2) + '\n')
EOF
(cd "$main" && npm pack --silent --pack-destination "$out" >/dev/null)
