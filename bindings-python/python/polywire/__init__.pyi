from polywire._polywire import (
    AxonError as AxonError,
    KadoError as KadoError,
    KameoError as KameoError,
    LlmError as LlmError,
    PolywireError as PolywireError,
    PolywireTypeError as PolywireTypeError,
    TetherError as TetherError,
    ToonDecodeError as ToonDecodeError,
    ToonEncodeError as ToonEncodeError,
)

from polywire import axon as axon, kado as kado, kameo as kameo, llm as llm, tether as tether, toon as toon

__version__: str

__all__ = [
    "AxonError",
    "KadoError",
    "KameoError",
    "LlmError",
    "PolywireError",
    "PolywireTypeError",
    "TetherError",
    "ToonDecodeError",
    "ToonEncodeError",
    "__version__",
]
