//! The writer: lines and their indentation, keys, headers and field lists,
//! and the walk that takes each value in the form the analysis
//! (`analyze.rs`) finds for it and writes it (tables in one pass where the
//! first row tells the header, rows a binding wrote ahead, list items, key
//! folding).

use std::collections::HashSet;

use super::analyze::{
    all_primitive, dotted_keys, field_value, flat_fields, for_each_entry, is_index_key, item_shape, join_path, keyed_tabular, leaf_count,
    tabular_fields, Field, FoldCtx, Keyed,
};
use super::scalars::{push_piece, push_primitive, push_quoted};
use super::{enter, value_changed, EncodeValue, Kind, RenderedTable};
use crate::error::{Error, Format, Result};
use crate::toon::syntax::{is_bare_key, is_identifier_segment};
use crate::toon::Delimiter;

/// A line break and the indentation of a line, as one piece.
const NEWLINE_SPACES: &str = "\n                                                                ";

pub(super) struct Writer<'o> {
    pub(super) out: &'o mut String,
    pub(super) indent: usize,
    pub(super) delimiter: Delimiter,
    pub(super) delim_byte: u8,
    /// Bytes that force a string value to be quoted (delimiter included).
    pub(super) quote: &'static [bool; 256],
    /// Whether a line was started (the next one is preceded by `\n`).
    pub(super) any_line: bool,
    /// Key folding on (`KeyFolding::Safe`).
    pub(super) folding: bool,
    /// `flatten_depth` option.
    pub(super) flatten_depth: usize,
    /// With folding: the root object's keys that contain a dot, which no
    /// folded path under the root may equal (`None` when there are none).
    pub(super) root_dotted: Option<HashSet<String>>,
    /// Whether objects are scanned for array-index keys before their
    /// entries are written (see [`encode_into`](super::encode_into)).
    pub(super) prescan: bool,
    /// Set when the walk stopped to start over with `prescan`.
    pub(super) restart: bool,
    /// The field list last written in a table header (`{a,b,c{d}}`) and
    /// its fields ([`fields_signature`]): tables in a document usually
    /// repeat their header (a table per order, per feature flag), and the
    /// quoting checks of every name then run once.
    pub(super) fields_sig: Vec<usize>,
    pub(super) fields_text: String,
}

