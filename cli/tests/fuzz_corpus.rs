//! Replays the committed corpus of the command's fuzz target
//! (`fuzz/corpus-seed/cli_run/`) through its body (`fuzz/bodies/cli_run.rs`),
//! on stable, as core/tests/fuzz_corpus.rs does for the codecs' targets
//! (which cannot depend on this crate).

use std::path::PathBuf;

#[path = "../../fuzz/bodies/cli_run.rs"]
mod cli_run;

#[test]
fn cli_run() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus-seed/cli_run");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.expect("dir entry").path()).collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    let seeds: Vec<(PathBuf, Vec<u8>)> = files
        .into_iter()
        .map(|f| {
            let data = std::fs::read(&f).expect("seed");
            (f, data)
        })
        .collect();
    for (f, data) in &seeds {
        let r = std::panic::catch_unwind(|| cli_run::cli_run(data));
        assert!(r.is_ok(), "{} fails", f.display());
    }
}

/// Random command lines and inputs on stable, from a seeded generator
/// (cargo-fuzz explores beyond them with coverage feedback).
#[test]
fn cli_run_random_inputs() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let bodies: [&[u8]; 5] = [
        b"{\"a\": [1, 2], \"b\": {\"c\": \"x\"}}",
        b"a[2]: 1,2\nb:\n  c: x\n",
        b"0000000a",
        b"\x01\x02\x05\x00\x00\x00",
        b"[{\"a\":1},{\"a\":2}]",
    ];
    for _ in 0..3000 {
        let n = (next() % 6) as u8;
        let mut data = vec![n];
        data.extend((0..n).map(|_| next() as u8));
        let body = bodies[(next() % bodies.len() as u64) as usize];
        let cut = (next() % (body.len() as u64 + 1)) as usize;
        data.extend_from_slice(&body[..cut]);
        cli_run::cli_run(&data);
    }
}
