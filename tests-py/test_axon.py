"""polywire.axon against the shared vectors (checked against upstream's own message module),
the session scenarios, properties, and messages crossing to Node and back."""

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_vectors, node_module
from polywire import AxonError, PolywireError, axon

V = load_vectors("axon.json")
A = "ed25519.fe812c12f3ab4ce6ac5db69ac352f906"
B = "ed25519.b600306cfa76723fdec395e53a9b3d9f"


@pytest.mark.parametrize("vec", V["messages"], ids=lambda v: v["name"])
def test_messages(vec):
    body = vec["json"].encode()
    env = axon.decode(body)
    assert env == vec["decoded"]
    assert axon.decode(vec["json"]) == env  # str input too
    # Encoding the message as sent gives upstream's bytes.
    as_sent = axon.decode(body, fill_defaults=False)
    assert axon.encode(as_sent).decode() == vec["encoded"]
    assert axon.encode(json.loads(body)).decode() == vec["encoded"]
    assert axon.decode(axon.encode(env)) == env
    assert axon.validate(json.loads(body)) == env


def error_body(vec):
    if vec["json"] is not None:
        return vec["json"].encode()
    env = {"v": 1, "id": "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1", "from": A, "to": B, "ts": 1, "kind": "notify",
           "payload": {"topic": "t", "data": "x" * vec["notify_data_repeat"]}}
    return json.dumps(env).encode()


@pytest.mark.parametrize("vec", V["errors"], ids=lambda v: v["name"])
def test_errors(vec):
    with pytest.raises(AxonError) as info:
        axon.decode(error_body(vec))
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, PolywireError)
    assert e.code == vec["code"], str(e)
    assert e.code in axon.ERROR_CODES
    if "message_contains" in vec:
        assert vec["message_contains"] in e.msg, e.msg


def test_agent_ids():
    for a in V["agent_ids"]:
        seed, key = bytes.fromhex(a["seed"]), bytes.fromhex(a["public_key"])
        assert axon.public_key_from_seed(seed) == key
        assert axon.agent_id(key) == a["agent_id"]
        assert axon.agent_id_from_seed(bytearray(seed)) == a["agent_id"]
    with pytest.raises(AxonError):
        axon.agent_id(b"short")
    assert axon.is_agent_id(A) and not axon.is_agent_id("agent-id")
    assert axon.same_agent(A, A.upper().replace("ED25519", "ed25519"))


def test_negotiation_and_kinds():
    for n in V["negotiation"]:
        if "selected" in n:
            assert axon.negotiate(n["local"], n["remote"]) == n["selected"]
        else:
            with pytest.raises(AxonError) as info:
                axon.negotiate(n["local"], n["remote"])
            assert info.value.code == n["code"]
    assert len(V["kinds"]) == len(axon.KINDS) == 13
    for k in V["kinds"]:
        r = axon.KIND_RULES[k["kind"]]
        assert r["required"] == k["required"] and r["expects_response"] == k["expects_response"]
        assert r["response_kinds"] == k["response_kinds"] and r["stream"] == k["stream"]
        assert r["later_responses"] == k.get("later_responses", [])
    assert set(axon.REQUIRED_KINDS) == {"hello", "ping", "pong", "query", "response", "notify", "error"}
    assert axon.PAYLOAD_DEFAULTS == V["defaults"]


def test_builders():
    for r in V["replies"]:
        if "encoded" in r:
            env = axon.reply(r["request"], r["kind"], r["payload"], id=r["id"], ts=r["ts"])
            assert axon.encode(env).decode() == r["encoded"], r["name"]
        else:
            with pytest.raises(AxonError) as info:
                axon.reply(r["request"], r["kind"], r["payload"], id=r["id"], ts=r["ts"])
            assert info.value.code == r["code"], r["name"]
    for r in V["error_replies"]:
        env = axon.error_envelope(r["request"], r["code"], r["message"], retryable=r["retryable"], id=r["id"], ts=r["ts"])
        assert axon.encode(env).decode() == r["encoded"]
    q = axon.envelope(A, B, "query", {"question": "?"})
    assert q["v"] == 1 and q["ref"] is None and q["ts"] > 1_700_000_000_000
    r = axon.reply(q, "response", {"data": None, "summary": "no"})
    assert (r["from"], r["to"], r["ref"]) == (B, A, q["id"]) and r["id"] != q["id"]
    with pytest.raises(AxonError) as info:
        axon.envelope(A, B, "subscribe", {})
    assert info.value.code == "unknown_kind"


def fill(text, saved):
    for k, v in saved.items():
        text = text.replace("{" + k + "}", v)
    return text


