//! An AXON peer (cargo feature `axon-peer`): talks to real AXON daemons over
//! QUIC with mutual TLS, in either protocol generation, for programs that
//! are not upstream's daemon (the Python and Node bindings).
//!
//! - [`Protocol::Axon1`] ("axon/1", the default): upstream v0.3.0 and later.
//!   ALPN `axon/1`; a `request` goes on a bidirectional stream and gets
//!   exactly one reply (`response` or `error`) whose `ref` is its id; every
//!   other kind (`message`, an unsolicited `error`, ...) goes on a
//!   unidirectional stream. Both sides dial.
//! - [`Protocol::V2`] ("v2"): upstream v0.2.0, the design document's
//!   protocol. No ALPN; the lower agent id dials and sends `hello` first;
//!   request kinds (`ping`, `query`, `delegate`, `cancel`, `discover`) go on
//!   bidirectional streams, the rest on unidirectional ones; ids seen in the
//!   last 300 s are dropped as replays; `ping` and `discover` are answered by
//!   the peer itself.
//!
//! Transport and TLS as upstream's daemons ([`tls`]): TLS 1.3 with
//! self-signed Ed25519 certificates pinned by agent id, keep-alive 15 s,
//! idle 60 s, 8 bidirectional and 16 unidirectional streams. One message per
//! stream, compact JSON then FIN, read with a 64 KiB limit and a 10 s budget.
//! A bad message is answered as upstream answers it (or dropped) and never
//! closes the connection.
//!
//! The peer runs on a tokio runtime it owns, on a thread of its own. Its
//! operations are futures to run on that runtime ([`Peer::spawn`]) or any
//! tokio runtime. Requests for this peer arrive on [`Inbound`] once
//! [`Peer::set_serving`] is on (until then the peer answers them as upstream
//! does without an application: `unhandled`, or v0.2.0's canned replies);
//! messages, unsolicited errors and refused peers arrive there as
//! [`Event`]s.

mod busy_poll;
mod conn;
mod node;
mod serve;
pub mod tls;
mod v2;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use super::identity::{self, Identity};
pub use tls::PairRequest;

/// Which protocol generation a peer speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// "axon/1": upstream v0.3.0 and later (v0.7.2, main).
    Axon1,
    /// "v2": upstream v0.2.0, the design document's protocol.
    V2,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Axon1 => "axon/1",
            Protocol::V2 => "v2",
        }
    }

    pub fn parse(s: &str) -> Option<Protocol> {
        match s {
            "axon/1" => Some(Protocol::Axon1),
            "v2" => Some(Protocol::V2),
            _ => None,
        }
    }

    /// The request kinds a program may send ([`Peer::request`]).
    pub fn request_kinds(self) -> &'static [&'static str] {
        match self {
            Protocol::Axon1 => &["request"],
            Protocol::V2 => &["query", "delegate", "discover", "ping", "cancel"],
        }
    }
}

/// A peer this one knows: its key (the pin) and where to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    pub agent_id: String,
    pub public_key: [u8; 32],
    /// `ip:port` or `host:port`; `None` for a peer that only dials us.
    pub addr: Option<String>,
}

impl PeerInfo {
    /// A peer by public key; the agent id is derived from it.
    pub fn new(public_key: [u8; 32], addr: Option<String>) -> Result<PeerInfo, PeerError> {
        if let Some(a) = &addr {
            identity::check_addr(a).map_err(|e| PeerError::InvalidArgument(e.message().to_owned()))?;
        }
        Ok(PeerInfo { agent_id: identity::agent_id_of(&public_key), public_key, addr: addr.map(|a| a.trim().to_owned()) })
    }

    /// A peer from its enrollment token (`axon://<key>@host:port`).
    pub fn from_token(token: &str) -> Result<PeerInfo, PeerError> {
        let t = identity::parse_token(token).map_err(|e| PeerError::InvalidArgument(e.message().to_owned()))?;
        Ok(PeerInfo { agent_id: t.agent_id, public_key: t.public_key, addr: Some(t.addr) })
    }

