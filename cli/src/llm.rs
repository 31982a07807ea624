//! `polywire tokens` and `polywire choose`: exact token counts
//! (`polywire::tokens`), and the rendering of a value with the fewest.

use std::ffi::OsStr;

use polywire::tokens::{Encoding, Tokenizer};
use polywire::toon::decode::DecodeOptions;
use polywire::toon::encode::EncodeOptions;
use polywire::toon::Delimiter;

use crate::convert::toon_decode_message;
use crate::io::{Input, Output};
use crate::stats::table;
use crate::value::{JsBuilder, Value};
use crate::{Ctx, Fail};

/// The default encoding.
pub(crate) const DEFAULT_ENCODING: &str = "o200k_base";

/// The tokenizer `--encoding` names: a built-in encoding, or the path of a
/// `tokenizer.json` (loaded). Any other name, the empty one included, is
/// refused, naming the valid ones.
pub(crate) fn tokenizer(name: Option<&OsStr>) -> Result<Tokenizer, Fail> {
    let name = name.map_or_else(|| DEFAULT_ENCODING.into(), OsStr::to_string_lossy);
    Tokenizer::from_name(&name).map_err(|e| Fail::codec(e.to_string(), &e))
}

/// Check `--encoding` without loading a built-in encoding's ranks (for a
/// command that counts only with --stats).
pub(crate) fn check_encoding(name: Option<&OsStr>) -> Result<(), Fail> {
    match name {
        Some(n) if n.to_str().and_then(Encoding::from_name).is_none() => tokenizer(Some(n)).map(drop),
        _ => Ok(()),
    }
}

fn count_fail(e: polywire::Error) -> Fail {
    Fail::codec(e.to_string(), &e)
}

/// `polywire tokens`: the number of tokens of the input, on stdout.
pub(crate) fn tokens(ctx: &mut Ctx<'_>, input: Option<&OsStr>, encoding: Option<&OsStr>) -> Result<(), Fail> {
    let t = tokenizer(encoding)?;
    let mut input = Input::open(input, &ctx.std)?;
    let mut out = Output::new(None, ctx.stdout, &ctx.std, input.id.as_ref())?;
    let raw = input.read_all(ctx.stdin)?;
    let n = t.count(&String::from_utf8_lossy(&raw)).map_err(count_fail)?;
    out.write(format!("{n}\n").as_bytes())?;
    out.finish()
}

/// What `choose`'s options say.
pub(crate) struct Choose<'a> {
    pub input: Option<&'a OsStr>,
    pub output: Option<&'a OsStr>,
    pub delimiter: Option<Delimiter>,
    pub indent: usize,
    pub pretty: bool,
    pub encoding: Option<&'a OsStr>,
}

/// A rendering `choose` weighs.
#[derive(Clone, Copy, PartialEq)]
enum Rendering {
    Toon(Delimiter),
    Json,
    JsonPretty,
}

impl Rendering {
    fn name(self) -> &'static str {
        match self {
            Rendering::Toon(Delimiter::Comma) => "toon",
            Rendering::Toon(Delimiter::Tab) => "toon-tab",
            Rendering::Toon(Delimiter::Pipe) => "toon-pipe",
            Rendering::Json => "json",
            Rendering::JsonPretty => "json-pretty",
        }
    }
}

/// `polywire choose`: each rendering of the value (TOON with each
/// delimiter, or `--delimiter`'s; compact JSON; with `--pretty`, JSON
/// indented by 2, as `JSON.stringify` writes them), counted with the
/// tokenizer; the one with the fewest tokens (the first listed of equals)
/// on the output, the table of all on stderr.
pub(crate) fn choose(ctx: &mut Ctx<'_>, c: &Choose<'_>) -> Result<(), Fail> {
    let t = tokenizer(c.encoding)?;
    let mut input = Input::open(c.input, &ctx.std)?;
    let mut out = Output::new(c.output, ctx.stdout, &ctx.std, input.id.as_ref())?;
    let raw = input.read_all(ctx.stdin)?;
    let text = String::from_utf8_lossy(&raw);
    let is_toon = c.input.is_some_and(|p| p.to_string_lossy().ends_with(".toon"));
    let value = if is_toon { decode_toon(&text, c.indent.max(1))? } else { crate::json::parse_json(&text)? };
    let mut renderings: Vec<Rendering> = match c.delimiter {
        Some(d) => vec![Rendering::Toon(d)],
        None => [Delimiter::Comma, Delimiter::Tab, Delimiter::Pipe].map(Rendering::Toon).to_vec(),
    };
    renderings.push(Rendering::Json);
    if c.pretty {
        renderings.push(Rendering::JsonPretty);
    }
    let mut texts: Vec<String> = Vec::with_capacity(renderings.len());
    for r in &renderings {
        texts.push(render(&value, *r, c.indent)?);
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let counts = t.count_many(&refs).map_err(count_fail)?;
    let best = (0..counts.len()).min_by_key(|&i| (counts[i], i)).unwrap_or(0);
    out.write(texts[best].as_bytes())?;
    out.write(b"\n")?;
    out.finish()?;
    let mut rows = vec![vec![String::new(), "tokens".to_owned(), "bytes".to_owned(), String::new()]];
    for (i, r) in renderings.iter().enumerate() {
        let chosen = if i == best { "chosen" } else { "" };
        rows.push(vec![r.name().to_owned(), counts[i].to_string(), texts[i].len().to_string(), chosen.to_owned()]);
    }
    ctx.note(&table(&rows));
    Ok(())
}

fn render(value: &Value, r: Rendering, indent: usize) -> Result<String, Fail> {
    let json_fail = |e: polywire::Error| Fail::codec(e.to_string(), &e);
    match r {
        Rendering::Toon(delimiter) => {
            let opts = EncodeOptions { indent, delimiter, ..Default::default() };
            polywire::toon::encode::encode(&value, &opts).map_err(json_fail)
        }
        Rendering::Json | Rendering::JsonPretty => {
            let compact = value.to_json().map_err(json_fail)?;
            let bytes = if r == Rendering::Json {
                compact
            } else {
                let mut out = Vec::with_capacity(compact.len() * 2);
                polywire::json::indent_compact(&compact, 2, &mut out);
                out
            };
            String::from_utf8(bytes).map_err(|_| Fail::error("the JSON text is not UTF-8"))
        }
    }
}

/// A `.toon` input of `choose`, decoded whole (strict), as JavaScript
/// reads it.
fn decode_toon(text: &str, indent: usize) -> Result<Value, Fail> {
    let opts = DecodeOptions { indent, ..Default::default() };
    polywire::toon::decode::decode_with(text, &opts, &mut JsBuilder::default()).map_err(|e| {
        let source = e.line().and_then(|l| source_line(text, l));
        Fail::codec(toon_decode_message(e.message(), e.line(), e.column(), source), &e)
    })
}

/// Line `line` (1-based) of `text` as the reference reports it: without
/// its `\r`, and without the BOM on line 1.
fn source_line(text: &str, line: usize) -> Option<&str> {
    let l = text.split('\n').nth(line.checked_sub(1)?)?;
    let l = l.strip_suffix('\r').unwrap_or(l);
    Some(if line == 1 { l.strip_prefix('\u{feff}').unwrap_or(l) } else { l })
}
