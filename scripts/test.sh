#!/usr/bin/env bash
# The whole test suite: rebuild both packages from the working tree, then
# Rust (cargo), Python (pytest) and Node (node --test). Run scripts/setup.sh once first.
set -euo pipefail
cd "$(dirname "$0")/.."
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
# --target: the host, as napi's --platform build names it, so that the two share
# target/<host>/release and its compiled dependencies (scripts/setup.sh).
maturin develop --release --quiet --target "$(rustc -vV | sed -n 's/^host: //p')"
npm run --silent build
cargo test --workspace --quiet
# The real Kameo node (kameo =0.22.2) that `cargo test` built: the Python and Node
# peer tests talk to it, and fail (not skip) if it is missing.
export POLYWIRE_KAMEO_NODE="$PWD/target/debug/kameo-node"
# polywire's own AXON peer as a program (axon-interop), which `cargo test` built too:
# the Python and Node AXON peer tests pair with it (and fail if it is missing).
export POLYWIRE_AXON_NODE="$PWD/target/debug/axon-node"
python -m pytest tests-py -q
node --test tests-js/
