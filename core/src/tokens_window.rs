//! The counters' ASCII fast path on x86_64: where pieces start, found from
//! byte-class bit masks of 64 bytes at a time (o200k's pieces, and
//! cl100k's, whose rules differ in two points, see [`starts`]).
//!
//! The byte-at-a-time scanner (`o200k_ascii_piece`) branches on the class of
//! each piece's first byte (letters, digits, punctuation, white space), and
//! in JSON and TOON text (about three bytes a piece) the processor mispredicts
//! about one of those branches per piece. Here one SSE2 pass turns 64 bytes
//! into a bit mask per class, and logic over whole masks gives the bit of
//! every piece start in the window ([`starts`]). Pieces of one byte or of
//! digits (a token each) are then counted with one `popcount`, and only the
//! others are looked up in the memo. The rare cases the mask rules leave out
//! go to the byte-at-a-time scanner for that window. Tests compare the
//! pieces with that scanner's on random text built to hit those cases.

use super::{cl100k_ascii_piece, o200k_ascii_piece, Bpe, Memo, MEMO_MAX_PIECE};
use std::arch::x86_64::*;

/// Bytes classified per window.
const WINDOW: usize = 64;
/// Piece starts are known exactly up to this bit of a window (a start's
/// rules look one byte ahead).
const RELIABLE: u32 = 62;

/// Class masks of a window: bit `j` for the byte `j` after its start. Past
/// the run's end a byte is in `end` only, which ends every run of a class,
/// as the end of the text ends the pattern's runs.
#[derive(Clone, Copy)]
struct Masks {
    upper: u64,
    lower: u64,
    digit: u64,
    /// `\s`: tab, line feed, vertical tab, form feed, carriage return, space.
    space: u64,
    /// `\r`, `\n`.
    brk: u64,
    /// ' ' only.
    blank: u64,
    slash: u64,
    apos: u64,
    end: u64,
}

/// The masks of the 64 bytes of `bytes` (ASCII, and 0x80 past the run's
/// end, which no ASCII class holds), of which `valid` are the run's.
#[inline(always)]
fn classify(bytes: &[u8; WINDOW], valid: usize) -> Masks {
    // SAFETY: SSE2 is baseline on x86_64; the loads read bytes[16k..16k + 16]
    // for k < 4, within the array.
    unsafe {
        let mut m = [0u64; 8];
        for k in 0..WINDOW / 16 {
            let x = _mm_loadu_si128(bytes.as_ptr().add(16 * k) as *const __m128i);
            // Bytes are ASCII or 0x80 (negative as i8): signed compares test
            // ranges, and 0x80 is below every bound.
            let range = |lo: u8, hi: u8| {
                _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(lo as i8 - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8(hi as i8 + 1)))
            };
            let eq = |c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
            let bits = |v: __m128i| (_mm_movemask_epi8(v) as u32 as u64) << (16 * k);
            let blank = eq(b' ');
            m[0] |= bits(range(b'A', b'Z'));
            m[1] |= bits(range(b'a', b'z'));
            m[2] |= bits(range(b'0', b'9'));
            m[3] |= bits(_mm_or_si128(range(b'\t', b'\r'), blank));
            m[4] |= bits(_mm_or_si128(eq(b'\r'), eq(b'\n')));
            m[5] |= bits(blank);
            m[6] |= bits(eq(b'/'));
            m[7] |= bits(eq(b'\''));
        }
        let end = if valid >= WINDOW { 0 } else { u64::MAX << valid };
        Masks { upper: m[0], lower: m[1], digit: m[2], space: m[3], brk: m[4], blank: m[5], slash: m[6], apos: m[7], end }
    }
}

