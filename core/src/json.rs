//! The JSON layer shared by the formats that carry JSON (Kado frames, AXON).
//!
//! Writing follows `JSON.stringify` byte for byte, so that a value encodes to
//! the same bytes from Rust, Python and Node: no whitespace, non-ASCII written
//! raw, only `"`, `\` and C0 controls escaped (with the short forms `\b \f \n
//! \r \t`, otherwise `\u00xx` in lowercase hex), numbers in ECMAScript
//! Number-to-string form (`1.0` -> `1`, `1e21` -> `1e+21`, `1.5e-7`),
//! non-finite numbers as `null`, and object keys that are array indices
//! (canonical decimal integers below 2^32 - 1) first, in ascending order, as a
//! JavaScript object orders them.
//!
//! Reading is a recursive-descent parser generic over a [`Builder`], so a
//! binding builds its own objects (Python objects, ...) directly with no
//! intermediate tree. It accepts exactly RFC 8259 JSON plus, when
//! [`ParseOptions::allow_nan`] is set, the `NaN`, `Infinity` and `-Infinity`
//! tokens that Python's `json.dumps` writes by default. Nesting is bounded by
//! [`ParseOptions::max_depth`]; every error carries the byte offset.

use crate::error::{Error, Format, Result};
use std::vec::Drain;

/// Default nesting limit for parsing and writing.
pub const MAX_DEPTH: usize = 1024;

// ---------------------------------------------------------------- writing

const ESC_NONE: u8 = 0;
const ESC_U: u8 = b'u';

/// For each byte: 0 when it is written as is, otherwise the escape letter
/// (`u` meaning `\u00xx`).
static ESCAPE: [u8; 256] = {
    let mut t = [ESC_NONE; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = ESC_U;
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Index of the first byte at or after `from` that is `"`, `\\` or below
/// 0x20 (the bytes a JSON string must escape), or `bytes.len()`. Sixteen
/// bytes at a time (SSE2) on x86_64, then eight (SWAR): text is mostly plain,
/// so this is the hot loop of both writing and parsing strings.
#[inline]
pub fn find_special(bytes: &[u8], from: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    // Sixteen bytes a step where SSE2 is part of the target (every x86_64).
    #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
    while i + 16 <= bytes.len() {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is baseline on x86_64; the load reads bytes[i..i + 16].
        let m = unsafe {
            let x = _mm_loadu_si128(bytes.as_ptr().add(i) as *const __m128i);
            let control = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
            let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
            let slash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(control, quote), slash)) as u32
        };
        if m != 0 {
            return i + m.trailing_zeros() as usize;
        }
        i += 16;
    }
    while i + 8 <= bytes.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[i..i + 8]);
        let x = u64::from_le_bytes(w);
        let quote = x ^ (LO * b'"' as u64);
        let slash = x ^ (LO * b'\\' as u64);
        let m = (x.wrapping_sub(LO * 0x20) & !x & HI) | (quote.wrapping_sub(LO) & !quote & HI) | (slash.wrapping_sub(LO) & !slash & HI);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() && ESCAPE[bytes[i] as usize] == ESC_NONE {
        i += 1;
    }
    i
}

/// Append `s` as a JSON string literal, escaped as `JSON.stringify` does.
#[inline]
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let first = find_special(bytes, 0);
    out.reserve(bytes.len() + 2);
    if first == bytes.len() {
        // Nothing to escape (most strings): one copy between the quotes.
        // SAFETY: `reserve` made room for the `bytes.len() + 2` bytes written.
        unsafe {
            let len = out.len();
            let p = out.as_mut_ptr().add(len);
            *p = b'"';
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(1), bytes.len());
            *p.add(bytes.len() + 1) = b'"';
            out.set_len(len + bytes.len() + 2);
        }
        return;
    }
    out.push(b'"');
    let mut start = 0;
    let mut i = first;
    loop {
        out.extend_from_slice(&bytes[start..i]);
        if i == bytes.len() {
            break;
        }
        let b = bytes[i];
        let esc = ESCAPE[b as usize];
        if esc == ESC_U {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        } else {
            out.extend_from_slice(&[b'\\', esc]);
        }
        start = i + 1;
        i = find_special(bytes, start);
    }
    out.push(b'"');
}

/// Append a UTF-16 code unit that is a lone surrogate as `\udxxx`, as
/// `JSON.stringify` writes it (used by bindings whose strings may hold one).
pub fn write_lone_surrogate(out: &mut Vec<u8>, unit: u16) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[((unit >> shift) & 15) as usize]);
    }
}

/// Append a number in ECMAScript Number-to-string form; NaN and infinities
/// are written `null` and `-0` is written `0`, as `JSON.stringify` does.
#[inline]
pub fn write_f64(out: &mut Vec<u8>, f: f64) {
    if !f.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    if push_small_number(out, f) {
        return;
    }
    if f == 0.0 {
        out.push(b'0');
        return;
    }
    if let Some(d) = ShortDecimal::of(f) {
        d.push(out);
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(f).as_bytes());
}

/// Appends `f` in ECMAScript form when it is one of the numbers most data
/// holds: an integer of magnitude below 10^8 (`-0` as `0`), or a decimal
/// with one to four fraction digits and an integer part below 10^8 (as
/// [`ShortDecimal`], which says why its digits are its ECMAScript form).
/// False, with nothing written, for any other number.
///
/// Why not [`push_int`] and [`ShortDecimal`]: their loops and branches on
/// the digit count and the fraction's length mispredict on columns whose
/// lengths vary. Here the digits go in fixed four-digit groups, each one
/// load from a table, the lengths (counted from the digits' bytes) only
/// choosing a shift and how far the length moves: a quarter less time than
/// those on the benchmark's analytics numbers, and the table a fifth less
/// again. Inlined where TOON cells and values are written (the encoder's
/// other cases stay out of line): analytics encode in Node 7% faster than
/// with a call per number.
#[inline(always)]
pub(crate) fn push_small_number(out: &mut Vec<u8>, f: f64) -> bool {
    let i = f as i64;
    if i as f64 == f && i.unsigned_abs() < 100_000_000 {
        out.reserve(9);
        // SAFETY: 9 bytes are reserved: the sign and at most 8 from
        // `put_small`; the length covers only the digits written.
        unsafe {
            let start = out.as_mut_ptr().add(out.len());
            *start = b'-';
            let negative = usize::from(i < 0);
            let len = put_small(start.add(negative), i.unsigned_abs());
            out.set_len(out.len() + negative + len);
        }
        return true;
    }
    let Some(digits) = ten_thousandths(f.abs(), 100_000_000.0) else {
        return false;
    };
    let (int, frac) = (digits / 10_000, (digits % 10_000) as usize);
    // Not 0: an integer was written above.
    debug_assert!(frac != 0);
    let frac = four_digits(frac);
    // The fraction's trailing zeros, dropped by writing less of it: its
    // last bytes that are '0' (the highest, and not all four).
    let zeros = ((frac ^ ZEROS).leading_zeros() / 8) as usize;
    out.reserve(16);
    // SAFETY: 16 bytes are reserved; at most 1 + 8 + 1 + 4 are written, and
    // the length covers only the text.
    unsafe {
        let start = out.as_mut_ptr().add(out.len());
        *start = b'-';
        let p = start.add(usize::from(f < 0.0));
        let int_len = put_small(p, int);
        let dot = p.add(int_len);
        *dot = b'.';
        std::ptr::write_unaligned(dot.add(1) as *mut u32, frac);
        let end = dot.add(5 - zeros);
        out.set_len(out.len() + end.offset_from(start) as usize);
    }
    true
}

