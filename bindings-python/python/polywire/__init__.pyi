from polywire._polywire import (
    AxonError as AxonError,
    KadoError as KadoError,
    KameoError as KameoError,
    PolywireError as PolywireError,
    PolywireTypeError as PolywireTypeError,
    TetherError as TetherError,
    ToonDecodeError as ToonDecodeError,
    ToonEncodeError as ToonEncodeError,
)

__version__: str

__all__ = [
    "AxonError",
    "KadoError",
    "KameoError",
    "PolywireError",
    "PolywireTypeError",
    "TetherError",
    "ToonDecodeError",
    "ToonEncodeError",
    "__version__",
]
