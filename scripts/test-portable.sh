#!/usr/bin/env bash
# The code paths that processors other than x86_64 run (no SSE2/AVX2), tested on
# this x86_64 machine: the core and both bindings are built with the cargo
# feature `portable` (see core/src/lib.rs), then the core's tests, the Python
# suite (in .venv-portable) and the Node suite (the portable addon loaded
# through NAPI_RS_NATIVE_LIBRARY_PATH) run against those builds. A feature,
# not `--cfg polywire_portable` in RUSTFLAGS: the builds share target/ with
# ./scripts/test.sh's and rebuild only polywire's own crates.
# Usage: ./scripts/test-portable.sh   (after ./scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# The Kameo peer tests' real Kameo node, from ./scripts/test.sh's `cargo test`.
[ ! -x "$ROOT/target/debug/kameo-node" ] || export POLYWIRE_KAMEO_NODE="$ROOT/target/debug/kameo-node"
# The AXON peer tests' Rust peer (axon-interop's axon-node), from the same `cargo test`.
[ ! -x "$ROOT/target/debug/axon-node" ] || export POLYWIRE_AXON_NODE="$ROOT/target/debug/axon-node"

echo "== cargo test -p polywire (portable)"
cargo test -p polywire --features portable --quiet
cargo test -p polywire --features portable --quiet --lib -- --exact tests::portable_paths_are_on | grep -q "1 passed" \
  || { echo "test-portable.sh: the portable build's SIMD check did not run" >&2; exit 1; }

echo "== tests-py (portable)"
if [ ! -x .venv-portable/bin/python ]; then
  python3 -m venv .venv-portable
  .venv-portable/bin/python -m pip install -q --upgrade pip
  .venv-portable/bin/python -m pip install -q maturin pytest hypothesis mypy pydantic toon-format==1.2.0 tiktoken==0.14.0 tokenizers==0.22.1
fi
(export VIRTUAL_ENV=$ROOT/.venv-portable PATH=$ROOT/.venv-portable/bin:$PATH
 maturin develop --release --quiet --features portable --target "$(rustc -vV | sed -n 's/^host: //p')"
 python -c 'import polywire._polywire as m; assert m._simd is False, "the portable build has the SIMD paths on"'
 python -m pytest tests-py -q -p no:cacheprovider)

echo "== tests-js (portable)"
out=$ROOT/target/portable-node
npx --no-install napi build --platform --release --features portable --manifest-path bindings-node/Cargo.toml --output-dir "$out" >/dev/null
NAPI_RS_NATIVE_LIBRARY_PATH=$out/polywire.linux-x64-gnu.node node --test tests-js/
