//! The structure walk of the value decoder: the document's root form,
//! objects (`key: ...` lines), list arrays (`- item` lines), inline, tabular
//! and keyed arrays, each value handed to the builder as it completes.
//! Open objects and lists are an explicit stack of frames, so deep nesting
//! costs heap, not call stack.

use std::borrow::Cow;

use super::errors::{internal, js_number};
use super::headers::{count_leaves, Field, Header};
use super::keys::SeenFrame;
use super::lines::{
    from, is_array_header_content, is_data_row, is_key_value_content, plain_cells, split_row, sub, trim_spaces, Cells, Line, PlainCell,
};
use super::scalars::{parse_key_token, plain_key_colon};
use super::sink::{key_of, Sink};
use super::Decoder;
use crate::error::Result;

/// An object or list array whose lines are still being read.
enum Frame<'a> {
    /// Fields at one depth (the first line's, at least `min_depth`; fixed
    /// in advance for the root and for objects opened by a list item).
    Object {
        min_depth: usize,
        depth: Option<usize>,
        seen: Option<SeenFrame>,
        /// Where its entries start in `Decoder::entries`.
        base: usize,
        /// Nesting level of its values.
        level: usize,
    },
    /// `- item` lines at `item_depth`.
    List {
        length: f64,
        item_depth: usize,
        base_depth: usize,
        /// Where its items start in `Decoder::values`.
        base: usize,
        count: usize,
        /// First and last line numbers of its items (blank-line rule).
        start: Option<usize>,
        end: Option<usize>,
        /// The line a length mismatch is reported at.
        last: Line<'a>,
        level: usize,
    },
}

impl<'a, V, K> Decoder<'a, V, K> {
    pub(super) fn document<B: Sink<Value = V, Key = K>>(&mut self, b: &mut B) -> Result<V, B::Error> {
        let Some(first) = self.r.peek()? else {
            b.begin_object()?;
            return b.object(self.entries.drain(..0));
        };
        if first.depth != 0 {
            return Err(self.over_indented(&first, 0).into());
        }
        let mut stack: Vec<Frame<'a>> = Vec::new();
        if trim_spaces(first.content) == "[]" {
            self.r.next()?;
            b.begin_array()?;
            let v = b.array(self.values.drain(..0))?;
            self.assert_consumed()?;
            return Ok(v);
        }
        if is_array_header_content(first.content) {
            if let Some(h) = self.header(&first)? {
                self.r.next()?;
                let v = match self.array_from_header(b, &mut stack, &h, &first, 0, 0)? {
                    Some(v) => v,
                    None => self.run(b, &mut stack)?,
                };
                self.assert_consumed()?;
                return Ok(v);
            }
        }
        self.r.next()?;
        let following = self.r.peek()?;
        let key_value = is_key_value_content(first.content);
        if following.is_none() && !key_value {
            return self.primitive(b, first.content, &first);
        }
        if !key_value && following.is_some_and(|l| l.depth == 0) {
            return Err(self.error(&first, "TOON_ROOT_FORM", "Top-level document must start with a key-value or array-header line").into());
        }
        let seen = self.seen.begin(self.track_keys);
        b.begin_object()?;
        stack.push(Frame::Object { min_depth: 0, depth: Some(0), seen, base: self.entries.len(), level: 1 });
        self.key_value(b, &mut stack, first, 0, seen, 1)?;
        self.run(b, &mut stack)
    }

    pub(super) fn assert_consumed(&mut self) -> Result<()> {
        if let Some(line) = self.r.peek()? {
            return Err(self.error(
                &line,
                "TOON_TRAILING_CONTENT",
                "Unexpected content after the document root (expected the end of the document)",
            ));
        }
        Ok(())
    }