/// Where the o200k pieces of a window start (bit 0, the window's first
/// byte, starts one: the text is taken to begin there, as no pattern looks
/// behind), from the class masks alone; `None` when the window holds a
/// case these rules leave out (then the byte-at-a-time scanner goes on).
///
/// The rules, for ASCII (L letters, P punctuation `[^\s\p{L}\p{N}]`, W white
/// space, B line breaks, S white space but line breaks):
/// - a run of P starts a piece (`' '?[^\s\p{L}\p{N}]+[\r\n/]*`), but after
///   a space, which starts it; a lone P that letters follow is their prefix;
/// - a run of letters starts one (`[^\r\n\p{L}\p{N}]?` capitals* small+ |
///   capitals+ small*), but after an S or a P that is its prefix; within a
///   run, a capital after a small letter starts one;
/// - a run of digits starts one, and every third digit after (`\p{N}{1,3}`);
/// - a run of W starts one (but its line breaks right after P, which that
///   piece takes); so does its first S after its line breaks (`\s*[\r\n]+`
///   ends at the last), and its last byte when it and the one before are S
///   and text follows (`\s+(?!\S)` leaves the last for the next piece).
///   The last byte of a run of W is thus always a start, as a prefix needs.
///
/// Left out: `'` after a letter (a contraction may follow), `/` after a
/// line break (`[\r\n/]*` may take it) and a line break after S in a run;
/// and the starts within a run of W after its first when the window does
/// not see the run end.
///
/// cl100k (`CL100K`): the same rules but two. A run of letters is one piece
/// whatever their case (`[^\r\n\p{L}\p{N}]?+\p{L}++`), and a punctuation run
/// takes the line breaks after it but not `/` (`[\r\n]*+`). Its
/// contractions are pieces of their own wherever `'` is (`'(?i:[sdmt]|ll|ve|re)`
/// comes first): left out, any `'` before a letter. And white space at
/// the end of the run is one piece (`\s++$`, before `\s*[\r\n]`).
#[inline(always)]
fn starts<const CL100K: bool>(w: &Masks) -> Option<u64> {
    let prev = |m: u64| m << 1;
    let next = |m: u64| m >> 1;
    let letter = w.upper | w.lower;
    let punct = !(letter | w.digit | w.space | w.end);
    let s = w.space & !w.brk;
    let left_out = if CL100K {
        (w.apos & next(letter)) | (w.brk & prev(s))
    } else {
        (w.apos & prev(letter)) | (w.slash & prev(w.brk)) | (w.brk & prev(s))
    };
    if left_out != 0 {
        return None;
    }
    let punct_start = punct & !prev(punct);
    let punct_prefix = punct_start & !prev(w.blank) & next(letter);
    let mut letters = letter & !prev(letter) & !prev(s) & !prev(punct_prefix);
    if !CL100K {
        letters |= w.upper & prev(w.lower);
    }
    let puncts = punct_start & !prev(w.blank);
    let spaces = (w.space & !prev(w.space) & !(w.brk & prev(punct))) | (s & prev(w.brk)) | (s & prev(s) & !next(w.space) & !next(w.end));
    // Digits: a run's first, then every third while the run goes on.
    let run4 = w.digit & prev(w.digit) & prev(prev(w.digit)) & prev(prev(prev(w.digit)));
    let mut group = w.digit & !prev(w.digit);
    let mut digits = group;
    while group != 0 {
        group = (group << 3) & run4;
        digits |= group;
    }
    let mut all = 1 | letters | puncts | spaces | digits;
    // cl100k's `\s++$` comes before its other white-space patterns: the
    // white space that ends the run (the text's end, or a cut point's:
    // see `is_cut`) is one piece from its first start on.
    if CL100K && w.end != 0 {
        let valid = w.end.trailing_zeros();
        let tail = (w.space << (64 - valid)).leading_ones();
        if tail > 0 {
            let region = (u64::MAX >> (64 - tail)) << (valid - tail);
            let first = (all & region) & (all & region).wrapping_neg();
            all = (all & !region) | first;
        }
    }
    // A run of W that the window does not see end may hold a line break
    // further on, which moves its starts: only its first is known.
    if w.space >> 63 == 1 {
        let first = 64 - (!w.space).leading_zeros();
        return Some(all & (u64::MAX >> (63 - first.min(63))));
    }
    Some(all)
}

/// Where [`walk`] hands the pieces of a run.
trait Sink {
    /// The pieces of a window at `base`: one starts at each bit of `starts`
    /// below `last` and ends at the next bit (`last`'s is set); `digit` is
    /// the window's digits.
    fn window(&mut self, base: usize, starts: u64, last: u32, digit: u64);
    /// A piece the byte-at-a-time scanner found.
    fn piece(&mut self, start: usize, end: usize);
}

/// Bits 0..=RELIABLE.
const RELIABLE_BITS: u64 = u64::MAX >> (63 - RELIABLE);

