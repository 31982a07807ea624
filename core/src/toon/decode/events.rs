//! TOON decoding as the reference's event stream (`decodeStreamSync` /
//! `decodeStream` of `@toon-format/toon`): `startObject`, `key`,
//! `startArray` (with the length the header declares), `primitive`,
//! `endArray`, `endObject`, in document order.
//!
//! The value decoder builds bottom up, where the reference yields top down
//! and stops at a fault with its events so far already yielded; so events
//! come from their own walk, which follows the reference's generators step
//! for step (the same checks, in the same order, around the same yields)
//! and shares the value decoder's line reader, lexing and errors. Open
//! objects, arrays, tables and pending decisions are an explicit stack of
//! frames (the reference recurses), bounded by [`MAX_DEPTH`](super::MAX_DEPTH) like the value
//! decoder.
//!
//! The walk resumes: it holds no reference into the text between calls, so
//! it can be given a stream's lines as they come ([`StreamDecoder`](super::StreamDecoder)). Every
//! step of a frame first looks at the next line it needs (which may not have
//! come yet) and only then consumes lines, reports events and changes
//! state: a step that finds the lines so far end before the line it needs
//! does nothing, and is taken again, from the same state, once more lines
//! have come. So the events reported for the lines so far are exactly those
//! they decide, each line is read once, and [`decode_events`] on a whole
//! text (or on the lines so far, [`Input::SoFar`]) is the same walk given
//! all of it at once.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use super::errors::{column_between, internal, js_number, NEED_MORE};
use super::headers::{count_leaves, Field, Header};
use super::keys::{SeenFrame, SeenKeys};
use super::lines::{find_byte, from, is_array_header_content, is_data_row, is_key_value_content, split_row, trim_spaces, Cells, Line};
use super::scalars::{number_form, parse_key_token, quoted_inner, unescape};
use super::{decoder, DecodeOptions, Decoder, ExpandPaths};
use crate::error::{Error, Format, Result};
use crate::json::QuickNumber;

/// One event of the reference's stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'e> {
    StartObject,
    EndObject,
    /// The length the header declares (a double, as the reference holds
    /// it: `Infinity` for one beyond the doubles); `0` for `[]`.
    StartArray {
        length: f64,
    },
    EndArray,
    Key(&'e str),
    Primitive(Primitive<'e>),
}

/// A primitive value as the reference reads it (`parsePrimitiveToken`):
/// numbers are doubles (`Number.parseFloat`, with `-0` read as 0).
#[derive(Debug, Clone, PartialEq)]
pub enum Primitive<'e> {
    Null,
    Bool(bool),
    /// The double, and the token it was read from (a binding that keeps
    /// integers exact reads those from `text`: no `.`, `e` or `E`).
    Number {
        value: f64,
        text: &'e str,
    },
    String(Cow<'e, str>),
}

/// What the text given to [`decode_events`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The whole document.
    Whole,
    /// The lines of a stream read so far (complete lines joined by `\n`):
    /// more may follow.
    SoFar,
}

/// How far [`decode_events`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The document is complete (and valid).
    Done,
    /// ([`Input::SoFar`] only) Every event the lines so far decide was
    /// reported; the next needs a line that has not come yet.
    NeedsMore,
}

/// Decode TOON text to the reference's events, handing each to `on_event`
/// as it is found. On a fault, the events before it (exactly those the
/// reference yields before it throws) have been handed over, then the
/// error (the same as [`decode`](super::decode)'s) is returned. Path expansion does not
/// apply (the reference's stream decoder has none).
pub fn decode_events(text: &str, opts: &DecodeOptions, input: Input, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Progress> {
    let mut w = Walk::new(opts)?;
    w.advance(text, input == Input::SoFar, &[], on_event)
}

/// Where a line was, for an error about it reported later (a list's length
/// is checked at its last item's line, once the line after has come): its
/// place in the text while the text is there, its column and text once the
/// text has been let go ([`Walk::keep_marks`]).
#[derive(Clone, Debug)]
pub(super) enum Mark {
    At { number: usize, raw_start: usize, content_start: usize, content_end: usize },
    Kept { number: usize, column: Option<usize>, source: Arc<str> },
}

impl Mark {
    fn of(line: &Line<'_>, text: &str) -> Mark {
        let content_start = (line.content.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
        Mark::At { number: line.number, raw_start: line.raw_start, content_start, content_end: content_start + line.content.len() }
    }

    fn number(&self) -> usize {
        match *self {
            Mark::At { number, .. } | Mark::Kept { number, .. } => number,
        }
    }

    /// The mark with its column and line text taken from `text`, which
    /// holds its line (`joins` as the reader has them).
    fn kept(&self, text: &str, joins: &[usize]) -> Mark {
        match *self {
            Mark::At { number, raw_start, content_start, content_end } => Mark::Kept {
                number,
                column: column_between(text, raw_start, content_start),
                source: line_text(text, raw_start, content_end, joins).into(),
            },
            Mark::Kept { .. } => self.clone(),
        }
    }
}

/// Where the line whose content ends at `content_end` ends: its `\n`
/// (the first from there that is no join), or the end of `text`.
pub(super) fn line_end(text: &str, content_end: usize, joins: &[usize]) -> usize {
    let bytes = text.as_bytes();
    let mut end = find_byte(bytes, content_end, b'\n').unwrap_or(bytes.len());
    while joins.binary_search(&end).is_ok() {
        end = find_byte(bytes, end + 1, b'\n').unwrap_or(bytes.len());
    }
    end
}

/// The text of the line starting at `start` whose content ends at
/// `content_end`, as the reference reports it: to its end, without a `\r`
/// there (a BOM on line 1 is before `start`).
pub(super) fn line_text<'t>(text: &'t str, start: usize, content_end: usize, joins: &[usize]) -> &'t str {
    let line = text.get(start..line_end(text, content_end, joins)).unwrap_or_default();
    line.strip_suffix('\r').unwrap_or(line)
}