    /// Drive the open objects and list arrays on `stack` until the bottom
    /// one is complete, and return its value. (An explicit stack rather
    /// than recursion, so deep nesting costs heap, not call stack.)
    fn run<B: Sink<Value = V, Key = K>>(&mut self, b: &mut B, stack: &mut Vec<Frame<'a>>) -> Result<V, B::Error> {
        loop {
            let Some(top) = stack.last_mut() else {
                return Err(internal().into());
            };
            // Either the next line goes to the top frame, or it is complete.
            let mut finished = false;
            match top {
                Frame::Object { min_depth, depth, seen, level, .. } => {
                    let (min_depth, seen, level) = (*min_depth, *seen, *level);
                    match self.r.peek()? {
                        Some(line) if line.depth >= min_depth => {
                            let d = *depth.get_or_insert(line.depth);
                            if line.depth != d {
                                return Err(self.over_indented(&line, d).into());
                            }
                            self.r.next()?;
                            self.key_value(b, stack, line, d, seen, level)?;
                        }
                        _ => finished = true,
                    }
                }
                Frame::List { length, item_depth, base_depth, count, start, level, .. } => {
                    let (item_depth, level) = (*item_depth, *level);
                    let line =
                        if !self.strict || (*count as f64) < *length { self.r.peek()?.filter(|l| l.depth > *base_depth) } else { None };
                    match line {
                        Some(line) => {
                            if line.depth != item_depth {
                                return Err(self.over_indented(&line, item_depth).into());
                            }
                            if line.content.starts_with("- ") || line.content == "-" {
                                start.get_or_insert(line.number);
                                if let Some(v) = self.list_item(b, stack, item_depth, level)? {
                                    self.deliver(stack, v)?;
                                }
                            } else {
                                finished = true;
                            }
                        }
                        None => finished = true,
                    }
                }
            }
            if finished {
                let Some(frame) = stack.pop() else { return Err(internal().into()) };
                let v = self.finish(b, frame)?;
                if stack.is_empty() {
                    return Ok(v);
                }
                self.deliver(stack, v)?;
            }
        }
    }

    /// Close a complete frame into its value.
    fn finish<B: Sink<Value = V, Key = K>>(&mut self, b: &mut B, frame: Frame<'a>) -> Result<V, B::Error> {
        match frame {
            Frame::Object { seen, base, .. } => {
                self.seen.end(seen);
                b.object(self.entries.drain(base.min(self.entries.len())..))
            }
            Frame::List { length, item_depth, base, count, start, end, last, .. } => {
                if self.strict {
                    self.check_count(&last, "TOON_LENGTH_MISMATCH", count, length, "list-form items")?;
                    self.check_no_blank(start, end, "list-form array")?;
                    if let Some(next) = self.r.peek()? {
                        if next.depth == item_depth && next.content.starts_with("- ") {
                            return Err(self
                                .error(
                                    &next,
                                    "TOON_LENGTH_MISMATCH",
                                    format!("Expected {} list-form items, but found more", js_number(length)),
                                )
                                .into());
                        }
                    }
                }
                b.array(self.values.drain(base.min(self.values.len())..))
            }
        }
    }

    /// Hand a finished value to the frame on top of the stack: an entry of
    /// an object (under the key waiting for it) or an item of a list.
    fn deliver(&mut self, stack: &mut [Frame<'a>], v: V) -> Result<()> {
        match stack.last_mut() {
            Some(Frame::Object { .. }) => {
                let Some(k) = self.pending.pop() else { return Err(internal()) };
                self.entries.push((k, v));
            }
            Some(Frame::List { count, end, last, .. }) => {
                self.values.push(v);
                *count += 1;
                if let Some(l) = self.r.last {
                    *end = Some(l.number);
                    *last = l;
                }
            }
            None => return Err(internal()),
        }
        Ok(())
    }

    /// Decode one `key: ...` line into an entry of the object on top of the
    /// stack, or open the frame that will build its value; `level` is the
    /// nesting level of the value.
    fn key_value<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        line: Line<'a>,
        base_depth: usize,
        seen: Option<SeenFrame>,
        level: usize,
    ) -> Result<(), B::Error> {
        // Most lines are `key: value` with a plain key: then the line is no
        // header and the key ends at that colon, which one scan tells.
        let (key, end) = match plain_key_colon(line.content) {
            Some(colon) => (Cow::Borrowed(trim_spaces(sub(line.content, 0, colon))), colon + 1),
            None => return self.key_value_slow(b, stack, line, base_depth, seen, level),
        };
        self.key_value_rest(b, stack, line, key, end, base_depth, seen, level)
    }

