"""Binding-level fuzz targets shared by the atheris drivers (fuzz_<format>.py)
and tests-py/test_fuzz_corpus.py: each feeds bytes to the format's Python
decoders, and a value built from the bytes to its encoders, and lets only
typed polywire errors escape."""

from __future__ import annotations

import polywire
from polywire import axon, kado, kameo, tether, toon

_LOCAL = axon.agent_id_from_seed(bytes(32))
_PEER = axon.agent_id_from_seed(bytes([1]) * 32)
TYPED = (polywire.PolywireError, polywire.PolywireTypeError)


def _value(data: bytes):
    """A JSON-ish value from bytes (decoded with the other formats' decoders)."""
    try:
        return kameo.unpack(data)
    except TYPED:
        pass
    try:
        return toon.loads(data)
    except TYPED:
        return data.decode("utf-8", "surrogateescape")


# Set by the atheris drivers to fuzz/python/feedback.observe: called with a tag
# per outcome of each call (the function, its keyword arguments, the error code
# or the size of the result), which libFuzzer sees as coverage (the native
# module has none). None when tests-py/test_fuzz_corpus.py replays the corpus.
observe = None


def _tag(fn, kwargs, outcome) -> str:
    return f"{getattr(fn, '__qualname__', '?')}({','.join(kwargs)}):{outcome}"


def _try(fn, *args, **kwargs):
    try:
        r = fn(*args, **kwargs)
    except TYPED as e:
        if observe is not None:
            observe(_tag(fn, kwargs, e.code))
        return None
    if observe is not None:
        size = len(r) if isinstance(r, (bytes, str, list, dict, tuple)) else -1
        observe(_tag(fn, kwargs, f"{type(r).__name__}/{size.bit_length() if size >= 0 else '-'}"))
    return r


def kado_target(data: bytes) -> None:
    _try(kado.decode, data, max_size=1 << 20)
    _try(kado.decode_raw, data, max_size=1 << 20)
    _try(kado.decompress, data, max_size=1 << 20)
    _try(kado.decode_header, data)
    kado.validate(data)
    dec = kado.FrameDecoder(1 << 20)
    for i in range(0, len(data), 7):
        if _try(dec.feed, data[i : i + 7]) is None:
            break
    _try(dec.finish)
    v = _value(data)
    out = _try(kado.encode, 1, v, 1, 0)
    if out is not None:
        # Text with lone surrogates encodes (as JSON.stringify writes it) but
        # the strict decoder refuses it: a typed error either way.
        _try(kado.decode, out)


def toon_target(data: bytes) -> None:
    _try(toon.loads, data)
    _try(toon.loads, data, strict=False)
    text = data.decode("utf-8", "surrogateescape")
    _try(toon.loads, text)
    v = _value(data)
    for kw in ({}, {"sort_keys": True}, {"key_folding": "safe", "delimiter": "|"}):
        out = _try(toon.dumps, v, **kw)
        if out is not None and not kw:
            toon.loads(out)


def axon_target(data: bytes) -> None:
    _try(axon.decode, data)
    _try(axon.decode, data.decode("utf-8", "surrogateescape"))
    _try(axon.Session(_LOCAL).receive, data, "bidi")
    v = _value(data)
    _try(axon.validate, v)
    # Valid agent ids and a topic: with "a"/"b" and no topic every call failed
    # on its arguments and the value never reached the encoder.
    env = _try(axon.envelope, _LOCAL, _PEER, "notify", {"topic": "fuzz.value", "data": v})
    if env is not None:
        out = _try(axon.encode, env)
        if out is not None:
            _try(axon.decode, out)


def kameo_target(data: bytes) -> None:
    for fn in (kameo.unpack, kameo.decode_request, kameo.decode_response, kameo.decode_registration,
               kameo.actor_id_from_bytes, kameo.peer_id_from_bytes, kameo.parse_metadata_key):
        _try(fn, data)
    v = _value(data)
    out = _try(kameo.pack, v)
    if out is not None:
        kameo.unpack(out)
    _try(kameo.encode_request, v)
    _try(kameo.encode_response, v)


def _tether_value(v, depth=0):
    """The parts of a JSON-ish value Tether has encodings for (dicts become lists of their
    items, floats and negative or huge ints strings), so that the encoders see deep and wide
    values, not only TETHER_UNSUPPORTED_TYPE. Below 300 levels a container becomes None
    (the decoders allow 1,024; Python's recursion limit is 1,000)."""
    if depth > 300 and isinstance(v, (dict, list, tuple)):
        return None
    if isinstance(v, dict):
        return [[_tether_value(k, depth + 1), _tether_value(x, depth + 1)] for k, x in v.items()]
    if isinstance(v, (list, tuple)):
        return [_tether_value(x, depth + 1) for x in v]
    if isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool) and not 0 <= v <= tether.MAX_SMALL_INTEGER):
        return str(v)
    return v


def tether_target(data: bytes) -> None:
    latin1 = bool(data[:1]) and data[0] & 1 == 1
    for fn in (tether.decode, tether.decode_answer, tether.decode_message_send):
        _try(fn, data, latin1=latin1)
    _try(tether.decode, data, max_depth=4)
    _try(tether.decode_handshake, data)
    text = data.decode("utf-8", "surrogateescape")
    _try(tether.from_hex, text)
    _try(tether.decode_result_hex, text)
    _try(tether.read_tool_result, text)
    decoded = _try(tether.decode, data)
    if decoded is not None:
        # Whatever decodes re-encodes to the same bytes.
        assert tether.encode(decoded) == bytes(data), data
    v = _tether_value(_value(data))
    out = _try(tether.encode, v, latin1=latin1)
    if out is not None:
        back = tether.decode(out, latin1=latin1)
        assert tether.encode(back, latin1=latin1) == out
        assert tether.from_hex(tether.to_hex(out), words=False) == out
    _try(tether.encode_answer, v, "0a0b0c0d-0000-4000-8000-000000000000", latin1=latin1)
    _try(tether.encode_message_send, 7, "at:put:", [v, v] if isinstance(v, list) else [v])
    _try(tether.tool_arguments, v, "printString", [])


TARGETS = {"kado": kado_target, "toon": toon_target, "axon": axon_target, "kameo": kameo_target, "tether": tether_target}
