#!/usr/bin/env bash
# Set the release version everywhere it must be spelled out. The one source is
# the workspace Cargo.toml ([workspace.package] version): the Rust crates inherit
# it and maturin gives it to the Python package; npm needs it in package.json,
# package-lock.json and each npm/<platform>/package.json.
# Usage: ./scripts/set-version.sh 0.2.0
set -euo pipefail
cd "$(dirname "$0")/.."
v=${1:?usage: scripts/set-version.sh X.Y.Z}
[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+([-.+][0-9A-Za-z.-]+)?$ ]] || { echo "not a version: $v" >&2; exit 1; }
sed -i "/^\[workspace.package\]/,/^\[/s/^version = \".*\"/version = \"$v\"/" Cargo.toml
npm version "$v" --no-git-tag-version --allow-same-version >/dev/null
for f in npm/*/package.json; do
  node -e 'const fs=require("fs");const f=process.argv[1];const p=JSON.parse(fs.readFileSync(f,"utf8"));p.version=process.argv[2];fs.writeFileSync(f,JSON.stringify(p,null,2)+"\n")' "$f" "$v"
done
cargo update --workspace --quiet
echo "version $v: Cargo.toml, Cargo.lock, package.json, package-lock.json, npm/*/package.json"
