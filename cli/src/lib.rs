//! The `polywire` command, once: JSON <-> TOON as `@toon-format/cli`
//! converts them (with `--stats`, exact token counts), `tokens`, `choose`,
//! `kado dump` and `tether hex|unhex`.
//!
//! - [`run`] runs it on any streams (tests, the fuzz target): arguments in,
//!   exit status out.
//! - [`run_process`] runs it as the process's command, on the standard
//!   descriptors themselves (fd 0, 1, 2): the `polywire` binary, the Python
//!   console script (`_polywire.cli.main`) and the npm `bin` (`cliMain`)
//!   all call it. Ctrl-C (SIGINT) and SIGTERM stop it quietly with status
//!   128 + the signal; a reader that goes away (EPIPE) ends it by SIGPIPE.
//!
//! Exit statuses: 0; 1 after an error (`polywire: <message>` on stderr);
//! 2 for a bad command line (and "Try 'polywire --help'."). The codecs are
//! the core's (`polywire`); this crate is only the command.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};

mod args;
mod convert;
mod io;
mod json;
mod llm;
mod stats;
mod sys;
mod tools;
mod value;

use polywire::toon::Delimiter;

/// Inputs are read, and decoded JSON written, in blocks of this many bytes.
pub const CHUNK: usize = 1 << 16;

/// Largest `--indent` when encoding.
const MAX_INDENT: u64 = polywire::toon::encode::MAX_INDENT as u64;

/// Why a command stopped early.
#[derive(Debug)]
pub(crate) enum Fail {
    /// A bad command line (status 2).
    Usage(String),
    /// `polywire: <message>` (status 1); with `--verbose`, `cause` too.
    Error { message: String, cause: Option<String> },
    /// A signal asked the command to stop: quietly, status 128 + it.
    Interrupted(i32),
    /// The reader of the output went away (EPIPE): quietly.
    BrokenPipe,
}

impl Fail {
    pub(crate) fn error(message: impl Into<String>) -> Fail {
        Fail::Error { message: message.into(), cause: None }
    }

    pub(crate) fn error_with(message: String, cause: String) -> Fail {
        Fail::Error { message, cause: Some(cause) }
    }

    /// An error of the core, told as `message`; its code, format and
    /// position are the cause `--verbose` prints.
    pub(crate) fn codec(message: String, e: &polywire::Error) -> Fail {
        Fail::error_with(message, format!("{} error {}: {e}", e.format().as_str(), e.code()))
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Code(i32),
    /// Ended by EPIPE: the process dies by SIGPIPE ([`run`] returns 141).
    BrokenPipe,
}

impl Status {
    pub(crate) fn code(self) -> i32 {
        match self {
            Status::Code(c) => c,
            Status::BrokenPipe => 128 + 13,
        }
    }
}

/// A run of the command: its streams, and what is known of the process's.
pub(crate) struct Ctx<'a> {
    pub stdin: &'a mut dyn Read,
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
    pub std: sys::Std,
    pub verbose: bool,
}

impl Ctx<'_> {
    /// A line on stderr (a failure to write it is not the command's).
    pub(crate) fn note(&mut self, text: &str) {
        let mut line = String::with_capacity(text.len() + 1);
        line.push_str(text);
        line.push('\n');
        let _ = sys::write_all(self.stderr, line.as_bytes());
    }

    /// Text on stdout (help, version).
    fn print(&mut self, text: &str) -> Result<(), Fail> {
        let mut out = io::Output::new(None, self.stdout, &self.std, None)?;
        out.write(text.as_bytes())?;
        out.finish()
    }
}

/// Run the command with `args` (the arguments after the program name) on
/// these streams; returns the exit status (141 after a broken pipe). Files
/// named by the arguments are the file system's.
pub fn run<A: AsRef<OsStr>>(args: &[A], stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let args: Vec<OsString> = args.iter().map(|a| a.as_ref().to_owned()).collect();
    run_with(&args, stdin, stdout, stderr, sys::Std::default()).code()
}

