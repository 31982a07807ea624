//! A Kameo peer (cargo feature `peer`): a libp2p node that registers, looks
//! up, asks and tells real Kameo actors, for programs that are not Rust
//! actors themselves (the Python and Node bindings).
//!
//! It is composed as kameo 0.22.2 composes its swarm
//! (`kameo::remote::bootstrap_on`): TCP + noise + yamux and QUIC; kameo's own
//! registry behaviour (`kameo::remote::registry::Behaviour`: Kademlia on
//! `/kameo/registry/1.0.0`, provider key = the name, metadata record
//! `{name}:meta:{peer id}`, kameo's record filtering); and libp2p's
//! request-response cbor codec on `/kameo/messaging/1.0.0` with kameo's own
//! `SwarmRequest`/`SwarmResponse` types and size limits, so what goes on the
//! wire is what kameo writes, by construction. mDNS is optional (off by
//! default).
//!
//! The peer runs on a tokio runtime it owns, on a thread of its own. Its
//! methods hand back futures that need no runtime to be awaited (they wait
//! on channels), so the bindings can drive them from asyncio or Node.
//!
//! Actors the owner registers are served through [`InboundRequest`]s: the
//! owner answers each ask with the MessagePack reply or a
//! [`RemoteSendError`] (a `HandlerError` holding the MessagePack error
//! value). The peer itself answers what kameo's would without a handler:
//! `ActorNotRunning` for an actor id it does not host, `BadActorType` when
//! the actor's remote id differs, `ReplyTimeout` when the caller's reply
//! timeout passes, `ActorStopped` when the owner drops a request unanswered.
//! Links (`Link`, `Unlink`, `SignalLinkDied`) are not supported: they are
//! answered with `ActorNotRunning`.

use std::{
    borrow::Cow,
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{future::BoxFuture, stream::FuturesUnordered, FutureExt, StreamExt};
use kameo::remote::{
    messaging::{self, SwarmRequest, SwarmResponse},
    registry,
};
use libp2p::{
    identity, kad, mdns, noise,
    request_response::{self, ProtocolSupport},
    swarm::{behaviour::toggle::Toggle, dial_opts::DialOpts, ConnectionId, NetworkBehaviour, SwarmEvent},
    tcp, yamux, Multiaddr, PeerId as P2pPeerId, StreamProtocol, Swarm, SwarmBuilder,
};
use tokio::sync::{mpsc, oneshot};

use super::{ids, model::RemoteSendError, MESSAGING_PROTOCOL};

type KameoActorId = kameo::actor::ActorId;
type KameoSendError<E> = kameo::error::RemoteSendError<E>;

/// How a [`Peer`] starts.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// 32 bytes from which the peer's Ed25519 identity is derived (the same
    /// seed gives the same peer id); a random identity when `None`.
    pub keypair_seed: Option<[u8; 32]>,
    /// Multiaddrs to listen on (`/ip4/127.0.0.1/tcp/0`,
    /// `/ip4/0.0.0.0/udp/0/quic-v1`, ...).
    pub listen: Vec<String>,
    /// Peers (multiaddrs ending in `/p2p/<peer id>`) to dial before `start`
    /// returns; their Kademlia tables are where lookups and registrations go.
    pub bootstrap: Vec<String>,
    /// Discover peers on the local network with mDNS, as kameo's
    /// `bootstrap()` does.
    pub mdns: bool,
    /// How long a request may wait for its response (kameo: 10 s). Past it,
    /// an ask or tell fails with `NetworkTimeout`.
    pub request_timeout: Duration,
    /// How long a dial may take before it fails with `DialFailure`.
    pub dial_timeout: Duration,
    /// How long an idle connection is kept open.
    pub idle_connection_timeout: Duration,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            keypair_seed: None,
            listen: vec!["/ip4/127.0.0.1/tcp/0".into()],
            bootstrap: Vec::new(),
            mdns: false,
            request_timeout: Duration::from_secs(10),
            dial_timeout: Duration::from_secs(10),
            idle_connection_timeout: Duration::from_secs(300),
        }
    }
}

/// Why a peer operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerError {
    /// An ask or tell failed as kameo's `RemoteSendError` says (a
    /// `HandlerError` holds the handler's MessagePack error value).
    Send(RemoteSendError<Vec<u8>>),
    /// An ask or tell failed with an I/O error on its stream (kameo's
    /// `RemoteSendError::Io`, which has no wire form).
    Io(String),
    /// A lookup or registration failed (kameo's `RegistryError`): `code` is
    /// `KAMEO_REGISTRY_TIMEOUT`, `KAMEO_REGISTRY_STORE`,
    /// `KAMEO_INVALID_REGISTRATION`, `KAMEO_NAME_ALREADY_REGISTERED`, ...
    Registry { code: &'static str, message: String },
    /// A dial failed or timed out.
    Dial(String),
    /// An argument was not valid (a malformed multiaddr, seed, ...).
    InvalidArgument(String),
    /// The node could not start (a listen address could not be bound, ...).
    Start(String),
    /// The node was closed before the operation finished.
    Closed,
}

impl PeerError {
    /// A stable code: `KAMEO_` and the `RemoteSendError` variant in upper
    /// snake case for send errors (`KAMEO_ACTOR_NOT_RUNNING`,
    /// `KAMEO_HANDLER_ERROR`, ...), else the kind's own.
    pub fn code(&self) -> &'static str {
        match self {
            PeerError::Send(e) => send_error_code(e),
            PeerError::Io(_) => "KAMEO_IO",
            PeerError::Registry { code, .. } => code,
            PeerError::Dial(_) => "KAMEO_DIAL_FAILURE",
            PeerError::InvalidArgument(_) => "KAMEO_INVALID_ARGUMENT",
            PeerError::Start(_) => "KAMEO_START_FAILED",
            PeerError::Closed => "KAMEO_NODE_CLOSED",
        }
    }
}

impl std::fmt::Display for PeerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerError::Send(RemoteSendError::HandlerError(_)) => f.write_str("the actor's handler returned an error"),
            PeerError::Send(RemoteSendError::UnknownActor { actor_remote_id }) => {
                write!(f, "unknown actor type {actor_remote_id:?}")
            }
            PeerError::Send(RemoteSendError::UnknownMessage { actor_remote_id, message_remote_id }) => {
                write!(f, "actor type {actor_remote_id:?} has no message {message_remote_id:?}")
            }
            PeerError::Send(e) => f.write_str(match e {
                RemoteSendError::ActorNotRunning => "the actor is not running",
                RemoteSendError::ActorStopped => "the actor stopped before it replied",
                RemoteSendError::BadActorType => "the actor is not of the expected type",
                RemoteSendError::MailboxFull => "the actor's mailbox is full",
                RemoteSendError::ReplyTimeout => "the actor did not reply within the reply timeout",
                RemoteSendError::SwarmNotBootstrapped => "the remote swarm is not bootstrapped",
                RemoteSendError::DialFailure => "the peer could not be dialed",
                RemoteSendError::NetworkTimeout => "the request timed out",
                RemoteSendError::ConnectionClosed => "the connection closed before the response came",
                RemoteSendError::UnsupportedProtocols => "the peer does not speak /kameo/messaging/1.0.0",
                RemoteSendError::SerializeMessage(m)
                | RemoteSendError::DeserializeMessage(m)
                | RemoteSendError::SerializeReply(m)
                | RemoteSendError::SerializeHandlerError(m)
                | RemoteSendError::DeserializeHandlerError(m) => m,
                _ => e.variant_name(),
            }),
            PeerError::Io(m) => write!(f, "i/o error on the request stream: {m}"),
            PeerError::Registry { message, .. } => f.write_str(message),
            PeerError::Dial(m) => write!(f, "dial failed: {m}"),
            PeerError::InvalidArgument(m) => f.write_str(m),
            PeerError::Start(m) => write!(f, "the node could not start: {m}"),
            PeerError::Closed => f.write_str("the node is closed"),
        }
    }
}

