//! Exact token counts: OpenAI's BPE encodings (`o200k_base`, `cl100k_base`),
//! identical to `tiktoken`'s `encode_ordinary`, and Hugging Face
//! `tokenizer.json` files (through the `tokenizers` crate).
//!
//! The ranks come from the rank files the `tiktoken-rs` crate ships (nothing
//! is downloaded), turned at build time into tables read in place
//! (`tokens_table.rs`: no parsing at first use). Counting does not go through its `CoreBPE`,
//! though: that is slower than the JavaScript tokenizers, and quadratic in
//! the length of a piece. Here:
//!
//! - text is cut where no piece of the encoding's pre-tokenizer regex can
//!   cross (line breaks, spaces before words: see `is_cut`); ASCII parts are
//!   pre-tokenized by a hand-written scanner equal to the regex on ASCII
//!   (for o200k on x86_64, from bit masks of 64 bytes at a time:
//!   `tokens_window.rs`), and from the cut point before a non-ASCII character on to the next
//!   long ASCII part, a scanner equal to the regex on any text does it
//!   (`tokens_scan.rs`; tiktoken runs the regex with `fancy-regex`, several
//!   times slower: the tests check the scanners against it);
//! - a piece that is a token counts one with a single lookup; others are
//!   merged as tiktoken merges them (lowest rank first, leftmost of equals),
//!   with a heap for long pieces so that a megabyte of spaces stays
//!   `O(n log n)`, and short pieces' counts are remembered per thread.
//!
//! Special-token text (`<|endoftext|>`) is ordinary text here, as in
//! `encode_ordinary`: prompts are data.

use std::borrow::Cow;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use crate::error::{Error, Format, Result};

pub use hf::HfTokenizer;

#[path = "tokens_hf.rs"]
mod hf;
#[path = "tokens_long.rs"]
mod long;
#[path = "tokens_scan.rs"]
mod scan;
#[path = "tokens_table.rs"]
mod table;
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
#[path = "tokens_window.rs"]
mod window;

/// A built-in BPE encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5 and the o-series (the default).
    O200kBase,
    /// GPT-4 and GPT-3.5-turbo.
    Cl100kBase,
}

impl Encoding {
    /// Every built-in encoding, the default first.
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    /// tiktoken's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The encoding tiktoken names `name`.
    pub fn from_name(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The number of ordinary tokens (ranks `0..n`, special tokens aside).
    #[cfg(test)]
    fn ordinary_tokens(self) -> u32 {
        match self {
            Encoding::O200kBase => 199_998,
            Encoding::Cl100kBase => 100_256,
        }
    }
}

/// tiktoken's pre-tokenizer patterns (`tiktoken_ext/openai_public.py`),
/// which the scanners implement (the tests run them as the oracle).
#[cfg_attr(not(test), allow(dead_code))]
const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);
#[cfg_attr(not(test), allow(dead_code))]
const CL100K_PATTERN: &str =
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// Pieces at most this long have their counts remembered (per thread).
const MEMO_MAX_PIECE: usize = 16;
/// Slots of a thread's memo, per encoding (direct-mapped: a piece has one
/// slot, and a newer piece takes it). Small enough to stay in a core's
/// cache, where the rank table is not: text repeats its pieces (keys,
/// punctuation, indentation), so most lookups end here.
const MEMO_SLOTS: usize = 1 << 13;
/// Texts in all at least this long are counted on two threads.
const PARALLEL_FROM: usize = 32 * 1024;
/// The Unicode scanner hands back to the ASCII one at a cut point that this
/// many ASCII bytes follow (switching costs a search for cut points).
const ASCII_AHEAD: usize = 32;
/// Pieces longer than this merge with a heap rather than tiktoken's scan.
const HEAP_MERGE_FROM: usize = 96;

/// A remembered piece: its bytes packed (see [`pack`]), its length (0: an
/// empty slot) and its count.
#[derive(Clone, Copy, Default)]
struct MemoSlot {
    a: u64,
    b: u64,
    len: u32,
    count: u32,
}

type Memo = Vec<MemoSlot>;

thread_local! {
    static MEMO: RefCell<[Memo; 2]> = const { RefCell::new([Vec::new(), Vec::new()]) };
}

/// Pieces longer than [`MEMO_MAX_PIECE`] and up to this long are remembered
/// in a second, hashed memo: a word of a script written without spaces
/// (Chinese, Japanese) is one long piece, and merging it again costs about
/// a microsecond, fifty times a lookup.
const LONG_MEMO_MAX_PIECE: usize = 128;
/// The long pieces' memo is emptied when it holds this many.
const LONG_MEMO_PIECES: usize = 4096;

thread_local! {
    static LONG_MEMO: RefCell<[FxHashMap<Box<[u8]>, u32>; 2]> = RefCell::new([FxHashMap::default(), FxHashMap::default()]);
}

/// One of the built-in byte-pair encodings, loaded.
pub struct Bpe {
    encoding: Encoding,
    ranks: table::RankTable,
    classes: &'static scan::Classes,
}

/// The bytes of a piece of at most 16 bytes as two little-endian words,
/// zero-padded (the length tells padding from zero bytes).
#[inline]
fn pack(bytes: &[u8]) -> (u64, u64) {
    let mut buf = [0u8; 16];
    buf[..bytes.len()].copy_from_slice(bytes);
    let (a, b) = buf.split_at(8);
    (u64::from_le_bytes(a.try_into().unwrap_or_default()), u64::from_le_bytes(b.try_into().unwrap_or_default()))
}

impl std::fmt::Debug for Bpe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bpe").field("encoding", &self.encoding).field("tokens", &self.ranks.len()).finish()
    }
}

/// Where the pre-tokenizer hands its pieces: one by one, or (a counter's
/// fast path) a whole run of ASCII text at a time.
trait Pieces<'t> {
    fn piece(&mut self, piece: &'t [u8]);

    /// The pieces of `run`, ASCII text that starts at a cut point (see
    /// [`is_cut`]) and ends at one or at the end.
    fn ascii_run(&mut self, bpe: &Bpe, run: &'t [u8]) {
        let mut i = 0;
        while i < run.len() {
            let e = bpe.ascii_piece_end(run, i);
            self.piece(&run[i..e]);
            i = e;
        }
    }
}

impl<'t, F: FnMut(&'t [u8])> Pieces<'t> for F {
    #[inline]
    fn piece(&mut self, piece: &'t [u8]) {
        self(piece)
    }
}

/// [`Bpe::count`]'s sink: the sum of the pieces' counts.
struct Counter<'b, 'm> {
    bpe: &'b Bpe,
    memo: Option<&'m mut Memo>,
    n: usize,
}

impl<'t> Pieces<'t> for Counter<'_, '_> {
    #[inline]
    fn piece(&mut self, piece: &'t [u8]) {
        self.n += self.bpe.count_piece(piece, self.memo.as_deref_mut());
    }

    /// Scans and counts in one loop ([`count_ascii_run`]).
    fn ascii_run(&mut self, bpe: &Bpe, run: &'t [u8]) {
        let Some(memo) = self.memo.as_deref_mut().filter(|m| !m.is_empty()) else {
            let mut i = 0;
            while i < run.len() {
                let e = bpe.ascii_piece_end(run, i);
                self.n += self.bpe.count_piece(&run[i..e], None);
                i = e;
            }
            return;
        };
        self.n += match bpe.encoding {
            // x86_64: pieces from class bit masks (`tokens_window.rs`).
            #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
            Encoding::O200kBase => window::count_ascii_run::<false>(bpe, run, memo),
            #[cfg(not(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable")))))]
            Encoding::O200kBase => count_ascii_run(bpe, run, memo, o200k_ascii_piece),
            #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
            Encoding::Cl100kBase => window::count_ascii_run::<true>(bpe, run, memo),
            #[cfg(not(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable")))))]
            Encoding::Cl100kBase => count_ascii_run(bpe, run, memo, cl100k_ascii_piece),
        };
    }
}

/// The count of an ASCII run (see [`Counter`]), with the encoding's scanner
/// inlined. A piece of 2..=16 bytes is packed into its memo key with two
/// 8-byte loads from the run and a mask, not a copy (but in the run's last
/// 16 bytes).
#[cfg(not(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable")))))]
#[inline(always)]
fn count_ascii_run(bpe: &Bpe, run: &[u8], memo: &mut Memo, piece_end: impl Fn(&[u8], usize) -> usize) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < run.len() {
        let e = piece_end(run, i);
        let len = e - i;
        // A piece that starts with a digit is one to three digits, and each
        // of those 1,110 strings is a token in both encodings (a test
        // checks): no lookup.
        n += if len == 1 || run[i].is_ascii_digit() {
            1
        } else if len <= MEMO_MAX_PIECE && i + 16 <= run.len() {
            let word = |k: usize| u64::from_le_bytes(run[k..k + 8].try_into().unwrap_or_default());
            let mask = |bytes: usize| if bytes >= 8 { u64::MAX } else { (1u64 << (8 * bytes)) - 1 };
            let (a, b) = if len <= 8 { (word(i) & mask(len), 0) } else { (word(i), word(i + 8) & mask(len - 8)) };
            bpe.memo_count(&run[i..e], a, b, memo)
        } else {
            bpe.count_piece(&run[i..e], Some(&mut *memo))
        };
        i = e;
    }
    n
}

static O200K: OnceLock<Bpe> = OnceLock::new();
static CL100K: OnceLock<Bpe> = OnceLock::new();

