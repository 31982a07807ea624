"""atheris driver for the Python binding's tether target (see targets.py, driver.py).

    python fuzz/python/fuzz_tether.py fuzz/python/corpus/tether -runs=1000000
"""

import driver

if __name__ == "__main__":
    driver.main("tether")