impl std::error::Error for PeerError {}

/// The error a program's handler answers with, by `RemoteSendError`
/// variant name (the bindings' `fail(variant, payload, message)`):
/// `HandlerError` holds `payload` (MessagePack), the variants that hold text
/// hold `message`, `UnknownActor`/`UnknownMessage` name the request's ids;
/// `None` for a name that is no variant.
pub fn send_error_from_variant(
    variant: &str,
    payload: Option<Vec<u8>>,
    message: Option<String>,
    request: &InboundRequest,
) -> Option<RemoteSendError<Vec<u8>>> {
    let message = message.unwrap_or_default();
    Some(match variant {
        "HandlerError" => RemoteSendError::HandlerError(payload.unwrap_or_default()),
        "UnknownMessage" => RemoteSendError::UnknownMessage {
            actor_remote_id: request.actor_remote_id.clone(),
            message_remote_id: request.message_remote_id.clone(),
        },
        "UnknownActor" => RemoteSendError::UnknownActor { actor_remote_id: request.actor_remote_id.clone() },
        "SerializeMessage" => RemoteSendError::SerializeMessage(message),
        "DeserializeMessage" => RemoteSendError::DeserializeMessage(message),
        "SerializeReply" => RemoteSendError::SerializeReply(message),
        "SerializeHandlerError" => RemoteSendError::SerializeHandlerError(message),
        "DeserializeHandlerError" => RemoteSendError::DeserializeHandlerError(message),
        other => return RemoteSendError::unit_from_name(other),
    })
}

/// `KAMEO_` + the variant name in upper snake case.
pub fn send_error_code<E>(e: &RemoteSendError<E>) -> &'static str {
    match e {
        RemoteSendError::ActorNotRunning => "KAMEO_ACTOR_NOT_RUNNING",
        RemoteSendError::ActorStopped => "KAMEO_ACTOR_STOPPED",
        RemoteSendError::UnknownActor { .. } => "KAMEO_UNKNOWN_ACTOR",
        RemoteSendError::UnknownMessage { .. } => "KAMEO_UNKNOWN_MESSAGE",
        RemoteSendError::BadActorType => "KAMEO_BAD_ACTOR_TYPE",
        RemoteSendError::MailboxFull => "KAMEO_MAILBOX_FULL",
        RemoteSendError::ReplyTimeout => "KAMEO_REPLY_TIMEOUT",
        RemoteSendError::HandlerError(_) => "KAMEO_HANDLER_ERROR",
        RemoteSendError::SerializeMessage(_) => "KAMEO_SERIALIZE_MESSAGE",
        RemoteSendError::DeserializeMessage(_) => "KAMEO_DESERIALIZE_MESSAGE",
        RemoteSendError::SerializeReply(_) => "KAMEO_SERIALIZE_REPLY",
        RemoteSendError::SerializeHandlerError(_) => "KAMEO_SERIALIZE_HANDLER_ERROR",
        RemoteSendError::DeserializeHandlerError(_) => "KAMEO_DESERIALIZE_HANDLER_ERROR",
        RemoteSendError::SwarmNotBootstrapped => "KAMEO_SWARM_NOT_BOOTSTRAPPED",
        RemoteSendError::DialFailure => "KAMEO_DIAL_FAILURE",
        RemoteSendError::NetworkTimeout => "KAMEO_NETWORK_TIMEOUT",
        RemoteSendError::ConnectionClosed => "KAMEO_CONNECTION_CLOSED",
        RemoteSendError::UnsupportedProtocols => "KAMEO_UNSUPPORTED_PROTOCOLS",
    }
}

fn from_kameo<E, F>(e: KameoSendError<E>, handler: impl FnOnce(E) -> F) -> Result<RemoteSendError<F>, String> {
    Ok(match e {
        KameoSendError::ActorNotRunning => RemoteSendError::ActorNotRunning,
        KameoSendError::ActorStopped => RemoteSendError::ActorStopped,
        KameoSendError::UnknownActor { actor_remote_id } => RemoteSendError::UnknownActor { actor_remote_id: actor_remote_id.into_owned() },
        KameoSendError::UnknownMessage { actor_remote_id, message_remote_id } => RemoteSendError::UnknownMessage {
            actor_remote_id: actor_remote_id.into_owned(),
            message_remote_id: message_remote_id.into_owned(),
        },
        KameoSendError::BadActorType => RemoteSendError::BadActorType,
        KameoSendError::MailboxFull => RemoteSendError::MailboxFull,
        KameoSendError::ReplyTimeout => RemoteSendError::ReplyTimeout,
        KameoSendError::HandlerError(e) => RemoteSendError::HandlerError(handler(e)),
        KameoSendError::SerializeMessage(m) => RemoteSendError::SerializeMessage(m),
        KameoSendError::DeserializeMessage(m) => RemoteSendError::DeserializeMessage(m),
        KameoSendError::SerializeReply(m) => RemoteSendError::SerializeReply(m),
        KameoSendError::SerializeHandlerError(m) => RemoteSendError::SerializeHandlerError(m),
        KameoSendError::DeserializeHandlerError(m) => RemoteSendError::DeserializeHandlerError(m),
        KameoSendError::SwarmNotBootstrapped => RemoteSendError::SwarmNotBootstrapped,
        KameoSendError::DialFailure => RemoteSendError::DialFailure,
        KameoSendError::NetworkTimeout => RemoteSendError::NetworkTimeout,
        KameoSendError::ConnectionClosed => RemoteSendError::ConnectionClosed,
        KameoSendError::UnsupportedProtocols => RemoteSendError::UnsupportedProtocols,
        KameoSendError::Io(e) => return Err(e.map_or_else(|| "unknown".to_owned(), |e| e.to_string())),
    })
}

fn peer_error<E>(e: KameoSendError<E>, handler: impl FnOnce(E) -> Vec<u8>) -> PeerError {
    match from_kameo(e, handler) {
        Ok(e) => PeerError::Send(e),
        Err(m) => PeerError::Io(m),
    }
}