/// The first line of a document whose form the line after decides (a lone
/// line is a primitive), held while that line has not come.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    pub(super) raw_start: usize,
    content_start: usize,
    content_end: usize,
    depth: usize,
    pub(super) number: usize,
}

impl Held {
    fn of(line: &Line<'_>, text: &str) -> Held {
        let content_start = (line.content.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
        Held {
            raw_start: line.raw_start,
            content_start,
            content_end: content_start + line.content.len(),
            depth: line.depth,
            number: line.number,
        }
    }

    fn line<'t>(&self, text: &'t str) -> Line<'t> {
        Line {
            content: text.get(self.content_start..self.content_end).unwrap_or_default(),
            raw_start: self.raw_start,
            depth: self.depth,
            number: self.number,
        }
    }

    /// Where its line ends (its `\n`).
    pub(super) fn end(&self, text: &str, joins: &[usize]) -> usize {
        line_end(text, self.content_end, joins)
    }

    /// Its text, as [`line_text`] gives it.
    pub(super) fn text<'t>(&self, text: &'t str, joins: &[usize]) -> &'t str {
        line_text(text, self.raw_start, self.content_end, joins)
    }

    pub(super) fn shifted(&mut self, by: usize) {
        self.raw_start -= by;
        self.content_start -= by;
        self.content_end -= by;
    }
}

/// Where the walk is in the document (`decodeDocument`).
#[derive(Debug)]
pub(super) enum Phase {
    /// No line read yet.
    Start,
    /// The first line read; the next tells its form.
    Root(Held),
    /// The frames on the stack are open; when none is left the document
    /// ends (`then_trailing`: a root array, after which no line may come).
    Body {
        then_trailing: bool,
    },
    /// `assertFullyConsumed`.
    Trailing,
    Done,
}

/// An open container, or a decision waiting for its line.
pub(super) enum Frame {
    /// An object's fields (`decodeObjectFields`, `followSiblingFields`): the
    /// lines at `min_depth` or deeper, all at the depth of the first
    /// (`depth`, set from the start for a list item's object).
    Object { min_depth: usize, depth: Option<usize>, seen: Option<SeenFrame>, level: usize },
    /// `key:` with nothing after it (`decodeKeyValue`): an object if the next
    /// line is deeper, else an empty one. `level` is the value's.
    Value { base_depth: usize, level: usize },
    /// A list array's items (`decodeListArray`). A frame right above it is
    /// one of its items. `item_depth` is found at its first step.
    List {
        length: f64,
        item_depth: Option<usize>,
        base_depth: usize,
        count: usize,
        start: Option<usize>,
        end: Option<usize>,
        last: Mark,
        level: usize,
    },
    /// A tabular array's rows, or a keyed object's entries.
    Table(Box<Table>),
}

/// `decodeTabularArray` (after its `startArray`) or `decodeKeyedObject`.
pub(super) struct Table {
    keyed: bool,
    length: f64,
    delim: u8,
    fields: Vec<Field<'static>>,
    width: usize,
    base_depth: usize,
    /// The rows' (entries') depth, found at the first step (for a keyed
    /// object, which also opens it then).
    depth: Option<usize>,
    level: usize,
    count: usize,
    start: Option<usize>,
    end: Option<usize>,
    last: Mark,
    /// The header line (a keyed object checks its nesting there).
    header: Mark,
    /// A keyed object's entry keys.
    seen: Option<SeenFrame>,
}

