"""The ``polywire`` command where the two commands it replaced went wrong: an output that is
the input, a failure that destroyed the output file, write errors and closed standard
streams, Ctrl-C, a reader that goes away, ``--encoding``, lone surrogates and directories,
a decode error on a very long line, each command's help and a mistyped command, and
``--verbose`` (@toon-format/cli's). Each runs the Python command and, when Node is there,
the npm package's (they are one implementation now: they must say the same);
tests-js/cli_safety.test.js checks the same from Node."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from conftest import NODE_PACKAGE

NODE = shutil.which("node")
POSIX = os.name == "posix"
posix_only = pytest.mark.skipif(not POSIX, reason="POSIX: signals, /dev/full, closed descriptors, symlinks")

COMMANDS = [pytest.param([sys.executable, "-m", "polywire"], id="python")]
if NODE:
    COMMANDS.append(pytest.param([NODE, str(NODE_PACKAGE / "bindings-node" / "lib" / "cli.js")], id="node"))


def run(command, *args, input=b"", cwd=None, timeout=120):
    r = subprocess.run([*command, *args], input=input, capture_output=True, cwd=cwd, timeout=timeout)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


def big_toon(lines: int = 20_000) -> str:
    """A TOON document whose JSON is well over 64 KiB (several blocks)."""
    return f"rows[{lines}]{{id,name}}:\n" + "".join(f"  {i},user{i}\n" for i in range(lines))


def big_json(rows: int = 100_000) -> str:
    """A JSON document whose TOON is a few MB (more than a pipe holds)."""
    return json.dumps([{"id": i, "name": f"user{i}"} for i in range(rows)])


def unfinished_toon() -> bytes:
    """The first 60 KB of a longer document (it fits in a pipe): its JSON is over 64 KiB, and
    the decoder then waits for the rest."""
    text = big_toon(50_000).encode()[:60_000]
    return text[: text.rindex(b"\n") + 1]


def listing(d) -> list[str]:
    return sorted(os.listdir(d))


def as_a_terminal_starts_it():
    """SIGINT and SIGTERM at their defaults, as a shell gives them to a command it runs in the
    foreground (a Popen ``preexec_fn``). A command a shell without job control starts in the
    background, as CI starts the portable suite (``script &``), has SIGINT ignored, and so does
    all it starts; the command keeps a signal its host ignores (as nohup relies on)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


# --- a. the output is the input ------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_that_is_the_input_is_refused(command, tmp_path):
    text = big_toon()
    (tmp_path / "big.toon").write_text(text)
    outs = ["big.toon"]
    if POSIX:
        (tmp_path / "alias.toon").symlink_to("big.toon")
        outs.append("alias.toon")
    for out in outs:
        code, stdout, err = run(command, "big.toon", "-o", out, cwd=tmp_path)
        assert (code, stdout) == (1, b""), err
        assert err == f"polywire: {out}: is the input file (write the output to another file, then move it over the input)\n"
        assert (tmp_path / "big.toon").read_text() == text
    assert listing(tmp_path) == sorted(["big.toon", *(["alias.toon"] if POSIX else [])])


# --- b. a failure leaves the output file as it was -----------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_failing_decode_leaves_the_output_file_as_it_was(command, tmp_path):
    (tmp_path / "out.json").write_text("precious\n")
    if POSIX:
        os.chmod(tmp_path / "out.json", 0o640)
    bad = big_toon() + "end[2]: 1\n"  # the fault after many blocks of JSON
    code, stdout, err = run(command, "-d", "-o", "out.json", input=bad.encode(), cwd=tmp_path)
    assert code == 1 and err.startswith("polywire: Failed to decode TOON at line 20002"), err
    assert (tmp_path / "out.json").read_text() == "precious\n"
    assert listing(tmp_path) == ["out.json"]  # no temporary file left
    # Success replaces it, keeping its permissions.
    code, _, err = run(command, "-d", "-o", "out.json", input=big_toon().encode(), cwd=tmp_path)
    assert (code, err) == (0, "Decoded `stdin` \u2192 `out.json`\n")
    assert json.loads((tmp_path / "out.json").read_text())["rows"][-1] == {"id": 19999, "name": "user19999"}
    if POSIX:
        assert stat.S_IMODE(os.stat(tmp_path / "out.json").st_mode) == 0o640
    assert listing(tmp_path) == ["out.json"]


