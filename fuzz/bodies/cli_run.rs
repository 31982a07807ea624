//! The `polywire` command on arbitrary command lines and standard input, in
//! memory (`polywire_cli::run`): it ends with an exit status (0, 1 or 2, with
//! the message its status calls for), never a panic.
//!
//! The input: its first byte gives the number of arguments (low 4 bits),
//! the next bytes pick each from [`WORDS`] (options, commands, values: no
//! file name but `-`, so the command reads standard input and writes
//! standard output only), the rest is standard input. It runs in an empty
//! scratch directory, so that a value taken as an input file names none.
//!
//! Shared by the cargo-fuzz target and `cli/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/cli_run/`) on stable.

/// What the arguments are made of. `-o` comes only with `-`.
const WORDS: &[&[&str]] = &[
    &["-"],
    &["-d"],
    &["-e"],
    &["--decode"],
    &["--encode"],
    &["--stats"],
    &["--strict"],
    &["--no-strict"],
    &["--indent"],
    &["0"],
    &["1"],
    &["2"],
    &["4"],
    &["300"],
    &["-1"],
    &["--indent=3"],
    &["--delimiter"],
    &[","],
    &["\t"],
    &["|"],
    &["\\t"],
    &["tab"],
    &["pipe"],
    &[";"],
    &["--encoding"],
    &["o200k_base"],
    &["cl100k_base"],
    &[""],
    &["--verbose"],
    &["tokens"],
    &["choose"],
    &["--pretty"],
    &["kado"],
    &["dump"],
    &["tether"],
    &["hex"],
    &["unhex"],
    &["--words"],
    &["--no-words"],
    &["-o", "-"],
    &["--output=-"],
    &["--"],
    &["-h"],
    &["--help"],
    &["-v"],
    &["--version"],
    &["-x"],
    &["--bogus"],
    &["-de"],
    &["-dv"],
    &["--stats=1"],
    &["chose"],
    &["comma"],
];

pub fn cli_run(data: &[u8]) {
    static SCRATCH: std::sync::Once = std::sync::Once::new();
    SCRATCH.call_once(|| {
        let dir = std::env::temp_dir().join("polywire-fuzz-cli");
        std::fs::create_dir_all(&dir).expect("scratch directory");
        std::env::set_current_dir(&dir).expect("scratch directory");
    });
    let Some((&n, rest)) = data.split_first() else { return };
    let n = usize::from(n & 15).min(rest.len());
    let (picks, stdin) = rest.split_at(n);
    let args: Vec<&str> = picks.iter().flat_map(|&p| WORDS[usize::from(p) % WORDS.len()].iter().copied()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = polywire_cli::run(&args, &mut &stdin[..], &mut out, &mut err);
    let err = String::from_utf8(err).expect("stderr is UTF-8");
    match status {
        0 => {}
        1 => assert!(err.starts_with("polywire: ") && err.ends_with('\n'), "{args:?}: {err:?}"),
        2 => assert!(err.starts_with("polywire: ") && err.ends_with("\nTry 'polywire --help'.\n"), "{args:?}: {err:?}"),
        s => panic!("{args:?}: status {s}"),
    }
    // Nothing but standard output was written.
    assert!(std::fs::read_dir(".").map_or(true, |mut d| d.next().is_none()), "{args:?} wrote a file");
}
