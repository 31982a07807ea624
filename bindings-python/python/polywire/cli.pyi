# The stub of polywire.cli (its only public name is `main`). Without it, stubtest on
# Python 3.9 takes the module's own `typing` imports for public names.
from typing import Sequence

__all__ = ["main"]

def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``polywire`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit
    status: 0, 1 after an error (``polywire: <message>`` on stderr), 2 for a bad command line,
    128 + the signal after SIGINT or SIGTERM. It reads and writes the standard descriptors
    (0, 1, 2) itself, with the GIL released."""
