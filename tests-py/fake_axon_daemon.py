"""A fake upstream AXON daemon for tests: an asyncio Unix-socket server that speaks the
daemon's IPC as upstream hwbehrens/axon defines it (``axon/src/ipc/{protocol,
client_handler,server}.rs`` and ``axon/src/daemon/command_handler.rs`` at main, v0.7.2
where it differs), written from those files' rules (no upstream code):

- lines end with ``\\n``; more than 65,536 bytes before the newline: a
  ``command_too_large`` reply without ``req_id``, then the connection is closed; a line
  that is not UTF-8: ``invalid_command`` without ``req_id``; a line that is not a command
  (serde's rules: ``cmd`` tag, required fields, field types, duplicate fields, JSON
  nesting of at most 127, numbers within a double): ``invalid_command`` with the line's
  string ``req_id`` echoed (main) or without it (``echo_parse_req_id=False``, v0.7.2);
- commands run one at a time, for every client, in the order they arrive (the daemon's
  main loop); ``send`` checks self_send, then the peer table (lowercased), then the
  payload (an object), then ``timeout_secs`` (0, or with a message: invalid_command);
- a request answered by a peer gets ``{"ok", "msg_id", "req_id", "response"}`` and the
  response is then pushed to every client as an ``inbound`` event;
- at most 64 clients (more are dropped at once).

Test hooks: :meth:`FakeDaemon.push` (an event to every client), per-peer behaviour
(``reply``: a function of the request giving ``(kind, payload)``, ``"unreachable"``,
``"hang"``), ``before_command`` (an async hook run with each command before it is
handled: push events, sleep, or return ``"close"`` to drop that client abruptly or
``"ignore"`` to never answer), and :meth:`FakeDaemon.drop_clients`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import os
import re
import uuid as _uuid

MAX_LINE = 64 * 1024
MAX_CLIENTS = 64
TEXTS = {
    "invalid_command": "malformed command, unknown cmd, or invalid field value",
    "command_too_large": "IPC command exceeds 64KB limit",
    "peer_not_found": "target agent_id not in peer table",
    "self_send": "cannot send messages to self",
    "peer_unreachable": "peer known but connection failed",
    "timeout": "request timed out waiting for peer response",
    "internal_error": "unexpected daemon error",
}
U64 = 2**64 - 1


def agent_id_of(key: bytes) -> str:
    return "ed25519." + hashlib.sha256(key).hexdigest()[:32]


def new_key(n: int) -> tuple:
    """A made-up 32-byte public key, its standard base64 and its agent id."""
    key = hashlib.sha256(b"fake-key-%d" % n).digest()
    return key, base64.b64encode(key).decode(), agent_id_of(key)


class ParseError(Exception):
    pass


def _pairs(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ParseError("duplicate field")
    return dict(pairs)


def _int(text: str):
    value = int(text)
    if -(2**63) <= value <= U64:
        return value
    if math.isinf(float(text)):
        raise ParseError("number out of range")
    return value


def _float(text: str):
    value = float(text)
    if math.isinf(value):
        raise ParseError("number out of range")
    return value


def _const(name):
    raise ParseError(f"{name} is not JSON")


def _depth(text: str) -> int:
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text, flags=re.S)
    depth = top = 0
    for ch in bare:
        if ch in "[{":
            depth += 1
            top = max(top, depth)
        elif ch in "]}":
            depth -= 1
    return top


def loads(text: str, duplicates: bool = True):
    """JSON as serde_json reads it: strict numbers, no NaN, recursion limit 128 (at most
    127 nested containers), lone surrogate escapes refused; duplicate keys refused as
    serde's derive refuses them (a ``serde_json::Value`` keeps the last: ``duplicates=False``)."""
    if text.count("[") + text.count("{") > 127 and _depth(text) > 127:
        raise ParseError("recursion limit exceeded")
    if re.search(r'(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F]', text):
        # Surrogate escapes: only a correct high+low pair is accepted.
        for m in re.finditer(r'(?<!\\)((?:\\\\)*)\\u([dD][89a-fA-F][0-9a-fA-F]{2})(\\u([dD][c-fC-F][0-9a-fA-F]{2}))?', text):
            if int(m.group(2), 16) >= 0xDC00 or m.group(3) is None:
                raise ParseError("lone surrogate")
    try:
        return json.loads(text, object_pairs_hook=_pairs if duplicates else None, parse_int=_int, parse_float=_float,
                          parse_constant=_const)
    except ValueError as e:
        raise ParseError(str(e)) from None


