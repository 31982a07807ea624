//! `polywire [INPUT]`: JSON to TOON (encode) and TOON to JSON (decode), as
//! `@toon-format/cli` converts them, with `--stats`.

use polywire::tokens::Tokenizer;
use polywire::toon::decode::{DecodeOptions, JsonStream};
use polywire::toon::encode::EncodeOptions;
use polywire::toon::Delimiter;

use crate::io::{label, Input, Output};
use crate::stats::{format_stats, Size};
use crate::{Ctx, Fail, CHUNK};

/// The text of a TOON decode error as the command prints it: the message
/// with its line (and column), then the line itself with a caret under the
/// column (or the first character that is not a space). A line longer than
/// [`WINDOW`] characters is shown around the column only, `…` marking
/// what is left out.
pub(crate) fn toon_decode_message(msg: &str, line: Option<usize>, column: Option<usize>, source: Option<&str>) -> String {
    let Some(line) = line else { return format!("Failed to decode TOON: {msg}") };
    let column = column.filter(|&c| c > 0);
    let place = match column {
        Some(c) => format!("line {line}, column {c}"),
        None => format!("line {line}"),
    };
    let text = format!("Failed to decode TOON at {place}: {msg}");
    let Some(source) = source.filter(|s| !s.is_empty()) else { return text };
    let visible: Vec<char> = source.chars().map(|c| if c == '\t' { '\u{2192}' } else { c }).collect();
    let caret = match column {
        Some(c) => c - 1,
        None => visible.iter().position(|&c| !is_js_space(c)).unwrap_or_default(),
    };
    let gutter = format!("  {line} | ");
    let (shown, caret) = window(&visible, caret);
    format!("{text}\n\n{gutter}{shown}\n{}^", " ".repeat(gutter.len() + caret))
}

/// Lines up to this many characters are shown whole.
const WINDOW: usize = 100;

/// The part of a long line shown around character `caret`, and where the
/// caret falls in it.
fn window(line: &[char], caret: usize) -> (String, usize) {
    if line.len() <= WINDOW {
        return (line.iter().collect(), caret);
    }
    let anchor = caret.min(line.len());
    let mut start = anchor.saturating_sub(WINDOW / 2);
    let end = (start + WINDOW).min(line.len());
    start = start.min(end.saturating_sub(WINDOW));
    let mut shown = String::new();
    let mut at = caret - start;
    if start > 0 {
        shown.push('\u{2026}');
        at += 1;
    }
    shown.extend(&line[start..end]);
    if end < line.len() {
        shown.push('\u{2026}');
    }
    (shown, at)
}

/// JavaScript's `\s`.
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

fn utf8_message(offset: usize) -> String {
    format!("Input is not valid UTF-8 at byte {offset}. Pass --no-strict to replace ill-formed bytes")
}

/// What the options of the main command say.
pub(crate) struct Convert<'a> {
    pub input: Option<&'a std::ffi::OsStr>,
    pub output: Option<&'a std::ffi::OsStr>,
    pub delimiter: Delimiter,
    pub indent: usize,
    pub strict: bool,
    /// `--stats`, with the tokenizer to count with.
    pub stats: Option<Tokenizer>,
}

/// JSON to TOON: the whole input is read, parsed and encoded.
pub(crate) fn encode(ctx: &mut Ctx<'_>, c: &Convert<'_>) -> Result<(), Fail> {
    let mut input = Input::open(c.input, &ctx.std)?;
    let mut out = Output::new(c.output, ctx.stdout, &ctx.std, input.id.as_ref())?;
    let raw = input.read_all(ctx.stdin)?;
    let text = String::from_utf8_lossy(&raw);
    let value = crate::json::parse_json(&text)?;
    let opts = EncodeOptions { indent: c.indent, delimiter: c.delimiter, ..Default::default() };
    let mut toon = polywire::toon::encode::encode(&&value, &opts).map_err(|e| Fail::codec(e.to_string(), &e))?;
    drop(value);
    let toon_len = toon.len();
    toon.push('\n');
    for block in toon.as_bytes().chunks(16 * CHUNK) {
        out.write(block)?;
    }
    toon.truncate(toon_len);
    let written = out.path().is_some();
    out.finish()?;
    if written {
        ctx.note(&format!("Encoded `{}` \u{2192} `{}`", label(input.path()), label(c.output)));
    }
    if let Some(t) = &c.stats {
        let json = Size::of(&text, raw.len(), t)?;
        let toon = Size::of(&toon, toon.len(), t)?;
        ctx.note(&format_stats(&json, &toon));
    }
    Ok(())
}