/// Our error as kameo's, with `handler` turning a handler error into the
/// response's error type.
fn to_kameo_with<E>(e: RemoteSendError<Vec<u8>>, handler: impl FnOnce(Vec<u8>) -> KameoSendError<E>) -> KameoSendError<E> {
    match e {
        RemoteSendError::ActorNotRunning => KameoSendError::ActorNotRunning,
        RemoteSendError::ActorStopped => KameoSendError::ActorStopped,
        RemoteSendError::UnknownActor { actor_remote_id } => KameoSendError::UnknownActor { actor_remote_id: Cow::Owned(actor_remote_id) },
        RemoteSendError::UnknownMessage { actor_remote_id, message_remote_id } => KameoSendError::UnknownMessage {
            actor_remote_id: Cow::Owned(actor_remote_id),
            message_remote_id: Cow::Owned(message_remote_id),
        },
        RemoteSendError::BadActorType => KameoSendError::BadActorType,
        RemoteSendError::MailboxFull => KameoSendError::MailboxFull,
        RemoteSendError::ReplyTimeout => KameoSendError::ReplyTimeout,
        RemoteSendError::HandlerError(e) => handler(e),
        RemoteSendError::SerializeMessage(m) => KameoSendError::SerializeMessage(m),
        RemoteSendError::DeserializeMessage(m) => KameoSendError::DeserializeMessage(m),
        RemoteSendError::SerializeReply(m) => KameoSendError::SerializeReply(m),
        RemoteSendError::SerializeHandlerError(m) => KameoSendError::SerializeHandlerError(m),
        RemoteSendError::DeserializeHandlerError(m) => KameoSendError::DeserializeHandlerError(m),
        RemoteSendError::SwarmNotBootstrapped => KameoSendError::SwarmNotBootstrapped,
        RemoteSendError::DialFailure => KameoSendError::DialFailure,
        RemoteSendError::NetworkTimeout => KameoSendError::NetworkTimeout,
        RemoteSendError::ConnectionClosed => KameoSendError::ConnectionClosed,
        RemoteSendError::UnsupportedProtocols => KameoSendError::UnsupportedProtocols,
    }
}

fn to_kameo(e: RemoteSendError<Vec<u8>>) -> KameoSendError<Vec<u8>> {
    to_kameo_with(e, KameoSendError::HandlerError)
}

/// The form of an error in a tell's response, which carries no handler
/// error: the peer only ever builds `ActorNotRunning` and `BadActorType`
/// here, and a handler error (impossible) would read as `ActorStopped`.
fn to_kameo_unit(e: RemoteSendError<Vec<u8>>) -> kameo::error::RemoteSendError {
    to_kameo_with(e, |_| KameoSendError::ActorStopped)
}

fn registry_error(e: &kameo::error::RegistryError) -> PeerError {
    use kameo::error::RegistryError as R;
    let code = match e {
        R::SwarmNotBootstrapped => "KAMEO_SWARM_NOT_BOOTSTRAPPED",
        R::BadActorType => "KAMEO_BAD_ACTOR_TYPE",
        R::NameAlreadyRegistered => "KAMEO_NAME_ALREADY_REGISTERED",
        R::QuorumFailed { .. } => "KAMEO_REGISTRY_QUORUM_FAILED",
        R::Timeout => "KAMEO_REGISTRY_TIMEOUT",
        R::Store(_) => "KAMEO_REGISTRY_STORE",
        R::InvalidActorRegistration(_) => "KAMEO_INVALID_REGISTRATION",
        R::GetProviders(_) => "KAMEO_REGISTRY_GET_PROVIDERS",
    };
    PeerError::Registry { code, message: e.to_string() }
}

/// An actor found by a lookup (or registered by this peer): where it is
/// and what type it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteActor {
    actor_id: KameoActorId,
    remote_id: String,
}

impl RemoteActor {
    /// Its id: sequence id and peer id, as kameo writes it.
    pub fn actor_id(&self) -> ids::ActorId {
        // kameo's `to_bytes` writes what `ids::ActorId::from_bytes` reads
        // (the parity tests prove the two layouts equal).
        ids::ActorId::from_bytes(&self.actor_id.to_bytes()).unwrap_or(ids::ActorId::new(self.actor_id.sequence_id(), None))
    }

    /// The actor type's remote id (`RemoteActor::REMOTE_ID`).
    pub fn remote_id(&self) -> &str {
        &self.remote_id
    }

    /// The peer hosting it, in base58.
    pub fn peer_id(&self) -> Option<String> {
        self.actor_id.peer_id().map(|p| p.to_base58())
    }

    /// A reference to an actor known by id (e.g. from a previous lookup).
    pub fn new(actor_id: &ids::ActorId, remote_id: impl Into<String>) -> Result<RemoteActor, PeerError> {
        let actor_id =
            KameoActorId::from_bytes(&actor_id.to_bytes()).map_err(|e| PeerError::InvalidArgument(format!("not an actor id: {e}")))?;
        Ok(RemoteActor { actor_id, remote_id: remote_id.into() })
    }
}

/// Options of an ask or a tell, as kameo's `RemoteAskRequest` has them.
#[derive(Debug, Clone, Copy, Default)]
pub struct SendOptions {
    /// How long the remote side may wait for room in the actor's mailbox.
    pub mailbox_timeout: Option<Duration>,
    /// How long the remote side waits for the actor's reply (asks only);
    /// past it the ask fails with `ReplyTimeout`.
    pub reply_timeout: Option<Duration>,
    /// `try_send` on the remote side: fail with `MailboxFull` rather than wait.
    pub immediate: bool,
}

/// An ask's answer: the MessagePack reply, or why there is none.
pub type AskResult = Result<Vec<u8>, RemoteSendError<Vec<u8>>>;

/// An ask or tell that arrived for an actor this peer registered.
#[derive(Debug)]
pub struct InboundRequest {
    /// The registered name of the actor it is for.
    pub name: String,
    /// The actor's sequence id (as [`Peer::register`] returned it).
    pub actor_sequence_id: u64,
    pub actor_remote_id: String,
    pub message_remote_id: String,
    /// The message, MessagePack (`rmp_serde::to_vec_named`).
    pub payload: Vec<u8>,
    pub mailbox_timeout: Option<Duration>,
    pub reply_timeout: Option<Duration>,
    pub immediate: bool,
    /// `None` for a tell (kameo answers a tell once the message is
    /// delivered, before it is handled).
    reply: Option<oneshot::Sender<AskResult>>,
}

impl InboundRequest {
    /// Whether this is an ask (it expects a reply) rather than a tell.
    pub fn is_ask(&self) -> bool {
        self.reply.is_some()
    }

    /// Answer an ask: the MessagePack reply, or why there is none (a
    /// `HandlerError` with the MessagePack error value for a handler that
    /// failed). Does nothing for a tell, or when the caller is gone.
    pub fn respond(self, result: AskResult) {
        if let Some(tx) = self.reply {
            let _ = tx.send(result);
        }
    }
}

/// The asks and tells for this peer's registered actors, in arrival order.
pub type Inbound = mpsc::UnboundedReceiver<InboundRequest>;

