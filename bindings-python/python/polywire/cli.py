"""The ``polywire`` command (``python -m polywire``): JSON <-> TOON as ``@toon-format/cli``
converts them, and Kado and Tether tools.

The npm package installs the same command (``bindings-node/cli.js``): same options, same
output bytes, same messages. Numbers follow JavaScript, as the reference CLI (a Node
program) writes them: a JSON integer beyond 2**53 becomes the nearest double, and JSON is
written as ``JSON.stringify`` writes it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
from typing import IO, Any, Callable, Iterator, Sequence

__all__ = ["main"]

HELP = """\
usage: polywire [INPUT|-] [-o OUT] [-e|-d] [--delimiter D] [--indent N] [--no-strict] [--stats]
                [--encoding E]
       polywire tokens [INPUT|-] [--encoding E]
       polywire choose [INPUT|-] [-o OUT] [--delimiter D] [--indent N] [--pretty] [--encoding E]
       polywire kado dump [INPUT|-] [-o OUT]
       polywire tether hex [INPUT|-] [-o OUT]
       polywire tether unhex [INPUT|-] [-o OUT] [--no-words]

Convert JSON to TOON and back, as @toon-format/cli does. INPUT is a file, or - (or nothing)
for standard input; .json encodes, .toon decodes, anything else (and standard input) encodes.
Write ./kado or ./tether for a file of that name.

options:
  -o, --output OUT      write to OUT instead of standard output (- is standard output)
  -e, --encode          encode JSON to TOON, whatever the extension
  -d, --decode          decode TOON to JSON, whatever the extension
  --delimiter D         delimiter of rows and inline arrays: , (default), tab ($'\\t' or \\t), |
  --indent N            spaces per indentation level, in TOON and in the JSON written (default 2)
  --strict              check lengths, indentation and duplicate keys when decoding (default)
  --no-strict           decode what strict mode refuses; the last of duplicate keys wins
  --stats               print the JSON and TOON sizes (tokens, bytes, characters) and the saving
                        to stderr
  --encoding E          the tokenizer of --stats, tokens and choose: o200k_base (default),
                        cl100k_base or the path of a Hugging Face tokenizer.json
  -h, --help            print this help and exit
  -v, --version         print the version and exit

commands:
  tokens                the number of tokens of INPUT (any text), exactly as the tokenizer counts
  choose                the rendering of the JSON (or .toon) INPUT with the fewest tokens: TOON with
                        each delimiter (or --delimiter's) or compact JSON (--pretty: and indented
                        JSON); the table of every candidate's tokens goes to stderr
  kado dump             each Kado frame of a capture as a JSON line: header, compressed, payload
  tether hex            the bytes of INPUT as lowercase hex, as the MCP send tool takes them
  tether unhex          hex text (spaces around it ignored) to raw bytes
  tether unhex --no-words  accept any whole number of bytes, not only 32-bit words of 8 digits
"""

_HEADER_SIZE = 18
_MAGIC_COMPRESSED = 0x5A
_CHUNK = 1 << 16
_MAX_INDENT = 256
_MAX_SAFE_INTEGER = 2**53
# The --delimiter spellings: the characters the reference takes, `\t` as typed, the names.
_DELIMITERS = {",": ",", "\t": "\t", "|": "|", "\\t": "\t", "comma": ",", "tab": "\t", "pipe": "|"}
# The measures --stats prints, in order.
STATS_MEASURES = ("tokens", "bytes", "chars")
_DEFAULT_ENCODING = "o200k_base"


class UsageError(Exception):
    """A bad command line: exit status 2."""


class CliError(Exception):
    """A failure the command reports as ``polywire: <message>``: exit status 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own error() prints usage and exits
        raise UsageError(message)


class _Pairs(list):  # type: ignore[type-arg]
    """A decoded TOON object as its (key, value) pairs, duplicates included (--no-strict)."""


# --- JSON text as JavaScript writes it ----------------------------------------------------


