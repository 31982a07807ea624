//! Long pieces (a run of one letter or of spaces, a script written without
//! spaces, a line of `=`): merged a window at a time, in memory that does not
//! grow with the piece.
//!
//! tiktoken merges a piece whole: time quadratic in its length, and memory in
//! proportion to it (here, with the heap of [`Bpe::heap_merge`], about 44
//! bytes a byte: 4.4 GB for 100 MB of one letter). Two facts about BPE
//! merging under tiktoken's rule (the adjacent pair whose bytes are the token
//! of lowest rank merges first, the leftmost of equals) make windows exact.
//! They are the argument of GitHub's `bpe` crate (rust-gems, "Corollary II"
//! and "IIIa"), which holds for tiktoken's rule too (the proof only compares
//! the order in which merges are popped):
//!
//! 1. Any run of consecutive tokens of an encoding is the encoding of its own
//!    bytes: no merge crosses the final tokens' boundaries, so the merges
//!    inside the run happen, in the same order, without the rest.
//! 2. Two encodings joined, where the last token of the first and the first
//!    token of the second are *compatible* (the encoding of their two bytes
//!    strings joined is those two tokens), are the encoding of the joined
//!    bytes: a merge across the junction would join a part of the first
//!    token with a part of the second, and merging the two tokens' bytes
//!    alone shows that a lower merge always takes one of those parts first.
//!
//! So a long piece is merged in windows of [`WINDOW`] bytes from a start that
//! is known to be a token boundary: the window's tokens up to one of its
//! token ends `c` are the encoding of the bytes up to `c` (fact 1); the next
//! window starts at `c`, and the junction of the two is checked (fact 2).
//! When every junction holds, the windows' tokens are the piece's (a text
//! has one encoding). A junction fails only where merges cascade from the
//! window's end back across [`MARGIN`] bytes; it is then tried at earlier
//! token ends, then with a window twice as large, and at last with the rest
//! of the piece as one window (memory in proportion to it, asked for
//! fallibly: an error rather than an abort when it cannot be had).
//!
//! A window whose bytes are those of one of the last few windows reuses its
//! tokens: a run of one character costs a comparison of bytes per window.

use super::Bpe;

/// Pieces at least this long are merged a window at a time.
pub(super) const SEGMENT_FROM: usize = 64 * 1024;
/// The bytes of a window.
const WINDOW: usize = 16 * 1024;
/// A window is cut at a token end at least this far from its end.
const MARGIN: usize = 4 * 1024;
/// Token ends tried as a window's cut, the latest first.
const CUT_TRIES: usize = 16;
/// Windows remembered (bytes and tokens).
const CACHED_WINDOWS: usize = 4;

/// The memory a merge needed could not be had.
#[derive(Debug)]
pub(super) struct OutOfMemory;

