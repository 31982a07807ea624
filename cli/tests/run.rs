//! The command run in memory (`polywire_cli::run`): arguments, stdin bytes
//! and files in, exit status, stdout and stderr out. The Python and Node
//! suites (tests-py/test_cli*.py, tests-js/cli*.test.js) run the installed
//! commands as processes; these cover what needs no process, and the parts
//! of cli.py that tests-py tested directly (FrameScanner: the offsets and
//! compression flags of `kado dump` whatever the reads).

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use polywire::kado::{self, MessageType};

/// Run with `stdin`; (status, stdout, stderr).
fn run(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    run_reader(args, &mut &stdin[..])
}

fn run_reader(args: &[&str], stdin: &mut dyn Read) -> (i32, Vec<u8>, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = polywire_cli::run(args, stdin, &mut out, &mut err);
    (status, out, String::from_utf8(err).expect("stderr is UTF-8"))
}

fn text(args: &[&str], stdin: &str) -> (i32, String, String) {
    let (s, o, e) = run(args, stdin.as_bytes());
    (s, String::from_utf8(o).expect("stdout is UTF-8"), e)
}

/// A scratch directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("polywire-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("scratch dir");
        Dir(p)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    fn s(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }
    fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const DATA_JSON: &str = r#"{"users":[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}],"tags":["a","b"],"n":null}"#;
const DATA_TOON: &str = "users[2]{id,name}:\n  1,Ada\n  2,Bob\ntags[2]: a,b\nn: null";

