//! Python `str` objects made from UTF-8 text without CPython's decoder.
//!
//! `PyUnicode_FromStringAndSize` decodes UTF-8 for any input: after the
//! first non-ASCII character it re-widens what it wrote so far and goes on
//! one character at a time, about 5 instructions per byte even through long
//! ASCII stretches. A TOON document with a single emoji is such an input as
//! a whole. Here one pass over the bytes (16 at a time) counts the
//! characters and finds the widest one, which fixes the `str`'s storage
//! (1, 2 or 4 bytes per character, as CPython requires the narrowest); a
//! second pass widens ASCII runs 16 bytes at a time and decodes the rest.

use pyo3::ffi;
use pyo3::prelude::*;

/// A new `str` holding `s`.
#[inline]
pub fn new_str<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyAny>> {
    if s.is_ascii() {
        // SAFETY: `PyUnicode_New(n, 127)` gives room for `n` one-byte characters.
        unsafe {
            let ptr = ffi::PyUnicode_New(s.len() as ffi::Py_ssize_t, 127);
            if ptr.is_null() {
                return Err(PyErr::fetch(py));
            }
            std::ptr::copy_nonoverlapping(s.as_ptr(), ffi::PyUnicode_DATA(ptr) as *mut u8, s.len());
            Ok(Bound::from_owned_ptr(py, ptr))
        }
    } else {
        new_wide_str(py, s)
    }
}

/// A `str` of text with at least one non-ASCII character.
fn new_wide_str<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyAny>> {
    let b = s.as_bytes();
    let (chars, widest_lead) = census(b);
    // The lead byte of a character says its range: 0xC2-0xC3 start U+0080-
    // U+00FF, 0xC4-0xEF U+0100-U+FFFF, 0xF0-0xF4 U+10000 and up.
    let maxchar: ffi::Py_UCS4 = match widest_lead {
        0xF0.. => 0x10FFFF,
        0xC4.. => 0xFFFF,
        _ => 0xFF,
    };
    // SAFETY: the object has room for `chars` characters of the width
    // `maxchar` selects, and `fill` writes exactly the characters of `b`,
    // which `census` counted.
    unsafe {
        let ptr = ffi::PyUnicode_New(chars as ffi::Py_ssize_t, maxchar);
        if ptr.is_null() {
            return Err(PyErr::fetch(py));
        }
        let data = ffi::PyUnicode_DATA(ptr);
        let written = match maxchar {
            0xFF => fill::<u8>(b, data as *mut u8),
            0xFFFF => fill::<u16>(b, data as *mut u16),
            _ => fill::<u32>(b, data as *mut u32),
        };
        debug_assert_eq!(written, chars);
        Ok(Bound::from_owned_ptr(py, ptr))
    }
}

/// The number of characters of UTF-8 text and its largest byte.
fn census(b: &[u8]) -> (usize, u8) {
    let mut continuation = 0usize;
    let mut widest = 0u8;
    let mut i = 0;
    #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
    // SAFETY: SSE2 is part of x86_64; loads stay within `b`.
    unsafe {
        use std::arch::x86_64::*;
        // Continuation bytes are 0x80-0xBF: below -64 as signed bytes.
        let below = _mm_set1_epi8(-64);
        let zero = _mm_setzero_si128();
        let mut max = zero;
        // Per-lane counts (a compare gives -1 per continuation byte),
        // summed before a lane can wrap (255 steps at most).
        while i + 16 <= b.len() {
            let mut lanes = zero;
            let mut steps = 0;
            while steps < 255 && i + 16 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(i) as *const __m128i);
                lanes = _mm_sub_epi8(lanes, _mm_cmplt_epi8(v, below));
                max = _mm_max_epu8(max, v);
                i += 16;
                steps += 1;
            }
            let sums = _mm_sad_epu8(lanes, zero);
            continuation += (_mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums))) as usize;
        }
        let mut lanes = [0u8; 16];
        _mm_storeu_si128(lanes.as_mut_ptr() as *mut __m128i, max);
        widest = widest.max(lanes.iter().copied().max().unwrap_or(0));
    }
    for &c in &b[i..] {
        continuation += usize::from((0x80..0xC0).contains(&c));
        widest = widest.max(c);
    }
    (b.len() - continuation, widest)
}

