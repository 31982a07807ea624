//! Hugging Face `tokenizer.json` files, counted by the `tokenizers` crate,
//! with what that crate leaves unbounded bounded:
//!
//! - **The file.** Only a regular file is read (not a FIFO, which would block
//!   forever, nor `/dev/zero` behind a `.json` link, which would read until
//!   memory runs out), and only up to [`MAX_FILE`] bytes (the largest
//!   published tokenizers are tens of megabytes).
//! - **The patterns the file brings** (its `Split` pre-tokenizers' and
//!   `Replace` normalizers'), which `tokenizers` runs with fancy-regex: a
//!   pattern with look-around or back-references is matched by backtracking,
//!   and one such as `(?=a)(a+)+$` takes time quadratic (or worse) in the
//!   text (500,000 characters: over two minutes). Such patterns are refused
//!   when the file is loaded (`LLM_INVALID_TOKENIZER`), but for the one form
//!   the tokenizers in use have, a negative look-ahead of the complement of
//!   the class repeated before it (GPT-2's `\s+(?!\S)`), which backs off one
//!   character at most. The other patterns run on the `regex` crate, linear
//!   per search; a text whose matches still take longer than
//!   [`budget`] (a pattern such as `a+$|a` scans to the end for each match)
//!   fails with `LLM_TOKENIZER_TOO_SLOW` rather than run on. A match that
//!   fails inside fancy-regex (its backtracking limit) is an error too, where
//!   `tokenizers` would silently stop splitting.

use std::path::Path;
use std::time::{Duration, Instant};

use fancy_regex_hf::{Expr, LookAround};
use serde_json::Value;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pattern::Pattern;
use tokenizers::{
    DecoderWrapper, ModelWrapper, NormalizedString, Normalizer, Offsets, PostProcessorWrapper, PreTokenizedString, PreTokenizer,
    PreTokenizerWrapper, SplitDelimiterBehavior, TokenizerBuilder, TokenizerImpl,
};

use crate::error::{Error, Format, Result};

/// The largest `tokenizer.json` read.
pub const MAX_FILE: u64 = 256 << 20;

/// How long the matches of a file's pattern over a text of `len` bytes may
/// take: a quarter of a second and 2 µs a byte, 20 to 100 times what the
/// patterns of the tokenizers in use take (fancy-regex matches them at 10-50
/// MB/s).
pub fn budget(len: usize) -> Duration {
    Duration::from_millis(250) + Duration::from_nanos(2_000u64.saturating_mul(len as u64))
}

type Inner = TokenizerImpl<ModelWrapper, GuardedNormalizer, GuardedPreTokenizer, PostProcessorWrapper, DecoderWrapper>;

/// A Hugging Face tokenizer (`tokenizer.json`), for other model families.
pub struct HfTokenizer {
    inner: Inner,
}

impl std::fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokenizer").field("vocab", &self.inner.get_vocab_size(true)).finish()
    }
}

fn file_error(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(Format::Llm, "LLM_TOKENIZER_FILE", format!("cannot read tokenizer file {}: {why}", path.display()))
}

fn invalid(why: impl std::fmt::Display) -> Error {
    Error::new(Format::Llm, "LLM_INVALID_TOKENIZER", format!("expected a Hugging Face tokenizer.json: {why}"))
}

/// The bytes of the tokenizer file at `path`: a regular file (links
/// followed) of at most [`MAX_FILE`] bytes.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    // Checked before it is opened: opening a FIFO blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(|e| file_error(path, e))?;
    let regular = |m: &std::fs::Metadata| {
        if !m.is_file() {
            return Err(file_error(path, "it is not a regular file"));
        }
        if m.len() > MAX_FILE {
            return Err(file_error(
                path,
                format_args!("it has {} bytes; tokenizer files of more than {} MiB are refused", m.len(), MAX_FILE >> 20),
            ));
        }
        Ok(())
    };
    regular(&meta)?;
    let file = std::fs::File::open(path).map_err(|e| file_error(path, e))?;
    // And again on what was opened (the path may have changed meanwhile).
    let meta = file.metadata().map_err(|e| file_error(path, e))?;
    regular(&meta)?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(meta.len() as usize).map_err(|_| file_error(path, "not enough memory"))?;
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).map_err(|e| file_error(path, e))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(file_error(path, format_args!("it grew past {} MiB while read", MAX_FILE >> 20)));
    }
    Ok(bytes)
}

