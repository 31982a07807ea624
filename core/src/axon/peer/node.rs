//! The peer's state on its runtime: the endpoint, the known peers and their
//! connections, serving state, and the thread the runtime runs on.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::{mpsc, watch, Notify};

use super::tls::{self, PairSink, TlsContext};
use super::{Event, Inbound, InboundRequest, PeerConfig, PeerError, PeerInfo, PeerState, Protocol};
use crate::axon::identity::Identity;

/// Events waiting to be read, at most; more wait on their streams (the
/// sender's flow control holds it back).
pub(super) const EVENT_QUEUE: usize = 1024;
/// Requests waiting for the program, at most.
const REQUEST_QUEUE: usize = 1024;
/// Connections at once, at most (upstream's limit).
const MAX_CONNECTIONS: usize = 128;
/// The first and the longest wait between two dials of a peer.
const BACKOFF_MIN: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// A connection used to send to a peer, and who dialed it.
#[derive(Debug, Clone)]
pub(super) struct Live {
    pub conn: quinn::Connection,
    pub dialed_by_us: bool,
}

/// A known peer.
#[derive(Debug)]
pub(super) struct Entry {
    pub public_key: [u8; 32],
    pub addr: Option<String>,
    pub live: Option<Live>,
    pub dialing: bool,
    /// Dials finished (a request waits for the one after it joined).
    pub attempts: u64,
    pub last_error: Option<PeerError>,
    pub backoff: Duration,
    pub next_attempt: Instant,
}

impl Entry {
    fn new(info: &PeerInfo) -> Entry {
        Entry {
            public_key: info.public_key,
            addr: info.addr.clone(),
            live: None,
            dialing: false,
            attempts: 0,
            last_error: None,
            backoff: BACKOFF_MIN,
            next_attempt: Instant::now(),
        }
    }

    /// The connection to send on, if it is still open. One found closed is
    /// forgotten, and why it closed is the peer's last error (a client's TLS
    /// handshake completes before the server has checked its certificate: a
    /// refusal closes a connection that was already up).
    pub fn connection(&mut self) -> Option<quinn::Connection> {
        let reason = match &self.live {
            Some(l) => match l.conn.close_reason() {
                None => return Some(l.conn.clone()),
                Some(reason) => reason,
            },
            None => return None,
        };
        self.live = None;
        self.last_error = Some(super::conn::connection_error(&reason, "the connection"));
        None
    }
}

/// v0.2.0's replay cache: message ids seen in the last 300 s (100,000 at most).
#[derive(Debug, Default)]
pub(super) struct ReplayCache {
    seen: HashMap<String, u64>,
    order: std::collections::VecDeque<(u64, String)>,
}

impl ReplayCache {
    /// Whether `id` was seen within the window; records it.
    pub fn check(&mut self, id: &str, now_ms: u64) -> bool {
        let window = crate::axon::v2::REPLAY_WINDOW_MS;
        while let Some((t, _)) = self.order.front() {
            if now_ms.saturating_sub(*t) < window && self.order.len() < crate::axon::v2::REPLAY_CACHE_CAPACITY {
                break;
            }
            let (t, old) = self.order.pop_front().unwrap_or_default();
            if self.seen.get(&old) == Some(&t) {
                self.seen.remove(&old);
            }
        }
        if self.seen.get(id).is_some_and(|t| now_ms.saturating_sub(*t) < window) {
            return true;
        }
        self.seen.insert(id.to_owned(), now_ms);
        self.order.push_back((now_ms, id.to_owned()));
        false
    }
}

