#!/usr/bin/env bash
# Run the hostile-input tests of the Python binding under valgrind memcheck:
# any invalid read or write (a use-after-free in a Python walk) fails.
#
#   scripts/memcheck.sh [pytest args...]
#
# Runs the whole of tests-py/test_hostile.py (every issue #16 recipe in process,
# every mutating-dunder case against every encoder, ...; about a minute under
# valgrind), tests-py/test_hostile_tether.py and tests-py/test_arguments.py (every
# public callable with hostile and wrong-typed arguments: subclasses, objects
# whose dunders raise), except the `subprocess` variants (a child Python would
# run outside valgrind) and the `timing` tests (valgrind slows code unevenly, so
# their time ratios mean nothing there; a small-input twin of each runs instead).
#
# Uses the polywire installed in .venv (or $PYTHON): build it first, e.g.
# ./scripts/test.sh (the release build). Installs valgrind with apt if missing.
# PYTHONMALLOC=malloc sends every object to the system allocator, so a freed
# object is visible to valgrind (pymalloc arenas would hide it).
# Uninitialised-value tracking is off: CPython's own startup triggers it, and a
# use-after-free is an invalid read/write, which stays on.
# Before the tests, a canary (a read of freed memory through ctypes) must be
# reported, so a valgrind that detects nothing cannot pass silently.
#
# Exit status: 0 clean; 1 valgrind reported a memory error; 2 the tests failed
# (or crashed, or the canary went unreported, or setup failed). The last line
# says which.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
fail() { echo "memcheck: FAIL: $*"; exit "${code:-2}"; }

if ! command -v valgrind >/dev/null; then
    echo "memcheck: installing valgrind"
    sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq valgrind >/dev/null \
        || fail "could not install valgrind"
fi

if [ -n "${PYTHON:-}" ]; then PY=$PYTHON
elif [ -x .venv/bin/python ]; then PY=.venv/bin/python
else PY=python3; fi
where=$("$PY" -c 'import polywire._polywire as m; print(m.__file__)') \
    || fail "polywire is not importable by $PY (run ./scripts/setup.sh and ./scripts/test.sh first)"
echo "memcheck: $("$PY" -V) ($PY), polywire native module $where"

# --exit-on-first-error: the first invalid access is the one to read (a
# use-after-free is followed by a cascade, then often a segfault).
VG=(valgrind --tool=memcheck --error-exitcode=99 --exit-on-first-error=yes --undef-value-errors=no
    --leak-check=no --track-origins=no --num-callers=30 -q --suppressions=scripts/memcheck.supp)
export PYTHONMALLOC=malloc PYTHONDONTWRITEBYTECODE=1

# The canary: valgrind must report this read of a freed block.
canary='import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
p = libc.malloc(64)
libc.free(p)
ctypes.string_at(p, 8)'
rc=0
"${VG[@]}" "$PY" -c "$canary" >/dev/null 2>&1 || rc=$?
[ "$rc" = 99 ] || fail "valgrind did not report the canary's read of freed memory (exit $rc): memcheck would miss a use-after-free"

tests=(tests-py/test_hostile.py)
for t in tests-py/test_hostile_tether.py tests-py/test_arguments.py; do [ -f "$t" ] && tests+=("$t"); done
vglog=$(mktemp "${TMPDIR:-/tmp}/memcheck.XXXXXX")
trap 'rm -f "$vglog"' EXIT
rc=0
timeout "${MEMCHECK_TIMEOUT:-1200}" "${VG[@]}" --log-file="$vglog" "$PY" -m pytest -q -p no:cacheprovider -k "not subprocess" -m "not timing" "${tests[@]}" "$@" || rc=$?
took=$((SECONDS - start))
if [ -s "$vglog" ]; then echo "---- valgrind:"; cat "$vglog"; fi
first=$(grep -m1 -E '== (Invalid (read|write|free)|Mismatched free|Source and destination overlap|Process terminating)' "$vglog" | sed 's/^==[0-9]*== //' || true)
case $rc in
    0) echo "memcheck: OK: ${tests[*]} under valgrind, no invalid read or write (${took}s)" ;;
    99) code=1 fail "valgrind: ${first:-a memory error} (use-after-free?) in ${tests[*]}; report above (${took}s)" ;;
    124) fail "timed out after ${MEMCHECK_TIMEOUT:-1200}s" ;;
    *) [ -z "$first" ] || code=1
       fail "pytest exit $rc under valgrind (a failing test or a crash${first:+; valgrind: $first}; see above) (${took}s)" ;;
esac