/// What a frame's step did.
enum Step {
    /// Took its line: the top of the stack steps next.
    Go,
    /// The frame is complete.
    Pop,
}

/// The state of an event walk between the lines it is given. It holds no
/// reference into a text: lines are read from the text given to
/// [`Walk::advance`], whose offsets (reader position, [`Mark`]s, [`Held`])
/// the caller moves back when it lets go of the text before them.
pub(super) struct Walk {
    strict: bool,
    indent: usize,
    pub(super) phase: Phase,
    pub(super) stack: Vec<Frame>,
    seen: SeenKeys<'static>,
    /// Start of the next line to read, lines read so far.
    pub(super) pos: usize,
    pub(super) number: usize,
    /// Blank lines seen (strict mode), as the reader keeps them.
    blanks: Vec<usize>,
    /// The last line consumed before this call (the reader's `last`).
    last: Option<Mark>,
    /// The line of the last error made from a [`Mark`] let go, with its
    /// text.
    pub(super) error_source: Option<(usize, Arc<str>)>,
}

impl Walk {
    pub(super) fn new(opts: &DecodeOptions) -> Result<Walk> {
        if opts.indent == 0 {
            return Err(Error::new(
                Format::Toon,
                "TOON_INVALID_OPTION",
                "indent must be at least 1 (expected the number of spaces per indentation level)",
            ));
        }
        Ok(Walk {
            strict: opts.strict,
            indent: opts.indent,
            phase: Phase::Start,
            stack: Vec::new(),
            seen: SeenKeys { stack: Vec::new(), owned: Vec::new(), big: HashSet::new(), next_id: 0 },
            pos: 0,
            number: 0,
            blanks: Vec::new(),
            last: None,
            error_source: None,
        })
    }

    /// Read the lines of `text` from `pos` on, reporting their events: to
    /// the end of the document (`more` false: `text` runs to the end of
    /// the input), or until a line that has not come is needed (`more`:
    /// `text` is complete lines, joined by `\n`, and more may follow).
    /// After an error the walk must not be advanced again.
    pub(super) fn advance(&mut self, text: &str, more: bool, joins: &[usize], on: &mut dyn FnMut(Event<'_>)) -> Result<Progress> {
        if matches!(self.phase, Phase::Done) {
            return Ok(Progress::Done);
        }
        let opts = DecodeOptions { indent: self.indent, strict: self.strict, expand_paths: ExpandPaths::Off };
        let mut d: Decoder<'_, (), ()> = decoder(text, &opts);
        d.r.pos = self.pos;
        d.r.number = self.number;
        d.r.blanks = std::mem::take(&mut self.blanks);
        d.r.more = more;
        d.r.joins = joins;
        let mut cx = Cx { d, w: self, on };
        let r = cx.go();
        let Cx { mut d, .. } = cx;
        self.pos = d.r.pos;
        self.number = d.r.number;
        self.blanks = std::mem::take(&mut d.r.blanks);
        if let Some(l) = d.r.last {
            self.last = Some(Mark::of(&l, text));
        }
        match r {
            Ok(()) => Ok(Progress::Done),
            Err(e) if e.code() == NEED_MORE => Ok(Progress::NeedsMore),
            Err(e) => Err(e),
        }
    }

    /// Before the text before `pos` is let go: every mark takes its column
    /// and line text from `text`, and blank lines no open array can report
    /// are forgotten.
    pub(super) fn keep_marks(&mut self, text: &str, joins: &[usize]) {
        let mut starts = Vec::new();
        for f in &mut self.stack {
            match f {
                Frame::List { last, start, .. } => {
                    *last = last.kept(text, joins);
                    starts.extend(*start);
                }
                Frame::Table(t) => {
                    t.last = t.last.kept(text, joins);
                    t.header = t.header.kept(text, joins);
                    starts.extend(t.start);
                }
                Frame::Object { .. } | Frame::Value { .. } => {}
            }
        }
        if let Some(l) = &mut self.last {
            *l = l.kept(text, joins);
        }
        // An array reports the first blank line after its first item (once
        // it has a later one): the others cannot be reported.
        let mut keep: Vec<usize> =
            starts.iter().filter_map(|&s| self.blanks.get(self.blanks.partition_point(|&n| n <= s)).copied()).collect();
        keep.sort_unstable();
        keep.dedup();
        self.blanks = keep;
    }
}

/// A walk being given a text.
struct Cx<'t, 'w, 'f> {
    d: Decoder<'t, (), ()>,
    w: &'w mut Walk,
    on: &'f mut dyn FnMut(Event<'_>),
}

