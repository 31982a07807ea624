//! The rank tables of the built-in encodings, read in place: `core/build.rs`
//! writes each (from the rank files `tiktoken-rs` ships, checked against
//! tiktoken's SHA-256) into the binary, and a lookup hashes the bytes,
//! finds their one possible slot (hash and displace) and compares them with
//! that slot's token. Nothing is parsed or allocated at first use: the first
//! count of a process costs what its lookups touch.

use super::Encoding;

include!("tokens_table_hash.rs");

/// Bytes aligned for the `u32` and `u16` arrays read from them in place.
#[repr(C, align(8))]
struct Aligned<T: ?Sized>(T);

static O200K: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks")));
static CL100K: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks")));

/// One encoding's table.
#[derive(Clone, Copy)]
pub(super) struct RankTable {
    /// Where each rank's bytes start in `bytes` (and, at `n`, where they end).
    offsets: &'static [u32],
    /// Each slot's rank, or `u32::MAX`.
    slots: &'static [u32],
    /// Each bucket's displacement.
    disp: &'static [u16],
    bytes: &'static [u8],
}

impl RankTable {
    pub(super) fn get(encoding: Encoding) -> RankTable {
        let blob = match encoding {
            Encoding::O200kBase => &O200K.0,
            Encoding::Cl100kBase => &CL100K.0,
        };
        RankTable::from_blob(blob)
    }

    /// The table's arrays within `blob` (as `build.rs` wrote it for this
    /// target's byte order). A table that does not read back is a broken
    /// build, so it fails loudly rather than counting wrong.
    fn from_blob(blob: &'static [u8]) -> RankTable {
        assert!(blob.len() >= TABLE_HEADER && &blob[..4] == TABLE_MAGIC, "a polywire rank table");
        let word = |i: usize| u32::from_ne_bytes([blob[4 * i], blob[4 * i + 1], blob[4 * i + 2], blob[4 * i + 3]]) as usize;
        let (version, n, m, nb, bytes_len) = (word(1), word(2), word(3), word(4), word(5));
        assert_eq!(version, TABLE_VERSION as usize, "the rank table's layout version");
        let offsets_at = TABLE_HEADER;
        let slots_at = offsets_at + 4 * (n + 1);
        let disp_at = slots_at + 4 * m;
        let bytes_at = (disp_at + 2 * nb).next_multiple_of(4);
        assert_eq!(bytes_at + bytes_len, blob.len(), "the rank table's size");
        // SAFETY: the blob is 8-byte aligned (`Aligned`) and the arrays start
        // at multiples of four (their own alignment) within it, in bounds
        // (checked above); every bit pattern is a valid u32 and u16.
        let (offsets, slots, disp) = unsafe {
            let base = blob.as_ptr();
            (
                std::slice::from_raw_parts(base.add(offsets_at) as *const u32, n + 1),
                std::slice::from_raw_parts(base.add(slots_at) as *const u32, m),
                std::slice::from_raw_parts(base.add(disp_at) as *const u16, nb),
            )
        };
        RankTable { offsets, slots, disp, bytes: &blob[bytes_at..] }
    }

    /// The number of tokens.
    pub(super) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The rank of the token whose bytes are `piece`.
    #[inline]
    pub(super) fn rank(&self, piece: &[u8]) -> Option<u32> {
        let h = table_hash(piece);
        let d = self.disp[table_range(h, self.disp.len())];
        let rank = self.slots[table_slot(h, d, self.slots.len())];
        let token = self.token(rank)?;
        (token == piece).then_some(rank)
    }

    /// The bytes of the token of rank `rank`.
    #[inline]
    pub(super) fn token(&self, rank: u32) -> Option<&'static [u8]> {
        let r = rank as usize;
        let (start, end) = (*self.offsets.get(r)? as usize, *self.offsets.get(r + 1)? as usize);
        self.bytes.get(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_reads_back_and_looks_up_to_itself() {
        for e in Encoding::ALL {
            let t = RankTable::get(e);
            let core = match e {
                Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            };
            assert_eq!(t.len(), e.ordinary_tokens() as usize);
            for rank in 0..t.len() as u32 {
                let bytes = t.token(rank).expect("a token");
                assert_eq!(bytes, core.decode_bytes(&[rank]).expect("tiktoken decodes it"), "{e:?} rank {rank}");
                assert_eq!(t.rank(bytes), Some(rank), "{e:?} rank {rank}");
            }
            // Strings that are no token: found nowhere.
            for not in [&b"\xff\xfe\xfd\xfc"[..], b"", b"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", b"\x00\x01"] {
                assert_eq!(t.rank(not), None, "{e:?} {not:?}");
            }
        }
    }
}