#[test]
fn encodes_and_decodes() {
    assert_eq!(text(&[], DATA_JSON), (0, format!("{DATA_TOON}\n"), String::new()));
    let (s, out, err) = text(&["-d"], DATA_TOON);
    assert_eq!((s, err.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, serde_json::from_str::<serde_json::Value>(DATA_JSON).unwrap());
    assert!(out.starts_with("{\n  \"users\": [\n    {\n      \"id\": 1,"));
}

#[test]
fn usage_errors_exit_2() {
    for (args, message) in [
        (&["--bogus"][..], "unrecognized arguments: --bogus"),
        (&["a.json", "b.json"], "unrecognized arguments: b.json"),
        (&["--indent"], "argument --indent: expected one argument"),
        (&["kado"], "kado: expected dump, got nothing"),
        (&["tether", "dump"], "tether: expected hex or unhex, got 'dump'"),
        (&["--indent", "x"], "Invalid indent value: x"),
        (&["-d", "--indent", "0"], "Invalid indent value: 0 (decoding takes at least 1)"),
        (&["--indent", "0300"], "Invalid indent value: 300 (encoding takes 0 to 256)"),
        (&["chose"], "unknown command 'chose'; did you mean 'choose'?"),
    ] {
        assert_eq!(text(args, ""), (2, String::new(), format!("polywire: {message}\nTry 'polywire --help'.\n")), "{args:?}");
    }
}

#[test]
fn each_command_has_its_own_help() {
    let main = text(&["--help"], "").1;
    assert!(main.contains("./tokens") && main.contains("--no-strict") && main.contains("--verbose"));
    for args in [
        &["tokens", "--help"][..],
        &["choose", "-h"],
        &["kado", "dump", "--help"],
        &["tether", "hex", "-h"],
        &["tether", "unhex", "--help"],
    ] {
        let (s, out, err) = text(args, "");
        assert_eq!((s, err.as_str()), (0, ""));
        assert!(out.starts_with(&format!("usage: polywire {}", args[..args.len() - 1].join(" "))), "{args:?}: {out}");
        assert_ne!(out, main);
    }
    assert_eq!(text(&["--version"], "").1, format!("polywire {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn encoding_names_are_checked() {
    for name in ["", "gpt4", "o200k"] {
        for args in
            [&["tokens", "--encoding", name][..], &["--encoding", name], &["choose", "--encoding", name], &["--stats", "--encoding", name]]
        {
            let (s, out, err) = text(args, "{}");
            assert_eq!((s, out.as_str()), (1, ""), "{args:?}");
            assert_eq!(err, format!("polywire: expected o200k_base, cl100k_base or the path of a tokenizer.json, got {name:?}\n"));
        }
    }
    assert_eq!(text(&["tokens", "--encoding", "cl100k_base"], "hello world").1, "2\n");
}

#[test]
fn verbose_adds_the_cause() {
    let (s, _, err) = text(&["-d", "--verbose"], "a:\n\tb: 1\n");
    assert_eq!(s, 1);
    assert!(err.starts_with("polywire: Failed to decode TOON at line 2"), "{err}");
    assert!(err.contains("\n\nCaused by: toon error TOON_"), "{err}");
    let (_, _, quiet) = text(&["-d"], "a:\n\tb: 1\n");
    assert!(!quiet.contains("Caused by"));
}

/// A reader that gives at most `size` bytes a read.
struct Pieces<'a> {
    data: &'a [u8],
    size: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.size.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn capture() -> Vec<Vec<u8>> {
    let f = |t, v: serde_json::Value, seq, ts| kado::encode(t, &v, seq, ts).unwrap();
    vec![
        f(MessageType::ToolCall, serde_json::json!({"toolName": "read", "args": {"path": "a.txt", "2": 1}}), 1, 1_700_000_000_000),
        f(MessageType::ToolResult, serde_json::json!({"text": "x".repeat(4000)}), 2, 1_700_000_000_001),
        f(MessageType::Heartbeat, serde_json::Value::Null, 3, u64::MAX),
    ]
}

/// tests-py/test_cli.py's test_frame_scanner_in_chunks_of_any_size (cli.py's
/// FrameScanner): the offsets and compression flags of each frame, however
/// the capture arrives.
#[test]
fn kado_dump_in_reads_of_any_size() {
    let frames = capture();
    assert!(kado::is_compressed(&frames[1][18..]) && !kado::is_compressed(&frames[0][18..]));
    let stream = frames.concat();
    let whole = run(&["kado", "dump"], &stream);
    assert_eq!((whole.0, whole.2.as_str()), (0, ""));
    let lines: Vec<serde_json::Value> =
        whole.1.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    let got: Vec<(u64, bool)> = lines.iter().map(|l| (l["offset"].as_u64().unwrap(), l["compressed"].as_bool().unwrap())).collect();
    assert_eq!(got, [(0, false), (frames[0].len() as u64, true), ((frames[0].len() + frames[1].len()) as u64, false)]);
    let out = String::from_utf8(whole.1.clone()).unwrap();
    assert!(out.contains(r#""args":{"2":1,"path":"a.txt"}"#) && out.contains(r#""timestamp":18446744073709551615"#));
    assert!(out.starts_with(r#"{"offset":0,"version":1,"type":2,"typeName":"TOOL_CALL","payloadLength":"#));
    for size in [1, 2, 7, 18, 19, 100, stream.len()] {
        assert_eq!(run_reader(&["kado", "dump"], &mut Pieces { data: &stream, size }), whole, "reads of {size}");
    }
    // A fault: the frames before it, then the fault.
    let (s, out, err) = run(&["kado", "dump"], &stream[..stream.len() - 3]);
    assert_eq!(s, 1);
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 2);
    assert!(err.starts_with("polywire: ") && err.contains("at byte"), "{err}");
}

#[test]
fn decode_writes_whole_blocks_before_a_fault() {
    // Rows that grow fourfold as JSON: each 64 KiB of input completes
    // blocks of output, the last one's (with the fault) too.
    let mut doc = String::from("rows[20000]{alpha,beta,gamma,delta}:\n");
    for i in 0..20_000 {
        doc.push_str(&format!("  {i},{i},{i},{i}\n"));
    }
    // The fault amid a piece of input (more follows it).
    doc.push_str("bad[2]: 1\nmore: 1\n");
    let (s, out, err) = run(&["-d"], doc.as_bytes());
    assert_eq!(s, 1);
    assert!(!out.is_empty() && out.len() % polywire_cli::CHUNK == 0, "{}", out.len());
    assert!(err.starts_with("polywire: Failed to decode TOON at line 20002, column 1: Expected 2"), "{err}");
    // Every whole block of the JSON before the fault, those of the piece
    // holding the fault too.
    let (_, whole, _) = run(&["-d"], doc.rsplit_once("bad").unwrap().0.as_bytes());
    let before = whole.len() - "\n  ]\n}\n".len();
    assert!(whole.starts_with(&out));
    assert_eq!(out.len(), before / polywire_cli::CHUNK * polywire_cli::CHUNK);
}

#[test]
fn a_broken_pipe_ends_quietly() {
    struct Closed;
    impl io::Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut err = Vec::new();
    let status = polywire_cli::run(&["-"], &mut DATA_JSON.as_bytes(), &mut Closed, &mut err);
    assert_eq!((status, err.len()), (141, 0));
}

// ------------------------------------------------------------ -o

fn write(p: &Path, data: &[u8]) {
    std::fs::write(p, data).unwrap();
}

#[test]
fn output_file_replaced_only_on_success() {
    let d = Dir::new("replace");
    write(&d.path("in.json"), DATA_JSON.as_bytes());
    write(&d.path("out.toon"), b"precious");
    let (s, out, err) = text(&[&d.s("in.json"), "-o", &d.s("out.toon")], "");
    assert_eq!((s, out.as_str()), (0, ""), "{err}");
    assert_eq!(std::fs::read_to_string(d.path("out.toon")).unwrap(), format!("{DATA_TOON}\n"));
    // A failure leaves it as it was, and no temporary file.
    write(&d.path("out.toon"), b"precious");
    write(&d.path("bad.json"), b"{\"a\": [1,}");
    assert_eq!(text(&[&d.s("bad.json"), "-o", &d.s("out.toon")], "").0, 1);
    assert_eq!(std::fs::read(d.path("out.toon")).unwrap(), b"precious");
    assert_eq!(d.entries(), ["bad.json", "in.json", "out.toon"]);
    // A decode that fails after the first blocks: the same.
    let mut doc = String::from("rows[100000]:\n");
    for i in 0..100_000 {
        doc.push_str(&format!("  - {i}\n"));
    }
    doc.push_str("bad[2]: 1\n");
    assert_eq!(text(&["-d", "-o", &d.s("out.toon")], &doc).0, 1);
    assert_eq!(std::fs::read(d.path("out.toon")).unwrap(), b"precious");
    assert_eq!(d.entries(), ["bad.json", "in.json", "out.toon"]);
    // Every command with -o.
    for args in [&["kado", "dump"][..], &["tether", "unhex"], &["choose"]] {
        let mut a = args.to_vec();
        let out = d.s("out.toon");
        a.extend(["-o", out.as_str()]);
        assert_eq!(text(&a, "\u{1}\u{9}zz").0, 1, "{args:?}");
        assert_eq!(std::fs::read(d.path("out.toon")).unwrap(), b"precious", "{args:?}");
    }
    assert_eq!(d.entries(), ["bad.json", "in.json", "out.toon"]);
}

#[cfg(unix)]
#[test]
fn output_keeps_permissions_and_links() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let d = Dir::new("links");
    write(&d.path("in.json"), DATA_JSON.as_bytes());
    write(&d.path("target.toon"), b"old");
    std::fs::set_permissions(d.path("target.toon"), std::fs::Permissions::from_mode(0o640)).unwrap();
    symlink("target.toon", d.path("link.toon")).unwrap();
    assert_eq!(text(&[&d.s("in.json"), "-o", &d.s("link.toon")], "").0, 0);
    assert!(std::fs::symlink_metadata(d.path("link.toon")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(d.path("target.toon")).unwrap(), format!("{DATA_TOON}\n"));
    assert_eq!(std::fs::metadata(d.path("target.toon")).unwrap().permissions().mode() & 0o777, 0o640);
    // A dangling link: its target is made.
    symlink("made.toon", d.path("dangling.toon")).unwrap();
    assert_eq!(text(&[&d.s("in.json"), "-o", &d.s("dangling.toon")], "").0, 0);
    assert_eq!(std::fs::read_to_string(d.path("made.toon")).unwrap(), format!("{DATA_TOON}\n"));
    // Not a regular file: written directly.
    assert_eq!(text(&[&d.s("in.json"), "-o", "/dev/null"], "").0, 0);
}

#[cfg(unix)]
#[test]
fn the_input_is_never_the_output() {
    use std::os::unix::fs::symlink;
    let d = Dir::new("same");
    let big = format!("rows[20000]:\n{}", (0..20_000).map(|i| format!("  - {i}\n")).collect::<String>());
    write(&d.path("big.toon"), big.as_bytes());
    symlink("big.toon", d.path("alias.toon")).unwrap();
    for out in ["big.toon", "alias.toon"] {
        let (s, _, err) = text(&[&d.s("big.toon"), "-o", &d.s(out)], "");
        assert_eq!(s, 1);
        assert_eq!(
            err,
            format!("polywire: {}: is the input file (write the output to another file, then move it over the input)\n", d.s(out))
        );
        assert_eq!(std::fs::read_to_string(d.path("big.toon")).unwrap(), big);
    }
}

#[cfg(unix)]
#[test]
fn a_directory_as_input() {
    let d = Dir::new("dir");
    let (s, _, err) = text(&[&d.s("")], "");
    assert_eq!(s, 1);
    assert!(err.ends_with(": is a directory\n"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_file_that_may_not_be_written_is_not_replaced() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return; // root may write any file
    }
    let d = Dir::new("readonly");
    write(&d.path("in.json"), DATA_JSON.as_bytes());
    write(&d.path("out.toon"), b"kept");
    std::fs::set_permissions(d.path("out.toon"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let (s, _, err) = text(&[&d.s("in.json"), "-o", &d.s("out.toon")], "");
    assert_eq!((s, err), (1, format!("polywire: {}: permission denied\n", d.s("out.toon"))));
    assert_eq!(std::fs::read(d.path("out.toon")).unwrap(), b"kept");
}