impl<'t> Cx<'t, '_, '_> {
    fn emit(&mut self, e: Event<'_>) {
        (self.on)(e);
    }

    fn empty_object(&mut self) {
        self.emit(Event::StartObject);
        self.emit(Event::EndObject);
    }

    fn empty_array(&mut self) {
        self.emit(Event::StartArray { length: 0.0 });
        self.emit(Event::EndArray);
    }

    fn mark(&self, line: &Line<'t>) -> Mark {
        Mark::of(line, self.d.text)
    }

    /// An error about the line `m` marks (the column of its content).
    #[cold]
    fn mark_error(&mut self, m: &Mark, code: &'static str, msg: String) -> Error {
        match m {
            Mark::At { number, raw_start, content_start, .. } => {
                Error::new(Format::Toon, code, msg).at_line(*number, column_between(self.d.text, *raw_start, *content_start))
            }
            Mark::Kept { number, column, source } => {
                self.w.error_source = Some((*number, source.clone()));
                Error::new(Format::Toon, code, msg).at_line(*number, *column)
            }
        }
    }

    fn check_count_at(&mut self, m: &Mark, code: &'static str, actual: usize, expected: f64, what: &str) -> Result<()> {
        if actual as f64 != expected {
            return Err(self.mark_error(m, code, format!("Expected {} {what}, but got {actual}", js_number(expected))));
        }
        Ok(())
    }

    fn note_key(&mut self, seen: Option<SeenFrame>, key: &str, line: &Line<'t>) -> Result<()> {
        if let Some(f) = seen {
            if !self.w.seen.insert(f, &Cow::Owned(key.to_string())) {
                return Err(self.d.duplicate_key(line, key));
            }
        }
        Ok(())
    }

    fn go(&mut self) -> Result<()> {
        loop {
            match &self.w.phase {
                Phase::Start => self.document()?,
                Phase::Root(held) => {
                    let held = *held;
                    self.root(held)?;
                }
                Phase::Body { then_trailing } => {
                    let then_trailing = *then_trailing;
                    self.run()?;
                    self.w.phase = if then_trailing { Phase::Trailing } else { Phase::Done };
                }
                Phase::Trailing => {
                    self.d.assert_consumed()?;
                    self.w.phase = Phase::Done;
                }
                Phase::Done => return Ok(()),
            }
        }
    }

    /// `decodeDocument`, to its first line's form.
    fn document(&mut self) -> Result<()> {
        let Some(first) = self.d.r.peek()? else {
            self.empty_object();
            self.w.phase = Phase::Done;
            return Ok(());
        };
        if first.depth != 0 {
            return Err(self.d.over_indented(&first, 0));
        }
        if trim_spaces(first.content) == "[]" {
            self.d.r.next()?;
            self.empty_array();
            self.w.phase = Phase::Trailing;
            return Ok(());
        }
        if is_array_header_content(first.content) {
            if let Some(h) = self.d.header(&first)? {
                self.d.r.next()?;
                self.array_from_header(&h, &first, 0, 0)?;
                self.w.phase = Phase::Body { then_trailing: true };
                return Ok(());
            }
        }
        self.d.r.next()?;
        self.w.phase = Phase::Root(Held::of(&first, self.d.text));
        Ok(())
    }

    /// `decodeDocument`, once the line after the first has come (or not).
    fn root(&mut self, held: Held) -> Result<()> {
        let following = self.d.r.peek()?;
        let first = held.line(self.d.text);
        let key_value = is_key_value_content(first.content);
        if following.is_none() && !key_value {
            let p = self.primitive(first.content, &first)?;
            self.emit(Event::Primitive(p));
            self.w.phase = Phase::Done;
            return Ok(());
        }
        if !key_value && following.is_some_and(|l| l.depth == 0) {
            return Err(self.d.error(&first, "TOON_ROOT_FORM", "Top-level document must start with a key-value or array-header line"));
        }
        let seen = self.w.seen.begin(self.w.strict);
        self.emit(Event::StartObject);
        self.w.stack.push(Frame::Object { min_depth: 0, depth: Some(0), seen, level: 1 });
        self.w.phase = Phase::Body { then_trailing: false };
        self.key_value(first, 0, seen, 1)
    }

    /// Step the open frames until none is left.
    fn run(&mut self) -> Result<()> {
        while let Some(top) = self.w.stack.last() {
            let step = match top {
                Frame::Object { .. } => self.object_step()?,
                Frame::Value { .. } => self.value_step()?,
                Frame::List { .. } => self.list_step()?,
                Frame::Table(_) => {
                    // (Out of the stack while it steps: its fields are the
                    // keys it reports.)
                    let Some(Frame::Table(mut t)) = self.w.stack.pop() else { return Err(internal()) };
                    let step = if t.keyed { self.keyed_step(&mut t) } else { self.table_step(&mut t) };
                    self.w.stack.push(Frame::Table(t));
                    step?
                }
            };
            if let Step::Pop = step {
                self.w.stack.pop();
                self.item_done();
            }
        }
        Ok(())
    }

