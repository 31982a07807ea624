//! A short busy-poll before the peer's runtime thread sleeps.
//!
//! A request from a program crosses two threads: the caller hands it to the
//! runtime thread, which owns the QUIC endpoint, and the runtime hands the
//! reply back. When the runtime thread sleeps between the two, waking it
//! costs a cross-processor wake-up (10-25 µs on a virtual machine), paid on
//! every round trip with one request in flight. So before it parks, the
//! runtime thread spins for a short window ([`PeerConfig::busy_poll`],
//! 50 µs by default), watching for the two things that would wake it: a
//! task spawned or woken from another thread (the runtime's global queue:
//! a request handed over, an answer to a served request, a future of the
//! peer polled on another runtime) and a datagram on its UDP socket. Either
//! ends the spin at once, and the runtime then parks without sleeping (the
//! hand-over and the datagram have already made its driver ready). When
//! nothing comes, it parks as before: an idle peer costs one window per
//! wake-up (timers, keep-alives), and a peer kept busy keeps one core busy,
//! as any busy-polling transport does. `Duration::ZERO` turns it off.
//!
//! The spin yields the processor at each turn: on a machine with fewer
//! cores than busy threads, the thread it would otherwise hold off (the
//! program's event loop, the other end of a local connection) runs at once
//! (a plain spin measured p99 1 in flight 254 µs against 138 µs without the
//! spin; yielding, 105-112 µs). Timers due during a spin wait for its end:
//! keep the window short.
//!
//! [`PeerConfig::busy_poll`]: super::PeerConfig::busy_poll

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub(super) struct BusyPoll {
    window: Duration,
    /// A second handle on the endpoint's socket, only ever peeked at (it
    /// shares the endpoint's non-blocking mode: a peek never blocks).
    /// Released at shutdown with the endpoint: the runtime's configuration
    /// holds this, and a handle on the runtime would otherwise keep the
    /// port bound after the peer closed.
    socket: Mutex<Option<std::net::UdpSocket>>,
}

impl BusyPoll {
    pub(super) fn new(window: Duration, socket: &std::net::UdpSocket) -> BusyPoll {
        // Without a second handle the spin still sees hand-overs; a
        // datagram then wakes the runtime as it would without a spin.
        let socket = if window.is_zero() { None } else { socket.try_clone().ok() };
        BusyPoll { window, socket: Mutex::new(socket) }
    }

    /// The endpoint is gone: so is this handle on its socket.
    pub(super) fn release(&self) {
        drop(self.socket.lock().ok().and_then(|mut s| s.take()));
    }

    /// Called by the runtime thread before it parks (`on_thread_park`).
    pub(super) fn spin(&self) {
        if self.window.is_zero() {
            return;
        }
        // The hook runs inside the runtime: its handle is there. (Kept out
        // of `self`, which the runtime's own configuration holds: a handle
        // there would keep the runtime alive forever.)
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let metrics = runtime.metrics();
        // Only this thread locks it, save `release`, also on this thread.
        let Ok(socket) = self.socket.lock() else { return };
        let start = Instant::now();
        let mut probe = [0u8; 1];
        loop {
            if metrics.global_queue_depth() > 0 {
                return;
            }
            // A datagram waiting (a peek of a larger one reports the
            // truncation as an error on some platforms: still a datagram).
            if let Some(s) = socket.as_ref() {
                match s.peek_from(&mut probe) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    _ => return,
                }
            }
            if start.elapsed() >= self.window {
                return;
            }
            // Yield rather than `spin_loop`: see the module's comment.
            std::thread::yield_now();
        }
    }
}
