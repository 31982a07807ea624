"""atheris driver for the Python binding's axon target (see targets.py, driver.py).

    python fuzz/python/fuzz_axon.py fuzz/python/corpus/axon -runs=1000000
"""

import driver

if __name__ == "__main__":
    driver.main("axon")