pub(super) struct Node {
    pub identity: Identity,
    pub protocol: Protocol,
    pub listen_addr: SocketAddr,
    /// Taken at shutdown: its socket, and the runtime's I/O driver it is
    /// registered with, go then, not when the last handle to the peer does.
    endpoint: Mutex<Option<quinn::Endpoint>>,
    pub tls: TlsContext,
    pub peers: Mutex<HashMap<String, Entry>>,
    /// Signalled when a connection is registered or lost, or a dial ends.
    pub changed: Notify,
    pub serving: AtomicBool,
    pub wrong_ref: AtomicBool,
    /// Dropped at shutdown, with `events`: a channel outlives the runtime
    /// while a sender lives, and the waker a task of the runtime left in it
    /// keeps the runtime's I/O driver (its descriptors) alive.
    requests: Mutex<Option<mpsc::Sender<InboundRequest>>>,
    events: Arc<Mutex<Option<mpsc::Sender<Event>>>>,
    closed: watch::Sender<bool>,
    pub replay: Mutex<ReplayCache>,
    pub started: Instant,
    /// Served requests waiting for the program.
    pub busy: AtomicUsize,
    pub connections: AtomicUsize,
    pub handler_timeout: Duration,
    pub connect_timeout: Duration,
    pub capabilities: Map<String, Value>,
    pub agent_name: Option<String>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("agent_id", &self.identity.agent_id())
            .field("protocol", &self.protocol)
            .field("listen_addr", &self.listen_addr)
            .finish_non_exhaustive()
    }
}

type Started = (Arc<Node>, Inbound, std::thread::JoinHandle<()>, tokio::runtime::Handle);

