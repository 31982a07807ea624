//! What the command needs of the process it runs in, when it runs as the
//! process's command ([`crate::run_process`]): its standard descriptors read
//! and written directly (fd 0, 1, 2), signals (SIGINT and SIGTERM stop it
//! between blocks, SIGPIPE is taken as an error and then re-raised), and the
//! identity of the files behind stdin and stdout. Unix only; elsewhere the
//! standard streams of `std` and no signals.
//!
//! The in-memory [`crate::run`] uses none of it but [`interrupted`], which
//! then never reports a signal.

use std::io;

/// The identity of a regular file: two paths, or a path and a descriptor,
/// name the same file when these are equal. Device and inode on Unix; the
/// canonical path elsewhere (links resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileId {
    #[cfg(unix)]
    dev: u64,
    #[cfg(unix)]
    ino: u64,
    #[cfg(not(unix))]
    path: std::path::PathBuf,
}

/// What is known of the process's standard streams: nothing, in memory.
#[derive(Debug, Default, Clone)]
pub(crate) struct Std {
    pub stdin_closed: bool,
    pub stdout_closed: bool,
    /// The regular file standard input reads, if it is one.
    pub stdin_id: Option<FileId>,
    /// The regular file standard output writes, if it is one.
    pub stdout_id: Option<FileId>,
}

/// The identity of the file at `path` (`meta` its metadata), if it is a
/// regular file.
pub(crate) fn regular_file_id(path: &std::path::Path, meta: &std::fs::Metadata) -> Option<FileId> {
    if !meta.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        Some(FileId { dev: meta.dev(), ino: meta.ino() })
    }
    #[cfg(not(unix))]
    {
        std::fs::canonicalize(path).ok().map(|path| FileId { path })
    }
}

/// Whether this process may write the file at `path` (which exists).
pub(crate) fn writable(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
        // SAFETY: access(2) of a NUL-terminated path.
        unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
    }
}

#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(not(unix))]
pub(crate) use portable::*;

#[cfg(unix)]
mod unix {
    use super::{FileId, Std};
    use std::ffi::c_int;
    use std::io::{self, Read, Write};
    use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

    /// The signal that asked the command to stop (0: none yet).
    static SIGNAL: AtomicI32 = AtomicI32::new(0);

    /// The two ends of a pipe the handler writes a byte to while signals are
    /// handled (-1 otherwise). A flag alone cannot wake a read or a write
    /// that is already blocked, or about to block when the signal comes just
    /// after the flag was checked, or that runs on another thread than the
    /// one the signal is delivered to: every wait for a standard descriptor
    /// polls this pipe too ([`Fd::wait_ready`]).
    static WAKE_READ: AtomicI32 = AtomicI32::new(-1);
    static WAKE_WRITE: AtomicI32 = AtomicI32::new(-1);

    /// The thread that runs the command (0: none). A process-directed
    /// signal may be delivered to any thread of the host (Node has several):
    /// the handler then sends it on to this one, whose blocked read or write
    /// it interrupts (EINTR: no SA_RESTART).
    static COMMAND_THREAD: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn on_signal(sig: c_int) {
        SIGNAL.store(sig, Ordering::SeqCst);
        let fd = WAKE_WRITE.load(Ordering::SeqCst);
        if fd >= 0 {
            let byte = 1u8;
            // SAFETY: write(2) is async-signal-safe; one byte from a local.
            // A full buffer already holds a wake-up byte, which is enough.
            unsafe {
                libc::write(fd, (&byte as *const u8).cast(), 1);
            }
        }
        let command = COMMAND_THREAD.load(Ordering::SeqCst);
        // SAFETY: pthread_self and pthread_kill are async-signal-safe; the
        // command thread is alive while the handler is installed.
        unsafe {
            if command != 0 && libc::pthread_self() as usize != command {
                libc::pthread_kill(command as libc::pthread_t, sig);
            }
        }
    }

