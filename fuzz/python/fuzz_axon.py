"""atheris driver for the Python binding's axon target (see targets.py).

    python fuzz/python/fuzz_axon.py fuzz/python/corpus/axon -runs=1000000
"""

import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(__file__))
with atheris.instrument_imports():
    import targets
    from targets import TARGETS
import feedback  # noqa: E402

targets.observe = feedback.observe

if __name__ == "__main__":
    atheris.Setup(sys.argv, TARGETS["axon"])
    atheris.Fuzz()