/// `a * 10^4` when `a` (positive, below `limit`, at most 2^36) is a decimal
/// with at most four fraction digits ([`ShortDecimal`] says why); NaN and
/// other numbers give `None`.
#[inline(always)]
fn ten_thousandths(a: f64, limit: f64) -> Option<u64> {
    debug_assert!(limit <= 68_719_476_736.0);
    if !(a > 0.0 && a < limit) {
        return None;
    }
    // The one decimal with at most four fraction digits that can equal `a`:
    // decimals that far apart are more than an ulp apart below 2^36, so at
    // most one of them converts to `a`. Rounded by adding one half and
    // truncating (exact below 2^52; `f64::round` is a libm call here), as
    // an `i64`, which converts back to a double in one instruction (a `u64`
    // does not).
    let digits = (a * 10_000.0 + 0.5) as i64;
    // Both operands are exact, so the division is the correctly rounded
    // value of the decimal: equal to `a` exactly when it reads back.
    (digits as f64 / 10_000.0 == a).then_some(digits as u64)
}

/// The four digits of `n` < 10^4, zero-padded, as the bytes of a
/// little-endian `u32` (the first digit lowest): one load from
/// [`FOUR_DIGITS`]. (Built from digit pairs, with the divisions and shifts
/// that takes, a number took a fifth longer on the benchmark's analytics
/// numbers.)
#[inline(always)]
fn four_digits(n: usize) -> u32 {
    FOUR_DIGITS[n]
}

/// `four_digits` of every `n` < 10^4 (40 KB).
static FOUR_DIGITS: [u32; 10_000] = {
    let mut t = [0u32; 10_000];
    let mut n = 0;
    while n < 10_000 {
        t[n] = ascii_digit(n / 1_000) | ascii_digit(n / 100) << 8 | ascii_digit(n / 10) << 16 | ascii_digit(n) << 24;
        n += 1;
    }
    t
};

/// The last decimal digit of `n`, in ASCII.
const fn ascii_digit(n: usize) -> u32 {
    b'0' as u32 + (n % 10) as u32
}

/// `four_digits(0)`: XORed with four digits, a zero byte for each '0'.
const ZEROS: u32 = 0x3030_3030;

/// Writes the digits of `n` < 10^8 at `p`; their count. Writes 8 bytes
/// (unaligned) whatever the count: `p` must have that much room.
#[inline(always)]
unsafe fn put_small(p: *mut u8, n: u64) -> usize {
    debug_assert!(n < 100_000_000);
    // Leading zeros are the lowest bytes that are '0', at most three of
    // them (0 is written "0"); of a high part (at least 1), never four.
    let leading = |digits: u32| ((digits ^ ZEROS).trailing_zeros() / 8).min(3) as usize;
    if n < 10_000 {
        let digits = four_digits(n as usize);
        let zeros = leading(digits);
        std::ptr::write_unaligned(p as *mut u64, u64::from(digits >> (8 * zeros)));
        4 - zeros
    } else {
        let (hi, lo) = (four_digits((n / 10_000) as usize), four_digits((n % 10_000) as usize));
        let zeros = leading(hi);
        let len = 4 - zeros;
        let v = u64::from(hi >> (8 * zeros)) | u64::from(lo) << (8 * len);
        std::ptr::write_unaligned(p as *mut u64, v);
        len + 4
    }
}

/// A double that is a decimal with at most four fractional digits (money,
/// ratios, percentages): `digits / 10^scale`. Its ECMAScript form comes
/// from the integer `digits` with no shortest-digits search.
///
/// Why it is the same text as Number-to-string: `digits` and `10^scale`
/// are exact doubles, so the division is the correctly rounded value of
/// the decimal, and equality means that decimal reads back as `f`. Below
/// 2^36 a double's spacing is at most 2^-16 < 10^-4, so no other decimal
/// with `scale` or fewer fractional digits reads back as `f`; `scale` is
/// the least that works (tried in order, and the digits never end in 0),
/// so no form has fewer significant digits. At least 10^-4 and below 2^36,
/// the number is written without exponent.
#[derive(Clone, Copy)]
pub(crate) struct ShortDecimal {
    negative: bool,
    digits: u64,
    scale: usize,
}

impl ShortDecimal {
    #[inline]
    pub(crate) fn of(f: f64) -> Option<ShortDecimal> {
        // Below 2^36.
        let digits = ten_thousandths(f.abs(), 68_719_476_736.0)?;
        // Fewer fraction digits name the same decimal, hence the same
        // double: the shortest form drops the trailing zeros.
        let (digits, scale) = if digits % 100 == 0 {
            if digits % 10_000 == 0 {
                (digits / 10_000, 0)
            } else if digits % 1_000 == 0 {
                (digits / 1_000, 1)
            } else {
                (digits / 100, 2)
            }
        } else if digits % 10 == 0 {
            (digits / 10, 3)
        } else {
            (digits, 4)
        };
        Some(ShortDecimal { negative: f < 0.0, digits, scale })
    }

    /// Appends the text (straight into `out`, see [`push_int`]).
    #[inline]
    pub(crate) fn push(self, out: &mut Vec<u8>) {
        // Constant divisors (multiplications), not a division by a looked-up power.
        let d = self.digits;
        let (int, frac, scale) = match self.scale {
            0 => (d, 0, 0),
            1 => (d / 10, d % 10, 1),
            2 => (d / 100, d % 100, 2),
            3 => (d / 1_000, d % 1_000, 3),
            _ => (d / 10_000, d % 10_000, 4),
        };
        let int_len = decimal_len(int);
        let frac_len = if scale > 0 { scale + 1 } else { 0 };
        let len = usize::from(self.negative) + int_len + frac_len;
        out.reserve(len);
        // SAFETY: `len` bytes are reserved; all are written (ASCII) before
        // the length covers them.
        unsafe {
            let start = out.as_mut_ptr().add(out.len());
            let mut p = start;
            if self.negative {
                *p = b'-';
                p = p.add(1);
            }
            put_digits(p.add(int_len), int, int_len);
            if scale > 0 {
                p = p.add(int_len);
                *p = b'.';
                put_digits(p.add(1 + scale), frac, scale);
            }
            out.set_len(out.len() + len);
        }
    }
}

