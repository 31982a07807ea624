"""Smoke test of an installed package: every module imports and each format makes one
round trip. CI runs this file alone against the wheels of the Pythons it does not run
the whole suite on."""

from __future__ import annotations

import importlib

import pytest

import polywire

MODULES = ["kado", "toon", "tether", "axon", "kameo"]


@pytest.mark.parametrize("name", MODULES)
def test_module_imports_with_its_public_names(name):
    module = importlib.import_module(f"polywire.{name}")
    assert module.__all__
    for attr in module.__all__:
        assert hasattr(module, attr), f"polywire.{name}.{attr}"


def test_one_round_trip_per_format():
    from polywire import axon, kado, kameo, tether, toon

    value = {"tool": "read", "args": {"path": "a.txt", "lines": [1, 2, 3]}, "ok": True, "note": None}
    frame = kado.encode(kado.MessageType.TOOL_CALL, value, 7)
    assert kado.decode(frame)["payload"] == value
    assert toon.loads(toon.dumps(value)) == value
    assert tether.decode(tether.encode(["a", 1, None, True])) == ["a", 1, None, True]
    assert kameo.unpack(kameo.pack(value)) == value
    sender = axon.agent_id_from_seed(bytes(32))
    env = axon.envelope(sender, axon.agent_id_from_seed(bytes([1]) * 32), "ping", {})
    assert axon.decode(axon.encode(env)) == env
    assert polywire.__version__