enum Command {
    Dial(Multiaddr, oneshot::Sender<Result<(), PeerError>>),
    DialTimedOut(ConnectionId),
    Lookup(String, mpsc::UnboundedSender<Result<RemoteActor, PeerError>>),
    Register {
        name: String,
        remote_id: String,
        reply: oneshot::Sender<Result<RemoteActor, PeerError>>,
    },
    Unregister(String, oneshot::Sender<bool>),
    Ask {
        target: RemoteActor,
        message_remote_id: String,
        payload: Vec<u8>,
        options: SendOptions,
        reply: oneshot::Sender<Result<Vec<u8>, PeerError>>,
    },
    Tell {
        target: RemoteActor,
        message_remote_id: String,
        payload: Vec<u8>,
        options: SendOptions,
        reply: oneshot::Sender<Result<(), PeerError>>,
    },
    Close,
}

#[derive(NetworkBehaviour)]
#[behaviour(prelude = "libp2p::swarm::derive_prelude")]
struct Behaviour {
    messaging: request_response::cbor::Behaviour<SwarmRequest, SwarmResponse>,
    registry: registry::Behaviour,
    mdns: Toggle<mdns::tokio::Behaviour>,
}

/// A running Kameo peer. Cloning gives another handle to the same node.
#[derive(Clone, Debug)]
pub struct Peer {
    inner: Arc<PeerInner>,
}

#[derive(Debug)]
struct PeerInner {
    commands: mpsc::UnboundedSender<Command>,
    peer_id: P2pPeerId,
    listen_addrs: Vec<Multiaddr>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Dropped by `close`: a handle keeps the runtime's I/O driver (its
    /// epoll and wake descriptors) open for as long as it lives.
    runtime: Mutex<Option<tokio::runtime::Handle>>,
}

impl Drop for PeerInner {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Close);
    }
}