impl Bpe {
    /// The encoding, loaded on first use (about 0.1–0.3 s) and kept.
    pub fn get(encoding: Encoding) -> &'static Bpe {
        match encoding {
            Encoding::O200kBase => O200K.get_or_init(|| Bpe::load(encoding)),
            Encoding::Cl100kBase => CL100K.get_or_init(|| Bpe::load(encoding)),
        }
    }

    fn load(encoding: Encoding) -> Bpe {
        // The table is in the binary, read in place (`tokens_table.rs`).
        Bpe { encoding, ranks: table::RankTable::get(encoding), classes: scan::classes() }
    }

    /// Which encoding this is.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The number of tokens in `text`: `len(enc.encode_ordinary(text))`.
    /// Fails (`LLM_OUT_OF_MEMORY`) only when a long piece needs more memory
    /// than can be had, which windows (`tokens_long.rs`) make all but
    /// impossible.
    pub fn count(&self, text: &str) -> Result<usize> {
        checked(|| self.count_unchecked(text))
    }

    fn count_unchecked(&self, text: &str) -> usize {
        let slot = self.encoding as usize;
        MEMO.with(|memo| {
            // A re-entrant call (none is possible today) would find the memo
            // borrowed; it counts without it rather than panic.
            let mut guard = memo.try_borrow_mut();
            let mut memo = guard.as_mut().ok().map(|m| &mut m[slot]);
            if let Some(m) = memo.as_deref_mut() {
                if m.is_empty() {
                    m.resize(MEMO_SLOTS, MemoSlot::default());
                }
            }
            let mut counter = Counter { bpe: self, memo, n: 0 };
            self.for_each_piece(text, &mut counter);
            counter.n
        })
    }

    /// The token ids of `text`, as `enc.encode_ordinary(text)` gives them.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        checked(|| {
            let mut out = Vec::new();
            self.for_each_piece(text, &mut |piece| match self.ranks.rank(piece) {
                Some(rank) => out.push(rank),
                None => self.merge(piece, |token| out.push(self.rank(token))),
            });
            out
        })
    }

    /// The pieces of `text` as tiktoken's regex cuts it.
    pub fn split<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        self.for_each_piece(text, &mut |piece| {
            // Pieces are whole characters of `text`.
            out.push(std::str::from_utf8(piece).unwrap_or_default());
        });
        out
    }

    fn rank(&self, token: &[u8]) -> u32 {
        // Every merge result and every single byte is a token.
        self.ranks.rank(token).unwrap_or(u32::MAX)
    }

    fn for_each_piece<'t>(&self, text: &'t str, f: &mut impl Pieces<'t>) {
        // ASCII runs go to the ASCII scanner, up to the last cut point (see
        // `is_cut`) before a non-ASCII character; from there, the Unicode
        // scanner, until a piece ends at a cut point that a long ASCII run
        // follows. (Running the Unicode scanner over dense non-ASCII text
        // beats cutting around each character; on ASCII, the ASCII scanner
        // is the faster.)
        let b = text.as_bytes();
        let mut start = 0;
        while start < b.len() {
            let Some(q) = first_non_ascii(b, start) else {
                f.ascii_run(self, &b[start..]);
                return;
            };
            let before = (start + 1..=q).rev().find(|&p| is_cut(b, p)).unwrap_or(start);
            f.ascii_run(self, &b[start..before]);
            start = self.unicode_pieces(b, before, true, f);
        }
    }

    /// The end of the piece at `i` of an ASCII run `b`.
    #[inline]
    fn ascii_piece_end(&self, b: &[u8], i: usize) -> usize {
        match self.encoding {
            Encoding::O200kBase => o200k_ascii_piece(b, i),
            Encoding::Cl100kBase => cl100k_ascii_piece(b, i),
        }
    }

    /// The pieces of the text `b` from `i` (its start or a cut point), as
    /// the Unicode scanner finds them: to the end, or with `to_ascii` only
    /// up to a cut point that [`ASCII_AHEAD`] ASCII bytes (or the end)
    /// follow. Returns where it stopped.
    fn unicode_pieces<'t>(&self, b: &'t [u8], mut i: usize, to_ascii: bool, f: &mut impl Pieces<'t>) -> usize {
        while i < b.len() {
            let e = match self.encoding {
                Encoding::O200kBase => self.classes.o200k_piece(b, i),
                Encoding::Cl100kBase => self.classes.cl100k_piece(b, i),
            };
            // Every piece is at least one character long and ends inside
            // `b`; were a scanner wrong there, the rest would count as one
            // piece rather than loop or panic.
            let e = if e > i && e <= b.len() { e } else { b.len() };
            f.piece(&b[i..e]);
            i = e;
            if to_ascii
                && b.get(i).is_some_and(u8::is_ascii)
                && is_cut(b, i)
                && b.get(i..b.len().min(i + ASCII_AHEAD)).is_some_and(<[u8]>::is_ascii)
            {
                break;
            }
        }
        i
    }

    #[inline]
    fn count_piece(&self, piece: &[u8], memo: Option<&mut Memo>) -> usize {
        if piece.len() == 1 {
            return 1;
        }
        let Some(memo) = memo.filter(|m| !m.is_empty()) else {
            return self.uncached_count(piece);
        };
        if piece.len() > MEMO_MAX_PIECE {
            return self.long_count(piece);
        }
        let (a, b) = pack(piece);
        self.memo_count(piece, a, b, memo)
    }

    /// The count of a piece longer than [`MEMO_MAX_PIECE`], from the long
    /// pieces' memo (up to [`LONG_MEMO_MAX_PIECE`] bytes) or merged.
    fn long_count(&self, piece: &[u8]) -> usize {
        if piece.len() > LONG_MEMO_MAX_PIECE {
            return self.uncached_count(piece);
        }
        LONG_MEMO.with(|memo| {
            // Not re-entered today; were it, count without it.
            let Ok(mut memo) = memo.try_borrow_mut() else {
                return self.uncached_count(piece);
            };
            let memo = &mut memo[self.encoding as usize];
            if let Some(&n) = memo.get(piece) {
                return n as usize;
            }
            let n = self.uncached_count(piece);
            if memo.len() >= LONG_MEMO_PIECES {
                memo.clear();
            }
            memo.insert(piece.into(), n as u32);
            n
        })
    }

    /// The count of `piece` (2..=[`MEMO_MAX_PIECE`] bytes, packed as `a`,
    /// `b`) from the memo, or counted and remembered.
    #[inline]
    fn memo_count(&self, piece: &[u8], a: u64, b: u64, memo: &mut Memo) -> usize {
        let len = piece.len() as u32;
        let h = (a ^ b.rotate_left(29) ^ u64::from(len)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // Two ways: a piece may sit in either slot of its pair; a new one
        // takes the first, after moving the first to the second.
        let set = (h >> 40) as usize & (MEMO_SLOTS - 2);
        let hit = |s: &MemoSlot| s.len == len && s.a == a && s.b == b;
        if hit(&memo[set]) {
            return memo[set].count as usize;
        }
        if hit(&memo[set + 1]) {
            return memo[set + 1].count as usize;
        }
        let n = self.uncached_count(piece);
        memo[set + 1] = memo[set];
        memo[set] = MemoSlot { a, b, len, count: n as u32 };
        n
    }

    fn uncached_count(&self, piece: &[u8]) -> usize {
        if self.ranks.rank(piece).is_some() {
            1
        } else {
            self.merged_count(piece)
        }
    }

    fn merged_count(&self, piece: &[u8]) -> usize {
        if piece.len() >= long::SEGMENT_FROM {
            return long::count_long(self, piece).unwrap_or_else(|long::OutOfMemory| {
                OUT_OF_MEMORY.set(Some(piece.len()));
                0
            });
        }
        let mut n = 0;
        self.merge(piece, |_| n += 1);
        n
    }

    /// tiktoken's `_byte_pair_merge`: merge the adjacent pair of lowest rank
    /// (the leftmost of equals) until no pair is a token; hand over each
    /// resulting token in order.
    fn merge(&self, piece: &[u8], mut out: impl FnMut(&[u8])) {
        if piece.len() >= long::SEGMENT_FROM {
            match long::tokens_long(self, piece) {
                Ok(tokens) => tokens.into_iter().for_each(|t| out(&piece[t])),
                Err(long::OutOfMemory) => OUT_OF_MEMORY.set(Some(piece.len())),
            }
            return;
        }
        if piece.len() >= HEAP_MERGE_FROM {
            return self.heap_merge(piece, out);
        }
        let pair_rank = |parts: &[(usize, u32)], i: usize| -> u32 {
            if i + 3 < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 3].0])
            } else {
                u32::MAX
            }
        };
        // parts[i] = (start of part i, rank of part i merged with part i+1)
        let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
        for i in 0..piece.len() - 1 {
            parts.push((i, self.rank(&piece[i..i + 2])));
        }
        parts.push((piece.len() - 1, u32::MAX));
        parts.push((piece.len(), u32::MAX));
        loop {
            let (mut min, mut at) = (u32::MAX, usize::MAX);
            for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
                if r < min {
                    (min, at) = (r, i);
                }
            }
            if min == u32::MAX {
                break;
            }
            if at > 0 {
                parts[at - 1].1 = pair_rank(&parts, at - 1);
            }
            parts[at].1 = pair_rank(&parts, at);
            parts.remove(at + 1);
        }
        for w in parts.windows(2) {
            out(&piece[w[0].0..w[1].0]);
        }
    }

    /// The same merges in `O(n log n)`: a heap of (rank, start) over the
    /// current adjacent pairs pops the lowest rank, leftmost first, as
    /// tiktoken's scan finds it; entries for pairs a merge has changed are
    /// recognised by their end and skipped.
    fn heap_merge(&self, piece: &[u8], mut out: impl FnMut(&[u8])) {
        // Pieces come here up to `long::SEGMENT_FROM` bytes (and windows of
        // that size): the memory is small, and can be had.
        let Some(next) = self.heap_merge_parts(piece) else { return };
        let mut s = 0;
        while s < piece.len() {
            out(&piece[s..next[s]]);
            s = next[s];
        }
    }

    /// The ends of the tokens of `piece` (ascending, the last its length),
    /// or None when the memory for merging it cannot be had.
    fn heap_merge_ends(&self, piece: &[u8]) -> Option<Vec<usize>> {
        let next = self.heap_merge_parts(piece)?;
        let mut ends = Vec::new();
        let mut s = 0;
        while s < piece.len() {
            s = next[s];
            if ends.len() == ends.capacity() {
                ends.try_reserve(ends.len().max(64)).ok()?;
            }
            ends.push(s);
        }
        Some(ends)
    }

    /// The heap merge's parts: `next[s]` is where the token starting at `s`
    /// ends. Memory is asked for fallibly (a whole long piece may come here,
    /// see `tokens_long.rs`).
    fn heap_merge_parts(&self, piece: &[u8]) -> Option<Vec<usize>> {
        let n = piece.len();
        // Parts are identified by their start; next[s] is where the part
        // starting at s ends (n at the end), prev[s] where the one before starts.
        let mut next: Vec<usize> = Vec::new();
        next.try_reserve_exact(n).ok()?;
        next.extend(1..=n);
        let mut prev: Vec<usize> = Vec::new();
        prev.try_reserve_exact(n).ok()?;
        prev.extend((0..n).map(|i| i.wrapping_sub(1)));
        let mut live: Vec<bool> = Vec::new();
        live.try_reserve_exact(n).ok()?;
        live.resize(n, true);
        let mut heap = BinaryHeap::new();
        heap.try_reserve(n).ok()?;
        let push = |heap: &mut BinaryHeap<Reverse<(u32, usize, usize)>>, entry| {
            if heap.len() == heap.capacity() && heap.try_reserve(heap.len()).is_err() {
                return false;
            }
            heap.push(entry);
            true
        };
        for i in 0..n.saturating_sub(1) {
            let r = self.rank(&piece[i..i + 2]);
            if r != u32::MAX && !push(&mut heap, Reverse((r, i, i + 2))) {
                return None;
            }
        }
        while let Some(Reverse((_, s, end))) = heap.pop() {
            let m = next[s];
            if !live[s] || m >= n || next[m] != end {
                continue;
            }
            // Merge the part at s with the one at m.
            live[m] = false;
            next[s] = end;
            if end < n {
                prev[end] = s;
                let r = self.rank(&piece[s..next[end]]);
                if r != u32::MAX && !push(&mut heap, Reverse((r, s, next[end]))) {
                    return None;
                }
            }
            let p = prev[s];
            if p != usize::MAX {
                let r = self.rank(&piece[p..end]);
                if r != u32::MAX && !push(&mut heap, Reverse((r, p, end))) {
                    return None;
                }
            }
        }
        Some(next)
    }

    /// Whether the two tokens `pair[..split]` and `pair[split..]` are the
    /// encoding of `pair`: whether they may follow each other in an encoding
    /// (see `tokens_long.rs`).
    fn compatible(&self, pair: &[u8], split: usize) -> bool {
        let mut tokens = 0;
        let mut first = 0;
        self.merge(pair, |t| {
            if tokens == 0 {
                first = t.len();
            }
            tokens += 1;
        });
        tokens == 2 && first == split
    }
}