impl HfTokenizer {
    /// Load a `tokenizer.json` file (see [`read_file`]).
    pub fn from_file(path: impl AsRef<Path>) -> Result<HfTokenizer> {
        HfTokenizer::from_bytes(&read_file(path.as_ref())?)
    }

    /// Load a tokenizer from the text of a `tokenizer.json`.
    pub fn from_bytes(json: &[u8]) -> Result<HfTokenizer> {
        // `tokenizers` panics on some malformed files (an `unwrap` in a
        // `Clone`, say): a panic is the file's error, not the caller's crash.
        std::panic::catch_unwind(|| HfTokenizer::load(json)).unwrap_or_else(|_| Err(invalid("the tokenizers crate failed on it")))
    }

    fn load(json: &[u8]) -> Result<HfTokenizer> {
        // Read as JSON first, and two parts `tokenizers` panics on when they
        // are malformed taken care of: the decoder (counting never decodes)
        // goes, and a `Precompiled` normalizer must read on its own.
        let mut value: Value = serde_json::from_slice(json).map_err(invalid)?;
        if let Some(decoder) = value.get_mut("decoder") {
            *decoder = Value::Null;
        }
        if let Some(normalizer) = value.get("normalizer") {
            check_precompiled(normalizer)?;
        }
        let plain = serde_json::from_value::<tokenizers::Tokenizer>(value).map_err(invalid)?.into_inner();
        // The pieces that run patterns, rebuilt from their own serde form.
        let normalizer = match plain.get_normalizer() {
            Some(n) => Some(GuardedNormalizer::from_value(&serde_json::to_value(n).map_err(invalid)?)?),
            None => None,
        };
        let pre_tokenizer = match plain.get_pre_tokenizer() {
            Some(p) => Some(GuardedPreTokenizer::from_value(&serde_json::to_value(p).map_err(invalid)?)?),
            None => None,
        };
        let inner = TokenizerBuilder::new()
            .with_model(plain.get_model().clone())
            .with_normalizer(normalizer)
            .with_pre_tokenizer(pre_tokenizer)
            .with_post_processor(plain.get_post_processor().cloned())
            .with_decoder(plain.get_decoder().cloned())
            .with_added_vocabulary(plain.get_added_vocabulary().clone())
            .with_truncation(plain.get_truncation().cloned())
            .with_padding(plain.get_padding().cloned())
            .build()
            .map_err(invalid)?;
        Ok(HfTokenizer { inner })
    }

    /// The number of tokens of `text`, without special tokens added (as
    /// `tokenizer.encode(text, add_special_tokens=False)`).
    pub fn count(&self, text: &str) -> Result<usize> {
        let encoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.inner.encode_fast(text, false)))
            .unwrap_or_else(|_| Err("the tokenizers crate panicked".into()));
        encoded.map(|e| e.len()).map_err(|e| match e.downcast_ref::<PatternError>() {
            Some(PatternError::TooSlow { len, pattern }) => Error::new(
                Format::Llm,
                "LLM_TOKENIZER_TOO_SLOW",
                format!(
                    "the tokenizer's pattern {pattern:?} took more than {:?} to match a text of {len} bytes; \
                     it scans far ahead for each match (quadratic time), so counting stopped",
                    budget(*len)
                ),
            ),
            _ => Error::new(Format::Llm, "LLM_TOKENIZE_FAILED", format!("the tokenizer failed: {e}")),
        })
    }
}

