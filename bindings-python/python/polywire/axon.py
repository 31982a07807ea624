"""AXON v2 message types: agent-to-agent JSON envelopes (upstream hwbehrens/axon v0.1.0-v0.2.0).

An envelope is ``{"v", "id", "from", "to", "ts", "kind", "ref", "payload"}``, one per QUIC
stream, at most 65,536 bytes. :func:`decode` validates in upstream's order (field types, then
the kind, then ``v >= 1``, ``ts > 0`` and agent ids, then the kind's payload schema) and
returns a dict with ids lowercase, ``ref`` None when absent, unknown envelope fields dropped,
unknown payload fields kept and the payload defaults filled in (``priority`` "normal",
``report_back`` True, ``importance`` "low", ``retryable`` False, query ``max_tokens`` 0 = no
limit and ``deadline_ms`` 30000, empty ``features``/``domains``/``channels``/``tools``).
:func:`encode` writes what upstream writes: envelope fields in order, ``ref`` omitted when
None, payload keys sorted, no whitespace.

Every failure raises :class:`AxonError` (a ``ValueError``) whose ``code`` is the protocol's
own error code (``invalid_envelope``, ``unknown_kind``, ``incompatible_version``,
``not_authorized``, ``peer_not_found``, ...) and whose message says what to do instead; an
error reply for a peer is ``error_envelope(request, e.code, e.msg)``.

:class:`Session` is a sans-IO connection endpoint: it enforces "nothing before hello
completes" (unidirectional messages dropped, bidirectional requests answered
``not_authorized``), matches replies to requests by ``ref`` and drops an ``id`` seen in the
last 300 s. Pass the clock in (``now_ms``) for deterministic behaviour.

:class:`DaemonClient` (from :mod:`polywire.axon_daemon`, pure Python) talks to a running
upstream daemon (v0.7.x and main) over its Unix socket: ``send`` requests and messages,
``peers``, ``status``, ``whoami``, ``add_peer`` and its ``inbound`` and ``pair_request``
events; its errors are :class:`AxonDaemonError` subclasses.
"""

from __future__ import annotations

from polywire._polywire import AxonError
from polywire._polywire import axon as _native

__all__ = [
    "DEFAULT_DEADLINE_MS",
    "ERROR_CODES",
    "KINDS",
    "KIND_RULES",
    "MAX_MESSAGE_SIZE",
    "OPTIONAL_KINDS",
    "PAYLOAD_DEFAULTS",
    "PROTOCOL_VERSION",
    "REPLAY_WINDOW_MS",
    "REQUIRED_KINDS",
    "AxonError",
    "Session",
    "agent_id",
    "agent_id_from_seed",
    "decode",
    "encode",
    "envelope",
    "error_envelope",
    "is_agent_id",
    "negotiate",
    "public_key_from_seed",
    "reply",
    "same_agent",
    "validate",
]

PROTOCOL_VERSION: int = _native.PROTOCOL_VERSION
MAX_MESSAGE_SIZE: int = _native.MAX_MESSAGE_SIZE
REPLAY_WINDOW_MS: int = _native.REPLAY_WINDOW_MS
DEFAULT_DEADLINE_MS: int = _native.DEFAULT_DEADLINE_MS

KIND_RULES: dict = _native.kind_rules()
"""Per kind: ``required``, ``expects_response``, ``response_kinds``, ``later_responses``,
``stream`` ("bidirectional"/"unidirectional") and ``fields`` ((name, required) pairs)."""
KINDS: tuple = tuple(KIND_RULES)
REQUIRED_KINDS: tuple = tuple(k for k, r in KIND_RULES.items() if r["required"])
OPTIONAL_KINDS: tuple = tuple(k for k, r in KIND_RULES.items() if not r["required"])
ERROR_CODES: tuple = (
    "not_authorized", "unknown_domain", "overloaded", "internal", "timeout",
    "cancelled", "incompatible_version", "unknown_kind", "peer_not_found", "invalid_envelope",
)
PAYLOAD_DEFAULTS: dict = _native.payload_defaults()