thread_local! {
    /// The length of a piece this thread could not merge for want of memory
    /// (`merge` hands out no tokens for it): `Bpe::count` and `Bpe::encode`
    /// turn it into an error.
    static OUT_OF_MEMORY: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The error for a piece of `len` bytes that could not be merged.
fn out_of_memory(len: usize) -> Error {
    Error::new(
        Format::Llm,
        "LLM_OUT_OF_MEMORY",
        format!("not enough memory to count the tokens of a piece of {len} bytes (a run without a break the tokenizer can cut at)"),
    )
}

/// `f`'s result, or the error for a piece it could not merge.
fn checked<T>(f: impl FnOnce() -> T) -> Result<T> {
    OUT_OF_MEMORY.set(None);
    let value = f();
    match OUT_OF_MEMORY.take() {
        None => Ok(value),
        Some(len) => Err(out_of_memory(len)),
    }
}

/// Whether `b` may be cut before `p` into parts that pre-tokenize
/// independently (the whole text's pieces are the parts' pieces):
///
/// - (a) after a `\n` followed by spaces or tabs (or none) and then an ASCII
///   character that is not white space (nor a `/` right after the `\n`);
/// - (b) before a space that follows an ASCII character other than white space;
/// - (c) between an ASCII digit and an ASCII character that is not one;
/// - (d) between an ASCII letter and an ASCII character that is neither a
///   letter nor `'`.
///
/// ((c) and (d) are what compact JSON has: it holds no white space, and
/// without them a JSON text could not be cut at all.)
///
/// No piece crosses such a point, and the patterns behave at a part's end as
/// at the point in the whole text. (a): the piece holding the `\n` is either
/// punctuation followed by `[\r\n/]*` (o200k) or `[\r\n]*` (cl100k), which
/// stops before the next character, or white space: `\s*[\r\n]+` (o200k) and
/// `\s*[\r\n]` (cl100k) end at the last line break of the white-space run,
/// which is this one, and at a part's end, where `\s++$` (cl100k) and
/// `(?!\S)` see the end instead, they give that same span (the run ends
/// there with the line break). (b): the piece holding the character before
/// the space is letters (with an optional leading non-letter and trailing
/// contraction), one to three digits, or punctuation and line breaks: none
/// takes a space after it; and only white-space pieces look ahead or at the
/// end. (c): only `\p{N}{1,3}` takes a digit, and it stops where the digits
/// do, at the same place with the rest of the text or without it (the run
/// is grouped by threes from its start). (d): only the letter patterns take
/// a letter; their letter classes end where the letters do, and the
/// contraction they may take next starts with `'`. In both, the piece
/// holding the character before the point is not white space, so nothing
/// looks ahead across it. No pattern looks behind or anchors at the start,
/// so a part starts as the whole text's next match would.
#[inline]
fn is_cut(b: &[u8], p: usize) -> bool {
    if p == 0 || p >= b.len() {
        return false;
    }
    let (prev, next) = (b[p - 1], b[p]);
    if next == b' ' && prev.is_ascii() && !is_space(prev) {
        return true;
    }
    if next.is_ascii() {
        if prev.is_ascii_digit() {
            return !next.is_ascii_digit();
        }
        if prev.is_ascii_alphabetic() {
            return !next.is_ascii_alphabetic() && next != b'\'';
        }
    }
    // (A space after a line break falls through: the indentation of the
    // next line.)
    if prev != b'\n' {
        return false;
    }
    let mut q = p;
    while q < b.len() && matches!(b[q], b' ' | b'\t') {
        q += 1;
    }
    match b.get(q) {
        Some(&c) => c.is_ascii() && !is_space(c) && !(q == p && c == b'/'),
        None => false,
    }
}

/// The index of the first byte at or after `from` that is not ASCII.
#[inline]
fn first_non_ascii(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + 8 <= b.len() {
        let word = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        if word & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        i += 8;
    }
    b[i..].iter().position(|&c| c >= 0x80).map(|k| i + k)
}

#[inline]
fn is_space(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

#[inline]
fn is_punct(c: u8) -> bool {
    !is_space(c) && !c.is_ascii_alphanumeric()
}

/// The end of the white-space piece at `i` in an ASCII chunk: `\s*[\r\n]+`
/// (o200k) / `\s*[\r\n]` (cl100k) up to the run's last line break, else
/// `\s+(?!\S)` (all but the last of a run followed by a non-space; the whole
/// run at the end), else `\s+` / `\s` (one character). With `to_end`
/// (cl100k's `\s++$`, tried first), a run that reaches the end is one piece.
#[inline]
fn space_piece(b: &[u8], i: usize, to_end: bool) -> usize {
    let mut w = i;
    let mut last_break = usize::MAX;
    while w < b.len() && is_space(b[w]) {
        if b[w] == b'\r' || b[w] == b'\n' {
            last_break = w;
        }
        w += 1;
    }
    if to_end && w == b.len() {
        return w;
    }
    if last_break != usize::MAX {
        // The run's last line break, and (o200k) any right after it: none,
        // as a break after the last is impossible.
        return last_break + 1;
    }
    if w == b.len() || w - i == 1 {
        return w;
    }
    w - 1
}

/// An English contraction at `i` (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`,
/// `'d`, any case): its end.
#[inline]
fn contraction(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'\'') {
        return None;
    }
    let c1 = b.get(i + 1)?.to_ascii_lowercase();
    if matches!(c1, b's' | b't' | b'm' | b'd') {
        return Some(i + 2);
    }
    let c2 = b.get(i + 2)?.to_ascii_lowercase();
    matches!((c1, c2), (b'r', b'e') | (b'v', b'e') | (b'l', b'l')).then_some(i + 3)
}

/// Where the letters of a letters piece at `i` start: at `i`, or after one
/// leading character that is not a line break, letter or digit
/// (`[^\r\n\p{L}\p{N}]?`); `None` when no letter follows.
#[inline]
fn letters_start(b: &[u8], i: usize) -> Option<usize> {
    let c = b[i];
    let k = if c.is_ascii_alphabetic() {
        i
    } else if c != b'\r' && c != b'\n' && !c.is_ascii_digit() {
        i + 1
    } else {
        return None;
    };
    b.get(k).is_some_and(u8::is_ascii_alphabetic).then_some(k)
}

/// Classes of ASCII bytes for the o200k scanner (one load for each test).
const C_UPPER: u8 = 1;
const C_LOWER: u8 = 2;
const C_DIGIT: u8 = 4;
const C_BREAK: u8 = 8;
const C_SPACE: u8 = 16;
const C_PUNCT: u8 = 32;
const C_LETTER: u8 = C_UPPER | C_LOWER;

static ASCII_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = if b.is_ascii_uppercase() {
            C_UPPER
        } else if b.is_ascii_lowercase() {
            C_LOWER
        } else if b.is_ascii_digit() {
            C_DIGIT
        } else if b == b'\r' || b == b'\n' {
            C_BREAK
        } else if matches!(b, b'\t' | 0x0b | 0x0c | b' ') {
            C_SPACE
        } else {
            C_PUNCT
        };
        c += 1;
    }
    t
};

const fn splat(c: u8) -> u64 {
    u64::from_le_bytes([c; 8])
}

const HIGH: u64 = splat(0x80);

/// For each byte of `w` (whose high bits are clear), its high bit set if
/// the byte is at least `lo`: no sum carries into the next byte.
#[inline(always)]
fn at_least(w: u64, lo: u8) -> u64 {
    w.wrapping_add(splat(0x80 - lo))
}

/// For each byte of `w` (high bits clear), its high bit set if the byte is
/// in `lo..=hi` (`hi` below 0x7f).
#[inline(always)]
fn within(w: u64, lo: u8, hi: u8) -> u64 {
    at_least(w, lo) & !at_least(w, hi + 1)
}

/// ASCII letters, by [`within`].
#[inline(always)]
fn letters(w: u64) -> u64 {
    within(w | splat(0x20), b'a', b'z')
}

