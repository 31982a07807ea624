//! The command line: the options of each command, read as Python's argparse
//! reads them (the messages of a bad command line are argparse's, as the
//! command has always printed them), the help texts, and the hint for a
//! mistyped command name.

use std::ffi::{OsStr, OsString};

use crate::Fail;

/// How an option takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `--stats`: present or not.
    Flag,
    /// `--indent N`, `--indent=N`, `-o OUT`, `-oOUT`.
    Value,
    /// `--strict` and `--no-strict`: the last one given wins.
    Switch,
}

#[derive(Debug)]
pub(crate) struct Opt {
    pub long: &'static str,
    pub short: Option<char>,
    pub kind: Kind,
}

const fn opt(long: &'static str, short: Option<char>, kind: Kind) -> Opt {
    Opt { long, short, kind }
}

const OUTPUT: Opt = opt("output", Some('o'), Kind::Value);
const VERBOSE: Opt = opt("verbose", None, Kind::Flag);
const HELP: Opt = opt("help", Some('h'), Kind::Flag);
const VERSION: Opt = opt("version", Some('v'), Kind::Flag);
const ENCODING: Opt = opt("encoding", None, Kind::Value);
const DELIMITER: Opt = opt("delimiter", None, Kind::Value);
const INDENT: Opt = opt("indent", None, Kind::Value);

/// `polywire [INPUT] ...`: encode or decode.
pub(crate) const MAIN: &[Opt] = &[
    OUTPUT,
    opt("encode", Some('e'), Kind::Flag),
    opt("decode", Some('d'), Kind::Flag),
    DELIMITER,
    INDENT,
    opt("strict", None, Kind::Switch),
    opt("stats", None, Kind::Flag),
    ENCODING,
    VERBOSE,
    HELP,
    VERSION,
];
/// `polywire tokens`.
pub(crate) const TOKENS: &[Opt] = &[ENCODING, VERBOSE, HELP, VERSION];
/// `polywire choose`.
pub(crate) const CHOOSE: &[Opt] = &[OUTPUT, DELIMITER, INDENT, opt("pretty", None, Kind::Flag), ENCODING, VERBOSE, HELP, VERSION];
/// `polywire kado dump`, `polywire tether hex`.
pub(crate) const SUB: &[Opt] = &[OUTPUT, VERBOSE, HELP, VERSION];
/// `polywire tether unhex`.
pub(crate) const UNHEX: &[Opt] = &[OUTPUT, opt("words", None, Kind::Switch), VERBOSE, HELP, VERSION];

#[derive(Debug, Clone)]
enum Val {
    On(bool),
    Text(OsString),
}

/// A parsed command line: the options given (the last of each wins) and
/// the input.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    values: Vec<(&'static str, Val)>,
    input: Option<OsString>,
}

impl Parsed {
    fn last(&self, name: &str) -> Option<&Val> {
        self.values.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// A flag or switch: `None` when not given.
    pub fn flag(&self, name: &str) -> Option<bool> {
        match self.last(name) {
            Some(Val::On(b)) => Some(*b),
            _ => None,
        }
    }

    pub fn is(&self, name: &str) -> bool {
        self.flag(name) == Some(true)
    }

    pub fn value(&self, name: &str) -> Option<&OsStr> {
        match self.last(name) {
            Some(Val::Text(t)) => Some(t),
            _ => None,
        }
    }

    /// A value as text (a value that is not UTF-8 is read with U+FFFD).
    pub fn text(&self, name: &str) -> Option<String> {
        self.value(name).map(|v| v.to_string_lossy().into_owned())
    }

    /// The input file; `None` for standard input (none given, or `-`).
    pub fn input(&self) -> Option<&OsStr> {
        self.input.as_deref().filter(|p| *p != "-")
    }

    /// The output file; `None` for standard output (none given, or `-`).
    pub fn output(&self) -> Option<&OsStr> {
        self.value("output").filter(|p| *p != "-")
    }
}

/// What an argument is, as argparse classifies it.
enum Class<'o> {
    Positional,
    Unknown,
    /// A known option, the spelling used, and the text after `=` (long) or
    /// after the letter (short) when there is some.
    Option(&'o Opt, String, Option<OsString>),
}

fn find<'o>(opts: &'o [Opt], spelling: &str) -> Option<&'o Opt> {
    opts.iter().find(|o| {
        if let Some(long) = spelling.strip_prefix("--") {
            long == o.long || (o.kind == Kind::Switch && long.strip_prefix("no-") == Some(o.long))
        } else {
            let mut c = spelling.chars();
            c.next() == Some('-') && o.short.is_some() && c.next() == o.short && c.next().is_none()
        }
    })
}

