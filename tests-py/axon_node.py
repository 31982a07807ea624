"""polywire's Python AXON peer as a program driven line by line on stdin, answering on
stdout: the Python peer of the Node suite (tests-js/axon_peer.test.js), with the line
protocol of the Rust ``axon-node`` (axon-interop/src/bin/axon-node.rs) for the commands
``add``, ``serve``, ``request``, ``send``, ``burst``, ``flood``, ``events``, ``count``,
``peers`` and ``quit``. It serves with the test handler every language's test peer shares
(see axon-interop/src/lib.rs).

    python tests-py/axon_node.py [--protocol axon/1|v2] [--serve]
"""

from __future__ import annotations

import asyncio
import json
import sys

from polywire import axon


def test_handler(protocol: str):
    async def handler(sender, kind, payload):
        if isinstance(payload.get("sleep_ms"), int):
            await asyncio.sleep(payload["sleep_ms"] / 1000)
        fail = payload.get("fail")
        if isinstance(fail, dict):
            raise axon.AxonRemoteError(fail.get("code", ""), fail.get("message", ""), retryable=fail.get("retryable") is True)
        echo = {"echo": payload, "from": sender}
        if protocol == "axon/1":
            return echo
        if kind == "query":
            return {"data": echo, "summary": "echo"}
        return {"accepted": True}

    return handler


def error_line(e: axon.AxonPeerError) -> str:
    detail = {"message": str(e)}
    if isinstance(e, axon.AxonRemoteError):
        detail.update(remote_code=e.remote_code, remote_message=e.message, retryable=e.retryable)
    return f"ERROR {e.code} {json.dumps(detail)}"


async def main(argv: list[str]) -> None:
    protocol = argv[argv.index("--protocol") + 1] if "--protocol" in argv else "axon/1"
    peer = await axon.Peer.start(protocol=protocol)
    if "--serve" in argv:
        peer.serve(test_handler(protocol))
    seen = {"message": 0, "error": 0, "pair_request": 0}
    last: list = []

    async def consume():
        async for event in peer.inbound():
            seen[event["type"]] += 1
            last.append(event)
            del last[:-1000]

    consumer = asyncio.get_running_loop().create_task(consume())
    print(f"READY {peer.agent_id} {peer.listen_addr} {peer.token} {peer.public_key}", flush=True)
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    kind_of = "query" if protocol == "v2" else "request"
    while True:
        raw = await reader.readline()
        if not raw:
            break
        cmd, _, rest = raw.decode().strip().partition(" ")
        # The last argument is the rest of the line (a JSON payload may hold spaces).
        args = rest.split(" ", {"send": 2, "request": 3}.get(cmd, -1))
        try:
            if cmd == "quit":
                break
            elif cmd == "add":
                out = f"ADDED {await peer.add_peer(args[0])}"
            elif cmd == "serve":
                peer.serve(test_handler(protocol) if args[0] == "on" else None)
                out = "OK"
            elif cmd == "request":
                to, kind, timeout, payload = args[0], args[1], float(args[2]), json.loads(args[3])
                out = "REPLY " + json.dumps(await peer.request(to, payload, kind=kind, timeout=timeout))
            elif cmd == "send":
                out = "SENT " + await peer.send(args[0], json.loads(args[2]), kind=args[1])
            elif cmd == "burst":
                to, n, timeout = args[0], int(args[1]), float(args[2])

                async def one(i):
                    p = {"i": i, "question": str(i)} if protocol == "v2" else {"i": i}
                    try:
                        r = await peer.request(to, p, kind=kind_of, timeout=timeout)
                    except axon.AxonPeerError:
                        return False
                    echo = r["data"]["echo"] if protocol == "v2" else r["echo"]
                    return echo.get("i") == i

                ok = sum(await asyncio.gather(*(one(i) for i in range(n))))
                out = f"BURST {ok} {n - ok}"
            elif cmd == "flood":
                to, n = args[0], int(args[1])
                for i in range(n):
                    if protocol == "v2":
                        await peer.send(to, {"topic": "flood", "data": i}, kind="notify")
                    else:
                        await peer.send(to, {"i": i})
                out = f"FLOODED {n}"
            elif cmd == "events":
                out = "EVENTS " + json.dumps(last)
                last.clear()
            elif cmd == "count":
                out = f"COUNT {seen['message']} {seen['error']} {seen['pair_request']}"
            elif cmd == "peers":
                out = "PEERS " + json.dumps(await peer.peers())
            else:
                out = "ERROR BAD_COMMAND " + json.dumps({"message": f"unknown command {cmd!r}"})
        except axon.AxonPeerError as e:
            out = error_line(e)
        print(out, flush=True)
    consumer.cancel()
    await peer.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
