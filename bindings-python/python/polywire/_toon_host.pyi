# The private helper module of polywire.toon's native encoder (see _toon_host.py).
# A stub of its own so that type checkers see only its names, not its imports.
from decimal import Decimal
from typing import Any, Callable, Optional, Tuple

VALUE: int
NUMBER: int
UNSUPPORTED: int
BAD_KEY: int
DUPLICATE_KEY: int
MAPPING: int

def convert(value: Any, default: Optional[Callable[[Any], Any]], sort_keys: bool) -> Tuple[int, Any]: ...
def decimal_text(value: Decimal) -> str: ...
def surrogate_message(value: str) -> str: ...
