"""atheris driver for the Python binding's toon target (see targets.py, driver.py).

    python fuzz/python/fuzz_toon.py fuzz/python/corpus/toon -runs=1000000
"""

import driver

if __name__ == "__main__":
    driver.main("toon")