/// The end of the run, from `i` of `b`, of ASCII bytes that `class` (one of
/// the [`within`] tests) holds, eight bytes at a time: a word's end is found
/// by a count of trailing ones, not by a loop whose exit (the word's length)
/// the processor cannot predict. A byte with its high bit set ends the run.
#[inline(always)]
fn ascii_span(b: &[u8], mut i: usize, class: impl Fn(u64) -> u64) -> usize {
    while let Some(word) = b.get(i..i + 8) {
        let raw = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let inside = class(raw & !HIGH) & !raw & HIGH;
        let n = (!inside & HIGH).trailing_zeros() as usize / 8;
        i += n;
        if n < 8 {
            return i;
        }
    }
    // The last bytes one at a time, by the same test on a word that holds
    // only that byte (the other bytes' sums carry nowhere they are read).
    while let Some(&c) = b.get(i) {
        if class(u64::from(c & 0x7f)) & !u64::from(c) & 0x80 == 0 {
            break;
        }
        i += 1;
    }
    i
}

#[inline(always)]
fn class_at(b: &[u8], i: usize) -> u8 {
    // Past the end: no class, which ends every run.
    b.get(i).map_or(0, |&c| ASCII_CLASS[c as usize])
}

/// The end of the o200k piece starting at `i` of an ASCII chunk: the
/// pattern's first match there.
#[inline]
fn o200k_ascii_piece(b: &[u8], i: usize) -> usize {
    let c = class_at(b, i);
    // [^\r\n\p{L}\p{N}]? then upper* lower+ | upper+ lower*, then a contraction.
    let k = if c & C_LETTER != 0 {
        i
    } else if c & (C_BREAK | C_DIGIT) == 0 && class_at(b, i + 1) & C_LETTER != 0 {
        i + 1
    } else {
        usize::MAX
    };
    if k != usize::MAX {
        let e = ascii_span(b, k, |w| within(w, b'A', b'Z'));
        let e = ascii_span(b, e, |w| within(w, b'a', b'z'));
        return if b.get(e) == Some(&b'\'') { contraction(b, e).unwrap_or(e) } else { e };
    }
    if c == C_DIGIT {
        // \p{N}{1,3}, without a loop (its exit is hard to predict).
        let d1 = usize::from(class_at(b, i + 1) == C_DIGIT);
        let d2 = d1 & usize::from(class_at(b, i + 2) == C_DIGIT);
        return i + 1 + d1 + d2;
    }
    // ' '?[^\s\p{L}\p{N}]+[\r\n/]*
    let e = if c == C_PUNCT {
        i + 1
    } else if b[i] == b' ' && class_at(b, i + 1) == C_PUNCT {
        i + 2
    } else {
        return space_piece(b, i, false);
    };
    // (A loop, not `ascii_span`: punctuation runs are short, and the test
    // for eight bytes cost more than it saved, by cachegrind.)
    let mut e = e;
    while class_at(b, e) == C_PUNCT {
        e += 1;
    }
    while matches!(b.get(e), Some(b'\r' | b'\n' | b'/')) {
        e += 1;
    }
    e
}

/// The end of the cl100k piece starting at `i` of an ASCII chunk.
fn cl100k_ascii_piece(b: &[u8], i: usize) -> usize {
    // '(?i:[sdmt]|ll|ve|re)
    if let Some(e) = contraction(b, i) {
        return e;
    }
    // [^\r\n\p{L}\p{N}]?+\p{L}++ (the optional character is possessive: a
    // non-letter is taken, and then a letter must follow)
    if let Some(k) = letters_start(b, i) {
        return ascii_span(b, k + 1, letters);
    }
    // \p{N}{1,3}+, then ' '?[^\s\p{L}\p{N}]++[\r\n]*+
    digits_or_punct_piece(b, i, false).unwrap_or_else(|| space_piece(b, i, true))
}

/// The end of a digits piece (`\p{N}{1,3}`) at `i`, else of a punctuation
/// piece (`' '?[^\s\p{L}\p{N}]+` then line breaks, and `/` with `slash`:
/// o200k's `[\r\n/]*`, cl100k's `[\r\n]*`); the two encodings share both.
#[inline]
fn digits_or_punct_piece(b: &[u8], i: usize, slash: bool) -> Option<usize> {
    let n = b.len();
    let c = b[i];
    if c.is_ascii_digit() {
        let mut e = i + 1;
        while e < n && e < i + 3 && b[e].is_ascii_digit() {
            e += 1;
        }
        return Some(e);
    }
    let mut e = if c == b' ' && i + 1 < n && is_punct(b[i + 1]) {
        i + 1
    } else if is_punct(c) {
        i
    } else {
        return None;
    };
    while e < n && is_punct(b[e]) {
        e += 1;
    }
    while e < n && (matches!(b[e], b'\r' | b'\n') || (slash && b[e] == b'/')) {
        e += 1;
    }
    Some(e)
}

/// A token counter: a built-in encoding or a Hugging Face tokenizer.
#[derive(Debug, Clone)]
pub enum Tokenizer {
    Bpe(&'static Bpe),
    Hf(std::sync::Arc<HfTokenizer>),
}

impl Tokenizer {
    /// `o200k_base` or `cl100k_base`, or else the path of a `tokenizer.json`.
    pub fn from_name(name: &str) -> Result<Tokenizer> {
        if let Some(e) = Encoding::from_name(name) {
            return Ok(Tokenizer::Bpe(Bpe::get(e)));
        }
        if name.ends_with(".json") || Path::new(name).is_file() {
            return Ok(Tokenizer::Hf(cached_hf(Path::new(name))?));
        }
        Err(Error::new(
            Format::Llm,
            "LLM_UNKNOWN_ENCODING",
            format!("expected o200k_base, cl100k_base or the path of a tokenizer.json, got {name:?}"),
        ))
    }

    /// The number of tokens of `text` (of a long text, on two threads: see
    /// [`Tokenizer::count_many`]).
    pub fn count(&self, text: &str) -> Result<usize> {
        match self {
            Tokenizer::Bpe(b) if text.len() < PARALLEL_FROM => b.count(text),
            Tokenizer::Bpe(b) => Ok(count_on_two_threads(b, &[text], PARALLEL_FROM)?.into_iter().sum()),
            Tokenizer::Hf(h) => h.count(text),
        }
    }

    /// [`Tokenizer::count`] of a text the caller gives up: shared with the
    /// helper thread as it is, where `count` copies it (a binding that made
    /// the text for the count, reading a JavaScript string, say, saves the
    /// copy).
    pub fn count_owned(&self, text: String) -> Result<usize> {
        let Tokenizer::Bpe(bpe) = self else { return self.count(&text) };
        if text.len() < PARALLEL_FROM {
            return bpe.count(&text);
        }
        let ends = chunk_ends(text.as_bytes(), 0);
        let turn = if ends.len() > 1 { HelperTurn::take() } else { None };
        let Some(_turn) = turn else { return bpe.count(&text) };
        let shared = std::sync::Arc::new(ChunkedText::with_ends(Some(bpe), text, 0, ends));
        let _ = send_to_helper(vec![shared.clone()]);
        Ok(count_shared(&[shared])?.into_iter().sum())
    }

    /// The numbers of tokens of several texts (the candidates of one value).
    /// When they are large, they are cut into chunks where the
    /// pre-tokenizer's pieces restart, and a helper thread counts chunks too
    /// (a built-in encoding's; it lives on, so its memo of pieces stays
    /// warm), those this thread has not taken when it wakes.
    pub fn count_many(&self, texts: &[&str]) -> Result<Vec<usize>> {
        match self {
            Tokenizer::Bpe(bpe) => count_on_two_threads(bpe, texts, PARALLEL_FROM),
            Tokenizer::Hf(_) => texts.iter().map(|x| self.count(x)).collect(),
        }
    }

    /// A [`CountSession`]: texts counted as they are added, on the helper
    /// thread too.
    pub fn session(&self) -> CountSession {
        CountSession::new(self)
    }

    /// Its name: the encoding's, or `"tokenizer.json"`-file.
    pub fn name(&self) -> Cow<'static, str> {
        match self {
            Tokenizer::Bpe(b) => Cow::Borrowed(b.encoding().name()),
            Tokenizer::Hf(_) => Cow::Borrowed("tokenizer.json"),
        }
    }
}

/// Tokenizer files loaded lately, by path, size and modification time (a
/// `tokenizer.json` takes milliseconds to seconds to load; callers name it
/// on every count).
type HfCache = Vec<(std::path::PathBuf, u64, Option<std::time::SystemTime>, std::sync::Arc<HfTokenizer>)>;
static HF_CACHE: std::sync::Mutex<HfCache> = std::sync::Mutex::new(Vec::new());
const HF_CACHE_SIZE: usize = 4;

fn cached_hf(path: &Path) -> Result<std::sync::Arc<HfTokenizer>> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::new(Format::Llm, "LLM_TOKENIZER_FILE", format!("cannot read tokenizer file {}: {e}", path.display())))?;
    let (len, modified) = (meta.len(), meta.modified().ok());
    let mut cache = HF_CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = cache.iter().position(|(p, l, m, _)| p == path && *l == len && *m == modified) {
        let hit = cache.remove(i);
        let t = hit.3.clone();
        cache.push(hit);
        return Ok(t);
    }
    drop(cache);
    let t = std::sync::Arc::new(HfTokenizer::from_file(path)?);
    let mut cache = HF_CACHE.lock().unwrap_or_else(|p| p.into_inner());
    cache.retain(|(p, ..)| p != path);
    if cache.len() >= HF_CACHE_SIZE {
        cache.remove(0);
    }
    cache.push((path.to_path_buf(), len, modified, t.clone()));
    Ok(t)
}

/// Work for the helper thread: texts to count chunks of, in order, until
/// none is left to take.
type CountJob = Vec<std::sync::Arc<ChunkedText>>;

/// The helper thread of [`Tokenizer::count_many`], with the process it
/// belongs to (a forked child has the channel but not the thread).
static HELPER: std::sync::Mutex<Option<(u32, std::sync::mpsc::Sender<CountJob>)>> = std::sync::Mutex::new(None);

