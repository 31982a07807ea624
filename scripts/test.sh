#!/usr/bin/env bash
# The whole test suite: rebuild both packages from the working tree, then
# Rust (cargo), Python (pytest) and Node (node --test). Run scripts/setup.sh once first.
set -euo pipefail
cd "$(dirname "$0")/.."
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
maturin develop --release --quiet
npm run --silent build
cargo test --workspace --quiet
python -m pytest tests-py -q
node --test tests-js/