/// Every `Precompiled` normalizer in `normalizer` (or its `Sequence`s) must
/// read as one: `tokenizers` reads it with an `expect`.
fn check_precompiled(normalizer: &Value) -> Result<()> {
    match normalizer.get("type").and_then(Value::as_str) {
        Some("Precompiled") => serde_json::from_value::<tokenizers::normalizers::Precompiled>(normalizer.clone())
            .map(|_| ())
            .map_err(|e| invalid(format_args!("its Precompiled normalizer: {e}"))),
        Some("Sequence") => {
            normalizer.get("normalizers").and_then(Value::as_array).map_or(Ok(()), |items| items.iter().try_for_each(check_precompiled))
        }
        _ => Ok(()),
    }
}

/// Why a pattern's matching stopped.
#[derive(Debug)]
enum PatternError {
    TooSlow { len: usize, pattern: String },
    Failed(String),
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatternError::TooSlow { len, pattern } => write!(f, "the pattern {pattern:?} took too long on a text of {len} bytes"),
            PatternError::Failed(why) => write!(f, "the pattern failed to match: {why}"),
        }
    }
}

impl std::error::Error for PatternError {}

/// A pattern of the file: a regular expression (or a string, matched
/// literally), checked at load and timed while it runs.
#[derive(Debug)]
struct BoundedPattern {
    text: String,
    regex: fancy_regex_hf::Regex,
}

impl BoundedPattern {
    /// From a pattern's serde form: `{"Regex": "..."}` or `{"String": "..."}`.
    fn from_value(v: &Value) -> Result<BoundedPattern> {
        let (text, regex) = match (v.get("Regex").and_then(Value::as_str), v.get("String").and_then(Value::as_str)) {
            (Some(re), _) => {
                check_pattern(re)?;
                (re.to_owned(), re.to_owned())
            }
            (None, Some(s)) => (s.to_owned(), fancy_regex_hf::escape(s).into_owned()),
            _ => return Err(invalid(format_args!("a pattern must be {{\"Regex\": ...}} or {{\"String\": ...}}, got {v}"))),
        };
        let regex = fancy_regex_hf::Regex::new(&regex).map_err(|e| invalid(format_args!("pattern {text:?}: {e}")))?;
        Ok(BoundedPattern { text, regex })
    }

    /// The matches over `inside` as `tokenizers`' own `&SysRegex` pattern
    /// gives them (contiguous spans, each a match or not), inverted with
    /// `invert`.
    fn find_matches(&self, inside: &str, invert: bool) -> tokenizers::Result<Vec<(Offsets, bool)>> {
        if inside.is_empty() {
            return Ok(vec![((0, 0), invert)]);
        }
        let deadline = Instant::now() + budget(inside.len());
        let mut prev = 0;
        let mut splits = Vec::new();
        for (k, found) in self.regex.find_iter(inside).enumerate() {
            let m = found.map_err(|e| PatternError::Failed(e.to_string()))?;
            if k % 16 == 15 && Instant::now() > deadline {
                return Err(Box::new(PatternError::TooSlow { len: inside.len(), pattern: self.text.clone() }));
            }
            if prev != m.start() {
                splits.push(((prev, m.start()), invert));
            }
            splits.push(((m.start(), m.end()), !invert));
            prev = m.end();
        }
        if Instant::now() > deadline {
            return Err(Box::new(PatternError::TooSlow { len: inside.len(), pattern: self.text.clone() }));
        }
        if prev != inside.len() {
            splits.push(((prev, inside.len()), invert));
        }
        Ok(splits)
    }
}

/// A pattern with its `invert` flag, as a `tokenizers` pattern.
struct Matching<'p> {
    pattern: &'p BoundedPattern,
    invert: bool,
}

impl Pattern for Matching<'_> {
    fn find_matches(&self, inside: &str) -> tokenizers::Result<Vec<(Offsets, bool)>> {
        self.pattern.find_matches(inside, self.invert)
    }
}