    /// A connected pair of sockets, read end first, non-blocking and closed
    /// on exec (std makes them so), used as a pipe; or None.
    fn wake_pipe() -> Option<(c_int, c_int)> {
        use std::os::fd::IntoRawFd;
        let (read, write) = std::os::unix::net::UnixStream::pair().ok()?;
        read.set_nonblocking(true).ok()?;
        write.set_nonblocking(true).ok()?;
        Some((read.into_raw_fd(), write.into_raw_fd()))
    }

    /// The signal that asked the command to stop, if one did.
    pub(crate) fn interrupted() -> Option<i32> {
        match SIGNAL.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    /// The handlers of SIGINT and SIGTERM (a flag, checked between blocks
    /// and when a read or write returns EINTR: no SA_RESTART) and SIGPIPE
    /// ignored (a write to a closed pipe fails with EPIPE), while the command
    /// runs; the host's own handlers (Python's, Node's) are put back when
    /// this is dropped. A signal the host ignores stays ignored.
    pub(crate) struct Signals {
        saved: Vec<(c_int, libc::sigaction)>,
    }

    impl Signals {
        pub(crate) fn install() -> Signals {
            SIGNAL.store(0, Ordering::SeqCst);
            // Without the pipe (no descriptors left), waits are plain
            // blocking calls and a signal is seen at the next EINTR.
            if let Some((r, w)) = wake_pipe() {
                WAKE_READ.store(r, Ordering::SeqCst);
                WAKE_WRITE.store(w, Ordering::SeqCst);
            }
            // SAFETY: pthread_self has no preconditions.
            COMMAND_THREAD.store(unsafe { libc::pthread_self() } as usize, Ordering::SeqCst);
            let mut saved = Vec::new();
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGPIPE] {
                // SAFETY: sigaction with valid pointers to zeroed structs,
                // filled as the C API documents; the handler only stores to
                // an atomic (async-signal-safe).
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                        continue;
                    }
                    let handler = if sig == libc::SIGPIPE {
                        libc::SIG_IGN
                    } else if old.sa_sigaction == libc::SIG_IGN {
                        continue;
                    } else {
                        on_signal as extern "C" fn(c_int) as libc::sighandler_t
                    };
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = handler;
                    new.sa_flags = 0;
                    libc::sigemptyset(&mut new.sa_mask);
                    if libc::sigaction(sig, &new, std::ptr::null_mut()) == 0 {
                        saved.push((sig, old));
                    }
                }
            }
            Signals { saved }
        }

        /// Die by SIGPIPE, as a command writing to a pipe whose reader went
        /// away does (`polywire big.json | head` ends with status 141).
        pub(crate) fn die_by_sigpipe(self) -> ! {
            drop(self);
            // SAFETY: plain calls of the C API with valid arguments.
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGPIPE);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::raise(libc::SIGPIPE);
            }
            // Not reached: the default action of SIGPIPE ends the process.
            std::process::exit(128 + libc::SIGPIPE)
        }
    }

    impl Drop for Signals {
        fn drop(&mut self) {
            for (sig, old) in self.saved.drain(..).rev() {
                // SAFETY: puts back the action sigaction gave us.
                unsafe {
                    libc::sigaction(sig, &old, std::ptr::null_mut());
                }
            }
            COMMAND_THREAD.store(0, Ordering::SeqCst);
            // The handlers are gone: nothing writes to the pipe any more.
            for end in [&WAKE_WRITE, &WAKE_READ] {
                let fd = end.swap(-1, Ordering::SeqCst);
                if fd >= 0 {
                    // SAFETY: closes a descriptor wake_pipe opened.
                    unsafe {
                        libc::close(fd);
                    }
                }
            }
        }
    }

    /// The standard descriptors as the command found them. One that is
    /// closed counts as closed, and so does one the host opened itself in
    /// place of a closed one (see [`crate::Host`]); a hole is filled with
    /// /dev/null while the command runs, so that no file it opens takes its
    /// number, and emptied again after.
    pub(crate) struct StdFds {
        pub(crate) std: Std,
        placeholders: Vec<c_int>,
    }

    impl StdFds {
        pub(crate) fn check(host: crate::Host) -> StdFds {
            let mut closed = [false; 3];
            let mut placeholders = Vec::new();
            for fd in 0..3 {
                // SAFETY: fcntl on a descriptor number only queries it.
                let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
                closed[fd as usize] = flags == -1
                    || match host {
                        // Not inherited (a standard descriptor that was is
                        // never close-on-exec): opened in its place.
                        crate::Host::Process => flags & libc::FD_CLOEXEC != 0,
                        crate::Host::Node => is_node_placeholder(fd),
                    };
                if flags == -1 {
                    // SAFETY: open of a constant path; the lowest free
                    // descriptor is `fd`, the lower ones being open now.
                    let got = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
                    if got == fd {
                        placeholders.push(fd);
                    } else if got >= 0 {
                        // SAFETY: closes the descriptor just opened.
                        unsafe { libc::close(got) };
                    }
                }
            }
            let id = |fd: c_int, closed: bool| if closed { None } else { fd_file_id(fd) };
            let std = Std { stdin_closed: closed[0], stdout_closed: closed[1], stdin_id: id(0, closed[0]), stdout_id: id(1, closed[1]) };
            StdFds { std, placeholders }
        }
    }

    impl Drop for StdFds {
        fn drop(&mut self) {
            for fd in self.placeholders.drain(..) {
                // SAFETY: closes the placeholder this opened.
                unsafe { libc::close(fd) };
            }
        }
    }

    /// /dev/null open for reading and writing: what Node opens in place of
    /// a closed standard descriptor when it starts (it marks all three
    /// close-on-exec, so that tells nothing there).
    fn is_node_placeholder(fd: c_int) -> bool {
        // SAFETY: fcntl and fstat of a descriptor number, stat of a
        // constant path, into zeroed structs.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFL) & libc::O_ACCMODE != libc::O_RDWR {
                return false;
            }
            let (mut a, mut b): (libc::stat, libc::stat) = (std::mem::zeroed(), std::mem::zeroed());
            libc::fstat(fd, &mut a) == 0
                && libc::stat(c"/dev/null".as_ptr(), &mut b) == 0
                && (a.st_mode & libc::S_IFMT) == libc::S_IFCHR
                && a.st_rdev == b.st_rdev
        }
    }

    /// What fstat(2) says of a descriptor number, if it is open.
    fn fstat(fd: c_int) -> Option<libc::stat> {
        // SAFETY: fstat of a descriptor number into a zeroed struct.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            (libc::fstat(fd, &mut st) == 0).then_some(st)
        }
    }

    fn fd_file_id(fd: c_int) -> Option<FileId> {
        let st = fstat(fd).filter(|st| (st.st_mode & libc::S_IFMT) == libc::S_IFREG)?;
        #[allow(clippy::unnecessary_cast)]
        Some(FileId { dev: st.st_dev as u64, ino: st.st_ino as u64 })
    }

    /// A standard descriptor, read or written directly (no buffering: the
    /// command writes whole blocks). EINTR comes back as
    /// [`io::ErrorKind::Interrupted`] (the caller checks for a signal, then
    /// tries again); a descriptor left non-blocking by another process is
    /// waited for with poll(2).
    pub(crate) struct Fd {
        fd: c_int,
        writes: Writes,
    }

    /// How a write to a pipe or a socket avoids blocking. The command waits
    /// in poll(2) beside the wake-up pipe, then writes; a blocking write of
    /// a block larger than the room in a pipe would then sleep in write(2)
    /// until a reader makes room, and a signal handled between the poll and
    /// that write (its flag set, its byte read by nobody) would leave the
    /// command asleep with nobody reading. A write that cannot block sends
    /// what fits and returns to the poll, which sees the signal's byte.
    enum Writes {
        /// A regular file, a terminal, or no way found: a plain write(2).
        Plain,
        /// The same pipe (or FIFO) opened again, non-blocking: O_NONBLOCK is
        /// a flag of the open file description, which the process shares
        /// with others (the shell, the reader's siblings), so it is set on a
        /// description of the command's own (Linux's /proc/self/fd).
        Pipe(c_int),
        /// A socket: send(2) with MSG_DONTWAIT, a per-call flag.
        Socket,
    }

    impl Fd {
        /// Standard input (fd 0), read only.
        pub(crate) fn input() -> Fd {
            Fd { fd: 0, writes: Writes::Plain }
        }

        /// Standard output or error (fd 1 or 2), written without blocking
        /// when it is a pipe or a socket (see [`Writes`]).
        pub(crate) fn output(fd: c_int) -> Fd {
            Fd { fd, writes: Writes::of(fd) }
        }

        /// Wait until the descriptor is ready for `events` (or has an error
        /// or hang-up, which the read or write then reports), or a signal
        /// asked the command to stop: then EINTR's
        /// [`io::ErrorKind::Interrupted`]. A regular file is always ready.
        fn wait_ready(&self, events: libc::c_short) -> io::Result<()> {
            loop {
                if interrupted().is_some() {
                    return Err(io::ErrorKind::Interrupted.into());
                }
                let wake = WAKE_READ.load(Ordering::SeqCst);
                if wake < 0 {
                    return Ok(());
                }
                let mut p = [libc::pollfd { fd: self.fd, events, revents: 0 }, libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 }];
                // SAFETY: two valid pollfds.
                if unsafe { libc::poll(p.as_mut_ptr(), 2, -1) } < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e);
                }
                if p[1].revents != 0 {
                    // The handler set the flag before it wrote the byte: the
                    // top of the loop reports it. (A byte without a flag
                    // cannot be, but is read away rather than spun on.)
                    let mut byte = [0u8; 16];
                    // SAFETY: a non-blocking read into a local buffer.
                    unsafe {
                        libc::read(wake, byte.as_mut_ptr().cast(), byte.len());
                    }
                    continue;
                }
                return Ok(());
            }
        }

        fn would_block(e: &io::Error) -> bool {
            e.kind() == io::ErrorKind::WouldBlock
        }
    }

    impl Writes {
        fn of(fd: c_int) -> Writes {
            let Some(st) = fstat(fd) else { return Writes::Plain };
            match st.st_mode & libc::S_IFMT {
                libc::S_IFSOCK => Writes::Socket,
                libc::S_IFIFO => Self::reopened(fd).map_or(Writes::Plain, Writes::Pipe),
                _ => Writes::Plain,
            }
        }

        /// The pipe behind `fd` opened again for writing, non-blocking and
        /// closed on exec, in packet mode if `fd` is (O_DIRECT); None where
        /// that cannot be done. (Opening a pipe's write end with O_NONBLOCK
        /// never waits for a reader: with none it fails, ENXIO, and the
        /// write then reports EPIPE as before.)
        #[cfg(target_os = "linux")]
        fn reopened(fd: c_int) -> Option<c_int> {
            // SAFETY: fcntl on a descriptor number only queries it.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if flags < 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
                return None; // a read end: its writes fail (EBADF) as they did
            }
            let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}")).ok()?;
            let how = libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | (flags & libc::O_DIRECT);
            // SAFETY: open(2) of a NUL-terminated path.
            let got = unsafe { libc::open(path.as_ptr(), how) };
            if (0..3).contains(&got) {
                // A standard number that was free (its placeholder could not
                // be opened): not taken, or another stream would write here.
                // SAFETY: closes the descriptor just opened.
                unsafe { libc::close(got) };
                return None;
            }
            (got >= 0).then_some(got)
        }

        /// Elsewhere there is no /proc/self/fd to open a pipe again from.
        #[cfg(not(target_os = "linux"))]
        fn reopened(_fd: c_int) -> Option<c_int> {
            None
        }
    }

    impl Drop for Fd {
        fn drop(&mut self) {
            if let Writes::Pipe(fd) = self.writes {
                // SAFETY: closes the descriptor `reopened` opened.
                unsafe { libc::close(fd) };
            }
        }
    }

    impl Read for Fd {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let len = buf.len().min(isize::MAX as usize);
            loop {
                self.wait_ready(libc::POLLIN)?;
                // SAFETY: reads at most `len` bytes into `buf`.
                let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), len) };
                if n >= 0 {
                    return Ok(n as usize);
                }
                let e = io::Error::last_os_error();
                if Self::would_block(&e) {
                    // Left non-blocking by another process: wait again.
                    continue;
                }
                return Err(e);
            }
        }
    }

    impl Write for Fd {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let len = buf.len().min(isize::MAX as usize);
            loop {
                self.wait_ready(libc::POLLOUT)?;
                // SAFETY: writes at most `len` bytes of `buf` to a descriptor
                // this owns or was given.
                let n = unsafe {
                    match self.writes {
                        Writes::Plain => libc::write(self.fd, buf.as_ptr().cast(), len),
                        Writes::Pipe(fd) => libc::write(fd, buf.as_ptr().cast(), len),
                        Writes::Socket => libc::send(self.fd, buf.as_ptr().cast(), len, libc::MSG_DONTWAIT),
                    }
                };
                if n >= 0 {
                    return Ok(n as usize);
                }
                let e = io::Error::last_os_error();
                if Self::would_block(&e) {
                    continue;
                }
                return Err(e);
            }
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Run `f` with the process's standard streams, signals handled, and
    /// die by SIGPIPE if it reports a broken pipe.
    pub(crate) fn with_process(
        host: crate::Host,
        f: impl FnOnce(&mut dyn Read, &mut dyn Write, &mut dyn Write, Std) -> crate::Status,
    ) -> i32 {
        // Handlers and descriptors are the process's: one run at a time
        // (two threads of a host calling the command wait for each other).
        static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let signals = Signals::install();
        let fds = StdFds::check(host);
        let status = f(&mut Fd::input(), &mut Fd::output(1), &mut Fd::output(2), fds.std.clone());
        drop(fds);
        match status {
            crate::Status::BrokenPipe => signals.die_by_sigpipe(),
            s => s.code(),
        }
    }
}

