from typing import Any, Literal

from pydantic import BaseModel
from typing_extensions import Self

from polywire.toon import Delimiter

__all__ = ["ToonPydanticModel"]

class ToonPydanticModel(BaseModel):
    """A :class:`pydantic.BaseModel` that reads and writes TOON."""

    @classmethod
    def schema_to_toon(cls, *, indent_size: int = 2, delimiter: Literal[",", "\t", "|"] | Delimiter = ",") -> str:
        """Return the model's JSON schema (``model_json_schema()``) encoded as TOON."""
    def model_dump_toon(self, *, indent_size: int = 2, delimiter: Literal[",", "\t", "|"] | Delimiter = ",", **kwargs: Any) -> str:
        """Serialize the model to TOON: ``model_dump(mode="json", **kwargs)`` encoded by
        :func:`polywire.toon.dumps`."""
    @classmethod
    def model_validate_toon(cls, text: str | bytes, *, strict: bool | None = None, **kwargs: Any) -> Self:
        """Decode TOON with :func:`polywire.toon.loads` and validate it with ``model_validate``.

        Raises :class:`polywire.toon.ToonDecodeError` for text that is not valid TOON and
        :class:`pydantic.ValidationError` for data that does not match the model.
        """
