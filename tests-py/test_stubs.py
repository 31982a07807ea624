"""The type stubs (bindings-python/python/polywire/*.pyi) against the runtime.

- mypy's stubtest compares every stub with the installed package: names, ``__all__``,
  signatures and defaults, classes (``@final`` for the native classes, ``__new__``
  constructors). tests-py/stubtest-allowlist.txt lists the only exceptions, the
  typing-only names, and stubtest fails on an entry that is no longer needed.
- tests-py/typing_usage.py uses every module as an application would; it must pass
  ``mypy --strict`` (its ``type: ignore`` lines check that misuse is rejected) and run.
- The native functions spell their constant defaults out in ``text_signature``
  (pyo3 would show ``...``); those numbers must equal the constants.
"""

import inspect
import subprocess
import sys

import pytest

from conftest import ROOT

pytest.importorskip("mypy")

ALLOWLIST = ROOT / "tests-py" / "stubtest-allowlist.txt"
USAGE = ROOT / "tests-py" / "typing_usage.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_stubtest():
    # --mypy-config-file /dev/null: no user or project mypy configuration changes the result.
    r = run("mypy.stubtest", "polywire", "--allowlist", str(ALLOWLIST), "--mypy-config-file", "/dev/null")
    assert r.returncode == 0, r.stdout + r.stderr


def test_usage_type_checks_strict(tmp_path):
    r = run("mypy", "--strict", "--config-file", "/dev/null", "--cache-dir", str(tmp_path), str(USAGE))
    assert r.returncode == 0, r.stdout + r.stderr


def test_usage_runs():
    r = subprocess.run([sys.executable, str(USAGE)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_text_signature_defaults_are_the_constants():
    from polywire import _polywire, axon, kado, tether

    def defaults(f):
        return {p.name: p.default for p in inspect.signature(f).parameters.values() if p.default is not p.empty}

    for f in (tether.encode, tether.decode, tether.encode_message_send, tether.encode_answer,
              _polywire.tether.decode_message_send, _polywire.tether.decode_answer):
        assert defaults(f)["max_depth"] == tether.DEFAULT_MAX_DEPTH, f.__name__
    assert defaults(kado.FrameDecoder) == {"max_frame_size": kado.DEFAULT_MAX_FRAME_SIZE, "raw": False}
    session = defaults(axon.Session)
    assert session["replay_window_ms"] == axon.REPLAY_WINDOW_MS
    assert session["replay_capacity"] == _polywire.axon.REPLAY_CACHE_CAPACITY
    # No native function or class shows a default as `...`.
    for module in (_polywire.kado, _polywire.tether, _polywire.axon, _polywire.kameo):
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and getattr(obj, "__text_signature__", None):
                assert "..." not in obj.__text_signature__, f"{module.__name__}.{name}{obj.__text_signature__}"