    /// [`Self::key_value`] for lines that may be headers or have quoted keys.
    #[inline(never)]
    fn key_value_slow<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        line: Line<'a>,
        base_depth: usize,
        seen: Option<SeenFrame>,
        level: usize,
    ) -> Result<(), B::Error> {
        if let Some(h) = self.header(&line)? {
            let Some(key) = &h.key else {
                let msg = if h.keyed {
                    "Keyless keyed header is only valid at the document root"
                } else {
                    "Keyless array header is only valid at the document root or as a list item"
                };
                return Err(self.error(&line, "TOON_KEYLESS_HEADER", msg).into());
            };
            self.note_key(seen, key, &line)?;
            let k = key_of(b, key, h.key_quoted)?;
            match self.array_from_header(b, stack, &h, &line, base_depth, level)? {
                Some(v) => self.entries.push((k, v)),
                None => self.pending.push(k),
            }
            return Ok(());
        }
        let (key, end) = self.at(&line, parse_key_token(line.content))?;
        self.key_value_rest(b, stack, line, key, end, base_depth, seen, level)
    }

    /// A `key: ...` line that is no header, its key parsed and ending at
    /// `end`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn key_value_rest<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        line: Line<'a>,
        key: Cow<'a, str>,
        end: usize,
        base_depth: usize,
        seen: Option<SeenFrame>,
        level: usize,
    ) -> Result<(), B::Error> {
        let rest = trim_spaces(from(line.content, end));
        self.note_key(seen, &key, &line)?;
        let k = key_of(b, &key, line.content.starts_with('"'))?;
        let v = if rest.is_empty() {
            self.enter(&line, level)?;
            match self.r.peek()? {
                Some(next) if next.depth > base_depth => {
                    // A nested object: its fields are the deeper lines.
                    self.check_depth_jump(&next, base_depth)?;
                    b.begin_object()?;
                    self.pending.push(k);
                    let seen = self.seen.begin(self.track_keys);
                    stack.push(Frame::Object { min_depth: base_depth + 1, depth: None, seen, base: self.entries.len(), level: level + 1 });
                    return Ok(());
                }
                _ => {
                    b.begin_object()?;
                    b.object(self.entries.drain(..0))?
                }
            }
        } else if rest == "[]" {
            self.enter(&line, level)?;
            b.begin_array()?;
            b.array(self.values.drain(..0))?
        } else {
            self.primitive(b, rest, &line)?
        };
        self.entries.push((k, v));
        Ok(())
    }

    /// The depth of the lines under a header at `base_depth`.
    pub(super) fn content_depth(&mut self, base_depth: usize) -> Result<usize> {
        match self.r.peek()? {
            Some(first) if first.depth > base_depth + 1 => {
                self.check_depth_jump(&first, base_depth)?;
                Ok(first.depth)
            }
            _ => Ok(base_depth + 1),
        }
    }

    /// The value under an array header: built at once (inline, tabular,
    /// keyed), or `None` with a list frame pushed on the stack.
    fn array_from_header<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        h: &Header<'a>,
        line: &Line<'a>,
        base_depth: usize,
        level: usize,
    ) -> Result<Option<V>, B::Error> {
        if h.keyed {
            return self.keyed_object(b, h, line, base_depth, level).map(Some);
        }
        self.enter(line, level)?;
        b.begin_array()?;
        if let Some(inline) = h.inline {
            return self.inline_array(b, h, inline, line).map(Some);
        }
        if h.fields {
            return self.tabular_array(b, h, line, base_depth, level).map(Some);
        }
        let item_depth = self.content_depth(base_depth)?;
        stack.push(Frame::List {
            length: h.length,
            item_depth,
            base_depth,
            base: self.values.len(),
            count: 0,
            start: None,
            end: None,
            last: *line,
            level: level + 1,
        });
        Ok(None)
    }

    /// `key[N]: a,b,c`
    fn inline_array<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        inline: &'a str,
        line: &Line<'a>,
    ) -> Result<V, B::Error> {
        let base = self.values.len();
        for cell in Cells::new(inline, h.delim) {
            let v = self.primitive(b, cell, line)?;
            self.values.push(v);
        }
        if self.strict {
            let n = self.values.len() - base;
            self.check_count(line, "TOON_LENGTH_MISMATCH", n, h.length, "inline-form values")?;
        }
        b.array(self.values.drain(base..))
    }

    /// Run `f` with the field list of the current header and the keys made
    /// for its names (made once per list, then reused by every row of
    /// every table with the same list).
    fn with_fields<B: Sink<Value = V, Key = K>, T>(
        &mut self,
        b: &mut B,
        f: impl FnOnce(&mut Self, &mut B, &[Field<'a>], &[K]) -> Result<T, B::Error>,
    ) -> Result<T, B::Error> {
        let list = std::mem::take(&mut self.fields);
        let mut keys = std::mem::take(&mut self.field_keys);
        let mut r = Ok(());
        if self.keys_generation != list.generation || keys.len() != list.fields.len() {
            keys.clear();
            r = list.fields.iter().try_for_each(|f| {
                keys.push(if f.quoted { b.quoted_key_ahead(&f.name)? } else { b.key_ahead(&f.name)? });
                Ok(())
            });
            if r.is_ok() {
                self.keys_generation = list.generation;
            }
        }
        let r = r.and_then(|()| f(self, b, &list.fields, &keys));
        self.fields = list;
        self.field_keys = keys;
        r
    }

    /// `key[N]{f1,f2}:` followed by rows.
    fn tabular_array<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        header_line: &Line<'a>,
        base_depth: usize,
        level: usize,
    ) -> Result<V, B::Error> {
        let row_depth = self.content_depth(base_depth)?;
        self.with_fields(b, |d, b, fields, keys| d.table_rows(b, h, fields, keys, header_line, base_depth, row_depth, level))
    }

    #[allow(clippy::too_many_arguments)]
    fn table_rows<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        fields: &[Field<'a>],
        keys: &[K],
        header_line: &Line<'a>,
        base_depth: usize,
        row_depth: usize,
        level: usize,
    ) -> Result<V, B::Error> {
        let width = count_leaves(fields);
        // No nested groups (the usual table): rows take the short way.
        let flat = width == fields.len() && keys.len() == fields.len();
        let base = self.values.len();
        let mut count = 0usize;
        let (mut start, mut end) = (None, None);
        let mut last = *header_line;
        while !self.strict || (count as f64) < h.length {
            let Some(line) = self.r.peek()? else { break };
            if line.depth <= base_depth {
                break;
            }
            if line.depth != row_depth {
                return Err(self.over_indented(&line, row_depth).into());
            }
            if flat {
                // Numbers read while splitting.
                let mut plain = std::mem::take(&mut self.plain);
                match plain_cells(line.content, h.delim, &mut plain) {
                    false => {
                        self.plain = plain;
                        break;
                    }
                    true if plain.len() == width => {
                        start.get_or_insert(line.number);
                        end = Some(line.number);
                        last = line;
                        self.r.next()?;
                        let v = self.plain_row(b, fields, keys, &plain, &line, level + 1);
                        self.plain = plain;
                        self.values.push(v?);
                        count += 1;
                        continue;
                    }
                    // A count to report: the general way.
                    true => self.plain = plain,
                }
            }
            // Split once (which also tells a row from a `key: value`
            // line); the count is checked before any cell is used.
            let mut cells = std::mem::take(&mut self.cells);
            if !split_row(line.content, h.delim, &mut cells) {
                self.cells = cells;
                break;
            }
            start.get_or_insert(line.number);
            end = Some(line.number);
            last = line;
            self.r.next()?;
            if cells.len() != width {
                self.check_count(&line, "TOON_WIDTH_MISMATCH", cells.len(), width as f64, "tabular row values")?;
            }
            // (A row of a table without groups got here only to report its
            // count: `plain_row` reads the others.)
            let v = self.row_object(b, fields, keys, 0, fields.len(), &mut cells.iter().copied(), &line, level + 1);
            self.cells = cells;
            let v = v?;
            self.values.push(v);
            count += 1;
        }
        if self.strict {
            self.check_count(&last, "TOON_LENGTH_MISMATCH", count, h.length, "tabular rows")?;
            self.check_no_blank(start, end, "tabular array")?;
            if let Some(next) = self.r.peek()? {
                if next.depth == row_depth && !next.content.starts_with("- ") && is_data_row(next.content, h.delim) {
                    return Err(self
                        .error(&next, "TOON_LENGTH_MISMATCH", format!("Expected {} tabular rows, but found more", js_number(h.length)))
                        .into());
                }
            }
        }
        b.array(self.values.drain(base..))
    }

    /// `key[N:]{f1,f2}:` followed by `entry: cells` lines: an object.
    fn keyed_object<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        header_line: &Line<'a>,
        base_depth: usize,
        level: usize,
    ) -> Result<V, B::Error> {
        let entry_depth = self.content_depth(base_depth)?;
        self.enter(header_line, level)?;
        b.begin_object()?;
        self.with_fields(b, |d, b, fields, keys| d.keyed_entries(b, h, fields, keys, header_line, base_depth, entry_depth, level))
    }

    #[allow(clippy::too_many_arguments)]
    fn keyed_entries<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        fields: &[Field<'a>],
        keys: &[K],
        header_line: &Line<'a>,
        base_depth: usize,
        entry_depth: usize,
        level: usize,
    ) -> Result<V, B::Error> {
        let width = count_leaves(fields);
        let frame = self.seen.begin(self.track_keys);
        let base = self.entries.len();
        let mut count = 0usize;
        let (mut start, mut end) = (None, None);
        let mut last = *header_line;
        while let Some(line) = self.r.peek()? {
            if line.depth <= base_depth {
                break;
            }
            if line.depth != entry_depth {
                return Err(self.over_indented(&line, entry_depth).into());
            }
            if !is_key_value_content(line.content) {
                return Err(self
                    .error(&line, "TOON_EXPECTED_ENTRY_ROW", "Expected entry row inside keyed tabular object (a \"key: cells\" line)")
                    .into());
            }
            self.r.next()?;
            start.get_or_insert(line.number);
            end = Some(line.number);
            last = line;
            let (key, key_end) = self.at(&line, parse_key_token(line.content))?;
            self.note_key(frame, &key, &line)?;
            let k = key_of(b, &key, line.content.starts_with('"'))?;
            let cells_text = trim_spaces(from(line.content, key_end));
            let mut cells = std::mem::take(&mut self.cells);
            cells.clear();
            cells.extend(Cells::new(cells_text, h.delim));
            if cells.len() != width {
                self.check_count(&line, "TOON_WIDTH_MISMATCH", cells.len(), width as f64, "keyed entry cells")?;
            }
            let v = self.row_object(b, fields, keys, 0, fields.len(), &mut cells.iter().copied(), &line, level + 1);
            self.cells = cells;
            let v = v?;
            self.entries.push((k, v));
            count += 1;
        }
        if self.strict {
            self.check_count(&last, "TOON_LENGTH_MISMATCH", count, h.length, "keyed entries")?;
            self.check_no_blank(start, end, "keyed tabular object")?;
        }
        self.seen.end(frame);
        b.object(self.entries.drain(base..))
    }

    /// One row's object for a field list without groups (one cell per
    /// field, as [`plain_cells`] read them), as [`Self::row_object`] makes it.
    fn plain_row<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        fields: &[Field<'a>],
        keys: &[K],
        cells: &[PlainCell<'a>],
        line: &Line<'a>,
        level: usize,
    ) -> Result<V, B::Error> {
        self.enter(line, level)?;
        b.begin_object()?;
        let base = self.entries.len();
        for ((f, k), &cell) in fields.iter().zip(keys).zip(cells) {
            let k = b.key_again(k, &f.name)?;
            let v = match cell {
                // As `primitive` reads it (the cell is the literal alone).
                PlainCell::Number(text, n) => match b.number_value(text, n.integer, n.quick)? {
                    Some(v) => v,
                    None => b.string(text)?,
                },
                PlainCell::Token(t) => self.primitive(b, t, line)?,
            };
            self.entries.push((k, v));
        }
        b.object(self.entries.drain(base..))
    }

    /// One row's object: the fields `fields[start..end]` (one level) filled
    /// from the cells in order, nested groups as nested objects.
    #[allow(clippy::too_many_arguments)]
    fn row_object<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        fields: &[Field<'a>],
        keys: &[K],
        start: usize,
        end: usize,
        cells: &mut std::iter::Copied<std::slice::Iter<'_, &'a str>>,
        line: &Line<'a>,
        level: usize,
    ) -> Result<V, B::Error> {
        self.enter(line, level)?;
        b.begin_object()?;
        let base = self.entries.len();
        let mut i = start;
        while i < end {
            let Some(f) = fields.get(i) else { break };
            let k = match keys.get(i) {
                Some(k) => b.key_again(k, &f.name)?,
                None => key_of(b, &f.name, f.quoted)?,
            };
            let next = f.next.max(i + 1);
            let v = if next > i + 1 {
                self.row_object(b, fields, keys, i + 1, next, cells, line, level + 1)?
            } else {
                let cell = cells.next().unwrap_or_default();
                self.primitive(b, cell, line)?
            };
            self.entries.push((k, v));
            i = next;
        }
        b.object(self.entries.drain(base..))
    }

    /// One `- item` at `item_depth`: its value, or `None` when it opened
    /// frames on the stack that will deliver it.
    fn list_item<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        item_depth: usize,
        level: usize,
    ) -> Result<Option<V>, B::Error> {
        let Some(line) = self.r.next()? else {
            return Err(internal().into());
        };
        let after = if line.content == "-" {
            ""
        } else if let Some(rest) = line.content.strip_prefix("- ") {
            rest.trim_start_matches(' ')
        } else {
            return Err(self.error(&line, "TOON_EXPECTED_LIST_ITEM", "Expected list item to start with \"- \"").into());
        };
        if trim_spaces(after).is_empty() {
            self.enter(&line, level)?;
            b.begin_object()?;
            return b.object(self.entries.drain(..0)).map(Some);
        }
        if trim_spaces(after) == "[]" {
            self.enter(&line, level)?;
            b.begin_array()?;
            return b.array(self.values.drain(..0)).map(Some);
        }
        let item = Line { content: after, ..line };
        if is_array_header_content(after) {
            if let Some(h) = self.header(&item)? {
                if h.keyed || h.fields {
                    let msg = if h.keyed {
                        "Keyless keyed header is only valid at the document root"
                    } else {
                        "Keyless header with a field list is only valid at the document root"
                    };
                    return Err(self.error(&item, "TOON_KEYLESS_HEADER", msg).into());
                }
                return self.array_from_header(b, stack, &h, &item, item_depth, level);
            }
        }
        let header = self.header(&item)?;
        if let Some(h) = header.filter(|h| h.key.is_some() && h.fields) {
            // `- key[N]{fields}:` opens an object whose first field is the
            // table; its rows sit two levels below the hyphen, its other
            // fields one level below.
            self.enter(&item, level)?;
            let seen = self.seen.begin(self.track_keys);
            let key = h.key.clone().unwrap_or_default();
            self.note_key(seen, &key, &item)?;
            b.begin_object()?;
            stack.push(Frame::Object {
                min_depth: item_depth + 1,
                depth: Some(item_depth + 1),
                seen,
                base: self.entries.len(),
                level: level + 1,
            });
            let k = key_of(b, &key, h.key_quoted)?;
            match self.array_from_header(b, stack, &h, &item, item_depth + 1, level + 1)? {
                Some(v) => self.entries.push((k, v)),
                None => self.pending.push(k),
            }
            return Ok(None);
        }
        if is_key_value_content(after) {
            // `- key: ...` opens an object; its other fields sit one level
            // below the hyphen.
            self.enter(&item, level)?;
            let seen = self.seen.begin(self.track_keys);
            b.begin_object()?;
            stack.push(Frame::Object {
                min_depth: item_depth + 1,
                depth: Some(item_depth + 1),
                seen,
                base: self.entries.len(),
                level: level + 1,
            });
            self.key_value(b, stack, item, item_depth + 1, seen, level + 1)?;
            return Ok(None);
        }
        self.primitive(b, after, &item).map(Some)
    }
}