/// Bind, start the runtime thread, and return once the peer listens.
pub(super) fn start(config: PeerConfig) -> Result<Started, PeerError> {
    let listen: SocketAddr = config.listen.trim().parse().map_err(|_| {
        PeerError::InvalidArgument(format!("listen must be an ip:port address such as \"127.0.0.1:0\", got {:?}", config.listen))
    })?;
    let identity = match config.identity.clone() {
        Some(i) => i,
        None => Identity::generate().map_err(|e| PeerError::StartFailed(e.message().to_owned()))?,
    };
    let mut pins = HashMap::new();
    let mut entries = HashMap::new();
    for info in &config.peers {
        if info.agent_id == identity.agent_id() {
            return Err(PeerError::InvalidArgument(format!("{} is this peer's own identity", info.agent_id)));
        }
        pins.insert(info.agent_id.clone(), info.public_key);
        entries.insert(info.agent_id.clone(), Entry::new(info));
    }
    let certificate = tls::certificate(&identity).map_err(PeerError::StartFailed)?;
    let socket = std::net::UdpSocket::bind(listen).map_err(|e| PeerError::StartFailed(format!("bind {listen}: {e}")))?;
    let listen_addr = socket.local_addr().map_err(|e| PeerError::StartFailed(e.to_string()))?;
    // Non-blocking before the busy-poll's handle peeks at it (the endpoint
    // would set it so too).
    socket.set_nonblocking(true).map_err(|e| PeerError::StartFailed(e.to_string()))?;
    let busy_poll = Arc::new(super::busy_poll::BusyPoll::new(config.busy_poll, &socket));
    let spin = busy_poll.clone();
    let (events_tx, events_rx) = mpsc::channel(EVENT_QUEUE);
    let (requests_tx, requests_rx) = mpsc::channel(REQUEST_QUEUE);
    let events_slot = Arc::new(Mutex::new(Some(events_tx)));
    let pair_events = events_slot.clone();
    let pairs = Arc::new(PairSink::new(move |r| {
        // A full queue drops it: it is raised again after the window.
        if let Some(tx) = pair_events.lock().ok().and_then(|t| t.clone()) {
            let _ = tx.try_send(Event::PairRequest(r));
        }
    }));
    let tls = TlsContext {
        provider: tls::provider(),
        certificate,
        pins: Arc::new(std::sync::RwLock::new(pins)),
        pairs,
        alpn: match config.protocol {
            Protocol::Axon1 => Some(crate::axon::axon1::ALPN.to_vec()),
            Protocol::V2 => None,
        },
        transport: tls::transport(config.keep_alive, config.idle_timeout),
    };
    let server_config = tls.server_config(None).map_err(PeerError::StartFailed)?;
    let capabilities = config.capabilities.clone().unwrap_or_else(|| default_capabilities(config.agent_name.as_deref()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(move || spin.spin())
        .build()
        .map_err(|e| PeerError::StartFailed(format!("tokio runtime: {e}")))?;
    let handle = runtime.handle().clone();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (closed, _) = watch::channel(false);
    let thread = std::thread::Builder::new()
        .name("polywire-axon-peer".into())
        .spawn(move || {
            runtime.block_on(async move {
                let runtime = Arc::new(quinn::TokioRuntime);
                let endpoint = match quinn::Endpoint::new(quinn::EndpointConfig::default(), Some(server_config), socket, runtime) {
                    Ok(e) => e,
                    Err(e) => {
                        let _ = ready_tx.send(Err(PeerError::StartFailed(format!("QUIC endpoint: {e}"))));
                        return;
                    }
                };
                let node = Arc::new(Node {
                    identity,
                    protocol: config.protocol,
                    listen_addr,
                    endpoint: Mutex::new(Some(endpoint)),
                    tls,
                    peers: Mutex::new(entries),
                    changed: Notify::new(),
                    serving: AtomicBool::new(false),
                    wrong_ref: AtomicBool::new(false),
                    requests: Mutex::new(Some(requests_tx)),
                    events: events_slot,
                    closed,
                    replay: Mutex::new(ReplayCache::default()),
                    started: Instant::now(),
                    busy: AtomicUsize::new(0),
                    connections: AtomicUsize::new(0),
                    handler_timeout: config.handler_timeout,
                    connect_timeout: config.connect_timeout,
                    capabilities,
                    agent_name: config.agent_name.clone(),
                });
                let mut closed = node.closed.subscribe();
                let _ = ready_tx.send(Ok(node.clone()));
                tokio::spawn(node.clone().accept_loop());
                tokio::spawn(node.clone().reconnect_loop());
                let _ = closed.wait_for(|c| *c).await;
                let busy = node.connections.load(Ordering::Relaxed) > 0;
                if let Some(endpoint) = node.endpoint() {
                    endpoint.close(0u32.into(), b"shutdown");
                }
                if busy {
                    // Long enough for the close frames to go out.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                node.lock().clear();
                drop(node.endpoint.lock().ok().and_then(|mut e| e.take()));
                busy_poll.release();
                drop(node.requests.lock().ok().and_then(|mut r| r.take()));
                drop(node.events.lock().ok().and_then(|mut e| e.take()));
            });
        })
        .map_err(|e| PeerError::StartFailed(format!("thread: {e}")))?;
    match ready_rx.recv() {
        Ok(Ok(node)) => Ok((node, Inbound { requests: requests_rx, events: events_rx }, thread, handle)),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(e)
        }
        Err(_) => {
            let _ = thread.join();
            Err(PeerError::StartFailed("the peer's thread ended".into()))
        }
    }
}

/// v2: what `discover` is answered with when the program gave nothing.
fn default_capabilities(agent_name: Option<&str>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("agent_name".into(), Value::from(agent_name.unwrap_or("polywire")));
    m.insert("domains".into(), Value::Array(Vec::new()));
    m.insert("max_concurrent_tasks".into(), Value::from(1));
    m.insert("tools".into(), Value::Array(Vec::new()));
    m
}

impl Node {
    pub fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.peers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where requests for the program go, until the peer shuts down.
    pub fn requests(&self) -> Option<mpsc::Sender<InboundRequest>> {
        self.requests.lock().ok().and_then(|r| r.clone())
    }

    /// The endpoint, until the peer shuts down.
    pub fn endpoint(&self) -> Option<quinn::Endpoint> {
        self.endpoint.lock().ok().and_then(|e| e.clone())
    }

    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    pub fn shut_down(&self) {
        self.closed.send_replace(true);
    }

    /// `work`, or [`PeerError::Closed`] as soon as the peer closes.
    pub async fn closing<T>(&self, work: impl std::future::Future<Output = Result<T, PeerError>>) -> Result<T, PeerError> {
        let mut closed = self.closed.subscribe();
        if *closed.borrow() {
            return Err(PeerError::Closed);
        }
        tokio::select! {
            r = work => r,
            _ = closed.wait_for(|c| *c) => Err(PeerError::Closed),
        }
    }

    pub fn set_serving(&self, on: bool) {
        self.serving.store(on, Ordering::Relaxed);
    }

    /// Whether this side dials `other` (v2: only the lower agent id does).
    pub fn may_dial(&self, other: &str) -> bool {
        self.protocol == Protocol::Axon1 || self.identity.agent_id() < other
    }

    pub fn add_peer(&self, info: PeerInfo) -> Result<(), PeerError> {
        if self.is_closed() {
            return Err(PeerError::Closed);
        }
        if info.agent_id == self.identity.agent_id() {
            return Err(PeerError::InvalidArgument(format!("{} is this peer's own identity", info.agent_id)));
        }
        if let Ok(mut pins) = self.tls.pins.write() {
            pins.insert(info.agent_id.clone(), info.public_key);
        }
        let mut peers = self.lock();
        match peers.get_mut(&info.agent_id) {
            Some(e) => {
                if e.public_key != info.public_key {
                    // Another key under this id cannot happen (the id is the
                    // key's hash) but a connection made under the old pin goes.
                    if let Some(l) = e.live.take() {
                        l.conn.close(0u32.into(), b"key changed");
                    }
                    e.public_key = info.public_key;
                }
                e.addr = info.addr.clone();
                e.backoff = BACKOFF_MIN;
                e.next_attempt = Instant::now();
            }
            None => {
                peers.insert(info.agent_id.clone(), Entry::new(&info));
            }
        }
        drop(peers);
        self.changed.notify_waiters();
        Ok(())
    }

    pub fn remove_peer(&self, agent_id: &str) -> Result<bool, PeerError> {
        if self.is_closed() {
            return Err(PeerError::Closed);
        }
        let id = crate::axon::identity::canonical_agent_id(agent_id).unwrap_or_else(|| agent_id.to_owned());
        if let Ok(mut pins) = self.tls.pins.write() {
            pins.remove(&id);
        }
        let entry = self.lock().remove(&id);
        if let Some(Live { conn, .. }) = entry.as_ref().and_then(|e| e.live.clone()) {
            conn.close(0u32.into(), b"removed");
        }
        self.changed.notify_waiters();
        Ok(entry.is_some())
    }

    pub fn peers(&self) -> Vec<PeerState> {
        let mut peers = self.lock();
        let mut out: Vec<PeerState> = peers
            .iter_mut()
            .map(|(id, e)| {
                let conn = e.connection();
                PeerState {
                    agent_id: id.clone(),
                    addr: e.addr.clone(),
                    status: if conn.is_some() {
                        "connected"
                    } else if e.dialing {
                        "connecting"
                    } else {
                        "disconnected"
                    },
                    rtt: conn.map(|c| c.rtt()),
                }
            })
            .collect();
        out.sort_by(|a, b| a.agent_id.cmp(&b.agent_id));
        out
    }

    async fn accept_loop(self: Arc<Self>) {
        let Some(endpoint) = self.endpoint() else { return };
        while let Some(incoming) = endpoint.accept().await {
            if self.connections.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                incoming.refuse();
                continue;
            }
            tokio::spawn(self.clone().accept(incoming));
        }
    }

    /// Dial the known peers that are not connected, each no sooner than its
    /// backoff allows (1 s, doubling to 30 s).
    async fn reconnect_loop(self: Arc<Self>) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let now = Instant::now();
            let mut due = Vec::new();
            {
                let mut peers = self.lock();
                for (id, e) in peers.iter_mut() {
                    if e.addr.is_some() && !e.dialing && now >= e.next_attempt && e.connection().is_none() && self.may_dial(id) {
                        e.dialing = true;
                        due.push(id.clone());
                    }
                }
            }
            for id in due {
                tokio::spawn(self.clone().dial(id));
            }
        }
    }

    /// Record the end of a dial (started with `dialing` set).
    pub fn dial_finished(&self, id: &str, result: Result<(), PeerError>) {
        let mut peers = self.lock();
        if let Some(e) = peers.get_mut(id) {
            e.dialing = false;
            e.attempts += 1;
            match result {
                Ok(()) => {
                    e.backoff = BACKOFF_MIN;
                    e.last_error = None;
                }
                Err(err) => {
                    e.last_error = Some(err);
                    e.next_attempt = Instant::now() + e.backoff;
                    e.backoff = (e.backoff * 2).min(BACKOFF_MAX);
                }
            }
        }
        drop(peers);
        self.changed.notify_waiters();
    }

    /// A connection to `id`, dialing it (or waiting for it to dial, with v2
    /// and a lower agent id on the other side) until `deadline`.
    pub async fn ensure_connection(self: &Arc<Self>, id: &str, deadline: tokio::time::Instant) -> Result<quinn::Connection, PeerError> {
        let mut joined: Option<u64> = None;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let waiting_for;
            {
                let mut peers = self.lock();
                let Some(e) = peers.get_mut(id) else {
                    return Err(PeerError::UnknownPeer(format!(
                        "no peer {id} is known: add it first (add_peer) with its enrollment token or public key"
                    )));
                };
                if let Some(conn) = e.connection() {
                    return Ok(conn);
                }
                if let Some(a) = joined {
                    if e.attempts > a && !e.dialing {
                        return Err(e.last_error.clone().unwrap_or_else(|| PeerError::Unreachable(format!("{id} could not be reached"))));
                    }
                }
                if self.may_dial(id) {
                    match (&e.addr, e.dialing) {
                        (Some(_), false) => {
                            e.dialing = true;
                            joined = Some(e.attempts);
                            tokio::spawn(self.clone().dial(id.to_owned()));
                        }
                        (Some(_), true) => {
                            joined.get_or_insert(e.attempts);
                        }
                        (None, _) => {}
                    }
                }
                waiting_for = match (&e.addr, self.may_dial(id)) {
                    (Some(a), true) => format!("could not connect to {id} at {a}"),
                    (None, _) => format!("no address is known for {id} and it did not connect to this peer"),
                    (Some(_), false) => {
                        format!("{id} has the lower agent id, so with v2 it dials (this peer waits for it), and it did not connect")
                    }
                };
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(PeerError::Unreachable(format!("{waiting_for} in time")));
            }
        }
    }

    /// Use `conn` to send to `id` unless a live one dialed by the lower
    /// agent id is there (the one both sides keep after simultaneous dials).
    pub fn register(&self, id: &str, conn: &quinn::Connection, dialed_by_us: bool) -> bool {
        let me = self.identity.agent_id();
        let mut peers = self.lock();
        let Some(e) = peers.get_mut(id) else {
            drop(peers);
            conn.close(0u32.into(), b"unknown peer");
            return false;
        };
        let by_lower = |ours: bool| if ours { me < id } else { id < me };
        let keep_old = match e.connection() {
            Some(old) if old.stable_id() != conn.stable_id() => {
                let old_ours = e.live.as_ref().is_some_and(|l| l.dialed_by_us);
                by_lower(old_ours) && !by_lower(dialed_by_us)
            }
            _ => false,
        };
        if !keep_old {
            e.live = Some(Live { conn: conn.clone(), dialed_by_us });
        }
        drop(peers);
        self.changed.notify_waiters();
        true
    }

    /// Forget `conn` as the connection to `id` once it closed.
    pub fn unregister(&self, id: &str, conn: &quinn::Connection) {
        let mut peers = self.lock();
        if let Some(e) = peers.get_mut(id) {
            if e.live.as_ref().is_some_and(|l| l.conn.stable_id() == conn.stable_id()) {
                e.live = None;
                if let Some(reason) = conn.close_reason() {
                    e.last_error = Some(super::conn::connection_error(&reason, "the connection"));
                }
                // The next dial may go at once.
                e.next_attempt = Instant::now();
            }
        }
        drop(peers);
        self.changed.notify_waiters();
    }

    /// Deliver an event, waiting for room (backpressure on the stream).
    pub async fn emit(&self, event: Event) {
        let tx = self.events.lock().ok().and_then(|t| t.clone());
        if let Some(tx) = tx {
            let _ = tx.send(event).await;
        }
    }
}