impl Peer {
    /// Start a node: bind its listen addresses, dial the bootstrap peers,
    /// and return once it listens (blocking the calling thread meanwhile).
    /// The receiver yields the requests for the actors it registers.
    pub fn start(config: PeerConfig) -> Result<(Peer, Inbound), PeerError> {
        let listen = config
            .listen
            .iter()
            .map(|a| a.parse::<Multiaddr>().map_err(|e| PeerError::InvalidArgument(format!("listen address {a:?}: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let bootstrap = config
            .bootstrap
            .iter()
            .map(|a| a.parse::<Multiaddr>().map_err(|e| PeerError::InvalidArgument(format!("bootstrap address {a:?}: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let keypair = match config.keypair_seed {
            Some(seed) => {
                identity::Keypair::ed25519_from_bytes(seed).map_err(|e| PeerError::InvalidArgument(format!("keypair seed: {e}")))?
            }
            None => identity::Keypair::generate_ed25519(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| PeerError::Start(format!("tokio runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let self_tx = cmd_tx.clone();
        let thread = std::thread::Builder::new()
            .name("polywire-kameo-peer".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let mut node = match Node::build(keypair, &config, inbound_tx, self_tx) {
                        Ok(node) => node,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    match node.listen_and_bootstrap(listen, bootstrap, &config).await {
                        Ok(addrs) => {
                            let _ = ready_tx.send(Ok((*node.swarm.local_peer_id(), addrs)));
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    }
                    node.run(cmd_rx).await;
                });
            })
            .map_err(|e| PeerError::Start(format!("thread: {e}")))?;
        let (peer_id, listen_addrs) = match ready_rx.recv() {
            Ok(Ok(ready)) => ready,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => {
                let _ = thread.join();
                return Err(PeerError::Start("the node's thread ended".into()));
            }
        };
        let inner =
            PeerInner { commands: cmd_tx, peer_id, listen_addrs, thread: Mutex::new(Some(thread)), runtime: Mutex::new(Some(handle)) };
        Ok((Peer { inner: Arc::new(inner) }, inbound_rx))
    }

    /// The peer id, base58.
    pub fn peer_id(&self) -> String {
        self.inner.peer_id.to_base58()
    }

    /// The addresses it listens on, each ending in `/p2p/<peer id>`.
    pub fn listen_addrs(&self) -> Vec<String> {
        self.inner.listen_addrs.iter().map(|a| format!("{a}/p2p/{}", self.inner.peer_id)).collect()
    }

    /// Run `work` on the node's runtime (the bindings wait on operations
    /// there). Returns false, dropping `work`, once the node is closed.
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

    fn send(&self, cmd: Command) -> Result<(), PeerError> {
        self.inner.commands.send(cmd).map_err(|_| PeerError::Closed)
    }

    /// Dial a peer (a multiaddr, with `/p2p/<peer id>` or without).
    pub fn dial(&self, addr: &str) -> impl std::future::Future<Output = Result<(), PeerError>> + Send + 'static {
        let sent = addr.parse::<Multiaddr>().map_err(|e| PeerError::InvalidArgument(format!("address {addr:?}: {e}"))).and_then(|addr| {
            let (tx, rx) = oneshot::channel();
            self.send(Command::Dial(addr, tx)).map(|()| rx)
        });
        async move { sent?.await.map_err(|_| PeerError::Closed)? }
    }

    /// Every actor registered under `name`, as the DHT query finds them
    /// (kameo's `RemoteActorRef::lookup_all`); the stream ends when the
    /// query does.
    pub fn lookup_all(&self, name: &str) -> Lookup {
        let (tx, rx) = mpsc::unbounded_channel();
        let closed = self.send(Command::Lookup(name.to_owned(), tx)).is_err();
        Lookup { rx, closed }
    }

    /// The first actor registered under `name`, `None` when the query ends
    /// without one (kameo's `RemoteActorRef::lookup`).
    pub fn lookup(&self, name: &str) -> impl std::future::Future<Output = Result<Option<RemoteActor>, PeerError>> + Send + 'static {
        let mut all = self.lookup_all(name);
        async move { all.next().await.transpose() }
    }

    /// Register an actor of type `remote_id` under `name`, as kameo's
    /// `ActorRef::register` does: provide `name` in the DHT and put the
    /// `{name}:meta:{peer id}` record. Asks and tells for it arrive on the
    /// [`Inbound`] receiver. As in kameo, a registration that no other peer
    /// stored (a quorum failure: no peers yet) still counts.
    pub fn register(
        &self,
        name: &str,
        remote_id: &str,
    ) -> impl std::future::Future<Output = Result<RemoteActor, PeerError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let sent = self.send(Command::Register { name: name.to_owned(), remote_id: remote_id.to_owned(), reply: tx });
        async move {
            sent?;
            rx.await.map_err(|_| PeerError::Closed)?
        }
    }

    /// Stop providing `name` and remove its record (kameo's
    /// `remote::unregister`); requests for its actor then get
    /// `ActorNotRunning`. Resolves to whether the name was registered here.
    pub fn unregister(&self, name: &str) -> impl std::future::Future<Output = Result<bool, PeerError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let sent = self.send(Command::Unregister(name.to_owned(), tx));
        async move {
            sent?;
            rx.await.map_err(|_| PeerError::Closed)
        }
    }

    /// Ask `target` a message (MessagePack `payload`, as
    /// `rmp_serde::to_vec_named` writes it); resolves to the MessagePack reply.
    pub fn ask(
        &self,
        target: &RemoteActor,
        message_remote_id: &str,
        payload: Vec<u8>,
        options: SendOptions,
    ) -> impl std::future::Future<Output = Result<Vec<u8>, PeerError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let sent = self.send(Command::Ask {
            target: target.clone(),
            message_remote_id: message_remote_id.to_owned(),
            payload,
            options,
            reply: tx,
        });
        async move {
            sent?;
            rx.await.map_err(|_| PeerError::Closed)?
        }
    }

    /// Tell `target` a message; resolves once the remote side has it.
    pub fn tell(
        &self,
        target: &RemoteActor,
        message_remote_id: &str,
        payload: Vec<u8>,
        options: SendOptions,
    ) -> impl std::future::Future<Output = Result<(), PeerError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let sent = self.send(Command::Tell {
            target: target.clone(),
            message_remote_id: message_remote_id.to_owned(),
            payload,
            options,
            reply: tx,
        });
        async move {
            sent?;
            rx.await.map_err(|_| PeerError::Closed)?
        }
    }

    /// Close the node: its connections and listeners close, operations in
    /// flight fail with [`PeerError::Closed`], and its thread ends before
    /// this returns (it blocks; call it off an event loop). Idempotent.
    pub fn close(&self) {
        let _ = self.inner.commands.send(Command::Close);
        drop(self.inner.runtime.lock().ok().and_then(|mut h| h.take()));
        let thread = self.inner.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(thread) = thread {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }

    /// Whether the node is still running.
    pub fn is_running(&self) -> bool {
        !self.inner.commands.is_closed()
    }
}

/// The results of [`Peer::lookup_all`].
#[derive(Debug)]
pub struct Lookup {
    rx: mpsc::UnboundedReceiver<Result<RemoteActor, PeerError>>,
    closed: bool,
}

impl Lookup {
    /// The next actor found, `None` once the query has ended.
    pub async fn next(&mut self) -> Option<Result<RemoteActor, PeerError>> {
        if self.closed {
            self.closed = false;
            return Some(Err(PeerError::Closed));
        }
        self.rx.recv().await
    }
}

type Pending<T> = oneshot::Sender<Result<T, PeerError>>;

enum Outbound {
    Ask(Pending<Vec<u8>>),
    Tell(Pending<()>),
}

impl Outbound {
    fn fail(self, e: PeerError) {
        match self {
            Outbound::Ask(tx) => {
                let _ = tx.send(Err(e));
            }
            Outbound::Tell(tx) => {
                let _ = tx.send(Err(e));
            }
        }
    }
}

struct LocalActor {
    name: String,
    remote_id: String,
}

/// The swarm and what is waiting on it; lives on the node's thread.
struct Node {
    swarm: Swarm<Behaviour>,
    inbound: mpsc::UnboundedSender<InboundRequest>,
    commands: mpsc::UnboundedSender<Command>,
    dial_timeout: Duration,
    actors: HashMap<u64, LocalActor>,
    names: HashMap<String, u64>,
    next_sequence_id: u64,
    dials: HashMap<ConnectionId, Pending<()>>,
    lookups: HashMap<kad::QueryId, mpsc::UnboundedSender<Result<RemoteActor, PeerError>>>,
    registrations: HashMap<kad::QueryId, (String, u64, Pending<RemoteActor>)>,
    /// Asks and tells to other peers, by key, until answered or timed out.
    replies: HashMap<u64, Outbound>,
    next_key: u64,
    /// Those sent: their key, peer and deadline.
    outbound: HashMap<request_response::OutboundRequestId, (u64, P2pPeerId, tokio::time::Instant)>,
    /// Per peer: how many are in flight, and those waiting for a stream.
    in_flight: HashMap<P2pPeerId, usize>,
    waiting: HashMap<P2pPeerId, VecDeque<(u64, SwarmRequest, tokio::time::Instant)>>,
    /// When each ask or tell times out, in the order they were made (all
    /// get the same `request_timeout`); a key no longer in `replies` was
    /// answered.
    deadlines: VecDeque<(tokio::time::Instant, u64)>,
    request_timeout: Duration,
    responses: FuturesUnordered<BoxFuture<'static, (request_response::ResponseChannel<SwarmResponse>, SwarmResponse)>>,
    local_replies: FuturesUnordered<BoxFuture<'static, ()>>,
}

/// Asks and tells in flight to one peer at most; the rest wait, in order,
/// for one to finish. libp2p's request-response handler serves at most
/// `max_concurrent_streams` streams per connection (100 in kameo's config),
/// its own requests and the peer's together: a request beyond them fails at
/// once ("max sub-streams reached"), and the peer drops inbound streams
/// beyond its own. (kameo itself sends them all: of 10,000 asks made at once
/// between two kameo 0.22.2 nodes, about half fail.)
const MAX_IN_FLIGHT_PER_PEER: usize = 64;
/// Asks and tells waiting for one peer at most; one more fails at once.
const MAX_WAITING_PER_PEER: usize = 1 << 16;
/// How often waiting and in-flight requests are checked for their deadline.
const DEADLINE_TICK: Duration = Duration::from_millis(50);

impl Node {
    fn build(
        keypair: identity::Keypair,
        config: &PeerConfig,
        inbound: mpsc::UnboundedSender<InboundRequest>,
        commands: mpsc::UnboundedSender<Command>,
    ) -> Result<Node, PeerError> {
        let start = |e: &dyn std::fmt::Display| PeerError::Start(e.to_string());
        let messaging_config = messaging::Config::default().with_request_timeout(config.request_timeout);
        let mdns_on = config.mdns;
        let swarm = SwarmBuilder::with_existing_identity(keypair)
            .with_tokio()
            .with_tcp(tcp::Config::default().nodelay(true), noise::Config::new, yamux::Config::default)
            .map_err(|e| start(&e))?
            .with_quic()
            .with_behaviour(|key| {
                let local = key.public().to_peer_id();
                let mdns = if mdns_on { Some(mdns::tokio::Behaviour::new(mdns::Config::default(), local)?) } else { None };
                Ok(Behaviour {
                    // kameo's messaging behaviour's codec and limits, from its
                    // own config (`messaging::Behaviour::new` does the same).
                    messaging: request_response::cbor::Behaviour::with_codec(
                        messaging_config.into(),
                        [(StreamProtocol::new(MESSAGING_PROTOCOL), ProtocolSupport::Full)],
                        messaging_config.into(),
                    ),
                    registry: registry::Behaviour::new(local),
                    mdns: Toggle::from(mdns),
                })
            })
            .map_err(|e| start(&e))?
            .with_swarm_config(|c| c.with_idle_connection_timeout(config.idle_connection_timeout))
            .build();
        Ok(Node {
            swarm,
            inbound,
            commands,
            dial_timeout: config.dial_timeout,
            actors: HashMap::new(),
            names: HashMap::new(),
            next_sequence_id: 0,
            dials: HashMap::new(),
            lookups: HashMap::new(),
            registrations: HashMap::new(),
            replies: HashMap::new(),
            next_key: 0,
            outbound: HashMap::new(),
            in_flight: HashMap::new(),
            waiting: HashMap::new(),
            deadlines: VecDeque::new(),
            request_timeout: config.request_timeout,
            responses: FuturesUnordered::new(),
            local_replies: FuturesUnordered::new(),
        })
    }

    async fn listen_and_bootstrap(
        &mut self,
        listen: Vec<Multiaddr>,
        bootstrap: Vec<Multiaddr>,
        config: &PeerConfig,
    ) -> Result<Vec<Multiaddr>, PeerError> {
        let mut listeners = HashMap::new();
        for addr in listen {
            let id = self.swarm.listen_on(addr.clone()).map_err(|e| PeerError::Start(format!("listen on {addr}: {e}")))?;
            listeners.insert(id, addr);
        }
        let mut addrs = Vec::new();
        let mut waiting_dials = HashMap::new();
        for addr in bootstrap {
            self.learn_address(&addr);
            let opts = DialOpts::from(addr.clone());
            let id = opts.connection_id();
            self.swarm.dial(opts).map_err(|e| PeerError::Dial(format!("{addr}: {e}")))?;
            waiting_dials.insert(id, addr);
        }
        let deadline = tokio::time::Instant::now() + config.dial_timeout.max(Duration::from_secs(1));
        while !listeners.is_empty() || !waiting_dials.is_empty() {
            let event = match tokio::time::timeout_at(deadline, self.swarm.select_next_some()).await {
                Ok(event) => event,
                Err(_) => {
                    return Err(match waiting_dials.values().next() {
                        Some(addr) => PeerError::Dial(format!("{addr}: timed out")),
                        None => PeerError::Start("no listen address was reported".into()),
                    })
                }
            };
            match event {
                SwarmEvent::NewListenAddr { listener_id, address } => {
                    if listeners.remove(&listener_id).is_some() || !addrs.contains(&address) {
                        // Advertised in provider records, so peers that
                        // learn of this node from the DHT can dial it back.
                        self.swarm.add_external_address(address.clone());
                        addrs.push(address);
                    }
                }
                SwarmEvent::ListenerError { listener_id, error } | SwarmEvent::ListenerClosed { listener_id, reason: Err(error), .. } => {
                    if let Some(addr) = listeners.remove(&listener_id) {
                        return Err(PeerError::Start(format!("listen on {addr}: {error}")));
                    }
                }
                SwarmEvent::ConnectionEstablished { connection_id, .. } => {
                    waiting_dials.remove(&connection_id);
                }
                SwarmEvent::OutgoingConnectionError { connection_id, error, .. } => {
                    if let Some(addr) = waiting_dials.remove(&connection_id) {
                        return Err(PeerError::Dial(format!("{addr}: {error}")));
                    }
                }
                other => self.on_event(other),
            }
        }
        Ok(addrs)
    }

    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        let mut tick = tokio::time::interval(DEADLINE_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(Command::Close) | None => break,
                    Some(cmd) => self.on_command(cmd),
                },
                _ = tick.tick(), if !self.deadlines.is_empty() => self.expire(),
                event = self.swarm.select_next_some() => self.on_event(event),
                Some((channel, response)) = self.responses.next(), if !self.responses.is_empty() => {
                    let _ = self.swarm.behaviour_mut().messaging.send_response(channel, response);
                }
                Some(()) = self.local_replies.next(), if !self.local_replies.is_empty() => {}
            }
        }
        // Dropping the node closes its listeners and connections; every
        // pending reply sender is dropped, so those waiting get `Closed`.
    }

    fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Dial(addr, reply) => {
                self.learn_address(&addr);
                let opts = DialOpts::from(addr);
                let id = opts.connection_id();
                match self.swarm.dial(opts) {
                    Ok(()) => {
                        self.dials.insert(id, reply);
                        let commands = self.commands.clone();
                        let timeout = self.dial_timeout;
                        tokio::spawn(async move {
                            tokio::time::sleep(timeout).await;
                            let _ = commands.send(Command::DialTimedOut(id));
                        });
                    }
                    Err(e) => {
                        let _ = reply.send(Err(PeerError::Dial(e.to_string())));
                    }
                }
            }
            Command::DialTimedOut(id) => {
                if let Some(reply) = self.dials.remove(&id) {
                    let _ = reply.send(Err(PeerError::Dial(format!("timed out after {:?}", self.dial_timeout))));
                }
            }
            Command::Lookup(name, reply) => {
                let id = self.swarm.behaviour_mut().registry.lookup(name);
                self.lookups.insert(id, reply);
            }
            Command::Register { name, remote_id, reply } => {
                if self.names.contains_key(&name) {
                    let _ = reply.send(Err(PeerError::Registry {
                        code: "KAMEO_NAME_ALREADY_REGISTERED",
                        message: format!("{name:?} is already registered by this node"),
                    }));
                    return;
                }
                let sequence_id = self.next_sequence_id;
                self.next_sequence_id += 1;
                let actor_id = KameoActorId::new_with_peer_id(sequence_id, *self.swarm.local_peer_id());
                let registration = registry::ActorRegistration::new(actor_id, Cow::Owned(remote_id.clone()));
                match self.swarm.behaviour_mut().registry.register(name.clone(), registration) {
                    Ok(query) => {
                        self.actors.insert(sequence_id, LocalActor { name: name.clone(), remote_id });
                        self.names.insert(name.clone(), sequence_id);
                        self.registrations.insert(query, (name, sequence_id, reply));
                    }
                    Err(e) => {
                        let _ = reply.send(Err(registry_error(&e.into())));
                    }
                }
            }
            Command::Unregister(name, reply) => {
                let known = match self.names.remove(&name) {
                    Some(seq) => {
                        self.actors.remove(&seq);
                        true
                    }
                    None => false,
                };
                self.swarm.behaviour_mut().registry.unregister(&name);
                let _ = reply.send(known);
            }
            Command::Ask { target, message_remote_id, payload, options, reply } => {
                let Some(peer) = target.actor_id.peer_id().copied() else {
                    let _ = reply.send(Err(PeerError::InvalidArgument("the actor id has no peer id".into())));
                    return;
                };
                if peer == *self.swarm.local_peer_id() {
                    // An actor of this node: served without the network.
                    let rx = self.deliver(&target.actor_id, &target.remote_id, message_remote_id, payload, options, true);
                    self.local_replies.push(
                        async move {
                            let result = match rx {
                                Err(e) => Err(PeerError::Send(e)),
                                Ok(None) => Err(PeerError::Send(RemoteSendError::ActorStopped)),
                                Ok(Some(fut)) => fut.await.map_err(PeerError::Send),
                            };
                            let _ = reply.send(result);
                        }
                        .boxed(),
                    );
                    return;
                }
                let request = SwarmRequest::Ask {
                    actor_id: target.actor_id,
                    actor_remote_id: Cow::Owned(target.remote_id),
                    message_remote_id: Cow::Owned(message_remote_id),
                    payload,
                    mailbox_timeout: options.mailbox_timeout,
                    reply_timeout: options.reply_timeout,
                    immediate: options.immediate,
                };
                self.send_request(peer, request, Outbound::Ask(reply));
            }
            Command::Tell { target, message_remote_id, payload, options, reply } => {
                let Some(peer) = target.actor_id.peer_id().copied() else {
                    let _ = reply.send(Err(PeerError::InvalidArgument("the actor id has no peer id".into())));
                    return;
                };
                if peer == *self.swarm.local_peer_id() {
                    let result = self
                        .deliver(&target.actor_id, &target.remote_id, message_remote_id, payload, options, false)
                        .map(|_| ())
                        .map_err(PeerError::Send);
                    let _ = reply.send(result);
                    return;
                }
                let request = SwarmRequest::Tell {
                    actor_id: target.actor_id,
                    actor_remote_id: Cow::Owned(target.remote_id),
                    message_remote_id: Cow::Owned(message_remote_id),
                    payload,
                    mailbox_timeout: options.mailbox_timeout,
                    immediate: options.immediate,
                };
                self.send_request(peer, request, Outbound::Tell(reply));
            }
            Command::Close => {}
        }
    }