@posix_only
@pytest.mark.parametrize("command", COMMANDS)
def test_a_symlinked_output_is_replaced_at_its_target(command, tmp_path):
    (tmp_path / "data.json").write_text('{"a": [1, 2]}')
    (tmp_path / "real.toon").write_text("old\n")
    (tmp_path / "link.toon").symlink_to("real.toon")
    code, _, err = run(command, "data.json", "-o", "link.toon", cwd=tmp_path)
    assert code == 0, err
    assert (tmp_path / "link.toon").is_symlink()
    assert (tmp_path / "real.toon").read_text() == "a[2]: 1,2\n"
    # Every command with -o: a failure leaves the file.
    for args, data in [(["kado", "dump"], b"\x01\x09" + bytes(16)), (["tether", "unhex"], b"abc"), (["choose"], b"{"),
                       (["tether", "hex", "nope"], b""), ([], b"[1,")]:
        code, _, _ = run(command, *args, "-o", "link.toon", input=data, cwd=tmp_path)
        assert code == 1, args
        assert (tmp_path / "real.toon").read_text() == "a[2]: 1,2\n", args
    assert listing(tmp_path) == ["data.json", "link.toon", "real.toon"]


# --- c. write errors, closed standard streams ----------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", COMMANDS)
def test_write_errors_are_messages(command, tmp_path):
    (tmp_path / "data.json").write_text('{"a": 1}')
    assert run(command, "data.json", "-o", "/dev/full", cwd=tmp_path) == (1, b"", "polywire: /dev/full: no space left on device\n")
    with open("/dev/full", "wb") as full:
        r = subprocess.run([*command, "data.json"], stdout=full, stderr=subprocess.PIPE, cwd=tmp_path, timeout=60)
    assert (r.returncode, r.stderr.decode()) == (1, "polywire: stdout: no space left on device\n")


@posix_only
@pytest.mark.parametrize("command", COMMANDS)
def test_closed_standard_streams_are_messages(command, tmp_path):
    (tmp_path / "data.json").write_text('{"a": 1}')

    def closed(redirect, *args):
        r = subprocess.run(["sh", "-c", f'exec "$@" {redirect}', "sh", *command, *args], capture_output=True, cwd=tmp_path, timeout=60)
        return r.returncode, r.stderr.decode()

    assert closed(">&-", "data.json") == (1, "polywire: standard output is closed\n")
    assert closed("<&-", "-d") == (1, "polywire: standard input is closed\n")
    assert closed("<&-", "tokens") == (1, "polywire: standard input is closed\n")
    # Not needed: not a failure. The file opened is not taken for stdout.
    assert closed("<&- >&-", "data.json", "-o", "out.toon") == (0, "Encoded `data.json` \u2192 `out.toon`\n")
    assert (tmp_path / "out.toon").read_text() == "a: 1\n"


