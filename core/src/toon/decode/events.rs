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
//! objects and lists are an explicit stack (the reference recurses),
//! bounded by [`MAX_DEPTH`] like the value decoder.
//!
//! A stream's lines can be decoded as far as they go ([`Input::SoFar`]):
//! the walk stops where it needs a line that has not come, having reported
//! every event the lines so far decide (the same events, since nothing
//! before that point depends on later lines). Decoding the text again with
//! more lines repeats those events first.

use super::*;

/// One event of the reference's stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'e> {
    StartObject,
    EndObject,
    /// The length the header declares (a double, as the reference holds
    /// it: `Infinity` for one beyond the doubles); `0` for `[]`.
    StartArray { length: f64 },
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
    Number(f64),
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
/// error (the same as [`decode`]'s) is returned. Path expansion does not
/// apply (the reference's stream decoder has none).
pub fn decode_events(text: &str, opts: &DecodeOptions, input: Input, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Progress> {
    if opts.indent == 0 {
        return Err(Error::new(
            Format::Toon,
            "TOON_INVALID_OPTION",
            "indent must be at least 1 (expected the number of spaces per indentation level)",
        ));
    }
    let mut d: Decoder<'_, (), ()> = decoder(text, opts);
    d.r.more = input == Input::SoFar;
    let mut w = Walk { d, on: on_event };
    match w.document() {
        Ok(()) => Ok(Progress::Done),
        Err(e) if e.code() == NEED_MORE => Ok(Progress::NeedsMore),
        Err(e) => Err(e),
    }
}

struct Walk<'a, 'f> {
    d: Decoder<'a, (), ()>,
    on: &'f mut dyn FnMut(Event<'_>),
}

/// An open object or list array. (An explicit stack rather than the
/// reference's recursion, so deep nesting costs heap, not call stack.)
enum Frame<'a> {
    /// An object's fields (`decodeObjectFields`, `followSiblingFields`): the
    /// lines at `min_depth` or deeper, all at the depth of the first
    /// (`depth`, set from the start for a list item's object).
    Object { min_depth: usize, depth: Option<usize>, seen: Option<SeenFrame>, level: usize },
    /// A list array's items (`decodeListArray`). A frame right above it is
    /// one of its items.
    List {
        length: f64,
        item_depth: usize,
        base_depth: usize,
        count: usize,
        start: Option<usize>,
        end: Option<usize>,
        last: Line<'a>,
        level: usize,
    },
}