    fn object_step(&mut self) -> Result<Step> {
        let Some(Frame::Object { min_depth, depth, seen, level }) = self.w.stack.last_mut() else { return Err(internal()) };
        let (min_depth, seen, level) = (*min_depth, *seen, *level);
        match self.d.r.peek()? {
            Some(line) if line.depth >= min_depth => {
                let d = *depth.get_or_insert(line.depth);
                if line.depth != d {
                    return Err(self.d.over_indented(&line, d));
                }
                self.d.r.next()?;
                self.key_value(line, d, seen, level)?;
                Ok(Step::Go)
            }
            _ => {
                self.w.seen.end(seen);
                self.emit(Event::EndObject);
                Ok(Step::Pop)
            }
        }
    }

    fn value_step(&mut self) -> Result<Step> {
        let Some(&Frame::Value { base_depth, level }) = self.w.stack.last() else { return Err(internal()) };
        if let Some(next) = self.d.r.peek()?.filter(|n| n.depth > base_depth) {
            self.d.check_depth_jump(&next, base_depth)?;
            self.emit(Event::StartObject);
            let seen = self.w.seen.begin(self.w.strict);
            if let Some(top) = self.w.stack.last_mut() {
                *top = Frame::Object { min_depth: base_depth + 1, depth: None, seen, level: level + 1 };
            }
            return Ok(Step::Go);
        }
        self.empty_object();
        Ok(Step::Pop)
    }

    fn list_step(&mut self) -> Result<Step> {
        let Some(Frame::List { item_depth, base_depth, .. }) = self.w.stack.last() else { return Err(internal()) };
        let (item_depth, base_depth) = (*item_depth, *base_depth);
        let item_depth = match item_depth {
            Some(d) => d,
            None => {
                let d = self.d.content_depth(base_depth)?;
                if let Some(Frame::List { item_depth, .. }) = self.w.stack.last_mut() {
                    *item_depth = Some(d);
                }
                d
            }
        };
        let Some(Frame::List { length, count, level, .. }) = self.w.stack.last() else { return Err(internal()) };
        let (length, count, level) = (*length, *count, *level);
        let line = if !self.w.strict || (count as f64) < length { self.d.r.peek()?.filter(|l| l.depth > base_depth) } else { None };
        match line {
            Some(line) if line.content.starts_with("- ") || line.content == "-" || line.depth != item_depth => {
                if line.depth != item_depth {
                    return Err(self.d.over_indented(&line, item_depth));
                }
                if let Some(Frame::List { start, .. }) = self.w.stack.last_mut() {
                    start.get_or_insert(line.number);
                }
                if !self.list_item(item_depth, level)? {
                    self.item_done();
                }
                Ok(Step::Go)
            }
            _ => {
                if self.w.strict {
                    let Some(Frame::List { start, end, last, .. }) = self.w.stack.last() else { return Err(internal()) };
                    let (start, end, last) = (*start, *end, last.clone());
                    self.check_count_at(&last, "TOON_LENGTH_MISMATCH", count, length, "list-form items")?;
                    self.d.check_no_blank(start, end, "list-form array")?;
                    if let Some(next) = self.d.r.peek()? {
                        if next.depth == item_depth && next.content.starts_with("- ") {
                            return Err(self.d.error(
                                &next,
                                "TOON_LENGTH_MISMATCH",
                                format!("Expected {} list-form items, but found more", js_number(length)),
                            ));
                        }
                    }
                }
                self.emit(Event::EndArray);
                Ok(Step::Pop)
            }
        }
    }

    /// A value is complete: if it is an item of the list on top of the
    /// stack, count it (and its last line).
    fn item_done(&mut self) {
        let text = self.d.text;
        if let Some(Frame::List { count, end, last, .. }) = self.w.stack.last_mut() {
            *count += 1;
            let l = match self.d.r.last {
                Some(l) => Some(Mark::of(&l, text)),
                None => self.w.last.clone(),
            };
            if let Some(l) = l {
                *end = Some(l.number());
                *last = l;
            }
        }
    }

