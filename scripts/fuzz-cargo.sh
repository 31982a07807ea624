#!/usr/bin/env bash
# Run the cargo-fuzz targets (fuzz/fuzz_targets/) with AddressSanitizer.
#
#   scripts/fuzz-cargo.sh --seconds 15            # CI: every target briefly
#   scripts/fuzz-cargo.sh --runs 10000000 T...    # a campaign: N executions per target
#   scripts/fuzz-cargo.sh --sanitizer none ...    # no ASan: about twice the speed, for
#                                                 # targets whose code has no `unsafe`
#
# Each target starts from its committed corpus (fuzz/corpus-seed/<target>/)
# copied into a scratch directory (FUZZ_WORK, default target/fuzz-work), so
# a run never edits the repository; `--merge` afterwards folds what a run
# found back into fuzz/corpus-seed/ with libFuzzer's corpus minimisation.
# A crash fails the script and leaves the input in fuzz/artifacts/<target>/.
#
# cargo-fuzz needs a nightly compiler for -Zsanitizer; RUSTC_BOOTSTRAP=1 lets
# the stable toolchain build it. cargo-fuzz itself is installed if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
mode=seconds
amount=15
merge=0
sanitizer=address
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) mode=seconds; amount=$2; shift 2 ;;
    --runs) mode=runs; amount=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    --sanitizer) sanitizer=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi

export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION" --quiet
fi

work=${FUZZ_WORK:-$PWD/target/fuzz-work}
mkdir -p "$work"
# Each sanitizer builds in a directory of its own, so that runs with and
# without ASan can go on side by side.
san=(-s "$sanitizer")
[ "$sanitizer" = address ] || san+=(--target-dir "$PWD/target/fuzz-$sanitizer")
(cd fuzz && cargo fuzz build "${san[@]}")

# Inputs longer than this are not generated (longer seeds are cut): the
# frame-decoder target feeds its input byte by byte, and the round-trip
# target's value generator stops after 64 values, so they get less.
max_len() {
  case "$1" in
    kado_frame_decoder) echo 1024 ;;
    toon_roundtrip) echo 512 ;;
    tokens_count) echo 1024 ;;  # the reference (fancy-regex) is the slow half
    *) echo 4096 ;;
  esac
}

for t in "${targets[@]}"; do
  corpus="$work/$t"
  mkdir -p "$corpus"
  if [ -d "fuzz/corpus-seed/$t" ]; then cp -n fuzz/corpus-seed/"$t"/* "$corpus"/ 2>/dev/null || true; fi
  if [ "$mode" = seconds ]; then limit=(-max_total_time="$amount"); else limit=(-runs="$amount"); fi
  log="$work/$t.log"
  printf '%-20s ' "$t"
  if ! (cd fuzz && cargo fuzz run "${san[@]}" "$t" "$corpus" -- "${limit[@]}" -max_len="$(max_len "$t")" \
        -print_final_stats=1 >"$log" 2>&1); then
    echo "FAILED"
    tail -40 "$log"
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  echo "ok: $runs runs, $secs runs/s, corpus $(find "$corpus" -type f | wc -l) files"
  if [ "$merge" = 1 ]; then
    mkdir -p "fuzz/corpus-seed/$t"
    fresh=$(mktemp -d)
    (cd fuzz && cargo fuzz run "${san[@]}" "$t" "$fresh" "$corpus" -- -set_cover_merge=1 -max_len="$(max_len "$t")" >"$log.merge" 2>&1)
    rm -f fuzz/corpus-seed/"$t"/*
    cp "$fresh"/* "fuzz/corpus-seed/$t/"
    rm -rf "$fresh"
    echo "  merged: fuzz/corpus-seed/$t holds $(find "fuzz/corpus-seed/$t" -type f | wc -l) files"
  fi
done
