"""atheris driver for the Python binding's kameo target (see targets.py, driver.py).

    python fuzz/python/fuzz_kameo.py fuzz/python/corpus/kameo -runs=1000000
"""

import driver

if __name__ == "__main__":
    driver.main("kameo")
