"""A client for a local upstream AXON daemon (hwbehrens/axon v0.7.x and main), over its Unix
socket. Everything here is also exported by :mod:`polywire.axon`: import it from there.

The daemon (``axon daemon``) owns the agent's identity and its QUIC connections; local
programs talk to it over ``<root>/axon.sock`` (``$AXON_ROOT``, else ``~/.axon``), one JSON
object a line. :class:`DaemonClient` speaks that protocol as the daemon's own source
defines it (``axon/src/ipc``)::

    async with await axon.DaemonClient.connect() as client:
        me = await client.whoami()                     # {"agent_id", "public_key", "version", ...}
        agent = await client.add_peer("axon://<base64url key>@127.0.0.1:7100")
        reply = await client.send(agent, {"question": "hi"})   # the reply envelope
        msg_id = await client.send(agent, {"data": 1}, kind="message")
        async for event in client.events():           # {"event": "inbound" | "pair_request", ...}
            ...

Every command carries a ``req_id`` and its reply is matched by it, so several commands may
be in flight at once; the daemon's events (``inbound`` messages and the replies to this and
other clients' requests, ``pair_request`` for an unknown agent refused in the TLS
handshake) arrive on the same socket between the replies and are kept, at most
``max_events`` of them (the oldest are dropped first, counted by
:attr:`DaemonClient.dropped_events`), until :meth:`DaemonClient.events` yields them. The
daemon pushes events to every connected client and buffers none while no client is
connected.

The daemon runs its commands one at a time: while a ``send`` request waits for the remote
agent (up to ``timeout_secs``, 30 s by default), it answers no other command of any
client. A command's own deadline is therefore the time it may take (a request's
``timeout_secs``, the daemon's 10 s for a message, nothing for the others) plus the
client's ``timeout``, counted from when the commands this client sent before it are due;
past it the command fails with :class:`DaemonReplyTimeoutError` (a late reply is ignored).

Errors are :class:`AxonDaemonError` (an :class:`~polywire.AxonError`, so a ``ValueError``):
an error reply of the daemon is the subclass of its code, with ``code`` the daemon's code
and ``message`` its text (``invalid_command``: :class:`DaemonInvalidCommandError`,
``command_too_large``, ``peer_not_found``, ``self_send``, ``peer_unreachable``,
``timeout``, ``internal_error``). What the daemon would refuse as ``invalid_command`` or
``command_too_large`` is refused before it is sent, with those classes and a message that
says what is wrong: a command line over 65,536 bytes, a ``kind`` other than ``request`` and
``message``, a ``timeout_secs`` of 0, out of range or given with a message, a ``ref`` that
is not a UUID, a payload that JSON cannot carry or that the daemon's parser would refuse
(nested more than 126 deep, a number beyond a double, an unpaired surrogate), a malformed
enrollment token or public key. The client's own failures have codes of their own:
``AXON_DAEMON_UNAVAILABLE`` (cannot connect), ``AXON_DAEMON_DISCONNECTED`` (the socket
closed or failed: every command in flight fails with it), ``AXON_DAEMON_CLOSED``
(:meth:`DaemonClient.close` was called), ``AXON_DAEMON_TIMEOUT`` (no reply in time),
``AXON_DAEMON_PROTOCOL`` (the daemon sent a line that is not a JSON object, or a reply
without the fields it must have). An argument of the wrong type is a
:class:`~polywire.PolywireTypeError` with code ``AXON_INVALID_ARGUMENT``.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import hashlib
import itertools
import json
import math
import os
import re

from polywire._polywire import AxonError, PolywireTypeError

__all__ = [
    "DAEMON_ERROR_CODES",
    "DAEMON_MAX_COMMAND_SIZE",
    "AxonDaemonError",
    "DaemonClient",
    "DaemonClosedError",
    "DaemonCommandTooLargeError",
    "DaemonDisconnectedError",
    "DaemonInternalError",
    "DaemonInvalidCommandError",
    "DaemonPeerNotFoundError",
    "DaemonPeerUnreachableError",
    "DaemonProtocolError",
    "DaemonReplyTimeoutError",
    "DaemonSelfSendError",
    "DaemonTimeoutError",
    "DaemonUnavailableError",
]

DAEMON_MAX_COMMAND_SIZE: int = 65536
"""The longest command line the daemon reads, in bytes without the newline (upstream's
``MAX_IPC_LINE_LENGTH``); a longer one is refused before it is sent."""

DAEMON_ERROR_CODES: tuple = (
    "invalid_command", "command_too_large", "peer_not_found", "self_send",
    "peer_unreachable", "timeout", "internal_error",
)
"""The daemon's error codes (upstream's ``IpcErrorCode``), in its order."""

# The texts the daemon sends with each code (upstream's IpcErrorCode::message).
_TEXTS = {
    "invalid_command": "malformed command, unknown cmd, or invalid field value",
    "command_too_large": "IPC command exceeds 64KB limit",
    "peer_not_found": "target agent_id not in peer table",
    "self_send": "cannot send messages to self",
    "peer_unreachable": "peer known but connection failed",
    "timeout": "request timed out waiting for peer response",
    "internal_error": "unexpected daemon error",
}

# serde_json's recursion limit: 128, counted down on entering an array or object and an
# error when it reaches 0, so a command line may nest 127 deep (the command object is 1).
_MAX_NESTING = 127
# The daemon's own timeouts: a request waits 30 s unless timeout_secs says otherwise, a
# message 10 s (daemon/command_handler.rs).
_REQUEST_TIMEOUT = 30
_MESSAGE_TIMEOUT = 10
_U64_MAX = 2**64 - 1
_MAX_LINE_READ = 16 * 1024 * 1024  # the longest line accepted from the daemon


# ---------------------------------------------------------------- errors


class AxonDaemonError(AxonError):
    """A command to the local AXON daemon failed. ``code`` is the daemon's error code (one
    of ``DAEMON_ERROR_CODES``) or the client's own (``AXON_DAEMON_*``), ``message`` what
    happened (for an error reply, the daemon's text). The subclass says which."""

    code: str = "AXON_DAEMON_ERROR"

    def __init__(self, message: str | None = None, code: str | None = None):
        if message is None:
            message = _TEXTS.get(code or type(self).code, "the AXON daemon command failed")
        super().__init__(message)
        self.code = code if code is not None else type(self).code
        self.message = self.msg = message
        self.offset = self.line = self.column = None


def _error_class(name: str, code: str, doc: str) -> type:
    return type(name, (AxonDaemonError,), {"__doc__": doc, "code": code, "__module__": __name__})


DaemonInvalidCommandError = _error_class(
    "DaemonInvalidCommandError", "invalid_command",
    "``invalid_command``: the daemon could not parse the command or refused a field's value "
    "(also raised before sending for a value it would refuse).")
DaemonCommandTooLargeError = _error_class(
    "DaemonCommandTooLargeError", "command_too_large",
    "``command_too_large``: the command line is over 65,536 bytes (refused before sending; "
    "the daemon closes the connection after this reply).")
DaemonPeerNotFoundError = _error_class(
    "DaemonPeerNotFoundError", "peer_not_found", "``peer_not_found``: the daemon has no peer with that agent id.")
DaemonSelfSendError = _error_class(
    "DaemonSelfSendError", "self_send",
    "``self_send``: the target (or the key given to ``add_peer``) is the daemon's own agent.")
DaemonPeerUnreachableError = _error_class(
    "DaemonPeerUnreachableError", "peer_unreachable",
    "``peer_unreachable``: the peer is known but the daemon could not deliver (no connection, a "
    "message not delivered within 10 s, a malformed reply).")
DaemonTimeoutError = _error_class(
    "DaemonTimeoutError", "timeout",
    "``timeout``: the remote agent did not answer the request within ``timeout_secs``.")
DaemonInternalError = _error_class(
    "DaemonInternalError", "internal_error", "``internal_error``: the daemon failed unexpectedly.")
DaemonUnavailableError = _error_class(
    "DaemonUnavailableError", "AXON_DAEMON_UNAVAILABLE",
    "The daemon's socket could not be connected to (no daemon running at that path, no "
    "permission, not within ``timeout``).")
DaemonDisconnectedError = _error_class(
    "DaemonDisconnectedError", "AXON_DAEMON_DISCONNECTED",
    "The connection to the daemon closed or failed; every command in flight fails with it and "
    "later ones too (the daemon drops clients of another user, beyond 64 clients, and a client "
    "that leaves 1,024 lines unread).")
DaemonClosedError = _error_class(
    "DaemonClosedError", "AXON_DAEMON_CLOSED", "The client was closed (:meth:`DaemonClient.close`).")
DaemonReplyTimeoutError = _error_class(
    "DaemonReplyTimeoutError", "AXON_DAEMON_TIMEOUT",
    "The daemon did not answer the command within its deadline (the client's ``timeout`` beyond "
    "the time the command may take).")
DaemonProtocolError = _error_class(
    "DaemonProtocolError", "AXON_DAEMON_PROTOCOL",
    "The daemon sent something this client cannot read: a line that is not a JSON object, or a "
    "reply without the fields it must have (the connection is closed).")

_BY_CODE = {cls.code: cls for cls in (
    DaemonInvalidCommandError, DaemonCommandTooLargeError, DaemonPeerNotFoundError, DaemonSelfSendError,
    DaemonPeerUnreachableError, DaemonTimeoutError, DaemonInternalError,
)}


def _type_error(message: str) -> Exception:
    """A wrong-type argument: ``PolywireTypeError`` with ``AXON_INVALID_ARGUMENT``."""
    e = PolywireTypeError(message)
    e.code, e.offset, e.line, e.column, e.msg = "AXON_INVALID_ARGUMENT", None, None, None, message
    return e


def _invalid(message: str) -> Exception:
    return DaemonInvalidCommandError(message)


def _reply_error(reply: dict) -> AxonDaemonError:
    """The exception for an error reply ``{"ok": false, "error", "message"}``."""
    code = reply.get("error")
    message = reply.get("message")
    if not isinstance(code, str):
        return DaemonProtocolError(f"the daemon sent an error reply without a code: {_show(reply)}")
    if not isinstance(message, str):
        message = _TEXTS.get(code, "the AXON daemon command failed")
    cls = _BY_CODE.get(code)
    return cls(message) if cls is not None else AxonDaemonError(message, code)


def _show(value, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=True, default=repr)
    return text if len(text) <= limit else text[:limit] + "..."


# ---------------------------------------------------------------- argument checks


def _str(value, name: str) -> str:
    if not isinstance(value, str):
        raise _type_error(f"{name} must be a str, not {type(value).__name__}")
    return str.__str__(value)


def _seconds(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _type_error(f"{name} must be a number of seconds (int or float), not {type(value).__name__}")
    try:
        seconds = float(value)
    except OverflowError:
        seconds = math.inf
    if not math.isfinite(seconds) or seconds <= 0:
        raise AxonDaemonError(f"{name} must be a finite number of seconds above 0", "AXON_INVALID_ARGUMENT")
    return seconds


def _count(value, name: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error(f"{name} must be an int, not {type(value).__name__}")
    if not 0 <= value <= maximum:
        raise AxonDaemonError(f"{name} must be an int from 0 to {maximum}", "AXON_INVALID_ARGUMENT")
    return int.__int__(value)


# Rust's char::is_whitespace (Unicode White_Space): what upstream's str::trim removes.
_RUST_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _trim(text: str) -> str:
    return text.strip(_RUST_SPACE)


_HEX = "[0-9A-Fa-f]"
_UUID_HYPHENATED = re.compile(rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")
_UUID_SIMPLE = re.compile(rf"{_HEX}{{32}}")


def _uuid(text: str) -> str | None:
    """A UUID in the forms upstream's ``uuid`` crate parses (hyphenated, simple, braced,
    ``urn:uuid:``; hex in any case), lowercase hyphenated; None if it is not one."""
    if len(text) == 38 and text[0] == "{" and text[-1] == "}":
        text = text[1:-1]
    elif len(text) == 45 and text.startswith("urn:uuid:"):
        text = text[9:]
    if _UUID_HYPHENATED.fullmatch(text):
        return text.lower()
    if _UUID_SIMPLE.fullmatch(text):
        h = text.lower()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return None


def _agent_id(key: bytes) -> str:
    return "ed25519." + hashlib.sha256(key).hexdigest()[:32]


def _b64_standard(text: str) -> bytes | None:
    """Standard base64 with canonical padding (the ``base64`` crate's ``STANDARD``)."""
    if len(text) % 4 or not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text):
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def _b64url_nopad(text: str) -> bytes | None:
    """URL-safe base64 without padding, trailing bits zero (``URL_SAFE_NO_PAD``)."""
    if len(text) % 4 == 1 or not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        return None
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None
    return data if base64.urlsafe_b64encode(data).decode("ascii").rstrip("=") == text else None


def _check_addr(addr: str) -> None:
    """Upstream's ``validate_addr`` (peer_token/mod.rs): ``ip:port`` or ``host:port``."""
    addr = _trim(addr)
    if not addr:
        raise _invalid("peer token addr cannot be empty")
    host, sep, port = addr.rpartition(":")
    if not sep:
        raise _invalid("peer token addr must be host:port or ip:port")
    if not host:
        raise _invalid("peer token addr host cannot be empty")
    digits = port[1:] if port.startswith("+") else port
    if not re.fullmatch(r"[0-9]+", digits) or len(digits.lstrip("0")) > 5 or int(digits) > 65535:
        raise _invalid(f"peer token addr has invalid port '{port}'")


def _decode_token(token: str) -> dict:
    """An enrollment token ``axon://<base64url public key>@host:port``, decoded with
    upstream's rules and messages (``peer_token::decode``): ``{"pubkey"`` (standard base64),
    ``"addr"``, ``"agent_id"}``."""
    if not token.startswith("axon://"):
        raise _invalid("peer token must start with 'axon://'")
    key_text, sep, addr = token[len("axon://"):].partition("@")
    if not sep:
        raise _invalid("peer token must contain '@' between pubkey and addr")
    if not key_text:
        raise _invalid("peer token pubkey segment is empty")
    _check_addr(addr)
    key = _b64url_nopad(key_text)
    if key is None:
        raise _invalid("peer token pubkey is not valid base64url")
    if len(key) != 32:
        raise _invalid(f"peer token pubkey must decode to 32 bytes, got {len(key)}")
    return {"pubkey": base64.b64encode(key).decode("ascii"), "addr": _trim(addr), "agent_id": _agent_id(key)}


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_LONG_NUMBER = re.compile(r"-?[0-9]{309,}")


def _check_parsable(text: str) -> None:
    """Refuse what serde_json, which parses the line in the daemon, would refuse although
    Python's json writes it: nesting deeper than its recursion limit, an integer beyond
    a double's range."""
    deep = text.count("{") + text.count("[") > _MAX_NESTING
    long_number = _LONG_NUMBER.search(text) is not None
    if not deep and not long_number:
        return
    bare = _STRING.sub('""', text)
    if deep:
        depth = top = 0
        for m in re.finditer(r"[\[\]{}]", bare):
            depth += 1 if m.group() in "[{" else -1
            top = max(top, depth)
        if top > _MAX_NESTING:
            raise _invalid(f"the payload nests {top - 1} deep: the daemon's JSON parser takes at most {_MAX_NESTING - 1}")
    for m in _LONG_NUMBER.finditer(bare):
        try:
            float(int(m.group()))
        except OverflowError:
            raise _invalid("the payload holds an integer beyond the range of a double, which the daemon's JSON parser refuses") from None


def _encode(command: dict) -> bytes:
    """A command as the line to write: compact JSON, UTF-8, checked as the daemon checks it."""
    try:
        text = json.dumps(command, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except TypeError as e:
        raise _type_error(f"payload is not JSON: {e}") from None
    except RecursionError:
        raise _invalid("the payload nests too deeply to be written as JSON") from None
    except ValueError as e:
        raise _invalid(f"payload is not JSON: {e}") from None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid("the command holds an unpaired surrogate, which is not valid Unicode text") from None
    if len(data) > DAEMON_MAX_COMMAND_SIZE:
        raise DaemonCommandTooLargeError(
            f"the command is {len(data)} bytes as JSON; the daemon reads at most {DAEMON_MAX_COMMAND_SIZE} "
            "bytes a line (refused before sending)")
    _check_parsable(text)
    return data + b"\n"


# ---------------------------------------------------------------- the client

_NEW = object()


class DaemonClient:
    """A connection to a local AXON daemon's Unix socket:
    ``client = await DaemonClient.connect()``; close it with ``await client.close()`` or
    ``async with``. Commands are coroutines of the event loop it was connected in; several
    may be in flight at once."""

    def __init__(self, *args, **kwargs):
        if not args or args[0] is not _NEW:
            raise _type_error("connect with: client = await DaemonClient.connect(path)")

    @staticmethod
    def default_path() -> str:
        """The daemon's socket as upstream finds it: ``$AXON_ROOT/axon.sock`` when
        ``AXON_ROOT`` is set and not blank, else ``$HOME/.axon/axon.sock``. Raises
        :class:`DaemonUnavailableError` when neither variable is set."""
        root = os.environ.get("AXON_ROOT")
        if root is not None and _trim(root):
            return os.path.join(root, "axon.sock")
        home = os.environ.get("HOME")
        if home is None:
            raise DaemonUnavailableError("neither AXON_ROOT nor HOME is set: pass the socket's path")
        return os.path.join(home, ".axon", "axon.sock")

    @classmethod
    async def connect(cls, path=None, *, timeout=10.0, max_events: int = 1024) -> DaemonClient:
        """Connect to the daemon's socket at ``path`` (str, bytes or a path object; default
        :meth:`default_path`). ``timeout`` (seconds): how long to wait for the connection,
        and for each command's reply beyond the time the command itself may take.
        ``max_events``: how many events are kept until :meth:`events` takes them (the
        oldest are dropped first; 0 keeps none). Raises :class:`DaemonUnavailableError`
        when nothing accepts the connection."""
        seconds = _seconds(timeout, "timeout")
        keep = _count(max_events, "max_events", 2**31 - 1)
        if path is None:
            path = cls.default_path()
        elif not isinstance(path, (str, bytes, os.PathLike)):
            raise _type_error(f"path must be a str, bytes or a path object, not {type(path).__name__}")
        path = os.fspath(path)
        if not isinstance(path, (str, bytes)):
            raise _type_error(f"path must be a str, bytes or a path object, not {type(path).__name__}")
        shown = os.fsdecode(path) if isinstance(path, bytes) else path
        opener = getattr(asyncio, "open_unix_connection", None)
        if opener is None:
            raise DaemonUnavailableError("Unix sockets are not available on this platform")
        try:
            reader, writer = await asyncio.wait_for(opener(path, limit=_MAX_LINE_READ), timeout=seconds)
        except asyncio.TimeoutError:
            raise DaemonUnavailableError(f"the AXON daemon socket {shown!r} did not accept within {seconds:g} s") from None
        except (OSError, ValueError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise DaemonUnavailableError(
                f"cannot connect to the AXON daemon socket {shown!r}: {reason} "
                "(is `axon daemon` running? pass its <root>/axon.sock or set AXON_ROOT)") from None
        self = cls(_NEW)
        self._path = shown
        self._loop = asyncio.get_running_loop()
        self._reader = reader
        self._writer = writer
        self._timeout = seconds
        self._ids = itertools.count(1)
        self._pending: dict = {}
        self._horizon = 0.0
        self._events: collections.deque = collections.deque(maxlen=keep)
        self._dropped = 0
        self._waiters: list = []
        self._failure = None  # a factory of the exception every later call raises
        self._closed = False
        self._task = self._loop.create_task(self._read_loop())
        return self

    # -- state

    @property
    def path(self) -> str:
        """The socket's path."""
        return self._path

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    @property
    def dropped_events(self) -> int:
        """How many events were dropped because ``max_events`` were already waiting."""
        return self._dropped

    def __repr__(self) -> str:
        state = "closed" if self._closed else "disconnected" if self._failure is not None else "connected"
        return f"<polywire.axon.DaemonClient {self._path!r} {state}>"

    async def __aenter__(self) -> DaemonClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection. Commands in flight fail with :class:`DaemonClosedError`,
        :meth:`events` iterators end after the events already received. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._fail_all(lambda: DaemonClosedError("the client was closed"))
        self._task.cancel()
        self._writer.close()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), timeout=1.0)
        except (asyncio.TimeoutError, OSError):
            pass
        try:
            await self._task
        except BaseException:  # noqa: BLE001 - the reader was cancelled or already ended
            pass

    # -- the connection

    def _fail_all(self, make, pending_make=None) -> None:
        """Every later call raises ``make()``; the commands in flight fail with
        ``pending_make()`` (default ``make()``)."""
        if self._failure is None:
            self._failure = make
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception((pending_make or make)())
        self._wake()

    def _lost(self, make, pending_make=None) -> None:
        """The connection is unusable: fail everything, close the socket."""
        if self._closed or self._failure is not None:
            return
        self._fail_all(make, pending_make)
        self._writer.close()

    async def _read_loop(self) -> None:
        reader = self._reader
        while True:
            try:
                line = await reader.readuntil(b"\n")
            except asyncio.IncompleteReadError:
                self._lost(lambda: DaemonDisconnectedError("the AXON daemon closed the connection"))
                return
            except asyncio.LimitOverrunError:
                self._lost(lambda: DaemonProtocolError(f"the AXON daemon sent a line of more than {_MAX_LINE_READ} bytes"))
                return
            except OSError as e:
                text = str(e)
                self._lost(lambda: DaemonDisconnectedError(f"the connection to the AXON daemon failed: {text}"))
                return
            try:
                self._dispatch(line)
            except Exception as e:  # noqa: BLE001 - never let the reader die silently
                text = str(e)
                self._lost(lambda: DaemonProtocolError(f"cannot handle a line from the AXON daemon: {text}"))
                return

    def _dispatch(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            shown = line[:120].decode("utf-8", "replace")
            self._lost(lambda: DaemonProtocolError(f"the AXON daemon sent a line that is not JSON: {shown!r}"))
            return
        if not isinstance(msg, dict):
            shown = _show(msg)
            self._lost(lambda: DaemonProtocolError(f"the AXON daemon sent a line that is not a JSON object: {shown}"))
            return
        if "event" in msg:
            if len(self._events) == self._events.maxlen:
                self._dropped += 1
            self._events.append(msg)
            self._wake()
            return
        req_id = msg.get("req_id")
        fut = self._pending.pop(req_id, None) if isinstance(req_id, str) else None
        if fut is not None:
            if not fut.done():
                fut.set_result(msg)
            return
        if msg.get("ok") is False and req_id is None:
            # An error the daemon could not tie to a command: command_too_large (then it
            # closes the connection), or invalid_command for a line it could not parse
            # (v0.7.2 never echoes req_id then; it answers such lines at once, so the
            # oldest command waiting is the best guess).
            error = _reply_error(msg)
            if isinstance(error, DaemonCommandTooLargeError):
                text = error.message
                self._lost(
                    lambda: DaemonDisconnectedError(f"the AXON daemon closed the connection after answering: {text}"),
                    lambda: DaemonCommandTooLargeError(
                        f"{text} (the AXON daemon closes the connection after it: every command in flight failed)"))
            elif self._pending:
                oldest = next(iter(self._pending))
                fut = self._pending.pop(oldest)
                if not fut.done():
                    fut.set_exception(error)
        # Anything else is the late reply to a command that timed out.

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for w in waiters:
            if not w.done():
                w.set_result(None)

    def _check(self) -> None:
        if self._closed:
            raise DaemonClosedError("the client is closed")
        if self._failure is not None:
            raise self._failure()

    async def _call(self, command: dict, budget: float) -> dict:
        """Send a command (its fields checked), wait for its reply; the reply of an ``ok``
        command, or its error raised."""
        self._check()
        req_id = str(next(self._ids))
        command["req_id"] = req_id
        line = _encode(command)
        loop = self._loop
        now = loop.time()
        # The daemon answers in turn: this command is due after those sent before it.
        start = max(now, self._horizon) if self._pending else now
        deadline = self._horizon = start + self._timeout + budget
        fut = loop.create_future()
        self._pending[req_id] = fut
        try:
            self._writer.write(line)
            try:
                reply = await asyncio.wait_for(self._exchange(fut), timeout=max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise DaemonReplyTimeoutError(
                    f"the AXON daemon did not answer {command['cmd']!r} within {deadline - now:.3g} s") from None
        finally:
            self._pending.pop(req_id, None)
        ok = reply.get("ok")
        if ok is True:
            return reply
        if ok is False:
            raise _reply_error(reply)
        raise DaemonProtocolError(f"the AXON daemon sent a reply without ok: {_show(reply)}")

    async def _exchange(self, fut) -> dict:
        try:
            await self._writer.drain()
        except OSError as e:
            text = str(e)
            self._lost(lambda: DaemonDisconnectedError(f"the connection to the AXON daemon failed: {text}"))
        return await fut

    # -- commands

    async def send(self, to: str, payload: dict, *, kind: str = "request", timeout_secs: int | None = None,
                   ref: str | None = None):
        """Send ``payload`` (a dict, a JSON object) to the agent ``to`` through the daemon.

        ``kind="request"`` (the default) waits for the agent's reply and returns it: the
        envelope ``{"id", "kind", "ref", "payload", "from", "to"}`` with kind ``response``
        or ``error`` (an upstream daemon answers every request with ``error`` /
        ``unhandled``). ``timeout_secs`` (an int, at least 1; the daemon's default is 30) bounds
        the wait; past it the daemon answers ``timeout`` (:class:`DaemonTimeoutError`).
        The daemon also pushes the reply to every client as an ``inbound`` event.

        ``kind="message"`` delivers it (within the daemon's 10 s) and returns its id.
        ``ref``: a UUID the message refers to (a request's id, to answer it).

        Raises :class:`DaemonPeerNotFoundError`, :class:`DaemonSelfSendError`,
        :class:`DaemonPeerUnreachableError`, :class:`DaemonTimeoutError`, ..."""
        to = _str(to, "to")
        if not isinstance(payload, dict):
            raise _type_error(f"payload must be a dict (a JSON object), not {type(payload).__name__}")
        kind = _str(kind, "kind")
        if kind not in ("request", "message"):
            raise _invalid(f"kind must be 'request' or 'message', not {kind!r}")
        command = {"cmd": "send", "to": to, "kind": kind, "payload": payload}
        if timeout_secs is not None:
            if isinstance(timeout_secs, bool) or not isinstance(timeout_secs, int):
                raise _type_error(f"timeout_secs must be an int or None, not {type(timeout_secs).__name__}")
            if kind != "request":
                raise _invalid("timeout_secs is only valid for request kind")
            if not 1 <= timeout_secs <= _U64_MAX:
                raise _invalid("timeout_secs must be >= 1" if timeout_secs < 1 else "timeout_secs must be at most 2**64 - 1")
            command["timeout_secs"] = int.__int__(timeout_secs)
        if ref is not None:
            text = _str(ref, "ref")
            uuid = _uuid(text)
            if uuid is None:
                raise _invalid(f"ref must be a UUID, not {text[:60]!r}")
            command["ref"] = uuid
        if kind == "request":
            budget = float(timeout_secs if timeout_secs is not None else _REQUEST_TIMEOUT)
        else:
            budget = float(_MESSAGE_TIMEOUT)
        reply = await self._call(command, budget)
        if kind == "request":
            response = reply.get("response")
            if not isinstance(response, dict):
                raise DaemonProtocolError(f"the AXON daemon's reply to a request has no response envelope: {_show(reply)}")
            return response
        msg_id = reply.get("msg_id")
        if not isinstance(msg_id, str):
            raise DaemonProtocolError(f"the AXON daemon's reply to a message has no msg_id: {_show(reply)}")
        return msg_id

    async def peers(self) -> list:
        """The daemon's peer table, sorted by agent id: dicts with ``agent_id``, ``addr``,
        ``status``, ``rtt_ms`` (when known) and ``source``; status ``discovered``, ``connecting``,
        ``connected`` or ``disconnected`` and source ``static``, ``discovered`` or ``cached``."""
        reply = await self._call({"cmd": "peers"}, 0.0)
        peers = reply.get("peers")
        if not isinstance(peers, list):
            raise DaemonProtocolError(f"the AXON daemon's peers reply has no list: {_show(reply)}")
        return peers

    async def status(self) -> dict:
        """``{"uptime_secs", "peers_connected", "messages_sent", "messages_received"}``."""
        return _fields(await self._call({"cmd": "status"}, 0.0))

    async def whoami(self) -> dict:
        """The daemon's identity: ``agent_id``, ``public_key`` (standard base64), ``name``
        (when configured), ``version``, ``uptime_secs``."""
        return _fields(await self._call({"cmd": "whoami"}, 0.0))

    async def add_peer(self, token: str | None = None, *, pubkey: str | None = None, addr: str | None = None) -> str:
        """Pin a peer in the daemon (until it restarts: the daemon does not save it) and
        return its agent id: ``add_peer("axon://<base64url key>@host:port")`` (an
        enrollment token, decoded with upstream's rules) or
        ``add_peer(pubkey=<standard base64 public key>, addr="host:port")``. The daemon answers ``invalid_command``
        for a peer it already has or an address it cannot resolve, ``self_send`` for its
        own key."""
        if token is not None:
            if pubkey is not None or addr is not None:
                raise _type_error("add_peer takes a token, or pubkey= and addr=, not both")
            decoded = _decode_token(_str(token, "token"))
            key, where = decoded["pubkey"], decoded["addr"]
        else:
            if pubkey is None or addr is None:
                raise _type_error("add_peer needs a token, or both pubkey= and addr=")
            key = _trim(_str(pubkey, "pubkey"))
            where = _str(addr, "addr")
            raw = _b64_standard(key)
            if raw is None:
                raise _invalid("pubkey is not valid base64 (standard alphabet, padded)")
            if len(raw) != 32:
                raise _invalid(f"pubkey must decode to 32 bytes, got {len(raw)}")
        reply = await self._call({"cmd": "add_peer", "pubkey": key, "addr": where}, 0.0)
        agent_id = reply.get("agent_id")
        if not isinstance(agent_id, str):
            raise DaemonProtocolError(f"the AXON daemon's add_peer reply has no agent_id: {_show(reply)}")
        return agent_id

    async def events(self):
        """The daemon's events as they arrive, oldest first:
        ``async for event in client.events()``. An ``inbound`` event (``event``, ``from``,
        ``envelope`` with ``id``, ``kind``, ``ref``, ``payload``, ``from``, ``to``) for a
        message, request, reply or error that reached the daemon (a request it has
        already answered ``unhandled``); a ``pair_request`` event (``event``,
        ``agent_id``, ``pubkey``, ``addr`` when known) when an agent it has not pinned
        tried to connect. Ends after :meth:`close`; raises
        :class:`DaemonDisconnectedError` once the connection is lost and the events
        received before are taken."""
        while True:
            if self._events:
                yield self._events.popleft()
                continue
            if self._closed:
                return
            if self._failure is not None:
                raise self._failure()
            waiter = self._loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)


def _fields(reply: dict) -> dict:
    return {k: v for k, v in reply.items() if k not in ("ok", "req_id")}