    /// A peer given as upstream's config does: agent id (checked against the
    /// key, as upstream's verifiers would refuse it), standard base64 key and
    /// address.
    pub fn from_parts(agent_id: Option<&str>, public_key_base64: &str, addr: Option<&str>) -> Result<PeerInfo, PeerError> {
        let key = identity::public_key_from_base64(public_key_base64).map_err(|e| PeerError::InvalidArgument(e.message().to_owned()))?;
        let info = PeerInfo::new(key, addr.map(str::to_owned))?;
        if let Some(id) = agent_id {
            if identity::canonical_agent_id(id).as_deref() != Some(info.agent_id.as_str()) {
                return Err(PeerError::InvalidArgument(format!(
                    "agent_id {id:?} does not match the public key, whose agent id is {}",
                    info.agent_id
                )));
            }
        }
        Ok(info)
    }
}

/// [`PeerConfig::busy_poll`]'s default.
pub const DEFAULT_BUSY_POLL: Duration = Duration::from_micros(50);

/// How a [`Peer`] starts.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// The identity; a new random one when `None`.
    pub identity: Option<Identity>,
    /// The UDP address to listen on (`ip:port`; port 0 picks one).
    pub listen: String,
    /// The peers it knows (pinned) from the start.
    pub peers: Vec<PeerInfo>,
    pub protocol: Protocol,
    /// v2: what a `discover` is answered with (a `capabilities` payload);
    /// by default `{"agent_name", "domains": [], "max_concurrent_tasks": 1,
    /// "tools": []}`.
    pub capabilities: Option<Map<String, Value>>,
    /// v2: the name given in `hello` and in the default capabilities.
    pub agent_name: Option<String>,
    /// How long a served request may wait for the program's answer before it
    /// is answered `{"code":"timeout"}` (30 s).
    pub handler_timeout: Duration,
    /// How long a dial may take (10 s, upstream's reconnect budget).
    pub connect_timeout: Duration,
    /// QUIC keep-alive interval (15 s) and idle timeout (60 s).
    pub keep_alive: Duration,
    pub idle_timeout: Duration,
    /// How long the peer's runtime thread spins, watching for work and
    /// datagrams, before it sleeps (50 µs; `Duration::ZERO`: never). It
    /// saves a thread wake-up per round trip (10-25 µs on a virtual
    /// machine) at the cost of a busy core while requests flow.
    pub busy_poll: Duration,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            identity: None,
            listen: "127.0.0.1:0".into(),
            peers: Vec::new(),
            protocol: Protocol::Axon1,
            capabilities: None,
            agent_name: None,
            handler_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            keep_alive: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(60),
            busy_poll: DEFAULT_BUSY_POLL,
        }
    }
}

/// Why an operation failed; [`PeerError::code`] is stable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerError {
    /// The peer answered with an `error` (its code, message, retryable).
    Remote { code: String, message: String, retryable: bool },
    /// No reply within the request's timeout.
    Timeout(String),
    /// The TLS handshake was refused (unknown or mismatched key on either
    /// side, another ALPN or protocol generation), or v2's hello was.
    HandshakeRefused(String),
    /// The peer could not be reached (no answer to the dial, no address).
    Unreachable(String),
    /// No pin for that agent id.
    UnknownPeer(String),
    /// The reply was not a valid answer to the request (wrong `ref` or kind,
    /// invalid envelope, none at all).
    InvalidReply(String),
    /// A message over 65,536 bytes.
    MessageTooLarge(String),
    /// The connection closed (or the stream was reset) before the reply.
    ConnectionLost(String),
    /// The peer is closed.
    Closed,
    /// The peer could not start.
    StartFailed(String),
    /// An argument was not valid.
    InvalidArgument(String),
}

impl PeerError {
    pub fn code(&self) -> &'static str {
        match self {
            PeerError::Remote { .. } => "AXON_REMOTE_ERROR",
            PeerError::Timeout(_) => "AXON_TIMEOUT",
            PeerError::HandshakeRefused(_) => "AXON_HANDSHAKE_REFUSED",
            PeerError::Unreachable(_) => "AXON_UNREACHABLE",
            PeerError::UnknownPeer(_) => "AXON_UNKNOWN_PEER",
            PeerError::InvalidReply(_) => "AXON_INVALID_REPLY",
            PeerError::MessageTooLarge(_) => "AXON_MESSAGE_TOO_LARGE",
            PeerError::ConnectionLost(_) => "AXON_CONNECTION_LOST",
            PeerError::Closed => "AXON_CLOSED",
            PeerError::StartFailed(_) => "AXON_START_FAILED",
            PeerError::InvalidArgument(_) => "AXON_INVALID_ARGUMENT",
        }
    }
}