def js_number(x: float) -> str:
    """``String(x)`` of a double in JavaScript (``JSON.stringify``: ``null`` if not finite)."""
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "0"
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        text = digits[0] + ("." + digits[1:] if k > 1 else "") + ("e+" if e >= 0 else "e-") + str(abs(e))
    return "-" + text if x < 0 else text


def _js_int(n: int) -> str:
    if -_MAX_SAFE_INTEGER <= n <= _MAX_SAFE_INTEGER:
        return str(n)
    try:
        return js_number(float(n))
    except OverflowError:
        return "null"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _js_string(s: str) -> str:
    text = json.dumps(s, ensure_ascii=False)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)
    return text


_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]{0,9})\Z")


def _js_items(d: dict) -> list:  # type: ignore[type-arg]
    """The items of a dict in a JavaScript object's order: array-index keys first, ascending."""
    index = [k for k in d if isinstance(k, str) and _ARRAY_INDEX.match(k) and int(k) < 2**32 - 1]
    if not index:
        return list(d.items())
    first = set(index)
    return [(k, d[k]) for k in sorted(index, key=int)] + [(k, v) for k, v in d.items() if k not in first]


def _json_primitive(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return _js_int(v)
    if isinstance(v, float):
        return js_number(v)
    if isinstance(v, str):
        return _js_string(v)
    raise TypeError(f"no JSON form for {type(v).__name__}")


def json_pieces(value: Any, indent: int = 2, js_order: bool = False) -> Iterator[str]:
    """The JSON text of ``value`` in pieces, as ``JSON.stringify(value, null, indent)`` writes
    it (without recursion, so any depth). ``_Pairs`` are objects in their pairs' order; dicts
    are in JavaScript's key order when ``js_order``."""
    colon = ": " if indent else ":"
    out: list[str] = []
    stack: list[list[Any]] = []  # [iterator, is_object, first]
    v = value
    while True:
        if isinstance(v, (dict, _Pairs)):
            items = v if isinstance(v, _Pairs) else (_js_items(v) if js_order else list(v.items()))
            if items:
                out.append("{")
                stack.append([iter(items), True, True])
            else:
                out.append("{}")
        elif isinstance(v, list):
            if v:
                out.append("[")
                stack.append([iter(v), False, True])
            else:
                out.append("[]")
        else:
            out.append(_json_primitive(v))
        while stack:
            top = stack[-1]
            item: Any = next(top[0], _END)
            depth = len(stack)
            if item is _END:
                stack.pop()
                out.append(("\n" + " " * (indent * (depth - 1)) if indent else "") + ("}" if top[1] else "]"))
                continue
            sep = ("" if top[2] else ",") + ("\n" + " " * (indent * depth) if indent else "")
            top[2] = False
            if top[1]:
                key, v = item
                out.append(sep + _js_string(key) + colon)
            else:
                v = item
                if sep:
                    out.append(sep)
            break
        else:
            yield "".join(out)
            return
        if len(out) >= 4096:
            yield "".join(out)
            out.clear()


_END: Any = object()


# --- Locating a JSON syntax error ---------------------------------------------------------
# json.loads and JSON.parse both refuse bad JSON, with different messages and (in V8) often
# no position: both CLIs locate the first error with this same scanner, so they say the same.

_WS = re.compile(r"[ \t\n\r]*")
_PLAIN = re.compile(r'[^"\\\x00-\x1f]*')
_DIGITS = re.compile(r"[0-9]*")
_HEX = "0123456789abcdefABCDEF"
_END_OF_INPUT = "Unexpected end of JSON input"


def _token(text: str, i: int) -> str:
    c = text[i]
    return "Unexpected token " + ("'\\u%04x'" % ord(c) if ord(c) < 0x20 else f"'{c}'")


def json_error(text: str) -> tuple[int, str] | None:
    """``(index, message)`` of the first error of ``text`` as JSON, or None if it is JSON."""
    n = len(text)
    stack: list[str] = []
    i = _WS.match(text, 0).end()  # type: ignore[union-attr]
    state = "value"
    while True:
        if state == "value":
            if i >= n:
                return n, _END_OF_INPUT
            c = text[i]
            if c in "{[":
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                if i < n and text[i] == ("}" if c == "{" else "]"):
                    i += 1
                    state = "after"
                    continue
                stack.append(c)
                if c == "[":
                    continue
                if i >= n:
                    return n, _END_OF_INPUT
                if text[i] != '"':
                    return i, "Expected property name or '}'"
                state = "key"
                continue
            if c == '"':
                r = _scan_string(text, i)
                if isinstance(r, tuple):
                    return r
                i, state = r, "after"
                continue
            if c == "-" or "0" <= c <= "9":
                r = _scan_number(text, i)
                if isinstance(r, tuple):
                    return r
                i, state = r, "after"
                continue
            literal = {"t": "true", "f": "false", "n": "null"}.get(c)
            if literal is None:
                return i, _token(text, i)
            for j, ch in enumerate(literal):
                if i + j >= n:
                    return n, _END_OF_INPUT
                if text[i + j] != ch:
                    return i + j, _token(text, i + j)
            i += len(literal)
            state = "after"
        elif state == "key":  # at the opening quote of a property name
            r = _scan_string(text, i)
            if isinstance(r, tuple):
                return r
            i = _WS.match(text, r).end()  # type: ignore[union-attr]
            if i >= n:
                return n, _END_OF_INPUT
            if text[i] != ":":
                return i, "Expected ':' after property name"
            i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
            state = "value"
        else:  # after a value
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if not stack:
                return (i, "Unexpected non-whitespace character after JSON") if i < n else None
            if i >= n:
                return n, _END_OF_INPUT
            c = text[i]
            close = "}" if stack[-1] == "{" else "]"
            if c == close:
                stack.pop()
                i += 1
            elif c != ",":
                if close == "}":
                    return i, "Expected ',' or '}' after property value"
                return i, "Expected ',' or ']' after array element"
            else:
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                if close == "]":
                    state = "value"
                elif i >= n:
                    return n, _END_OF_INPUT
                elif text[i] != '"':
                    return i, "Expected double-quoted property name"
                else:
                    state = "key"


def _scan_string(text: str, i: int) -> int | tuple[int, str]:
    n = len(text)
    i += 1
    while True:
        i = _PLAIN.match(text, i).end()  # type: ignore[union-attr]
        if i >= n:
            return n, "Unterminated string in JSON"
        c = text[i]
        if c == '"':
            return i + 1
        if c != "\\":
            return i, "Bad control character in string literal"
        if i + 1 >= n:
            return n, "Unterminated string in JSON"
        e = text[i + 1]
        if e == "u":
            for j in range(i + 2, i + 6):
                if j >= n:
                    return n, "Unterminated string in JSON"
                if text[j] not in _HEX:
                    return j, "Bad Unicode escape"
            i += 6
        elif e in '"\\/bfnrt':
            i += 2
        else:
            return i + 1, "Bad escaped character"


def _scan_number(text: str, i: int) -> int | tuple[int, str]:
    n = len(text)
    if text[i] == "-":
        i += 1
    if i < n and text[i] == "0":
        i += 1
    elif i < n and "1" <= text[i] <= "9":
        i = _DIGITS.match(text, i).end()  # type: ignore[union-attr]
    else:
        return i, "No number after minus sign"
    if i < n and text[i] == ".":
        j = _DIGITS.match(text, i + 1).end()  # type: ignore[union-attr]
        if j == i + 1:
            return j, "Unterminated fractional number"
        i = j
    if i < n and text[i] in "eE":
        i += 1
        if i < n and text[i] in "+-":
            i += 1
        j = _DIGITS.match(text, i).end()  # type: ignore[union-attr]
        if j == i:
            return i, "Exponent part is missing a number"
        i = j
    return i


def _line_column(text: str, index: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


# --- Errors as both CLIs print them -------------------------------------------------------


def _toon_decode_message(e: Any) -> str:
    msg = getattr(e, "msg", None) or str(e)
    line, column, source = getattr(e, "line", None), getattr(e, "column", None), getattr(e, "source", None)
    if line is None:
        return f"Failed to decode TOON: {msg}"
    where = f"line {line}" + (f", column {column}" if column else "")
    text = f"Failed to decode TOON at {where}: {msg}"
    if not source:
        return text
    visible = source.replace("\t", "\u2192")
    gutter = f"  {line} | "
    if column:
        caret = column - 1
    else:
        caret = len(visible) - len(visible.lstrip())
        caret = 0 if caret == len(visible) else caret
    return f"{text}\n\n{gutter}{visible}\n{' ' * (len(gutter) + caret)}^"


def _utf8_message(offset: int) -> str:
    return f"Input is not valid UTF-8 at byte {offset}. Pass --no-strict to replace ill-formed bytes"


def _too_deep_error() -> Exception:
    from polywire import toon

    deep: Any = 0
    for _ in range(toon.MAX_DEPTH + 1):
        deep = [deep]
    try:
        toon.dumps(deep)
    except Exception as e:
        return e
    return CliError("JSON nested too deeply")  # pragma: no cover


# --- Input and output ---------------------------------------------------------------------


def _os_error(path: str, e: OSError) -> CliError:
    reason = e.strerror or str(e)
    return CliError(f"{path}: {reason[:1].lower()}{reason[1:]}")


def _read_input(path: str | None) -> bytes:
    if path is None:
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise _os_error(path, e) from None


def _input_chunks(path: str | None) -> Iterator[bytes]:
    if path is None:
        f: IO[bytes] = sys.stdin.buffer
        close = False
    else:
        try:
            f = open(path, "rb")
        except OSError as e:
            raise _os_error(path, e) from None
        close = True
    read = getattr(f, "read1", f.read)  # what is there, not a full 64 KiB: a live stream flows
    try:
        while True:
            chunk = read(_CHUNK)
            if not chunk:
                return
            yield chunk
    finally:
        if close:
            f.close()


class _Output:
    """Standard output or a file opened when the first bytes are written (or at close)."""

    def __init__(self, path: str | None):
        self.path = path
        self.file: IO[bytes] | None = None

    def _target(self) -> IO[bytes]:
        if self.file is None:
            if self.path is None:
                self.file = sys.stdout.buffer
            else:
                try:
                    self.file = open(self.path, "wb")
                except OSError as e:
                    raise _os_error(self.path, e) from None
        return self.file

    def write(self, data: str | bytes) -> None:
        self._target().write(data.encode("utf-8") if isinstance(data, str) else data)

    def close(self, create: bool = True) -> None:
        if self.file is None and not create:
            return
        f = self._target()
        if self.path is None:
            f.flush()
        else:
            f.close()


def _label(path: str | None) -> str:
    if path is None:
        return "stdin"
    full = os.path.abspath(path)
    try:
        return os.path.relpath(full) or os.path.basename(full)
    except ValueError:  # another drive (Windows)
        return full


def _note(text: str) -> None:
    sys.stderr.write(text + "\n")


# --- --stats ------------------------------------------------------------------------------


def _size(text: str, nbytes: int | None = None, encoding: str | None = None) -> dict[str, int]:
    size = {"bytes": len(text.encode("utf-8")) if nbytes is None else nbytes, "chars": len(text)}
    if encoding is not None:
        size["tokens"] = _count_tokens(text, encoding)
    return size


def _count_tokens(text: str, encoding: str) -> int:
    from polywire import llm

    return llm.count_tokens(text, encoding)


def _measures(*sizes: dict[str, int]) -> list[str]:
    return [m for m in STATS_MEASURES if all(m in s for s in sizes)]


def _percent(saved: int, total: int) -> str:
    if total == 0:
        return "-"
    tenths = (abs(saved) * 2000 + total) // (2 * total)  # |saved| / total in tenths of a percent, half up
    return f"{'-' if saved < 0 and tenths else ''}{tenths // 10}.{tenths % 10}%"


def compute_stats(json_size: dict[str, int], toon_size: dict[str, int]) -> dict[str, dict[str, Any]]:
    """The --stats record: each measure (``STATS_MEASURES``) of the JSON and the TOON text,
    what TOON saves and that saving in percent of the JSON."""
    measures = _measures(json_size, toon_size)
    saved = {m: json_size[m] - toon_size[m] for m in measures}
    return {
        "json": {m: json_size[m] for m in measures},
        "toon": {m: toon_size[m] for m in measures},
        "saved": saved,
        "saved_percent": {m: _percent(saved[m], json_size[m]) for m in measures},
    }


def format_stats(record: dict[str, dict[str, Any]]) -> str:
    """The --stats record as a table: one column per measure, one row per line."""
    measures = list(record["json"])
    rows = [[""] + measures]
    for label, key in (("JSON", "json"), ("TOON", "toon"), ("saved", "saved"), ("saved %", "saved_percent")):
        rows.append([label] + [str(record[key][m]) for m in measures])
    return _table(rows)


def _table(rows: list[list[str]]) -> str:
    """Rows as columns: the first left-aligned, the others right-aligned, two spaces apart."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(widths[c]) if c == 0 else cell.rjust(widths[c]) for c, cell in enumerate(r)).rstrip()
        for r in rows
    )


# --- JSON <-> TOON ------------------------------------------------------------------------


def _parse_int(s: str) -> Any:
    # What JSON.parse makes of an integer: exact up to 2**53, else the nearest double.
    if len(s) <= 17:
        n = int(s)
        if -_MAX_SAFE_INTEGER <= n <= _MAX_SAFE_INTEGER:
            return n
    return float(s)


class _Constant(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise _Constant(name)


def _parse_json(text: str) -> Any:
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, 3000))  # json.loads recurses; TOON nests 1024 levels
        try:
            return json.loads(text, parse_int=_parse_int, parse_constant=_reject_constant)
        finally:
            sys.setrecursionlimit(limit)
    except RecursionError:
        raise _too_deep_error() from None
    except (ValueError, _Constant) as e:
        found = json_error(text)
        if found is None:
            raise CliError(f"Failed to parse JSON: {e}") from None
        index, message = found
        line, column = _line_column(text, index)
        raise CliError(f"Failed to parse JSON at line {line}, column {column}: {message}") from None


def _encode(args: argparse.Namespace, delimiter: str, indent: int) -> None:
    from polywire import toon

    raw = _read_input(args.input)
    text = raw.decode("utf-8", "replace")
    value = _parse_json(text)
    out_text = toon.dumps(value, indent_size=indent, delimiter=delimiter)
    out = _Output(args.output)
    out.write(out_text + "\n")
    out.close()
    if args.output is not None:
        _note(f"Encoded `{_label(args.input)}` \u2192 `{_label(args.output)}`")
    if args.stats:
        encoding = args.encoding or _DEFAULT_ENCODING
        _note(format_stats(compute_stats(_size(text, len(raw), encoding), _size(out_text, None, encoding))))


def _decode(args: argparse.Namespace, indent: int) -> None:
    from polywire import toon

    if not args.stats:  # --stats measures the whole texts: read whole, below
        _decode_stream(args, indent)
        return
    raw = _read_input(args.input)
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    if args.strict:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CliError(_utf8_message(e.start + len(raw) - len(body))) from None
    else:
        text = body.decode("utf-8", "replace")
    try:
        value = toon.loads(text, strict=args.strict, indent_size=indent, object_pairs_hook=_Pairs)
    except toon.ToonDecodeError as e:
        raise CliError(_toon_decode_message(e)) from None
    out = _Output(args.output)
    pieces = []
    for piece in json_pieces(value, indent):
        pieces.append(piece)
        out.write(piece.encode("utf-8"))
    out.write(b"\n")
    out.close()
    if args.output is not None:
        _note(f"Decoded `{_label(args.input)}` \u2192 `{_label(args.output)}`")
    encoding = args.encoding or _DEFAULT_ENCODING
    _note(format_stats(compute_stats(_size("".join(pieces), None, encoding), _size(text, len(raw), encoding))))


def _decode_stream(args: argparse.Namespace, indent: int) -> None:
    """``-d``, streamed: bytes in, JSON text out as the events come (``JsonStream``, the
    core's resumable decoder: memory bounded by the open structure and the longest line),
    as the Node command does. The text goes out in whole blocks of ``_CHUNK`` bytes: a
    fault drops the rest (so a document whose JSON before the fault is shorter writes
    none)."""
    from polywire._polywire import toon as native

    decoder = native.JsonStream(indent, args.strict)
    out = _Output(args.output)
    pending: list[bytes] = []
    size = 0

    def write(data: bytes) -> None:
        nonlocal pending, size
        pending.append(data)
        size += len(data)
        if size >= _CHUNK:
            joined = b"".join(pending)
            whole = size - size % _CHUNK
            out.write(memoryview(joined)[:whole])
            pending, size = [joined[whole:]], size - whole

    for chunk in _input_chunks(args.input):
        write(decoder.feed(chunk))
        if decoder.failure is not None:
            break
    if decoder.failure is None:
        write(decoder.finish())
    failure = decoder.failure
    if failure is not None:
        if failure.code == "TOON_INVALID_UTF8":
            raise CliError(_utf8_message(failure.offset))
        raise CliError(_toon_decode_message(failure))
    out.write(b"".join(pending) + b"\n")
    out.close()
    if args.output is not None:
        _note(f"Decoded `{_label(args.input)}` \u2192 `{_label(args.output)}`")


# --- tokens, choose -----------------------------------------------------------------------


def _tokens(args: argparse.Namespace) -> None:
    text = _read_input(args.input).decode("utf-8", "replace")
    sys.stdout.write(f"{_count_tokens(text, args.encoding or _DEFAULT_ENCODING)}\n")


def _choose(args: argparse.Namespace) -> None:
    from polywire import llm, toon

    delimiter = _delimiter_arg(args.delimiter, None)
    indent = _parse_indent(args.indent)
    if indent > _MAX_INDENT:
        raise UsageError(f"Invalid indent value: {indent} (encoding takes 0 to {_MAX_INDENT})")
    raw = _read_input(args.input)
    text = raw.decode("utf-8", "replace")
    if (args.input or "").endswith(".toon"):
        try:
            value = toon.loads(text, indent_size=max(indent, 1))
        except toon.ToonDecodeError as e:
            raise CliError(_toon_decode_message(e)) from None
    else:
        value = _parse_json(text)
    formats = ("toon", "json", "json-pretty") if args.pretty else ("toon", "json")
    encoding = args.encoding or _DEFAULT_ENCODING
    result = llm.encode_for_llm(value, encoding=encoding, formats=formats, delimiter=delimiter, indent=indent)
    out = _Output(args.output)
    out.write(result.text + "\n")
    out.close()
    rows = [["", "tokens", "bytes", ""]]
    for name, count in result.candidates.items():
        rendering = result.text if name == result.format else None
        size = len((rendering if rendering is not None else _rendering(value, name, indent)).encode("utf-8"))
        rows.append([name, str(count), str(size), "chosen" if name == result.format else ""])
    _note(_table(rows))


def _rendering(value: Any, name: str, indent: int) -> str:
    from polywire import toon
    from polywire._polywire import llm as native

    if name.startswith("toon"):
        return toon.dumps(value, indent_size=indent, delimiter={"toon": ",", "toon-tab": "\t", "toon-pipe": "|"}[name])
    return native.json_text(value, 2 if name == "json-pretty" else 0)


# --- kado dump ----------------------------------------------------------------------------


class FrameScanner:
    """Follows the frame boundaries of a Kado byte stream to tell, for each frame, where it
    starts and whether its payload is compressed (the decoder's frames do not say)."""

    def __init__(self) -> None:
        self.position = 0  # stream offset of the next chunk
        self.next = 0  # stream offset of the next frame
        self.head = bytearray()  # its first bytes (header and first payload byte)
        self.frames: collections.deque[tuple[int, bool]] = collections.deque()

    def feed(self, chunk: bytes) -> None:
        end = self.position + len(chunk)
        while True:
            length = int.from_bytes(self.head[2:6], "little") if len(self.head) >= _HEADER_SIZE else -1
            need = _HEADER_SIZE if length == 0 else _HEADER_SIZE + 1
            if len(self.head) < need:
                at = self.next + len(self.head)
                if at >= end:
                    break
                i = at - self.position
                self.head += chunk[i : i + need - len(self.head)]
                continue
            self.frames.append((self.next, length > 0 and self.head[_HEADER_SIZE] == _MAGIC_COMPRESSED))
            self.next += _HEADER_SIZE + length
            self.head.clear()
        self.position = end


def _kado_dump(args: argparse.Namespace) -> None:
    from polywire import kado

    decoder = kado.FrameDecoder()
    scanner = FrameScanner()
    out = _Output(args.output)
    try:
        for chunk in _input_chunks(args.input):
            scanner.feed(chunk)
            for frame in decoder.feed(chunk):
                offset, compressed = scanner.frames.popleft()
                h = frame["header"]
                payload = "".join(json_pieces(frame["payload"], 0, js_order=True))
                out.write(
                    f'{{"offset":{offset},"version":{h["version"]},"type":{h["type"]},'
                    f'"typeName":"{kado.MessageType(h["type"]).name}","payloadLength":{h["payload_length"]},'
                    f'"timestamp":{h["timestamp"]},"sequenceId":{h["sequence_id"]},'
                    f'"compressed":{"true" if compressed else "false"},"payload":{payload}}}\n'
                )
        decoder.finish()
    except kado.KadoError as e:
        out.close(create=False)
        raise CliError(str(e)) from None
    out.close()


# --- tether hex / unhex -------------------------------------------------------------------


def _tether_hex(args: argparse.Namespace) -> None:
    from polywire import tether

    data = _read_input(args.input)
    out = _Output(args.output)
    out.write(tether.to_hex(data) + "\n")
    out.close()


def _tether_unhex(args: argparse.Namespace) -> None:
    from polywire import tether

    text = _read_input(args.input).decode("utf-8", "replace").strip(" \t\r\n")
    try:
        data = tether.from_hex(text, words=args.words)
    except tether.TetherError as e:
        raise CliError(str(e)) from None
    out = _Output(args.output)
    out.write(data)
    out.close()


# --- The command line ---------------------------------------------------------------------


def _input_path(value: str | None) -> str | None:
    return None if value in (None, "-") else value


def _output_path(value: str | None) -> str | None:
    return None if value in (None, "-") else value


def _delimiter_arg(value: str | None, default: str | None) -> Any:
    if value is None:
        return default
    delimiter = _DELIMITERS.get(value)
    if delimiter is None:
        raise UsageError(f"Invalid delimiter {json.dumps(value)}. Valid delimiters are: comma (,), tab (\\t), pipe (|)")
    return delimiter


def _parse_indent(value: str | None) -> int:
    if value is None:
        return 2
    if not re.fullmatch(r"[0-9]+", value):
        raise UsageError(f"Invalid indent value: {value}")
    return int(value)


def _main_parser() -> _Parser:
    p = _Parser(prog="polywire", add_help=False, allow_abbrev=False)
    p.add_argument("input", nargs="?")
    p.add_argument("-o", "--output")
    p.add_argument("-e", "--encode", action="store_true")
    p.add_argument("-d", "--decode", action="store_true")
    p.add_argument("--delimiter")
    p.add_argument("--indent")
    p.add_argument("--strict", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--stats", action="store_true")
    p.add_argument("--encoding")
    _help_version(p)
    return p


def _tokens_parser() -> _Parser:
    p = _Parser(prog="polywire", add_help=False, allow_abbrev=False)
    p.add_argument("input", nargs="?")
    p.add_argument("--encoding")
    _help_version(p)
    return p


def _choose_parser() -> _Parser:
    p = _sub_parser()
    p.add_argument("--delimiter")
    p.add_argument("--indent")
    p.add_argument("--pretty", action="store_true")
    p.add_argument("--encoding")
    return p


def _help_version(p: _Parser) -> None:
    # Caught before parsing when spelled out; here for grouped short options (-ev).
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("-v", "--version", action="store_true")


def _sub_parser(words: bool = False) -> _Parser:
    p = _Parser(prog="polywire", add_help=False, allow_abbrev=False)
    p.add_argument("input", nargs="?")
    p.add_argument("-o", "--output")
    if words:
        p.add_argument("--words", action=argparse.BooleanOptionalAction, default=True)
    _help_version(p)
    return p


_COMMANDS: dict[tuple[str, str], tuple[Callable[[], _Parser], Callable[[argparse.Namespace], None]]] = {
    ("kado", "dump"): (_sub_parser, _kado_dump),
    ("tether", "hex"): (_sub_parser, _tether_hex),
    ("tether", "unhex"): (lambda: _sub_parser(words=True), _tether_unhex),
}


_SINGLE_COMMANDS: dict[str, tuple[Callable[[], _Parser], Callable[[argparse.Namespace], None]]] = {
    "tokens": (_tokens_parser, _tokens),
    "choose": (_choose_parser, _choose),
}


def _help_or_version(help: bool, version: bool) -> bool:
    if help:
        sys.stdout.write(HELP)
    elif version:
        from polywire import __version__

        sys.stdout.write(f"polywire {__version__}\n")
    return help or version


def _run(argv: list[str]) -> None:
    before_dashes = argv[: argv.index("--")] if "--" in argv else argv
    if _help_or_version("-h" in before_dashes or "--help" in before_dashes, "-v" in before_dashes or "--version" in before_dashes):
        return
    if argv and argv[0] in _SINGLE_COMMANDS:
        make_parser, command = _SINGLE_COMMANDS[argv[0]]
        args = make_parser().parse_args(argv[1:])
        if _help_or_version(args.help, args.version):
            return
        args.input = _input_path(args.input)
        args.output = _output_path(getattr(args, "output", None))
        command(args)
        return
    if argv and argv[0] in ("kado", "tether"):
        group = argv[0]
        actions = sorted(a for g, a in _COMMANDS if g == group)
        if len(argv) < 2 or (group, argv[1]) not in _COMMANDS:
            got = f"'{argv[1]}'" if len(argv) > 1 else "nothing"
            raise UsageError(f"{group}: expected {' or '.join(actions)}, got {got}")
        make_parser, command = _COMMANDS[(group, argv[1])]
        args = make_parser().parse_args(argv[2:])
        if _help_or_version(args.help, args.version):
            return
        args.input, args.output = _input_path(args.input), _output_path(args.output)
        command(args)
        return
    args = _main_parser().parse_args(argv)
    if _help_or_version(args.help, args.version):
        return
    args.input, args.output = _input_path(args.input), _output_path(args.output)
    indent = _parse_indent(args.indent)
    delimiter = _delimiter_arg(args.delimiter, ",")
    encode = args.encode or not args.decode and not (args.input or "").endswith(".toon")
    if encode:
        if indent > _MAX_INDENT:
            raise UsageError(f"Invalid indent value: {indent} (encoding takes 0 to {_MAX_INDENT})")
        _encode(args, delimiter, indent)
    else:
        if indent < 1:
            raise UsageError(f"Invalid indent value: {indent} (decoding takes at least 1)")
        _decode(args, indent)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``polywire`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit
    status: 0, 1 after an error (``polywire: <message>`` on stderr), 2 for a bad command line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        _run(argv)
        return 0
    except UsageError as e:
        _note(f"polywire: {e}\nTry 'polywire --help'.")
        return 2
    except BrokenPipeError:
        # The reader went away (`polywire big.json | head`): stop quietly.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except CliError as e:
        _note(f"polywire: {e}")
        return 1
    except Exception as e:
        from polywire import PolywireError

        if isinstance(e, PolywireError):
            _note(f"polywire: {e}")
            return 1
        raise