/// `^-\d+$|^-\d*\.\d+$`: a negative number, taken as a value or an input
/// (no option of the command looks like one).
fn negative_number(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('-') else { return false };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    digits(rest) || rest.split_once('.').is_some_and(|(a, b)| a.bytes().all(|c| c.is_ascii_digit()) && digits(b))
}

/// `bytes[at..]` of an argument, as an argument (splits are at ASCII
/// characters, so the pieces are valid).
fn tail(arg: &OsStr, at: usize) -> OsString {
    let bytes = arg.as_encoded_bytes();
    // SAFETY: `at` follows an ASCII character of `arg` (`=` or the option
    // letter), a boundary the encoding allows splitting at.
    unsafe { OsStr::from_encoded_bytes_unchecked(&bytes[at..]) }.to_owned()
}

fn classify<'o>(arg: &OsStr, opts: &'o [Opt]) -> Class<'o> {
    let s = arg.to_string_lossy();
    if !s.starts_with('-') || s == "-" {
        return Class::Positional;
    }
    if let Some(o) = find(opts, &s) {
        return Class::Option(o, s.into_owned(), None);
    }
    if s.starts_with("--") {
        if let Some((name, _)) = s.split_once('=') {
            if let Some(o) = find(opts, name) {
                return Class::Option(o, name.to_owned(), Some(tail(arg, name.len() + 1)));
            }
        }
    } else if let Some((i, c)) = s.char_indices().nth(1) {
        let short: String = ['-', c].into_iter().collect();
        if c.is_ascii() {
            if let Some(o) = find(opts, &short) {
                return Class::Option(o, short, Some(tail(arg, i + 1)));
            }
        }
    }
    if negative_number(&s) || s.contains(' ') {
        return Class::Positional;
    }
    Class::Unknown
}

/// How argparse names an option in its messages: `-o/--output`,
/// `--strict/--no-strict`.
fn names(o: &Opt) -> String {
    let mut n = String::new();
    if let Some(c) = o.short {
        n.push('-');
        n.push(c);
        n.push('/');
    }
    n.push_str("--");
    n.push_str(o.long);
    if o.kind == Kind::Switch {
        n.push_str("/--no-");
        n.push_str(o.long);
    }
    n
}