/// Hand `job` to the helper thread (started on first use); false when there
/// is no helper.
fn send_to_helper(job: CountJob) -> bool {
    let mut helper = HELPER.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if helper.as_ref().is_none_or(|(owner, _)| *owner != pid) {
        let (tx, rx) = std::sync::mpsc::channel::<CountJob>();
        let started = std::thread::Builder::new().name("polywire-tokens".into()).spawn(move || {
            use std::sync::mpsc::TryRecvError;
            // After a job the helper polls for the next a while before
            // it sleeps: `encode_for_llm` hands it a text per candidate,
            // tens to hundreds of microseconds apart, and waking a
            // sleeping thread takes it 20-60 µs on some machines (virtual
            // ones especially) and costs the sender a system call of
            // 10-30 µs there.
            use std::sync::atomic::Ordering;
            let mut idle_from = None;
            loop {
                let job = match rx.try_recv() {
                    Ok(job) => job,
                    Err(TryRecvError::Disconnected) => return,
                    Err(TryRecvError::Empty) => {
                        let since = *idle_from.get_or_insert_with(std::time::Instant::now);
                        // Longer while a caller holds the turn: a session
                        // that is rendering its next text.
                        let idle = since.elapsed();
                        if idle < HELPER_POLLS_FOR || (idle < HELPER_POLLS_IN_TURN_FOR && HELPER_IN_USE.load(Ordering::Relaxed)) {
                            std::hint::spin_loop();
                            continue;
                        }
                        match rx.recv() {
                            Ok(job) => job,
                            Err(_) => return,
                        }
                    }
                };
                idle_from = None;
                job.iter().for_each(|t| t.work());
            }
        });
        if started.is_err() {
            return false;
        }
        *helper = Some((pid, tx));
    }
    match helper.as_ref().map(|(_, tx)| tx.send(job)) {
        Some(Ok(())) => true,
        _ => {
            *helper = None;
            false
        }
    }
}

/// Texts counted as they come, by the calling thread and the helper thread
/// together: [`CountSession::add`] cuts a text into chunks at cut points
/// (see [`is_cut`]) and hands it to the helper, which starts on it at once;
/// [`CountSession::finish`] counts the chunks still untaken on the calling
/// thread, waits for the helper's, and gives the counts. A caller that
/// renders several texts (`encode_for_llm`'s candidates) thus has the first
/// counted while it renders the next, and both threads share the last.
/// Without the helper (another caller has it, or it cannot start) `finish`
/// counts everything. A Hugging Face tokenizer counts at `finish`.
pub struct CountSession {
    tokenizer: Tokenizer,
    /// In the order added, each with the slot it was added as and whether
    /// it is a whole text (not a part, see [`CountSession::add_part`]).
    texts: Vec<std::sync::Arc<ChunkedText>>,
    slots: Vec<usize>,
    whole: Vec<bool>,
    turn: Option<HelperTurn>,
}

/// A part's slot once forgotten ([`CountSession::forget_parts`]).
const FORGOTTEN: usize = usize::MAX;

/// Chunks of about this many bytes are counted by one thread at a time.
const CHUNK: usize = 8 * 1024;
/// How long a thread that has counted every chunk left spins for the one
/// the helper is counting before it sleeps.
const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(200);
/// How long the helper thread polls for its next job before it sleeps;
/// while a caller holds the turn (a session rendering its next text), up to
/// the second.
const HELPER_POLLS_FOR: std::time::Duration = std::time::Duration::from_micros(100);
const HELPER_POLLS_IN_TURN_FOR: std::time::Duration = std::time::Duration::from_millis(1);
/// A session's texts from this size up are handed to the helper thread.
const HELPER_FROM: usize = 8 * 1024;

/// A text of a [`CountSession`], its chunks and what they have counted so far.
struct ChunkedText {
    bpe: Option<&'static Bpe>,
    text: String,
    /// Where its first chunk starts (the bytes before are counted elsewhere).
    from: usize,
    /// The ends of its chunks.
    ends: Vec<usize>,
    /// The next chunk to take.
    next: std::sync::atomic::AtomicUsize,
    /// The chunks counted, and their tokens.
    done: std::sync::atomic::AtomicUsize,
    count: std::sync::atomic::AtomicUsize,
    /// Signalled when the last chunk is counted (for `wait`, which may wait
    /// for a long chunk: a text without cut points is one).
    all_done: (std::sync::Mutex<()>, std::sync::Condvar),
    /// Whether `wait` sleeps on `all_done` (or is about to): only then does
    /// the last chunk's counter signal it, as a signal is a system call
    /// whether or not a thread waits (std's `Condvar`), about a tenth of a
    /// microsecond per text on a call that counts two short ones.
    sleeping: std::sync::atomic::AtomicBool,
    /// Why a chunk could not be counted (see [`Bpe::count`]).
    failure: std::sync::Mutex<Option<Error>>,
}

impl ChunkedText {
    fn new(bpe: Option<&'static Bpe>, text: String) -> ChunkedText {
        ChunkedText::from(bpe, text, 0)
    }

    /// `text` from the byte `from` on, a character boundary.
    fn from(bpe: Option<&'static Bpe>, text: String, from: usize) -> ChunkedText {
        let from = from.min(text.len());
        let ends = if bpe.is_some() { chunk_ends(text.as_bytes(), from) } else { vec![text.len()] };
        ChunkedText::with_ends(bpe, text, from, ends)
    }

    fn with_ends(bpe: Option<&'static Bpe>, text: String, from: usize, ends: Vec<usize>) -> ChunkedText {
        use std::sync::atomic::AtomicUsize;
        ChunkedText {
            bpe,
            text,
            from,
            ends,
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            count: AtomicUsize::new(0),
            all_done: Default::default(),
            sleeping: std::sync::atomic::AtomicBool::new(false),
            failure: std::sync::Mutex::new(None),
        }
    }

    /// Count chunks until none is left to take.
    fn work(&self) {
        use std::sync::atomic::Ordering;
        let Some(bpe) = self.bpe else { return };
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(&end) = self.ends.get(i) else { return };
            let start = if i == 0 { self.from } else { self.ends[i - 1] };
            // Chunks end at cut points, so at character boundaries.
            let n = match self.text.get(start..end).map_or(Ok(0), |chunk| bpe.count(chunk)) {
                Ok(n) => n,
                Err(e) => {
                    *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    0
                }
            };
            self.count.fetch_add(n, Ordering::Relaxed);
            // Sequentially consistent with `wait`'s store to `sleeping` and
            // load of `done`: either `wait` sees this chunk done, or this
            // sees it sleeping (or about to) and signals it.
            if self.done.fetch_add(1, Ordering::SeqCst) + 1 == self.ends.len() && self.sleeping.load(Ordering::SeqCst) {
                // Taken after the count is in, so a `wait` that saw it short
                // is waiting by now and gets the signal.
                let _guard = self.all_done.0.lock().unwrap_or_else(|p| p.into_inner());
                self.all_done.1.notify_all();
            }
        }
    }

    /// Its count, once every chunk is counted: call [`ChunkedText::work`]
    /// first, so that only chunks the helper took are left.
    fn wait(&self) -> Result<usize> {
        use std::sync::atomic::Ordering;
        let all = self.ends.len();
        // The helper counts one chunk at a time, so what is left is at most
        // one chunk's work: spin for it a while (a sleeping thread here
        // takes 20-60 µs to wake on some machines), then sleep.
        // (The clock is read only if there is something to wait for.)
        let mut spin_from = None;
        while self.done.load(Ordering::Acquire) < all {
            if spin_from.get_or_insert_with(std::time::Instant::now).elapsed() > SPIN_FOR {
                let mut guard = self.all_done.0.lock().unwrap_or_else(|p| p.into_inner());
                self.sleeping.store(true, Ordering::SeqCst);
                while self.done.load(Ordering::SeqCst) < all {
                    guard = self.all_done.1.wait(guard).unwrap_or_else(|p| p.into_inner());
                }
                break;
            }
            std::hint::spin_loop();
        }
        if let Some(e) = self.failure.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        Ok(self.count.load(Ordering::Relaxed))
    }
}

/// Where the chunks of `b` from `from` on end: at a cut point (see
/// [`is_cut`]) about every [`CHUNK`] bytes, as long as there is one; the
/// rest is one chunk.
fn chunk_ends(b: &[u8], from: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut at = from;
    while b.len() - at > CHUNK + CHUNK / 2 {
        // A cut point is followed by an ASCII byte: a character boundary.
        match (at + CHUNK..b.len().min(at + 2 * CHUNK)).find(|&p| is_cut(b, p)) {
            Some(p) => {
                ends.push(p);
                at = p;
            }
            None => break,
        }
    }
    ends.push(b.len());
    ends
}

impl CountSession {
    fn new(tokenizer: &Tokenizer) -> CountSession {
        // One caller at a time hands work to the helper (as count_many).
        let turn = match tokenizer {
            Tokenizer::Bpe(_) => HelperTurn::take(),
            Tokenizer::Hf(_) => None,
        };
        CountSession { tokenizer: tokenizer.clone(), texts: Vec::new(), slots: Vec::new(), whole: Vec::new(), turn }
    }

    /// Whether [`CountSession::add_part`] is worth calling: the helper
    /// thread is this session's to hand parts to.
    pub fn takes_parts(&self) -> bool {
        self.turn.is_some() && self.bpe().is_some()
    }

