"""Outcome feedback for the atheris drivers (fuzz_<target>.py).

atheris instruments Python code only: the native module, where the decoders
and encoders live, gives libFuzzer no coverage, so on its own it keeps a
handful of tiny inputs (13 edges, all in targets.py). `observe(tag)` turns each
outcome of a call (which function, which error code or how large a result) into
a distinct edge of an instrumented branch tree, so inputs that reach a new error
code or a new result size are kept and mutated further.
"""

from __future__ import annotations

import atheris

# 16 trees of 128 leaves (2,048 outcomes): atheris instruments a function in
# time quadratic in its size (one 2,048-leaf tree takes a minute).
TREES, LEAVES = 16, 128
_ids: dict[str, int] = {}


def _make_branch(n: int):
    lines = ["def branch(i):"]

    def emit(lo: int, hi: int, ind: int) -> None:
        if hi - lo == 1:
            lines.append(" " * ind + f"return {lo}")
            return
        mid = (lo + hi) // 2
        lines.append(" " * ind + f"if i < {mid}:")
        emit(lo, mid, ind + 4)
        lines.append(" " * ind + "else:")
        emit(mid, hi, ind + 4)

    emit(0, LEAVES, 4)
    ns: dict = {}
    exec(compile("\n".join(lines), f"<feedback {n}>", "exec"), ns)
    return atheris.instrument_func(ns["branch"])


_branches = [_make_branch(n) for n in range(TREES)]


def observe(tag: str) -> None:
    i = _ids.get(tag)
    if i is None:
        i = _ids[tag] = len(_ids) % (TREES * LEAVES)
    _branches[i // LEAVES](i % LEAVES)