# --- d. Ctrl-C ----------------------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_decode_quietly(command, sig, tmp_path):
    p = subprocess.Popen(
        [*command, "-d"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, preexec_fn=as_a_terminal_starts_it
    )
    p.stdin.write(unfinished_toon())  # more to come
    p.stdin.flush()
    assert len(p.stdout.read(65536)) == 65536  # decoding: the first block is out
    # The rest is read as a terminal would (a full pipe nobody reads is the next test's).
    threading.Thread(target=p.stdout.read, daemon=True).start()
    p.send_signal(sig)
    code = p.wait(timeout=60)
    err = p.stderr.read().decode()
    p.stdin.close()
    assert (code, err) == (128 + sig, "")
    # Writing a file: the temporary file goes, the file stays.
    (tmp_path / "out.json").write_text("precious\n")
    p = subprocess.Popen([*command, "-d", "-o", "out.json"], stdin=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, preexec_fn=as_a_terminal_starts_it)
    p.stdin.write(unfinished_toon())
    p.stdin.flush()
    deadline = time.monotonic() + 30
    while len(listing(tmp_path)) < 2 and time.monotonic() < deadline:  # the temporary file is there
        time.sleep(0.02)
    assert len(listing(tmp_path)) == 2
    p.send_signal(sig)
    assert (p.wait(timeout=60), p.stderr.read().decode()) == (128 + sig, "")
    p.stdin.close()
    assert listing(tmp_path) == ["out.json"]
    assert (tmp_path / "out.json").read_text() == "precious\n"


# What the thread that runs the command is blocked in, from /proc/<pid>/syscall: the
# syscall numbers of poll(2) and of write(2), by machine (None: not known here).
SYSCALLS = {"x86_64": ({7, 271}, {1}), "aarch64": ({73}, {64})}.get(os.uname().machine if POSIX else "")


def blocked_in(pid: int):
    """The number of the system call `pid`'s main thread is blocked in, or None while it runs."""
    with open(f"/proc/{pid}/syscall") as f:
        first = f.read().split()[0]
    return None if first == "running" or first == "-1" else int(first)


def start_on_a_full_pipe(command, tmp_path, preexec_fn):
    """The command encoding a document of a few MB to a pipe nobody reads, once the pipe is
    full and the command has waited in the same system call for half a second, and that call."""
    import fcntl
    import termios

    (tmp_path / "big.json").write_text(big_json())
    p = subprocess.Popen([*command, "big.json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, preexec_fn=preexec_fn)
    try:
        size = fcntl.fcntl(p.stdout.fileno(), 1032)  # F_GETPIPE_SZ
        seen, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline:
            unread = int.from_bytes(fcntl.ioctl(p.stdout.fileno(), termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
            assert p.poll() is None, (p.returncode, p.stderr.read().decode())
            try:
                seen.append(blocked_in(p.pid) if unread > size - 4096 else None)
            except OSError as e:  # a kernel without it, or ptrace refused
                assert p.poll() is None, (p.returncode, p.stderr.read().decode())
                pytest.skip(f"/proc/{p.pid}/syscall cannot be read here: {e}")
            if len(seen) >= 25 and len(set(seen[-25:])) == 1 and seen[-1] is not None:
                break
            time.sleep(0.02)
        return p, seen[-1] if seen else None
    except BaseException:
        stop(p)
        raise


def stop(p):
    p.kill()
    p.wait()
    p.stdout.close()
    p.stderr.close()


on_linux_proc = pytest.mark.skipif(not sys.platform.startswith("linux") or SYSCALLS is None, reason="Linux on x86_64 or aarch64: /proc/<pid>/syscall")


@posix_only
@on_linux_proc
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_command_blocked_on_a_full_pipe_waits_where_a_signal_reaches_it(command, sig, tmp_path):
    # With nobody reading, the command fills the pipe and waits. Asleep in write(2), it
    # could only be woken by a signal landing inside that write: one handled just before
    # (between the wait for room and the write) would leave it asleep for good. So it
    # waits in poll(2), beside the pipe its signal handler writes to.
    p, call = start_on_a_full_pipe(command, tmp_path, as_a_terminal_starts_it)
    try:
        polls, writes = SYSCALLS
        assert call in polls, f"blocked in system call {call} (poll: {polls}, write: {writes})"
        p.send_signal(sig)
        assert (p.wait(timeout=60), p.stderr.read().decode()) == (128 + sig, "")
    finally:
        stop(p)


def ignoring_sigint():
    as_a_terminal_starts_it()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@posix_only
@on_linux_proc
def test_a_signal_the_host_ignores_stays_ignored(tmp_path):
    # Started with SIGINT ignored (nohup, a background job of a script), the Python command
    # keeps ignoring it; SIGTERM still ends it. (Node sets every signal back to its default
    # when it starts, so there the command never finds one ignored.)
    p, _ = start_on_a_full_pipe([sys.executable, "-m", "polywire"], tmp_path, ignoring_sigint)
    try:
        p.send_signal(signal.SIGINT)
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(timeout=0.5)
        p.send_signal(signal.SIGTERM)
        assert (p.wait(timeout=60), p.stderr.read().decode()) == (128 + signal.SIGTERM, "")
    finally:
        stop(p)


# --- e. a reader that goes away ------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("command", COMMANDS)
def test_a_closed_pipe_ends_by_sigpipe_quietly(command, tmp_path):
    (tmp_path / "big.json").write_text(big_json())
    for args in (["big.json"], ["-d", "big.toon"]):
        if args[0] == "-d":
            (tmp_path / "big.toon").write_text(big_toon(100_000))
        p = subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        assert len(p.stdout.read(10)) == 10  # head -c 10
        p.stdout.close()
        code = p.wait(timeout=60)
        assert (code, p.stderr.read()) == (-signal.SIGPIPE, b""), args


# --- f. --encoding -------------------------------------------------------------------------

WORD_LEVEL = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [{"id": 0, "content": "[UNK]", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}],
    "normalizer": {"type": "Lowercase"},
    "pre_tokenizer": {"type": "Whitespace"},
    "post_processor": None,
    "decoder": None,
    "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hello": 1, "world": 2, ",": 3, "!": 4}, "unk_token": "[UNK]"},
}


@pytest.mark.parametrize("command", COMMANDS)
def test_encoding_names_are_checked(command, tmp_path):
    for name in ["", "gpt4"]:
        message = f"polywire: expected o200k_base, cl100k_base or the path of a tokenizer.json, got {json.dumps(name)}\n"
        for args in (["tokens", "--encoding", name], ["--encoding", name], ["choose", "--encoding", name]):
            assert run(command, *args, input=b"{}", cwd=tmp_path) == (1, b"", message), args
    (tmp_path / "tok.json").write_text(json.dumps(WORD_LEVEL))
    assert run(command, "tokens", "--encoding", "tok.json", input=b"Hello, world! Bye", cwd=tmp_path) == (0, b"5\n", "")


# --- g. lone surrogates, directories -------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_one_message_for_a_lone_surrogate_and_a_directory(command, tmp_path):
    code, out, err = run(command, input=b'{\n  "a": "x\\udc00y"}')
    assert (code, out) == (1, b"")
    assert err == "polywire: Failed to parse JSON at line 2, column 10: Unpaired surrogate '\\udc00' in string (text holds whole characters only: a high surrogate escape followed by a low one)\n"
    (tmp_path / "d").mkdir()
    if POSIX:
        assert run(command, "d", cwd=tmp_path) == (1, b"", "polywire: d: is a directory\n")


# --- h. a decode error on a very long line -------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_long_line_is_shown_around_the_error(command):
    line = "a[2]: " + "x" * 5_000_000
    code, out, err = run(command, "-d", input=(line + "\n").encode())
    assert (code, out) == (1, b"")
    lines = err.split("\n")
    assert lines[0] == "polywire: Failed to decode TOON at line 1, column 1: Expected 2 inline-form values, but got 1"
    assert len(err) < 400
    assert lines[2] == "  1 | a[2]: " + "x" * 94 + "\u2026" and lines[3] == "      ^"


# --- i. help, mistyped commands ------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_its_help_and_typos_get_a_hint(command, tmp_path):
    main = run(command, "--help")[1].decode()
    assert "write ./tokens" in main and "a key given twice is written twice" in main and "--verbose" in main
    for args in (["tokens"], ["choose"], ["kado", "dump"], ["tether", "hex"], ["tether", "unhex"]):
        code, out, err = run(command, *args, "--help")
        assert (code, err) == (0, "")
        assert out.decode().startswith(f"usage: polywire {' '.join(args)} ") and out.decode() != main, args
    (tmp_path / "x.json").write_text("{}")
    assert run(command, "chose", "x.json", cwd=tmp_path) == (2, b"", "polywire: unknown command 'chose'; did you mean 'choose'?\nTry 'polywire --help'.\n")
    assert run(command, "tokns", cwd=tmp_path)[2].startswith("polywire: unknown command 'tokns'; did you mean 'tokens'?")
    (tmp_path / "chose").write_text('{"a": 1}')  # a file of that name is the input, as ever
    assert run(command, "chose", cwd=tmp_path) == (0, b"a: 1\n", "")


# --- j. --verbose --------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_verbose_prints_the_cause(command):
    code, out, err = run(command, "-d", "--verbose", input=b"a:\n\tb: 1\n")
    assert (code, out) == (1, b"")
    assert err.startswith("polywire: Failed to decode TOON at line 2, column 1: ") and "\n\nCaused by: toon error TOON_" in err, err
    assert "Caused by" not in run(command, "-d", input=b"a:\n\tb: 1\n")[2]