    /// Send an ask or tell to `peer`, or have it wait for one in flight
    /// there to finish (see [`MAX_IN_FLIGHT_PER_PEER`]).
    fn send_request(&mut self, peer: P2pPeerId, request: SwarmRequest, reply: Outbound) {
        let waiting = self.waiting.entry(peer).or_default();
        if waiting.len() >= MAX_WAITING_PER_PEER {
            reply.fail(PeerError::Io(format!("{MAX_WAITING_PER_PEER} asks and tells are already waiting for peer {peer}")));
            return;
        }
        let key = self.next_key;
        self.next_key += 1;
        self.replies.insert(key, reply);
        let deadline = tokio::time::Instant::now() + self.request_timeout;
        self.deadlines.push_back((deadline, key));
        waiting.push_back((key, request, deadline));
        self.dispatch(peer);
    }

    /// Send what waits for `peer`, while fewer than the most are in flight.
    fn dispatch(&mut self, peer: P2pPeerId) {
        let Some(waiting) = self.waiting.get_mut(&peer) else { return };
        let in_flight = self.in_flight.entry(peer).or_default();
        let now = tokio::time::Instant::now();
        while *in_flight < MAX_IN_FLIGHT_PER_PEER {
            let Some((key, request, deadline)) = waiting.pop_front() else { break };
            // One that timed out while waiting is gone from `replies`, or
            // goes now (the tick that notices may not have come yet).
            if deadline <= now {
                if let Some(reply) = self.replies.remove(&key) {
                    reply.fail(PeerError::Send(RemoteSendError::NetworkTimeout));
                }
                continue;
            }
            if !self.replies.contains_key(&key) {
                continue;
            }
            let id = self.swarm.behaviour_mut().messaging.send_request(&peer, request);
            self.outbound.insert(id, (key, peer, deadline));
            *in_flight += 1;
        }
        if waiting.is_empty() {
            self.waiting.remove(&peer);
        }
        if self.in_flight.get(&peer) == Some(&0) {
            self.in_flight.remove(&peer);
        }
    }