@pytest.mark.parametrize("scenario", V["sessions"], ids=lambda s: s["name"])
def test_sessions(scenario):
    c = scenario["config"]
    s = axon.Session(c["local_id"], protocol_versions=c.get("protocol_versions"), expected_peer=c.get("expected_peer"))
    saved = {}
    for i, step in enumerate(scenario["steps"]):
        at = f"step {i}"
        want = step["expect"]
        w = lambda key: fill(want[key], saved) if isinstance(want.get(key), str) else want.get(key)
        if "receive" in step:
            got = s.receive(fill(step["receive"], saved).encode(), step["stream"], now_ms=step["now"])
            assert got["action"] == want["action"], (at, got)
            if got["action"] == "deliver":
                assert got["envelope"]["id"] == w("id"), at
                assert (got["in_reply_to"] or {}).get("id") == w("in_reply_to"), at
            elif got["action"] == "respond":
                reply = got["reply"]
                assert reply["kind"] == want["kind"] and reply["ref"] == w("ref"), (at, reply)
                assert axon.decode(got["bytes"]) == axon.decode(axon.encode(reply))
                for key in ("code", "message"):
                    if key in want:
                        assert reply["payload"][key] == w(key), at
                if "selected_version" in want:
                    assert reply["payload"]["selected_version"] == want["selected_version"]
                if "delivered" in want:
                    assert got["delivered"]["id"] == w("delivered")
            else:
                assert got["reason"] == want["reason"] and got["message"], (at, got)
        elif "send" in step:
            if "route" in want:
                assert s.send(step["send"], now_ms=step["now"])["route"] == want["route"], at
            else:
                with pytest.raises(AxonError) as info:
                    s.send(step["send"], now_ms=step["now"])
                assert info.value.code == want["error"], at
        elif "hello" in step:
            out = s.hello(step["hello"], now_ms=step["now"])
            assert out["route"] == want["route"]
            saved[step["save"]] = out["envelope"]["id"]
        elif "expire" in step:
            assert [p["id"] for p in s.expire(now_ms=step["expire"])] == want["expired"], at
        if "ready" in want:
            assert s.ready is want["ready"], at
        if "peer" in want:
            assert s.peer == w("peer"), at
        if "version" in want:
            assert s.version == want["version"], at
        if "pending" in want:
            assert len(s.pending) == want["pending"], at


def test_session_pair_in_python():
    a, b = axon.Session(A, agent_name="Alice"), axon.Session(B)
    hello = a.hello(B, now_ms=1)
    got = b.receive(hello["bytes"], "bidirectional", now_ms=2)
    assert got["action"] == "respond" and got["delivered"]["payload"]["agent_name"] == "Alice"
    assert a.receive(got["bytes"], "bidirectional", now_ms=3)["action"] == "deliver"
    assert a.ready and b.ready and a.peer == B and b.peer == A and a.version == 1
    q = a.send(axon.envelope(A, B, "query", {"question": "Who is home?"}, ts=4), now_ms=4)
    req = b.receive(q["bytes"], "bidirectional", now_ms=5)["envelope"]
    assert req["payload"]["deadline_ms"] == 30000 and req["payload"]["max_tokens"] == 0
    ans = b.send(axon.reply(req, "response", {"data": ["Alice"], "summary": "Alice is home."}, ts=6), now_ms=6)
    assert ans["route"] == "reply_on_request_stream"
    back = a.receive(ans["bytes"], "bidirectional", now_ms=7)
    assert back["in_reply_to"]["id"] == req["id"] and a.pending == []


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=16,
)


@settings(max_examples=200, deadline=None)
@given(json_values, st.text(max_size=20))
def test_notify_roundtrip(data, topic):
    env = axon.envelope(A, B, "notify", {"topic": topic, "data": data, "x_extra": data}, ts=1)
    body = axon.encode(env)
    back = axon.decode(body)
    assert back == env | {"payload": env["payload"] | {"importance": "low"}}
    assert axon.encode(axon.decode(body, fill_defaults=False)) == body


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_garbage_never_crashes(b):
    try:
        axon.decode(b)
    except AxonError:
        pass
    s = axon.Session(B)
    assert s.receive(b, "bidirectional", now_ms=1)["action"] in ("dropped", "respond")


NODE = shutil.which("node")

NODE_SCRIPT = r"""
const axon = require(process.argv[1]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = {
  decoded: input.py.map((b) => axon.decode(Buffer.from(b, 'utf8'))),
  encoded: input.messages.map((m) => Buffer.from(axon.encode(JSON.parse(m))).toString('utf8')),
};
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_cross_language(root):
    # Integers and strings only: JavaScript numbers have no int/float distinction.
    msgs = [m["json"] for m in V["messages"] if "numbers in data" not in m["name"]]
    py = [axon.encode(axon.decode(m, fill_defaults=False)).decode() for m in msgs]
    proc = subprocess.run(
        [NODE, "-e", NODE_SCRIPT, str(node_module("axon"))],
        input=json.dumps({"py": py, "messages": msgs}), capture_output=True, text=True, timeout=60, check=True,
    )
    out = json.loads(proc.stdout)
    assert out["decoded"] == [axon.decode(b) for b in py]  # Python -> Node
    assert out["encoded"] == py  # Node writes the same bytes as Python
