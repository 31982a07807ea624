"""``python -m polywire``: the ``polywire`` command (see :mod:`polywire.cli`)."""

import sys

from polywire.cli import main

if __name__ == "__main__":
    sys.exit(main())
