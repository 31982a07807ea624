"""atheris driver for the Python binding's kado target (see targets.py, driver.py).

    python fuzz/python/fuzz_kado.py fuzz/python/corpus/kado -runs=1000000
"""

import driver

if __name__ == "__main__":
    driver.main("kado")