    /// A sent request finished (answered, failed or timed out in libp2p): its
    /// reply, unless it timed out here first (or its time is up: then it
    /// fails with the timeout, whatever libp2p said); the next waiting one
    /// goes.
    fn finish_outbound(&mut self, request_id: request_response::OutboundRequestId) -> Option<Outbound> {
        let (key, peer, deadline) = self.outbound.remove(&request_id)?;
        if let Some(n) = self.in_flight.get_mut(&peer) {
            *n = n.saturating_sub(1);
        }
        let reply = self.replies.remove(&key);
        self.dispatch(peer);
        match reply {
            Some(reply) if deadline <= tokio::time::Instant::now() => {
                reply.fail(PeerError::Send(RemoteSendError::NetworkTimeout));
                None
            }
            reply => reply,
        }
    }

    /// Fail the asks and tells whose time is up, waiting or in flight (one
    /// in flight keeps its stream until libp2p is done with it).
    fn expire(&mut self) {
        let now = tokio::time::Instant::now();
        while let Some(&(deadline, key)) = self.deadlines.front() {
            if deadline > now {
                break;
            }
            self.deadlines.pop_front();
            if let Some(reply) = self.replies.remove(&key) {
                reply.fail(PeerError::Send(RemoteSendError::NetworkTimeout));
            }
        }
    }

    /// Hand an ask or tell to the owner. For an ask, the future resolves to
    /// the owner's answer (or `ReplyTimeout` once the caller's reply timeout
    /// has passed, or `ActorStopped` if the owner drops the request).
    #[allow(clippy::type_complexity)]
    fn deliver(
        &mut self,
        actor_id: &KameoActorId,
        actor_remote_id: &str,
        message_remote_id: String,
        payload: Vec<u8>,
        options: SendOptions,
        ask: bool,
    ) -> Result<Option<BoxFuture<'static, Result<Vec<u8>, RemoteSendError<Vec<u8>>>>>, RemoteSendError<Vec<u8>>> {
        let local = self.swarm.local_peer_id();
        if actor_id.peer_id().is_some_and(|p| p != local) {
            return Err(RemoteSendError::ActorNotRunning);
        }
        let sequence_id = actor_id.sequence_id();
        let Some(actor) = self.actors.get(&sequence_id) else {
            return Err(RemoteSendError::ActorNotRunning);
        };
        if actor.remote_id != actor_remote_id {
            return Err(RemoteSendError::BadActorType);
        }
        let (tx, rx) = if ask {
            let (tx, rx) = oneshot::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let request = InboundRequest {
            name: actor.name.clone(),
            actor_sequence_id: sequence_id,
            actor_remote_id: actor_remote_id.to_owned(),
            message_remote_id,
            payload,
            mailbox_timeout: options.mailbox_timeout,
            reply_timeout: options.reply_timeout,
            immediate: options.immediate,
            reply: tx,
        };
        if self.inbound.send(request).is_err() {
            return Err(RemoteSendError::ActorNotRunning);
        }
        Ok(rx.map(|rx| {
            let reply_timeout = options.reply_timeout;
            async move {
                let answer = async { rx.await.unwrap_or(Err(RemoteSendError::ActorStopped)) };
                match reply_timeout {
                    Some(t) => tokio::time::timeout(t, answer).await.unwrap_or(Err(RemoteSendError::ReplyTimeout)),
                    None => answer.await,
                }
            }
            .boxed()
        }))
    }

    /// Put a dialed peer's address (one ending in `/p2p/<peer id>`) in
    /// the Kademlia table, as kameo's bootstrap does for the peers mDNS
    /// finds: without it, the table stays empty until identify-like
    /// protocol confirmation, and lookups would ask nobody.
    fn learn_address(&mut self, addr: &Multiaddr) {
        let mut base = addr.clone();
        if let Some(libp2p::multiaddr::Protocol::P2p(peer)) = base.pop() {
            self.swarm.add_peer_address(peer, base);
        }
    }

