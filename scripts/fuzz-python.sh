#!/usr/bin/env bash
# Fuzz the Python binding with atheris, CI-sized: each target of fuzz/python
# (fuzz_<target>.py: kado, toon, tether, axon, kameo) runs RUNS executions starting
# from its committed corpus fuzz/python/corpus/<target>/. New inputs go to a
# scratch directory (the committed corpus is never written). Any finding (an
# untyped exception escaping a target, a crash, a hang, running out of memory)
# fails the script; the reproducer is kept in the scratch directory.
#
#   scripts/fuzz-python.sh [RUNS] [TARGET...]      (RUNS defaults to 20000)
#
# Uses the polywire installed in .venv (or $PYTHON): build it first, e.g.
# ./scripts/test.sh (release build). Installs atheris with pip if missing.
# FUZZ_SCRATCH=<dir> keeps the scratch corpora there (default: a temporary
# directory, removed when every target passed); FUZZ_LOCK=<file> runs each
# target under `flock <file>` (a shared machine's build lock).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20000}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(kado toon tether axon kameo)
case $runs in '' | *[!0-9]*) echo "fuzz-python: RUNS must be a number, got '$runs'" >&2; exit 2 ;; esac

if [ -n "${PYTHON:-}" ]; then PY=$PYTHON
elif [ -x .venv/bin/python ]; then PY=.venv/bin/python
else PY=python3; fi
"$PY" -c 'import polywire' || { echo "fuzz-python: FAIL: polywire is not importable by $PY (run ./scripts/test.sh first)" >&2; exit 2; }
"$PY" -c 'import atheris' 2>/dev/null || "$PY" -m pip install -q atheris

if [ -n "${FUZZ_SCRATCH:-}" ]; then scratch=$FUZZ_SCRATCH; keep=1; mkdir -p "$scratch"
else scratch=$(mktemp -d "${TMPDIR:-/tmp}/polywire-fuzz-python.XXXXXX"); keep=0; fi
lock=()
[ -n "${FUZZ_LOCK:-}" ] && lock=(flock "$FUZZ_LOCK")

summary=()
failed=()
for t in "${targets[@]}"; do
    [ -f "fuzz/python/fuzz_$t.py" ] || { echo "fuzz-python: no target fuzz/python/fuzz_$t.py" >&2; exit 2; }
    mkdir -p "$scratch/$t" "$scratch/artifacts/$t"
    log=$scratch/$t.log
    echo "==== fuzz_$t: $runs runs (corpus fuzz/python/corpus/$t, new inputs in $scratch/$t)"
    # -timeout: one input taking 60 s is a hang; -rss_limit_mb: runaway memory.
    rc=0
    "${lock[@]}" "$PY" "fuzz/python/fuzz_$t.py" -runs="$runs" -timeout=60 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$scratch/artifacts/$t/" \
        "$scratch/$t" "fuzz/python/corpus/$t" >"$log" 2>&1 || rc=$?
    done_line=$(grep -E '^Done [0-9]+ runs in' "$log" | tail -1 || true)
    execs=$(grep -E '^stat::number_of_executed_units:' "$log" | tail -1 | awk '{print $2}' || true)
    speed=$(grep -E '^stat::average_exec_per_sec:' "$log" | tail -1 | awk '{print $2}' || true)
    if [ "$rc" -ne 0 ] || [ -z "$done_line" ]; then
        tail -60 "$log"
        artifact=$(ls "$scratch/artifacts/$t/" 2>/dev/null | head -1 || true)
        failed+=("$t (exit $rc${artifact:+, reproducer $scratch/artifacts/$t/$artifact})")
        keep=1
    else
        echo "$done_line"
    fi
    summary+=("$t ${execs:-?} runs at ${speed:-?} exec/s")
done

[ "$keep" = 1 ] || rm -rf "$scratch"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz-python: FAIL: finding in ${failed[*]}; logs in $scratch"
    exit 1
fi
echo "fuzz-python: OK: $(IFS=';'; echo "${summary[*]}" | sed 's/;/, /g'), no finding"
