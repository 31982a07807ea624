//! Any text, any options: the TOON event decoder (the reference's
//! `decodeStreamSync`) ends as `decode` does, with the same error or with
//! events; decoding a stream's lines so far (cut at a line the first byte
//! picks) reports no more events than the whole text, and no error the
//! whole text does not have; and the resumable decoder (`StreamDecoder`),
//! given the text in pieces the input picks (split anywhere, even inside a
//! character: fed as bytes through `Utf8Decoder`) or line by line, reports
//! exactly the whole text's events and error. Never a panic. (The property
//! tests in `core/src/toon/decode/tests.rs` check the events themselves.)
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/toon_events/`) on stable.

use polywire::toon::decode::{decode, decode_events, DecodeOptions, Event, Input, StreamDecoder, Utf8Decoder};

type Outcome = (Vec<String>, Option<(&'static str, Option<usize>, Option<usize>, String)>);

fn outcome(events: Vec<String>, r: polywire::Result<()>) -> Outcome {
    (events, r.err().map(|e| (e.code(), e.line(), e.column(), e.message().to_string())))
}

/// `text` through a `StreamDecoder`: in pieces of the lengths `sizes`
/// gives in turn (bytes), or line by line when it is empty.
fn streamed(text: &str, opts: &DecodeOptions, sizes: &[u8]) -> Outcome {
    let mut events = Vec::new();
    let Ok(mut d) = StreamDecoder::new(opts) else { unreachable!("options checked") };
    let mut on = |e: Event<'_>| events.push(format!("{e:?}"));
    let r = if sizes.is_empty() {
        text.split('\n').try_for_each(|l| d.push_line(l, &mut on))
    } else {
        let mut utf8 = Utf8Decoder::new(false);
        let (mut rest, mut piece, mut i) = (text.as_bytes(), String::new(), 0);
        let mut r = Ok(());
        while !rest.is_empty() && r.is_ok() {
            let n = usize::from(sizes[i % sizes.len()]).clamp(1, rest.len());
            i += 1;
            let (a, b) = rest.split_at(n);
            rest = b;
            piece.clear();
            assert!(utf8.decode(a, rest.is_empty(), &mut piece).is_ok(), "valid UTF-8");
            r = d.feed(&piece, &mut on);
        }
        r
    };
    let r = r.and_then(|()| d.finish(&mut on));
    outcome(events, r)
}

pub fn toon_events(data: &[u8]) {
    let Some((&flags, bytes)) = data.split_first() else {
        return;
    };
    // The text, then (after a 0xFF byte, which UTF-8 text never holds) the
    // sizes of the pieces it is streamed in.
    let (bytes, sizes) = match bytes.iter().position(|&b| b == 0xFF) {
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (bytes, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let opts = DecodeOptions { indent: usize::from(flags & 3) + 1, strict: flags & 4 != 0, ..Default::default() };
    let mut all = Vec::new();
    let whole = decode_events(text, &opts, Input::Whole, &mut |e| all.push(format!("{e:?}")));
    let value = decode(text, &opts);
    assert_eq!(
        whole.as_ref().err().map(|e| (e.code(), e.line(), e.column())),
        value.as_ref().err().map(|e| (e.code(), e.line(), e.column()))
    );
    let lines: Vec<&str> = text.split('\n').collect();
    let cut = usize::from(flags >> 3) % lines.len() + 1;
    let mut some = 0usize;
    let so_far = decode_events(&lines[..cut].join("\n"), &opts, Input::SoFar, &mut |_| some += 1);
    assert!(some <= all.len());
    if let Err(e) = so_far {
        assert_eq!(whole.as_ref().err().map(|w| (w.code(), w.line())), Some((e.code(), e.line())));
    }
    let want = outcome(all, whole.map(|_| ()));
    assert_eq!(streamed(text, &opts, sizes), want, "in pieces {sizes:?}");
    assert_eq!(streamed(text, &opts, &[]), want, "line by line");
    assert_eq!(streamed(text, &opts, &[1]), want, "byte by byte");
}