/// A storage unit of a `str`: 1, 2 or 4 bytes per character.
trait Unit: Copy {
    fn of(c: u32) -> Self;
    /// Write 16 ASCII bytes `v` widened to units at `out`.
    #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
    unsafe fn widen16(v: std::arch::x86_64::__m128i, out: *mut Self);
}

impl Unit for u8 {
    #[inline(always)]
    fn of(c: u32) -> Self {
        c as u8
    }
    #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
    #[inline(always)]
    unsafe fn widen16(v: std::arch::x86_64::__m128i, out: *mut Self) {
        std::arch::x86_64::_mm_storeu_si128(out as *mut _, v);
    }
}

impl Unit for u16 {
    #[inline(always)]
    fn of(c: u32) -> Self {
        c as u16
    }
    #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
    #[inline(always)]
    unsafe fn widen16(v: std::arch::x86_64::__m128i, out: *mut Self) {
        use std::arch::x86_64::*;
        let z = _mm_setzero_si128();
        _mm_storeu_si128(out as *mut __m128i, _mm_unpacklo_epi8(v, z));
        _mm_storeu_si128(out.add(8) as *mut __m128i, _mm_unpackhi_epi8(v, z));
    }
}

impl Unit for u32 {
    #[inline(always)]
    fn of(c: u32) -> Self {
        c
    }
    #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
    #[inline(always)]
    unsafe fn widen16(v: std::arch::x86_64::__m128i, out: *mut Self) {
        use std::arch::x86_64::*;
        let z = _mm_setzero_si128();
        let lo = _mm_unpacklo_epi8(v, z);
        let hi = _mm_unpackhi_epi8(v, z);
        _mm_storeu_si128(out as *mut __m128i, _mm_unpacklo_epi16(lo, z));
        _mm_storeu_si128(out.add(4) as *mut __m128i, _mm_unpackhi_epi16(lo, z));
        _mm_storeu_si128(out.add(8) as *mut __m128i, _mm_unpacklo_epi16(hi, z));
        _mm_storeu_si128(out.add(12) as *mut __m128i, _mm_unpackhi_epi16(hi, z));
    }
}

/// Decode the valid UTF-8 `b` into units at `out`; returns the number
/// written (the character count of `b`).
///
/// # Safety
/// `out` has room for as many units as `b` has characters, and every
/// character of `b` fits a unit.
unsafe fn fill<U: Unit>(b: &[u8], out: *mut U) -> usize {
    let mut i = 0;
    let mut o = 0;
    let n = b.len();
    while i < n {
        #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
        {
            use std::arch::x86_64::*;
            while i + 16 <= n {
                let v = _mm_loadu_si128(b.as_ptr().add(i) as *const __m128i);
                if _mm_movemask_epi8(v) != 0 {
                    break;
                }
                U::widen16(v, out.add(o));
                i += 16;
                o += 16;
            }
            if i >= n {
                break;
            }
        }
        let c = *b.get_unchecked(i);
        let (cp, len) = if c < 0x80 {
            (u32::from(c), 1)
        } else if c < 0xE0 {
            ((u32::from(c & 0x1F) << 6) | u32::from(*b.get_unchecked(i + 1) & 0x3F), 2)
        } else if c < 0xF0 {
            ((u32::from(c & 0x0F) << 12) | (u32::from(*b.get_unchecked(i + 1) & 0x3F) << 6) | u32::from(*b.get_unchecked(i + 2) & 0x3F), 3)
        } else {
            (
                (u32::from(c & 0x07) << 18)
                    | (u32::from(*b.get_unchecked(i + 1) & 0x3F) << 12)
                    | (u32::from(*b.get_unchecked(i + 2) & 0x3F) << 6)
                    | u32::from(*b.get_unchecked(i + 3) & 0x3F),
                4,
            )
        };
        *out.add(o) = U::of(cp);
        i += len;
        o += 1;
    }
    o
}
