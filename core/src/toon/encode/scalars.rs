//! Strings and numbers as TOON writes them: a string bare or quoted and
//! escaped (with one-pass SSE2/AVX2 paths for long strings on x86_64),
//! numbers in ECMAScript form, any primitive, and the short copies the
//! writer makes of keys and cells.

use super::{value_changed, Kind};
use crate::error::Result;
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
use crate::toon::syntax::is_numeric_like;
use crate::toon::syntax::is_safe_unquoted;

/// `out.push_str(s)` for the short pieces the encoder mostly writes (keys,
/// cells, numbers): copied with two overlapping loads and stores instead of
/// a call to `memcpy`, which dominated for pieces of a few bytes.
#[inline(always)]
pub(super) fn push_piece(out: &mut String, s: &str) {
    let n = s.len();
    if n > 16 {
        out.push_str(s);
        return;
    }
    out.reserve(16);
    // SAFETY: `n` bytes of valid UTF-8 are appended within the reserved
    // capacity; each load and store stays inside `s` and the spare capacity.
    unsafe {
        let v = out.as_mut_vec();
        let len = v.len();
        let src = s.as_ptr();
        let dst = v.as_mut_ptr().add(len);
        if n >= 8 {
            let a = std::ptr::read_unaligned(src as *const u64);
            let b = std::ptr::read_unaligned(src.add(n - 8) as *const u64);
            std::ptr::write_unaligned(dst as *mut u64, a);
            std::ptr::write_unaligned(dst.add(n - 8) as *mut u64, b);
        } else if n >= 4 {
            let a = std::ptr::read_unaligned(src as *const u32);
            let b = std::ptr::read_unaligned(src.add(n - 4) as *const u32);
            std::ptr::write_unaligned(dst as *mut u32, a);
            std::ptr::write_unaligned(dst.add(n - 4) as *mut u32, b);
        } else if n > 0 {
            // First, middle and last byte (some of them the same).
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
        v.set_len(len + n);
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `s` quoted, escaped as the reference's `escapeString` does.
pub(super) fn push_quoted(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    push_escaped(out, s, 0);
}

/// The rest of a quoted string: `s` from `start` (a char boundary)
/// escaped, and the closing quote.
fn push_escaped(out: &mut String, s: &str, mut start: usize) {
    let bytes = s.as_bytes();
    loop {
        // The bytes to escape are JSON's (`"`, `\`, C0 controls): skip the
        // runs between them eight bytes at a time.
        let i = crate::json::find_special(bytes, start);
        // Every byte escaped is ASCII, so `start..i` lies on char boundaries.
        push_piece(out, &s[start..i]);
        let Some(&c) = bytes.get(i) else { break };
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                out.push_str("\\u00");
                out.push(HEX[(c >> 4) as usize] as char);
                out.push(HEX[(c & 15) as usize] as char);
            }
        }
        start = i + 1;
    }
    out.push('"');
}

/// ECMAScript Number-to-string, after the reference's normalisation
/// (`-0` -> `0`, NaN and infinities -> `null`). The numbers most data
/// holds are written inline (by `push_small_number`), the rest in a call.
#[inline(always)]
pub(super) fn push_f64(out: &mut String, f: f64) {
    // SAFETY: `push_small_number` appends ASCII only.
    if !crate::json::push_small_number(unsafe { out.as_mut_vec() }, f) {
        push_other_f64(out, f);
    }
}

/// [`push_f64`] of a number `push_small_number` declined.
#[inline(never)]
fn push_other_f64(out: &mut String, f: f64) {
    // SAFETY (all): `push_int` and `push` append ASCII only.
    // Integers below 2^53 in magnitude are their digits: a double that far
    // from zero names one integer, so no shorter form reads back as it.
    // (Beyond, ECMAScript writes the shortest digits padded with zeros.)
    // NaN and infinities fail the comparison.
    let i = f as i64;
    if i as f64 == f && i.unsigned_abs() < 1 << 53 {
        crate::json::push_int(unsafe { out.as_mut_vec() }, i < 0, i.unsigned_abs());
        return;
    }
    if !f.is_finite() {
        out.push_str("null");
    } else if f == 0.0 {
        out.push('0');
    } else if let Some(d) = crate::json::ShortDecimal::of(f) {
        d.push(unsafe { out.as_mut_vec() });
    } else {
        out.push_str(ryu_js::Buffer::new().format_finite(f));
    }
}

/// A string value or cell: unquoted where that reads back as the same
/// string (`quote`: the bytes that force quotes, `delim` among them).
#[inline]
pub(super) fn push_string(out: &mut String, s: &str, quote: &[bool; 256], delim: u8) {
    #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
    if s.len() >= 16 {
        push_long_string(out, s, delim);
        return;
    }
    // Elsewhere `quote` covers the delimiter alone.
    #[cfg(any(not(target_arch = "x86_64"), polywire_portable, feature = "portable"))]
    let _ = delim;
    if is_safe_unquoted(s, quote) {
        push_piece(out, s);
    } else {
        push_quoted(out, s);
    }
}

/// [`push_string`] for a string of at least 16 bytes, in one pass instead
/// of three (the scan for bytes that force quotes, the scan for bytes to
/// escape, the copy): a vector of bytes a step (16 with SSE2, 32 with AVX2
/// for strings of 32 bytes or more where the processor has it) is copied
/// just after an opening quote while both kinds of byte are looked for.
/// Long strings are mostly free text, which usually needs quotes (a comma,
/// a colon) and seldom an escape, so the copy usually stands and is closed
/// with a quote. Without a byte that forces quotes it moves back over the
/// opening quote; at the first byte to escape, [`push_escaped`] goes on
/// from there. (AVX2: 22K fewer instructions per encode of the repos
/// benchmark, about 2% faster.)
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
fn push_long_string(out: &mut String, s: &str, delim: u8) {
    if s.len() <= 32 {
        push_two_vector_string(out, s, delim)
    } else if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present.
        unsafe { push_long_string_avx2(out, s, delim) }
    } else {
        push_long_string_sse2(out, s, delim)
    }
}

