//! Decoding a TOON stream as it comes: text in pieces split anywhere (or a
//! stream's lines one by one), the reference's events out as soon as the
//! lines so far decide them, with memory bounded by the open structure and
//! the longest line, not by the input.
//!
//! [`StreamDecoder`] keeps the text from the first line not yet read (and,
//! while the document's form is undecided, its first line) and drives the
//! event walk of `events.rs`, which resumes where it stopped: each line is
//! read once. The walk's state is its frame stack, the keys of the open
//! objects (strict mode: duplicates are checked), the lines its errors may
//! still name (a list's last item, for its length check: kept as column and
//! text when the text is let go) and the blank lines an open array may
//! still report. [`JsonWriter`] writes the events as JSON text, as
//! `@toon-format/cli` does, and [`Utf8Decoder`] turns bytes split anywhere
//! into text.

use super::events::{line_text, Phase, Walk};
use super::*;

/// Text let go once this much is read (and at least as much as is kept):
/// the buffer is moved at most once per byte read, on average.
const LET_GO: usize = 4096;

/// A resumable TOON event decoder: give it text as it comes
/// ([`feed`](Self::feed): pieces split anywhere, lines ending at `\n`; or
/// [`push_line`](Self::push_line): one line at a time), then
/// [`finish`](Self::finish). Every event the lines so far decide is handed
/// over at once: the events, their order and the error are those of
/// [`decode_events`] on the whole text (line numbers count from the start
/// of the document). After an error the decoder stays failed and returns
/// it again.
pub struct StreamDecoder {
    walk: Walk,
    /// The text from the first line not read (after the held first line,
    /// if [`Phase::Root`] holds one: then at the front when the text
    /// between was let go).
    buf: String,
    /// Offsets in `buf` of `\n` bytes inside lines given by `push_line`.
    joins: Vec<usize>,
    /// The `\n` ending the last complete line in `buf`.
    complete: Option<usize>,
    /// Where the lines numbered from `base_line` start (after a held first
    /// line moved to the front).
    base: usize,
    base_line: usize,
    /// The last `\n` of `buf` was put there by `push_line`: it ends the
    /// last line given, and no empty line follows it.
    pushed: bool,
    finished: bool,
    failed: Option<Error>,
    scanned: u64,
}

impl StreamDecoder {
    /// A decoder with `opts` (path expansion does not apply, as in the
    /// reference's stream decoder). `indent` 0 is `TOON_INVALID_OPTION`.
    pub fn new(opts: &DecodeOptions) -> Result<StreamDecoder> {
        Ok(StreamDecoder {
            walk: Walk::new(opts)?,
            buf: String::new(),
            joins: Vec::new(),
            complete: None,
            base: 0,
            base_line: 1,
            pushed: false,
            finished: false,
            failed: None,
            scanned: 0,
        })
    }

