#!/usr/bin/env bash
# Set up a fresh clone: a Python venv with polywire built from source
# (`pip install .`), the Node package built from source (`npm install`), then a
# short demo of frames crossing the Python/Node boundary both ways.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q maturin pytest hypothesis mypy toon-format==1.2.0 pydantic tiktoken==0.14.0 tokenizers==0.22.1
# Built for the host triple named explicitly, as napi's --platform build below
# (and ./scripts/test.sh) names it: both packages then build in one target
# directory, target/<host>/release, and compile the dependencies they share
# (libp2p, QUIC, rustls, the tokenizers) once, not twice.
host=$(rustc -vV | sed -n 's/^host: //p')
MATURIN_PEP517_ARGS="--target $host" .venv/bin/python -m pip install -q .
if [ -f package-lock.json ] && [ "${CI:-}" = "true" ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
.venv/bin/python examples/demo.py