decode = _native.decode
encode = _native.encode
validate = _native.validate
envelope = _native.envelope
reply = _native.reply
error_envelope = _native.error_envelope
agent_id = _native.agent_id
agent_id_from_seed = _native.agent_id_from_seed
public_key_from_seed = _native.public_key_from_seed
is_agent_id = _native.is_agent_id
same_agent = _native.same_agent
negotiate = _native.negotiate
Session = _native.Session


# ---------------------------------------------------------------- axon/1 and the peer
#
# ``polywire.axon.axon1``: the envelopes of today's protocol (a module of its own, also
# importable as ``import polywire.axon.axon1``). ``Peer``: an AXON peer over QUIC with mutual
# TLS that talks to real AXON daemons in either generation (the core's
# ``polywire::axon::peer``, on a thread and runtime of its own); every operation is a
# coroutine of the event loop the peer was started in and never blocks it.

import asyncio as _asyncio
import math as _math
import os as _os
import time as _time

from polywire._polywire import PolywireTypeError as _PolywireTypeError
from polywire._peer_loop import PeerLoop as _PeerLoop
from polywire._peer_loop import text_of as _text_of
from polywire._polywire import axon_peer as _peer

_sched_yield = getattr(_os, "sched_yield", lambda: None)  # not on Windows

# polywire.axon is a module, and a package for one submodule: `polywire.axon.axon1`
# (axon/axon1.py beside this file), the envelopes of today's protocol, imported here as
# the attribute `axon1` and importable as `import polywire.axon.axon1`.
__path__ = [_os.path.join(_os.path.dirname(__file__), "axon")]

import importlib as _importlib  # noqa: E402

axon1 = _importlib.import_module("polywire.axon.axon1")

__all__ += [
    "AxonClosedError",
    "AxonConnectionLostError",
    "AxonHandshakeError",
    "AxonInvalidArgumentError",
    "AxonInvalidReplyError",
    "AxonMessageTooLargeError",
    "AxonPeerError",
    "AxonRemoteError",
    "AxonStartError",
    "AxonTimeoutError",
    "AxonUnknownPeerError",
    "AxonUnreachableError",
    "MAX_BUSY_POLL",
    "PROTOCOLS",
    "Peer",
]

PROTOCOLS: tuple = ("axon/1", "v2")
"""The protocol generations a :class:`Peer` speaks: ``"axon/1"`` (upstream v0.3.0 and later,
the default) and ``"v2"`` (upstream v0.2.0, the design document's)."""
#: The longest ``busy_poll`` window :meth:`Peer.start` accepts, in seconds.
MAX_BUSY_POLL: float = 0.001


class AxonPeerError(AxonError):
    """An operation of a :class:`Peer` failed; ``code`` is stable (``AXON_TIMEOUT``, ...)."""

    code: str = "AXON_PEER_ERROR"

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.msg = message
        self.offset = self.line = self.column = None


class AxonRemoteError(AxonPeerError):
    """The peer answered with an ``error``: ``remote_code``, ``message`` and ``retryable`` are
    the reply's (``code`` is ``AXON_REMOTE_ERROR``). Raise ``AxonRemoteError(code, message,
    retryable=False)`` from a served handler to reply with that error."""

    code = "AXON_REMOTE_ERROR"

    def __init__(self, code: str = "", message: str = "", retryable: bool = False):
        super().__init__(f"{code}: {message}" if message else code)
        self.remote_code = code
        self.message = message
        self.retryable = retryable


def _peer_error_class(name: str, code: str, doc: str) -> type:
    return type(name, (AxonPeerError,), {"__doc__": doc, "code": code, "__module__": __name__})