/// The identity of header fields: per field in preorder, the address and
/// length of its name and its number of children. Names are borrowed text
/// that stays in place, unchanged, for the whole walk (`'k`), so equal
/// addresses and lengths mean equal names, and an address and length kept
/// here can be read back as the name during the walk.
fn fields_signature(fields: &[Field<'_>], sig: &mut Vec<usize>) {
    for f in fields {
        sig.extend_from_slice(&[f.name.as_ptr() as usize, f.name.len(), f.children.len()]);
        fields_signature(&f.children, sig);
    }
}

/// Whether `fields` have the signature `sig` from `*at` on (advanced past it).
fn signature_matches(fields: &[Field<'_>], sig: &[usize], at: &mut usize) -> bool {
    for f in fields {
        match sig.get(*at..*at + 3) {
            Some(&[p, n, c]) if n == f.name.len() && c == f.children.len() => {
                // The same text, or equal text elsewhere (keys that are not
                // shared objects).
                // SAFETY: (p, n) is a name of this walk (see above).
                if p != f.name.as_ptr() as usize && unsafe { std::slice::from_raw_parts(p as *const u8, n) } != f.name.as_bytes() {
                    return false;
                }
            }
            _ => return false,
        }
        *at += 3;
        if !f.children.is_empty() && !signature_matches(&f.children, sig, at) {
            return false;
        }
    }
    true
}

impl Writer<'_> {
    /// Start a line at `depth` indentation levels.
    #[inline(always)]
    fn line(&mut self, depth: usize) {
        let n = depth * self.indent;
        let from = usize::from(!self.any_line);
        if n < 16 && self.out.capacity() - self.out.len() >= 16 {
            // Most lines: the line break and up to 15 spaces as one 16-byte
            // store, of which the first `n + 1 - from` bytes are kept.
            self.any_line = true;
            let keep = n + 1 - from;
            // SAFETY: 16 bytes of spare capacity; the source bytes
            // `from..from + 16` lie inside NEWLINE_SPACES (65 bytes); the
            // kept bytes are ASCII.
            unsafe {
                let v = self.out.as_mut_vec();
                let len = v.len();
                std::ptr::copy_nonoverlapping(NEWLINE_SPACES.as_ptr().add(from), v.as_mut_ptr().add(len), 16);
                v.set_len(len + keep);
            }
            return;
        }
        self.line_any(depth);
    }

    #[inline(never)]
    fn line_any(&mut self, depth: usize) {
        let from = usize::from(!self.any_line);
        self.any_line = true;
        let mut n = depth * self.indent;
        let k = n.min(NEWLINE_SPACES.len() - 1);
        push_piece(self.out, &NEWLINE_SPACES[from..k + 1]);
        n -= k;
        while n > 0 {
            let k = n.min(NEWLINE_SPACES.len() - 1);
            self.out.push_str(&NEWLINE_SPACES[1..k + 1]);
            n -= k;
        }
    }

    /// Start a list item line (`- `) at `depth`.
    #[inline]
    fn item(&mut self, depth: usize) {
        self.line(depth);
        self.out.push_str("- ");
    }

    #[inline]
    fn key(&mut self, k: &str) {
        if is_bare_key(k) {
            push_piece(self.out, k);
        } else {
            push_quoted(self.out, k);
        }
    }

    /// Write a primitive; containers here mean the value changed since it
    /// was classified. Inlined: its prologue and epilogue (it saves many
    /// registers) cost as much as writing a short value.
    #[inline(always)]
    fn primitive(&mut self, kind: &Kind<'_>) -> Result<()> {
        push_primitive(self.out, kind, self.quote, self.delim_byte)
    }

    /// `key[N<:><delim>]{fields}:` (the reference's `formatHeader`).
    fn header(&mut self, key: Option<&str>, n: usize, fields: Option<&[Field<'_>]>, keyed: bool) {
        if let Some(k) = key {
            self.key(k);
        }
        self.out.push('[');
        // SAFETY: `push_int` appends ASCII only.
        crate::json::push_int(unsafe { self.out.as_mut_vec() }, false, n as u64);
        if keyed {
            self.out.push(':');
        }
        if self.delimiter != Delimiter::Comma {
            self.out.push(self.delim_byte as char);
        }
        self.out.push(']');
        if let Some(fields) = fields {
            self.fields(fields);
        }
        self.out.push(':');
    }

    /// `{a,b,c{d}}`, from [`Writer::fields_text`] when the last header
    /// had the same fields.
    fn fields(&mut self, fields: &[Field<'_>]) {
        let mut at = 0;
        if !self.fields_sig.is_empty() && signature_matches(fields, &self.fields_sig, &mut at) && at == self.fields_sig.len() {
            push_piece(self.out, &self.fields_text);
            return;
        }
        let start = self.out.len();
        self.field_list(fields);
        self.fields_sig.clear();
        fields_signature(fields, &mut self.fields_sig);
        self.fields_text.clear();
        self.fields_text.push_str(&self.out[start..]);
    }

    fn field_list(&mut self, fields: &[Field<'_>]) {
        self.out.push('{');
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                self.out.push(self.delim_byte as char);
            }
            self.key(f.name);
            if !f.children.is_empty() {
                self.field_list(&f.children);
            }
        }
        self.out.push('}');
    }

    /// `key[N]: a,b,c` (`key[0]:` when empty) for an array of primitives.
    fn inline_array<'k, V: EncodeValue<'k>>(&mut self, key: Option<&str>, arr: &V) -> Result<(), V::Error> {
        let n = arr.array_len();
        self.header(key, n, None, false);
        if n > 0 {
            self.out.push(' ');
            for (i, item) in arr.array_items().enumerate() {
                if i > 0 {
                    self.out.push(self.delim_byte as char);
                }
                let item = item?;
                match item.kind() {
                    Err(e) => return Err(e),
                    Ok(ref kind) => self.primitive(kind)?,
                }
            }
        }
        Ok(())
    }

    /// The leaf cells of one tabular row, delimiter-separated.
    fn row_cells<'k, V: EncodeValue<'k>>(&mut self, row: &V, fields: &[Field<'_>], first: &mut bool) -> Result<(), V::Error> {
        let mut entries = row.object_entries();
        for field in fields {
            let v = field_value(row, entries.next(), field.name)?.ok_or_else(value_changed)?;
            if field.children.is_empty() {
                if !*first {
                    self.out.push(self.delim_byte as char);
                }
                *first = false;
                self.primitive(&v.kind()?)?;
            } else {
                self.row_cells(&v, &field.children, first)?;
            }
        }
        Ok(())
    }

    fn tabular_rows<'k, V: EncodeValue<'k>>(&mut self, rows: &[V], fields: &[Field<'_>], depth: usize) -> Result<(), V::Error> {
        for row in rows {
            self.line(depth);
            self.row_cells(row, fields, &mut true)?;
        }
        Ok(())
    }

    /// Tables in one pass. A table's header follows from its first row: a
    /// leaf per primitive value, a nested field group per non-empty object
    /// (whose own first-row fields follow the same rule); an array or empty
    /// object there means no table. So when the first item of `arr` (`n >
    /// 0` items) gives a header ([`flat_fields`]), the array is tabular
    /// exactly when every item has that same shape: the header and rows are
    /// written while that is checked, and at the first item that does not
    /// fit the text written is taken back and false returned (the caller
    /// then classifies the array as usual). Also false, with nothing
    /// written, when the first item gives no header. `list_item`: the
    /// header goes on a `- ` line at `depth` (the first entry of a
    /// list-item object), rows two levels deeper; else on a line at
    /// `depth`, rows one level deeper. `nest`: the array's nesting level.
    fn flat_table<'k, V: EncodeValue<'k>>(
        &mut self,
        key: Option<&str>,
        arr: &V,
        n: usize,
        depth: usize,
        list_item: bool,
        nest: usize,
    ) -> Result<bool, V::Error> {
        let Some(first) = arr.array_items().next() else {
            return Ok(false);
        };
        let first = first?;
        let Some(fields) = flat_fields(&first, nest + 1)? else {
            return Ok(false);
        };
        let (mark, any_line) = (self.out.len(), self.any_line);
        if list_item {
            self.item(depth);
        } else {
            self.line(depth);
        }
        self.header(key, n, Some(&fields), false);
        let row_depth = depth + if list_item { 2 } else { 1 };
        if let Some(table) = arr.rendered_table() {
            if table.columns == leaf_count(&fields) && table.delimiter == self.delimiter && table.row_ends.len() == n {
                self.rendered_rows(&table, row_depth)?;
                return Ok(true);
            }
        }
        let mut rows = 0;
        for row in arr.array_items() {
            let row = row?;
            self.line(row_depth);
            if !self.flat_cells(&row, &fields, &mut true)? {
                self.out.truncate(mark);
                self.any_line = any_line;
                return Ok(false);
            }
            rows += 1;
        }
        if rows != n {
            return Err(value_changed().into());
        }
        Ok(true)
    }

    /// The cells of one row of [`Writer::flat_table`] (of a nested field
    /// group when `fields` are its children); false when `row` does not
    /// have the shape of `fields`.
    fn flat_cells<'k, V: EncodeValue<'k>>(&mut self, row: &V, fields: &[Field<'_>], first: &mut bool) -> Result<bool, V::Error> {
        if !matches!(row.kind()?, Kind::Object) || row.object_len() != fields.len() {
            return Ok(false);
        }
        let mut entries = row.object_entries();
        for field in fields {
            let Some(v) = field_value(row, entries.next(), field.name)? else {
                return Ok(false);
            };
            if field.children.is_empty() {
                // Matched in place (not moved out of the `Result`): copies
                // of a just-built `Kind` stall on store forwarding.
                match v.kind() {
                    Err(e) => return Err(e),
                    Ok(ref kind) => {
                        if !kind.is_primitive() {
                            return Ok(false);
                        }
                        if !*first {
                            self.out.push(self.delim_byte as char);
                        }
                        *first = false;
                        self.primitive(kind)?;
                    }
                }
            } else if !self.flat_cells(&v, &field.children, first)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The rows of a table the value wrote ahead
    /// ([`EncodeValue::rendered_table`]), each on its line.
    fn rendered_rows(&mut self, table: &RenderedTable<'_>, row_depth: usize) -> Result<()> {
        let mut start = 0;
        for &end in table.row_ends {
            let row = table.text.get(start..end as usize).ok_or_else(value_changed)?;
            self.line(row_depth);
            push_piece(self.out, row);
            start = end as usize;
        }
        Ok(())
    }

    /// `entry: v1,v2` rows of a keyed tabular object.
    fn keyed_rows<'k, V: EncodeValue<'k>>(&mut self, obj: &V, fields: &[Field<'_>], depth: usize) -> Result<(), V::Error> {
        for_each_entry(obj, |_, k, v| {
            self.line(depth);
            self.key(k);
            self.out.push_str(": ");
            self.row_cells(&v, fields, &mut true)
        })
    }

    pub(super) fn root<'k, V: EncodeValue<'k>>(&mut self, v: &V) -> Result<(), V::Error> {
        match v.kind()? {
            Kind::Array => self.array(None, v, 0, 0),
            Kind::Object => {
                if let Some(Keyed { rows, fields }) = keyed_tabular(v, 0)? {
                    self.line(0);
                    self.header(None, rows.len(), Some(&fields), true);
                    self.keyed_rows(v, &fields, 1)
                } else {
                    if self.folding {
                        self.root_dotted = dotted_keys(v)?;
                    }
                    let ctx = FoldCtx { remaining: self.flatten_depth, root_chain: self.root_dotted.is_some(), prefix: "" };
                    self.object(v, 0, 0, ctx)
                }
            }
            Kind::Str(s) if s.starts_with('\u{feff}') => {
                // A leading BOM would be stripped by decoders: always quote.
                push_quoted(self.out, s);
                Ok(())
            }
            kind => Ok(self.primitive(&kind)?),
        }
    }

    /// Folding context of an object outside the root's nesting.
    fn fresh_ctx(&self) -> FoldCtx<'static> {
        FoldCtx { remaining: self.flatten_depth, root_chain: false, prefix: "" }
    }

    /// The entries of `obj` as `key: ...` lines at `depth`.
    ///
    /// In this and the following methods `nest` is the nesting level of the
    /// value handled (the root is 0), checked against [`MAX_DEPTH`](super::MAX_DEPTH) before a
    /// container is walked.
    fn object<'k, V: EncodeValue<'k>>(&mut self, obj: &V, depth: usize, nest: usize, ctx: FoldCtx<'_>) -> Result<(), V::Error> {
        enter(nest)?;
        let dotted = if self.folding { dotted_keys(obj)? } else { None };
        self.entries(obj, |w, _, k, v| w.entry(k, &v, depth, nest + 1, ctx, dotted.as_ref()))
    }

    /// [`for_each_entry`] for entries that are written: without `prescan`,
    /// in the object's own order, and an array-index key stops the walk to
    /// start over (`restart`).
    #[inline]
    fn entries<'k, V: EncodeValue<'k>>(
        &mut self,
        obj: &V,
        mut f: impl FnMut(&mut Self, usize, &str, V) -> Result<(), V::Error>,
    ) -> Result<(), V::Error> {
        if self.prescan {
            return for_each_entry(obj, |i, k, v| f(self, i, k, v));
        }
        for (i, entry) in obj.object_entries().enumerate() {
            let (k, v) = entry?;
            if is_index_key(k) {
                self.restart = true;
                return Err(Error::new(Format::Toon, "TOON_RESTART", "the walk starts over").into());
            }
            f(self, i, k, v)?;
        }
        Ok(())
    }

    /// One `key: value` entry (the reference's `encodeKeyValuePairLines`);
    /// `dotted` are the sibling keys containing a dot.
    fn entry<'k, V: EncodeValue<'k>>(
        &mut self,
        k: &str,
        v: &V,
        depth: usize,
        nest: usize,
        ctx: FoldCtx<'_>,
        dotted: Option<&HashSet<String>>,
    ) -> Result<(), V::Error> {
        // Matched in place: moving a just-built `Kind` out of the `Result`
        // stalls on store forwarding.
        match v.kind() {
            Err(e) => Err(e),
            Ok(ref kind) => match kind {
                Kind::Array => self.array(Some(k), v, depth, nest),
                Kind::Object => {
                    if self.folding && self.fold(k, v, depth, nest, ctx, dotted)? {
                        return Ok(());
                    }
                    if ctx.root_chain {
                        let path = join_path(ctx.prefix, k);
                        self.object_entry(k, v, depth, nest, FoldCtx { prefix: &path, ..ctx })
                    } else {
                        self.object_entry(k, v, depth, nest, ctx)
                    }
                }
                kind => {
                    self.line(depth);
                    self.key(k);
                    self.out.push_str(": ");
                    Ok(self.primitive(kind)?)
                }
            },
        }
    }

    /// An entry whose value is an object: keyed tabular, or `key:` and the
    /// object's entries below (with `ctx` as their folding context).
    fn object_entry<'k, V: EncodeValue<'k>>(
        &mut self,
        k: &str,
        v: &V,
        depth: usize,
        nest: usize,
        ctx: FoldCtx<'_>,
    ) -> Result<(), V::Error> {
        if let Some(Keyed { rows, fields }) = keyed_tabular(v, nest)? {
            self.line(depth);
            self.header(Some(k), rows.len(), Some(&fields), true);
            return self.keyed_rows(v, &fields, depth + 1);
        }
        self.line(depth);
        self.key(k);
        self.out.push(':');
        if v.object_len() > 0 {
            self.object(v, depth + 1, nest, ctx)?;
        }
        Ok(())
    }

    /// Key folding (spec v3 §13.4, as the reference 2.3.1's
    /// `tryFoldKeyChain`): when `v` starts a chain of single-key objects and
    /// every key of the chain (up to `ctx.remaining` segments) is an
    /// identifier, write the chain as one dotted key and return true. Not
    /// folded when the dotted key equals a sibling key or, under the root,
    /// a dotted root key at the same path. The dotted key then takes the
    /// value at the chain's end as any key does (array forms, keyed tabular).
    fn fold<'k, V: EncodeValue<'k>>(
        &mut self,
        k: &str,
        v: &V,
        depth: usize,
        nest: usize,
        ctx: FoldCtx<'_>,
        dotted: Option<&HashSet<String>>,
    ) -> Result<bool, V::Error> {
        if ctx.remaining < 2 || v.object_len() != 1 || !is_identifier_segment(k) {
            return Ok(false);
        }
        let mut folded = String::from(k);
        let mut segments = 1;
        let mut cur = v.clone();
        while segments < ctx.remaining {
            if !matches!(cur.kind()?, Kind::Object) || cur.object_len() != 1 {
                break;
            }
            // `cur` is at level `nest + segments - 1` and is walked here.
            enter(nest + segments - 1)?;
            let next = {
                let Some(entry) = cur.object_entries().next() else {
                    break;
                };
                let (nk, nv) = entry?;
                if !is_identifier_segment(nk) {
                    return Ok(false);
                }
                folded.push('.');
                folded.push_str(nk);
                nv
            };
            cur = next;
            segments += 1;
        }
        if segments < 2 || dotted.is_some_and(|d| d.contains(&folded)) {
            return Ok(false);
        }
        let path = if ctx.root_chain { join_path(ctx.prefix, &folded) } else { String::new() };
        if ctx.root_chain && self.root_dotted.as_ref().is_some_and(|r| r.contains(&path)) {
            return Ok(false);
        }
        let leaf_nest = nest + segments - 1;
        match cur.kind()? {
            Kind::Array => self.array(Some(&folded), &cur, depth, leaf_nest)?,
            Kind::Object => {
                let ctx = FoldCtx { remaining: ctx.remaining - segments, root_chain: ctx.root_chain, prefix: &path };
                self.object_entry(&folded, &cur, depth, leaf_nest, ctx)?;
            }
            kind => {
                self.line(depth);
                self.key(&folded);
                self.out.push_str(": ");
                self.primitive(&kind)?;
            }
        }
        Ok(true)
    }

    /// An array under `key` (root when `None`), header at `depth`.
    fn array<'k, V: EncodeValue<'k>>(&mut self, key: Option<&str>, arr: &V, depth: usize, nest: usize) -> Result<(), V::Error> {
        enter(nest)?;
        let n = arr.array_len();
        if n == 0 {
            self.line(depth);
            if let Some(k) = key {
                self.key(k);
                self.out.push_str(": []");
            } else {
                self.out.push_str("[]");
            }
            return Ok(());
        }
        if self.flat_table(key, arr, n, depth, false, nest)? {
            return Ok(());
        }
        let shape = item_shape(arr)?;
        if shape.all_primitive {
            self.line(depth);
            return self.inline_array(key, arr);
        }
        if shape.all_array {
            let mut inner_primitive = true;
            for item in arr.array_items() {
                if !all_primitive(&item?)? {
                    inner_primitive = false;
                    break;
                }
            }
            if inner_primitive {
                self.line(depth);
                self.header(key, n, None, false);
                for item in arr.array_items() {
                    self.item(depth + 1);
                    self.inline_array(None, &item?)?;
                }
                return Ok(());
            }
        }
        if shape.all_object {
            let rows = arr.array_items().collect::<Result<Vec<V>, _>>()?;
            if let Some(fields) = tabular_fields(&rows, nest + 1)? {
                self.line(depth);
                self.header(key, rows.len(), Some(&fields), false);
                return self.tabular_rows(&rows, &fields, depth + 1);
            }
            self.line(depth);
            self.header(key, n, None, false);
            for item in &rows {
                self.list_item(item, depth + 1, nest + 1)?;
            }
            return Ok(());
        }
        self.line(depth);
        self.header(key, n, None, false);
        for item in arr.array_items() {
            self.list_item(&item?, depth + 1, nest + 1)?;
        }
        Ok(())
    }

    /// One `- ` list item (the reference's `encodeListItemValueLines`).
    fn list_item<'k, V: EncodeValue<'k>>(&mut self, v: &V, depth: usize, nest: usize) -> Result<(), V::Error> {
        // Matched in place: moving a just-built `Kind` out of the `Result`
        // stalls on store forwarding.
        match v.kind() {
            Err(e) => Err(e),
            Ok(ref kind) => match kind {
                Kind::Array => {
                    enter(nest)?;
                    self.item(depth);
                    if all_primitive(v)? {
                        self.inline_array(None, v)
                    } else {
                        self.header(None, v.array_len(), None, false);
                        for item in v.array_items() {
                            self.list_item(&item?, depth + 1, nest + 1)?;
                        }
                        Ok(())
                    }
                }
                Kind::Object => self.object_item(v, depth, nest),
                kind => {
                    self.item(depth);
                    Ok(self.primitive(kind)?)
                }
            },
        }
    }

    /// An object as a list item: its first entry on the `- ` line, the rest
    /// below it (the reference's `encodeObjectAsListItemLines`). The first
    /// key is never folded; the others are, with all keys as siblings.
    fn object_item<'k, V: EncodeValue<'k>>(&mut self, obj: &V, depth: usize, nest: usize) -> Result<(), V::Error> {
        enter(nest)?;
        if obj.object_len() == 0 {
            self.line(depth);
            self.out.push('-');
            return Ok(());
        }
        let dotted = if self.folding { dotted_keys(obj)? } else { None };
        let ctx = self.fresh_ctx();
        self.entries(obj, |w, i, k, v| {
            if i == 0 {
                w.first_entry(k, &v, depth, nest + 1)
            } else {
                w.entry(k, &v, depth + 1, nest + 1, ctx, dotted.as_ref())
            }
        })
    }

    /// The first entry of a list-item object, on the `- ` line.
    fn first_entry<'k, V: EncodeValue<'k>>(&mut self, k: &str, v: &V, depth: usize, nest: usize) -> Result<(), V::Error> {
        // Matched in place: moving a just-built `Kind` out of the `Result`
        // stalls on store forwarding.
        match v.kind() {
            Err(e) => Err(e),
            Ok(ref kind) => match kind {
                Kind::Array => {
                    enter(nest)?;
                    let n = v.array_len();
                    if n == 0 {
                        self.item(depth);
                        self.key(k);
                        self.out.push_str(": []");
                        return Ok(());
                    }
                    if self.flat_table(Some(k), v, n, depth, true, nest)? {
                        return Ok(());
                    }
                    let shape = item_shape(v)?;
                    if shape.all_object {
                        let rows = v.array_items().collect::<Result<Vec<V>, _>>()?;
                        if let Some(fields) = tabular_fields(&rows, nest + 1)? {
                            self.item(depth);
                            self.header(Some(k), rows.len(), Some(&fields), false);
                            return self.tabular_rows(&rows, &fields, depth + 2);
                        }
                    }
                    self.item(depth);
                    if shape.all_primitive {
                        return self.inline_array(Some(k), v);
                    }
                    self.header(Some(k), n, None, false);
                    for item in v.array_items() {
                        self.list_item(&item?, depth + 2, nest + 1)?;
                    }
                    Ok(())
                }
                Kind::Object => {
                    if let Some(Keyed { rows, fields }) = keyed_tabular(v, nest)? {
                        self.item(depth);
                        self.header(Some(k), rows.len(), Some(&fields), true);
                        return self.keyed_rows(v, &fields, depth + 2);
                    }
                    self.item(depth);
                    self.key(k);
                    self.out.push(':');
                    if v.object_len() > 0 {
                        let ctx = self.fresh_ctx();
                        self.object(v, depth + 2, nest, ctx)?;
                    }
                    Ok(())
                }
                kind => {
                    self.item(depth);
                    self.key(k);
                    self.out.push_str(": ");
                    Ok(self.primitive(kind)?)
                }
            },
        }
    }
}