impl std::fmt::Display for PeerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerError::Remote { code, message, .. } => write!(f, "{code}: {message}"),
            PeerError::Closed => f.write_str("the peer is closed"),
            PeerError::StartFailed(m) => write!(f, "the peer could not start: {m}"),
            PeerError::Timeout(m)
            | PeerError::HandshakeRefused(m)
            | PeerError::Unreachable(m)
            | PeerError::UnknownPeer(m)
            | PeerError::InvalidReply(m)
            | PeerError::MessageTooLarge(m)
            | PeerError::ConnectionLost(m)
            | PeerError::InvalidArgument(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for PeerError {}

/// A reply to a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub id: String,
    pub kind: String,
    pub payload: Map<String, Value>,
}

/// A message (or unsolicited error, or any kind that is not a request) this
/// peer received; `from` is the sender's TLS identity.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub from: String,
    pub id: String,
    pub kind: String,
    pub ref_id: Option<String>,
    pub payload: Map<String, Value>,
}

/// What arrives besides requests.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A message (any kind but `error`).
    Message(Message),
    /// An `error` that answers no request of ours on its stream.
    Error(Message),
    /// An unknown peer was refused in the TLS handshake.
    PairRequest(PairRequest),
}

/// How a served request is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Payload(Map<String, Value>),
    Error { code: String, message: String, retryable: bool },
}

/// A request for this peer. Answer it with [`respond`](Self::respond) or
/// [`fail`](Self::fail); one dropped unanswered is answered with an error
/// (`internal`), one unanswered for the handler timeout with `timeout`.
#[derive(Debug)]
pub struct InboundRequest {
    pub from: String,
    pub id: String,
    pub kind: String,
    pub payload: Map<String, Value>,
    answer: Option<oneshot::Sender<Answer>>,
}

impl InboundRequest {
    pub fn respond(mut self, payload: Map<String, Value>) {
        if let Some(tx) = self.answer.take() {
            let _ = tx.send(Answer::Payload(payload));
        }
    }

    pub fn fail(mut self, code: &str, message: &str, retryable: bool) {
        if let Some(tx) = self.answer.take() {
            let _ = tx.send(Answer::Error { code: code.into(), message: message.into(), retryable });
        }
    }
}

/// Requests and events for this peer.
#[derive(Debug)]
pub struct Inbound {
    pub requests: mpsc::Receiver<InboundRequest>,
    pub events: mpsc::Receiver<Event>,
}

/// A known peer's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerState {
    pub agent_id: String,
    pub addr: Option<String>,
    /// `connected`, `connecting` or `disconnected`.
    pub status: &'static str,
    pub rtt: Option<Duration>,
}

/// A running AXON peer. Cloning gives another handle to the same peer.
#[derive(Clone, Debug)]
pub struct Peer {
    inner: Arc<PeerInner>,
}

#[derive(Debug)]
struct PeerInner {
    node: Arc<node::Node>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Dropped by `close`: a handle keeps the runtime's I/O driver alive.
    runtime: Mutex<Option<tokio::runtime::Handle>>,
}

impl Drop for PeerInner {
    fn drop(&mut self) {
        self.node.shut_down();
    }
}

impl Peer {
    /// Start a peer: bind its UDP socket and return once it listens (blocking
    /// the calling thread meanwhile).
    pub fn start(config: PeerConfig) -> Result<(Peer, Inbound), PeerError> {
        let (node, inbound, thread, runtime) = node::start(config)?;
        let inner = PeerInner { node, thread: Mutex::new(Some(thread)), runtime: Mutex::new(Some(runtime)) };
        Ok((Peer { inner: Arc::new(inner) }, inbound))
    }

    pub fn agent_id(&self) -> &str {
        self.inner.node.identity.agent_id()
    }

    pub fn public_key(&self) -> &[u8; 32] {
        self.inner.node.identity.public_key()
    }

    /// The public key in standard padded base64.
    pub fn public_key_base64(&self) -> String {
        self.inner.node.identity.public_key_base64()
    }

    /// The address it listens on, `ip:port`.
    pub fn listen_addr(&self) -> String {
        self.inner.node.listen_addr.to_string()
    }