/// The pieces of the ASCII run `run` (o200k's, or cl100k's), window by
/// window.
#[inline(always)]
fn walk<const CL100K: bool>(run: &[u8], sink: &mut impl Sink) {
    let mut base = 0;
    while base < run.len() {
        // A window at `base`, a piece start. Near the run's end, a copy
        // padded with 0x80.
        let valid = run.len() - base;
        let masks = match run.get(base..base + WINDOW) {
            Some(bytes) => classify(bytes.try_into().unwrap_or(&[0x80; WINDOW]), WINDOW),
            None => {
                let mut tail = [0x80u8; WINDOW];
                tail[..valid].copy_from_slice(&run[base..]);
                classify(&tail, valid)
            }
        };
        // The last start known is where the next window begins, and the
        // pieces before it are whole; when the run ends within the bits
        // known, its end is that start.
        let all = starts::<CL100K>(&masks).map(|all| all & RELIABLE_BITS);
        let last = match all {
            Some(_) if valid <= RELIABLE as usize => valid as u32,
            Some(all) => 63 - all.leading_zeros(),
            None => 0,
        };
        if last == 0 {
            // One piece over the whole window, or a case the masks leave
            // out: the byte-at-a-time scanner, up to the window's end.
            let stop = base + WINDOW;
            while base < run.len() && base < stop {
                let end = if CL100K { cl100k_ascii_piece(run, base) } else { o200k_ascii_piece(run, base) };
                sink.piece(base, end);
                base = end;
            }
            continue;
        }
        sink.window(base, all.unwrap_or(1) | (1u64 << last), last, masks.digit);
        base += last as usize;
    }
}

/// `LOW[n]`, `HIGH[n]`: the bytes of a piece of `n` bytes in the first and
/// the second of two little-endian words.
const LOW: [u64; 17] = {
    let mut t = [u64::MAX; 17];
    let mut n = 0;
    while n < 8 {
        t[n] = (1u64 << (8 * n)) - 1;
        n += 1;
    }
    t
};
const HIGH: [u64; 17] = {
    let mut t = [0u64; 17];
    let mut n = 9;
    while n <= 16 {
        t[n] = if n == 16 { u64::MAX } else { (1u64 << (8 * (n - 8))) - 1 };
        n += 1;
    }
    t
};

/// [`Bpe::count`]'s sum over a run.
struct Count<'a> {
    bpe: &'a Bpe,
    run: &'a [u8],
    memo: &'a mut Memo,
    n: usize,
}

impl Count<'_> {
    /// The count of the piece `run[start..start + len]`, 2 bytes or more
    /// and not digits: from the memo, its key loaded from the run.
    #[inline(always)]
    fn lookup(&mut self, start: usize, len: usize) -> usize {
        let run = self.run;
        match (run.get(start..start + 16), run.get(start..start + len)) {
            (Some(w), Some(piece)) if len <= MEMO_MAX_PIECE => {
                let a = u64::from_le_bytes(w[..8].try_into().unwrap_or_default()) & LOW[len];
                let b = u64::from_le_bytes(w[8..].try_into().unwrap_or_default()) & HIGH[len];
                self.bpe.memo_count(piece, a, b, self.memo)
            }
            (_, Some(piece)) => self.bpe.count_piece(piece, Some(&mut *self.memo)),
            _ => 0,
        }
    }
}

impl Sink for Count<'_> {
    #[inline(always)]
    fn window(&mut self, base: usize, starts: u64, last: u32, digit: u64) {
        let pieces = starts & ((1u64 << last) - 1);
        // A piece of one byte (the next starts right after) or of digits is
        // one token: counted together, without a lookup.
        let ones = pieces & ((starts >> 1) | digit);
        self.n += ones.count_ones() as usize;
        let mut rest = pieces & !ones;
        while rest != 0 {
            let j = rest.trailing_zeros();
            rest &= rest - 1;
            let len = (starts >> (j + 1)).trailing_zeros() as usize + 1;
            self.n += self.lookup(base + j as usize, len);
        }
    }

    #[inline(always)]
    fn piece(&mut self, start: usize, end: usize) {
        self.n += if end - start == 1 || self.run[start].is_ascii_digit() { 1 } else { self.lookup(start, end - start) };
    }
}

