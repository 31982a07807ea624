#!/usr/bin/env bash
# Run the hostile-input tests of the Python binding under valgrind memcheck:
# any invalid read or write (a use-after-free in a Python walk) fails.
#
#   scripts/memcheck.sh [pytest args...]
#
# Uses the installed `polywire` of the active Python (build it first, e.g.
# `maturin develop --release`). PYTHONMALLOC=malloc sends every object to the
# system allocator, so a freed object is visible to valgrind (pymalloc arenas
# would hide it). Uninitialised-value tracking is off: CPython's own startup
# triggers it, and a use-after-free is an invalid read/write, which stays on.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
    else sudo apt-get update -qq && sudo apt-get install -y -qq valgrind >/dev/null; fi
fi
PY=${PYTHON:-python}
tests=(tests-py/test_hostile.py)
[ -f tests-py/test_hostile_tether.py ] && tests+=(tests-py/test_hostile_tether.py)
# The subprocess variants would run outside valgrind: skip them here.
PYTHONMALLOC=malloc exec valgrind --tool=memcheck --error-exitcode=1 --undef-value-errors=no \
    --leak-check=no --track-origins=no -q --suppressions=scripts/memcheck.supp \
    "$PY" -m pytest -q -p no:cacheprovider -k "not subprocess" "${tests[@]}" "$@"
