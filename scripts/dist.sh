#!/usr/bin/env bash
# Build the release artifacts for this machine's platform (Linux x86_64) into dist/:
#   - a wheel per CPython 3.9-3.13 found here, manylinux2014 (glibc 2.17), built with
#     maturin's zig linker, and the sdist;
#   - the npm main package and the linux-x64-gnu platform package (napi-rs's
#     multi-package layout), the binary built for glibc 2.17 and stripped.
# It checks what it built (auditwheel, objdump -T) and prints each artifact's size.
# Other platforms are built by .github/workflows/release.yml.
#
# Usage: ./scripts/dist.sh            (builds into dist/, replacing what is there)
# Needs: Rust (x86_64-unknown-linux-gnu), Node/npm, python3; installs maturin, ziglang,
# auditwheel and cargo-zigbuild into .venv-dist/ itself.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=$ROOT/dist
# Zig-linked builds get their own target directory: they would otherwise
# invalidate the ordinary builds' fingerprints.
export CARGO_TARGET_DIR=$ROOT/target/dist
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
[ -n "$VERSION" ] || { echo "dist.sh: no version in Cargo.toml [workspace.package]" >&2; exit 1; }

# --- tools ---------------------------------------------------------------------
if [ ! -x .venv-dist/bin/python ]; then
  python3 -m venv .venv-dist
  .venv-dist/bin/python -m pip install -q --upgrade pip
fi
.venv-dist/bin/python -m pip install -q "maturin>=1.9,<2" ziglang auditwheel cargo-zigbuild
export PATH="$ROOT/.venv-dist/bin:$PATH"
# cargo-zigbuild wants a `zig` on PATH: the one the ziglang package ships.
ZIG=$(python -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
mkdir -p .venv-dist/zig-bin && ln -sf "$ZIG" .venv-dist/zig-bin/zig
export PATH="$ROOT/.venv-dist/zig-bin:$PATH"

rm -rf "$DIST" && mkdir -p "$DIST"

# --- Python: wheels and sdist ------------------------------------------------------
interpreters=()
for minor in 9 10 11 12 13; do
  found=""
  for candidate in "$HOME"/.pyenv/versions/3."$minor".*/bin/python3."$minor" "$(command -v python3."$minor" || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import sys' 2>/dev/null; then
      found=$candidate
      break
    fi
  done
  if [ -n "$found" ]; then interpreters+=("$found"); else echo "dist.sh: no CPython 3.$minor here, no wheel for it"; fi
done
[ ${#interpreters[@]} -gt 0 ] || { echo "dist.sh: no CPython 3.9-3.13 found" >&2; exit 1; }
echo "== wheels for: ${interpreters[*]}"
# maturin runs cargo with zig as linker and C compiler (cargo-zigbuild inside it). A
# cargo shim records that environment, so that the Node binary below builds with the
# same one and reuses the dependencies the wheels compiled (about four minutes): with
# `cargo zigbuild`, whose linker wrapper has another path, cargo compiles them all again.
shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
printf '#!/bin/sh\ncase "$1" in rustc|build) env -0 > "%s/env" ;; esac\nexec "%s" "$@"\n' \
  "$shim" "$(command -v cargo)" > "$shim/cargo"
chmod +x "$shim/cargo"
PATH="$shim:$PATH" maturin build --release --strip --zig --compatibility manylinux2014 -o "$DIST" -i "${interpreters[@]}"
maturin sdist -o "$DIST"
for whl in "$DIST"/*.whl; do
  report=$(auditwheel show "$whl" | tr -s ' \n' ' ')
  echo "$report" | grep -q 'consistent with the following platform tag: "manylinux_2_17_x86_64"' \
    || { echo "$report"; echo "dist.sh: $whl is not manylinux_2_17" >&2; exit 1; }
  python - "$whl" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert any(n.endswith("/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names), "no LICENSE in the wheel"
assert any(n.endswith("py.typed") for n in names), "no py.typed in the wheel"
EOF
done

# --- Node: the linux-x64-gnu binary for glibc 2.17 ---------------------------------
echo "== Node binary (glibc 2.17)"
# What maturin added to cargo's environment (linker, C compiler, target settings), less
# its Python settings, as shell assignments.
zig_env=$(python - "$shim/env" <<'EOF'
import os, shlex, sys
try:
    items = open(sys.argv[1], "rb").read().split(b"\0")
except OSError:
    items = []
for item in items:
    name, _, value = item.decode("utf-8", "replace").partition("=")
    if name.startswith(("PYO3_", "PYTHON_SYS_")) or name in ("", "_", "PATH", "PWD", "OLDPWD", "SHLVL"):
        continue  # the Python build's, or the shell's (PATH has the shim)
    if os.environ.get(name) != value:
        print(f"export {name}={shlex.quote(value)}")
EOF
)
if printf '%s\n' "$zig_env" | grep -q '^export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER='; then
  (eval "$zig_env" && cargo build --release --target x86_64-unknown-linux-gnu -p polywire-node)
else
  echo "   (maturin's cargo environment was not recorded: cargo zigbuild, which compiles every dependency again)"
  cargo zigbuild --release --target x86_64-unknown-linux-gnu.2.17 -p polywire-node
fi
so="$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/libpolywire_node.so"
newest_glibc() { objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1; }

# --- npm packages ------------------------------------------------------------------
binaries=$DIST/node-binaries
mkdir -p "$binaries"
cp "$so" "$binaries/polywire.linux-x64-gnu.node"
strip --strip-unneeded "$binaries/polywire.linux-x64-gnu.node"
glibc=$(newest_glibc "$binaries/polywire.linux-x64-gnu.node")
[ "$(printf '%s\nGLIBC_2.17\n' "$glibc" | sort -V | tail -n 1)" = GLIBC_2.17 ] \
  || { echo "dist.sh: the .node file needs $glibc (more than GLIBC_2.17)" >&2; exit 1; }
echo "   newest glibc symbol in polywire.linux-x64-gnu.node: $glibc"
./scripts/npm-pack.sh "$binaries" "$DIST"
rm -rf "$binaries"

echo "== dist/ (version $VERSION)"
ls -l "$DIST" | tail -n +2 | awk '{printf "   %9d  %s\n", $5, $9}'