    /// `decodeKeyValue`: one `key: ...` line of an object whose keys so far
    /// are `seen`; `level` is the nesting level of the value.
    fn key_value(&mut self, line: Line<'t>, base_depth: usize, seen: Option<SeenFrame>, level: usize) -> Result<()> {
        if let Some(h) = self.d.header(&line)? {
            let Some(key) = &h.key else {
                let msg = if h.keyed {
                    "Keyless keyed header is only valid at the document root"
                } else {
                    "Keyless array header is only valid at the document root or as a list item"
                };
                return Err(self.d.error(&line, "TOON_KEYLESS_HEADER", msg));
            };
            self.note_key(seen, key, &line)?;
            self.emit(Event::Key(key.as_ref()));
            self.array_from_header(&h, &line, base_depth, level)?;
            return Ok(());
        }
        let (key, end) = self.d.at(&line, parse_key_token(line.content))?;
        let rest = trim_spaces(from(line.content, end));
        self.note_key(seen, &key, &line)?;
        self.emit(Event::Key(&key));
        if rest.is_empty() {
            self.d.enter(&line, level)?;
            self.w.stack.push(Frame::Value { base_depth, level });
            return Ok(());
        }
        if rest == "[]" {
            self.d.enter(&line, level)?;
            self.empty_array();
            return Ok(());
        }
        let p = self.primitive(rest, &line)?;
        self.emit(Event::Primitive(p));
        Ok(())
    }

    /// `decodeArrayFromHeader`: whether it opened a frame (the array is
    /// then not complete yet).
    fn array_from_header(&mut self, h: &Header<'t>, line: &Line<'t>, base_depth: usize, level: usize) -> Result<bool> {
        if h.keyed {
            self.push_table(true, h, line, base_depth, level);
            return Ok(true);
        }
        self.d.enter(line, level)?;
        self.emit(Event::StartArray { length: h.length });
        if let Some(inline) = h.inline {
            self.inline_array(h, inline, line)?;
            self.emit(Event::EndArray);
            return Ok(false);
        }
        if h.fields {
            self.push_table(false, h, line, base_depth, level);
            return Ok(true);
        }
        let last = self.mark(line);
        self.w.stack.push(Frame::List {
            length: h.length,
            item_depth: None,
            base_depth,
            count: 0,
            start: None,
            end: None,
            last,
            level: level + 1,
        });
        Ok(true)
    }

    /// A frame for the rows of the tabular header `h` just read (its field
    /// list is the decoder's), or the entries of the keyed one.
    fn push_table(&mut self, keyed: bool, h: &Header<'t>, line: &Line<'t>, base_depth: usize, level: usize) {
        let fields: Vec<Field<'static>> =
            self.d.fields.fields.iter().map(|f| Field { name: Cow::Owned(f.name.to_string()), quoted: f.quoted, next: f.next }).collect();
        let header = self.mark(line);
        self.w.stack.push(Frame::Table(Box::new(Table {
            keyed,
            length: h.length,
            delim: h.delim,
            width: count_leaves(&fields),
            fields,
            base_depth,
            depth: None,
            level,
            count: 0,
            start: None,
            end: None,
            last: header.clone(),
            header,
            seen: None,
        })));
    }

    /// `decodeInlinePrimitiveArray`: every value is read and counted before
    /// the first is reported.
    fn inline_array(&mut self, h: &Header<'t>, inline: &'t str, line: &Line<'t>) -> Result<()> {
        let values = Cells::new(inline, h.delim).map(|c| self.primitive(c, line)).collect::<Result<Vec<_>>>()?;
        if self.w.strict {
            self.d.check_count(line, "TOON_LENGTH_MISMATCH", values.len(), h.length, "inline-form values")?;
        }
        for p in values {
            self.emit(Event::Primitive(p));
        }
        Ok(())
    }

    /// `decodeTabularArray`: one row (split, counted and read before its
    /// object is reported), or the end of the table.
    fn table_step(&mut self, t: &mut Table) -> Result<Step> {
        let row_depth = match t.depth {
            Some(d) => d,
            None => *t.depth.insert(self.d.content_depth(t.base_depth)?),
        };
        if !self.w.strict || (t.count as f64) < t.length {
            if let Some(line) = self.d.r.peek()?.filter(|l| l.depth > t.base_depth) {
                if line.depth != row_depth {
                    return Err(self.d.over_indented(&line, row_depth));
                }
                let mut cells = std::mem::take(&mut self.d.cells);
                if split_row(line.content, t.delim, &mut cells) {
                    t.start.get_or_insert(line.number);
                    t.end = Some(line.number);
                    t.last = self.mark(&line);
                    let r = self.table_row(t, &cells, &line);
                    self.d.cells = cells;
                    r?;
                    t.count += 1;
                    return Ok(Step::Go);
                }
                self.d.cells = cells;
            }
        }
        if self.w.strict {
            let last = t.last.clone();
            self.check_count_at(&last, "TOON_LENGTH_MISMATCH", t.count, t.length, "tabular rows")?;
            self.d.check_no_blank(t.start, t.end, "tabular array")?;
            if let Some(next) = self.d.r.peek()? {
                if next.depth == row_depth && !next.content.starts_with("- ") && is_data_row(next.content, t.delim) {
                    return Err(self.d.error(
                        &next,
                        "TOON_LENGTH_MISMATCH",
                        format!("Expected {} tabular rows, but found more", js_number(t.length)),
                    ));
                }
            }
        }
        self.emit(Event::EndArray);
        Ok(Step::Pop)
    }

