//! How the network peers (`kameo_peer.rs`, `axon_peer.rs`) answer asyncio
//! without blocking its loop or calling Python from the peer's thread.
//!
//! Each operation is spawned on the peer's runtime with a [`Reply`] for its
//! token; its outcome ([`Outcome`]: a peer's own enum) reaches Python in one
//! of two ways, chosen at start ([`open`]):
//! - on POSIX loops, a queue the loop drains ([`drain`]) when a byte arrives
//!   on the watched end of a socket pair ([`wakeup_fd`]): one hop, and no
//!   thread but the loop's ever takes the GIL for it;
//! - elsewhere, a notifier thread that calls `notify(token, kind, value)`.
//!
//! A reply dropped unsent (the peer closed and dropped the task holding it)
//! answers [`Outcome::closed`], so no Future of the wrapper waits forever.

use std::sync::{mpsc, Arc, Mutex};

use pyo3::prelude::*;

/// What a peer's operations end with, as the wrapper receives it.
pub(crate) trait Outcome: Send + Sized + 'static {
    /// The answer of an operation the peer dropped unanswered (it closed).
    fn closed() -> Self;
    /// `(kind, value)` for the wrapper's `notify` / `drain`.
    fn to_py<'py>(self, py: Python<'py>) -> PyResult<(u8, Bound<'py, PyAny>)>;
    /// The error outcome of an operation whose value could not be converted:
    /// it fails that operation alone, not the others of a batch.
    fn unconvertible<'py>(py: Python<'py>, e: PyErr) -> PyResult<(u8, Bound<'py, PyAny>)>;
}

pub(crate) struct Completion<D> {
    token: u64,
    done: D,
}

/// Where outcomes go: the notifier thread's channel, or the loop's queue.
pub(crate) enum Completions<D> {
    Thread(mpsc::Sender<Completion<D>>),
    #[cfg(unix)]
    Queue(Arc<WakeQueue<D>>),
}

impl<D> Clone for Completions<D> {
    fn clone(&self) -> Self {
        match self {
            Completions::Thread(tx) => Completions::Thread(tx.clone()),
            #[cfg(unix)]
            Completions::Queue(q) => Completions::Queue(q.clone()),
        }
    }
}

#[cfg(unix)]
pub(crate) struct WakeQueue<D> {
    items: Mutex<Vec<Completion<D>>>,
    /// The write end: a byte when the queue stops being empty.
    wake: std::os::unix::net::UnixStream,
    /// The read end, whose descriptor the loop watches.
    watch: std::os::unix::net::UnixStream,
}

impl<D> Completions<D> {
    /// Hand `done` over for `token`; `Err` once the wrapper's side is gone.
    pub(crate) fn send(&self, token: u64, done: D) -> Result<(), ()> {
        let c = Completion { token, done };
        match self {
            Completions::Thread(tx) => tx.send(c).map_err(|_| ()),
            #[cfg(unix)]
            Completions::Queue(q) => {
                let was_empty = match q.items.lock() {
                    Ok(mut items) => {
                        let was_empty = items.is_empty();
                        items.push(c);
                        was_empty
                    }
                    Err(_) => return Err(()),
                };
                if was_empty {
                    // Non-blocking: a full socket buffer already holds a
                    // wake-up byte, which is all the loop needs.
                    let _ = std::io::Write::write(&mut &q.wake, &[1]);
                }
                Ok(())
            }
        }
    }
}

/// The answer to one operation; dropped unsent, it answers [`Outcome::closed`].
pub(crate) struct Reply<D: Outcome> {
    token: u64,
    tx: Option<Completions<D>>,
}

impl<D: Outcome> Reply<D> {
    pub(crate) fn new(token: u64, tx: &Completions<D>) -> Self {
        Reply { token, tx: Some(tx.clone()) }
    }

    /// The final answer.
    pub(crate) fn send(mut self, done: D) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(self.token, done);
        }
    }

    /// A further item of a stream (Kameo's lookups), before the final answer.
    pub(crate) fn item(&self, done: D) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(self.token, done);
        }
    }
}

impl<D: Outcome> Drop for Reply<D> {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(self.token, D::closed());
        }
    }
}