def parse_uuid(value):
    if not isinstance(value, str):
        raise ParseError("uuid must be a string")
    s = value
    if len(s) == 38 and s[0] == "{" and s[-1] == "}":
        s = s[1:-1]
    elif len(s) == 45 and s.startswith("urn:uuid:"):
        s = s[9:]
    if re.fullmatch(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", s) or re.fullmatch(r"[0-9a-fA-F]{32}", s):
        return str(_uuid.UUID(s.replace("-", "")))
    raise ParseError("invalid uuid")


ALL_COMMANDS = ("send", "peers", "status", "whoami", "add_peer")


def parse_command(line: str, commands=ALL_COMMANDS) -> dict:
    """An IpcCommand (serde: tag "cmd", snake_case variants, unknown fields ignored)."""
    obj = loads(line)
    if not isinstance(obj, dict):
        raise ParseError("not an object")
    cmd = obj.get("cmd")
    if not isinstance(cmd, str) or cmd not in commands:
        raise ParseError("unknown cmd")
    out = {"cmd": cmd}
    req_id = obj.get("req_id")
    if req_id is not None and not isinstance(req_id, str):
        raise ParseError("req_id must be a string")
    out["req_id"] = req_id

    def req_str(name):
        if name not in obj or not isinstance(obj[name], str):
            raise ParseError(f"{name} must be a string")
        return obj[name]

    if cmd == "send":
        out["to"] = req_str("to")
        if obj.get("kind") not in ("request", "message") or not isinstance(obj.get("kind"), str):
            raise ParseError("kind")
        out["kind"] = obj["kind"]
        if "payload" not in obj:
            raise ParseError("payload missing")
        out["payload"] = obj["payload"]
        t = obj.get("timeout_secs")
        if t is not None and (isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= U64):
            raise ParseError("timeout_secs")
        out["timeout_secs"] = t
        r = obj.get("ref")
        out["ref"] = None if r is None else parse_uuid(r)
    elif cmd == "add_peer":
        out["pubkey"] = req_str("pubkey")
        out["addr"] = req_str("addr")
    return out


def extract_req_id(line: str):
    try:
        value = loads(line, duplicates=False)
    except ParseError:
        return None
    if isinstance(value, dict) and isinstance(value.get("req_id"), str):
        return value["req_id"]
    return None


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def envelope(id_, kind, payload, ref=None, from_=None, to=None) -> dict:
    e = {"id": id_, "kind": kind}
    if ref is not None:
        e["ref"] = ref
    e["payload"] = payload
    if from_ is not None:
        e["from"] = from_
    if to is not None:
        e["to"] = to
    return e


class Client:
    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer
        self.closed = False

    def write(self, obj_or_text) -> None:
        if self.closed:
            return
        text = obj_or_text if isinstance(obj_or_text, str) else dumps(obj_or_text)
        self.writer.write(text.encode("utf-8", "surrogatepass") + b"\n")

    def abort(self) -> None:
        if not self.closed:
            self.closed = True
            self.writer.transport.abort()


class FakeDaemon:
    def __init__(self, path: str, *, name: str | None = None, version: str = "0.7.2", echo_parse_req_id: bool = True,
                 commands=ALL_COMMANDS):
        self.path = path
        self.known_commands = commands
        key, self.public_key, self.agent_id = new_key(0)
        self.name = name
        self.version = version
        self.echo_parse_req_id = echo_parse_req_id
        self.peers: dict = {}
        self.clients: list = []
        self.commands: list = []  # every parsed command, in order
        self.lines: list = []  # every line received (bytes)
        self.before_command = None
        self.sent = self.received = 0
        self.queue: asyncio.Queue = asyncio.Queue()
        self.loop = asyncio.get_running_loop()
        self.start_time = self.loop.time()
        self.server = None
        self.main = None
        self.handlers: set = set()

    async def start(self) -> "FakeDaemon":
        self.server = await asyncio.start_unix_server(self._client, path=self.path, limit=1 << 22)
        os.chmod(self.path, 0o600)
        self.main = self.loop.create_task(self._main())
        return self

    async def stop(self) -> None:
        self.server.close()
        self.drop_clients()
        self.main.cancel()
        for t in list(self.handlers):
            t.cancel()
        await asyncio.gather(self.main, *self.handlers, return_exceptions=True)
        await self.server.wait_closed()

    async def __aenter__(self):
        return await self.start()

    async def __aexit__(self, *exc):
        await self.stop()

    # -- peers

    def add(self, n: int, *, addr: str = "127.0.0.1:7100", status: str = "connected", reply=None, source: str = "static",
            rtt_ms=None) -> str:
        """A peer in the table; ``reply``: None (the upstream default, error/unhandled), a
        function ``(request_envelope) -> (kind, payload)`` (maybe async), "unreachable" or
        "hang"."""
        _, pub, aid = new_key(n)
        self.peers[aid] = {"agent_id": aid, "addr": addr, "status": status, "source": source, "pubkey": pub,
                           "reply": reply, "rtt_ms": rtt_ms}
        return aid

    # -- events

    def push(self, event: dict) -> None:
        for c in list(self.clients):
            c.write(event)

    def inbound(self, from_: str, kind: str, payload: dict, ref=None) -> dict:
        env = envelope(str(_uuid.uuid4()), kind, payload, ref, from_, self.agent_id)
        event = {"event": "inbound", "from": from_, "envelope": env}
        self.push(event)
        return event

    def pair_request(self, agent_id: str, pubkey: str, addr=None) -> dict:
        event = {"event": "pair_request", "agent_id": agent_id, "pubkey": pubkey}
        if addr is not None:
            event["addr"] = addr
        self.push(event)
        return event

    def drop_clients(self) -> None:
        for c in list(self.clients):
            c.abort()

    # -- the connection

    async def _client(self, reader, writer) -> None:
        task = asyncio.current_task()
        self.handlers.add(task)
        client = Client(reader, writer)
        if len(self.clients) >= MAX_CLIENTS:
            client.abort()
            self.handlers.discard(task)
            return
        self.clients.append(client)
        try:
            await self._read(client)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            if client in self.clients:
                self.clients.remove(client)
            if not client.closed:
                client.closed = True
                writer.close()
            self.handlers.discard(task)

    async def _read(self, client: Client) -> None:
        reader = client.reader
        buf = bytearray()
        while not client.closed:
            chunk = await reader.read(1 << 16)
            if not chunk:
                return
            buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    if len(buf) > MAX_LINE:
                        return self._too_large(client)
                    break
                if nl > MAX_LINE:
                    return self._too_large(client)
                line = bytes(buf[:nl])
                del buf[: nl + 1]
                self.lines.append(line)
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError:
                    client.write({"ok": False, "error": "invalid_command", "message": TEXTS["invalid_command"]})
                    continue
                try:
                    command = parse_command(text, self.known_commands)
                except ParseError:
                    reply = {"ok": False, "error": "invalid_command", "message": TEXTS["invalid_command"]}
                    rid = extract_req_id(text) if self.echo_parse_req_id else None
                    if rid is not None:
                        reply["req_id"] = rid
                    client.write(reply)
                    continue
                self.commands.append(command)
                await self.queue.put((client, command))

    def _too_large(self, client: Client) -> None:
        client.write({"ok": False, "error": "command_too_large", "message": TEXTS["command_too_large"]})
        client.closed = True
        client.writer.close()

    # -- the main loop: one command at a time

    async def _main(self) -> None:
        while True:
            client, command = await self.queue.get()
            if self.before_command is not None:
                verdict = await self.before_command(command, client)
                if verdict == "close":
                    client.abort()
                    continue
                if verdict == "ignore":
                    continue
            try:
                await self._handle(client, command)
            except Exception as e:  # noqa: BLE001 - a bug in a test hook: the reply says so
                self._error(client, "internal_error", command.get("req_id"))
                print("fake daemon:", repr(e))

    def _error(self, client: Client, code: str, req_id) -> None:
        reply = {"ok": False, "error": code, "message": TEXTS[code]}
        if req_id is not None:
            reply["req_id"] = req_id
        client.write(reply)

    def _ok(self, client: Client, fields: dict, req_id, front=()) -> None:
        reply = {"ok": True}
        reply.update(fields)
        if req_id is not None:
            reply["req_id"] = req_id
        client.write(reply)

    async def _handle(self, client: Client, c: dict) -> None:
        rid = c["req_id"]
        cmd = c["cmd"]
        if cmd == "peers":
            peers = []
            for aid in sorted(self.peers):
                p = self.peers[aid]
                entry = {"agent_id": aid, "addr": p["addr"], "status": p["status"]}
                if p["rtt_ms"] is not None:
                    entry["rtt_ms"] = p["rtt_ms"]
                entry["source"] = p["source"]
                peers.append(entry)
            reply = {"ok": True, "peers": peers}
            if rid is not None:
                reply["req_id"] = rid
            client.write(reply)
        elif cmd == "status":
            reply = {"ok": True, "uptime_secs": int(self.loop.time() - self.start_time),
                     "peers_connected": sum(1 for p in self.peers.values() if p["status"] == "connected"),
                     "messages_sent": self.sent, "messages_received": self.received}
            if rid is not None:
                reply["req_id"] = rid
            client.write(reply)
        elif cmd == "whoami":
            reply = {"ok": True, "agent_id": self.agent_id, "public_key": self.public_key}
            if self.name is not None:
                reply["name"] = self.name
            reply["version"] = self.version
            reply["uptime_secs"] = int(self.loop.time() - self.start_time)
            if rid is not None:
                reply["req_id"] = rid
            client.write(reply)
        elif cmd == "add_peer":
            self._add_peer(client, c)
        else:
            await self._send(client, c)

    def _add_peer(self, client: Client, c: dict) -> None:
        rid = c["req_id"]
        text = c["pubkey"].strip()
        try:
            key = base64.b64decode(text, validate=True)
            ok = base64.b64encode(key).decode() == text and len(key) == 32
        except ValueError:
            ok = False
        if not ok:
            return self._error(client, "invalid_command", rid)
        aid = agent_id_of(key)
        if aid == self.agent_id:
            return self._error(client, "self_send", rid)
        if aid in self.peers:
            return self._error(client, "invalid_command", rid)
        m = re.fullmatch(r"(.+):([0-9]+)", c["addr"].strip())
        if not m or int(m.group(2)) > 65535 or m.group(1) not in ("127.0.0.1", "localhost", "[::1]"):
            return self._error(client, "invalid_command", rid)
        host = "127.0.0.1" if m.group(1) == "localhost" else m.group(1)
        self.peers[aid] = {"agent_id": aid, "addr": f"{host}:{int(m.group(2))}", "status": "disconnected",
                           "source": "static", "pubkey": c["pubkey"], "reply": None, "rtt_ms": None}
        reply = {"ok": True, "agent_id": aid}
        if rid is not None:
            reply["req_id"] = rid
        client.write(reply)

    async def _send(self, client: Client, c: dict) -> None:
        rid = c["req_id"]
        to = c["to"]
        if to == self.agent_id:
            return self._error(client, "self_send", rid)
        peer = self.peers.get(to.lower())
        if peer is None:
            return self._error(client, "peer_not_found", rid)
        if not isinstance(c["payload"], dict):
            return self._error(client, "invalid_command", rid)
        if c["kind"] == "request":
            secs = 30 if c["timeout_secs"] is None else c["timeout_secs"]
            if secs == 0:
                return self._error(client, "invalid_command", rid)
        else:
            if c["timeout_secs"] is not None:
                return self._error(client, "invalid_command", rid)
            secs = 10
        msg_id = str(_uuid.uuid4())
        request = envelope(msg_id, c["kind"], c["payload"], c["ref"], self.agent_id, peer["agent_id"])
        behaviour = peer["reply"]
        try:
            outcome = await asyncio.wait_for(self._deliver(behaviour, request), timeout=secs)
        except asyncio.TimeoutError:
            return self._error(client, "timeout" if c["kind"] == "request" else "peer_unreachable", rid)
        if outcome is None:
            return self._error(client, "peer_unreachable", rid)
        self.sent += 1
        reply = {"ok": True, "msg_id": msg_id}
        if rid is not None:
            reply["req_id"] = rid
        response = None
        if c["kind"] == "request":
            kind, payload = outcome
            self.received += 1
            response = envelope(str(_uuid.uuid4()), kind, payload, msg_id, peer["agent_id"], self.agent_id)
            reply["response"] = response
        client.write(reply)
        if response is not None:
            self.push({"event": "inbound", "from": peer["agent_id"], "envelope": response})

    async def _deliver(self, behaviour, request):
        if behaviour == "unreachable":
            return None
        if behaviour == "hang":
            await asyncio.sleep(3600)
        if request["kind"] == "message":
            return ()
        if behaviour is None:
            return ("error", {"code": "unhandled",
                              "message": f"no application handler registered for request '{request['id']}'",
                              "retryable": False})
        result = behaviour(request)
        if asyncio.iscoroutine(result):
            result = await result
        return result