    fn table_row(&mut self, t: &Table, cells: &[&'t str], line: &Line<'t>) -> Result<()> {
        self.d.r.next()?;
        self.d.check_count(line, "TOON_WIDTH_MISMATCH", cells.len(), t.width as f64, "tabular row values")?;
        self.row(&t.fields, cells, line, t.level + 1)
    }

    /// `decodeKeyedObject`: its opening, one `entry: cells` line, or its
    /// end.
    fn keyed_step(&mut self, t: &mut Table) -> Result<Step> {
        let entry_depth = match t.depth {
            Some(d) => d,
            None => {
                let d = self.d.content_depth(t.base_depth)?;
                let header = t.header.clone();
                if t.level >= self.d.max_depth {
                    return Err(self.mark_error(
                        &header,
                        "TOON_TOO_DEEP",
                        format!("arrays and objects nested deeper than {} levels", self.d.max_depth),
                    ));
                }
                self.emit(Event::StartObject);
                t.seen = self.w.seen.begin(self.w.strict);
                *t.depth.insert(d)
            }
        };
        if let Some(line) = self.d.r.peek()?.filter(|l| l.depth > t.base_depth) {
            if line.depth != entry_depth {
                return Err(self.d.over_indented(&line, entry_depth));
            }
            if !is_key_value_content(line.content) {
                return Err(self.d.error(
                    &line,
                    "TOON_EXPECTED_ENTRY_ROW",
                    "Expected entry row inside keyed tabular object (a \"key: cells\" line)",
                ));
            }
            self.d.r.next()?;
            t.start.get_or_insert(line.number);
            t.end = Some(line.number);
            t.last = self.mark(&line);
            let (key, key_end) = self.d.at(&line, parse_key_token(line.content))?;
            self.note_key(t.seen, &key, &line)?;
            self.emit(Event::Key(&key));
            let mut cells = std::mem::take(&mut self.d.cells);
            cells.clear();
            cells.extend(Cells::new(trim_spaces(from(line.content, key_end)), t.delim));
            let r = self
                .d
                .check_count(&line, "TOON_WIDTH_MISMATCH", cells.len(), t.width as f64, "keyed entry cells")
                .and_then(|()| self.row(&t.fields, &cells, &line, t.level + 1));
            self.d.cells = cells;
            r?;
            t.count += 1;
            return Ok(Step::Go);
        }
        if self.w.strict {
            let last = t.last.clone();
            self.check_count_at(&last, "TOON_LENGTH_MISMATCH", t.count, t.length, "keyed entries")?;
            self.d.check_no_blank(t.start, t.end, "keyed tabular object")?;
        }
        self.w.seen.end(t.seen);
        self.emit(Event::EndObject);
        Ok(Step::Pop)
    }

    /// A row's cells (already counted) read, then reported as its object
    /// (`yieldObjectFromFields`).
    fn row(&mut self, fields: &[Field<'_>], cells: &[&'t str], line: &Line<'t>, level: usize) -> Result<()> {
        self.d.enter(line, level)?;
        let values = cells.iter().map(|&c| self.primitive(c, line)).collect::<Result<Vec<_>>>()?;
        let mut values = values.into_iter();
        self.fields_object(fields, 0, fields.len(), &mut values, line, level)
    }

    fn fields_object(
        &mut self,
        fields: &[Field<'_>],
        start: usize,
        end: usize,
        values: &mut std::vec::IntoIter<Primitive<'t>>,
        line: &Line<'t>,
        level: usize,
    ) -> Result<()> {
        self.emit(Event::StartObject);
        let mut i = start;
        while i < end {
            let Some(f) = fields.get(i) else { break };
            self.emit(Event::Key(&f.name));
            let next = f.next.max(i + 1);
            if next > i + 1 {
                self.d.enter(line, level + 1)?;
                self.fields_object(fields, i + 1, next, values, line, level + 1)?;
            } else {
                let p = values.next().unwrap_or(Primitive::String(Cow::Borrowed("")));
                self.emit(Event::Primitive(p));
            }
            i = next;
        }
        self.emit(Event::EndObject);
        Ok(())
    }

    /// `decodeListItem`: one `- ...` line at `item_depth`; whether it opened
    /// frames (the item is then complete when they are).
    fn list_item(&mut self, item_depth: usize, level: usize) -> Result<bool> {
        let Some(line) = self.d.r.next()? else {
            return Err(internal());
        };
        let after = if line.content == "-" {
            ""
        } else if let Some(rest) = line.content.strip_prefix("- ") {
            rest.trim_start_matches(' ')
        } else {
            return Err(self.d.error(&line, "TOON_EXPECTED_LIST_ITEM", "Expected list item to start with \"- \""));
        };
        if trim_spaces(after).is_empty() {
            self.d.enter(&line, level)?;
            self.empty_object();
            return Ok(false);
        }
        if trim_spaces(after) == "[]" {
            self.d.enter(&line, level)?;
            self.empty_array();
            return Ok(false);
        }
        let item = Line { content: after, ..line };
        if is_array_header_content(after) {
            if let Some(h) = self.d.header(&item)? {
                if h.keyed || h.fields {
                    let msg = if h.keyed {
                        "Keyless keyed header is only valid at the document root"
                    } else {
                        "Keyless header with a field list is only valid at the document root"
                    };
                    return Err(self.d.error(&item, "TOON_KEYLESS_HEADER", msg));
                }
                return self.array_from_header(&h, &item, item_depth, level);
            }
        }
        let header = self.d.header(&item)?;
        if let Some(h) = header.filter(|h| h.key.is_some() && h.fields) {
            // `- key[N]{fields}:`: an object whose first field is the table
            // (rows two levels below the hyphen, other fields one below).
            self.d.enter(&item, level)?;
            let seen = self.w.seen.begin(self.w.strict);
            let key = h.key.clone().unwrap_or_default();
            self.note_key(seen, &key, &item)?;
            self.emit(Event::StartObject);
            self.emit(Event::Key(&key));
            self.w.stack.push(Frame::Object { min_depth: item_depth + 1, depth: Some(item_depth + 1), seen, level: level + 1 });
            self.array_from_header(&h, &item, item_depth + 1, level + 1)?;
            return Ok(true);
        }
        if is_key_value_content(after) {
            self.d.enter(&item, level)?;
            let seen = self.w.seen.begin(self.w.strict);
            self.emit(Event::StartObject);
            self.w.stack.push(Frame::Object { min_depth: item_depth + 1, depth: Some(item_depth + 1), seen, level: level + 1 });
            self.key_value(item, item_depth + 1, seen, level + 1)?;
            return Ok(true);
        }
        let p = self.primitive(after, &item)?;
        self.emit(Event::Primitive(p));
        Ok(false)
    }

    /// `parsePrimitiveToken`.
    fn primitive(&mut self, token: &'t str, line: &Line<'t>) -> Result<Primitive<'t>> {
        let t = trim_spaces(token);
        let tb = t.as_bytes();
        Ok(match tb.first() {
            None => Primitive::String(Cow::Borrowed("")),
            Some(b'"') => {
                let inner = self.d.at(line, quoted_inner(t))?;
                let mut scratch = String::new();
                match unescape(inner, &mut scratch) {
                    // No escape: the text itself.
                    Ok(s) if std::ptr::eq(s, inner) => Primitive::String(Cow::Borrowed(inner)),
                    Ok(s) => Primitive::String(Cow::Owned(s.to_string())),
                    Err(e) => return Err(self.d.syn_error(line, e)),
                }
            }
            Some(b't') if t == "true" => Primitive::Bool(true),
            Some(b'f') if t == "false" => Primitive::Bool(false),
            Some(b'n') if t == "null" => Primitive::Null,
            Some(b'-' | b'0'..=b'9') => match number_form(tb) {
                Some((_, quick)) => {
                    let n = match quick {
                        Some(QuickNumber::Int(i)) => i as f64,
                        Some(QuickNumber::Float(f)) => f,
                        // Correctly rounded, as `Number.parseFloat` is.
                        None => t.parse::<f64>().unwrap_or(f64::INFINITY),
                    };
                    if n.is_finite() {
                        // `-0` reads as 0.
                        Primitive::Number { value: if n == 0.0 { 0.0 } else { n }, text: t }
                    } else {
                        Primitive::String(Cow::Borrowed(t))
                    }
                }
                None => Primitive::String(Cow::Borrowed(t)),
            },
            _ => Primitive::String(Cow::Borrowed(t)),
        })
    }
}

#[cfg(test)]
pub(super) mod tests;
