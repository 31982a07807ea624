//! Input and output of a command: the input file or standard input, read in
//! blocks of [`CHUNK`] bytes; the output, standard output or a file.
//!
//! A file named by `-o` that is (or will be) a regular file is written to a
//! temporary file beside it (the same directory, so the same file system)
//! and renamed over it only once the whole output is written: a failure, an
//! interrupt or a broken pipe leaves it as it was, and no partial file
//! behind (the temporary file is removed when the [`Output`] is dropped
//! unfinished). A symlink is replaced at its target, so the link stays; the
//! permissions of a file replaced are kept. What is not a regular file
//! (`/dev/null`, a FIFO, `/dev/stdout`) is written to directly. An output
//! that is the input file is refused before anything is read.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use crate::sys::{self, FileId, Std};
use crate::{Fail, CHUNK};

/// An OS error as a command error: `<where>: <reason>` (the reason as the
/// system says it, lower case first, without Rust's ` (os error N)`), or a
/// quiet stop for a signal or a broken pipe.
pub(crate) fn os_fail(place: &str, e: io::Error) -> Fail {
    match e.kind() {
        io::ErrorKind::BrokenPipe => return Fail::BrokenPipe,
        io::ErrorKind::Interrupted => {
            if let Some(sig) = sys::interrupted() {
                return Fail::Interrupted(sig);
            }
        }
        _ => {}
    }
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => &text[..i],
        _ => &text,
    };
    let mut c = text.chars();
    let reason = match c.next() {
        Some(first) => first.to_lowercase().chain(c).collect(),
        None => String::new(),
    };
    Fail::error_with(format!("{place}: {reason}"), format!("{e:?}"))
}

/// Stop if a signal asked the command to (checked between blocks).
pub(crate) fn check_signal() -> Result<(), Fail> {
    match sys::interrupted() {
        Some(sig) => Err(Fail::Interrupted(sig)),
        None => Ok(()),
    }
}

/// A path as the notes (`Encoded ... → ...`) name it: relative to the
/// working directory, as Python's `os.path.relpath` and Node's
/// `path.relative` give it.
pub(crate) fn label(path: Option<&OsStr>) -> String {
    let Some(path) = path else { return "stdin".to_owned() };
    let Ok(cwd) = std::env::current_dir() else { return path.to_string_lossy().into_owned() };
    let full = normalize(&cwd.join(path));
    let base: Vec<Component<'_>> = cwd.components().collect();
    let parts: Vec<Component<'_>> = full.components().collect();
    if base.first() != parts.first() {
        // Another drive (Windows): the absolute path.
        return full.to_string_lossy().into_owned();
    }
    let common = base.iter().zip(&parts).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in common..base.len() {
        rel.push("..");
    }
    for p in &parts[common..] {
        rel.push(p.as_os_str());
    }
    if rel.as_os_str().is_empty() {
        return ".".to_owned();
    }
    rel.to_string_lossy().into_owned()
}

/// `a/./b/../c` as `a/c`, without looking at the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !matches!(out.components().next_back(), Some(Component::RootDir | Component::Prefix(_)) | None) {
                    out.pop();
                }
            }
            c => out.push(c.as_os_str()),
        }
    }
    out
}

fn display(path: &OsStr) -> String {
    path.to_string_lossy().into_owned()
}

/// The input: a file, or standard input.
pub(crate) struct Input {
    file: Option<File>,
    path: Option<OsString>,
    /// The regular file read, if it is one (to refuse it as the output).
    pub id: Option<FileId>,
    buf: Vec<u8>,
}

impl Input {
    /// Open the input: `None` is standard input.
    pub fn open(path: Option<&OsStr>, std: &Std) -> Result<Input, Fail> {
        let Some(path) = path else {
            if std.stdin_closed {
                return Err(Fail::error("standard input is closed"));
            }
            return Ok(Input { file: None, path: None, id: std.stdin_id.clone(), buf: Vec::new() });
        };
        let file = File::open(path).map_err(|e| os_fail(&display(path), e))?;
        let meta = file.metadata().map_err(|e| os_fail(&display(path), e))?;
        if meta.is_dir() {
            return Err(Fail::error(format!("{}: is a directory", display(path))));
        }
        Ok(Input { file: Some(file), id: sys::regular_file_id(Path::new(path), &meta), path: Some(path.to_owned()), buf: Vec::new() })
    }

    pub fn path(&self) -> Option<&OsStr> {
        self.path.as_deref()
    }

