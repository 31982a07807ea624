//! With the feature `tokens`: the rank tables of `o200k_base` and
//! `cl100k_base`, written into `OUT_DIR` in the form `tokens_table.rs` reads
//! in place (no parsing, no allocation at first use): the tokens' bytes in
//! rank order, their offsets, and a hash-and-displace table from bytes to
//! rank. The ranks come from the rank files the `tiktoken-rs` crate ships,
//! checked against the SHA-256 tiktoken publishes for each
//! (`tiktoken_ext/openai_public.py`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/tokens_table_hash.rs");
    #[cfg(feature = "tokens")]
    tables::write();
}

#[cfg(feature = "tokens")]
mod tables {
    use sha2::{Digest, Sha256};

    include!("src/tokens_table_hash.rs");

    /// Each encoding: its name, number of ordinary tokens, tiktoken's SHA-256
    /// of its rank file, and how to load it.
    type Load = fn() -> tiktoken_rs::CoreBPE;
    const ENCODINGS: [(&str, u32, &str, Load); 2] = [
        ("o200k_base", 199_998, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", || {
            tiktoken_rs::o200k_base().expect("tiktoken-rs ships o200k_base")
        }),
        ("cl100k_base", 100_256, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", || {
            tiktoken_rs::cl100k_base().expect("tiktoken-rs ships cl100k_base")
        }),
    ];

    pub fn write() {
        let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
        let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("big");
        for (name, n, sha, load) in ENCODINGS {
            let core = load();
            let tokens: Vec<Vec<u8>> = (0..n).map(|r| core.decode_bytes(&[r]).expect("the ordinary ranks are dense")).collect();
            check_rank_file(name, &tokens, sha);
            let table = build(&tokens, big_endian);
            std::fs::write(out.join(format!("{name}.ranks")), table).expect("write the rank table");
        }
    }

    /// The rank file tiktoken-rs parsed, written back (`base64 rank` lines in
    /// rank order), must be the one tiktoken publishes.
    fn check_rank_file(name: &str, tokens: &[Vec<u8>], sha: &str) {
        let mut hasher = Sha256::new();
        for (rank, t) in tokens.iter().enumerate() {
            hasher.update(base64(t).as_bytes());
            hasher.update(format!(" {rank}\n").as_bytes());
        }
        let got: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, sha, "{name}: the rank file is not the one tiktoken publishes");
    }

    fn base64(bytes: &[u8]) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for c in bytes.chunks(3) {
            let v = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
            for k in 0..4 {
                if k <= c.len() {
                    s.push(A[(v >> (18 - 6 * k)) as usize & 63] as char);
                } else {
                    s.push('=');
                }
            }
        }
        s
    }

    /// The table: header, offsets (`n + 1`), slots (`m`, a rank or
    /// `u32::MAX`), displacements (`nb`, padded to four bytes), bytes.
    fn build(tokens: &[Vec<u8>], big_endian: bool) -> Vec<u8> {
        let n = tokens.len();
        let nb = n.div_ceil(4);
        let hashes: Vec<u64> = tokens.iter().map(|t| table_hash(t)).collect();
        // Two tokens of one hash could share no table (every displacement
        // puts them in one slot): the hash must tell every token apart.
        let mut sorted = hashes.clone();
        sorted.sort_unstable();
        assert!(sorted.windows(2).all(|w| w[0] != w[1]), "two tokens have the same table_hash: change the hash");
        // Buckets by size, largest first: they are placed while the table is
        // emptiest.
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); nb];
        for (i, &h) in hashes.iter().enumerate() {
            buckets[table_range(h, nb)].push(i as u32);
        }
        let mut order: Vec<usize> = (0..nb).collect();
        order.sort_by_key(|&b| std::cmp::Reverse(buckets[b].len()));
        let mut m = n + n / 16;
        let (slots, disp) = loop {
            if let Some(done) = place(&hashes, &buckets, &order, m) {
                break done;
            }
            assert!(m < 2 * n, "no hash-and-displace table up to twice the tokens: change the hash");
            m += n / 32;
        };
        let bytes_len: usize = tokens.iter().map(Vec::len).sum();
        let u32s = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut out = Vec::with_capacity(TABLE_HEADER + 4 * (n + 1 + m) + 2 * nb + 4 + bytes_len);
        out.extend_from_slice(TABLE_MAGIC);
        for v in [TABLE_VERSION, n as u32, m as u32, nb as u32, bytes_len as u32] {
            out.extend_from_slice(&u32s(v));
        }
        let mut at = 0u32;
        out.extend_from_slice(&u32s(0));
        for t in tokens {
            at += t.len() as u32;
            out.extend_from_slice(&u32s(at));
        }
        for s in slots {
            out.extend_from_slice(&u32s(s));
        }
        for d in disp {
            out.extend_from_slice(&if big_endian { d.to_be_bytes() } else { d.to_le_bytes() });
        }
        while out.len() % 4 != 0 {
            out.push(0);
        }
        for t in tokens {
            out.extend_from_slice(t);
        }
        out
    }

    /// Displacements that put every token in a slot of its own among `m`,
    /// or None when a bucket finds none below `u16::MAX`.
    fn place(hashes: &[u64], buckets: &[Vec<u32>], order: &[usize], m: usize) -> Option<(Vec<u32>, Vec<u16>)> {
        let mut slots = vec![u32::MAX; m];
        let mut disp = vec![0u16; buckets.len()];
        let mut taken: Vec<usize> = Vec::new();
        for &b in order {
            let keys = &buckets[b];
            if keys.is_empty() {
                continue;
            }
            let mut d = 0u16;
            loop {
                taken.clear();
                let fits = keys.iter().all(|&k| {
                    let s = table_slot(hashes[k as usize], d, m);
                    let free = slots[s] == u32::MAX && !taken.contains(&s);
                    taken.push(s);
                    free
                });
                if fits {
                    for (&k, &s) in keys.iter().zip(&taken) {
                        slots[s] = k;
                    }
                    disp[b] = d;
                    break;
                }
                d = d.checked_add(1)?;
            }
        }
        Some((slots, disp))
    }
}