/// Decimal digits of `n`, at least 1.
#[inline]
fn decimal_len(n: u64) -> usize {
    const POW10: [u64; 20] = [
        1,
        10,
        100,
        1_000,
        10_000,
        100_000,
        1_000_000,
        10_000_000,
        100_000_000,
        1_000_000_000,
        10_000_000_000,
        100_000_000_000,
        1_000_000_000_000,
        10_000_000_000_000,
        100_000_000_000_000,
        1_000_000_000_000_000,
        10_000_000_000_000_000,
        100_000_000_000_000_000,
        1_000_000_000_000_000_000,
        10_000_000_000_000_000_000,
    ];
    if n < 10 {
        return 1;
    }
    // floor(bits * log10(2)) is the digit count or one more than it.
    let bits = 64 - n.leading_zeros() as usize;
    let t = (bits * 1233) >> 12;
    t + 1 - usize::from(n < POW10[t])
}

/// Writes the `width` lowest decimal digits of `n` (zero-padded) to end at
/// `end`, two at a time.
///
/// SAFETY: the `width` bytes before `end` must be writable.
#[inline]
unsafe fn put_digits(end: *mut u8, mut n: u64, width: usize) {
    let mut p = end;
    let mut left = width;
    while left >= 2 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        p = p.sub(2);
        std::ptr::copy_nonoverlapping(DIGIT_PAIRS.as_ptr().add(d), p, 2);
        left -= 2;
    }
    if left == 1 {
        *p.sub(1) = b'0' + (n % 10) as u8;
    }
}

/// Appends `-` (when `negative`) and the decimal digits of `n`.
///
/// Digits go straight into `out`'s spare capacity. (Writing them into a
/// stack buffer first, as `itoa` does, and copying that with one or two
/// wide loads stalls on store forwarding, as the loads span the two-byte
/// stores; perf put a sixth of `push_f64`'s time on that one load.)
#[inline]
pub(crate) fn push_int(out: &mut Vec<u8>, negative: bool, n: u64) {
    let digits = decimal_len(n);
    let len = digits + usize::from(negative);
    out.reserve(len);
    // SAFETY: `len` bytes are reserved; all are written (ASCII) before the
    // length covers them.
    unsafe {
        let start = out.as_mut_ptr().add(out.len());
        if negative {
            *start = b'-';
        }
        put_digits(start.add(len), n, digits);
        out.set_len(out.len() + len);
    }
}

/// "00", "01", ... "99".
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

#[cfg(test)]
mod find_special_tests {
    use super::find_special;

    fn naive(b: &[u8], from: usize) -> usize {
        (from..b.len()).find(|&i| b[i] < 0x20 || b[i] == b'"' || b[i] == b'\\').unwrap_or(b.len())
    }