/// [`push_long_string`] for 16 to 32 bytes (dates, names, short URLs):
/// two overlapping vectors hold the string, so there is no loop. Both are
/// looked at before anything is written: a byte to escape sends the string
/// to [`push_quoted`]; otherwise it is written after an opening quote or
/// not, without a branch. (A third of the instructions of the loop.)
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
#[inline(always)]
fn push_two_vector_string(out: &mut String, s: &str, delim: u8) {
    use std::arch::x86_64::*;
    let b = s.as_bytes();
    let n = b.len();
    debug_assert!((16..=32).contains(&n));
    // SAFETY: SSE2 is baseline on x86_64. The loads read b[..16] and
    // b[n - 16..]. The stores write 16 bytes at `q` and at `q + n - 16`, and
    // a quote at 0 and at `q + n`, all within the `n + 2` bytes reserved; the
    // length covers the quotes only when `q` is 1 (the one at 0 is
    // overwritten otherwise), and every byte of `s` copied.
    unsafe {
        let head = _mm_loadu_si128(b.as_ptr() as *const __m128i);
        let tail = _mm_loadu_si128(b.as_ptr().add(n - 16) as *const __m128i);
        // Bytes to escape, and other bytes that force quotes.
        let marks = |x: __m128i| {
            let eq = |c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
            let control = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
            let escape = _mm_or_si128(control, _mm_or_si128(eq(b'"'), eq(b'\\')));
            // `[`/`{` and `]`/`}` differ only in bit 5.
            let folded = _mm_or_si128(x, _mm_set1_epi8(0x20));
            let brackets =
                _mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)), _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)));
            (escape, _mm_or_si128(brackets, _mm_or_si128(eq(b':'), eq(delim))))
        };
        let ((escape_head, quote_head), (escape_tail, quote_tail)) = (marks(head), marks(tail));
        if _mm_movemask_epi8(_mm_or_si128(escape_head, escape_tail)) != 0 {
            push_quoted(out, s);
            return;
        }
        let quoted = _mm_movemask_epi8(_mm_or_si128(quote_head, quote_tail)) != 0 || long_string_forced(b);
        let q = usize::from(quoted);
        out.reserve(n + 2);
        let v = out.as_mut_vec();
        let start = v.len();
        let p = v.as_mut_ptr().add(start);
        *p = b'"';
        _mm_storeu_si128(p.add(q) as *mut __m128i, head);
        _mm_storeu_si128(p.add(q + n - 16) as *mut __m128i, tail);
        *p.add(q + n) = b'"';
        v.set_len(start + n + 2 * q);
    }
}

/// Whether a string of at least 16 bytes needs quotes for its ends or for
/// looking like a number (`is_safe_unquoted`'s other tests: "true",
/// "false" and "null" are shorter; a number starts with a digit or a sign,
/// and a leading `-` forces quotes anyway).
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
#[inline(always)]
fn long_string_forced(b: &[u8]) -> bool {
    matches!(b[0], b' ' | b'\t' | b'-' | b'#')
        || matches!(b[b.len() - 1], b' ' | b'\t')
        || (matches!(b[0], b'0'..=b'9' | b'+') && is_numeric_like(b))
}