/// Refuse a pattern fancy-regex would match by backtracking, but for a
/// negative look-ahead of the complement of the one-character class
/// repeated right before it (`\s+(?!\S)`): there, a look-ahead that fails
/// after the repetition succeeds after backing off one character.
fn check_pattern(pattern: &str) -> Result<()> {
    let tree = Expr::parse_tree(pattern).map_err(|e| invalid(format_args!("pattern {pattern:?}: {e}")))?;
    check_expr(&tree.expr, pattern)
}

fn refuse(pattern: &str, what: &str) -> Error {
    invalid(format_args!(
        "the pattern {pattern:?} has {what}, which is matched by backtracking and can take time quadratic in the text; \
         polywire accepts look-around only as a negative look-ahead of the complement of the class repeated before it \
         (as GPT-2's \\s+(?!\\S))"
    ))
}

fn check_expr(e: &Expr, pattern: &str) -> Result<()> {
    match e {
        Expr::Empty | Expr::Any { .. } | Expr::Assertion(_) | Expr::Literal { .. } | Expr::Delegate { .. } => Ok(()),
        Expr::Group(child) => check_expr(child, pattern),
        Expr::Repeat { child, .. } => check_expr(child, pattern),
        Expr::Alt(children) => children.iter().try_for_each(|c| check_expr(c, pattern)),
        Expr::Concat(children) => {
            for (i, c) in children.iter().enumerate() {
                match c {
                    Expr::LookAround(inner, LookAround::LookAheadNeg) if i > 0 && is_complement_after(&children[i - 1], inner) => {}
                    Expr::LookAround(..) => return Err(refuse(pattern, "a look-around")),
                    other => check_expr(other, pattern)?,
                }
            }
            Ok(())
        }
        Expr::LookAround(..) => Err(refuse(pattern, "a look-around")),
        _ => Err(refuse(pattern, "a back-reference, an atomic group or another backtracking construct")),
    }
}

/// Whether `before` repeats a one-character class and `ahead` is its
/// complement (`\s` and `\S`, `\w` and `\W`, `\d` and `\D`, `\p{X}` and
/// `\P{X}`, `[...]` and `[^...]`).
fn is_complement_after(before: &Expr, ahead: &Expr) -> bool {
    let class = |e: &Expr| match e {
        Expr::Delegate { inner, size: 1, casei: false } => Some(inner.clone()),
        _ => None,
    };
    let Expr::Repeat { child, greedy: true, .. } = before else { return false };
    let (Some(c), Some(d)) = (class(child), class(ahead)) else { return false };
    let complement = |c: &str| -> Option<String> {
        if let Some(rest) = c.strip_prefix("\\") {
            let mut chars = rest.chars();
            let (k, tail) = (chars.next()?, chars.as_str());
            let flipped = match k {
                's' => 'S',
                'S' => 's',
                'w' => 'W',
                'W' => 'w',
                'd' => 'D',
                'D' => 'd',
                'p' => 'P',
                'P' => 'p',
                _ => return None,
            };
            return Some(format!("\\{flipped}{tail}"));
        }
        if let Some(rest) = c.strip_prefix("[^") {
            return Some(format!("[{rest}"));
        }
        c.strip_prefix('[').map(|rest| format!("[^{rest}"))
    };
    complement(&c).as_deref() == Some(d.as_str())
}

/// The file's pre-tokenizer, its `Split`s' patterns bounded.
#[derive(Debug)]
enum GuardedPreTokenizer {
    Plain(PreTokenizerWrapper),
    Split { pattern: BoundedPattern, behavior: SplitDelimiterBehavior, invert: bool },
    Sequence(Vec<GuardedPreTokenizer>),
}