AxonTimeoutError = _peer_error_class("AxonTimeoutError", "AXON_TIMEOUT", "No reply within the request's timeout.")
AxonHandshakeError = _peer_error_class(
    "AxonHandshakeError", "AXON_HANDSHAKE_REFUSED",
    "The TLS handshake (or v2's hello) was refused: a key not pinned on either side, another ALPN or protocol generation.")
AxonUnreachableError = _peer_error_class("AxonUnreachableError", "AXON_UNREACHABLE", "The peer could not be reached in time.")
AxonUnknownPeerError = _peer_error_class("AxonUnknownPeerError", "AXON_UNKNOWN_PEER", "No peer with that agent id is known (add_peer it first).")
AxonInvalidReplyError = _peer_error_class(
    "AxonInvalidReplyError", "AXON_INVALID_REPLY", "The reply was not a valid answer to the request (wrong ref or kind, invalid, none).")
AxonMessageTooLargeError = _peer_error_class("AxonMessageTooLargeError", "AXON_MESSAGE_TOO_LARGE", "A message over 65,536 bytes.")
AxonConnectionLostError = _peer_error_class("AxonConnectionLostError", "AXON_CONNECTION_LOST", "The connection closed before the reply.")
AxonClosedError = _peer_error_class("AxonClosedError", "AXON_CLOSED", "The peer is closed (or closed while the operation was in flight).")
AxonStartError = _peer_error_class("AxonStartError", "AXON_START_FAILED", "The peer could not start (the address could not be bound, ...).")
AxonInvalidArgumentError = _peer_error_class("AxonInvalidArgumentError", "AXON_INVALID_ARGUMENT", "An argument's value is not valid.")

_BY_CODE = {
    cls.code: cls
    for cls in (AxonTimeoutError, AxonHandshakeError, AxonUnreachableError, AxonUnknownPeerError, AxonInvalidReplyError,
                AxonMessageTooLargeError, AxonConnectionLostError, AxonClosedError, AxonStartError, AxonInvalidArgumentError)
}


def _error_of(info) -> AxonPeerError:
    code, message, remote_code, remote_message, retryable = info
    if code == "AXON_REMOTE_ERROR":
        return AxonRemoteError(remote_code or "", remote_message or "", bool(retryable))
    e = _BY_CODE.get(code, AxonPeerError)(message)
    e.code = code
    return e


def _type_error(message: str) -> Exception:
    e = _PolywireTypeError(message)
    e.code, e.offset, e.line, e.column, e.msg = "AXON_INVALID_ARGUMENT", None, None, None, message
    return e