    fn place(&self) -> String {
        self.path.as_deref().map_or_else(|| "stdin".to_owned(), display)
    }

    /// The next bytes, what one read gives (at most [`CHUNK`]): a live
    /// stream flows. Empty at the end.
    pub fn read_chunk(&mut self, stdin: &mut dyn Read) -> Result<&[u8], Fail> {
        check_signal()?;
        if self.buf.len() < CHUNK {
            self.buf.resize(CHUNK, 0);
        }
        let r = match self.file.as_mut() {
            Some(f) => sys::read_some(f, &mut self.buf),
            None => sys::read_some(stdin, &mut self.buf),
        };
        let n = r.map_err(|e| os_fail(&self.place(), e))?;
        Ok(&self.buf[..n])
    }

    /// The whole input.
    pub fn read_all(&mut self, stdin: &mut dyn Read) -> Result<Vec<u8>, Fail> {
        let mut all = Vec::new();
        let place = self.place();
        if let Some(file) = self.file.as_mut() {
            // A file: read straight into the buffer, a block at a time.
            let size = file.metadata().map_or(0, |m| m.len());
            all.reserve(usize::try_from(size).unwrap_or(0).saturating_add(1));
            loop {
                check_signal()?;
                let n = Read::take(&mut *file, CHUNK as u64).read_to_end(&mut all);
                if n.map_err(|e| os_fail(&place, e))? == 0 {
                    return Ok(all);
                }
            }
        }
        loop {
            let chunk = self.read_chunk(stdin)?;
            if chunk.is_empty() {
                return Ok(all);
            }
            all.extend_from_slice(chunk);
        }
    }
}

/// Where the output goes.
enum Dest<'w> {
    Stdout(&'w mut dyn Write),
    /// Not a regular file: written as it is (opened at the first write).
    Direct {
        file: Option<File>,
    },
    /// A regular file, or none yet: a temporary file beside `target`,
    /// renamed over it by [`Output::finish`], with the permissions (and, as
    /// far as allowed, the owner) of the file it replaces (`like`).
    Replace {
        target: PathBuf,
        like: Option<Box<std::fs::Metadata>>,
        temp: Option<(File, PathBuf)>,
    },
}

/// The output of a command.
pub(crate) struct Output<'w> {
    /// `-o`'s path, as given.
    path: Option<OsString>,
    dest: Dest<'w>,
}

/// Follow `path`'s symlinks to the path they end at (which may not exist).
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// A path under `/dev` or `/proc` (`/dev/stdout`, `/proc/self/fd/1`): a
/// descriptor or a device, written to directly, never replaced.
fn is_device_path(p: &Path) -> bool {
    cfg!(unix) && (p.starts_with("/dev") || p.starts_with("/proc"))
}

