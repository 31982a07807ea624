//! The rules of TOON text that the encoder and the decoder share, in one
//! place: which keys may be written bare, which key segments are
//! identifiers (the segments key folding joins and path expansion splits:
//! the same rule on both sides, so that a folded key expands back), and
//! which strings must be quoted to read back as themselves (a quoted
//! string is what the decoder takes literally; everything else it reads as
//! a number, `true`, `false`, `null` or structure).

// ---------------------------------------------------------------- quoting

/// Bytes that force a string value to be quoted wherever they appear,
/// whatever the delimiter: `:`, `"`, `\`, brackets, braces and C0 controls
/// (the tab delimiter is a C0 control too).
static QUOTE_ALWAYS: [bool; 256] = quote_table(0);

/// [`QUOTE_ALWAYS`] plus the delimiter, one table per delimiter: one
/// lookup per byte.
static QUOTE_COMMA: [bool; 256] = quote_table(b',');

static QUOTE_PIPE: [bool; 256] = quote_table(b'|');

const fn quote_table(delim: u8) -> [bool; 256] {
    let mut t = [false; 256];
    t[delim as usize] = true;
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b':' as usize] = true;
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t
}

/// The table of bytes that force quotes with `delim` active.
pub(super) fn quote_table_for(delim: u8) -> &'static [bool; 256] {
    match delim {
        b',' => &QUOTE_COMMA,
        b'|' => &QUOTE_PIPE,
        // The tab is a C0 control.
        _ => &QUOTE_ALWAYS,
    }
}

/// Whether `s` matches `^[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?$`i (the
/// reference's "numeric-like" strings, which must be quoted). Such a
/// string ends in a digit: most strings are told apart by that alone,
/// before a call.
#[inline(always)]
pub(super) fn is_numeric_like(s: &[u8]) -> bool {
    matches!(s.last(), Some(b'0'..=b'9')) && matches_number(s)
}

/// [`is_numeric_like`] in full.
fn matches_number(s: &[u8]) -> bool {
    fn digits(s: &[u8], mut i: usize) -> usize {
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        i
    }
    let mut i = usize::from(matches!(s.first(), Some(b'+' | b'-')));
    let j = digits(s, i);
    if j == i {
        return false;
    }
    i = j;
    if s.get(i) == Some(&b'.') {
        let j = digits(s, i + 1);
        if j == i + 1 {
            return false;
        }
        i = j;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = digits(s, i);
        if j == i {
            return false;
        }
        i = j;
    }
    i == s.len()
}

/// The reference's `isSafeUnquoted`: whether a string value may be written
/// bare with the delimiter whose table is `quote` active. (On x86_64,
/// strings of 16 bytes or more take `push_long_string` in `encode/scalars.rs` instead.)
pub(super) fn is_safe_unquoted(s: &str, quote: &[bool; 256]) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    if matches!(first, b' ' | b'\t' | b'-' | b'#') || matches!(last, b' ' | b'\t') {
        return false;
    }
    if matches!(s, "true" | "false" | "null") || is_numeric_like(b) {
        return false;
    }
    !any_in_table(b, quote)
}

/// Whether some byte of `b` is marked in `table`: eight lookups per branch,
/// since most strings have none.
#[inline]
pub(super) fn any_in_table(b: &[u8], table: &[bool; 256]) -> bool {
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let t = |i: usize| table[c[i] as usize];
        if t(0) | t(1) | t(2) | t(3) | t(4) | t(5) | t(6) | t(7) {
            return true;
        }
    }
    chunks.remainder().iter().any(|&c| table[c as usize])
}

// ---------------------------------------------------------------- keys

/// The reference's `isValidUnquotedKey`: `^[A-Za-z_][A-Za-z0-9_.]*$`.
pub(super) fn is_bare_key(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
        _ => return false,
    }
    !any_in_table(&b[1..], &NOT_KEY_CHAR)
}

/// Bytes that may not follow the first character of a bare key.
static NOT_KEY_CHAR: [bool; 256] = {
    let mut t = [true; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
            t[c] = false;
        }
        c += 1;
    }
    t
};

/// A key segment that may be folded: `^[A-Za-z_][A-Za-z0-9_]*$`.
pub(super) fn is_identifier_segment(s: &str) -> bool {
    is_bare_key(s) && !s.contains('.')
}

/// `^[A-Za-z_][A-Za-z0-9_]*$`
pub(super) fn is_identifier(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key folding (`is_identifier_segment`) and path expansion
    /// (`is_identifier`) write the same rule: every string of up to three
    /// characters from an alphabet around its edges gets the same answer.
    #[test]
    fn identifier_rules_agree() {
        let alphabet = ["a", "Z", "_", "0", "9", ".", "-", " ", "é", "$"];
        let mut strings = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = strings.iter().flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}"))).collect();
            strings.extend(longer);
        }
        for s in &strings {
            assert_eq!(is_identifier_segment(s), is_identifier(s), "{s:?}");
        }
    }
}
