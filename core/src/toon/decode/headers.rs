//! Array headers (`key[N<:><delim>]{fields}: inline`): the key, the bracket
//! segment (declared length, keyed marker, delimiter), the field list with
//! its nested groups and duplicate names, and what follows the colon.

use std::borrow::Cow;
use std::collections::HashSet;

use super::errors::{show_delim, syn, Syn};
use super::lines::{find_closing_quote, find_matching_brace, find_unquoted, from, sub, trim_spaces, trim_ws, Line};
use super::scalars::string_literal;
use super::{Decoder, MAX_FIELD_DEPTH};
use crate::error::Result;

/// One field of a tabular header, in a flat pre-order list: a field's
/// children follow it, up to `next`.
pub(super) struct Field<'a> {
    pub(super) name: Cow<'a, str>,
    /// Written in quotes (path expansion leaves it literal).
    pub(super) quoted: bool,
    /// Index after this field's subtree (`index + 1` for a leaf).
    pub(super) next: usize,
}

/// A parsed array header `key[N<:><delim>]{fields}: inline`.
pub(super) struct Header<'a> {
    pub(super) key: Option<Cow<'a, str>>,
    /// The key was written in quotes.
    pub(super) key_quoted: bool,
    /// The declared length as the reference holds it (a double).
    pub(super) length: f64,
    pub(super) delim: u8,
    /// A field list is present (held in the [`FieldList`] given to
    /// [`parse_header`]; never empty).
    pub(super) fields: bool,
    pub(super) keyed: bool,
    pub(super) inline: Option<&'a str>,
}

/// The field list of the last tabular header parsed. Arrays of objects that
/// each hold a table (orders with their items) repeat the same field list,
/// which is then parsed once: a header whose list is the same text, split
/// at the same delimiter, reuses it (its checks give the same outcome).
#[derive(Default)]
pub(super) struct FieldList<'a> {
    /// The text between the braces and the delimiter it was split at
    /// (`None` until a list parses without error).
    pub(super) src: Option<(&'a str, u8)>,
    pub(super) fields: Vec<Field<'a>>,
    /// The first duplicate name, as [`duplicate_field`] finds it, when not
    /// the empty name.
    pub(super) duplicate: Option<String>,
    /// Bumped at each new list (keys made for the fields follow it).
    pub(super) generation: u64,
}

/// `Ok(None)` when the line is not an array header; an error when it is a
/// malformed one (reference `parseArrayHeaderLine` + `resolveArrayHeader`).
/// A field list goes to `list`.
/// The error for text in a header where nothing may stand: between the
/// bracket segment and `next` (its name and what is expected).
fn header_gap(content: &str, from: usize, to: usize, next: &str) -> Option<Syn> {
    let gap = sub(content, from, to);
    if gap.is_empty() {
        return None;
    }
    let t = trim_ws(gap);
    let what = if t.is_empty() { "whitespace".to_string() } else { format!("content \"{t}\"") };
    Some(syn("TOON_INVALID_HEADER", format!("Unexpected {what} between bracket segment and {next}"), content, from))
}