impl<'a> Walk<'a, '_> {
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

    /// `decodeDocument`.
    fn document(&mut self) -> Result<()> {
        let Some(first) = self.d.r.peek()? else {
            self.empty_object();
            return Ok(());
        };
        if first.depth != 0 {
            return Err(self.d.over_indented(&first, 0));
        }
        let mut stack = Vec::new();
        if trim_spaces(first.content) == "[]" {
            self.d.r.next()?;
            self.empty_array();
            return self.d.assert_consumed();
        }
        if is_array_header_content(first.content) {
            if let Some(h) = self.d.header(&first)? {
                self.d.r.next()?;
                self.array_from_header(&mut stack, &h, &first, 0, 0)?;
                self.run(&mut stack)?;
                return self.d.assert_consumed();
            }
        }
        self.d.r.next()?;
        let following = self.d.r.peek()?;
        let key_value = is_key_value_content(first.content);
        if following.is_none() && !key_value {
            let p = self.primitive(first.content, &first)?;
            self.emit(Event::Primitive(p));
            return Ok(());
        }
        if !key_value && following.is_some_and(|l| l.depth == 0) {
            return Err(self.d.error(
                &first,
                "TOON_ROOT_FORM",
                "Top-level document must start with a key-value or array-header line",
            ));
        }
        let seen = self.d.seen.begin(self.d.strict);
        self.emit(Event::StartObject);
        stack.push(Frame::Object { min_depth: 0, depth: Some(0), seen, level: 1 });
        self.key_value(&mut stack, first, 0, seen, 1)?;
        self.run(&mut stack)
    }

    /// Drive the open frames until none is left.
    fn run(&mut self, stack: &mut Vec<Frame<'a>>) -> Result<()> {
        while let Some(top) = stack.last_mut() {
            match top {
                Frame::Object { min_depth, depth, seen, level } => {
                    let (min_depth, seen, level) = (*min_depth, *seen, *level);
                    match self.d.r.peek()? {
                        Some(line) if line.depth >= min_depth => {
                            let d = *depth.get_or_insert(line.depth);
                            if line.depth != d {
                                return Err(self.d.over_indented(&line, d));
                            }
                            self.d.r.next()?;
                            self.key_value(stack, line, d, seen, level)?;
                            continue;
                        }
                        _ => {
                            self.d.seen.end(seen);
                            self.emit(Event::EndObject);
                        }
                    }
                }
                Frame::List { length, item_depth, base_depth, count, start, end, last, level } => {
                    let (item_depth, level) = (*item_depth, *level);
                    let line = if !self.d.strict || (*count as f64) < *length {
                        self.d.r.peek()?.filter(|l| l.depth > *base_depth)
                    } else {
                        None
                    };
                    match line {
                        Some(line) if line.content.starts_with("- ") || line.content == "-" || line.depth != item_depth => {
                            if line.depth != item_depth {
                                return Err(self.d.over_indented(&line, item_depth));
                            }
                            start.get_or_insert(line.number);
                            if !self.list_item(stack, item_depth, level)? {
                                self.item_done(stack);
                            }
                            continue;
                        }
                        _ => {
                            let (length, count, start, end, last) = (*length, *count, *start, *end, *last);
                            if self.d.strict {
                                self.d.check_count(&last, "TOON_LENGTH_MISMATCH", count, length, "list-form items")?;
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
                        }
                    }
                }
            }
            stack.pop();
            self.item_done(stack);
        }
        Ok(())
    }

    /// A value is complete: if it is an item of the list on top of the
    /// stack, count it (and its last line).
    fn item_done(&mut self, stack: &mut [Frame<'a>]) {
        if let Some(Frame::List { count, end, last, .. }) = stack.last_mut() {
            *count += 1;
            if let Some(l) = self.d.r.last {
                *end = Some(l.number);
                *last = l;
            }
        }
    }

    /// `decodeKeyValue`: one `key: ...` line of an object whose keys so far
    /// are `seen`; `level` is the nesting level of the value.
    fn key_value(&mut self, stack: &mut Vec<Frame<'a>>, line: Line<'a>, base_depth: usize, seen: Option<SeenFrame>, level: usize) -> Result<()> {
        if let Some(h) = self.d.header(&line)? {
            let Some(key) = &h.key else {
                let msg = if h.keyed {
                    "Keyless keyed header is only valid at the document root"
                } else {
                    "Keyless array header is only valid at the document root or as a list item"
                };
                return Err(self.d.error(&line, "TOON_KEYLESS_HEADER", msg));
            };
            self.d.note_key(seen, key, &line)?;
            self.emit(Event::Key(key.as_ref()));
            self.array_from_header(stack, &h, &line, base_depth, level)?;
            return Ok(());
        }
        let (key, end) = self.d.at(&line, parse_key_token(line.content))?;
        let rest = trim_spaces(from(line.content, end));
        self.d.note_key(seen, &key, &line)?;
        self.emit(Event::Key(&key));
        if rest.is_empty() {
            self.d.enter(&line, level)?;
            if let Some(next) = self.d.r.peek()?.filter(|n| n.depth > base_depth) {
                self.d.check_depth_jump(&next, base_depth)?;
                self.emit(Event::StartObject);
                let seen = self.d.seen.begin(self.d.strict);
                stack.push(Frame::Object { min_depth: base_depth + 1, depth: None, seen, level: level + 1 });
            } else {
                self.empty_object();
            }
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

    /// `decodeArrayFromHeader`: whether it opened a list frame (the array
    /// is then not complete yet).
    fn array_from_header(&mut self, stack: &mut Vec<Frame<'a>>, h: &Header<'a>, line: &Line<'a>, base_depth: usize, level: usize) -> Result<bool> {
        if h.keyed {
            self.keyed_object(h, line, base_depth, level)?;
            return Ok(false);
        }
        self.d.enter(line, level)?;
        self.emit(Event::StartArray { length: h.length });
        if let Some(inline) = h.inline {
            self.inline_array(h, inline, line)?;
        } else if h.fields {
            self.tabular_array(h, line, base_depth, level)?;
        } else {
            let item_depth = self.d.content_depth(base_depth)?;
            stack.push(Frame::List {
                length: h.length,
                item_depth,
                base_depth,
                count: 0,
                start: None,
                end: None,
                last: *line,
                level: level + 1,
            });
            return Ok(true);
        }
        self.emit(Event::EndArray);
        Ok(false)
    }

    /// `decodeInlinePrimitiveArray`: every value is read and counted before
    /// the first is reported.
    fn inline_array(&mut self, h: &Header<'a>, inline: &'a str, line: &Line<'a>) -> Result<()> {
        let values = Cells::new(inline, h.delim).map(|c| self.primitive(c, line)).collect::<Result<Vec<_>>>()?;
        if self.d.strict {
            self.d.check_count(line, "TOON_LENGTH_MISMATCH", values.len(), h.length, "inline-form values")?;
        }
        for p in values {
            self.emit(Event::Primitive(p));
        }
        Ok(())
    }

    /// `decodeTabularArray`: each row is split, counted and read before its
    /// object is reported.
    fn tabular_array(&mut self, h: &Header<'a>, header_line: &Line<'a>, base_depth: usize, level: usize) -> Result<()> {
        let row_depth = self.d.content_depth(base_depth)?;
        let fields = std::mem::take(&mut self.d.fields);
        let r = self.table_rows(h, &fields.fields, header_line, base_depth, row_depth, level);
        self.d.fields = fields;
        r
    }

    fn table_rows(
        &mut self,
        h: &Header<'a>,
        fields: &[Field<'a>],
        header_line: &Line<'a>,
        base_depth: usize,
        row_depth: usize,
        level: usize,
    ) -> Result<()> {
        let width = count_leaves(fields);
        let mut count = 0usize;
        let (mut start, mut end) = (None, None);
        let mut last = *header_line;
        let mut cells = Vec::new();
        while !self.d.strict || (count as f64) < h.length {
            let Some(line) = self.d.r.peek()? else { break };
            if line.depth <= base_depth {
                break;
            }
            if line.depth != row_depth {
                return Err(self.d.over_indented(&line, row_depth));
            }
            if !split_row(line.content, h.delim, &mut cells) {
                break;
            }
            start.get_or_insert(line.number);
            end = Some(line.number);
            last = line;
            self.d.r.next()?;
            self.d.check_count(&line, "TOON_WIDTH_MISMATCH", cells.len(), width as f64, "tabular row values")?;
            self.row(fields, &cells, &line, level + 1)?;
            count += 1;
        }
        if self.d.strict {
            self.d.check_count(&last, "TOON_LENGTH_MISMATCH", count, h.length, "tabular rows")?;
            self.d.check_no_blank(start, end, "tabular array")?;
            if let Some(next) = self.d.r.peek()? {
                if next.depth == row_depth && !next.content.starts_with("- ") && is_data_row(next.content, h.delim) {
                    return Err(self.d.error(
                        &next,
                        "TOON_LENGTH_MISMATCH",
                        format!("Expected {} tabular rows, but found more", js_number(h.length)),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `decodeKeyedObject`: `key[N:]{fields}:` then `entry: cells` lines.
    fn keyed_object(&mut self, h: &Header<'a>, header_line: &Line<'a>, base_depth: usize, level: usize) -> Result<()> {
        let entry_depth = self.d.content_depth(base_depth)?;
        self.d.enter(header_line, level)?;
        let fields = std::mem::take(&mut self.d.fields);
        self.emit(Event::StartObject);
        let r = self.keyed_entries(h, &fields.fields, header_line, base_depth, entry_depth, level);
        self.d.fields = fields;
        r?;
        self.emit(Event::EndObject);
        Ok(())
    }

    fn keyed_entries(
        &mut self,
        h: &Header<'a>,
        fields: &[Field<'a>],
        header_line: &Line<'a>,
        base_depth: usize,
        entry_depth: usize,
        level: usize,
    ) -> Result<()> {
        let width = count_leaves(fields);
        let seen = self.d.seen.begin(self.d.strict);
        let mut count = 0usize;
        let (mut start, mut end) = (None, None);
        let mut last = *header_line;
        let mut cells = Vec::new();
        while let Some(line) = self.d.r.peek()? {
            if line.depth <= base_depth {
                break;
            }
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
            start.get_or_insert(line.number);
            end = Some(line.number);
            last = line;
            let (key, key_end) = self.d.at(&line, parse_key_token(line.content))?;
            self.d.note_key(seen, &key, &line)?;
            self.emit(Event::Key(&key));
            cells.clear();
            cells.extend(Cells::new(trim_spaces(from(line.content, key_end)), h.delim));
            self.d.check_count(&line, "TOON_WIDTH_MISMATCH", cells.len(), width as f64, "keyed entry cells")?;
            self.row(fields, &cells, &line, level + 1)?;
            count += 1;
        }
        if self.d.strict {
            self.d.check_count(&last, "TOON_LENGTH_MISMATCH", count, h.length, "keyed entries")?;
            self.d.check_no_blank(start, end, "keyed tabular object")?;
        }
        self.d.seen.end(seen);
        Ok(())
    }

    /// A row's cells (already counted) read, then reported as its object
    /// (`yieldObjectFromFields`).
    fn row(&mut self, fields: &[Field<'a>], cells: &[&'a str], line: &Line<'a>, level: usize) -> Result<()> {
        self.d.enter(line, level)?;
        let values = cells.iter().map(|&c| self.primitive(c, line)).collect::<Result<Vec<_>>>()?;
        let mut values = values.into_iter();
        self.fields_object(fields, 0, fields.len(), &mut values, line, level)
    }

    fn fields_object(
        &mut self,
        fields: &[Field<'a>],
        start: usize,
        end: usize,
        values: &mut std::vec::IntoIter<Primitive<'a>>,
        line: &Line<'a>,
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
    fn list_item(&mut self, stack: &mut Vec<Frame<'a>>, item_depth: usize, level: usize) -> Result<bool> {
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
                return self.array_from_header(stack, &h, &item, item_depth, level);
            }
        }
        let header = self.d.header(&item)?;
        if let Some(h) = header.filter(|h| h.key.is_some() && h.fields) {
            // `- key[N]{fields}:`: an object whose first field is the table
            // (rows two levels below the hyphen, other fields one below).
            self.d.enter(&item, level)?;
            let seen = self.d.seen.begin(self.d.strict);
            let key = h.key.clone().unwrap_or_default();
            self.d.note_key(seen, &key, &item)?;
            self.emit(Event::StartObject);
            self.emit(Event::Key(&key));
            stack.push(Frame::Object { min_depth: item_depth + 1, depth: Some(item_depth + 1), seen, level: level + 1 });
            self.array_from_header(stack, &h, &item, item_depth + 1, level + 1)?;
            return Ok(true);
        }
        if is_key_value_content(after) {
            self.d.enter(&item, level)?;
            let seen = self.d.seen.begin(self.d.strict);
            self.emit(Event::StartObject);
            stack.push(Frame::Object { min_depth: item_depth + 1, depth: Some(item_depth + 1), seen, level: level + 1 });
            self.key_value(stack, item, item_depth + 1, seen, level + 1)?;
            return Ok(true);
        }
        let p = self.primitive(after, &item)?;
        self.emit(Event::Primitive(p));
        Ok(false)
    }

    /// `parsePrimitiveToken`.
    fn primitive(&mut self, token: &'a str, line: &Line<'a>) -> Result<Primitive<'a>> {
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
                        Primitive::Number(if n == 0.0 { 0.0 } else { n })
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
pub(super) mod tests {
    use super::*;
    use serde_json::{json, Map, Value};

    /// The events of `text` (owned, for comparing) and how it ended.
    pub(in crate::toon::decode) fn events_of(text: &str, opts: &DecodeOptions, input: Input) -> (Vec<Event<'static>>, Result<Progress>) {
        let mut out = Vec::new();
        let r = decode_events(text, opts, input, &mut |e| out.push(owned(e)));
        (out, r)
    }

    fn owned(e: Event<'_>) -> Event<'static> {
        match e {
            Event::StartObject => Event::StartObject,
            Event::EndObject => Event::EndObject,
            Event::StartArray { length } => Event::StartArray { length },
            Event::EndArray => Event::EndArray,
            // (Leaked: test data only.)
            Event::Key(k) => Event::Key(Box::leak(k.to_string().into_boxed_str())),
            Event::Primitive(Primitive::String(s)) => Event::Primitive(Primitive::String(Cow::Owned(s.into_owned()))),
            Event::Primitive(Primitive::Null) => Event::Primitive(Primitive::Null),
            Event::Primitive(Primitive::Bool(b)) => Event::Primitive(Primitive::Bool(b)),
            Event::Primitive(Primitive::Number(n)) => Event::Primitive(Primitive::Number(n)),
        }
    }

    /// The value the events describe (the reference's
    /// `buildValueFromEvents`: a repeated key keeps its place and takes the
    /// last value), numbers as doubles.
    pub(in crate::toon::decode) fn value_of(events: &[Event<'_>]) -> Option<Value> {
        fn one(it: &mut std::slice::Iter<'_, Event<'_>>) -> Option<Value> {
            Some(match it.next()? {
                Event::StartObject => {
                    let mut m = Map::new();
                    loop {
                        match it.next()? {
                            Event::EndObject => break Value::Object(m),
                            Event::Key(k) => {
                                let v = one(it)?;
                                m.insert(k.to_string(), v);
                            }
                            _ => return None,
                        }
                    }
                }
                Event::StartArray { .. } => {
                    let mut items = Vec::new();
                    loop {
                        let mut peek = it.clone();
                        if let Some(Event::EndArray) = peek.next() {
                            *it = peek;
                            break Value::Array(items);
                        }
                        items.push(one(it)?);
                    }
                }
                Event::Primitive(Primitive::Null) => Value::Null,
                Event::Primitive(Primitive::Bool(b)) => Value::Bool(*b),
                Event::Primitive(Primitive::Number(n)) => json!(n),
                Event::Primitive(Primitive::String(s)) => Value::String(s.to_string()),
                _ => return None,
            })
        }
        let mut it = events.iter();
        let v = one(&mut it)?;
        it.next().is_none().then_some(v)
    }

    /// `v` with every number as a double (as events have them).
    pub(in crate::toon::decode) fn as_doubles(v: Value) -> Value {
        match v {
            Value::Number(n) => json!(n.as_f64().unwrap_or(f64::NAN)),
            Value::Array(a) => Value::Array(a.into_iter().map(as_doubles).collect()),
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, as_doubles(v))).collect()),
            v => v,
        }
    }

    fn strict() -> DecodeOptions {
        DecodeOptions::default()
    }

    use Event::{EndArray as EA, EndObject as EO, StartObject as SO};

    fn sa(length: f64) -> Event<'static> {
        Event::StartArray { length }
    }

    fn k(s: &'static str) -> Event<'static> {
        Event::Key(s)
    }

    fn n(x: f64) -> Event<'static> {
        Event::Primitive(Primitive::Number(x))
    }

    fn s(x: &'static str) -> Event<'static> {
        Event::Primitive(Primitive::String(Cow::Borrowed(x)))
    }

    #[test]
    fn events_in_document_order() {
        let cases: Vec<(&str, Vec<Event<'static>>)> = vec![
            ("", vec![SO, EO]),
            ("hello", vec![s("hello")]),
            ("[]", vec![sa(0.0), EA]),
            ("a:\n  b: 1\nc: []", vec![SO, k("a"), SO, k("b"), n(1.0), EO, k("c"), sa(0.0), EA, EO]),
            ("[2]: x,\"y\\n\"", vec![sa(2.0), s("x"), s("y\n"), EA]),
            (
                "t[1]{a,g{b}}:\n  1,2",
                vec![SO, k("t"), sa(1.0), SO, k("a"), n(1.0), k("g"), SO, k("b"), n(2.0), EO, EO, EA, EO],
            ),
            ("m[1:]{v}:\n  e: -0", vec![SO, k("m"), SO, k("e"), SO, k("v"), n(0.0), EO, EO, EO]),
            (
                "l[3]:\n  - r[1]{x}:\n      7\n    y: 1\n  - z: 2\n  -",
                vec![
                    SO, k("l"), sa(3.0), SO, k("r"), sa(1.0), SO, k("x"), n(7.0), EO, EA, k("y"), n(1.0), EO, SO, k("z"),
                    n(2.0), EO, SO, EO, EA, EO,
                ],
            ),
        ];
        for (text, want) in cases {
            let (got, r) = events_of(text, &strict(), Input::Whole);
            assert_eq!(r.unwrap(), Progress::Done, "{text:?}");
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn events_before_a_fault_then_its_error() {
        // As the reference 4.4.0 yields them (run on these texts).
        let (got, r) = events_of("a[3]: 1,2", &strict(), Input::Whole);
        assert_eq!(got, vec![SO, k("a"), sa(3.0)]);
        assert_eq!(r.unwrap_err().message(), "Expected 3 inline-form values, but got 2");
        let (got, r) = events_of("a[1]{x}:\n  1\n  2", &strict(), Input::Whole);
        assert_eq!(got, vec![SO, k("a"), sa(1.0), SO, k("x"), n(1.0), EO]);
        assert_eq!(r.unwrap_err().message(), "Expected 1 tabular rows, but found more");
        // A row is read whole before its object is reported.
        let (got, r) = events_of("t[2]{a,b}:\n  1,2\n  3,\"x", &strict(), Input::Whole);
        assert_eq!(got, vec![SO, k("t"), sa(2.0), SO, k("a"), n(1.0), k("b"), n(2.0), EO]);
        assert_eq!(r.unwrap_err().code(), "TOON_UNTERMINATED_STRING");
        // Non-strict: the declared length, whatever came.
        let (got, r) = events_of("a[3]: 1,2", &DecodeOptions { strict: false, ..strict() }, Input::Whole);
        assert_eq!(got, vec![SO, k("a"), sa(3.0), n(1.0), n(2.0), EA, EO]);
        assert_eq!(r.unwrap(), Progress::Done);
    }

    #[test]
    fn lines_so_far() {
        let text = "a: 1\nb[2]:\n  - x\n  - y\nc: 2";
        let (all, _) = events_of(text, &strict(), Input::Whole);
        let lines: Vec<&str> = text.split('\n').collect();
        let mut last = 0;
        for n in 1..=lines.len() {
            let (got, r) = events_of(&lines[..n].join("\n"), &strict(), Input::SoFar);
            assert_eq!(r.unwrap(), Progress::NeedsMore);
            assert_eq!(got[..], all[..got.len()]);
            assert!(got.len() >= last);
            last = got.len();
        }
        // As in the reference, the first line waits for the second (a root
        // primitive is a lone line); `b: 2` is decided by its own line.
        assert_eq!(events_of("a: 1", &strict(), Input::SoFar).0, vec![]);
        assert_eq!(events_of("a: 1\nb: 2", &strict(), Input::SoFar).0, vec![SO, k("a"), n(1.0), k("b"), n(2.0)]);
        assert_eq!(last, all.len() - 1);
        assert_eq!(value_of(&all), Some(as_doubles(json!({"a": 1, "b": ["x", "y"], "c": 2}))));
    }

    /// (Nested objects: `decode`'s `nesting_is_bounded` checks both.)
    #[test]
    fn nested_lists_are_bounded() {
        let list = format!("{}x", (0..MAX_DEPTH + 5).map(|i| format!("{}- [1]:\n", "  ".repeat(i))).collect::<String>());
        assert_eq!(events_of(&list, &strict(), Input::Whole).1.unwrap_err().code(), decode(&list, &strict()).unwrap_err().code());
    }
}