#[cfg(not(unix))]
mod portable {
    use super::Std;

    /// No signals are caught on this platform.
    pub(crate) fn interrupted() -> Option<i32> {
        None
    }

    /// Run `f` with the process's standard streams (those of `std`).
    pub(crate) fn with_process(
        _host: crate::Host,
        f: impl FnOnce(&mut dyn std::io::Read, &mut dyn std::io::Write, &mut dyn std::io::Write, Std) -> crate::Status,
    ) -> i32 {
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let status = f(&mut stdin.lock(), &mut stdout.lock(), &mut stderr.lock(), Std::default());
        match status {
            // No SIGPIPE here: stop quietly.
            crate::Status::BrokenPipe => 1,
            s => s.code(),
        }
    }
}

/// Read what is there (one read), trying again after EINTR unless a
/// signal asked the command to stop.
pub(crate) fn read_some(r: &mut dyn io::Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted && interrupted().is_none() => continue,
            other => return other,
        }
    }
}

/// Write all of `data`, trying again after EINTR unless a signal asked the
/// command to stop.
pub(crate) fn write_all(w: &mut dyn io::Write, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        // (A signal that comes while some bytes go out does not fail the
        // write: it returns what it wrote.)
        if interrupted().is_some() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        match w.write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted && interrupted().is_none() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