fn parse_header<'a>(content: &'a str, strict: bool, list: &mut FieldList<'a>) -> Result<Option<Header<'a>>, Syn> {
    let b = content.as_bytes();
    let bracket_start = if b.first() == Some(&b'"') {
        let Some(close) = find_closing_quote(b, 0) else { return Ok(None) };
        if b.get(close + 1) != Some(&b'[') {
            return Ok(None);
        }
        close + 1
    } else {
        // Most lines are `key: value`: when the first of `:`, `[` and `"`
        // is a colon (or there is none), no unquoted `[` comes before the
        // first unquoted colon, so the line is no header.
        if matches!(b.iter().find(|&&c| matches!(c, b':' | b'[' | b'"')), Some(b':') | None) {
            return Ok(None);
        }
        match find_unquoted(b, b'[', 0) {
            Some(i) => i,
            None => return Ok(None),
        }
    };
    match find_unquoted(b, b':', 0) {
        Some(c) if c >= bracket_start => {}
        _ => return Ok(None),
    }
    let invalid = |code, msg: String, at| Err(syn(code, msg, content, at));
    let Some(bracket_end) = find_unquoted(b, b']', bracket_start) else {
        return invalid("TOON_INVALID_HEADER", "Unterminated bracket segment (expected ']')".into(), bracket_start);
    };
    let mut brace_end = bracket_end + 1;
    // Only a `{` before the first colon after `]` can open a field list
    // (with a later one the colon below is that first colon, before it),
    // so it is looked for only up to there: an inline array's values are
    // not scanned for it.
    let brace_start =
        find_unquoted(b, b':', bracket_end).and_then(|colon| find_unquoted(b.get(..colon).unwrap_or_default(), b'{', bracket_end));
    let mut matching_brace = None;
    if let Some(bs) = brace_start {
        if let Some(e) = header_gap(content, bracket_end + 1, bs, "field list (expected '{' right after ']')") {
            return Err(e);
        }
        matching_brace = find_matching_brace(b, bs);
        if let Some(end) = matching_brace {
            brace_end = end + 1;
        }
    }
    let Some(colon) = find_unquoted(b, b':', brace_end) else {
        return invalid("TOON_MISSING_COLON", "Missing colon after array header (expected ':')".into(), brace_end.min(b.len()));
    };
    if let Some(e) = header_gap(content, brace_end, colon, "colon (expected ':' right after the header)") {
        return Err(e);
    }
    let mut key = None;
    let key_quoted = b.first() == Some(&b'"');
    if bracket_start > 0 {
        let raw = sub(content, 0, bracket_start);
        if raw.ends_with([' ', '\t']) {
            return invalid(
                "TOON_INVALID_HEADER",
                "Unexpected whitespace between key and bracket segment (expected '[' right after the key)".into(),
                bracket_start - 1,
            );
        }
        key = Some(if raw.starts_with('"') { string_literal(raw)? } else { Cow::Borrowed(raw) });
    }
    let after_colon = trim_spaces(from(content, colon + 1));
    let seg = sub(content, bracket_start + 1, bracket_end);
    let (length, delim, keyed) = parse_bracket_segment(seg).map_err(|m| syn("TOON_INVALID_LENGTH", m, content, bracket_start + 1))?;
    let mut fields = false;
    if let Some(bs) = brace_start.filter(|&bs| bs < colon) {
        if let Some(be) = matching_brace.filter(|&be| be < colon) {
            let inner = sub(content, bs + 1, be);
            fields = true;
            if list.src != Some((inner, delim)) {
                for cand in [b',', b'\t', b'|'] {
                    if cand != delim && find_unquoted(inner.as_bytes(), cand, 0).is_some() {
                        return invalid(
                            "TOON_DELIMITER_MISMATCH",
                            format!(
                                "Header delimiter mismatch: bracket declares \"{}\" but field list contains unquoted \"{}\"",
                                show_delim(delim),
                                show_delim(cand)
                            ),
                            bs + 1,
                        );
                    }
                }
                list.src = None;
                list.fields.clear();
                parse_fields(inner, delim, &mut list.fields, 1)?;
                // The reference tests the first duplicate it finds for
                // truthiness, so when that one is the empty name
                // (`{"",""}`) it reports nothing.
                list.duplicate = duplicate_field(&list.fields, 0, list.fields.len()).filter(|d| !d.is_empty());
                list.src = Some((inner, delim));
                list.generation += 1;
            }
        }
    }
    let duplicate = if fields { list.duplicate.clone() } else { None };
    let dup_msg = |d: &str| format!("Duplicate field name \"{d}\" in field list (expected distinct names)");
    if keyed && !fields {
        return invalid(
            "TOON_INVALID_HEADER",
            "Keyed header requires a field list (expected {fields} after the bracket segment)".into(),
            bracket_start,
        );
    }
    if fields && !after_colon.is_empty() {
        return match duplicate {
            Some(d) => invalid("TOON_DUPLICATE_FIELD", dup_msg(&d), brace_start.unwrap_or(0)),
            None => invalid(
                "TOON_INVALID_HEADER",
                "Unexpected content after fields-bearing header colon (expected rows on the following lines)".into(),
                colon + 1,
            ),
        };
    }
    if strict {
        if let Some(d) = duplicate {
            return invalid("TOON_DUPLICATE_FIELD", dup_msg(&d), brace_start.unwrap_or(0));
        }
    }
    Ok(Some(Header { key, key_quoted, length, delim, fields, keyed, inline: (!after_colon.is_empty()).then_some(after_colon) }))
}