    #[test]
    fn every_position_and_byte() {
        // Each special byte (and the nearest plain ones) at every offset of
        // lengths around the 16- and 8-byte steps, from every start.
        for len in 0..40 {
            for at in 0..len {
                for byte in [0u8, 0x1F, 0x20, b'"', b'\\', b'!', b'#', 0x7F, 0x80, 0xFF, b'\n'] {
                    let mut b = vec![b'a'; len];
                    b[at] = byte;
                    for from in 0..=len {
                        assert_eq!(find_special(&b, from), naive(&b, from), "{b:?} from {from}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn matches_naive(b in proptest::collection::vec(proptest::num::u8::ANY, 0..80), from in 0usize..80) {
            let from = from.min(b.len());
            proptest::prop_assert_eq!(find_special(&b, from), naive(&b, from));
        }
    }
}

#[cfg(test)]
mod short_decimal_tests {
    use super::{push_small_number, ShortDecimal};

    /// Whichever of the short paths answers agrees with ryu-js; `-0` is `0`.
    fn check(f: f64) {
        let expected = if f == 0.0 { "0".to_owned() } else { ryu_js::Buffer::new().format_finite(f).to_owned() };
        if f != 0.0 {
            if let Some(d) = ShortDecimal::of(f) {
                let mut out = b"x".to_vec();
                d.push(&mut out);
                assert_eq!(std::str::from_utf8(&out[1..]).unwrap(), expected, "{f:e} ({:#x})", f.to_bits());
            }
        }
        // After other text, and with spare capacity of every size (the
        // unaligned writes reach past the text).
        for spare in [0, 1, 7, 15] {
            let mut out = Vec::with_capacity(3 + spare);
            out.extend_from_slice(b"x,y");
            if push_small_number(&mut out, f) {
                assert_eq!(std::str::from_utf8(&out[3..]).unwrap(), expected, "{f:e} ({:#x})", f.to_bits());
            } else {
                assert_eq!(out, b"x,y", "{f:e}: nothing written when it declines");
            }
        }
    }

    #[test]
    fn small_numbers_take_the_small_path() {
        let mut cases = vec![0.0, -0.0, 1.0, -1.0, 9.0, 10.0, 99_999_999.0, -99_999_999.0, 0.5, 0.0001, 9_999.999_9, 99_999_999.999_9];
        for digits in 1..=8 {
            let p = 10f64.powi(digits);
            cases.extend([p - 1.0, p / 10.0, p - 0.5, p / 10.0 + 0.25, -(p - 0.0001)]);
        }
        for f in cases {
            let mut out = Vec::new();
            assert!(push_small_number(&mut out, f), "{f}");
            check(f);
        }
        for f in [100_000_000.0, 1e8 + 0.5, 0.00005, 0.1 + 0.2, 1e-7, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 5e-324] {
            assert!(!push_small_number(&mut Vec::new(), f), "{f}");
            if f.is_finite() {
                check(f);
            }
        }
    }

    #[test]
    fn edges_match_ryu_js() {
        for f in [
            0.0001,
            0.00015,
            0.001,
            0.5,
            1.0,
            9.9999,
            9.99995,
            10.0,
            99.995,
            0.995,
            1e10,
            68_719_476_735.999_9,
            68_719_476_735.5,
            3540.24,
            0.69,
            1106.7,
            1.5,
            0.1 + 0.2,
            1234.5678,
            5e-5,
            0.30000000000000004,
        ] {
            check(f);
            check(-f);
            check(f64::from_bits(f.to_bits() + 1));
            check(f64::from_bits(f.to_bits() - 1));
        }
        assert!(ShortDecimal::of(3540.24).is_some() && ShortDecimal::of(0.1 + 0.2).is_none());
    }

    #[test]
    fn every_amount_in_cents_takes_the_short_path() {
        // Money-like values are the common case the short path is for.
        for cents in (1..3_000_000u64).chain((1u64 << 36) * 100 - 1_000..(1u64 << 36) * 100) {
            let f = cents as f64 / 100.0;
            assert!(ShortDecimal::of(f).is_some(), "{f}");
            check(f);
        }
    }

    #[test]
    fn every_short_number_around_the_digit_table_matches_ryu_js() {
        // Every integer and every four-digit fraction across the first
        // 10^4 * 20 values: each entry of the digit table, as a whole
        // part, a high part and a fraction, with every count of leading
        // and trailing zeros.
        for n in 0..200_000u64 {
            check(n as f64);
            check(n as f64 / 10_000.0);
            check(-(n as f64) / 10_000.0);
        }
        for hi in [1u64, 9, 10, 99, 100, 999, 1_000, 9_999] {
            for lo in [0u64, 1, 10, 100, 1_000, 9_999] {
                check((hi * 10_000 + lo) as f64);
                check((hi * 10_000 + lo) as f64 + 0.5);
            }
        }
    }

    proptest::proptest! {
        /// Decimals with up to six fractional digits, and their neighbours:
        /// whenever the short path answers, it agrees with ryu-js.
        #[test]
        fn decimals_match_ryu_js(m in 0u64..100_000_000_000_000, scale in 0u32..7, step in -2i64..3) {
            let f = m as f64 / 10f64.powi(scale as i32);
            check(f64::from_bits((f.to_bits() as i64 + step).max(0) as u64));
        }

        #[test]
        fn integers_match_ryu_js(i in -200_000_000i64..200_000_000) {
            check(i as f64);
        }

        #[test]
        fn any_double_matches_ryu_js(bits: u64) {
            let f = f64::from_bits(bits);
            if f.is_finite() {
                check(f);
            }
        }
    }
}

#[inline]
pub fn write_i64(out: &mut Vec<u8>, i: i64) {
    push_int(out, i < 0, i.unsigned_abs());
}

#[inline]
pub fn write_u64(out: &mut Vec<u8>, i: u64) {
    push_int(out, false, i);
}

#[cfg(test)]
mod push_int_tests {
    use super::{push_int, write_i64};

    fn check(negative: bool, n: u64) {
        let mut out = b"ab".to_vec();
        push_int(&mut out, negative, n);
        let expected = if negative { format!("ab-{n}") } else { format!("ab{n}") };
        assert_eq!(std::str::from_utf8(&out).unwrap(), expected);
    }

    #[test]
    fn powers_of_ten_and_neighbours() {
        let mut p = 1u64;
        loop {
            for n in [p - 1, p, p + 1, p.saturating_mul(2)] {
                check(false, n);
                check(true, n);
            }
            match p.checked_mul(10) {
                Some(q) => p = q,
                None => break,
            }
        }
        check(false, u64::MAX);
        let mut out = Vec::new();
        write_i64(&mut out, i64::MIN);
        assert_eq!(out, i64::MIN.to_string().as_bytes());
    }

    proptest::proptest! {
        #[test]
        fn any_integer(n: u64, negative: bool, shift in 0u32..64) {
            check(negative, n >> shift);
        }
    }
}

/// If `key` is an array index as JavaScript defines it (canonical decimal
/// form of an integer in `0..2^32-1`), its value. Such keys are enumerated
/// first, in ascending order, by every JavaScript object.
#[inline]
pub fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || !b[0].is_ascii_digit() || (b[0] == b'0' && b.len() > 1) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
    }
    if v < u32::MAX as u64 {
        Some(v as u32)
    } else {
        None
    }
}

/// The order in which a JavaScript object would enumerate these keys:
/// `None` when it is the given order (no key is an array index, the common
/// case), otherwise the permutation of indices to write in.
pub fn js_key_order<'a, I: IntoIterator<Item = &'a str>>(keys: I) -> Option<Vec<usize>> {
    let mut index_keys: Vec<(u32, usize)> = Vec::new();
    let mut others: Vec<usize> = Vec::new();
    for (i, k) in keys.into_iter().enumerate() {
        match array_index(k) {
            Some(n) => index_keys.push((n, i)),
            None => others.push(i),
        }
    }
    if index_keys.is_empty() {
        return None;
    }
    index_keys.sort_by_key(|&(n, _)| n);
    let mut order: Vec<usize> = index_keys.into_iter().map(|(_, i)| i).collect();
    order.extend(others);
    Some(order)
}

/// Serialize a `serde_json::Value` exactly as `JSON.stringify` would
/// serialize the same JavaScript value (integers beyond 2^53 are written
/// exactly rather than rounded).
pub fn to_vec(value: &serde_json::Value) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    write_value(&mut out, value, 0)?;
    Ok(out)
}

fn write_value(out: &mut Vec<u8>, value: &serde_json::Value, depth: usize) -> Result<()> {
    use serde_json::Value;
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                write_i64(out, i)
            } else if let Some(u) = n.as_u64() {
                write_u64(out, u)
            } else {
                write_f64(out, n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(too_deep(depth));
            }
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item, depth + 1)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(too_deep(depth));
            }
            out.push(b'{');
            let entries: Vec<(&String, &Value)> = map.iter().collect();
            let order = js_key_order(entries.iter().map(|(k, _)| k.as_str()));
            for n in 0..entries.len() {
                let (k, v) = entries[order.as_ref().map_or(n, |o| o[n])];
                if n > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_value(out, v, depth + 1)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

#[cold]
fn too_deep(depth: usize) -> Error {
    Error::new(Format::Json, "JSON_TOO_DEEP", format!("nesting deeper than {depth} levels (is the value circular?)"))
}

// ---------------------------------------------------------------- reading

/// Receives parsed values; implemented by each binding to build its own
/// objects directly. Children are handed over as a draining iterator over a
/// stack shared by the whole parse, so no container allocates a Vec of its own.
pub trait Builder {
    type Value;
    type Key;
    type Error: From<Error>;

    fn null(&mut self) -> Result<Self::Value, Self::Error>;
    fn bool(&mut self, b: bool) -> Result<Self::Value, Self::Error>;
    fn int(&mut self, i: i64) -> Result<Self::Value, Self::Error>;
    /// An integer literal outside the i64 range, as its decimal digits
    /// (with a leading `-` when negative).
    fn big_int(&mut self, digits: &str) -> Result<Self::Value, Self::Error>;
    fn float(&mut self, f: f64) -> Result<Self::Value, Self::Error>;
    fn string(&mut self, s: &str) -> Result<Self::Value, Self::Error>;
    fn key(&mut self, s: &str) -> Result<Self::Key, Self::Error>;
    /// `key`, made before from `s` by this builder, wanted once more (the
    /// field names of a TOON table repeat on every row). The default makes
    /// it again from `s`; a builder whose keys are cheap to copy returns a
    /// copy.
    #[inline]
    fn key_again(&mut self, key: &Self::Key, s: &str) -> Result<Self::Key, Self::Error> {
        let _ = key;
        self.key(s)
    }
    fn array(&mut self, items: Drain<'_, Self::Value>) -> Result<Self::Value, Self::Error>;
    fn object(&mut self, entries: Drain<'_, (Self::Key, Self::Value)>) -> Result<Self::Value, Self::Error>;

    /// An array's items are about to be made (then [`Builder::array`]
    /// closes it). With these two calls and [`Builder::key_ahead`], every
    /// value, key and bracket reaches a builder in document order, so one
    /// can write text as it goes instead of building. The default does
    /// nothing.
    #[inline]
    fn begin_array(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// An object's entries are about to be made (then [`Builder::object`]).
    #[inline]
    fn begin_object(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// A key made ahead of the entries that use it, each of which then
    /// asks for it with [`Builder::key_again`] (a TOON table's field
    /// names). The default is [`Builder::key`].
    #[inline]
    fn key_ahead(&mut self, s: &str) -> Result<Self::Key, Self::Error> {
        self.key(s)
    }

    /// A number token of a text format (TOON), with its source text, so a
    /// builder can see the literal (Python's `parse_int`/`parse_float`
    /// hooks, exact big integers). `text` matches
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` and `integer` says it
    /// has no fraction and no exponent. Returns `None` when the token is not
    /// a number after all (its double value is infinite: it stays a string).
    ///
    /// The default is the JavaScript reading: an integer literal that fits
    /// an i64 goes to [`Builder::int`] (exact; `-0` gives 0), any other
    /// number to [`Builder::float`] as the double `Number(text)` gives,
    /// with `-0` as `0`.
    fn number_token(&mut self, text: &str, integer: bool) -> Result<Option<Self::Value>, Self::Error> {
        javascript_number(self, text, integer)
    }

    /// [`Builder::number_token`], with the token's value when the decoder
    /// already read it (`quick`, see [`QuickNumber`]), so a builder that
    /// reads numbers the default way need not parse the text again. The
    /// default ignores `quick` and calls [`Builder::number_token`]; a
    /// builder that overrides this must give what its `number_token`
    /// gives.
    #[inline]
    fn number_value(&mut self, text: &str, integer: bool, quick: Option<QuickNumber>) -> Result<Option<Self::Value>, Self::Error> {
        let _ = quick;
        self.number_token(text, integer)
    }
}

/// The default [`Builder::number_token`] (the JavaScript reading), for a
/// builder that overrides it for some tokens and reads the rest this way.
pub fn javascript_number<B: Builder + ?Sized>(b: &mut B, text: &str, integer: bool) -> Result<Option<B::Value>, B::Error> {
    if integer {
        if let Ok(i) = text.parse::<i64>() {
            return b.int(i).map(Some);
        }
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => b.float(if f == 0.0 { 0.0 } else { f }).map(Some),
        _ => Ok(None),
    }
}

/// The value of a number token of a text format, when the decoder could
/// read it exactly as it checked its form (short literals; see
/// [`Builder::number_value`]): an integer literal that fits an `i64`, or
/// the double `text.parse::<f64>()` gives, with `-0.0` as `0.0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QuickNumber {
    Int(i64),
    Float(f64),
}

#[derive(Debug, Clone, Copy)]
pub struct ParseOptions {
    /// Accept `NaN`, `Infinity` and `-Infinity` (Python's `json.dumps`
    /// writes them by default).
    pub allow_nan: bool,
    pub max_depth: usize,
    /// The caller has already checked that the whole input is UTF-8, so
    /// strings need not be checked again.
    pub utf8_checked: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions { allow_nan: false, max_depth: MAX_DEPTH, utf8_checked: false }
    }
}

/// Parse one JSON document (surrounding whitespace allowed) with `builder`.
pub fn parse_with<B: Builder>(input: &[u8], opts: ParseOptions, builder: &mut B) -> Result<B::Value, B::Error> {
    let mut p = Parser { input, pos: 0, opts, values: Vec::new(), entries: Vec::new(), scratch: String::new() };
    p.skip_ws();
    let v = p.value(builder, 0)?;
    p.skip_ws();
    if p.pos < input.len() {
        return Err(p.err("JSON_TRAILING_CHARACTERS", "expected end of input after the JSON value").into());
    }
    Ok(v)
}

/// Parse to a `serde_json::Value` (key order kept; later duplicate keys
/// overwrite earlier ones in place, as `JSON.parse` does).
pub fn parse(input: &[u8], opts: ParseOptions) -> Result<serde_json::Value> {
    parse_with(input, opts, &mut ValueBuilder)
}

/// Builds `serde_json::Value`s. Integers beyond i64/u64 become f64, as in
/// JavaScript.
pub struct ValueBuilder;

impl Builder for ValueBuilder {
    type Value = serde_json::Value;
    type Key = String;
    type Error = Error;

    fn null(&mut self) -> Result<serde_json::Value> {
        Ok(serde_json::Value::Null)
    }
    fn bool(&mut self, b: bool) -> Result<serde_json::Value> {
        Ok(serde_json::Value::Bool(b))
    }
    fn int(&mut self, i: i64) -> Result<serde_json::Value> {
        Ok(i.into())
    }
    fn big_int(&mut self, digits: &str) -> Result<serde_json::Value> {
        if let Ok(u) = digits.parse::<u64>() {
            return Ok(u.into());
        }
        self.float(digits.parse::<f64>().unwrap_or(f64::NAN))
    }
    fn float(&mut self, f: f64) -> Result<serde_json::Value> {
        // serde_json has no NaN or infinities; they become null, as they
        // would once written back out by JSON.stringify.
        Ok(serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number))
    }
    fn string(&mut self, s: &str) -> Result<serde_json::Value> {
        Ok(serde_json::Value::String(s.to_owned()))
    }
    fn key(&mut self, s: &str) -> Result<String> {
        Ok(s.to_owned())
    }
    fn array(&mut self, items: Drain<'_, serde_json::Value>) -> Result<serde_json::Value> {
        Ok(serde_json::Value::Array(items.collect()))
    }
    fn object(&mut self, entries: Drain<'_, (String, serde_json::Value)>) -> Result<serde_json::Value> {
        let mut map = serde_json::Map::with_capacity(entries.len());
        for (k, v) in entries {
            map.insert(k, v);
        }
        Ok(serde_json::Value::Object(map))
    }
}

struct Parser<'a, V, K> {
    input: &'a [u8],
    pos: usize,
    opts: ParseOptions,
    values: Vec<V>,
    entries: Vec<(K, V)>,
    scratch: String,
}

impl<'a, V, K> Parser<'a, V, K> {
    #[cold]
    fn err(&self, code: &'static str, msg: &str) -> Error {
        self.err_at(code, msg, self.pos)
    }

    #[cold]
    fn err_at(&self, code: &'static str, msg: &str, pos: usize) -> Error {
        let found = match self.input.get(pos) {
            None => "end of input".to_string(),
            Some(&b) if b.is_ascii_graphic() => format!("'{}'", b as char),
            Some(&b) => format!("byte 0x{b:02x}"),
        };
        Error::new(Format::Json, code, format!("{msg}, found {found}")).at(pos)
    }

    /// A string's bytes as `&str`: checked by the caller (whole input) or in
    /// `string` (this slice) already.
    #[inline]
    fn input_str(&self, start: usize, end: usize) -> Result<&'a str> {
        let bytes = &self.input[start..end];
        if self.opts.utf8_checked {
            // SAFETY: `utf8_checked` promises the whole input is UTF-8, and
            // `start`/`end` sit next to ASCII quotes, so on char boundaries.
            Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
        } else {
            std::str::from_utf8(bytes).map_err(|_| self.err_at("JSON_INVALID_UTF8", "invalid UTF-8", start))
        }
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(&b) = self.input.get(self.pos) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn eat_literal(&mut self, lit: &[u8]) -> bool {
        if self.input[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }
}

impl<'a, V, K> Parser<'a, V, K> {
    fn value<B: Builder<Value = V, Key = K>>(&mut self, b: &mut B, depth: usize) -> Result<V, B::Error> {
        match self.input.get(self.pos) {
            Some(b'"') => {
                let s = self.string()?;
                match s {
                    StrRef::Input(start, end) => b.string(self.input_str(start, end)?),
                    StrRef::Scratch => {
                        let s = std::mem::take(&mut self.scratch);
                        let r = b.string(&s);
                        self.scratch = s;
                        r
                    }
                }
            }
            Some(b'{') => self.object(b, depth),
            Some(b'[') => self.array(b, depth),
            Some(b't') if self.eat_literal(b"true") => b.bool(true),
            Some(b'f') if self.eat_literal(b"false") => b.bool(false),
            Some(b'n') if self.eat_literal(b"null") => b.null(),
            Some(b'N') if self.opts.allow_nan && self.eat_literal(b"NaN") => b.float(f64::NAN),
            Some(b'I') if self.opts.allow_nan && self.eat_literal(b"Infinity") => b.float(f64::INFINITY),
            Some(b'-') if self.opts.allow_nan && self.input[self.pos..].starts_with(b"-Infinity") => {
                self.pos += 9;
                b.float(f64::NEG_INFINITY)
            }
            Some(b'-' | b'0'..=b'9') => self.number(b),
            _ => Err(self.err("JSON_UNEXPECTED_TOKEN", "expected a JSON value").into()),
        }
    }

    fn enter(&self, depth: usize) -> Result<()> {
        if depth >= self.opts.max_depth {
            Err(Error::new(Format::Json, "JSON_TOO_DEEP", format!("nesting deeper than {} levels", self.opts.max_depth)).at(self.pos))
        } else {
            Ok(())
        }
    }

    fn array<B: Builder<Value = V, Key = K>>(&mut self, b: &mut B, depth: usize) -> Result<V, B::Error> {
        self.enter(depth)?;
        b.begin_array()?;
        self.pos += 1; // '['
        let base = self.values.len();
        self.skip_ws();
        if self.input.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return b.array(self.values.drain(base..));
        }
        loop {
            self.skip_ws();
            let v = self.value(b, depth + 1)?;
            self.values.push(v);
            self.skip_ws();
            match self.input.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return b.array(self.values.drain(base..));
                }
                _ => return Err(self.err("JSON_UNEXPECTED_TOKEN", "expected ',' or ']' in array").into()),
            }
        }
    }

    fn object<B: Builder<Value = V, Key = K>>(&mut self, b: &mut B, depth: usize) -> Result<V, B::Error> {
        self.enter(depth)?;
        b.begin_object()?;
        self.pos += 1; // '{'
        let base = self.entries.len();
        self.skip_ws();
        if self.input.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return b.object(self.entries.drain(base..));
        }
        loop {
            self.skip_ws();
            if self.input.get(self.pos) != Some(&b'"') {
                return Err(self.err("JSON_EXPECTED_KEY", "expected a string key in object").into());
            }
            let key = match self.string()? {
                StrRef::Input(start, end) => b.key(self.input_str(start, end)?)?,
                StrRef::Scratch => {
                    let s = std::mem::take(&mut self.scratch);
                    let r = b.key(&s);
                    self.scratch = s;
                    r?
                }
            };
            self.skip_ws();
            if self.input.get(self.pos) != Some(&b':') {
                return Err(self.err("JSON_UNEXPECTED_TOKEN", "expected ':' after object key").into());
            }
            self.pos += 1;
            self.skip_ws();
            let v = self.value(b, depth + 1)?;
            self.entries.push((key, v));
            self.skip_ws();
            match self.input.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return b.object(self.entries.drain(base..));
                }
                _ => return Err(self.err("JSON_UNEXPECTED_TOKEN", "expected ',' or '}' in object").into()),
            }
        }
    }

    fn number<B: Builder<Value = V, Key = K>>(&mut self, b: &mut B) -> Result<V, B::Error> {
        let start = self.pos;
        let input = self.input;
        let mut i = self.pos;
        if input[i] == b'-' {
            i += 1;
        }
        match input.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while matches!(input.get(i), Some(b'0'..=b'9')) {
                    i += 1;
                }
            }
            _ => return Err(self.err_at("JSON_INVALID_NUMBER", "expected a digit", i).into()),
        }
        let mut is_float = false;
        if input.get(i) == Some(&b'.') {
            is_float = true;
            i += 1;
            if !matches!(input.get(i), Some(b'0'..=b'9')) {
                return Err(self.err_at("JSON_INVALID_NUMBER", "expected a digit after the decimal point", i).into());
            }
            while matches!(input.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        if matches!(input.get(i), Some(b'e' | b'E')) {
            is_float = true;
            i += 1;
            if matches!(input.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !matches!(input.get(i), Some(b'0'..=b'9')) {
                return Err(self.err_at("JSON_INVALID_NUMBER", "expected a digit in the exponent", i).into());
            }
            while matches!(input.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        self.pos = i;
        // The slice is ASCII by construction.
        let text = std::str::from_utf8(&input[start..i]).unwrap_or("0");
        if is_float {
            b.float(text.parse::<f64>().unwrap_or(f64::NAN))
        } else if i - start <= 18 {
            // At most 18 digits always fits an i64.
            b.int(text.parse::<i64>().unwrap_or(0))
        } else {
            match text.parse::<i64>() {
                Ok(v) => b.int(v),
                Err(_) => b.big_int(text),
            }
        }
    }

    /// Scan a string starting at the opening quote. Strings without escapes
    /// are returned as a range of the input; others are unescaped into
    /// `self.scratch`.
    fn string(&mut self) -> Result<StrRef> {
        let input = self.input;
        let start = self.pos + 1;
        let mut i = start;
        // Fast path: find the closing quote with no escapes.
        i = find_special(input, i);
        match input.get(i) {
            Some(b'"') => {
                if !self.opts.utf8_checked && std::str::from_utf8(&input[start..i]).is_err() {
                    return Err(self.utf8_error(start, i));
                }
                self.pos = i + 1;
                return Ok(StrRef::Input(start, i));
            }
            Some(b'\\') => {}
            Some(_) => {
                return Err(self.err_at("JSON_CONTROL_CHARACTER", "expected an escape sequence for a control character in string", i))
            }
            None => {}
        }
        if i >= input.len() {
            return Err(self.err_at("JSON_UNTERMINATED_STRING", "expected '\"' to close the string", i));
        }
        // Slow path with escapes.
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let mut run = start;
        let res = loop {
            let Some(&c) = input.get(i) else {
                break Err(self.err_at("JSON_UNTERMINATED_STRING", "expected '\"' to close the string", i));
            };
            match c {
                b'"' => {
                    match std::str::from_utf8(&input[run..i]) {
                        Ok(s) => out.push_str(s),
                        Err(_) => break Err(self.utf8_error(run, i)),
                    }
                    self.pos = i + 1;
                    break Ok(());
                }
                b'\\' => {
                    match std::str::from_utf8(&input[run..i]) {
                        Ok(s) => out.push_str(s),
                        Err(_) => break Err(self.utf8_error(run, i)),
                    }
                    match self.escape(i, &mut out) {
                        Ok(next) => {
                            i = next;
                            run = i;
                        }
                        Err(e) => break Err(e),
                    }
                }
                0..=0x1f => {
                    break Err(self.err_at("JSON_CONTROL_CHARACTER", "expected an escape sequence for a control character in string", i))
                }
                _ => i = find_special(input, i + 1),
            }
        };
        self.scratch = out;
        res.map(|_| StrRef::Scratch)
    }

    /// Decode the escape at `i` (the backslash); returns the index after it.
    fn escape(&self, i: usize, out: &mut String) -> Result<usize> {
        let input = self.input;
        let Some(&c) = input.get(i + 1) else {
            return Err(self.err_at("JSON_UNTERMINATED_STRING", "expected an escape character after '\\'", i + 1));
        };
        let ch = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4(i + 2)?;
                if (0xD800..0xDC00).contains(&hi) {
                    if input.get(i + 6) == Some(&b'\\') && input.get(i + 7) == Some(&b'u') {
                        let lo = self.hex4(i + 8)?;
                        if (0xDC00..0xE000).contains(&lo) {
                            let cp = 0x10000 + (((hi - 0xD800) as u32) << 10) + (lo - 0xDC00) as u32;
                            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                            return Ok(i + 12);
                        }
                    }
                    return Err(self.lone_surrogate(i, hi));
                }
                if (0xDC00..0xE000).contains(&hi) {
                    return Err(self.lone_surrogate(i, hi));
                }
                out.push(char::from_u32(hi as u32).unwrap_or('\u{FFFD}'));
                return Ok(i + 6);
            }
            _ => return Err(self.err_at("JSON_INVALID_ESCAPE", "expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", i)),
        };
        out.push(ch);
        Ok(i + 2)
    }

    fn hex4(&self, at: usize) -> Result<u16> {
        let mut v: u16 = 0;
        for k in 0..4 {
            let d = match self.input.get(at + k) {
                Some(&c @ b'0'..=b'9') => c - b'0',
                Some(&c @ b'a'..=b'f') => c - b'a' + 10,
                Some(&c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.err_at("JSON_INVALID_ESCAPE", "expected 4 hex digits after \\u", at + k)),
            };
            v = (v << 4) | d as u16;
        }
        Ok(v)
    }

    #[cold]
    fn lone_surrogate(&self, at: usize, unit: u16) -> Error {
        Error::new(
            Format::Json,
            "JSON_LONE_SURROGATE",
            format!("unpaired surrogate \\u{unit:04x} in string (expected a high surrogate followed by a low surrogate)"),
        )
        .at(at)
    }

    #[cold]
    fn utf8_error(&self, start: usize, end: usize) -> Error {
        let valid = std::str::from_utf8(&self.input[start..end]).err().map_or(0, |e| e.valid_up_to());
        Error::new(Format::Json, "JSON_INVALID_UTF8", "invalid UTF-8 in string (expected UTF-8 text)").at(start + valid)
    }
}

enum StrRef {
    Input(usize, usize),
    Scratch,
}

/// Check that `input` is one JSON document without building anything; the
/// error, if any, carries the byte offset. Used on error paths by bindings
/// whose host parser reports no byte offset.
pub fn validate(input: &[u8], opts: ParseOptions) -> Result<()> {
    parse_with(input, opts, &mut NullBuilder).map(|_| ())
}

struct NullBuilder;

impl Builder for NullBuilder {
    type Value = ();
    type Key = ();
    type Error = Error;
    fn null(&mut self) -> Result<()> {
        Ok(())
    }
    fn bool(&mut self, _: bool) -> Result<()> {
        Ok(())
    }
    fn int(&mut self, _: i64) -> Result<()> {
        Ok(())
    }
    fn big_int(&mut self, _: &str) -> Result<()> {
        Ok(())
    }
    fn float(&mut self, _: f64) -> Result<()> {
        Ok(())
    }
    fn string(&mut self, _: &str) -> Result<()> {
        Ok(())
    }
    fn key(&mut self, _: &str) -> Result<()> {
        Ok(())
    }
    fn array(&mut self, items: Drain<'_, ()>) -> Result<()> {
        drop(items);
        Ok(())
    }
    fn object(&mut self, entries: Drain<'_, ((), ())>) -> Result<()> {
        drop(entries);
        Ok(())
    }
}

/// A quick structural scan for hosts that parse JSON themselves
/// (`JSON.parse`), which know no nesting limit and accept lone surrogate
/// escapes: `true` when `text` nests deeper than [`MAX_DEPTH`] or contains a
/// surrogate escape (`\\uD800`-`\\uDFFF`, paired or not), i.e. when the full
/// parser must judge it so that every binding accepts and rejects the same
/// documents. Much cheaper than a parse: strings are skipped with `memchr`.
pub fn needs_full_check(text: &[u8]) -> bool {
    scan(text, MAX_DEPTH, true)
}

/// `true` when the JSON `text` nests arrays and objects deeper than
/// `max_depth` levels: what an encoder checks of JSON text a host wrote
/// (`JSON.stringify` knows no limit), so that it never writes a document
/// the decoders refuse. Strings are skipped with `memchr`.
pub fn nests_deeper_than(text: &[u8], max_depth: usize) -> bool {
    scan(text, max_depth, false)
}

/// The scan of [`needs_full_check`] and [`nests_deeper_than`]: `true` at the
/// first container beyond `max_depth`, or (when `surrogates`) the first
/// surrogate escape.
fn scan(text: &[u8], max_depth: usize, surrogates: bool) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    let n = text.len();
    while i < n {
        match text[i] {
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return true;
                }
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'"' => {
                i += 1;
                loop {
                    // `get`: an escape's backslash as the last byte leaves
                    // `i` one past the end (a slice there would panic).
                    match memchr::memchr2(b'"', b'\\', text.get(i..).unwrap_or_default()) {
                        None => return false,
                        Some(p) => {
                            i += p;
                            if text[i] == b'"' {
                                i += 1;
                                break;
                            }
                            // An escape: `\\u` followed by d8-df starts a surrogate.
                            if surrogates
                                && text.get(i + 1) == Some(&b'u')
                                && matches!(text.get(i + 2), Some(b'd' | b'D'))
                                && matches!(text.get(i + 3), Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
                            {
                                return true;
                            }
                            i += 2;
                        }
                    }
                }
            }
            _ => i += 1,
        }
    }
    false
}