/// Read `args` (after the command's words) with the options `opts` and one
/// optional input, as argparse does.
pub(crate) fn parse(args: &[OsString], opts: &[Opt]) -> Result<Parsed, Fail> {
    let mut parsed = Parsed::default();
    let mut extras: Vec<String> = Vec::new();
    let positional = |parsed: &mut Parsed, extras: &mut Vec<String>, arg: &OsString| {
        if parsed.input.is_none() {
            parsed.input = Some(arg.clone());
        } else {
            extras.push(arg.to_string_lossy().into_owned());
        }
    };
    let mut i = 0;
    let mut dashes = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if dashes {
            positional(&mut parsed, &mut extras, arg);
            continue;
        }
        if arg == "--" {
            dashes = true;
            continue;
        }
        let (mut o, mut spelling, mut explicit) = match classify(arg, opts) {
            Class::Positional => {
                positional(&mut parsed, &mut extras, arg);
                continue;
            }
            Class::Unknown => {
                extras.push(arg.to_string_lossy().into_owned());
                continue;
            }
            Class::Option(o, spelling, explicit) => (o, spelling, explicit),
        };
        loop {
            match o.kind {
                Kind::Value => {
                    let value = match explicit {
                        Some(v) => v,
                        None => match args.get(i) {
                            Some(next) if matches!(classify(next, opts), Class::Positional) && next != "--" => {
                                i += 1;
                                next.clone()
                            }
                            _ => return Err(Fail::Usage(format!("argument {}: expected one argument", names(o)))),
                        },
                    };
                    parsed.values.push((o.long, Val::Text(value)));
                    break;
                }
                Kind::Flag | Kind::Switch => {
                    let on = !spelling.starts_with("--no-");
                    parsed.values.push((o.long, Val::On(on)));
                    let Some(rest) = explicit else { break };
                    let rest = rest.to_string_lossy().into_owned();
                    let ignored = || Fail::Usage(format!("argument {}: ignored explicit argument '{rest}'", names(o)));
                    if spelling.starts_with("--") || rest.is_empty() {
                        return Err(ignored());
                    }
                    // A cluster of short options: `-de`, `-do OUT`, `-doOUT`.
                    let c = rest.chars().next().unwrap_or('-');
                    let next: String = ['-', c].into_iter().collect();
                    let Some(n) = find(opts, &next).filter(|_| c != '-') else { return Err(ignored()) };
                    let after = &rest[c.len_utf8()..];
                    o = n;
                    spelling = next;
                    explicit = (!after.is_empty()).then(|| OsString::from(after));
                }
            }
        }
    }
    if !extras.is_empty() {
        return Err(Fail::Usage(format!("unrecognized arguments: {}", extras.join(" "))));
    }
    Ok(parsed)
}

// ------------------------------------------------------------ help texts

/// `polywire --help`.
pub(crate) const HELP_MAIN: &str = "\
usage: polywire [INPUT|-] [-o OUT] [-e|-d] [--delimiter D] [--indent N] [--no-strict] [--stats]
                [--encoding E] [--verbose]
       polywire tokens [INPUT|-] [--encoding E]
       polywire choose [INPUT|-] [-o OUT] [--delimiter D] [--indent N] [--pretty] [--encoding E]
       polywire kado dump [INPUT|-] [-o OUT]
       polywire tether hex [INPUT|-] [-o OUT]
       polywire tether unhex [INPUT|-] [-o OUT] [--no-words]

Convert JSON to TOON and back, as @toon-format/cli does. INPUT is a file, or - (or nothing)
for standard input; .json encodes, .toon decodes, anything else (and standard input) encodes.
tokens, choose, kado and tether are command names when they come first: write ./tokens,
./choose, ./kado or ./tether for a file of that name. Each command has its own --help.