    fn on_event(&mut self, event: SwarmEvent<BehaviourEvent>) {
        match event {
            SwarmEvent::Behaviour(BehaviourEvent::Messaging(ev)) => self.on_messaging(ev),
            SwarmEvent::Behaviour(BehaviourEvent::Registry(ev)) => self.on_registry(ev),
            SwarmEvent::Behaviour(BehaviourEvent::Mdns(mdns::Event::Discovered(list))) => {
                for (peer, addr) in list {
                    self.swarm.add_peer_address(peer, addr);
                }
            }
            SwarmEvent::ConnectionEstablished { connection_id, .. } => {
                if let Some(reply) = self.dials.remove(&connection_id) {
                    let _ = reply.send(Ok(()));
                }
            }
            SwarmEvent::OutgoingConnectionError { connection_id, error, .. } => {
                if let Some(reply) = self.dials.remove(&connection_id) {
                    let _ = reply.send(Err(PeerError::Dial(error.to_string())));
                }
            }
            _ => {}
        }
    }

    fn on_messaging(&mut self, ev: request_response::Event<SwarmRequest, SwarmResponse>) {
        match ev {
            request_response::Event::Message { message, .. } => match message {
                request_response::Message::Request { request, channel, .. } => self.on_request(request, channel),
                request_response::Message::Response { request_id, response } => {
                    let Some(pending) = self.finish_outbound(request_id) else { return };
                    match (pending, response) {
                        (Outbound::Ask(tx), SwarmResponse::Ask(result)) => {
                            let _ = tx.send(result.map_err(|e| peer_error(e, |v| v)));
                        }
                        (Outbound::Tell(tx), SwarmResponse::Tell(result)) => {
                            let _ = tx.send(result.map_err(|e| peer_error(e, |never| match never {})));
                        }
                        (Outbound::Ask(tx), SwarmResponse::OutboundFailure(e)) => {
                            let _ = tx.send(Err(peer_error(e, |never| match never {})));
                        }
                        (Outbound::Tell(tx), SwarmResponse::OutboundFailure(e)) => {
                            let _ = tx.send(Err(peer_error(e, |never| match never {})));
                        }
                        (Outbound::Ask(tx), _) => {
                            let _ = tx.send(Err(PeerError::Io("the peer answered an ask with another kind of response".into())));
                        }
                        (Outbound::Tell(tx), _) => {
                            let _ = tx.send(Err(PeerError::Io("the peer answered a tell with another kind of response".into())));
                        }
                    }
                }
            },
            request_response::Event::OutboundFailure { request_id, error, .. } => {
                let e: kameo::error::RemoteSendError = error.into();
                match self.finish_outbound(request_id) {
                    Some(Outbound::Ask(tx)) => {
                        let _ = tx.send(Err(peer_error(e, |never| match never {})));
                    }
                    Some(Outbound::Tell(tx)) => {
                        let _ = tx.send(Err(peer_error(e, |never| match never {})));
                    }
                    None => {}
                }
            }
            // A request that could not be read (malformed CBOR, too large)
            // is dropped, as kameo drops it; the node keeps serving.
            request_response::Event::InboundFailure { .. } | request_response::Event::ResponseSent { .. } => {}
        }
    }

    fn on_request(&mut self, request: SwarmRequest, channel: request_response::ResponseChannel<SwarmResponse>) {
        match request {
            SwarmRequest::Ask { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate } => {
                let options = SendOptions { mailbox_timeout, reply_timeout, immediate };
                match self.deliver(&actor_id, &actor_remote_id, message_remote_id.into_owned(), payload, options, true) {
                    Err(e) => self.respond_now(channel, SwarmResponse::Ask(Err(to_kameo(e)))),
                    Ok(None) => self.respond_now(channel, SwarmResponse::Ask(Err(KameoSendError::ActorStopped))),
                    Ok(Some(answer)) => {
                        self.responses.push(async move { (channel, SwarmResponse::Ask(answer.await.map_err(to_kameo))) }.boxed())
                    }
                }
            }
            SwarmRequest::Tell { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate } => {
                let options = SendOptions { mailbox_timeout, reply_timeout: None, immediate };
                let result = self
                    .deliver(&actor_id, &actor_remote_id, message_remote_id.into_owned(), payload, options, false)
                    .map(|_| ())
                    .map_err(to_kameo_unit);
                self.respond_now(channel, SwarmResponse::Tell(result));
            }
            SwarmRequest::Link { .. } => self.respond_now(channel, SwarmResponse::Link(Err(KameoSendError::ActorNotRunning))),
            SwarmRequest::Unlink { .. } => self.respond_now(channel, SwarmResponse::Unlink(Err(KameoSendError::ActorNotRunning))),
            SwarmRequest::SignalLinkDied { .. } => {
                self.respond_now(channel, SwarmResponse::SignalLinkDied(Err(KameoSendError::ActorNotRunning)))
            }
        }
    }

    fn respond_now(&mut self, channel: request_response::ResponseChannel<SwarmResponse>, response: SwarmResponse) {
        let _ = self.swarm.behaviour_mut().messaging.send_response(channel, response);
    }

    fn on_registry(&mut self, ev: registry::Event) {
        match ev {
            registry::Event::LookupProgressed { provider_query_id, result, .. } => {
                if let Some(tx) = self.lookups.get(&provider_query_id) {
                    let item = match result {
                        Ok(reg) => Ok(RemoteActor { actor_id: reg.actor_id, remote_id: reg.remote_id.into_owned() }),
                        Err(e) => Err(registry_error(&e)),
                    };
                    let _ = tx.send(item);
                }
            }
            registry::Event::LookupTimeout { provider_query_id } => {
                if let Some(tx) = self.lookups.get(&provider_query_id) {
                    let _ = tx.send(Err(registry_error(&kameo::error::RegistryError::Timeout)));
                }
            }
            registry::Event::LookupCompleted { provider_query_id } => {
                // Dropping the sender ends the caller's stream.
                self.lookups.remove(&provider_query_id);
            }
            registry::Event::RegisteredActor { provider_query_id, .. } => {
                if let Some((_, seq, tx)) = self.registrations.remove(&provider_query_id) {
                    let actor_id = KameoActorId::new_with_peer_id(seq, *self.swarm.local_peer_id());
                    let remote_id = self.actors.get(&seq).map(|a| a.remote_id.clone()).unwrap_or_default();
                    let _ = tx.send(Ok(RemoteActor { actor_id, remote_id }));
                }
            }
            registry::Event::RegistrationFailed { provider_query_id, error } => {
                if let Some((name, seq, tx)) = self.registrations.remove(&provider_query_id) {
                    if matches!(error, kameo::error::RegistryError::QuorumFailed { .. }) {
                        // kameo's `register` counts this as registered: the
                        // record is in this node's store, and peers that
                        // come later find it there.
                        let actor_id = KameoActorId::new_with_peer_id(seq, *self.swarm.local_peer_id());
                        let remote_id = self.actors.get(&seq).map(|a| a.remote_id.clone()).unwrap_or_default();
                        let _ = tx.send(Ok(RemoteActor { actor_id, remote_id }));
                    } else {
                        self.actors.remove(&seq);
                        self.names.remove(&name);
                        let _ = tx.send(Err(registry_error(&error)));
                    }
                }
            }
            _ => {}
        }
    }
}