    /// Text of the document, split anywhere: the events the lines
    /// completed so far decide go to `on_event`. On a fault, the events
    /// before it have been handed over and its error is returned.
    pub fn feed(&mut self, text: &str, on_event: &mut dyn FnMut(Event<'_>)) -> Result<()> {
        self.check_open()?;
        let at = self.buf.len();
        self.buf.push_str(text);
        self.scanned += text.len() as u64;
        if let Some(i) = text.rfind('\n') {
            self.complete = Some(at + i);
        }
        self.pushed &= text.is_empty();
        self.run(true, on_event)
    }

    /// One line of the document, as the reference's `decodeStream` takes
    /// one: a `\n` it holds is part of it. (After text fed without a final
    /// `\n`, it continues that line.)
    pub fn push_line(&mut self, line: &str, on_event: &mut dyn FnMut(Event<'_>)) -> Result<()> {
        self.check_open()?;
        let at = self.buf.len();
        self.buf.push_str(line);
        self.scanned += line.len() as u64;
        self.joins.extend(line.match_indices('\n').map(|(i, _)| at + i));
        self.complete = Some(self.buf.len());
        self.buf.push('\n');
        self.pushed = true;
        self.run(true, on_event)
    }

    /// The end of the document: the events it decides, then `Ok` if the
    /// document is complete and valid, or its error.
    pub fn finish(&mut self, on_event: &mut dyn FnMut(Event<'_>)) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        self.run(false, on_event)
    }

    fn check_open(&self) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.finished {
            return Err(Error::new(
                Format::Toon,
                "TOON_STREAM_FINISHED",
                "the stream has already ended (expected no more text after finish)",
            ));
        }
        Ok(())
    }

    /// Read the lines so far (to the end of the text when `!more`).
    fn run(&mut self, more: bool, on: &mut dyn FnMut(Event<'_>)) -> Result<()> {
        let end = if more {
            match self.complete {
                Some(c) if c >= self.walk.pos => c,
                _ => return Ok(()),
            }
        } else {
            // The `\n` push_line put after the last line given ends that
            // line, and is no empty line of its own; once let go of, it is
            // not in `buf` any more.
            self.buf.len() - usize::from(self.pushed && self.buf.ends_with('\n'))
        };
        let before = self.walk.pos;
        let text = self.buf.get(..end).unwrap_or_default();
        let r = self.walk.advance(text, more, &self.joins, on);
        self.scanned += self.walk.pos.min(end).saturating_sub(before) as u64;
        match r {
            Ok(_) => {
                if more {
                    self.let_go();
                }
                Ok(())
            }
            Err(e) => {
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Let go of the lines read (all the complete ones: the walk stopped
    /// needing the next), keeping a held first line.
    fn let_go(&mut self) {
        let pos = self.walk.pos.min(self.buf.len());
        let (keep_from, keep_to) = match &self.walk.phase {
            Phase::Root(h) => {
                let end = h.end(&self.buf, &self.joins);
                (h.raw_start, (end + 1).min(pos))
            }
            _ => (pos, pos),
        };
        let dropped = keep_from + (pos - keep_to);
        let moved = (keep_to - keep_from) + (self.buf.len() - pos);
        if dropped < LET_GO || dropped < moved {
            return;
        }
        self.walk.keep_marks(&self.buf, &self.joins);
        self.buf.replace_range(keep_to..pos, "");
        self.buf.replace_range(..keep_from, "");
        self.joins.retain_mut(|j| {
            if *j < keep_from || (*j >= keep_to && *j < pos) {
                return false;
            }
            *j -= if *j < keep_to { keep_from } else { dropped };
            true
        });
        if let Phase::Root(h) = &mut self.walk.phase {
            h.shifted(keep_from);
        }
        self.walk.pos = pos - dropped;
        self.base = self.walk.pos;
        self.base_line = self.walk.number + 1;
        self.complete = None;
        self.scanned += moved as u64;
        if self.buf.capacity() > 4 * self.buf.len() + (1 << 20) {
            self.buf.shrink_to(2 * self.buf.len());
        }
    }

    /// The text of line `line` (1-based, from the start of the document)
    /// as the reference reports it (without `\r`, without a BOM on line
    /// 1), while the decoder still has it: any line an error of this
    /// decoder names, except a blank line inside an array (none, as in the
    /// reference: see [`error_source`](Self::error_source)).
    pub fn source_line(&self, line: usize) -> Option<String> {
        if let Some((n, s)) = &self.walk.error_source {
            if *n == line {
                return Some(s.to_string());
            }
        }
        if let Phase::Root(h) = &self.walk.phase {
            if h.number == line {
                return Some(h.text(&self.buf, &self.joins).to_string());
            }
        }
        let bytes = self.buf.as_bytes();
        let (mut start, mut n) = (self.base, self.base_line);
        if line < n {
            return None;
        }
        while n < line {
            let end = line_end(&self.buf, start, &self.joins);
            if end >= bytes.len() {
                return None;
            }
            start = end + 1;
            n += 1;
        }
        let text = line_text(&self.buf, start, start, &self.joins);
        Some(if line == 1 { text.strip_prefix('\u{feff}').unwrap_or(text) } else { text }.to_string())
    }

    /// The line an error of this decoder names, as the reference gives it
    /// with the error (`source`): none for a blank line inside an array.
    pub fn error_source(&self, e: &Error) -> Option<String> {
        if e.code() == "TOON_BLANK_LINE" {
            return None;
        }
        self.source_line(e.line()?)
    }

    /// Bytes the decoder has gone through so far: the text given (searched
    /// for its last `\n`), the lines read, the text moved when letting go
    /// of what was read. Linear in the input, whatever its pieces.
    pub fn scanned(&self) -> u64 {
        self.scanned
    }

    /// Bytes held: the line being read (and a first line whose form is
    /// undecided), plus at most as much read and not yet let go.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

use super::events::line_end;

/// Writes the events of a document as its JSON text, as `@toon-format/cli`
/// does (`jsonStreamFromEvents`: `JSON.stringify` of each key and
/// primitive, `indent` spaces per level, none and no newline for 0); the
/// caller adds the final newline.
pub struct JsonWriter {
    indent: usize,
    /// The open containers: object or not, and whether a value was
    /// written in it.
    stack: Vec<(bool, bool)>,
}

impl JsonWriter {
    pub fn new(indent: usize) -> JsonWriter {
        JsonWriter { indent, stack: Vec::new() }
    }

    fn newline(&self, out: &mut Vec<u8>, depth: usize) {
        if self.indent > 0 {
            out.push(b'\n');
            out.resize(out.len() + depth * self.indent, b' ');
        }
    }

    /// What comes before a value: in an array, a comma after the first and
    /// a new line.
    fn value_prefix(&self, out: &mut Vec<u8>) {
        if let Some(&(false, needs_comma)) = self.stack.last() {
            if needs_comma {
                out.push(b',');
            }
            self.newline(out, self.stack.len());
        }
    }

    fn value_done(&mut self) {
        if let Some(top) = self.stack.last_mut() {
            top.1 = true;
        }
    }

    fn open(&mut self, object: bool, out: &mut Vec<u8>) {
        self.value_prefix(out);
        out.push(if object { b'{' } else { b'[' });
        self.stack.push((object, false));
    }

    fn close(&mut self, out: &mut Vec<u8>) {
        let Some((object, needs_comma)) = self.stack.pop() else { return };
        if needs_comma {
            self.newline(out, self.stack.len());
        }
        out.push(if object { b'}' } else { b']' });
        self.value_done();
    }

    /// Append the JSON text of one event to `out`.
    pub fn event(&mut self, e: &Event<'_>, out: &mut Vec<u8>) {
        match e {
            Event::StartObject => self.open(true, out),
            Event::StartArray { .. } => self.open(false, out),
            Event::EndObject | Event::EndArray => self.close(out),
            Event::Key(k) => {
                if let Some(&(_, needs_comma)) = self.stack.last() {
                    if needs_comma {
                        out.push(b',');
                    }
                }
                self.newline(out, self.stack.len());
                crate::json::write_str(out, k);
                out.extend_from_slice(if self.indent > 0 { b": " } else { b":" });
                self.value_done();
            }
            Event::Primitive(p) => {
                // (After a key: no prefix, the object's comma came with it.)
                self.value_prefix(out);
                match p {
                    Primitive::Null => out.extend_from_slice(b"null"),
                    Primitive::Bool(true) => out.extend_from_slice(b"true"),
                    Primitive::Bool(false) => out.extend_from_slice(b"false"),
                    Primitive::Number { value, .. } => crate::json::write_f64(out, *value),
                    Primitive::String(s) => crate::json::write_str(out, s),
                }
                self.value_done();
            }
        }
    }
}

/// TOON bytes in, the document's JSON text out as the events come (what
/// `polywire -d` does): [`Utf8Decoder`], [`StreamDecoder`] and
/// [`JsonWriter`] in a row, with the sizes `--stats` reports. A fault does
/// not stop the text before it: [`take`](Self::take) gives it, then
/// [`failure`](Self::failure) tells the fault.
pub struct JsonStream {
    inner: StreamDecoder,
    utf8: Utf8Decoder,
    json: JsonWriter,
    text: String,
    out: Vec<u8>,
    failure: Option<Error>,
    input_chars: u64,
    output_chars: u64,
    started: bool,
}

impl JsonStream {
    /// `opts.indent` is also the JSON text's indent. `opts.strict` also
    /// makes ill-formed UTF-8 a fault (`TOON_INVALID_UTF8` at its byte
    /// offset); otherwise it reads as U+FFFD, as `TextDecoder` reads it.
    pub fn new(opts: &DecodeOptions) -> Result<JsonStream> {
        Ok(JsonStream {
            inner: StreamDecoder::new(opts)?,
            utf8: Utf8Decoder::new(!opts.strict),
            json: JsonWriter::new(opts.indent),
            text: String::new(),
            out: Vec::new(),
            failure: None,
            input_chars: 0,
            output_chars: 0,
            started: false,
        })
    }

    /// The next bytes of the input (the last when `last`: the end of it).
    pub fn feed(&mut self, bytes: &[u8], last: bool) {
        if self.failure.is_some() {
            return;
        }
        self.text.clear();
        let bad = self.utf8.decode(bytes, last, &mut self.text);
        let mut chars = self.text.chars().count();
        if !self.started && !self.text.is_empty() {
            self.started = true;
            chars -= usize::from(self.text.starts_with('\u{feff}'));
        }
        self.input_chars += chars as u64;
        let (json, out) = (&mut self.json, &mut self.out);
        let mut on = |e: Event<'_>| json.event(&e, out);
        let mut r = self.inner.feed(&self.text, &mut on);
        if let (Ok(()), Err(offset)) = (&r, bad) {
            r = Err(Error::new(Format::Toon, "TOON_INVALID_UTF8", "ill-formed UTF-8 (expected UTF-8 text)").at(offset));
        } else if r.is_ok() && last {
            r = self.inner.finish(&mut on);
        }
        self.failure = r.err();
    }

    /// Hand the JSON text written since the last call to `f`.
    pub fn take<R>(&mut self, f: impl FnOnce(&[u8]) -> R) -> R {
        self.output_chars += self.out.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
        let r = f(&self.out);
        self.out.clear();
        if self.out.capacity() > 1 << 22 {
            self.out = Vec::new();
        }
        r
    }

    /// The fault, once there is one, and the line it names (as
    /// [`StreamDecoder::error_source`] gives it).
    pub fn failure(&self) -> Option<(&Error, Option<String>)> {
        self.failure.as_ref().map(|e| (e, self.inner.error_source(e)))
    }

    /// Characters of the TOON text read (without a leading BOM).
    pub fn input_chars(&self) -> u64 {
        self.input_chars
    }

    /// Characters of the JSON text taken.
    pub fn output_chars(&self) -> u64 {
        self.output_chars
    }

    /// [`StreamDecoder::scanned`].
    pub fn scanned(&self) -> u64 {
        self.inner.scanned()
    }
}

/// UTF-8 bytes split anywhere to text, as `TextDecoder` (and Python's
/// `bytes.decode`) reads a stream: strict, stopping at the first ill-formed
/// sequence, or replacing each maximal ill-formed subsequence with U+FFFD.
#[derive(Default)]
pub struct Utf8Decoder {
    replace: bool,
    /// The first bytes of a character the next bytes complete.
    pending: Vec<u8>,
    /// Bytes decoded so far.
    offset: usize,
}

impl Utf8Decoder {
    pub fn new(replace: bool) -> Utf8Decoder {
        Utf8Decoder { replace, pending: Vec::new(), offset: 0 }
    }

    /// Append the text of `bytes` (the last of the stream when `last`) to
    /// `out`. Strict: `Err` with the stream offset of the first byte of an
    /// ill-formed sequence (the text before it appended).
    pub fn decode(&mut self, bytes: &[u8], last: bool, out: &mut String) -> Result<(), usize> {
        let joined;
        let (mut rest, base) = if self.pending.is_empty() {
            (bytes, self.offset)
        } else {
            let mut v = std::mem::take(&mut self.pending);
            let base = self.offset - v.len();
            v.extend_from_slice(bytes);
            joined = v;
            (&joined[..], base)
        };
        let mut at = base;
        self.offset += bytes.len();
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    return Ok(());
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // (valid_up_to ends a valid prefix.)
                    out.push_str(std::str::from_utf8(good).unwrap_or_default());
                    at += good.len();
                    match e.error_len() {
                        None if !last => {
                            self.pending = bad.to_vec();
                            return Ok(());
                        }
                        _ if !self.replace => return Err(at),
                        None => {
                            out.push('\u{fffd}');
                            return Ok(());
                        }
                        Some(n) => {
                            out.push('\u{fffd}');
                            rest = bad.get(n..).unwrap_or_default();
                            at += n;
                        }
                    }
                }
            }
        }
    }
}