    /// Its enrollment token, `axon://<key>@<listen addr>`.
    pub fn token(&self) -> String {
        identity::token(self.public_key(), &self.listen_addr()).unwrap_or_default()
    }

    pub fn protocol(&self) -> Protocol {
        self.inner.node.protocol
    }

    /// Run `work` on the peer's runtime. Returns false, dropping `work`, once
    /// the peer is closed.
    pub fn spawn<F>(&self, work: F) -> bool
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let handle = self.inner.runtime.lock().ok().and_then(|h| h.clone());
        match handle {
            Some(h) if self.is_running() => {
                drop(h.spawn(work));
                true
            }
            _ => false,
        }
    }

    pub fn is_running(&self) -> bool {
        !self.inner.node.is_closed()
    }

    /// Pin a peer (or update its key and address); known peers with an
    /// address are dialed and kept connected (with v2, when this side has
    /// the lower agent id).
    pub fn add_peer(&self, info: PeerInfo) -> Result<(), PeerError> {
        self.inner.node.add_peer(info)
    }

    /// Forget a peer: its pin goes, its connections close. Whether it was known.
    pub fn remove_peer(&self, agent_id: &str) -> Result<bool, PeerError> {
        self.inner.node.remove_peer(agent_id)
    }

    /// The known peers, by agent id.
    pub fn peers(&self) -> Vec<PeerState> {
        self.inner.node.peers()
    }

    /// Answer requests through [`Inbound`] (on), or as upstream answers them
    /// without an application (off, the default).
    pub fn set_serving(&self, on: bool) {
        self.inner.node.set_serving(on);
    }

    /// Send a request and wait for its reply (`kind`: `request` for axon/1;
    /// `query`, `delegate`, `discover`, `ping` or `cancel` for v2). An
    /// `error` reply is [`PeerError::Remote`].
    pub fn request(
        &self,
        to: &str,
        kind: &str,
        payload: Map<String, Value>,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Result<Reply, PeerError>> + Send + 'static {
        let node = self.inner.node.clone();
        let (to, kind) = (to.to_owned(), kind.to_owned());
        async move { node.closing(node.clone().request(to, kind, payload, timeout)).await }
    }

    /// Send a message (`kind`: any but `request` for axon/1, `message` by
    /// default; `notify`, `result` or `error` for v2) with an optional `ref`;
    /// resolves to its id once it is written.
    pub fn send(
        &self,
        to: &str,
        kind: &str,
        payload: Map<String, Value>,
        ref_id: Option<String>,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Result<String, PeerError>> + Send + 'static {
        let node = self.inner.node.clone();
        let (to, kind) = (to.to_owned(), kind.to_owned());
        async move { node.closing(node.clone().send(to, kind, payload, ref_id, timeout)).await }
    }

    /// Close the peer: its connections close, operations in flight fail with
    /// [`PeerError::Closed`], and its thread ends before this returns (it
    /// blocks; call it off an event loop). Idempotent.
    pub fn close(&self) {
        self.inner.node.shut_down();
        drop(self.inner.runtime.lock().ok().and_then(|mut h| h.take()));
        let thread = self.inner.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(thread) = thread {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }

    /// Test hooks: raw streams and misbehaving replies, for the interop
    /// tests only.
    #[doc(hidden)]
    pub fn testing(&self) -> Testing {
        Testing { node: self.inner.node.clone() }
    }
}

/// What the interop tests need beyond the API: write raw bytes on a stream
/// of an established connection, and make served replies misbehave.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Testing {
    node: Arc<node::Node>,
}

impl Testing {
    /// Write `data` on a new stream to `to` (bidirectional: and read the
    /// reply, up to 1 MiB, within `timeout`).
    pub async fn raw(&self, to: &str, data: Vec<u8>, bidi: bool, timeout: Duration) -> Result<Vec<u8>, PeerError> {
        self.node.clone().raw(to.to_owned(), data, bidi, timeout).await
    }

    /// The stable id of the connection used to send to `to`, if any.
    pub fn connection_id(&self, to: &str) -> Option<usize> {
        self.node.lock().get_mut(to).and_then(|e| e.connection()).map(|c| c.stable_id())
    }

    /// Answer requests with a reply whose `ref` is wrong (on) or right.
    pub fn set_wrong_ref(&self, on: bool) {
        self.node.wrong_ref.store(on, std::sync::atomic::Ordering::Relaxed);
    }
}
