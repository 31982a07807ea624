#!/usr/bin/env bash
# Prove that the artifacts ./scripts/dist.sh left in dist/ work as a user gets them,
# with no Rust toolchain on PATH:
#   - npm: the main and linux-x64-gnu tarballs installed offline into a fresh project
#     (no registry), then tests-js run against that install;
#   - Python: each wheel installed into a fresh venv of its CPython; the whole of
#     tests-py against the installed wheel on FULL_PYTHONS (default: the oldest and the
#     newest found), the smoke test (every module imports, one round trip per format)
#     on the others.
# Usage: ./scripts/check-dist.sh   (after ./scripts/dist.sh and ./scripts/setup.sh, whose
# node_modules provides the test-only packages: the reference implementations, typescript)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A PATH without cargo, rustc or rustup.
NORUST_PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e '/\.cargo/' -e '/\.rustup/' | paste -sd: -)
if PATH=$NORUST_PATH command -v cargo >/dev/null || PATH=$NORUST_PATH command -v rustc >/dev/null; then
  echo "check-dist.sh: cargo or rustc is still on PATH outside ~/.cargo; cannot prove a Rust-free install" >&2
  exit 1
fi
norust() { env -u CARGO_HOME -u RUSTUP_HOME PATH="$NORUST_PATH" "$@"; }
# The Kameo peer tests talk to kameo-node, a program on the real kameo crate that
# `cargo test` built (./scripts/test.sh runs first in CI): a test fixture, not part
# of what is installed, so it may come from the build tree.
if [ -x "$ROOT/target/debug/kameo-node" ]; then
  export POLYWIRE_KAMEO_NODE="$ROOT/target/debug/kameo-node"
else
  echo "check-dist.sh: no target/debug/kameo-node (run cargo test first): the Kameo peer tests will skip" >&2
fi
# Likewise the AXON peer tests' Rust peer (axon-interop's axon-node).
if [ -x "$ROOT/target/debug/axon-node" ]; then
  export POLYWIRE_AXON_NODE="$ROOT/target/debug/axon-node"
else
  echo "check-dist.sh: no target/debug/axon-node (run cargo test first): the AXON peer tests will skip" >&2
fi

# --- npm -----------------------------------------------------------------------------
main_tgz=$ROOT/dist/polywire-$VERSION.tgz
platform_tgz=$ROOT/dist/polywire-linux-x64-gnu-$VERSION.tgz
[ -f "$main_tgz" ] && [ -f "$platform_tgz" ] || { echo "check-dist.sh: run ./scripts/dist.sh first" >&2; exit 1; }
project=$work/npm-project
mkdir -p "$project"
(cd "$project" && norust npm init -y >/dev/null \
  && norust npm install --offline --no-audit --no-fund "$main_tgz" "$platform_tgz")
installed=$project/node_modules/polywire
[ -z "$(find "$installed" -name '*.node' -print -quit)" ] || { echo "check-dist.sh: the main package carries a binary" >&2; exit 1; }
[ -f "$project/node_modules/polywire-linux-x64-gnu/polywire.linux-x64-gnu.node" ] || { echo "check-dist.sh: no platform package installed" >&2; exit 1; }
# The tests and their inputs (vectors, the benchmark datasets, the docs whose blocks
# tests-js/docs.test.js runs) beside the install, and the test-only packages
# (reference implementations, typescript, @types/node) from the repository's
# node_modules; polywire itself resolves to the installed tarball.
cp -r tests-js vectors bench docs "$project/"
for dep in "$ROOT"/node_modules/* "$ROOT"/node_modules/.bin; do
  name=$(basename "$dep")
  [ "$name" = polywire ] || [ -e "$project/node_modules/$name" ] || cp -r "$dep" "$project/node_modules/"
done
echo "== tests-js against the installed npm tarballs (no Rust on PATH)"
(cd "$project" && norust node -e "const p=require.resolve('polywire/package.json'); if(!p.startsWith(process.cwd()+'/node_modules/')) throw new Error('polywire resolves to '+p)" \
  && norust node --test tests-js/)

# --- Python --------------------------------------------------------------------------
interpreter_for() { # cp39 -> a python3.9 that runs
  local minor=${1#cp3} candidate
  for candidate in "$HOME"/.pyenv/versions/3."$minor".*/bin/python3."$minor" "$(command -v python3."$minor" || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import sys' 2>/dev/null; then echo "$candidate"; return; fi
  done
}
wheels=("$ROOT"/dist/polywire-"$VERSION"-cp3*-*.whl)
[ -f "${wheels[0]}" ] || { echo "check-dist.sh: no wheels in dist/" >&2; exit 1; }
tags=$(for w in "${wheels[@]}"; do basename "$w" | cut -d- -f3; done | sort -t3 -k2 -n)
full=${FULL_PYTHONS:-"$(echo "$tags" | head -n 1) $(echo "$tags" | tail -n 1)"}
for w in "${wheels[@]}"; do
  tag=$(basename "$w" | cut -d- -f3)
  python=$(interpreter_for "$tag")
  [ -n "$python" ] || { echo "check-dist.sh: no interpreter for $w" >&2; exit 1; }
  venv=$work/venv-$tag
  "$python" -m venv "$venv"
  norust "$venv/bin/python" -m pip install -q --upgrade pip
  # --no-index for polywire: the wheel, never a build from source.
  norust "$venv/bin/python" -m pip install -q --no-index "$w"
  # pydantic (polywire.toon.pydantic) works on every Python polywire supports.
  norust "$venv/bin/python" -m pip install -q pytest hypothesis mypy pydantic tiktoken==0.14.0 tokenizers==0.22.1
  # toon-format 1.2.0 (the parity tests' reference) needs Python 3.10 or newer; those
  # tests (and test_toon_pydantic.py's comparisons with toon_format.pydantic) skip
  # without it.
  if "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    norust "$venv/bin/python" -m pip install -q toon-format==1.2.0
  fi
  if [[ " $full " == *" $tag "* ]]; then
    echo "== tests-py against the installed $(basename "$w") (no Rust on PATH)"
    suite=(tests-py)
  else
    echo "== smoke test against the installed $(basename "$w") (no Rust on PATH)"
    suite=(tests-py/test_smoke.py tests-py/test_packaging.py)
  fi
  # Run from a scratch directory so nothing from the source tree is importable
  # but the tests themselves (conftest asserts where polywire came from).
  (cd "$work" && norust env POLYWIRE_EXPECT_INSTALLED=1 POLYWIRE_NODE_PACKAGE="$installed" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$ROOT" "${suite[@]/#/$ROOT/}")
done
echo "check-dist.sh: every artifact installed and passed without Rust"