/// `N`, `N:` (keyed), with an optional tab or pipe delimiter marker last.
fn parse_bracket_segment(seg: &str) -> Result<(f64, u8, bool), String> {
    let mut c = seg;
    let mut delim = b',';
    if let Some(rest) = c.strip_suffix('\t') {
        delim = b'\t';
        c = rest;
    } else if let Some(rest) = c.strip_suffix('|') {
        delim = b'|';
        c = rest;
    }
    let keyed = match c.strip_suffix(':') {
        Some(rest) => {
            c = rest;
            true
        }
        None => false,
    };
    let b = c.as_bytes();
    let ok = match b.first() {
        Some(b'0') => b.len() == 1,
        Some(b'1'..=b'9') => b.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !ok {
        return Err(format!("Invalid array length: \"{seg}\" (expected non-negative integer with no leading zeros)"));
    }
    // Up to 15 digits the value is exact as a u64 and as a double.
    let length = if b.len() <= 15 {
        b.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')) as f64
    } else {
        c.parse::<f64>().unwrap_or(f64::INFINITY)
    };
    Ok((length, delim, keyed))
}

/// Parse a field list (reference `parseFieldEntries`) into `out`.
fn parse_fields<'a>(content: &'a str, delim: u8, out: &mut Vec<Field<'a>>, depth: usize) -> Result<(), Syn> {
    let b = content.as_bytes();
    // Split at delimiters outside quotes and outside nested groups.
    let mut start = 0;
    let mut i = 0;
    let mut in_quotes = false;
    let mut braces: isize = 0;
    loop {
        let at_end = i >= b.len();
        if !at_end {
            let c = b[i];
            if c == b'\\' && in_quotes && i + 1 < b.len() {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_quotes = !in_quotes;
                i += 1;
                continue;
            }
            if !in_quotes {
                if c == b'{' {
                    braces += 1;
                } else if c == b'}' {
                    braces -= 1;
                } else if c == delim && braces == 0 {
                    parse_field_entry(sub(content, start, i), delim, out, depth)?;
                    i += 1;
                    start = i;
                    continue;
                }
            }
            i += 1;
            continue;
        }
        return parse_field_entry(from(content, start), delim, out, depth);
    }
}

fn parse_field_entry<'a>(entry: &'a str, delim: u8, out: &mut Vec<Field<'a>>, depth: usize) -> Result<(), Syn> {
    let t = trim_spaces(entry);
    let tb = t.as_bytes();
    if t.is_empty() {
        return Err(syn("TOON_INVALID_FIELDS", "Empty field name in field list (expected a name between delimiters)", entry, 0));
    }
    let Some(gs) = find_unquoted(tb, b'{', 0) else {
        let name = string_literal(t)?;
        out.push(Field { name, quoted: t.starts_with('"'), next: out.len() + 1 });
        return Ok(());
    };
    let name_part = sub(t, 0, gs);
    if name_part.is_empty() {
        return Err(syn("TOON_INVALID_FIELDS", "Missing field name before nested field group (expected name{...})", t, 0));
    }
    if name_part.ends_with(' ') {
        return Err(syn(
            "TOON_INVALID_FIELDS",
            "Unexpected whitespace before nested field group (expected '{' right after the name)",
            t,
            gs - 1,
        ));
    }
    let Some(ge) = find_matching_brace(tb, gs) else {
        return Err(syn("TOON_INVALID_FIELDS", "Unmatched brace in field list (expected '}')", t, gs));
    };
    if ge != tb.len() - 1 {
        return Err(syn(
            "TOON_INVALID_FIELDS",
            "Unexpected content after nested field group (expected a delimiter or the end of the list)",
            t,
            ge + 1,
        ));
    }
    if depth >= MAX_FIELD_DEPTH {
        return Err(syn("TOON_TOO_DEEP", format!("field groups nested deeper than {MAX_FIELD_DEPTH} levels"), t, gs));
    }
    let index = out.len();
    out.push(Field { name: Cow::Borrowed(""), quoted: trim_spaces(name_part).starts_with('"'), next: 0 });
    // As in the reference, the group is parsed before the name.
    parse_fields(sub(t, gs + 1, ge), delim, out, depth + 1)?;
    let name = string_literal(name_part)?;
    let next = out.len();
    if let Some(f) = out.get_mut(index) {
        f.name = name;
        f.next = next;
    }
    Ok(())
}

/// The first repeated name among the siblings of `fields[start..end]`,
/// checked level by level in the reference's order.
fn duplicate_field(fields: &[Field<'_>], start: usize, end: usize) -> Option<String> {
    // Searched linearly while there are few (most lists), hashed beyond.
    let mut few: Vec<&str> = Vec::new();
    let mut many: Option<HashSet<&str>> = None;
    let mut i = start;
    while i < end {
        let f = fields.get(i)?;
        let fresh = match &mut many {
            Some(set) => set.insert(&f.name),
            None if few.contains(&&*f.name) => false,
            None => {
                few.push(&f.name);
                if few.len() > 16 {
                    many = Some(few.iter().copied().collect());
                }
                true
            }
        };
        if !fresh {
            return Some(f.name.to_string());
        }
        if f.next > i + 1 {
            if let Some(d) = duplicate_field(fields, i + 1, f.next) {
                return Some(d);
            }
        }
        i = f.next.max(i + 1);
    }
    None
}

pub(super) fn count_leaves(fields: &[Field<'_>]) -> usize {
    fields.iter().enumerate().filter(|(i, f)| f.next == i + 1).count()
}

impl<'a, V, K> Decoder<'a, V, K> {
    pub(super) fn header(&mut self, line: &Line<'a>) -> Result<Option<Header<'a>>> {
        let r = parse_header(line.content, self.strict, &mut self.fields);
        self.at(line, r)
    }
}
