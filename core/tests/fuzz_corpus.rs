//! Replays the committed fuzz seeds (`fuzz/corpus-seed/<target>/`) through
//! the fuzz targets' bodies (`fuzz/bodies/`), on stable, as ordinary tests:
//! `cargo fuzz` needs nightly, CI does not.

use std::path::PathBuf;

#[path = "../../fuzz/bodies/kado_frame_decoder.rs"]
mod kado_frame_decoder;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus-seed").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    for f in files {
        let data = std::fs::read(&f).expect("seed");
        let r = std::panic::catch_unwind(|| body(&data));
        assert!(r.is_ok(), "{} fails", f.display());
    }
}

#[test]
fn kado_frame_decoder_seeds() {
    replay("kado_frame_decoder", kado_frame_decoder::kado_frame_decoder);
}
