//! tiktoken's pre-tokenizer patterns (`O200K_PATTERN`, `CL100K_PATTERN` in
//! `tokens.rs`) as hand-written scanners over any text: the pieces are the
//! ones `fancy-regex` finds, one after another, several times faster (the
//! regex's backtracking VM runs at 40–90 MB/s).
//!
//! The character classes are not typed in here: they are built once, at
//! load, from `regex-syntax` (the crate `fancy-regex` and `regex` compile
//! the patterns' classes with), so they are the regex's to the code point
//! and follow its Unicode version. The tests check the pieces against the
//! regex itself.

use std::sync::OnceLock;

/// Class bits of a code point (the general categories are disjoint, and
/// `\s` — White_Space — holds none of their characters).
const LU: u8 = 1;
const LL: u8 = 2;
const LT: u8 = 4;
const LM: u8 = 8;
const LO: u8 = 16;
const MARK: u8 = 32;
const NUM: u8 = 64;
const SPACE: u8 = 128;
/// `\p{L}`.
const LETTER: u8 = LU | LL | LT | LM | LO;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const UPPER: u8 = LU | LT | LM | LO | MARK;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const LOWER: u8 = LL | LM | LO | MARK;
/// In both of o200k's letter classes: the greedy upper part may give these
/// back to the lower part.
const BOTH: u8 = UPPER & LOWER;

/// The patterns' character classes, for every code point.
pub(crate) struct Classes {
    /// The class bits of ASCII characters (the common case, one load).
    ascii: [u8; 128],
    /// Two-level table: `index[cp >> 8]` is a block of `blocks` (256 class
    /// bytes each; equal blocks are stored once, so all of Unicode takes
    /// about 100 KB).
    index: Box<[u16]>,
    blocks: Box<[u8]>,
    /// Non-ASCII characters that `(?i)` folds to one of the contractions'
    /// letters, with that letter (`ſ` → `s`, as Unicode simple case folding).
    folds: Box<[(u32, u8)]>,
}

static CLASSES: OnceLock<Classes> = OnceLock::new();

/// The classes, built on first use (a few milliseconds).
pub(crate) fn classes() -> &'static Classes {
    CLASSES.get_or_init(Classes::build)
}

/// The code points of a class as `regex-syntax` parses it.
fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class, HirKind};
    // The patterns are constants that `regex-syntax` parses: a failure is a
    // broken build, not bad input.
    let hir = regex_syntax::parse(pattern).expect("a Unicode class parses");
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect(),
        _ => panic!("{pattern} is not a Unicode class"),
    }
}

impl Classes {
    fn build() -> Classes {
        const CP_COUNT: usize = 0x11_0000;
        let mut all = vec![0u8; CP_COUNT];
        for (pattern, bit) in [
            (r"\p{Lu}", LU),
            (r"\p{Ll}", LL),
            (r"\p{Lt}", LT),
            (r"\p{Lm}", LM),
            (r"\p{Lo}", LO),
            (r"\p{M}", MARK),
            (r"\p{N}", NUM),
            (r"\s", SPACE),
        ] {
            for (lo, hi) in class_ranges(pattern) {
                for slot in all.iter_mut().take(hi as usize + 1).skip(lo as usize) {
                    *slot |= bit;
                }
            }
        }
        let mut ascii = [0u8; 128];
        ascii.copy_from_slice(&all[..128]);
        let mut seen: std::collections::HashMap<&[u8], u16> = std::collections::HashMap::new();
        let mut index = Vec::with_capacity(CP_COUNT >> 8);
        let mut blocks = Vec::new();
        for block in all.chunks(256) {
            let next = seen.len() as u16;
            let k = *seen.entry(block).or_insert_with(|| {
                blocks.extend_from_slice(block);
                next
            });
            index.push(k);
        }
        // The contractions' letters and what `(?i)` makes of them: the
        // simple case-fold class of each, as fancy-regex builds it.
        let mut folds = Vec::new();
        for letter in *b"stmdrvel" {
            let mut class =
                regex_syntax::hir::ClassUnicode::new([regex_syntax::hir::ClassUnicodeRange::new(char::from(letter), char::from(letter))]);
            class.case_fold_simple();
            for r in class.ranges() {
                for cp in u32::from(r.start())..=u32::from(r.end()) {
                    if cp >= 0x80 {
                        folds.push((cp, letter));
                    }
                }
            }
        }
        Classes { ascii, index: index.into(), blocks: blocks.into(), folds: folds.into() }
    }

    #[inline]
    fn class(&self, cp: u32) -> u8 {
        if cp < 0x80 {
            return self.ascii.get(cp as usize).copied().unwrap_or(0);
        }
        let block = self.index.get((cp >> 8) as usize).copied().unwrap_or(0) as usize;
        self.blocks.get(block << 8 | (cp & 0xff) as usize).copied().unwrap_or(0)
    }