/// TOON to JSON, streamed: the JSON text goes out as the lines decide it,
/// in whole blocks of [`CHUNK`] bytes (a fault drops the block it is in),
/// with memory bounded by the open structure and the longest line.
pub(crate) fn decode(ctx: &mut Ctx<'_>, c: &Convert<'_>) -> Result<(), Fail> {
    let mut input = Input::open(c.input, &ctx.std)?;
    let mut out = Output::new(c.output, ctx.stdout, &ctx.std, input.id.as_ref())?;
    let opts = DecodeOptions { indent: c.indent, strict: c.strict, ..Default::default() };
    let mut decoder = JsonStream::new(&opts).map_err(|e| Fail::codec(e.to_string(), &e))?;
    // --stats counts the tokens of the whole texts: they are kept.
    let keep = c.stats.is_some();
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    let (mut in_bytes, mut out_bytes) = (0usize, 0usize);
    let mut pending: Vec<u8> = Vec::with_capacity(CHUNK + 1);
    let mut last = false;
    while !last {
        let chunk = input.read_chunk(ctx.stdin)?;
        last = chunk.is_empty();
        in_bytes += chunk.len();
        if keep {
            inputs.extend_from_slice(chunk);
        }
        decoder.feed(chunk, last);
        // Whole blocks go out as they complete (those before a fault in
        // this piece too); less than a block waits in `pending`.
        decoder.take(|json| {
            out_bytes += json.len();
            if keep {
                outputs.extend_from_slice(json);
            }
            let fill = CHUNK - pending.len();
            if json.len() < fill {
                pending.extend_from_slice(json);
                return Ok(());
            }
            pending.extend_from_slice(&json[..fill]);
            out.write(&pending)?;
            pending.clear();
            let rest = &json[fill..];
            let whole = rest.len() - rest.len() % CHUNK;
            out.write(&rest[..whole])?;
            pending.extend_from_slice(&rest[whole..]);
            Ok::<(), Fail>(())
        })?;
        if let Some((e, source)) = decoder.failure() {
            let message = if e.code() == "TOON_INVALID_UTF8" {
                utf8_message(e.offset().unwrap_or(0))
            } else {
                toon_decode_message(e.message(), e.line(), e.column(), source.as_deref())
            };
            return Err(Fail::codec(message, e));
        }
    }
    pending.push(b'\n');
    out.write(&pending)?;
    let written = out.path().is_some();
    out.finish()?;
    if written {
        ctx.note(&format!("Decoded `{}` \u{2192} `{}`", label(input.path()), label(c.output)));
    }
    if let Some(t) = &c.stats {
        let json_text = String::from_utf8_lossy(&outputs);
        let toon_text = String::from_utf8_lossy(&inputs);
        let toon_text = toon_text.strip_prefix('\u{feff}').unwrap_or(&toon_text);
        let json = Size {
            tokens: Some(t.count(&json_text).map_err(|e| Fail::codec(e.to_string(), &e))?),
            bytes: out_bytes,
            chars: decoder.output_chars() as usize,
        };
        let toon = Size {
            tokens: Some(t.count(toon_text).map_err(|e| Fail::codec(e.to_string(), &e))?),
            bytes: in_bytes,
            chars: decoder.input_chars() as usize,
        };
        ctx.note(&format_stats(&json, &toon));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_errors_show_the_line_and_a_caret() {
        assert_eq!(
            toon_decode_message("Expected 3 inline-form values, but got 2", Some(1), Some(1), Some("a[3]: 1,2")),
            "Failed to decode TOON at line 1, column 1: Expected 3 inline-form values, but got 2\n\n  1 | a[3]: 1,2\n      ^"
        );
        assert_eq!(
            toon_decode_message("m", Some(2), None, Some("\t  x")),
            "Failed to decode TOON at line 2: m\n\n  2 | \u{2192}  x\n      ^"
        );
        assert_eq!(toon_decode_message("m", Some(2), None, Some("   x")), "Failed to decode TOON at line 2: m\n\n  2 |    x\n         ^");
        assert_eq!(toon_decode_message("m", Some(2), Some(3), None), "Failed to decode TOON at line 2, column 3: m");
        assert_eq!(toon_decode_message("m", None, None, Some("x")), "Failed to decode TOON: m");
    }

    #[test]
    fn a_long_line_is_shown_around_its_column() {
        let line = format!("{}x{}", "a".repeat(5_000_000), "b".repeat(3000));
        let m = toon_decode_message("bad", Some(1), Some(5_000_001), Some(&line));
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[2].chars().count() < 120, "{}", lines[2]);
        assert!(lines[2].starts_with("  1 | \u{2026}aaa") && lines[2].ends_with("bbb\u{2026}"));
        let caret = lines[3].len() - 1;
        assert_eq!(lines[3].as_bytes()[caret], b'^');
        assert_eq!(lines[2].chars().nth(caret), Some('x'));
        // At the start and at the end of the line: one ellipsis.
        let m = toon_decode_message("bad", Some(1), Some(1), Some(&line));
        let shown = m.lines().nth(2).unwrap();
        assert!(shown.starts_with("  1 | aaa") && shown.ends_with('\u{2026}'));
        assert_eq!(m.lines().nth(3), Some("      ^"));
        let n = line.chars().count();
        let m = toon_decode_message("bad", Some(1), Some(n), Some(&line));
        let (shown, caret) = (m.lines().nth(2).unwrap(), m.lines().nth(3).unwrap());
        assert!(shown.starts_with("  1 | \u{2026}b") && shown.ends_with('b'));
        assert_eq!(shown.chars().nth(caret.len() - 1), Some('b'));
        assert_eq!(caret.len(), shown.chars().count());
    }
}