def _text(value, name: str) -> str:
    if not isinstance(value, str):
        raise _type_error(f"{name} must be a str, not {type(value).__name__}")
    text = str.__str__(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise AxonInvalidArgumentError(f"{name} holds an unpaired surrogate (expected valid Unicode text)") from None
    return text


def _opt_text(value, name: str):
    return None if value is None else _text(value, name)


def _dict(value, name: str) -> dict:
    if not isinstance(value, dict):
        raise _type_error(f"{name} must be a dict, not {type(value).__name__}")
    return value


def _seconds(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _type_error(f"{name} must be a number of seconds (int or float), not {type(value).__name__}")
    if isinstance(value, int):
        if value < 0 or value > 10**9:
            raise AxonInvalidArgumentError(f"{name} must be from 0 to 1e9 seconds")
        return float(int.__int__(value))
    value = float.__float__(value)
    if not _math.isfinite(value) or value < 0 or value > 1e9:
        raise AxonInvalidArgumentError(f"{name} must be a finite number of seconds from 0 to 1e9, got {value!r}")
    return value


def _peer_spec(value) -> tuple:
    """A peer to pin: an enrollment token, or a mapping ``{"agent_id"?, "pubkey", "addr"?}``."""
    if isinstance(value, str):
        return ("token", _text(value, "peer token"))
    if not isinstance(value, dict):
        raise _type_error(f"a peer must be an enrollment token (str) or a dict with pubkey and addr, not {type(value).__name__}")
    keys = list(dict.keys(value))
    unknown = [k for k in keys if not isinstance(k, str) or k not in ("agent_id", "pubkey", "public_key", "addr")]
    if unknown:
        raise AxonInvalidArgumentError(f"unknown keys in a peer mapping: {unknown!r} (expected agent_id, pubkey, addr)")
    pubkey = dict.get(value, "pubkey", dict.get(value, "public_key"))
    if pubkey is None:
        raise AxonInvalidArgumentError("a peer mapping needs a pubkey (standard base64 of the 32-byte Ed25519 public key)")
    return ("parts", _opt_text(dict.get(value, "agent_id"), "agent_id"), _text(pubkey, "pubkey"),
            _opt_text(dict.get(value, "addr"), "addr"))


def _identity(value) -> tuple:
    """``(seed, key file path)``."""
    if value is None:
        return None, None
    if isinstance(value, (bytes, bytearray, memoryview)):
        seed = bytes(value)
        if len(seed) != 32:
            raise AxonInvalidArgumentError(f"identity must be a 32-byte seed, got {len(seed)} bytes")
        return seed, None
    if isinstance(value, str) or hasattr(type(value), "__fspath__"):
        try:
            path = _os.fspath(value)
        except Exception as e:  # noqa: BLE001 - a hostile __fspath__
            raise _type_error(f"identity: the path could not be read ({type(e).__name__})") from None
        if isinstance(path, bytes):
            path = _os.fsdecode(path)
        if not isinstance(path, str):
            raise _type_error("identity must be a 32-byte seed, a path to an identity.key file, or None")
        return None, _text(path, "identity")
    raise _type_error(f"identity must be a 32-byte seed, a path to an identity.key file, or None, not {type(value).__name__}")


class Peer(_PeerLoop):
    """An AXON peer this program owns: it talks to AXON daemons (and to other peers) over QUIC
    with mutual TLS. Start one with ``await Peer.start(...)``; close it with ``await
    peer.close()`` or ``async with``.

    ``protocol="axon/1"`` (default) is today's protocol (upstream v0.3.0 and later); ``"v2"``
    is upstream v0.2.0's (the design document's): hello first, the lower agent id dials,
    ``ping``/``discover`` answered by the peer itself. Both sides must pin each other's key
    (enrollment tokens both ways); an unknown peer is refused in the TLS handshake and shows
    up in :meth:`inbound` as a ``pair_request``. mDNS discovery is not supported."""

    # What _PeerLoop (the way back from the native peer to the loop) raises and reports.
    _closed_error = AxonClosedError
    _closed_text = "the peer is closed"
    _start_error = AxonStartError
    _origin = "polywire.axon"

    def __init__(self, *args, **kwargs):
        raise _type_error("start a peer with: peer = await Peer.start(...)")

    @classmethod
    async def start(
        cls,
        *,
        identity=None,
        listen: str = "127.0.0.1:0",
        peers=(),
        protocol: str = "axon/1",
        capabilities: dict | None = None,
        agent_name: str | None = None,
        request_timeout: float = 30.0,
        handler_timeout: float = 30.0,
        busy_poll: float = 50e-6,
    ) -> Peer:
        """Start a peer listening on ``listen`` (UDP ``ip:port``; port 0 picks one).

        ``identity``: a 32-byte Ed25519 seed, the path of an upstream ``identity.key`` file (to
        reuse a daemon's identity), or None for a new one. ``peers``: peers to pin, each an
        enrollment token (``axon://<key>@host:port``) or a mapping ``{"agent_id", "pubkey",
        "addr"}``; they are dialed and kept connected. ``capabilities`` (v2): the payload a
        ``discover`` is answered with; ``agent_name`` (v2): the name in ``hello``.
        ``request_timeout``: the default timeout of :meth:`request` and :meth:`send`;
        ``handler_timeout``: how long a served request may take before it is answered with
        ``timeout``. ``busy_poll``: how long (seconds, at most 0.001) the peer's network thread
        spins before it sleeps; while a :meth:`request` or :meth:`send` is awaited, the event loop
        turns without sleeping for up to twice that after the last one was made. Each saves a
        thread wake-up per round trip at the cost of busy cores while requests flow; 0 turns both
        off."""
        seed, key_file = _identity(identity)
        listen = _text(listen, "listen")
        if isinstance(peers, (str, dict)):
            peers = [peers]
        try:
            peer_list = list(peers)
        except TypeError:
            raise _type_error(f"peers must be an iterable of tokens or mappings, not {type(peers).__name__}") from None
        specs = [_peer_spec(p) for p in peer_list]
        protocol = _text(protocol, "protocol")
        if protocol not in PROTOCOLS:
            raise AxonInvalidArgumentError(f"protocol must be \"axon/1\" or \"v2\", got {protocol!r}")
        if capabilities is not None:
            _dict(capabilities, "capabilities")
        agent_name = _opt_text(agent_name, "agent_name")
        rt = _seconds(request_timeout, "request_timeout")
        ht = _seconds(handler_timeout, "handler_timeout")
        bp = _seconds(busy_poll, "busy_poll")
        if bp > MAX_BUSY_POLL:
            # Longer spins would hold back the peer's own timers (acknowledgements, keep-alives).
            raise AxonInvalidArgumentError(f"busy_poll must be from 0 to {MAX_BUSY_POLL} seconds (1 ms), got {busy_poll!r}")
        self = object.__new__(cls)
        self._init_loop(_asyncio.get_running_loop())
        self._handler = None
        self._timeout = rt
        self._spin_window = 2 * bp
        self._spin_until = 0.0
        self._in_flight = 0
        self._turning = False

        def make(notify):
            try:
                return _peer._AxonPeerNode(notify, seed, key_file, listen, specs, protocol, capabilities, agent_name, ht, bp)
            except AxonError as e:
                raise _error_of((e.code, str(e), None, None, None)) from None

        await self._start_native(make)
        return self

    # -- state

    @property
    def agent_id(self) -> str:
        """This peer's agent id (``ed25519.`` + 32 hex digits)."""
        return self._native.agent_id

    @property
    def public_key(self) -> str:
        """Its Ed25519 public key, standard base64 (upstream's ``identity.pub``)."""
        return self._native.public_key

    @property
    def listen_addr(self) -> str:
        """The address it listens on, ``"ip:port"``."""
        return self._native.listen_addr

    @property
    def token(self) -> str:
        """Its enrollment token, ``axon://<base64url key>@<listen_addr>``: give it to the other
        side (``axon connect <token>`` for an upstream daemon)."""
        return self._native.token

    @property
    def protocol(self) -> str:
        """``"axon/1"`` or ``"v2"``."""
        return self._native.protocol

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running"
        return f"<polywire.axon.Peer {self.agent_id} {self.protocol} {self.listen_addr} {state}>"

    # -- plumbing (the rest is _PeerLoop's)

    @staticmethod
    def _fail_safely(req, e: BaseException) -> None:
        _fail_safely(req, e)

    def _complete(self, token, kind, value) -> None:
        if kind == _peer.INBOUND:
            self._serve(value)
            return
        waiter = self._pending.pop(token, None)
        if waiter is None or waiter.done():
            return
        if kind == _peer.ERROR:
            waiter.set_exception(_error_of(value))
        else:
            waiter.set_result(value)

    # While a request or send of the peer is in flight, the event loop does not sleep for up to
    # twice busy_poll after the last one was made: it turns (call_soon), giving the processor
    # away at each turn (sched_yield), so that an answer is taken as soon as the peer's thread
    # delivers it rather than after the loop's thread has been woken, which costs 10-15 µs of a
    # 50-60 µs loopback round trip on a VM (docs/performance.md#axon). Twice: the network
    # thread waits for one datagram, the loop for a whole round trip.

    def _spinning(self, fut):
        if self._spin_window:
            self._in_flight += 1
            self._spin_until = _time.perf_counter() + self._spin_window
            fut.add_done_callback(self._landed)
            if not self._turning:
                self._turning = True
                self._loop.call_soon(self._turn)
        return fut

    def _landed(self, _fut) -> None:
        self._in_flight -= 1

    def _turn(self) -> None:
        if self._in_flight and not self._closed and _time.perf_counter() < self._spin_until:
            _sched_yield()
            self._loop.call_soon(self._turn)
        else:
            self._turning = False

    def _timeout_of(self, timeout) -> float:
        return self._timeout if timeout is None else _seconds(timeout, "timeout")

    # -- operations

    async def add_peer(self, peer) -> str:
        """Pin a peer (an enrollment token or a mapping ``{"agent_id", "pubkey", "addr"}``) and
        return its agent id; it is dialed and kept connected (with v2, when this side has the
        lower agent id)."""
        self._check_open()
        spec = _peer_spec(peer)
        try:
            return self._native.add_peer(spec)
        except AxonError as e:
            raise _error_of((e.code, str(e), None, None, None)) from None

    async def remove_peer(self, agent_id: str) -> bool:
        """Unpin a peer and close its connections; whether it was known."""
        self._check_open()
        try:
            return self._native.remove_peer(_text(agent_id, "agent_id"))
        except AxonError as e:
            raise _error_of((e.code, str(e), None, None, None)) from None

    async def peers(self) -> list:
        """The known peers: ``[{"agent_id", "addr", "status", "rtt_ms"}]``, ``status`` one of
        ``connected``, ``connecting``, ``disconnected``."""
        self._check_open()
        return self._native.peers()

    async def request(self, agent_id: str, payload: dict, *, kind: str | None = None, timeout: float | None = None) -> dict:
        """Send a request and return the reply's payload. ``kind``: ``request`` with axon/1 (the
        default); with v2 ``query`` (the default), ``delegate``, ``discover``, ``ping`` or
        ``cancel``. Raises :class:`AxonRemoteError` for an ``error`` reply, and
        :class:`AxonTimeoutError`, :class:`AxonUnreachableError`, :class:`AxonHandshakeError`,
        :class:`AxonUnknownPeerError`, :class:`AxonInvalidReplyError`, :class:`AxonMessageTooLargeError`,
        :class:`AxonConnectionLostError` or :class:`AxonClosedError`."""
        agent_id = _text(agent_id, "agent_id")
        payload = _dict(payload, "payload")
        kind = _opt_text(kind, "kind") or ("query" if self.protocol == "v2" else "request")
        return await self._spinning(self._call("request", agent_id, kind, payload, self._timeout_of(timeout)))

    async def send(self, agent_id: str, payload: dict, *, kind: str | None = None, ref: str | None = None,
                   timeout: float | None = None) -> str:
        """Send a message (no reply) and return its id once it is written. ``kind``: with axon/1
        any kind but ``request`` (``message`` by default; ``error`` for an unsolicited error);
        with v2 ``notify`` (the default), ``result`` or ``error``. ``ref``: the id of a message
        this one refers to."""
        agent_id = _text(agent_id, "agent_id")
        payload = _dict(payload, "payload")
        kind = _opt_text(kind, "kind") or ("notify" if self.protocol == "v2" else "message")
        ref = _opt_text(ref, "ref")
        return await self._spinning(self._call("send", agent_id, kind, payload, ref, self._timeout_of(timeout)))

    def serve(self, handler) -> None:
        """Answer requests with ``handler(from_agent_id, kind, payload)`` (sync or ``async``): what
        it returns (a dict, or None for ``{}``) is the reply's payload (v2: a ``response`` to a
        ``query``, an ``ack`` to ``delegate``/``cancel``). Raising ``AxonRemoteError(code,
        message, retryable)`` replies with that error; any other exception replies
        ``handler_error`` (v2: ``internal``) with its text. ``serve(None)`` stops serving:
        requests are then answered as upstream does without an application (axon/1
        ``unhandled``; v2 its canned replies)."""
        self._check_open()
        if handler is not None and not callable(handler):
            raise _type_error(f"handler must be callable or None, not {type(handler).__name__}")
        self._handler = handler
        self._native.set_serving(handler is not None)

    async def inbound(self):
        """Messages, unsolicited errors and refused peers, as they arrive: ``async for event in
        peer.inbound()``. Each is a dict: ``{"type": "message", "from", "id", "kind", "ref",
        "payload"}``; ``{"type": "error", ..., "code", "message", "retryable"}``;
        ``{"type": "pair_request", "agent_id", "pubkey", "addr", "token"}`` (``add_peer`` its
        ``token``, or its ``pubkey``, to accept it). Ends when the peer closes. Messages not
        read wait (at most 1,024), and then hold back their senders."""
        while not self._closed:
            try:
                events = await self._call("next_events")
            except AxonClosedError:
                return
            for event in events:
                yield event

    async def close(self) -> None:
        """Close the peer: its connections close and operations in flight fail with
        :class:`AxonClosedError`. Idempotent."""
        if self._closed:
            return
        for waiter in (await self._close_native()).values():
            if not waiter.done():
                waiter.set_exception(AxonClosedError("the peer is closed"))

    # -- serving

    def _serve_request(self, req) -> None:
        handler = self._handler
        if handler is None:
            req.fail("unhandled", f"no application handler registered for request '{req.id}'", False)
            return
        self._run_handler(req, lambda: handler(req.sender, req.kind, req.payload), _answer)


def _answer(req, result) -> None:
    if result is None:
        result = {}
    if not isinstance(result, dict):
        req.fail("handler_error", f"the handler returned {type(result).__name__}, not a dict (the reply's payload)", False)
        return
    try:
        req.respond(result)
    except Exception as e:  # noqa: BLE001 - a value that is not JSON, or whose own code raised
        req.fail("handler_error", f"the handler's reply could not be sent: {_text_of(e)}", False)


def _fail(req, e: BaseException) -> None:
    if isinstance(e, AxonRemoteError):
        code, message, retryable = e.remote_code, e.message, e.retryable
        if not isinstance(code, str) or not code:
            code = "handler_error"
        if not isinstance(message, str):
            message = _text_of(e)
        req.fail(str.__str__(code), str.__str__(message), bool(retryable is True))
    else:
        req.fail("handler_error", _text_of(e), False)


def _fail_safely(req, e: BaseException) -> None:
    """Answer ``req`` with the error reply for ``e``; if building it raises in turn, a plain
    ``handler_error``; never raises."""
    try:
        _fail(req, e)
    except Exception:  # noqa: BLE001
        try:
            req.fail("handler_error", "the handler failed, and its error could not be turned into a reply", False)
        except Exception:  # noqa: BLE001
            pass

# The client of a local upstream daemon (pure Python, asyncio).
from polywire.axon_daemon import (  # noqa: E402
    DAEMON_ERROR_CODES,
    DAEMON_MAX_COMMAND_SIZE,
    AxonDaemonError,
    DaemonClient,
    DaemonClosedError,
    DaemonCommandTooLargeError,
    DaemonDisconnectedError,
    DaemonInternalError,
    DaemonInvalidCommandError,
    DaemonPeerNotFoundError,
    DaemonPeerUnreachableError,
    DaemonProtocolError,
    DaemonReplyTimeoutError,
    DaemonSelfSendError,
    DaemonTimeoutError,
    DaemonUnavailableError,
)
from polywire import axon_daemon as _daemon  # noqa: E402

__all__ += _daemon.__all__