/// The count of an ASCII run (see `Counter`) in o200k, or in cl100k
/// (`CL100K`), with the memo.
pub(super) fn count_ascii_run<const CL100K: bool>(bpe: &Bpe, run: &[u8], memo: &mut Memo) -> usize {
    let mut count = Count { bpe, run, memo, n: 0 };
    walk::<CL100K>(run, &mut count);
    count.n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces as (start, length).
    type Spans = Vec<(usize, usize)>;

    /// The pieces [`walk`] finds.
    struct List(Spans);

    impl Sink for List {
        fn window(&mut self, base: usize, starts: u64, last: u32, _: u64) {
            let mut rest = starts & ((1u64 << last) - 1);
            while rest != 0 {
                let j = rest.trailing_zeros();
                rest &= rest - 1;
                self.0.push((base + j as usize, (starts >> (j + 1)).trailing_zeros() as usize + 1));
            }
        }

        fn piece(&mut self, start: usize, end: usize) {
            self.0.push((start, end - start));
        }
    }

    /// Pieces of `run` by the masks and by the byte-at-a-time scanner.
    fn both<const CL100K: bool>(run: &[u8]) -> (Spans, Spans) {
        let mut fast = List(Vec::new());
        walk::<CL100K>(run, &mut fast);
        let mut slow = Vec::new();
        let mut i = 0;
        while i < run.len() {
            let e = if CL100K { cl100k_ascii_piece(run, i) } else { o200k_ascii_piece(run, i) };
            slow.push((i, e - i));
            i = e;
        }
        (fast.0, slow)
    }

    #[test]
    fn pieces_equal_the_byte_at_a_time_scanner() {
        // Texts from alphabets that make every pattern and its edges
        // (contractions, line breaks after punctuation, runs of 16 and more
        // bytes of one class, white space before letters, punctuation and
        // the end), of every length around the window's.
        let alphabets: [&[u8]; 6] =
            [b"aZ0 '\n\r\t/.,:\"{}-", b"abcXYZ  \n", b"ab'sStTmdlrve ", b"12345 ,.\n", b" \t\n\r\x0b\x0c.a", b"aA9 !/\n\r\t\x00\x7f\x1f'"];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..20_000 {
            let alphabet = alphabets[round % alphabets.len()];
            let len = (next() % 300) as usize;
            // Runs: repeat a byte a random number of times (long runs too).
            let mut run = Vec::with_capacity(len);
            while run.len() < len {
                let c = alphabet[(next() % alphabet.len() as u64) as usize];
                let times = if next() % 8 == 0 { (next() % 40) as usize } else { 1 };
                run.extend(std::iter::repeat_n(c, times.min(len - run.len()).max(1)));
            }
            let (fast, slow) = both::<false>(&run);
            assert_eq!(fast, slow, "o200k {:?}", String::from_utf8_lossy(&run));
            let (fast, slow) = both::<true>(&run);
            assert_eq!(fast, slow, "cl100k {:?}", String::from_utf8_lossy(&run));
        }
    }

    #[test]
    fn counts_equal_the_byte_at_a_time_counter_on_the_corpus_shapes() {
        let bpe = Bpe::get(crate::tokens::Encoding::O200kBase);
        let texts = [
            "{\"metrics\":[{\"date\":\"2020-01-01\",\"views\":5555,\"clicks\":383,\"revenue\":3540.24}]}".repeat(7),
            "metrics[2]{date,views}:\n  2020-01-01,5555\n  2020-01-02,6726\n".repeat(9),
            "I'll say it's THE end, don't you? HTTPServer fooBar  \t\n\n  x /path//to\n/ ==== ".repeat(5),
        ];
        let cl100k = Bpe::get(crate::tokens::Encoding::Cl100kBase);
        for t in &texts {
            let mut memo = vec![crate::tokens::MemoSlot::default(); crate::tokens::MEMO_SLOTS];
            let fast = count_ascii_run::<false>(bpe, t.as_bytes(), &mut memo);
            let slow = bpe.split(t).iter().map(|p| bpe.count_piece(p.as_bytes(), None)).sum::<usize>();
            assert_eq!(fast, slow, "{t}");
            let mut memo = vec![crate::tokens::MemoSlot::default(); crate::tokens::MEMO_SLOTS];
            let fast = count_ascii_run::<true>(cl100k, t.as_bytes(), &mut memo);
            let slow = cl100k.split(t).iter().map(|p| cl100k.count_piece(p.as_bytes(), None)).sum::<usize>();
            assert_eq!(fast, slow, "cl100k {t}");
        }
    }
}