impl<'w> Output<'w> {
    /// The output: `path` (`None`: standard output). `input` is the
    /// identity of the input file, which the output must not be.
    pub fn new(path: Option<&OsStr>, stdout: &'w mut dyn Write, std: &Std, input: Option<&FileId>) -> Result<Output<'w>, Fail> {
        let Some(path) = path else {
            if std.stdout_closed {
                return Err(Fail::error("standard output is closed"));
            }
            if input.is_some() && input == std.stdout_id.as_ref() {
                return Err(Fail::error(
                    "standard output is the input file (write the output to another file, then move it over the input)",
                ));
            }
            return Ok(Output { path: None, dest: Dest::Stdout(stdout) });
        };
        let shown = display(path);
        let fail = |e| os_fail(&shown, e);
        let direct = Output { path: Some(path.to_owned()), dest: Dest::Direct { file: None } };
        let p = Path::new(path);
        if is_device_path(p) || std::fs::read_link(p).is_ok_and(|to| is_device_path(&to)) {
            return Ok(direct);
        }
        let meta = match std::fs::metadata(p) {
            Ok(m) if !m.is_file() => return Ok(direct),
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(fail(e)),
        };
        let id = meta.as_ref().and_then(|m| sys::regular_file_id(p, m));
        if id.is_some() && id.as_ref() == input {
            return Err(Fail::error(format!("{shown}: is the input file (write the output to another file, then move it over the input)")));
        }
        // A file the user may not write is not replaced either (as opening
        // it to write would have failed).
        if meta.is_some() && !sys::writable(p) {
            return Err(fail(io::ErrorKind::PermissionDenied.into()));
        }
        let target = resolve_links(p).map_err(fail)?;
        Ok(Output { path: Some(path.to_owned()), dest: Dest::Replace { target, like: meta.map(Box::new), temp: None } })
    }

    /// Whether the output is a file (the notes name it).
    pub fn path(&self) -> Option<&OsStr> {
        self.path.as_deref()
    }

    fn place(&self) -> String {
        self.path.as_deref().map_or_else(|| "stdout".to_owned(), display)
    }

    /// Open the file (create the temporary file) if not yet done.
    fn open(&mut self) -> Result<(), Fail> {
        let place = self.place();
        match &mut self.dest {
            Dest::Stdout(_) => {}
            Dest::Direct { file } => {
                if file.is_none() {
                    let path = self.path.as_deref().unwrap_or_default();
                    let f = OpenOptions::new().write(true).create(true).truncate(true).open(path);
                    *file = Some(f.map_err(|e| os_fail(&place, e))?);
                }
            }
            Dest::Replace { target, like, temp } => {
                if temp.is_none() {
                    *temp = Some(create_temp(target, like.as_deref()).map_err(|e| os_fail(&place, e))?);
                }
            }
        }
        Ok(())
    }

    /// Write `data` (unbuffered: callers write whole blocks).
    pub fn write(&mut self, data: &[u8]) -> Result<(), Fail> {
        check_signal()?;
        self.open()?;
        let place = self.place();
        let r = match &mut self.dest {
            Dest::Stdout(w) => sys::write_all(*w, data),
            Dest::Direct { file: Some(f) } | Dest::Replace { temp: Some((f, _)), .. } => sys::write_all(f, data),
            _ => Ok(()),
        };
        r.map_err(|e| os_fail(&place, e))
    }

    /// The whole output is written: put the file in place (created even
    /// when nothing was written).
    pub fn finish(mut self) -> Result<(), Fail> {
        self.open()?;
        let place = self.place();
        match &mut self.dest {
            Dest::Stdout(w) => w.flush().map_err(|e| os_fail(&place, e)),
            Dest::Direct { file } => {
                drop(file.take());
                Ok(())
            }
            Dest::Replace { target, temp, .. } => {
                let Some((file, tmp)) = temp.take() else { return Ok(()) };
                drop(file);
                if let Err(e) = std::fs::rename(&tmp, &*target) {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(os_fail(&place, e));
                }
                Ok(())
            }
        }
    }
}

impl Drop for Output<'_> {
    /// Unfinished: the temporary file goes (closed first: Windows cannot
    /// remove an open file).
    fn drop(&mut self) {
        if let Dest::Replace { temp, .. } = &mut self.dest {
            if let Some((file, tmp)) = temp.take() {
                drop(file);
                let _ = std::fs::remove_file(&tmp);
            }
        }
    }
}

/// A new file beside `target` (`.<name>.polywire-<pid>-<n>.tmp`), with the
/// permissions and owner of `like` (the file it replaces) when given, else
/// the default mode (0666 before the umask).
fn create_temp(target: &Path, like: Option<&std::fs::Metadata>) -> io::Result<(File, PathBuf)> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // (A long name is cut: the temporary name must fit too.)
    let name: String = target.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy().chars().take(64).collect());
    let pid = std::process::id();
    for n in 0..1000u32 {
        let tmp = dir.join(format!(".{name}.polywire-{pid}-{n}.tmp"));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => {
                if let Some(m) = like {
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::MetadataExt;
                        let _ = std::os::unix::fs::fchown(&file, Some(m.uid()), Some(m.gid()));
                    }
                    let _ = file.set_permissions(m.permissions());
                }
                return Ok((file, tmp));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free name for a temporary file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_relative_to_the_working_directory() {
        assert_eq!(label(None), "stdin");
        assert_eq!(label(Some(OsStr::new("a.json"))), "a.json");
        assert_eq!(label(Some(OsStr::new("./x/../a.json"))), "a.json");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(label(Some(cwd.join("b").as_os_str())), "b");
        assert_eq!(label(Some(OsStr::new("../q"))), Path::new("..").join("q").to_string_lossy());
    }

    #[test]
    fn os_errors_read_as_python_prints_them() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        let raw = io::Error::from_raw_os_error(2);
        match os_fail("nope.json", raw) {
            Fail::Error { message, .. } => assert_eq!(message, "nope.json: no such file or directory"),
            _ => panic!(),
        }
        assert!(matches!(os_fail("x", e), Fail::Error { .. }));
        assert!(matches!(os_fail("x", io::ErrorKind::BrokenPipe.into()), Fail::BrokenPipe));
    }
}
