"""The atheris driver behind fuzz_<target>.py: runs one binding-level target of
targets.py, with targets.py instrumented and outcome feedback (feedback.py) on.

    python fuzz/python/fuzz_kado.py fuzz/python/corpus/kado -runs=1000000
"""

import os
import sys

import atheris


def main(name: str) -> None:
    sys.path.insert(0, os.path.dirname(__file__))
    with atheris.instrument_imports():
        import targets
    import feedback

    targets.observe = feedback.observe
    atheris.Setup(sys.argv, targets.TARGETS[name])
    atheris.Fuzz()