fn run_with(args: &[OsString], stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write, std: sys::Std) -> Status {
    let mut ctx = Ctx { stdin, stdout, stderr, std, verbose: false };
    let result = command(&mut ctx, args);
    match result {
        Ok(()) => Status::Code(0),
        Err(Fail::Usage(m)) => {
            ctx.note(&format!("polywire: {m}\nTry 'polywire --help'."));
            Status::Code(2)
        }
        Err(Fail::Error { message, cause }) => {
            let mut text = format!("polywire: {message}");
            if let (true, Some(cause)) = (ctx.verbose, cause) {
                text.push_str("\n\nCaused by: ");
                text.push_str(&cause);
            }
            ctx.note(&text);
            Status::Code(1)
        }
        Err(Fail::Interrupted(sig)) => Status::Code(128 + sig),
        Err(Fail::BrokenPipe) => Status::BrokenPipe,
    }
}

/// The process the command runs in, for what it makes of a standard
/// descriptor that was closed when the process started (`polywire -d <&-`):
/// the command reports it ("standard input is closed") rather than read or
/// write whatever took its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// A process that leaves such a descriptor closed (the `polywire`
    /// binary, Python). One it opened later, in its place, is close-on-exec
    /// (as Python opens every file), which an inherited one never is.
    Process,
    /// Node, which opens /dev/null (read-write) in place of a closed one
    /// when it starts: such a descriptor counts as closed. (Standard output
    /// given as /dev/null opened read-write by the parent, as Python's
    /// `subprocess.DEVNULL` does, looks the same, and is refused too.)
    Node,
}

/// Run the command as this process's command, with `args` (after the
/// program name): the standard descriptors read and written directly,
/// SIGINT and SIGTERM handled while it runs (the previous handlers put back
/// after). Returns the exit status; after EPIPE the process dies by
/// SIGPIPE. A panic (a bug) is reported as an error, never unwound into
/// the caller.
pub fn run_process(args: Vec<OsString>, host: Host) -> i32 {
    let run =
        std::panic::AssertUnwindSafe(|| sys::with_process(host, |stdin, stdout, stderr, std| run_with(&args, stdin, stdout, stderr, std)));
    match std::panic::catch_unwind(run) {
        Ok(code) => code,
        Err(p) => {
            let what = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            let text = format!("polywire: internal error: {} (please report it)\n", what.unwrap_or_default());
            let _ = std::io::stderr().write_all(text.as_bytes());
            1
        }
    }
}

/// The command's version line.
fn version() -> String {
    format!("polywire {}\n", env!("CARGO_PKG_VERSION"))
}

fn delimiter(value: Option<String>) -> Result<Option<Delimiter>, Fail> {
    let Some(v) = value else { return Ok(None) };
    let d = match v.as_str() {
        "," | "comma" => Delimiter::Comma,
        "\t" | "\\t" | "tab" => Delimiter::Tab,
        "|" | "pipe" => Delimiter::Pipe,
        _ => {
            let quoted = serde_json::to_string(&v).unwrap_or_default();
            return Err(Fail::Usage(format!("Invalid delimiter {quoted}. Valid delimiters are: comma (,), tab (\\t), pipe (|)")));
        }
    };
    Ok(Some(d))
}

/// `--indent`: digits only (default 2); a number too large for a `u64` is
/// `u64::MAX` (refused by every command), shown as given.
fn indent(value: Option<String>) -> Result<(u64, String), Fail> {
    let Some(v) = value else { return Ok((2, "2".to_owned())) };
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Fail::Usage(format!("Invalid indent value: {v}")));
    }
    let shown = v.trim_start_matches('0');
    let shown = if shown.is_empty() { "0" } else { shown };
    Ok((v.parse().unwrap_or(u64::MAX), shown.to_owned()))
}

fn encoding_indent(value: Option<String>) -> Result<usize, Fail> {
    let (n, shown) = indent(value)?;
    if n > MAX_INDENT {
        return Err(Fail::Usage(format!("Invalid indent value: {shown} (encoding takes 0 to {MAX_INDENT})")));
    }
    Ok(n as usize)
}

/// Which command the first words name.
fn command_name(args: &[OsString]) -> &'static str {
    let word = |i: usize| args.get(i).and_then(|a| a.to_str());
    match (word(0), word(1)) {
        (Some("tokens"), _) => "tokens",
        (Some("choose"), _) => "choose",
        (Some("kado"), Some("dump")) => "kado dump",
        (Some("kado"), _) => "kado",
        (Some("tether"), Some("hex")) => "tether hex",
        (Some("tether"), Some("unhex")) => "tether unhex",
        (Some("tether"), _) => "tether",
        _ => "",
    }
}