impl GuardedPreTokenizer {
    fn from_value(v: &Value) -> Result<GuardedPreTokenizer> {
        match v.get("type").and_then(Value::as_str) {
            Some("Sequence") => {
                let items = v.get("pretokenizers").and_then(Value::as_array).ok_or_else(|| invalid("a Sequence without pretokenizers"))?;
                Ok(GuardedPreTokenizer::Sequence(items.iter().map(GuardedPreTokenizer::from_value).collect::<Result<_>>()?))
            }
            Some("Split") => Ok(GuardedPreTokenizer::Split {
                pattern: BoundedPattern::from_value(v.get("pattern").unwrap_or(&Value::Null))?,
                behavior: serde_json::from_value(v.get("behavior").cloned().unwrap_or(Value::Null)).map_err(invalid)?,
                invert: v.get("invert").and_then(Value::as_bool).unwrap_or(false),
            }),
            _ => Ok(GuardedPreTokenizer::Plain(serde_json::from_value(v.clone()).map_err(invalid)?)),
        }
    }
}

impl PreTokenizer for GuardedPreTokenizer {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> tokenizers::Result<()> {
        match self {
            GuardedPreTokenizer::Plain(p) => p.pre_tokenize(pretokenized),
            GuardedPreTokenizer::Split { pattern, behavior, invert } => {
                pretokenized.split(|_, normalized| normalized.split(Matching { pattern, invert: *invert }, *behavior))
            }
            GuardedPreTokenizer::Sequence(items) => items.iter().try_for_each(|p| p.pre_tokenize(pretokenized)),
        }
    }
}

/// The file's normalizer, its `Replace`s' patterns bounded.
#[derive(Debug)]
enum GuardedNormalizer {
    Plain(NormalizerWrapper),
    Replace { pattern: BoundedPattern, content: String },
    Sequence(Vec<GuardedNormalizer>),
}

impl GuardedNormalizer {
    fn from_value(v: &Value) -> Result<GuardedNormalizer> {
        match v.get("type").and_then(Value::as_str) {
            Some("Sequence") => {
                let items = v.get("normalizers").and_then(Value::as_array).ok_or_else(|| invalid("a Sequence without normalizers"))?;
                Ok(GuardedNormalizer::Sequence(items.iter().map(GuardedNormalizer::from_value).collect::<Result<_>>()?))
            }
            Some("Replace") => Ok(GuardedNormalizer::Replace {
                pattern: BoundedPattern::from_value(v.get("pattern").unwrap_or(&Value::Null))?,
                content: v.get("content").and_then(Value::as_str).unwrap_or_default().to_owned(),
            }),
            _ => Ok(GuardedNormalizer::Plain(serde_json::from_value(v.clone()).map_err(invalid)?)),
        }
    }
}

impl Normalizer for GuardedNormalizer {
    fn normalize(&self, normalized: &mut NormalizedString) -> tokenizers::Result<()> {
        match self {
            GuardedNormalizer::Plain(n) => n.normalize(normalized),
            GuardedNormalizer::Replace { pattern, content } => normalized.replace(Matching { pattern, invert: false }, content),
            GuardedNormalizer::Sequence(items) => items.iter().try_for_each(|n| n.normalize(normalized)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patterns_of_the_tokenizers_in_use_are_accepted() {
        for p in [
            // GPT-2 / RoBERTa (ByteLevel's own), Llama 3, Qwen 2, DeepSeek V3.
            r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"[\r\n]|\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+|\s?[!-/:-~！-／：-～‘-‟　-。]+|\s+$|[一-龥ࠀ-一가-퟿]+|\p{N}",
            r"\p{N}{1,3}",
            r"[\w\s]+|[^\w\s]+",
        ] {
            check_pattern(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        }
    }

    #[test]
    fn backtracking_patterns_are_refused() {
        for p in [r"(?=a)(a+)+$", r"(a)\1", r"\s+(?=\S)", r"a+(?!a)b", r"(?<=a)b", r"(?>a+)b", r"\w+(?!\s)", r"(?!\S)\s+"] {
            let e = check_pattern(p).expect_err(p);
            assert_eq!(e.code(), "LLM_INVALID_TOKENIZER", "{p}");
        }
    }
}