/// A peer's way back to Python: `completions` for its operations, and
/// either the loop's `queue` (POSIX, `notify` None) or the `notifier` thread.
pub(crate) struct Channel<D> {
    pub(crate) completions: Completions<D>,
    pub(crate) notifier: Option<std::thread::JoinHandle<()>>,
    #[cfg(unix)]
    pub(crate) queue: Option<Arc<WakeQueue<D>>>,
}

/// Open the way back: `notify` None, a queue announced on [`wakeup_fd`]
/// (POSIX only); else a thread named `thread_name` that calls `notify`.
pub(crate) fn open<D: Outcome>(notify: Option<Py<PyAny>>, thread_name: &str) -> Result<Channel<D>, String> {
    match notify {
        Some(notify) => {
            let (tx, rx) = mpsc::channel();
            let notifier = std::thread::Builder::new()
                .name(thread_name.into())
                .spawn(move || run_notifier::<D>(rx, notify))
                .map_err(|e| format!("could not start the notifier thread: {e}"))?;
            Ok(Channel {
                completions: Completions::Thread(tx),
                notifier: Some(notifier),
                #[cfg(unix)]
                queue: None,
            })
        }
        #[cfg(unix)]
        None => {
            let (wake, watch) = std::os::unix::net::UnixStream::pair()
                .and_then(|(a, b)| a.set_nonblocking(true).and(b.set_nonblocking(true)).map(|()| (a, b)))
                .map_err(|e| format!("could not create the wake-up socket: {e}"))?;
            let queue = Arc::new(WakeQueue { items: Mutex::new(Vec::new()), wake, watch });
            Ok(Channel { completions: Completions::Queue(queue.clone()), notifier: None, queue: Some(queue) })
        }
        #[cfg(not(unix))]
        None => Err("notify is required on this platform".into()),
    }
}

/// Calls `notify` for each outcome, until every sender is gone (the peer
/// closed and its last operation was answered) or Python is shutting down.
fn run_notifier<D: Outcome>(rx: mpsc::Receiver<Completion<D>>, notify: Py<PyAny>) {
    while let Ok(Completion { token, done }) = rx.recv() {
        let attached = Python::try_attach(|py| {
            let converted = done.to_py(py).or_else(|e| D::unconvertible(py, e));
            match converted {
                Ok((kind, value)) => {
                    if let Err(e) = notify.call1(py, (token, kind, value)) {
                        // The wrapper's notify does not raise; if it did (its
                        // loop is closed), the error is reported, not lost.
                        e.write_unraisable(py, None);
                    }
                }
                Err(e) => e.write_unraisable(py, None),
            }
        });
        if attached.is_none() {
            break;
        }
    }
    // Dropping `notify` without the GIL defers its decref to PyO3's pool;
    // with the interpreter gone, it is never touched again.
    if Python::try_attach(|_| ()).is_none() {
        std::mem::forget(notify);
    }
}

/// The descriptor the loop watches (POSIX queue only).
#[cfg(unix)]
pub(crate) fn wakeup_fd<D>(queue: Option<&Arc<WakeQueue<D>>>) -> Option<i32> {
    use std::os::fd::AsRawFd;
    queue.map(|q| q.watch.as_raw_fd())
}

/// The outcomes queued since the last call, as `(token, kind, value)`.
#[cfg(unix)]
pub(crate) fn drain<'py, D: Outcome>(py: Python<'py>, queue: Option<&Arc<WakeQueue<D>>>) -> PyResult<Vec<(u64, u8, Bound<'py, PyAny>)>> {
    let Some(q) = queue else { return Ok(Vec::new()) };
    // The wake-up bytes first: an outcome queued after this read finds the
    // queue empty again and writes a new byte.
    let mut buf = [0u8; 256];
    while matches!(std::io::Read::read(&mut &q.watch, &mut buf), Ok(n) if n > 0) {}
    let items = q.items.lock().map(|mut i| std::mem::take(&mut *i)).unwrap_or_default();
    let mut out = Vec::with_capacity(items.len());
    for Completion { token, done } in items {
        let (kind, value) = done.to_py(py).or_else(|e| D::unconvertible(py, e))?;
        out.push((token, kind, value));
    }
    Ok(out)
}