fn command(ctx: &mut Ctx<'_>, args: &[OsString]) -> Result<(), Fail> {
    let name = command_name(args);
    // --help and --version anywhere before `--` (and not as an option's
    // value only: `-o -h` asks for help too, as it always has).
    let before = &args[..args.iter().position(|a| a == "--").unwrap_or(args.len())];
    if before.iter().any(|a| a == "-h" || a == "--help") {
        return ctx.print(&args::help(name));
    }
    if before.iter().any(|a| a == "-v" || a == "--version") {
        return ctx.print(&version());
    }
    let (skip, opts): (usize, &[args::Opt]) = match name {
        "tokens" => (1, args::TOKENS),
        "choose" => (1, args::CHOOSE),
        "kado dump" | "tether hex" => (2, args::SUB),
        "tether unhex" => (2, args::UNHEX),
        "kado" | "tether" => {
            let group = if name == "kado" { "kado" } else { "tether" };
            let actions = if name == "kado" { "dump" } else { "hex or unhex" };
            let got = args.get(1).map_or_else(|| "nothing".to_owned(), |a| format!("'{}'", a.to_string_lossy()));
            return Err(Fail::Usage(format!("{group}: expected {actions}, got {got}")));
        }
        _ => {
            mistyped(args)?;
            (0, args::MAIN)
        }
    };
    let p = args::parse(&args[skip..], opts)?;
    if p.is("help") {
        return ctx.print(&args::help(name));
    }
    if p.is("version") {
        return ctx.print(&version());
    }
    ctx.verbose = p.is("verbose");
    match name {
        "tokens" => llm::tokens(ctx, p.input(), p.value("encoding")),
        "choose" => {
            let delimiter = delimiter(p.text("delimiter"))?;
            let indent = encoding_indent(p.text("indent"))?;
            let c = llm::Choose {
                input: p.input(),
                output: p.output(),
                delimiter,
                indent,
                pretty: p.is("pretty"),
                encoding: p.value("encoding"),
            };
            llm::choose(ctx, &c)
        }
        "kado dump" => tools::kado_dump(ctx, p.input(), p.output()),
        "tether hex" => tools::tether_hex(ctx, p.input(), p.output()),
        "tether unhex" => tools::tether_unhex(ctx, p.input(), p.output(), p.flag("words").unwrap_or(true)),
        _ => convert(ctx, &p),
    }
}

/// A first word that is no command and no file, but close to a command's
/// name: a usage error that names the command meant.
fn mistyped(args: &[OsString]) -> Result<(), Fail> {
    let Some(first) = args.first() else { return Ok(()) };
    let Some(word) = first.to_str() else { return Ok(()) };
    if word.starts_with('-') || std::fs::symlink_metadata(first).is_ok() {
        return Ok(());
    }
    match args::suggest(word) {
        Some(hint) => Err(Fail::Usage(format!("unknown command '{word}'; did you mean {hint}?"))),
        None => Ok(()),
    }
}

/// `polywire [INPUT]`: encode or decode.
fn convert(ctx: &mut Ctx<'_>, p: &args::Parsed) -> Result<(), Fail> {
    let (indent, shown) = indent(p.text("indent"))?;
    let delimiter = delimiter(p.text("delimiter"))?.unwrap_or(Delimiter::Comma);
    let to_toon = p.is("encode") || !p.is("decode") && !p.input().is_some_and(|i| i.to_string_lossy().ends_with(".toon"));
    if to_toon && indent > MAX_INDENT {
        return Err(Fail::Usage(format!("Invalid indent value: {shown} (encoding takes 0 to {MAX_INDENT})")));
    }
    if !to_toon && indent < 1 {
        return Err(Fail::Usage(format!("Invalid indent value: {shown} (decoding takes at least 1)")));
    }
    let stats = if p.is("stats") {
        Some(llm::tokenizer(p.value("encoding"))?)
    } else {
        llm::check_encoding(p.value("encoding"))?;
        None
    };
    let c = convert::Convert {
        input: p.input(),
        output: p.output(),
        delimiter,
        indent: usize::try_from(indent).unwrap_or(usize::MAX),
        strict: p.flag("strict").unwrap_or(true),
        stats,
    };
    if to_toon {
        convert::encode(ctx, &c)
    } else {
        convert::decode(ctx, &c)
    }
}