/// Replace the `NaN`, `Infinity` and `-Infinity` tokens outside strings with
/// `null`, for host parsers that reject them (`JSON.parse`); `null` is what
/// `JSON.stringify` writes for those values. Other text is copied unchanged.
pub fn non_finite_to_null(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut run = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                // Skip the string, honouring escapes.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'N' | b'I' | b'-' => {
                let tok: &[u8] = if b[i..].starts_with(b"NaN") {
                    b"NaN"
                } else if b[i..].starts_with(b"Infinity") {
                    b"Infinity"
                } else if b[i..].starts_with(b"-Infinity") {
                    b"-Infinity"
                } else {
                    i += 1;
                    continue;
                };
                out.push_str(&text[run..i]);
                out.push_str("null");
                i += tok.len();
                run = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[run.min(text.len())..]);
    out
}

/// Re-indent compact JSON text (as [`to_vec`] or `JSON.stringify(v)` writes
/// it) the way `JSON.stringify(v, null, indent)` writes the same value: a
/// newline and `indent` more spaces per level, `": "` after keys, empty
/// containers as `{}` / `[]`. `indent` 0 copies the text.
pub fn indent_compact(compact: &[u8], indent: usize, out: &mut Vec<u8>) {
    if indent == 0 {
        out.extend_from_slice(compact);
        return;
    }
    let newline = |out: &mut Vec<u8>, level: usize| {
        out.push(b'\n');
        out.resize(out.len() + level * indent, b' ');
    };
    let mut level = 0usize;
    let mut i = 0;
    while i < compact.len() {
        let c = compact[i];
        match c {
            b'"' => {
                let start = i;
                i += 1;
                while i < compact.len() && compact[i] != b'"' {
                    i += if compact[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(compact.len());
                out.extend_from_slice(&compact[start..i]);
                continue;
            }
            b'{' | b'[' => {
                out.push(c);
                if matches!(compact.get(i + 1), Some(b'}' | b']')) {
                    out.push(compact[i + 1]);
                    i += 2;
                    continue;
                }
                level += 1;
                newline(out, level);
            }
            b'}' | b']' => {
                level = level.saturating_sub(1);
                newline(out, level);
                out.push(c);
            }
            b',' => {
                out.push(b',');
                newline(out, level);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(c),
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn s(v: serde_json::Value) -> String {
        String::from_utf8(to_vec(&v).unwrap()).unwrap()
    }

    #[test]
    fn writes_like_json_stringify() {
        assert_eq!(s(json!({"a": [1, 2.5, null, true], "b": "x\"\\\n\u{1}é"})), r#"{"a":[1,2.5,null,true],"b":"x\"\\\n\u0001é"}"#);
        assert_eq!(s(json!(1.0)), "1");
        assert_eq!(s(json!(1e21)), "1e+21");
        assert_eq!(s(json!(1.5e-7)), "1.5e-7");
        assert_eq!(s(json!(0.000001)), "0.000001");
        assert_eq!(s(json!(-0.0)), "0");
        assert_eq!(s(json!({"b": 1, "2": 2, "1": 3, "01": 4})), r#"{"1":3,"2":2,"b":1,"01":4}"#);
    }

    #[test]
    fn parses_with_offsets() {
        assert_eq!(
            parse(br#" {"a": [1, -2.5e3, "\u00e9\ud83d\ude00"]} "#, ParseOptions::default()).unwrap(),
            json!({"a": [1, -2500.0, "é😀"]})
        );
        let e = parse(b"[1, 2", ParseOptions::default()).unwrap_err();
        assert_eq!(e.offset(), Some(5));
        assert_eq!(e.code(), "JSON_UNEXPECTED_TOKEN");
        let e = parse(b"[01]", ParseOptions::default()).unwrap_err();
        assert_eq!(e.offset(), Some(2));
        let e = parse(b"\"a\xff\"", ParseOptions::default()).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("JSON_INVALID_UTF8", Some(2)));
        assert!(parse(b"NaN", ParseOptions::default()).is_err());
        assert_eq!(parse(b"[NaN, -Infinity]", ParseOptions { allow_nan: true, ..Default::default() }).unwrap(), json!([null, null]));
        let deep = "[".repeat(2000);
        assert_eq!(parse(deep.as_bytes(), ParseOptions::default()).unwrap_err().code(), "JSON_TOO_DEEP");
        assert_eq!(parse(b"12345678901234567890", ParseOptions::default()).unwrap(), json!(12345678901234567890u64));
        assert_eq!(parse(b"{} x", ParseOptions::default()).unwrap_err().code(), "JSON_TRAILING_CHARACTERS");
        assert!(!needs_full_check(br#"{"a":["\u00e9\n",1]}"#));
        assert!(needs_full_check(br#"["\ud83d\ude00"]"#));
        assert!(needs_full_check(br#"["x\uDC00"]"#));
        assert!(needs_full_check("[".repeat(MAX_DEPTH + 1).as_bytes()));
        // A backslash as the last byte of an unterminated string.
        assert!(!needs_full_check(b"\"abc\\"));
        assert!(!needs_full_check(b"[\"\\"));
        assert!(!needs_full_check("[".repeat(MAX_DEPTH).as_bytes()));
        assert!(!nests_deeper_than(br#"["\ud800"]"#, 1));
        assert!(nests_deeper_than(br#"[{"a":[]}]"#, 2));
        assert!(!nests_deeper_than(br#"[{"a":"[[[[\"{{"}]"#, 2));
        assert!(!nests_deeper_than(format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH)).as_bytes(), MAX_DEPTH));
        assert!(!needs_full_check(br#"["[[[[\"{"]"#));
        assert_eq!(non_finite_to_null(r#"[NaN,"NaN \"Infinity",-Infinity,{"a":Infinity}]"#), r#"[null,"NaN \"Infinity",null,{"a":null}]"#);
    }

    #[test]
    fn indent_compact_writes_what_json_stringify_writes_with_an_indent() {
        let pretty = |t: &str, n| {
            let mut out = Vec::new();
            indent_compact(t.as_bytes(), n, &mut out);
            String::from_utf8(out).unwrap()
        };
        // JSON.stringify({a:[1,{}],"b:\"{[":[],c:{d:null}}, null, 2)
        assert_eq!(
            pretty(r#"{"a":[1,{}],"b:\"{[":[],"c":{"d":null}}"#, 2),
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b:\\\"{[\": [],\n  \"c\": {\n    \"d\": null\n  }\n}"
        );
        assert_eq!(pretty("[]", 2), "[]");
        assert_eq!(pretty(r#""x""#, 4), r#""x""#);
        assert_eq!(pretty("[1]", 0), "[1]");
    }
}