    /// The character at `i` of `b` (valid UTF-8), its class and where the
    /// next one starts; `None` at the end.
    #[inline(always)]
    fn at(&self, b: &[u8], i: usize) -> Option<Ch> {
        let c0 = *b.get(i)?;
        if c0 < 0x80 {
            return Some(Ch { cp: u32::from(c0), cls: self.ascii[usize::from(c0)], next: i + 1 });
        }
        let (cp, next) = decode(b, i, c0);
        Some(Ch { cp, cls: self.class(cp), next })
    }

    /// The lower-case ASCII letter `(?i)` matches `cp` as (for the
    /// contractions), or 0.
    #[inline]
    fn fold(&self, cp: u32) -> u8 {
        if cp < 0x80 {
            return (cp as u8).to_ascii_lowercase();
        }
        self.folds.iter().find(|&&(c, _)| c == cp).map_or(0, |&(_, l)| l)
    }

    /// A contraction at `i` (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`,
    /// case-insensitive as `(?i:...)` is: Unicode simple case folding): its end.
    #[inline]
    fn contraction(&self, b: &[u8], i: usize) -> Option<usize> {
        if b.get(i) != Some(&b'\'') {
            return None;
        }
        let c1 = self.at(b, i + 1)?;
        let l1 = self.fold(c1.cp);
        if matches!(l1, b's' | b't' | b'm' | b'd') {
            return Some(c1.next);
        }
        if !matches!(l1, b'r' | b'v' | b'l') {
            return None;
        }
        let c2 = self.at(b, c1.next)?;
        let l2 = self.fold(c2.cp);
        matches!((l1, l2), (b'r', b'e') | (b'v', b'e') | (b'l', b'l')).then_some(c2.next)
    }

    /// The end of the run of characters from `i` whose class bits `keep`
    /// accepts.
    #[inline(always)]
    fn run(&self, b: &[u8], mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
        while let Some(c) = self.at(b, i) {
            if !keep(c.cls) {
                break;
            }
            i = c.next;
        }
        i
    }

    /// o200k's `[U]*[L]+` and `[U]+[L]*` (U, L: `UPPER`, `LOWER`) at `j`:
    /// the end of the first's match, else of the second's.
    ///
    /// `[U]*` takes the run of U characters, then gives them back one by
    /// one until `[L]+` matches: at once if the run is followed by an `Ll`
    /// (`[L]+` then takes the run of L characters), else at the run's last
    /// character that is L too (`Lm`, `Lo`, `M`), which `[L]+` takes alone
    /// (the characters after it in the run are `Lu`/`Lt`, and the one after
    /// the run is neither U nor `Ll`). With no such character, `[U]+[L]*`
    /// takes the run (if any), and `[L]*` nothing.
    #[inline]
    fn upper_lower(&self, b: &[u8], j: usize) -> Letters {
        let mut e = j;
        let mut last_both = None;
        while let Some(c) = self.at(b, e) {
            if c.cls & UPPER != 0 {
                if c.cls & BOTH != 0 {
                    last_both = Some(c.next);
                }
                e = c.next;
            } else if c.cls & LL != 0 {
                return Letters::First(self.run(b, c.next, |k| k & LOWER != 0));
            } else {
                break;
            }
        }
        match last_both {
            Some(f) => Letters::First(f),
            None if e > j => Letters::Second(e),
            None => Letters::None,
        }
    }

    /// The end of the run of white space at `i` and the end of its last
    /// line break (`\r`/`\n`) if it has one, and where its last character
    /// starts.
    #[inline]
    fn space_run(&self, b: &[u8], i: usize) -> (usize, Option<usize>, usize) {
        let (mut w, mut last_break, mut last) = (i, None, i);
        while let Some(c) = self.at(b, w) {
            if c.cls & SPACE == 0 {
                break;
            }
            if c.cp == u32::from(b'\r') || c.cp == u32::from(b'\n') {
                last_break = Some(c.next);
            }
            last = w;
            w = c.next;
        }
        (w, last_break, last)
    }

    /// The end of the white-space piece at `i`: `\s*[\r\n]+` (o200k) /
    /// `\s*[\r\n]` (cl100k) up to the run's last line break, else
    /// `\s+(?!\S)` (the run but its last character when a non-space follows;
    /// the whole run at the end), else `\s+` / `\s` (one character). With
    /// `to_end` (cl100k's `\s++$`, tried first), a run that reaches the end
    /// is one piece.
    #[inline]
    fn space_piece(&self, b: &[u8], i: usize, to_end: bool) -> usize {
        let (w, last_break, last) = self.space_run(b, i);
        if to_end && w >= b.len() {
            return w;
        }
        if let Some(e) = last_break {
            return e;
        }
        if w >= b.len() || last == i {
            return w;
        }
        last
    }

