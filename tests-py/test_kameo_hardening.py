"""Kameo peers under load and with handlers that fail oddly: 10,000 asks at once to a
real kameo node are all answered (the peer keeps at most 64 in flight and the rest wait,
within their timeout); a handler exception that cannot even be shown as text becomes an
error reply, and the other requests and answers handled beside it go on."""

from __future__ import annotations

import asyncio

import pytest

from polywire import kameo
from polywire.kameo import Node
from test_kameo_peer import kameo_node, run  # noqa: F401 - the fixture

ASKS = 10_000


def test_ten_thousand_asks_at_once_are_all_answered(kameo_node):  # noqa: F811
    async def main():
        async with await Node.start(bootstrap=[kameo_node.addr]) as node:
            counter = await node.lookup("counter")
            results = await asyncio.gather(*(counter.ask("get") for _ in range(ASKS)), return_exceptions=True)
            failed = [r for r in results if isinstance(r, BaseException)]
            assert not failed, f"{len(failed)} of {ASKS} failed, e.g. {failed[:3]!r}"
            assert results == [0] * ASKS
            assert await counter.ask("get") == 0

    run(main())


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text for you")


class Nameless(Exception):
    def __str__(self):
        return ""


class BadHandlerError(kameo.HandlerError):
    @property
    def payload(self):
        raise RuntimeError("no payload either")

    @payload.setter
    def payload(self, value):
        pass


class RaisingGetattr:
    def __getattr__(self, name):
        raise RuntimeError(f"no attribute {name}")

    def __call__(self, message, value):
        return value


class Unpackable:
    def __len__(self):
        raise RuntimeError("a container that cannot say its length")


def test_handlers_that_fail_oddly_give_error_replies_and_the_node_serves_on():
    async def main():
        async with await Node.start() as server, await Node.start(bootstrap=server.listen_addrs) as client:

            def ask(message, value):
                if message == "unprintable":
                    raise Unprintable()
                if message == "nameless":
                    raise Nameless()
                if message == "bad-handler-error":
                    raise BadHandlerError("x")
                if message == "unpackable":
                    return Unpackable()
                return value

            async def async_ask(message, value):
                await asyncio.sleep(0)
                return ask(message, value)

            await server.register("odd", ask, remote_id="polywire.test.Peerside")
            await server.register("odd-async", async_ask, remote_id="polywire.test.Peerside")
            await server.register("odd-object", RaisingGetattr(), remote_id="polywire.test.Peerside")
            for name in ("odd", "odd-async"):
                ref = await client.lookup(name)
                with pytest.raises(kameo.HandlerError) as e:
                    await ref.ask("unprintable", 1)
                assert e.value.value == "Unprintable"
                with pytest.raises(kameo.HandlerError) as e:
                    await ref.ask("nameless", 1)
                assert e.value.value == "Nameless"
                with pytest.raises(kameo.SerializeHandlerError, match="no payload either"):
                    await ref.ask("bad-handler-error", 1)
                with pytest.raises(kameo.SerializeReply):
                    await ref.ask("unpackable", 1)
                # Healthy asks made at once with failing ones, drained in the
                # same batches, are all answered.
                results = await asyncio.gather(
                    *(ref.ask("unprintable" if i % 3 == 0 else "echo", i) for i in range(60)), return_exceptions=True
                )
                for i, r in enumerate(results):
                    if i % 3 == 0:
                        assert isinstance(r, kameo.HandlerError), r
                    else:
                        assert r == i, r
            # A handler object whose attributes raise: an error reply too.
            ref = await client.lookup("odd-object")
            with pytest.raises(kameo.HandlerError) as e:
                await ref.ask("echo", 1)
            assert "no attribute" in e.value.value
            assert await (await client.lookup("odd")).ask("echo", "still serving") == "still serving"

    run(main())