/// A window merged: its bytes and the ends of its tokens (relative to its
/// start, ascending, the last the window's length).
struct Window {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

/// The number of tokens of `piece` (at least [`SEGMENT_FROM`] bytes).
pub(super) fn count_long(bpe: &Bpe, piece: &[u8]) -> Result<usize, OutOfMemory> {
    match windows(bpe, piece, WINDOW, MARGIN, None)? {
        Some(n) => Ok(n),
        None => bpe.heap_merge_ends(piece).map(|ends| ends.len()).ok_or(OutOfMemory),
    }
}

/// The tokens of `piece` (at least [`SEGMENT_FROM`] bytes), in order, as
/// byte ranges.
pub(super) fn tokens_long(bpe: &Bpe, piece: &[u8]) -> Result<Vec<std::ops::Range<usize>>, OutOfMemory> {
    let mut tokens = Vec::new();
    if windows(bpe, piece, WINDOW, MARGIN, Some(&mut tokens))?.is_some() {
        return Ok(tokens);
    }
    let ends = bpe.heap_merge_ends(piece).ok_or(OutOfMemory)?;
    tokens.clear();
    tokens.try_reserve_exact(ends.len()).map_err(|_| OutOfMemory)?;
    let mut start = 0;
    for end in ends {
        tokens.push(start..end);
        start = end;
    }
    Ok(tokens)
}

/// The token ends of `piece` merged in windows (see [`windows`]); None when
/// the windows gave up (or memory could not be had).
pub(super) fn windowed_ends(bpe: &Bpe, piece: &[u8], window: usize, margin: usize) -> Option<Vec<usize>> {
    let mut tokens = Vec::new();
    windows(bpe, piece, window, margin, Some(&mut tokens)).ok()??;
    Some(tokens.into_iter().map(|t| t.end).collect())
}

/// The count of `piece` merged in windows of `window` bytes, each cut at a
/// token end at least `margin` before its end (its tokens as ranges into
/// `tokens` if given); None when no tried cut of a window held (then the
/// piece is merged whole).
fn windows(
    bpe: &Bpe,
    piece: &[u8],
    window: usize,
    margin: usize,
    mut tokens: Option<&mut Vec<std::ops::Range<usize>>>,
) -> Result<Option<usize>, OutOfMemory> {
    let n = piece.len();
    let mut cache: Vec<Window> = Vec::new();
    let mut count = 0;
    let mut pos = 0;
    let mut size = window.min(n);
    let mut cur = window_ends(bpe, piece, pos, size, &mut cache)?;
    loop {
        let take = if pos + size >= n {
            cur.len()
        } else {
            // The latest token ends at least `margin` before the window's
            // end, until one's junction with the window that would follow
            // holds.
            let mut found = None;
            let mut k = cur.partition_point(|&e| e + margin <= size);
            let stop = k.saturating_sub(CUT_TRIES);
            while k > stop {
                let last = k - 1;
                let c = cur[last];
                let next_size = window.min(n - (pos + c));
                let next = window_ends(bpe, piece, pos + c, next_size, &mut cache)?;
                let last_start = if last == 0 { 0 } else { cur[last - 1] };
                if bpe.compatible(&piece[pos + last_start..pos + c + next[0]], c - last_start) {
                    found = Some((last + 1, next, next_size));
                    break;
                }
                k -= 1;
            }
            let Some((take, next, next_size)) = found else { return Ok(None) };
            count += take;
            if let Some(t) = tokens.as_deref_mut() {
                push_ranges(t, pos, &cur[..take])?;
            }
            pos += cur[take - 1];
            cur = next;
            size = next_size;
            continue;
        };
        if let Some(t) = tokens.as_deref_mut() {
            push_ranges(t, pos, &cur[..take])?;
        }
        return Ok(Some(count + take));
    }
}

/// The tokens of a window that starts at `pos` and ends at `ends`, as ranges.
fn push_ranges(tokens: &mut Vec<std::ops::Range<usize>>, pos: usize, ends: &[usize]) -> Result<(), OutOfMemory> {
    if tokens.capacity() - tokens.len() < ends.len() {
        tokens.try_reserve(ends.len().max(tokens.len())).map_err(|_| OutOfMemory)?;
    }
    let mut start = 0;
    for &end in ends {
        tokens.push(pos + start..pos + end);
        start = end;
    }
    Ok(())
}

/// The token ends of the encoding of `piece[start..start + len]`, from the
/// windows remembered when one has these bytes.
fn window_ends(bpe: &Bpe, piece: &[u8], start: usize, len: usize, cache: &mut Vec<Window>) -> Result<Vec<usize>, OutOfMemory> {
    let bytes = &piece[start..start + len];
    if let Some(i) = cache.iter().position(|w| w.bytes == bytes) {
        let w = cache.remove(i);
        let ends = w.ends.clone();
        cache.push(w);
        return Ok(ends);
    }
    let ends = bpe.heap_merge_ends(bytes).ok_or(OutOfMemory)?;
    if cache.len() >= CACHED_WINDOWS {
        cache.remove(0);
    }
    cache.push(Window { bytes: bytes.to_vec(), ends: ends.clone() });
    Ok(ends)
}

#[cfg(test)]
mod tests {
    use super::super::{Bpe, Encoding};

    /// A xorshift64 generator: repeatable random texts.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Tokens of a piece by windows of `window` bytes, and by the heap merge
    /// of it whole (itself checked against tiktoken); whether the windows
    /// held to the end.
    fn check(bpe: &Bpe, piece: &[u8], window: usize, margin: usize) -> bool {
        let mut tokens = Vec::new();
        let count = super::windows(bpe, piece, window, margin, Some(&mut tokens)).expect("memory");
        let whole = bpe.heap_merge_ends(piece).expect("memory");
        let Some(count) = count else { return false };
        let ends: Vec<usize> = tokens.iter().map(|t| t.end).collect();
        let what = || {
            format!(
                "{:?}, a piece of {} bytes ({:?}), window {window}, margin {margin}",
                bpe.encoding(),
                piece.len(),
                String::from_utf8_lossy(&piece[..piece.len().min(100)])
            )
        };
        assert_eq!(count, whole.len(), "token count: {}", what());
        assert!(ends == whole, "tokens: {}", what());
        assert!(tokens.windows(2).all(|w| w[0].end == w[1].start) && tokens[0].start == 0, "ranges: {}", what());
        true
    }