    /// The encoding its texts are cut into chunks for (none for a Hugging
    /// Face tokenizer, which counts each text whole).
    fn bpe(&self) -> Option<&'static Bpe> {
        match self.tokenizer {
            Tokenizer::Bpe(b) => Some(b),
            Tokenizer::Hf(_) => None,
        }
    }

    /// Count `part`, the next piece of the text to be added as `slot`, now
    /// (on the helper thread), while the caller writes the rest. The parts
    /// of a slot follow each other from the text's start and each ends at
    /// a cut point (see [`last_cut`]), where counting them apart gives what
    /// counting the whole gives. Add the whole text with
    /// [`CountSession::add_counted`] and the length the parts cover.
    pub fn add_part(&mut self, slot: usize, part: String) {
        let part = std::sync::Arc::new(ChunkedText::new(self.bpe(), part));
        if self.turn.is_some() && !send_to_helper(vec![part.clone()]) {
            self.turn = None;
        }
        self.texts.push(part);
        self.slots.push(slot);
        self.whole.push(false);
    }

    /// Leave out of `slot`'s count the parts added for it so far (their text
    /// changed after they were added); the helper may still count them.
    pub fn forget_parts(&mut self, slot: usize) {
        for (s, &whole) in self.slots.iter_mut().zip(&self.whole) {
            if *s == slot && !whole {
                *s = FORGOTTEN;
            }
        }
    }

    /// Count `text` too (its count comes at [`CountSession::finish`], in the
    /// order of the calls).
    pub fn add(&mut self, text: String) {
        self.add_as(self.texts.len(), text);
    }

    /// Count `text` too, as the session's `slot`th text: [`finish`] gives
    /// the counts, and [`text`] the texts, by slot, whatever order they were
    /// added in ([`render_order`]'s). Each slot from 0 to the number of
    /// texts is to be added once.
    ///
    /// [`finish`]: CountSession::finish
    /// [`text`]: CountSession::text
    pub fn add_as(&mut self, slot: usize, text: String) {
        self.add_counted(slot, text, 0);
    }

    /// [`CountSession::add_as`] for a text whose first `counted` bytes were
    /// added as parts ([`CountSession::add_part`]): the rest is counted.
    pub fn add_counted(&mut self, slot: usize, text: String, counted: usize) {
        let bpe = self.bpe();
        // Parts only come with a `Bpe` tokenizer; a Hugging Face one counts
        // the whole text.
        let counted = if bpe.is_some() && text.is_char_boundary(counted.min(text.len())) { counted } else { 0 };
        let text = std::sync::Arc::new(ChunkedText::from(bpe, text, counted));
        // A short text is counted at `finish`: waking the helper for it
        // costs about as much as counting it.
        if self.turn.is_some() && text.text.len() - text.from >= HELPER_FROM && !send_to_helper(vec![text.clone()]) {
            self.turn = None;
        }
        self.texts.push(text);
        self.slots.push(slot);
        self.whole.push(true);
    }

    /// The counts of the texts added, by slot.
    pub fn finish(&self) -> Result<Vec<usize>> {
        let counts = match &self.tokenizer {
            // (No parts with these: `add_counted` adds the whole text.)
            Tokenizer::Hf(h) => {
                self.texts.iter().zip(&self.whole).map(|(t, &w)| if w { h.count(&t.text) } else { Ok(0) }).collect::<Result<Vec<_>>>()?
            }
            Tokenizer::Bpe(_) => count_shared(&self.texts)?,
        };
        // A slot's parts and its rest add up.
        let mut by_slot = vec![0; self.whole.iter().filter(|&&w| w).count()];
        for (&slot, n) in self.slots.iter().zip(counts) {
            if let Some(c) = by_slot.get_mut(slot) {
                *c += n;
            }
        }
        Ok(by_slot)
    }

    /// Where the whole text added as `slot` is in `texts`.
    fn whole_text(&self, slot: usize) -> Option<usize> {
        (0..self.texts.len()).find(|&k| self.slots[k] == slot && self.whole[k])
    }

    /// The text added as `slot`.
    pub fn text(&self, slot: usize) -> Option<&str> {
        let k = self.whole_text(slot)?;
        Some(self.texts[k].text.as_str())
    }

    /// The text added as `slot`, taken out of the session (copied if the
    /// helper still holds it; empty if there is none). For after
    /// [`CountSession::finish`].
    pub fn take_text(&mut self, slot: usize) -> String {
        let Some(k) = self.whole_text(slot) else { return String::new() };
        let shared = std::mem::replace(&mut self.texts[k], std::sync::Arc::new(ChunkedText::new(None, String::new())));
        match std::sync::Arc::try_unwrap(shared) {
            Ok(t) => t.text,
            Err(shared) => shared.text.clone(),
        }
    }

    /// The texts added, moved out of the session, but those the helper
    /// thread still holds (it may, for a moment after the last count): a
    /// binding keeps their buffers for its next renderings.
    pub fn into_texts(mut self) -> impl Iterator<Item = String> {
        let whole = std::mem::take(&mut self.whole);
        std::mem::take(&mut self.texts)
            .into_iter()
            .zip(whole)
            .filter(|(_, whole)| *whole)
            .filter_map(|(t, _)| std::sync::Arc::try_unwrap(t).ok().map(|t| t.text))
    }
}

