"""The ``polywire`` command (the crate polywire-cli, which polywire/cli.py runs), run as a
subprocess (``python -m polywire`` and the installed console script), and the same command
of the Node package (bindings-node/lib/cli.js) giving the same bytes for the same inputs.

What tested cli.py's internals directly is in the crate now: json_error and the V8 messages
(cli/src/json.rs), js_number (cli/src/json.rs, with the subprocess check below),
compute_stats and format_stats (cli/src/stats.rs), FrameScanner (cli/tests/run.rs,
kado_dump_in_reads_of_any_size)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig

import pytest

import polywire
from conftest import NODE_PACKAGE
from polywire import kado, tether, toon

NODE = shutil.which("node")
DATA = {"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}], "tags": ["a", "b"], "n": None}
DATA_JSON = json.dumps(DATA)
DATA_TOON = "users[2]{id,name}:\n  1,Ada\n  2,Bob\ntags[2]: a,b\nn: null"
DATA_PRETTY = json.dumps(DATA, indent=2)  # what JSON.stringify(DATA, null, 2) writes


def cli(*args, input=b"", cwd=None):
    """Run `python -m polywire args` with `input` on stdin (bytes)."""
    r = subprocess.run([sys.executable, "-m", "polywire", *args], input=input, capture_output=True, cwd=cwd, timeout=60)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "data.json").write_text(DATA_JSON, encoding="utf-8")
    (tmp_path / "data.toon").write_text(DATA_TOON + "\n", encoding="utf-8")
    return tmp_path


def test_encode_a_file_to_stdout(files):
    code, out, err = cli(str(files / "data.json"))
    assert (code, out, err) == (0, DATA_TOON + "\n", "")


def test_decode_a_file_to_stdout(files):
    code, out, err = cli(str(files / "data.toon"))
    assert (code, out, err) == (0, DATA_PRETTY + "\n", "")


def test_stdin_with_dash_and_without_argument():
    assert cli("-", input=DATA_JSON.encode()) == (0, DATA_TOON + "\n", "")
    assert cli(input=DATA_JSON.encode()) == (0, DATA_TOON + "\n", "")
    assert cli("-d", input=DATA_TOON.encode()) == (0, DATA_PRETTY + "\n", "")
    assert cli("--decode", "-", input=DATA_TOON.encode()) == (0, DATA_PRETTY + "\n", "")


def test_output_file(files):
    code, out, err = cli("data.json", "-o", "out.toon", cwd=files)
    assert (code, out) == (0, "")
    assert err == "Encoded `data.json` \u2192 `out.toon`\n"
    assert (files / "out.toon").read_text(encoding="utf-8") == DATA_TOON + "\n"
    code, out, err = cli("--output", "out.json", "-d", input=DATA_TOON.encode(), cwd=files)
    assert (code, out, err) == (0, "", "Decoded `stdin` \u2192 `out.json`\n")
    assert json.loads((files / "out.json").read_text(encoding="utf-8")) == DATA
    # `-o -` is standard output.
    assert cli("data.json", "-o", "-", cwd=files) == (0, DATA_TOON + "\n", "")


def test_mode_from_the_extension_or_forced(files):
    (files / "json.txt").write_text(DATA_JSON, encoding="utf-8")
    (files / "toon.txt").write_text(DATA_TOON, encoding="utf-8")
    (files / "json.toon").write_text(DATA_JSON, encoding="utf-8")
    assert cli("json.txt", cwd=files)[1] == DATA_TOON + "\n"  # anything else encodes
    assert cli("-d", "toon.txt", cwd=files)[1] == DATA_PRETTY + "\n"
    assert cli("json.toon", "-e", cwd=files)[1] == DATA_TOON + "\n"
    (files / "x.toon").write_text('{"a": [1]}', encoding="utf-8")
    assert cli("x.toon", cwd=files)[1] == '{\n  "{\\"a\\"": "[1]}"\n}\n'  # .toon decodes, whatever it holds


@pytest.mark.parametrize(
    ("spelling", "char"), [(",", ","), ("\t", "\t"), ("|", "|"), ("\\t", "\t"), ("tab", "\t"), ("pipe", "|")]
)
def test_each_delimiter(spelling, char):
    code, out, err = cli("--delimiter", spelling, input=DATA_JSON.encode())
    assert (code, out, err) == (0, toon.dumps(DATA, delimiter=char) + "\n", "")
    if char != ",":
        assert f"users[2{char}]{{id{char}name}}:" in out


def test_indent():
    code, out, _ = cli("--indent", "4", input=DATA_JSON.encode())
    assert (code, out) == (0, toon.dumps(DATA, indent_size=4) + "\n")
    code, out, _ = cli("-d", "--indent", "4", input=out.encode())
    assert (code, out) == (0, json.dumps(DATA, indent=4) + "\n")
    code, out, _ = cli("-d", "--indent=3", input=toon.dumps(DATA, indent_size=3).encode())
    assert (code, out) == (0, json.dumps(DATA, indent=3) + "\n")
    assert cli("--indent", "x", input=DATA_JSON.encode())[0] == 2
    assert cli("-d", "--indent", "0", input=DATA_TOON.encode())[0] == 2


def test_no_strict_accepts_what_strict_refuses():
    code, out, err = cli("-d", input=b"a[3]: 1,2\n")
    assert (code, out) == (1, "")
    assert err.startswith("polywire: Failed to decode TOON at line 1, column 1: Expected 3 inline-form values, but got 2\n")
    assert "\n  1 | a[3]: 1,2\n      ^\n" in err
    assert cli("-d", "--no-strict", input=b"a[3]: 1,2\n") == (0, '{\n  "a": [\n    1,\n    2\n  ]\n}\n', "")
    # Duplicate keys: written as the events come, the last one winning for a reader.
    assert cli("-d", "--no-strict", input=b"a: 1\na: 2\n")[1] == '{\n  "a": 1,\n  "a": 2\n}\n'
    # --strict after --no-strict wins, as any later flag does.
    assert cli("-d", "--no-strict", "--strict", input=b"a[3]: 1,2\n")[0] == 1


def test_stats():
    code, out, err = cli("--stats", input=DATA_JSON.encode())
    assert (code, out) == (0, DATA_TOON + "\n")
    from polywire.llm import count_tokens

    j, t = len(DATA_JSON), len(DATA_TOON)
    jt, tt = count_tokens(DATA_JSON), count_tokens(DATA_TOON)
    pct = lambda a, b: f"{(a - b) / a * 100:.1f}%"  # noqa: E731
    assert [line.split() for line in err.splitlines()] == [
        ["tokens", "bytes", "chars"],
        ["JSON", str(jt), str(j), str(j)],
        ["TOON", str(tt), str(t), str(t)],
        ["saved", str(jt - tt), str(j - t), str(j - t)],
        ["saved", "%", pct(jt, tt), pct(j, t), pct(j, t)],
    ]
    # Another tokenizer: cl100k_base counts differently.
    err2 = cli("--stats", "--encoding", "cl100k_base", input=DATA_JSON.encode())[2]
    assert err2.splitlines()[1].split()[1] == str(count_tokens(DATA_JSON, "cl100k_base"))
    # Characters and bytes differ for non-ASCII text; decoding measures the JSON written.
    code, out, err = cli("-d", "--stats", input="k: é\n".encode())
    assert (code, out) == (0, '{\n  "k": "é"\n}\n')
    rows = [line.split() for line in err.splitlines()]
    assert rows[1] == ["JSON", str(count_tokens(out[:-1])), str(len(out.encode()) - 1), str(len(out) - 1)]
    assert rows[2] == ["TOON", str(count_tokens("k: é\n")), "6", "5"]


def test_tokens_and_choose():
    from polywire import llm, toon

    text = DATA_JSON + "\n😀 <|endoftext|>"
    for extra in ([], ["--encoding", "cl100k_base"]):
        code, out, err = cli("tokens", *extra, input=text.encode())
        assert (code, err) == (0, "")
        assert out == f"{llm.count_tokens(text, *extra[1:])}\n"
    value = json.loads(DATA_JSON)
    code, out, err = cli("choose", "--pretty", input=DATA_JSON.encode())
    assert code == 0
    r = llm.encode_for_llm(value, formats=("toon", "json", "json-pretty"))
    assert out == r.text + "\n"
    rows = [line.split() for line in err.splitlines()]
    assert rows[0] == ["tokens", "bytes"]
    assert [row[:2] for row in rows[1:]] == [[n, str(c)] for n, c in r.candidates.items()]
    assert [row[0] for row in rows[1:] if row[-1] == "chosen"] == [r.format]
    code, out, err = cli("choose", "--delimiter", "|", "--encoding", "cl100k_base", input=DATA_JSON.encode())
    assert [line.split()[0] for line in err.splitlines()[1:]] == ["toon-pipe", "json"]
    # A .toon input is decoded first.
    code, out, err = cli("choose", "-", input=toon.dumps(value).encode())  # stdin is JSON: fails
    assert code == 1 and "Failed to parse JSON" in err
    assert cli("tokens", "--encoding", "nope", input=b"x")[0] == 1


def test_bad_toon_exits_1_with_the_line():
    code, out, err = cli("-d", input=b"a:\n   b: 1\n")
    assert (code, out) == (1, "")
    assert "polywire: Failed to decode TOON at line 2, column 4: Indentation must be exact multiple of 2" in err
    code, _, err = cli("-d", input=b'a: "\xff"\n')
    assert (code, err) == (1, "polywire: Input is not valid UTF-8 at byte 4. Pass --no-strict to replace ill-formed bytes\n")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": [1,2,}', "line 1, column 12: Unexpected token '}'"),
        ('{\n  "a": 1\n  "b": 2\n}', "line 3, column 3: Expected ',' or '}' after property value"),
        ("", "line 1, column 1: Unexpected end of JSON input"),
        ("[1, NaN]", "line 1, column 5: Unexpected token 'N'"),
        ('{"a": 1} x', "line 1, column 10: Unexpected non-whitespace character after JSON"),
    ],
)
def test_bad_json_exits_1_with_the_position(text, where):
    assert cli(input=text.encode()) == (1, "", f"polywire: Failed to parse JSON at {where}\n")


def test_numbers_as_javascript_writes_them():
    rng = random.Random(3)
    values = [0.1, 1e21, 1e20, 1e-7, 1e-6, 5e-324, 1.7976931348623157e308, 123456789012345680.0, 2.0**53, -1.5]
    values += [rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30) for _ in range(300)]
    # The command writes them as JavaScript does (the form TOON writes them in), both ways.
    code, out, err = cli(input=("[" + ", ".join(repr(x) for x in values) + "]").encode())
    assert (code, err) == (0, "")
    assert out == toon.dumps(values) + "\n"
    code, out, err = cli("-d", "--indent", "1", input=toon.dumps(values).encode())
    assert (code, err) == (0, "")
    assert out.split("\n")[1:-2] == [" " + toon.dumps(x) + ("," if i < len(values) - 1 else "") for i, x in enumerate(values)]
    # JSON integers beyond 2**53 become doubles, as JSON.parse makes them.
    assert cli(input=b'{"a": 12345678901234567890, "b": 1.0, "c": -0}')[1] == "a: 12345678901234567000\nb: 1\nc: 0\n"
    assert cli("-d", input=b"a: 12345678901234567890\n")[1] == '{\n  "a": 12345678901234567000\n}\n'


def capture():
    """A Kado capture: three frames, the second compressed."""
    frames = [
        kado.encode(kado.MessageType.TOOL_CALL, {"toolName": "read", "args": {"path": "a.txt", "2": 1}}, 1, 1700000000000),
        kado.encode(kado.MessageType.TOOL_RESULT, {"text": "x" * 4000}, 2, 1700000000001),
        kado.encode(kado.MessageType.HEARTBEAT, None, 3, 2**64 - 1),
    ]
    assert kado.is_compressed(frames[1][18:]) and not kado.is_compressed(frames[0][18:])
    return frames


def expected_dump(frames):
    lines, offset = [], 0
    for f in frames:
        h = kado.decode_header(f)
        payload = kado.decode(f)["payload"]
        lines.append(
            {
                "offset": offset,
                "version": 1,
                "type": h["type"],
                "typeName": kado.MessageType(h["type"]).name,
                "payloadLength": h["payload_length"],
                "timestamp": h["timestamp"],
                "sequenceId": h["sequence_id"],
                "compressed": kado.is_compressed(f[18:]),
                "payload": payload,
            }
        )
        offset += len(f)
    return lines


def test_kado_dump(tmp_path):
    frames = capture()
    (tmp_path / "capture.kado").write_bytes(b"".join(frames))
    code, out, err = cli("kado", "dump", str(tmp_path / "capture.kado"))
    assert (code, err) == (0, "")
    assert [json.loads(line) for line in out.splitlines()] == expected_dump(frames)
    # Array-index keys first, as JavaScript orders them; the exact u64 timestamp.
    assert '"args":{"2":1,"path":"a.txt"}' in out and '"timestamp":18446744073709551615' in out
    assert cli("kado", "dump", "-", input=b"".join(frames)) == (0, out, "")
    assert cli("kado", "dump", input=b"".join(frames)) == (0, out, "")


def test_kado_dump_of_a_broken_capture():
    frames = capture()
    code, out, err = cli("kado", "dump", input=b"".join(frames)[:-3])
    assert code == 1
    assert [json.loads(line)["sequenceId"] for line in out.splitlines()] == [1, 2]  # the frames before the fault
    assert err.startswith("polywire: ") and "at byte" in err
    code, out, err = cli("kado", "dump", input=b"\x01\x09" + bytes(16))
    assert (code, out) == (1, "")
    assert err == "polywire: unknown message type 9 (expected 1..=8, INSTRUCTION to CONTEXT_RESPONSE) at byte 1\n"


def test_tether_hex_and_unhex():
    # A message send (its strings unpadded: not whole words) and an Array of words.
    send = tether.encode_message_send(5, "printString", [1, "é"], uuid="00000000-0000-0000-0000-000000000001")
    for data, flags in [(send, ["--no-words"]), (tether.encode([1, 2, None]), [])]:
        code, out, err = cli("tether", "hex", input=data)
        assert (code, out, err) == (0, tether.to_hex(data) + "\n", "")
        r = subprocess.run([sys.executable, "-m", "polywire", "tether", "unhex", "-", *flags], input=out.encode(), capture_output=True)
        assert (r.returncode, r.stdout, r.stderr) == (0, data, b"")
    assert cli("tether", "unhex", input=tether.to_hex(send).encode())[0] == 1  # words by default
    code, out, err = cli("tether", "unhex", input=b"abcd")
    assert (code, out) == (1, "")
    assert err.startswith("polywire: 4 hex characters is not a multiple of 8") and err.endswith("at byte 0\n")


def test_help_and_version():
    code, out, err = cli("--help")
    assert (code, err) == (0, "")
    for item in ["-o, --output", "-e, --encode", "-d, --decode", "--delimiter", "--indent", "--strict", "--no-strict",
                 "--stats", "-h, --help", "-v, --version", "kado dump", "tether hex", "tether unhex", "--no-words"]:
        assert item in out, item
    assert cli("-h")[1] == out
    # Each command's --help is its own (it was the global help).
    assert cli("kado", "dump", "--help")[1].startswith("usage: polywire kado dump")
    assert cli("--version") == (0, f"polywire {polywire.__version__}\n", "")
    assert cli("-v")[1] == f"polywire {polywire.__version__}\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["a.json", "b.json"], "unrecognized arguments: b.json"),
        (["--indent"], "argument --indent: expected one argument"),
        (["--delimiter", ";"], 'Invalid delimiter ";". Valid delimiters are: comma (,), tab (\\t), pipe (|)'),
        (["kado"], "kado: expected dump, got nothing"),
        (["tether", "dump"], "tether: expected hex or unhex, got 'dump'"),
    ],
)
def test_usage_errors_exit_2(args, message):
    assert cli(*args) == (2, "", f"polywire: {message}\nTry 'polywire --help'.\n")


def test_missing_file_exits_1(tmp_path):
    assert cli("nope.json", cwd=tmp_path) == (1, "", "polywire: nope.json: no such file or directory\n")


def console_script():
    name = "polywire.exe" if os.name == "nt" else "polywire"
    beside = os.path.join(sysconfig.get_path("scripts"), name)
    return beside if os.path.exists(beside) else shutil.which("polywire")


@pytest.mark.skipif(
    console_script() is None and not os.environ.get("POLYWIRE_EXPECT_INSTALLED"),
    reason="the polywire console script is not installed (pip install / maturin develop installs it)",
)
def test_console_script():
    script = console_script()
    assert script is not None, "the installed package has no polywire console script"
    r = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, f"polywire {polywire.__version__}\n")
    r = subprocess.run([script, "-"], input=DATA_JSON, capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, DATA_TOON + "\n")


# --- The Node command gives the same bytes --------------------------------------------------

TEXTS = {
    "a.json": json.dumps(
        {"rows": [{"id": i, "v": i / 3, "s": "é,|\t\"x\""} for i in range(3)], "big": 2**70, "e": 1e-7, "k": {"2": 0, "b": 1}},
        indent=1,
    ).encode(),
    "b.toon": "list[2]:\n  - x: 1\n    y: [2]: a,b\n  - 3\nk: \"v\\tw\"\nkeyed[2:]{x}:\n  p: 1\n  q: 2\n".encode(),
    "dup.toon": b"a[3]: 1,2\nb: 1\nb: 2\n",
    "bad.json": b'{\n  "a": [1,\n  }',
    "bad.toon": b"a:\n  b[2]{x,y}:\n    1,2\n    3\n",
    "latin1.toon": b"a: caf\xe9\n",
    "capture.kado": b"".join(capture())[:-5],
}
INVOCATIONS = [
    ["a.json"],
    ["a.json", "--delimiter", "\t", "--indent", "4", "--stats"],
    ["a.json", "--delimiter", "|", "-o", "out.toon"],
    ["b.toon", "--stats"],
    ["b.toon", "--indent", "2", "-o", "-"],
    ["dup.toon", "--no-strict"],
    ["dup.toon"],
    ["bad.json"],
    ["bad.toon"],
    ["latin1.toon"],
    ["latin1.toon", "--no-strict"],
    ["kado", "dump", "capture.kado"],
    ["tether", "hex", "latin1.toon"],
    ["--indent", "-1"],
    ["tokens", "a.json"],
    ["tokens", "b.toon", "--encoding", "cl100k_base"],
    ["choose", "a.json", "--pretty"],
    ["choose", "b.toon", "--delimiter", "tab"],
    ["choose", "bad.json"],
    ["tokens", "--encoding", "p50k"],
    ["--help"],
    ["--version"],
]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_node_command_gives_the_same_bytes(tmp_path):
    manifest = json.loads((NODE_PACKAGE / "package.json").read_text(encoding="utf-8"))
    node_cli = NODE_PACKAGE / manifest["bin"]["polywire"]
    for name, data in TEXTS.items():
        (tmp_path / name).write_bytes(data)
    for args in INVOCATIONS:
        runs = []
        for command in ([sys.executable, "-m", "polywire"], [NODE, str(node_cli)]):
            (tmp_path / "out.toon").unlink(missing_ok=True)
            r = subprocess.run([*command, *args], capture_output=True, cwd=tmp_path, timeout=60)
            written = (tmp_path / "out.toon").read_bytes() if (tmp_path / "out.toon").exists() else None
            runs.append((r.returncode, r.stdout, r.stderr.decode("utf-8"), written))
        assert runs[0] == runs[1], args
    # And from standard input.
    for args, data in [(["-"], TEXTS["a.json"]), (["-d"], TEXTS["b.toon"]), (["tether", "unhex"], b"0000000a\n")]:
        py = subprocess.run([sys.executable, "-m", "polywire", *args], input=data, capture_output=True, timeout=60)
        js = subprocess.run([NODE, str(node_cli), *args], input=data, capture_output=True, timeout=60)
        assert (py.returncode, py.stdout, py.stderr) == (js.returncode, js.stdout, js.stderr), args