    fn random_piece(rnd: &mut impl FnMut() -> u64, alphabet: &str, len: usize) -> Vec<u8> {
        let a: Vec<char> = alphabet.chars().collect();
        (0..len).map(|_| a[(rnd() % a.len() as u64) as usize]).collect::<String>().into_bytes()
    }

    #[test]
    fn small_windows_give_the_tokens_of_the_whole_piece_or_give_up() {
        // Windows of tens of bytes, cut a few bytes before their end: cuts
        // that are not boundaries of the whole piece's encoding are common,
        // so junctions fail, later cuts are tried and windows give up.
        let mut rnd = xorshift(0x0DDB_A11C_AFE5_EED5);
        let alphabets = ["ab", "abc", "etaoinshrdlu", "abcdefghijklmnopqrstuvwxyz", "aAbBeEtT", "=-", " ", "中国人的是不", "éèêa"];
        let (mut held, mut gave_up) = (0, 0);
        for round in 0..600 {
            let alphabet = alphabets[round % alphabets.len()];
            let len = 40 + (rnd() % 600) as usize;
            let piece = random_piece(&mut rnd, alphabet, len);
            let window = 16 + (rnd() % 64) as usize;
            let margin = (rnd() % 12) as usize;
            for e in Encoding::ALL {
                if check(Bpe::get(e), &piece, window, margin) {
                    held += 1;
                } else {
                    gave_up += 1;
                }
            }
        }
        assert!(held > 400 && gave_up > 20, "held {held}, gave up {gave_up}");
    }

    #[test]
    fn windows_give_the_tokens_of_the_whole_piece() {
        let mut rnd = xorshift(0x1234_5678_9ABC_DEF1);
        // Runs of one character (ASCII, two, three and four bytes), short
        // periods, random letters from small and large alphabets (long runs
        // of varied merges), and a script without spaces.
        let mut pieces: Vec<Vec<u8>> = vec![
            b"a".repeat(100_000),
            b" ".repeat(80_000),
            b"=".repeat(70_003),
            "é".repeat(35_001).into_bytes(),
            "中".repeat(25_000).into_bytes(),
            "😀".repeat(20_000).into_bytes(),
            b"ab".repeat(40_000),
            b"abc".repeat(25_001),
            b"-=".repeat(35_000),
        ];
        for alphabet in ["ab", "etaoinshrdlu", "abcdefghijklmnopqrstuvwxyz"] {
            pieces.push(random_piece(&mut rnd, alphabet, 70_000));
        }
        pieces.push(random_piece(&mut rnd, "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年", 25_000));
        // Runs that change now and then: windows partly remembered.
        let mut mixed = Vec::new();
        while mixed.len() < 150_000 {
            let c = b"ax "[(rnd() % 3) as usize];
            let run = 1 + (rnd() % 30_000) as usize;
            mixed.extend(std::iter::repeat_n(c, run));
        }
        pieces.push(mixed);
        for e in Encoding::ALL {
            let bpe = Bpe::get(e);
            for p in &pieces {
                assert!(check(bpe, p, super::WINDOW, super::MARGIN), "{e:?}: the windows gave up on a piece of {} bytes", p.len());
                assert_eq!(super::count_long(bpe, p).expect("memory"), bpe.heap_merge_ends(p).expect("memory").len());
            }
        }
    }

    #[test]
    fn a_hundred_megabytes_of_one_letter_take_little_memory() {
        // What the windows are for: the heap merge would take 4.4 GB here.
        let piece = vec![b'a'; 100 << 20];
        let bpe = Bpe::get(Encoding::O200kBase);
        // "aaaaaaaa" is a token, and eight of them merge no further.
        assert_eq!(super::count_long(bpe, &piece).expect("memory"), (100 << 20) / 8);
    }
}