    /// A digits piece (`\p{N}{1,3}`) at `c` (`i`), else a punctuation piece
    /// (`' '?[^\s\p{L}\p{N}]+` then line breaks, and `/` with `slash`:
    /// o200k's `[\r\n/]*`, cl100k's `[\r\n]*`): its end.
    #[inline]
    fn digits_or_punct(&self, b: &[u8], i: usize, c: Ch, slash: bool) -> Option<usize> {
        if c.cls & NUM != 0 {
            let mut e = c.next;
            for _ in 0..2 {
                match self.at(b, e) {
                    Some(d) if d.cls & NUM != 0 => e = d.next,
                    _ => break,
                }
            }
            return Some(e);
        }
        const NOT_PUNCT: u8 = SPACE | LETTER | NUM;
        let from = if c.cls & NOT_PUNCT == 0 {
            i
        } else if c.cp == u32::from(b' ') && self.at(b, c.next).is_some_and(|d| d.cls & NOT_PUNCT == 0) {
            c.next
        } else {
            return None;
        };
        let mut e = self.run(b, from, |k| k & NOT_PUNCT == 0);
        // The punctuation run ends before white space, a letter or a digit
        // (or `/` is punctuation): only line breaks and `/` remain to take,
        // all ASCII.
        while let Some(&x) = b.get(e) {
            if !(x == b'\r' || x == b'\n' || (slash && x == b'/')) {
                break;
            }
            e += 1;
        }
        Some(e)
    }

    /// The end of o200k's piece at `i` of `b` (`i < b.len()`): the pattern's
    /// match there.
    pub(crate) fn o200k_piece(&self, b: &[u8], i: usize) -> usize {
        let Some(c) = self.at(b, i) else { return b.len() };
        // `[^\r\n\p{L}\p{N}]?` then the letters (`UPPER`/`LOWER`), then a
        // contraction. The optional character is tried first, and each
        // letters form with it before without it; the first form is tried
        // (with and without) before the second.
        let lead = c.cp != u32::from(b'\r') && c.cp != u32::from(b'\n') && c.cls & (LETTER | NUM) == 0;
        let with = if lead { self.upper_lower(b, c.next) } else { Letters::None };
        if let Letters::First(e) = with {
            return self.contraction(b, e).unwrap_or(e);
        }
        let without = if c.cls & (UPPER | LOWER) != 0 { self.upper_lower(b, i) } else { Letters::None };
        if let Letters::First(e) = without {
            return self.contraction(b, e).unwrap_or(e);
        }
        if let Letters::Second(e) = with {
            return self.contraction(b, e).unwrap_or(e);
        }
        if let Letters::Second(e) = without {
            return self.contraction(b, e).unwrap_or(e);
        }
        self.digits_or_punct(b, i, c, true).unwrap_or_else(|| self.space_piece(b, i, false))
    }

    /// The end of cl100k's piece at `i` of `b` (`i < b.len()`).
    pub(crate) fn cl100k_piece(&self, b: &[u8], i: usize) -> usize {
        // '(?i:[sdmt]|ll|ve|re)
        if let Some(e) = self.contraction(b, i) {
            return e;
        }
        let Some(c) = self.at(b, i) else { return b.len() };
        // [^\r\n\p{L}\p{N}]?+\p{L}++: the optional character is possessive
        // (a non-letter is taken, and then a letter must follow).
        if c.cls & LETTER != 0 {
            return self.run(b, c.next, |k| k & LETTER != 0);
        }
        if c.cp != u32::from(b'\r') && c.cp != u32::from(b'\n') && c.cls & NUM == 0 {
            if let Some(d) = self.at(b, c.next).filter(|d| d.cls & LETTER != 0) {
                return self.run(b, d.next, |k| k & LETTER != 0);
            }
        }
        // \p{N}{1,3}+, then ' '?[^\s\p{L}\p{N}]++[\r\n]*+
        self.digits_or_punct(b, i, c, false).unwrap_or_else(|| self.space_piece(b, i, true))
    }
}

/// A character: its code point, class bits and the index after it.
#[derive(Clone, Copy)]
struct Ch {
    cp: u32,
    cls: u8,
    next: usize,
}

/// What o200k's two letters forms match at a point (see `upper_lower`).
#[derive(Clone, Copy)]
enum Letters {
    First(usize),
    Second(usize),
    None,
}

/// The code point of the multi-byte UTF-8 sequence at `i` (lead byte `c0`)
/// of valid UTF-8, and where it ends. Missing bytes (impossible in a `str`)
/// read as zero rather than panic.
#[inline(always)]
fn decode(b: &[u8], i: usize, c0: u8) -> (u32, usize) {
    let cont = |k: usize| b.get(i + k).map_or(0, |&c| u32::from(c & 0x3f));
    if c0 < 0xe0 {
        (u32::from(c0 & 0x1f) << 6 | cont(1), i + 2)
    } else if c0 < 0xf0 {
        (u32::from(c0 & 0x0f) << 12 | cont(1) << 6 | cont(2), i + 3)
    } else {
        (u32::from(c0 & 0x07) << 18 | cont(1) << 12 | cont(2) << 6 | cont(3), i + 4)
    }
}
