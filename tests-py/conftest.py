import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT / "vectors"


def load_vectors(name: str):
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    return ROOT
