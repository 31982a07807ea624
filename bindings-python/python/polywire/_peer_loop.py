"""What :class:`polywire.axon.Peer` and :class:`polywire.kameo.Node` share: the way back from
the native peer's threads to the asyncio event loop (the Python side of
``bindings-python/src/completions.rs``), and the running of a handler on a request.

Each operation gets a token and a future. The native peer answers with ``(token, kind,
value)``: on POSIX the loop watches the peer's wake-up descriptor and drains the answers
itself (one hop from the peer's thread); elsewhere a notifier thread hands each one over with
``call_soon_threadsafe``. A subclass says what an answer does (``_complete``), how a request
is served (``_serve_request``) and how a failure becomes an error reply (``_fail_safely``).
"""

from __future__ import annotations

# Private names only: stubtest reads this module's names as its stub.
import inspect as _inspect
import itertools as _itertools
import sys as _sys
import typing as _typing
import weakref as _weakref


class PeerLoop:
    """The base of a peer object whose operations a native peer answers on another thread."""

    #: Raised by an operation once the peer is closed (with :attr:`_closed_text`).
    _closed_error: type = RuntimeError
    _closed_text: str = "closed"
    #: Raised when the event loop cannot watch the wake-up descriptor.
    _start_error: type = RuntimeError
    #: Who reports a failure to the loop's exception handler (``polywire.axon``).
    _origin: str = "polywire"

    def _init_loop(self, loop) -> None:
        self._loop = loop
        # token -> the future (or, for a Kameo lookup, the queue) its answers go to.
        self._pending: dict[int, _typing.Any] = {}
        self._tokens = _itertools.count(1)
        self._closed = False
        # The native peer (_AxonPeerNode, _PeerNode), once started.
        self._native: _typing.Any = None
        self._wakeup_fd: int | None = None

    async def _start_native(self, make) -> None:
        """``make(notify)`` (in the default executor) makes the native peer, with ``notify``
        None when the loop drains its answers itself; the loop then watches its descriptor."""
        loop = self._loop
        ref = _weakref.ref(self)

        def notify(token, kind, value, ref=ref, loop=loop):
            # On the peer's notifier thread: hand over to the loop.
            peer = ref()
            if peer is None:
                return
            try:
                loop.call_soon_threadsafe(peer._complete, token, kind, value)
            except RuntimeError:
                pass  # the loop is closed: nobody is waiting any more

        queue_mode = _sys.platform != "win32" and hasattr(loop, "add_reader")
        self._native = await loop.run_in_executor(None, make, None if queue_mode else notify)
        self._wakeup_fd = self._native.wakeup_fd
        if self._wakeup_fd is not None:
            try:
                loop.add_reader(self._wakeup_fd, self._drain)
            except NotImplementedError:
                await loop.run_in_executor(None, self._native.close)
                raise self._start_error("this event loop cannot watch descriptors (add_reader)") from None

    def _drain(self) -> None:
        # Each answer and request of the batch is handled whatever another one raised: a
        # failure of one must not drop the others (they are out of the native queue already).
        # The first failure is reported after the batch, to the loop's exception handler (or
        # raised, for KeyboardInterrupt and SystemExit).
        failure = None
        for token, kind, value in self._native.drain():
            try:
                self._complete(token, kind, value)
            except BaseException as e:  # noqa: BLE001
                if failure is None:
                    failure = e
        if failure is None:
            return
        if not isinstance(failure, Exception):
            raise failure
        self._loop.call_exception_handler(
            {"message": f"{self._origin}: an error while handling a request or an answer", "exception": failure}
        )

    def _complete(self, token, kind, value) -> None:
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        raise NotImplementedError

    def _check_open(self) -> None:
        if self._closed:
            raise self._closed_error(self._closed_text)

    def _new_future(self):
        """A token and the future its answer settles."""
        self._check_open()
        token = next(self._tokens)
        fut = self._loop.create_future()
        self._pending[token] = fut
        return token, fut

    def _call(self, method: str, *args):
        """Start a native operation (its arguments already checked); its future."""
        token, fut = self._new_future()
        try:
            getattr(self._native, method)(*args, token)
        except BaseException:
            del self._pending[token]
            fut.cancel()
            raise
        return fut

    async def _close_native(self) -> dict:
        """Close the native peer (it answers what is in flight as closed) and take its last
        answers; what the loop has still not seen is returned, for the subclass to fail."""
        self._closed = True
        await self._loop.run_in_executor(None, self._native.close)
        if self._wakeup_fd is not None:
            self._loop.remove_reader(self._wakeup_fd)
            self._drain()
        pending, self._pending = self._pending, {}
        return pending

    # -- serving

    def _serve(self, req) -> None:
        try:
            self._serve_request(req)
        except Exception as e:  # noqa: BLE001 - whatever failed, the caller gets an error reply
            self._fail_safely(req, e)

    def _serve_request(self, req) -> None:
        raise NotImplementedError

    @staticmethod
    def _fail_safely(req, e: BaseException) -> None:
        raise NotImplementedError

    def _run_handler(self, req, call, answer) -> None:
        """Answer ``req`` with ``answer(req, result)`` of what ``call()`` (the handler) returns,
        awaited in a task when it is awaitable; a failure becomes its error reply."""
        try:
            result = call()
        except BaseException as e:  # noqa: BLE001 - every failure is the caller's answer
            self._fail_safely(req, e)
            if not isinstance(e, Exception):
                raise
            return
        if _inspect.isawaitable(result):
            task = self._loop.create_task(_finish(req, result, answer, self._fail_safely))
            _TASKS.add(task)
            task.add_done_callback(_TASKS.discard)
        else:
            answer(req, result)


# The handlers' tasks, held until they end (the loop keeps only weak references).
_TASKS: set = set()


async def _finish(req, awaitable, answer, fail_safely) -> None:
    try:
        result = await awaitable
    except BaseException as e:  # noqa: BLE001
        fail_safely(req, e)
        if not isinstance(e, Exception):
            raise
        return
    try:
        answer(req, result)
    except Exception as e:  # noqa: BLE001
        fail_safely(req, e)


def text_of(e: BaseException) -> str:
    """``str(e)``, or its class's name when that is empty, or a fixed text when neither can be
    had (an exception whose ``__str__`` raises): never raises."""
    try:
        text = str(e)
        if isinstance(text, str) and text:
            return text
    except Exception:  # noqa: BLE001
        pass
    try:
        name = type(e).__name__
        if isinstance(name, str) and name:
            return name
    except Exception:  # noqa: BLE001
        pass
    return "the handler raised an exception that cannot be shown as text"

