"""help() shows a real docstring for every public function, class, method and property of
every module (the native ones included: their docs are the Rust doc comments)."""

from __future__ import annotations

import importlib
import inspect
import typing

import pytest

MODULES = ["kado", "toon", "tether", "axon", "kameo"]


def public_objects():
    for mod in MODULES:
        m = importlib.import_module(f"polywire.{mod}")
        for name in m.__all__:
            obj = getattr(m, name)
            if isinstance(obj, (str, bytes, int, float, dict, list, tuple, frozenset)) or typing.get_origin(obj):
                continue  # constants and type aliases
            if not (callable(obj) or inspect.isclass(obj)):
                continue
            yield f"{mod}.{name}", obj
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if callable(member) or isinstance(member, (property, staticmethod, classmethod)) or type(
                        member
                    ).__name__ in ("getset_descriptor", "method_descriptor", "classmethod_descriptor"):
                        yield f"{mod}.{name}.{attr}", member


OBJECTS = dict(public_objects())


def test_the_sweep_is_not_empty():
    assert len(OBJECTS) > 90
    assert "kado.FrameDecoder.feed" in OBJECTS and "axon.Session.ready" in OBJECTS


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_public_object_has_a_docstring(name):
    obj = OBJECTS[name]
    doc = getattr(obj, "__doc__", None)
    if doc and inspect.isclass(obj) and doc == getattr(type(obj), "__doc__", None):
        doc = None
    # A native function without a doc comment has no __doc__ (or only its signature).
    text = (doc or "").strip()
    if text.startswith(name.rsplit(".", 1)[-1] + "("):
        text = text.split("\n", 1)[1].strip() if "\n" in text else ""
    assert len(text) >= 10, f"{name} has no docstring: help() shows only its signature"