options:
  -o, --output OUT      write to OUT instead of standard output (- is standard output); a file
                        is replaced only once the whole output is written, and never by its input
  -e, --encode          encode JSON to TOON, whatever the extension
  -d, --decode          decode TOON to JSON, whatever the extension
  --delimiter D         delimiter of rows and inline arrays: , (default), tab ($'\\t' or \\t), |
  --indent N            spaces per indentation level, in TOON and in the JSON written (default 2)
  --strict              when decoding, refuse (the default): an array whose length or a row
                        whose width is not the one declared, indentation that is not a multiple
                        of N or holds a tab, a blank line inside an array, a key given twice in
                        one object, and input that is not UTF-8
  --no-strict           decode all of that: a key given twice is written twice, each where it
                        stands ({\"a\": 1, \"a\": 2}: a JSON reader keeps the last), lengths are not
                        checked, and bytes that are not UTF-8 become U+FFFD
  --stats               print the JSON and TOON sizes (tokens, bytes, characters) and the saving
                        to stderr
  --encoding E          the tokenizer of --stats, tokens and choose: o200k_base (default),
                        cl100k_base or the path of a Hugging Face tokenizer.json
  --verbose             after an error, also print what caused it (its code and position)
  -h, --help            print this help and exit
  -v, --version         print the version and exit

commands:
  tokens                the number of tokens of INPUT (any text), exactly as the tokenizer counts
  choose                the rendering of the JSON (or .toon) INPUT with the fewest tokens: TOON with
                        each delimiter (or --delimiter's) or compact JSON (--pretty: and indented
                        JSON); the table of every candidate's tokens goes to stderr
  kado dump             each Kado frame of a capture as a JSON line: header, compressed, payload
  tether hex            the bytes of INPUT as lowercase hex, as the MCP send tool takes them
  tether unhex          hex text (spaces around it ignored) to raw bytes
  tether unhex --no-words  accept any whole number of bytes, not only 32-bit words of 8 digits
";

const COMMON_HELP: &str = "  --verbose             after an error, also print what caused it (its code and position)
  -h, --help            print this help and exit
  -v, --version         print the version and exit
";

const OUTPUT_HELP: &str = "  -o, --output OUT      write to OUT instead of standard output (- is standard output); a file
                        is replaced only once the whole output is written, and never by its input
";

/// The help of one command: its usage, what it does, its options.
pub(crate) fn help(command: &str) -> String {
    let (usage, about, options) = match command {
        "tokens" => (
            "polywire tokens [INPUT|-] [--encoding E]",
            "The number of tokens of INPUT (any text; - or nothing for standard input), exactly as the\n\
             tokenizer counts them (special-token text such as <|endoftext|> counts as ordinary text).\n\
             Write ./tokens for a file named tokens.",
            "  --encoding E          o200k_base (default), cl100k_base or the path of a Hugging Face\n\
             \x20                       tokenizer.json\n",
        ),
        "choose" => (
            "polywire choose [INPUT|-] [-o OUT] [--delimiter D] [--indent N] [--pretty] [--encoding E]",
            "The rendering of INPUT with the fewest tokens, on standard output: TOON with each delimiter\n\
             (or --delimiter's only) and compact JSON, each counted with the tokenizer; the first listed\n\
             wins a tie. A .toon INPUT is decoded first (strict); anything else is read as JSON. The\n\
             table of every candidate's tokens and bytes goes to stderr. Write ./choose for a file\n\
             named choose.",
            "  --delimiter D         weigh TOON with this delimiter only: , or comma, tab ($'\\t' or \\t), |\n\
             \x20 --indent N            spaces per indentation level of the TOON (default 2)\n\
             \x20 --pretty              weigh JSON indented by 2 spaces too\n\
             \x20 --encoding E          o200k_base (default), cl100k_base or the path of a Hugging Face\n\
             \x20                       tokenizer.json\n",
        ),
        "kado dump" => (
            "polywire kado dump [INPUT|-] [-o OUT]",
            "Each Kado frame of a capture (a file, or standard input as it comes) as one JSON line:\n\
             offset, version, type, typeName, payloadLength, timestamp, sequenceId, compressed, payload.\n\
             The frames before a fault are written, then the fault with its byte offset.",
            "",
        ),
        "tether hex" => (
            "polywire tether hex [INPUT|-] [-o OUT]",
            "The bytes of INPUT as lowercase hex on one line, as the MCP send tool takes them.",
            "",
        ),
        "tether unhex" => (
            "polywire tether unhex [INPUT|-] [-o OUT] [--no-words]",
            "Hex text (spaces and line ends around it ignored) to raw bytes: 32-bit words of 8 hex\n\
             digits each.",
            "  --no-words            accept any whole number of bytes, not only 32-bit words\n\
             \x20 --words               only whole 32-bit words (the default)\n",
        ),
        "kado" => {
            return format!("usage: polywire kado dump [INPUT|-] [-o OUT]\n\n{}", help("kado dump").split_once("\n\n").map_or("", |h| h.1))
        }
        "tether" => {
            return "usage: polywire tether hex [INPUT|-] [-o OUT]\n       polywire tether unhex [INPUT|-] [-o OUT] [--no-words]\n\n\
                    hex: the bytes of INPUT as lowercase hex. unhex: hex text to raw bytes.\n\
                    See 'polywire tether hex --help' and 'polywire tether unhex --help'.\n"
                .to_owned()
        }
        _ => return HELP_MAIN.to_owned(),
    };
    let output = if command == "tokens" { "" } else { OUTPUT_HELP };
    format!("usage: {usage}\n\n{about}\n\noptions:\n{output}{options}{COMMON_HELP}")
}

// ------------------------------------------------------------ mistyped commands

/// Edit distance with transpositions (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// What a first word that is neither a command nor an existing file was
/// probably meant to be: `'choose'` for `chose`, `'kado dump'` for `dump`,
/// `-d` for `decode`.
pub(crate) fn suggest(word: &str) -> Option<&'static str> {
    const NAMES: [(&str, &str); 9] = [
        ("tokens", "'tokens'"),
        ("choose", "'choose'"),
        ("kado", "'kado'"),
        ("tether", "'tether'"),
        ("dump", "'kado dump'"),
        ("hex", "'tether hex'"),
        ("unhex", "'tether unhex'"),
        ("encode", "'-e' (polywire -e INPUT)"),
        ("decode", "'-d' (polywire -d INPUT)"),
    ];
    let word = word.to_ascii_lowercase();
    if word.chars().count() < 3 || word.contains(['.', '/', '\\']) {
        return None;
    }
    NAMES
        .iter()
        .map(|&(name, hint)| (distance(&word, name), name, hint))
        .filter(|&(d, name, _)| d <= if name.len() <= 4 { 1 } else { 2 })
        .min_by_key(|&(d, _, _)| d)
        .map(|(_, _, hint)| hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn usage(args: &[&str], opts: &[Opt]) -> String {
        match parse(&os(args), opts) {
            Err(Fail::Usage(m)) => m,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn reads_as_argparse_does() {
        let p = parse(&os(&["-d", "x"]), MAIN).unwrap();
        assert!(p.is("decode"));
        assert_eq!(p.input(), Some(OsStr::new("x")));
        let p = parse(&os(&["-dof", "--indent=3", "--no-strict", "--strict", "--", "-e"]), MAIN).unwrap();
        assert_eq!((p.value("output"), p.text("indent").as_deref(), p.flag("strict")), (Some(OsStr::new("f")), Some("3"), Some(true)));
        assert_eq!(p.input(), Some(OsStr::new("-e")));
        let p = parse(&os(&["--indent", "-1", "-o", "-"]), MAIN).unwrap();
        assert_eq!((p.text("indent").as_deref(), p.output()), (Some("-1"), None));
        assert_eq!(usage(&["--bogus", "a", "b"], MAIN), "unrecognized arguments: --bogus b");
        assert_eq!(usage(&["x", "-d", "y"], MAIN), "unrecognized arguments: y");
        assert_eq!(usage(&["-dx"], MAIN), "argument -d/--decode: ignored explicit argument 'x'");
        assert_eq!(usage(&["--stats=1"], MAIN), "argument --stats: ignored explicit argument '1'");
        assert_eq!(usage(&["--no-strict=1"], MAIN), "argument --strict/--no-strict: ignored explicit argument '1'");
        assert_eq!(usage(&["-o"], MAIN), "argument -o/--output: expected one argument");
        assert_eq!(usage(&["-o", "-x"], MAIN), "argument -o/--output: expected one argument");
        assert_eq!(usage(&["--indent"], MAIN), "argument --indent: expected one argument");
        assert_eq!(usage(&["-o", "y"], TOKENS), "unrecognized arguments: -o");
        assert!(parse(&os(&["--no-words"]), UNHEX).unwrap().flag("words") == Some(false));
    }

    #[test]
    fn suggests_the_command_meant() {
        assert_eq!(suggest("chose"), Some("'choose'"));
        assert_eq!(suggest("tokns"), Some("'tokens'"));
        assert_eq!(suggest("kdao"), Some("'kado'"));
        assert_eq!(suggest("decode"), Some("'-d' (polywire -d INPUT)"));
        assert_eq!(suggest("dump"), Some("'kado dump'"));
        assert_eq!(suggest("data"), None);
        assert_eq!(suggest("nope.json"), None);
        assert_eq!(suggest("x"), None);
    }

    #[test]
    fn each_command_has_its_help() {
        for c in ["tokens", "choose", "kado dump", "tether hex", "tether unhex", "kado", "tether"] {
            let h = help(c);
            assert!(h.starts_with("usage: polywire "), "{c}");
            assert_ne!(h, HELP_MAIN);
            assert!(h.lines().all(|l| l.chars().count() <= 100), "{c}:\n{h}");
        }
        assert!(HELP_MAIN.lines().all(|l| l.chars().count() <= 100));
    }
}
