// The hash and layout of the rank tables, shared by the build script that
// writes them (`core/build.rs`, through `include!`) and the code that reads
// them in place (`tokens_table.rs`): both must agree bit for bit.

/// The first bytes of a table.
const TABLE_MAGIC: &[u8; 4] = b"PWRK";
/// Its layout version.
const TABLE_VERSION: u32 = 1;
/// The header: magic, version, tokens `n`, slots `m`, buckets `nb`, bytes.
const TABLE_HEADER: usize = 24;

/// A 64-bit hash of a token's bytes, cheap on the short pieces lookups are
/// made for (it runs for every lookup that misses the memo of counts): one
/// to three bytes combined, four to sixteen read as two overlapping words,
/// longer ones eight bytes at a time and the last eight; then a multiply.
#[inline]
fn table_hash(b: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let n = b.len();
    let r8 = |i: usize| u64::from_le_bytes(b.get(i..i + 8).and_then(|w| w.try_into().ok()).unwrap_or_default());
    let r4 = |i: usize| u64::from(u32::from_le_bytes(b.get(i..i + 4).and_then(|w| w.try_into().ok()).unwrap_or_default()));
    let (x, y) = if n >= 8 {
        let mut x = 0u64;
        let mut i = 0;
        while i + 8 < n {
            x = (x ^ r8(i)).wrapping_mul(K).rotate_left(29);
            i += 8;
        }
        (x, r8(n - 8))
    } else if n >= 4 {
        (r4(0), r4(n - 4))
    } else if n > 0 {
        (u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16, 0)
    } else {
        (0, 0)
    };
    // The length is spread over every bit before the multiply (in the low
    // byte it would cancel against bytes read into `x`, in the top one
    // against those of `y`).
    let h = ((x ^ (n as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)).wrapping_mul(K) ^ y).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 32)
}

/// `x` mapped onto `0..n` by its high bits (Lemire's multiply-shift).
#[inline]
fn table_range(x: u64, n: usize) -> usize {
    ((u128::from(x) * n as u128) >> 64) as usize
}

/// The slot of a token whose hash is `h` in a table of `m` slots, given its
/// bucket's displacement `d` (hash and displace: each bucket's displacement
/// was chosen so that its tokens land in free slots).
#[inline]
fn table_slot(h: u64, d: u16, m: usize) -> usize {
    table_range((h ^ (u64::from(d) + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93)).wrapping_mul(0xBF58_476D_1CE4_E5B9), m)
}
