"""The ``polywire`` command (``python -m polywire``, the ``polywire`` console script).

One implementation, in Rust (the crate ``polywire-cli``), which the npm package's
command runs too: JSON <-> TOON as ``@toon-format/cli`` converts them, ``tokens``,
``choose``, ``kado dump`` and ``tether hex|unhex`` (``polywire --help``).
"""

from __future__ import annotations

import sys
from typing import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``polywire`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit
    status: 0, 1 after an error (``polywire: <message>`` on stderr), 2 for a bad command line,
    128 + the signal after SIGINT or SIGTERM. It reads and writes the standard descriptors
    (0, 1, 2) itself, with the GIL released."""
    from polywire._polywire import cli

    for stream in (sys.stdout, sys.stderr):  # what the program wrote before goes first
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    return cli.main(list(sys.argv[1:] if argv is None else argv))
