#!/usr/bin/env bash
# The code paths that processors other than x86_64 run (no SSE2/AVX2), tested on
# this x86_64 machine: everything is built with `--cfg polywire_portable` (see
# core/src/lib.rs) in a target directory of its own, then the core's tests, the
# Python suite (in .venv-portable) and the Node suite (the portable addon loaded
# through NAPI_RS_NATIVE_LIBRARY_PATH) run against those builds.
# Usage: ./scripts/test-portable.sh   (after ./scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export RUSTFLAGS="${RUSTFLAGS:-} --cfg polywire_portable"
export CARGO_TARGET_DIR=$ROOT/target/portable
# Release code without the whole-program LTO pass: the same paths, built faster.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16

# The Kameo peer tests' real Kameo node, from ./scripts/test.sh's `cargo test`.
[ ! -x "$ROOT/target/debug/kameo-node" ] || export POLYWIRE_KAMEO_NODE="$ROOT/target/debug/kameo-node"

echo "== cargo test -p polywire (portable)"
cargo test -p polywire --release --quiet

echo "== tests-py (portable)"
if [ ! -x .venv-portable/bin/python ]; then
  python3 -m venv .venv-portable
  .venv-portable/bin/python -m pip install -q --upgrade pip
  .venv-portable/bin/python -m pip install -q maturin pytest hypothesis mypy pydantic toon-format==1.2.0 tiktoken==0.14.0 tokenizers==0.22.1
fi
(export VIRTUAL_ENV=$ROOT/.venv-portable PATH=$ROOT/.venv-portable/bin:$PATH
 maturin develop --release --quiet
 python -m pytest tests-py -q -p no:cacheprovider)

echo "== tests-js (portable)"
out=$CARGO_TARGET_DIR/node
npx --no-install napi build --platform --release --manifest-path bindings-node/Cargo.toml --output-dir "$out" >/dev/null
NAPI_RS_NATIVE_LIBRARY_PATH=$out/polywire.linux-x64-gnu.node node --test tests-js/