impl Drop for CountSession {
    fn drop(&mut self) {
        // Left unfinished (the caller failed): no more chunks for the helper.
        for t in &self.texts {
            t.next.store(usize::MAX / 2, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// The counts of `texts`, shared with the helper thread when they hold at
/// least `parallel_from` bytes: each text is cut into chunks (see
/// [`ChunkedText`]) that this thread and the helper take in turn, whichever
/// is free. This thread never waits for the helper to wake (on some
/// machines that alone takes 20-60 µs): it counts every chunk the helper has
/// not taken, and waits only for one the helper is counting.
fn count_on_two_threads(bpe: &'static Bpe, texts: &[&str], parallel_from: usize) -> Result<Vec<usize>> {
    let total: usize = texts.iter().map(|t| t.len()).sum();
    if total < parallel_from || total < 2 {
        return texts.iter().map(|t| bpe.count(t)).collect();
    }
    // One caller at a time hands work to the helper; the others (threads of
    // a server counting at once) count on their own thread rather than queue
    // behind it.
    let Some(_turn) = HelperTurn::take() else {
        return texts.iter().map(|t| bpe.count(t)).collect();
    };
    // Texts of more than one chunk are copied (the helper may still hold a
    // text after this call returns: it then finds no chunk left to take),
    // when the memory can be had; the others (a text without cut points is
    // one chunk) are counted here, in place.
    let mut shared: Vec<Option<std::sync::Arc<ChunkedText>>> = Vec::with_capacity(texts.len());
    for t in texts {
        let ends = chunk_ends(t.as_bytes(), 0);
        let mut copy = String::new();
        shared.push((ends.len() > 1 && copy.try_reserve_exact(t.len()).is_ok()).then(|| {
            copy.push_str(t);
            std::sync::Arc::new(ChunkedText::with_ends(Some(bpe), copy, 0, ends))
        }));
    }
    let jobs: Vec<_> = shared.iter().flatten().cloned().collect();
    if jobs.is_empty() {
        return texts.iter().map(|t| bpe.count(t)).collect();
    }
    // Without a helper (it could not start, or this is a forked child of
    // the process that started it) every chunk is counted here.
    let _ = send_to_helper(jobs.clone());
    let mut counts = count_shared(&jobs)?.into_iter();
    texts.iter().zip(&shared).map(|(t, s)| if s.is_some() { Ok(counts.next().unwrap_or(0)) } else { bpe.count(t) }).collect()
}

/// The counts of texts shared with the helper: every chunk the helper has
/// not taken, of every text, counted here before waiting for any it is
/// counting.
fn count_shared(texts: &[std::sync::Arc<ChunkedText>]) -> Result<Vec<usize>> {
    texts.iter().for_each(|t| t.work());
    texts.iter().map(|t| t.wait()).collect()
}

/// The last cut point (see [`is_cut`]) of `text` after `after` and within
/// its last `within` bytes: where a part of a text being written may end,
/// for [`CountSession::add_part`]. A point that is a cut in a text's start
/// is one in the whole text (the bytes after it can only end a run of
/// blanks `is_cut` looked for the end of, and it saw none).
pub fn last_cut(text: &[u8], after: usize, within: usize) -> Option<usize> {
    let low = (after + 1).max(text.len().saturating_sub(within));
    (low..text.len()).rev().find(|&p| is_cut(text, p))
}

/// The order to render `encode_for_llm`'s candidates in (format names:
/// `toon`, `toon-tab`, `json`, `json-pretty`...), as indices of `formats`:
/// the JSON renderings first, then the others, each group as listed. A
/// [`CountSession`] has the helper count each text while the next is
/// rendered and both threads count the last; JSON text is the longer and
/// the slower to count, so it is the better one to count while TOON is
/// rendered. Add each text with [`CountSession::add_as`] and its index.
pub fn render_order<S: AsRef<str>>(formats: &[S]) -> Vec<usize> {
    let json = |i: &usize| formats[*i].as_ref().starts_with("json");
    (0..formats.len()).filter(json).chain((0..formats.len()).filter(|i| !json(i))).collect()
}

/// Whether a caller is using the helper thread.
static HELPER_IN_USE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The right to use the helper thread, given back when dropped.
struct HelperTurn;

impl HelperTurn {
    fn take() -> Option<HelperTurn> {
        use std::sync::atomic::Ordering;
        HELPER_IN_USE.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).ok().map(|_| HelperTurn)
    }
}

impl Drop for HelperTurn {
    fn drop(&mut self) {
        HELPER_IN_USE.store(false, std::sync::atomic::Ordering::Release);
    }
}

/// For the fuzz target `tokens_long` and tests: the token ends of `piece`
/// merged in windows of `window` bytes cut at least `margin` bytes before
/// their end (None when no tried cut held), and merged whole.
#[doc(hidden)]
pub fn windows_and_whole(encoding: Encoding, piece: &[u8], window: usize, margin: usize) -> (Option<Vec<usize>>, Vec<usize>) {
    let bpe = Bpe::get(encoding);
    let whole = bpe.heap_merge_ends(piece).unwrap_or_default();
    (long::windowed_ends(bpe, piece, window.max(1), margin), whole)
}

/// The number of tokens of `text` in a built-in encoding.
pub fn count_tokens(text: &str, encoding: Encoding) -> Result<usize> {
    Bpe::get(encoding).count(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tiktoken's regex, as tiktoken runs it: the oracle of the scanners.
    fn regex(e: Encoding) -> &'static fancy_regex::Regex {
        static O200K: OnceLock<fancy_regex::Regex> = OnceLock::new();
        static CL100K: OnceLock<fancy_regex::Regex> = OnceLock::new();
        match e {
            Encoding::O200kBase => O200K.get_or_init(|| fancy_regex::Regex::new(O200K_PATTERN).unwrap()),
            Encoding::Cl100kBase => CL100K.get_or_init(|| fancy_regex::Regex::new(CL100K_PATTERN).unwrap()),
        }
    }

    fn regex_pieces(e: Encoding, text: &str) -> Vec<&str> {
        regex(e).find_iter(text).map(|m| m.unwrap().as_str()).collect()
    }

    /// The Unicode scanner's pieces of the whole text (no ASCII scanner, no
    /// cut points).
    fn scanner_pieces<'t>(bpe: &Bpe, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        bpe.unicode_pieces(text.as_bytes(), 0, false, &mut |p| out.push(std::str::from_utf8(p).unwrap()));
        out
    }

    fn check(text: &str) {
        for e in Encoding::ALL {
            let bpe = Bpe::get(e);
            let want = regex_pieces(e, text);
            assert_eq!(scanner_pieces(bpe, text), want, "{e:?} scanner pieces of {text:?}");
            assert_eq!(bpe.split(text), want, "{e:?} split of {text:?}");
            let core = match e {
                Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            };
            let want = core.encode_ordinary(text);
            assert_eq!(bpe.encode(text).unwrap(), want, "{e:?} tokens of {text:?}");
            assert_eq!(bpe.count(text).unwrap(), want.len(), "{e:?} count of {text:?}");
        }
    }

    /// A xorshift64 generator: repeatable random texts.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn pieces_and_tokens_equal_the_regex_and_tiktoken_on_random_text() {
        // Characters at every class boundary of the patterns, ASCII and not.
        let alphabet: Vec<char> =
            " \t\n\r\x0b\x0caAzZ09'sStTrReEvVmMlLdD/.,!{}\"_-:|[]\x00\x7fé€😀\u{85}\u{a0}\u{2028}\u{300}\u{feff}ǅ٣".chars().collect();
        let mut rnd = xorshift(0x2545_F491_4F6C_DD1D);
        for k in 0..6000 {
            let len = (rnd() % if k % 2 == 0 { 40 } else { 160 }) as usize;
            let ascii_only = k % 3 == 0;
            let s: String = (0..len)
                .map(|_| loop {
                    let c = alphabet[(rnd() % alphabet.len() as u64) as usize];
                    if !ascii_only || c.is_ascii() {
                        break c;
                    }
                })
                .collect();
            check(&s);
        }
    }

    /// Characters on every side of every class boundary of the patterns, in
    /// groups (a string draws from a few groups, so that runs of one class
    /// meet runs of another).
    const GROUPS: &[&str] = &[
        // Lu (incl. astral), Ll (incl. astral, ß, ſ), Lt
        "AZÉΣԱ\u{1d400}\u{10400}",
        "azéßσſ\u{10428}\u{1d41a}",
        "ǅǈᾈ",
        // Lm, Lo (incl. astral)
        "ʰーᵃ々ˆ",
        "中あאاก\u{20000}",
        // M: Mn, Mc, Me, astral
        "\u{300}\u{301}\u{951}\u{903}\u{20dd}\u{1d165}",
        // N: Nd, Nl, No, astral
        "09٣½Ⅻ²\u{1d7ce}\u{10107}",
        // white space, ASCII and not
        " \t\n\r\x0b\x0c",
        "\u{85}\u{a0}\u{1680}\u{2000}\u{2028}\u{2029}\u{202f}\u{3000}",
        // not white space, though they look it
        "\u{feff}\u{200b}\u{180e}\u{200d}",
        // contractions, case-fold variants, other apostrophes
        "'sStTrReEvVmMlLdD",
        "'ſK\u{212a}k’",
        // punctuation, symbols, emoji, controls
        "/.,!\"-_{}€©😀🚀\x00\x7f",
    ];

    fn random_text(rnd: &mut impl FnMut() -> u64, groups: &[Vec<char>]) -> String {
        // One to four groups, and sometimes every group.
        let mut pool: Vec<char> = Vec::new();
        if rnd() % 4 == 0 {
            pool.extend(groups.iter().flatten());
        } else {
            for _ in 0..1 + rnd() % 4 {
                pool.extend(&groups[(rnd() % groups.len() as u64) as usize]);
            }
        }
        let len = (rnd() % if rnd() % 4 == 0 { 120 } else { 24 }) as usize;
        let mut text: Vec<char> = (0..len).map(|_| pool[(rnd() % pool.len() as u64) as usize]).collect();
        if rnd() % 4 == 0 {
            // A long ASCII run, where `for_each_piece` hands over from the
            // Unicode scanner to the ASCII one and back.
            let ascii: Vec<char> = groups.iter().flatten().copied().filter(char::is_ascii).collect();
            let at = (rnd() % (text.len() as u64 + 1)) as usize;
            let run: Vec<char> = (0..30 + rnd() % 60).map(|_| ascii[(rnd() % ascii.len() as u64) as usize]).collect();
            text.splice(at..at, run);
        }
        text.into_iter().collect()
    }

    #[test]
    fn texts_cut_at_any_cut_point_count_as_much_as_whole() {
        // What the two-thread count relies on: the pieces restart at a cut
        // point, so the parts' counts add up to the whole text's.
        let alphabet: Vec<char> = " \t\n\r\x0baAzZ09'sStTrRlLdD/.,!{}\"_-:|é€😀\u{a0}\u{300}ǅ٣".chars().collect();
        let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
        // And one dense in line breaks, indentation and what may follow them.
        let lines: Vec<char> = "\n\n  \t\r/a1.'é".chars().collect();
        let mut cuts = 0;
        for k in 0..3000 {
            let len = (rnd() % 200) as usize;
            let pool = if k % 2 == 1 { &lines } else { &alphabet };
            let text: String = (0..len)
                .map(|_| loop {
                    let c = pool[(rnd() % pool.len() as u64) as usize];
                    if k % 4 < 2 || c.is_ascii() {
                        break c;
                    }
                })
                .collect();
            for e in Encoding::ALL {
                let bpe = Bpe::get(e);
                let whole = bpe.count(&text).unwrap();
                for p in (0..=text.len()).filter(|&p| is_cut(text.as_bytes(), p)) {
                    cuts += 1;
                    assert_eq!(bpe.count(&text[..p]).unwrap() + bpe.count(&text[p..]).unwrap(), whole, "{e:?} {text:?} cut at {p}");
                }
                // On two threads from any size: the helper counts the back.
                let mut third = text.len() / 3;
                while !text.is_char_boundary(third) {
                    third -= 1;
                }
                let texts = [text.as_str(), "", &text[..third], text.as_str()];
                let want: Vec<usize> = texts.iter().map(|t| bpe.count(t).unwrap()).collect();
                assert_eq!(count_on_two_threads(bpe, &texts, 0).unwrap(), want, "{e:?} {text:?}");
            }
        }
        assert!(cuts > 10_000, "only {cuts} cut points tried");
    }

    #[test]
    fn threads_counting_at_once_share_the_helper_or_count_alone() {
        let text: String = (0..4000).map(|i| format!("key{i}: value {} é\n", i * 7)).collect();
        let bpe = Bpe::get(Encoding::O200kBase);
        let want = bpe.count(&text).unwrap();
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..20).map(|_| count_on_two_threads(bpe, &[&text, &text], 0).unwrap()).collect::<Vec<_>>()))
                .collect();
            for w in workers {
                for counts in w.join().expect("no panic") {
                    assert_eq!(counts, [want, want]);
                }
            }
        });
    }

    #[test]
    fn owned_texts_count_as_borrowed_ones_do() {
        let mut rnd = xorshift(0x0A1B_2C3D_4E5F_6071);
        let words = ["key", ": ", "value", " é", "\n", "  ", "12345", ",", "😀", "x"];
        let texts: Vec<String> = [10, 40_000, 100_000]
            .iter()
            .map(|&n| (0..n).map(|_| words[(rnd() % words.len() as u64) as usize]).collect())
            .chain(["a".repeat(PARALLEL_FROM * 3), String::new()])
            .collect();
        for e in Encoding::ALL {
            let t = Tokenizer::Bpe(Bpe::get(e));
            for text in &texts {
                assert_eq!(t.count_owned(text.clone()).unwrap(), t.count(text).unwrap(), "{e:?} {}", text.len());
            }
        }
    }

    #[test]
    fn sessions_count_each_text_as_a_whole_count_does() {
        let mut rnd = xorshift(0x5EED_C0FF_EE00);
        let pieces = ["key", ": ", "value", " é", "\n", "  ", "12345", ",", "\t", "/", "😀", "x"];
        // Texts around the chunk size and a few times it, cut or not.
        let texts: Vec<String> = [10, 3_000, 5_000, 9_000, 20_000]
            .iter()
            .map(|&n| (0..n).map(|_| pieces[(rnd() % pieces.len() as u64) as usize]).collect())
            .chain([String::new(), "x".repeat(CHUNK * 3), "a\n".repeat(CHUNK)])
            .collect();
        for e in Encoding::ALL {
            let t = Tokenizer::Bpe(Bpe::get(e));
            let want: Vec<usize> = texts.iter().map(|x| Bpe::get(e).count(x).unwrap()).collect();
            std::thread::scope(|s| {
                let workers: Vec<_> = (0..3)
                    .map(|_| {
                        s.spawn(|| {
                            (0..4)
                                .map(|_| {
                                    let mut session = t.session();
                                    for x in &texts {
                                        session.add(x.clone());
                                    }
                                    session.finish().expect("counts")
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                for w in workers {
                    for counts in w.join().expect("no panic") {
                        assert_eq!(counts, want, "{e:?}");
                    }
                }
            });
            // A session dropped unfinished leaves the helper free for the next.
            let mut dropped = t.session();
            dropped.add(texts[4].clone());
            drop(dropped);
            let mut session = t.session();
            session.add(texts[4].clone());
            assert_eq!(session.finish().expect("counts"), [want[4]]);
        }
        // Long texts are cut into chunks; a text with no cut point is not.
        let chunked = ChunkedText::new(Some(Bpe::get(Encoding::O200kBase)), texts[4].clone());
        assert!(chunked.ends.len() > 2, "{:?}", chunked.ends);
        assert!(
            chunked.ends.windows(2).all(|w| w[0] < w[1])
                && chunked.ends.iter().all(|&p| p == texts[4].len() || is_cut(texts[4].as_bytes(), p))
        );
        assert_eq!(ChunkedText::new(Some(Bpe::get(Encoding::O200kBase)), texts[6].clone()).ends, [CHUNK * 3]);
    }

    #[test]
    fn the_unicode_scanner_equals_the_regex_at_every_class_boundary() {
        let groups: Vec<Vec<char>> = GROUPS.iter().map(|g| g.chars().collect()).collect();
        let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
        const STRINGS: usize = 25_000;
        for _ in 0..STRINGS {
            let text = random_text(&mut rnd, &groups);
            for e in Encoding::ALL {
                let bpe = Bpe::get(e);
                let want = regex_pieces(e, &text);
                assert_eq!(scanner_pieces(bpe, &text), want, "{e:?} scanner pieces of {text:?}");
                assert_eq!(bpe.split(&text), want, "{e:?} split of {text:?}");
            }
        }
        // The counts and ids too, on a part of them (tiktoken-rs is slower).
        for _ in 0..STRINGS / 10 {
            check(&random_text(&mut rnd, &groups));
        }
    }

    #[test]
    fn case_folded_contractions_are_contractions() {
        // `(?i)` folds with Unicode simple case folding: `ſ` is an `s`, the
        // Kelvin sign a `k` (no contraction has one).
        for text in ["don'ſ", "'ſ", "Iſ'ſ", "x'\u{212a}", "'ſa", "ǅ'Ll", "\u{300}'ve", "a\u{301}'D"] {
            check(text);
        }
    }

    #[test]
    fn a_thread_waiting_for_a_chunk_another_counts_is_woken_when_it_is_done() {
        // One chunk (no cut point) that takes milliseconds to count: the
        // thread waiting for it spins, then sleeps, and must be woken. The
        // answer is awaited with a time limit, so a lost wake fails the
        // test rather than hanging it.
        use std::sync::atomic::Ordering;
        let bpe = Bpe::get(Encoding::O200kBase);
        let text = "x".repeat(200_000);
        let want = bpe.count(&text).unwrap();
        let mut slept = 0;
        for _ in 0..5 {
            let shared = std::sync::Arc::new(ChunkedText::new(Some(bpe), text.clone()));
            let worker = {
                let s = shared.clone();
                std::thread::spawn(move || s.work())
            };
            while shared.next.load(Ordering::Relaxed) == 0 {
                std::hint::spin_loop();
            }
            let (tx, rx) = std::sync::mpsc::channel();
            let waiter = {
                let s = shared.clone();
                std::thread::spawn(move || {
                    s.work();
                    let _ = tx.send(s.wait());
                })
            };
            let got = rx.recv_timeout(std::time::Duration::from_secs(120)).expect("the waiting thread is woken");
            assert_eq!(got.unwrap(), want);
            slept += usize::from(shared.sleeping.load(Ordering::SeqCst));
            worker.join().expect("no panic");
            waiter.join().expect("no panic");
        }
        assert!(slept > 0, "no wait was long enough to sleep");
    }

    #[test]
    fn a_text_added_in_parts_as_it_is_written_counts_as_the_whole() {
        let mut rnd = xorshift(0x9A27_5EED);
        let pieces = ["{\"key\":", "\"value é\"", ",", "12345", "[", "]}", " word", "\n", "  ", "\t", "😀", "/", "x", "'s", "\n  \n"];
        for e in Encoding::ALL {
            let bpe = Bpe::get(e);
            for round in 0..40 {
                let n = [50, 2_000, 9_000, 30_000][round % 4];
                let texts: Vec<String> = (0..2).map(|_| (0..n).map(|_| pieces[(rnd() % pieces.len() as u64) as usize]).collect()).collect();
                let mut session = Tokenizer::Bpe(bpe).session();
                for (slot, text) in texts.iter().enumerate() {
                    // Handed as a writer would hand it: its start so far,
                    // every few hundred bytes to a few kilobytes.
                    let b = text.as_bytes();
                    let (mut counted, mut written) = (0, 0);
                    while written < b.len() {
                        written = (written + 1 + (rnd() % 4_000) as usize).min(b.len());
                        if let Some(cut) = last_cut(&b[..written], counted, 1 + (rnd() % 1_500) as usize) {
                            assert!(cut > counted && cut < written && is_cut(b, cut), "{cut} in {written}");
                            session.add_part(slot, text[counted..cut].to_owned());
                            counted = cut;
                        }
                    }
                    if round % 5 == 4 && slot == 1 {
                        // Its start was written again: count the whole.
                        session.forget_parts(slot);
                        counted = 0;
                    }
                    session.add_counted(slot, text.clone(), counted);
                }
                let want: Vec<usize> = texts.iter().map(|t| bpe.count(t).unwrap()).collect();
                assert_eq!(session.finish().expect("counts"), want, "{e:?} round {round}");
                assert_eq!(session.text(1), Some(texts[1].as_str()));
                // Parts are not given back as texts.
                for t in session.into_texts() {
                    assert!(texts.contains(&t), "a part given back");
                }
            }
        }
        // No cut point after `after`, or none within reach.
        assert_eq!(last_cut(b"abc def", 3, 100), None);
        assert_eq!(last_cut(b"abc def", 0, 100), Some(3));
        assert_eq!(last_cut(b"ab cd ef", 0, 3), Some(5), "the last cut point");
        assert_eq!(last_cut(b"ab cd ef", 0, 2), None, "not within the last two bytes");
        // A line break's indentation is no cut until a character follows it.
        assert_eq!(last_cut(b"a:\n  ", 2, 100), None);
        assert_eq!(last_cut(b"a:\n  b", 2, 100), Some(3));
    }

    #[test]
    fn a_session_gives_counts_and_texts_by_slot_in_render_order() {
        let formats = ["toon", "toon-tab", "json", "toon-pipe", "json-pretty"];
        let order = render_order(&formats);
        assert_eq!(order, [2, 4, 0, 1, 3]);
        let texts: Vec<String> = (0..formats.len()).map(|i| "word ".repeat(1 + i * 4000)).collect();
        let bpe = Bpe::get(Encoding::O200kBase);
        let mut session = Tokenizer::Bpe(bpe).session();
        for &i in &order {
            session.add_as(i, texts[i].clone());
        }
        let want: Vec<usize> = texts.iter().map(|t| bpe.count(t).unwrap()).collect();
        assert_eq!(session.finish().expect("counts"), want);
        assert_eq!(session.text(3), Some(texts[3].as_str()));
        assert_eq!(session.take_text(4), texts[4]);
        assert_eq!(session.text(9), None);
    }

    #[test]
    fn long_pieces_count_the_same_from_their_memo() {
        // Pieces of 17..=128 bytes (runs of CJK, long words) are remembered
        // per thread; past LONG_MEMO_PIECES of them the memo starts again.
        let cjk: Vec<char> = "技术面试必备基础知识从新手到大师计算机网络系统设计日本語のドキュメント".chars().collect();
        let mut rnd = xorshift(0x10C6_F00D);
        let words: Vec<String> = (0..LONG_MEMO_PIECES + 500)
            .map(|k| {
                let n = 6 + (rnd() % 40) as usize;
                let w: String = (0..n).map(|_| cjk[(rnd() % cjk.len() as u64) as usize]).collect();
                if k % 3 == 0 {
                    format!(" {}", "x".repeat(17 + k % 100))
                } else {
                    w
                }
            })
            .collect();
        for e in Encoding::ALL {
            let bpe = Bpe::get(e);
            for pass in 0..2 {
                for chunk in words.chunks(200) {
                    let text = chunk.join("\n");
                    assert_eq!(bpe.count(&text).unwrap(), bpe.encode(&text).unwrap().len(), "{e:?} pass {pass}");
                }
            }
            LONG_MEMO.with(|m| assert!(m.borrow()[e as usize].len() <= LONG_MEMO_PIECES));
        }
    }

    #[test]
    fn long_runs_merge_as_tiktoken_does() {
        for text in [
            " ".repeat(5000),
            "a".repeat(3000),
            "9".repeat(1000),
            format!("x{}y", " ".repeat(700)),
            "ab".repeat(900),
            "\n".repeat(300),
            "é".repeat(400),
            "😀".repeat(100),
            "{\"k\":[1,2,3]}\n  ".repeat(50),
        ] {
            check(&text);
        }
    }

    #[test]
    fn word_at_a_time_spans_equal_the_byte_classes() {
        // Each class the scanners test eight bytes at a time, against its
        // byte-by-byte definition: every byte, at every offset of a word and
        // of the tail.
        let classes: [(&str, fn(u64) -> u64, fn(u8) -> bool, u8); 3] = [
            ("upper", |w| within(w, b'A', b'Z'), |c| c.is_ascii_uppercase(), b'Q'),
            ("lower", |w| within(w, b'a', b'z'), |c| c.is_ascii_lowercase(), b'q'),
            ("letters", letters, |c| c.is_ascii_alphabetic(), b'Q'),
        ];
        for (name, class, holds, member) in classes {
            for c in 0..=255u8 {
                for before in 0..20 {
                    let mut text = vec![member; before];
                    text.push(c);
                    text.extend([member; 3]);
                    let want = if holds(c) { text.len() } else { before };
                    assert_eq!(ascii_span(&text, 0, class), want, "{name}: byte {c:#04x} after {before}");
                }
            }
        }
    }

    #[test]
    fn every_string_of_one_to_three_digits_is_one_token() {
        // What `count_ascii_run` counts without a lookup.
        for e in Encoding::ALL {
            let bpe = Bpe::get(e);
            let mut n = 0;
            for len in 1..=3u32 {
                for k in 0..10usize.pow(len) {
                    let digits = format!("{k:0width$}", width = len as usize);
                    assert!(bpe.ranks.rank(digits.as_bytes()).is_some(), "{digits} is not a token of {e:?}");
                    n += 1;
                }
            }
            assert_eq!(n, 1110);
        }
        check("0123456789 007 42x 1.5e10 [1,22,333,4444]");
    }

    #[test]
    fn a_megabyte_of_spaces_counts_quickly() {
        let text = " ".repeat(1 << 20);
        let start = std::time::Instant::now();
        let n = count_tokens(&text, Encoding::O200kBase).unwrap();
        assert!(n > 0);
        // tiktoken's scan would take minutes; the heap merge takes well
        // under a second even unoptimised.
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    }

    #[test]
    fn unknown_names_are_errors() {
        let e = Tokenizer::from_name("p50k").unwrap_err();
        assert_eq!(e.code(), "LLM_UNKNOWN_ENCODING");
        let e = Tokenizer::from_name("/nonexistent/tokenizer.json").unwrap_err();
        assert_eq!(e.code(), "LLM_TOKENIZER_FILE");
        let e = HfTokenizer::from_bytes(b"{}").unwrap_err();
        assert_eq!(e.code(), "LLM_INVALID_TOKENIZER");
    }

    #[test]
    fn a_word_level_tokenizer_json_counts_words() {
        let json = br#"{"version":"1.0","truncation":null,"padding":null,
          "added_tokens":[{"id":0,"content":"[UNK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
          "normalizer":{"type":"Lowercase"},"pre_tokenizer":{"type":"Whitespace"},"post_processor":null,"decoder":null,
          "model":{"type":"WordLevel","vocab":{"[UNK]":0,"hello":1,"world":2,",":3,"!":4},"unk_token":"[UNK]"}}"#;
        let t = HfTokenizer::from_bytes(json).unwrap();
        assert_eq!(t.count("Hello, WORLD! hello unknown").unwrap(), 6);
    }
}