/// The body of [`push_long_string`] for one vector width: `$vector` the
/// type, `$width` its bytes, then its load, store, byte compare, byte
/// broadcast, or, unsigned byte maximum and byte mask intrinsics.
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
macro_rules! push_long_string_body {
    ($out:ident, $s:ident, $delim:ident, $vector:ty, $width:expr, $load:ident, $store:ident, $cmpeq:ident, $set1:ident, $or:ident, $max:ident, $movemask:ident) => {{
        let b = $s.as_bytes();
        let n = b.len();
        debug_assert!(n >= $width);
        $out.reserve(n + 2);
        // SAFETY: the caller checked the vector instructions are present.
        // Loads read `$width` bytes inside `b` (the last one overlapping
        // the one before); stores write `$width` bytes within `start + 1 ..
        // start + 1 + n`, and the closing quote goes at `start + 1 + n`:
        // all inside the `n + 2` bytes reserved. The length covers only
        // bytes written: copies of `b` up to a char boundary (a byte to
        // escape is ASCII) and the quotes.
        unsafe {
            let v = $out.as_mut_vec();
            let start = v.len();
            let quote_at = v.as_mut_ptr().add(start);
            let dst = quote_at.add(1);
            *quote_at = b'"';
            // Once a byte that forces quotes is met, only bytes to escape
            // are looked for (free text usually has a comma early).
            let mut quoted = long_string_forced(b);
            let mut i = 0;
            while i < n {
                // The last step overlaps bytes already checked and copied.
                let at = if i + $width <= n { i } else { n - $width };
                let x = $load(b.as_ptr().add(at) as *const $vector);
                let eq = |c: u8| $cmpeq(x, $set1(c as i8));
                let control = $cmpeq($max(x, $set1(0x1F)), $set1(0x1F));
                $store(dst.add(at) as *mut $vector, x);
                let escape = $movemask($or(control, $or(eq(b'"'), eq(b'\\')))) as u32;
                if escape != 0 {
                    // Every byte to escape forces quotes too. The bytes
                    // before it are copied (an overlapping step finds none
                    // before `i`), and, being ASCII, it is at a char
                    // boundary.
                    let at = at + escape.trailing_zeros() as usize;
                    v.set_len(start + 1 + at);
                    push_escaped($out, $s, at);
                    return;
                }
                if !quoted {
                    // `[`/`{` and `]`/`}` differ only in bit 5.
                    let folded = $or(x, $set1(0x20));
                    let brackets = $or($cmpeq(folded, $set1(b'{' as i8)), $cmpeq(folded, $set1(b'}' as i8)));
                    quoted = $movemask($or(brackets, $or(eq(b':'), eq($delim)))) != 0;
                }
                i = at + $width;
            }
            if quoted {
                *dst.add(n) = b'"';
                v.set_len(start + n + 2);
            } else {
                std::ptr::copy(dst, quote_at, n);
                v.set_len(start + n);
            }
        }
    }};
}

/// [`push_long_string`] sixteen bytes a step (SSE2 is baseline on x86_64).
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
pub(super) fn push_long_string_sse2(out: &mut String, s: &str, delim: u8) {
    use std::arch::x86_64::*;
    push_long_string_body!(
        out,
        s,
        delim,
        __m128i,
        16,
        _mm_loadu_si128,
        _mm_storeu_si128,
        _mm_cmpeq_epi8,
        _mm_set1_epi8,
        _mm_or_si128,
        _mm_max_epu8,
        _mm_movemask_epi8
    )
}

/// [`push_long_string`] 32 bytes a step, for strings of at least 32 bytes.
///
/// SAFETY: the processor must have AVX2.
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn push_long_string_avx2(out: &mut String, s: &str, delim: u8) {
    use std::arch::x86_64::*;
    push_long_string_body!(
        out,
        s,
        delim,
        __m256i,
        32,
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_cmpeq_epi8,
        _mm256_set1_epi8,
        _mm256_or_si256,
        _mm256_max_epu8,
        _mm256_movemask_epi8
    )
}

/// A primitive value or cell; a container here means the value changed
/// since it was classified.
#[inline(always)]
pub(super) fn push_primitive(out: &mut String, kind: &Kind<'_>, quote: &[bool; 256], delim: u8) -> Result<()> {
    match kind {
        Kind::Null => out.push_str("null"),
        Kind::Bool(true) => out.push_str("true"),
        Kind::Bool(false) => out.push_str("false"),
        // SAFETY (both): `push_int` appends ASCII only.
        Kind::Int(i) => crate::json::push_int(unsafe { out.as_mut_vec() }, *i < 0, i.unsigned_abs()),
        Kind::UInt(u) => crate::json::push_int(unsafe { out.as_mut_vec() }, false, *u),
        Kind::Float(f) => push_f64(out, *f),
        Kind::BigInt(d) | Kind::Raw(d) => out.push_str(d),
        Kind::Str(s) => push_string(out, s, quote, delim),
        Kind::Array | Kind::Object => return Err(value_changed()),
    }
    Ok(())
}
