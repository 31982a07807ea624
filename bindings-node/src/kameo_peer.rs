//! The Kameo peer of the core (`polywire::kameo::peer`) for Node: every
//! operation returns a Promise, settled from the node's own thread through a
//! `JsDeferred`, so nothing blocks the event loop. The public API (`Node`,
//! `RemoteActorRef`, the error classes) is `bindings-node/lib/kameo.js`.
//!
//! A Promise is always settled: an operation the node drops unanswered (it
//! closed) resolves with a `KAMEO_NODE_CLOSED` outcome (the [`Settle`]
//! guard). Outcomes are plain objects ([`KameoPeerOutcome`]); kameo.js
//! turns error outcomes into its typed error classes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use polywire::kameo::model::RemoteSendError;
use polywire::kameo::peer::{self, Inbound, Lookup, Peer, PeerConfig, PeerError, RemoteActor, SendOptions};
use polywire::kameo::ActorId;

use crate::settle::Settle;

/// An actor found or registered.
#[napi(object)]
pub struct KameoPeerActor {
    /// `ActorId::to_bytes`.
    pub id_bytes: Buffer,
    /// Decimal (a u64).
    pub sequence_id: String,
    pub peer_id: Option<String>,
    pub remote_id: String,
}

/// Why an operation failed.
#[napi(object)]
pub struct KameoPeerError {
    pub code: String,
    pub message: String,
    /// The `RemoteSendError` variant name, for send errors.
    pub variant: Option<String>,
    /// A `HandlerError`'s MessagePack error value.
    pub payload: Option<Buffer>,
    pub actor_remote_id: Option<String>,
    pub message_remote_id: Option<String>,
}

/// What an operation gave: `kind` 0 ok (`bytes`, `flag` or `actor` as the
/// operation returns), 1 a lookup's next actor, 2 a lookup's end, 4 an error.
#[napi(object)]
pub struct KameoPeerOutcome {
    pub kind: u32,
    pub bytes: Option<Buffer>,
    pub flag: Option<bool>,
    pub actor: Option<KameoPeerActor>,
    pub error: Option<KameoPeerError>,
}

impl KameoPeerOutcome {
    fn ok() -> Self {
        KameoPeerOutcome { kind: 0, bytes: None, flag: None, actor: None, error: None }
    }
    fn bytes(b: Vec<u8>) -> Self {
        KameoPeerOutcome { bytes: Some(b.into()), ..Self::ok() }
    }
    fn flag(f: bool) -> Self {
        KameoPeerOutcome { flag: Some(f), ..Self::ok() }
    }
    fn actor(kind: u32, a: &RemoteActor) -> Self {
        let id = a.actor_id();
        KameoPeerOutcome {
            kind,
            actor: Some(KameoPeerActor {
                id_bytes: id.to_bytes().into(),
                sequence_id: id.sequence_id.to_string(),
                peer_id: a.peer_id(),
                remote_id: a.remote_id().to_owned(),
            }),
            ..Self::ok()
        }
    }
    fn end() -> Self {
        KameoPeerOutcome { kind: 2, ..Self::ok() }
    }
    fn error(e: &PeerError) -> Self {
        let (variant, payload, actor_remote_id, message_remote_id) = match e {
            PeerError::Send(s) => {
                let payload = match s {
                    RemoteSendError::HandlerError(b) => Some(Buffer::from(b.clone())),
                    _ => None,
                };
                let (a, m) = match s {
                    RemoteSendError::UnknownActor { actor_remote_id } => (Some(actor_remote_id.clone()), None),
                    RemoteSendError::UnknownMessage { actor_remote_id, message_remote_id } => {
                        (Some(actor_remote_id.clone()), Some(message_remote_id.clone()))
                    }
                    _ => (None, None),
                };
                (Some(s.variant_name().to_owned()), payload, a, m)
            }
            PeerError::Io(_) => (Some("Io".to_owned()), None, None, None),
            PeerError::Dial(_) => (Some("DialFailure".to_owned()), None, None, None),
            _ => (None, None, None, None),
        };
        KameoPeerOutcome {
            kind: 4,
            error: Some(KameoPeerError {
                code: e.code().to_owned(),
                message: e.to_string(),
                variant,
                payload,
                actor_remote_id,
                message_remote_id,
            }),
            ..Self::ok()
        }
    }
    fn closed() -> Self {
        Self::error(&PeerError::Closed)
    }
    fn from_result<T>(r: std::result::Result<T, PeerError>, ok: impl FnOnce(T) -> Self) -> Self {
        match r {
            Ok(v) => ok(v),
            Err(e) => Self::error(&e),
        }
    }
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

fn seconds(name: &str, v: Option<f64>) -> Result<Option<Duration>> {
    v.map(|s| {
        Duration::try_from_secs_f64(s).map_err(|_| invalid(format!("{name} must be a finite, non-negative number of seconds, got {s}")))
    })
    .transpose()
}

/// Start a node on a thread of its own; the Promise resolves with it, or
/// with an error outcome (the node could not start).
#[napi(js_name = "kameoPeerStart")]
pub fn start(
    env: &Env,
    keypair_seed: Option<Buffer>,
    listen: Vec<String>,
    bootstrap: Vec<String>,
    mdns: bool,
    request_timeout: f64,
    dial_timeout: f64,
) -> Result<Object<'_>> {
    let keypair_seed = match keypair_seed {
        None => None,
        Some(s) => Some(<[u8; 32]>::try_from(&s[..]).map_err(|_| invalid(format!("keypairSeed must be 32 bytes, got {}", s.len())))?),
    };
    let config = PeerConfig {
        keypair_seed,
        listen,
        bootstrap,
        mdns,
        request_timeout: seconds("requestTimeout", Some(request_timeout))?.unwrap_or_default(),
        dial_timeout: seconds("dialTimeout", Some(dial_timeout))?.unwrap_or_default(),
        ..PeerConfig::default()
    };
    let (settle, promise) = Settle::<Started>::new(env, || Started::Failed(KameoPeerOutcome::closed()))?;
    std::thread::Builder::new()
        .name("polywire-kameo-start".into())
        .spawn(move || {
            settle.done(match Peer::start(config) {
                Ok((peer, inbound)) => Started::Node(KameoPeerNode { peer, inbound: Arc::new(tokio::sync::Mutex::new(inbound)) }),
                Err(e) => Started::Failed(KameoPeerOutcome::error(&e)),
            })
        })
        .map_err(|e| Error::from_reason(format!("could not start a thread: {e}")))?;
    Ok(promise)
}

/// The node, or why it did not start.
pub enum Started {
    Node(KameoPeerNode),
    Failed(KameoPeerOutcome),
}

impl ToNapiValue for Started {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        match val {
            Started::Node(n) => unsafe { KameoPeerNode::to_napi_value(env, n) },
            Started::Failed(o) => unsafe { KameoPeerOutcome::to_napi_value(env, o) },
        }
    }
}

/// A running node (see kameo.js `Node`).
#[napi]
pub struct KameoPeerNode {
    peer: Peer,
    inbound: Arc<tokio::sync::Mutex<Inbound>>,
}

impl KameoPeerNode {
    /// Settle `settle` with what `work` gives, on the node's runtime; a
    /// closed node settles it with `KAMEO_NODE_CLOSED` (the task is dropped).
    fn run<T, F>(&self, settle: Settle<T>, work: F)
    where
        T: ToNapiValue + Send + 'static,
        F: std::future::Future<Output = T> + Send + 'static,
    {
        // A closed node drops the work, and with it `settle`.
        self.peer.spawn(async move { settle.done(work.await) });
    }
}

#[napi]
impl KameoPeerNode {
    #[napi(getter)]
    pub fn peer_id(&self) -> String {
        self.peer.peer_id()
    }

    #[napi(getter)]
    pub fn listen_addrs(&self) -> Vec<String> {
        self.peer.listen_addrs()
    }

    #[napi(getter)]
    pub fn running(&self) -> bool {
        self.peer.is_running()
    }

    #[napi]
    pub fn dial<'e>(&self, env: &'e Env, addr: String) -> Result<Object<'e>> {
        let (settle, promise) = Settle::new(env, KameoPeerOutcome::closed)?;
        let fut = self.peer.dial(&addr);
        self.run(settle, async move { KameoPeerOutcome::from_result(fut.await, |()| KameoPeerOutcome::ok()) });
        Ok(promise)
    }

    /// A lookup in progress: its `next()` gives the actors one by one.
    #[napi]
    pub fn lookup(&self, name: String) -> KameoPeerLookup {
        KameoPeerLookup { lookup: Arc::new(tokio::sync::Mutex::new(self.peer.lookup_all(&name))), peer: self.peer.clone() }
    }

    #[napi]
    pub fn register<'e>(&self, env: &'e Env, name: String, remote_id: String) -> Result<Object<'e>> {
        let (settle, promise) = Settle::new(env, KameoPeerOutcome::closed)?;
        let fut = self.peer.register(&name, &remote_id);
        self.run(settle, async move { KameoPeerOutcome::from_result(fut.await, |a| KameoPeerOutcome::actor(0, &a)) });
        Ok(promise)
    }

    #[napi]
    pub fn unregister<'e>(&self, env: &'e Env, name: String) -> Result<Object<'e>> {
        let (settle, promise) = Settle::new(env, KameoPeerOutcome::closed)?;
        let fut = self.peer.unregister(&name);
        self.run(settle, async move { KameoPeerOutcome::from_result(fut.await, KameoPeerOutcome::flag) });
        Ok(promise)
    }

    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn ask<'e>(
        &self,
        env: &'e Env,
        id_bytes: Buffer,
        remote_id: String,
        message_remote_id: String,
        payload: Buffer,
        mailbox_timeout: Option<f64>,
        reply_timeout: Option<f64>,
        immediate: bool,
    ) -> Result<Object<'e>> {
        let target = target(&id_bytes, remote_id)?;
        let options = SendOptions {
            mailbox_timeout: seconds("mailboxTimeout", mailbox_timeout)?,
            reply_timeout: seconds("replyTimeout", reply_timeout)?,
            immediate,
        };
        let (settle, promise) = Settle::new(env, KameoPeerOutcome::closed)?;
        let fut = self.peer.ask(&target, &message_remote_id, payload.to_vec(), options);
        self.run(settle, async move { KameoPeerOutcome::from_result(fut.await, KameoPeerOutcome::bytes) });
        Ok(promise)
    }

    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn tell<'e>(
        &self,
        env: &'e Env,
        id_bytes: Buffer,
        remote_id: String,
        message_remote_id: String,
        payload: Buffer,
        mailbox_timeout: Option<f64>,
        immediate: bool,
    ) -> Result<Object<'e>> {
        let target = target(&id_bytes, remote_id)?;
        let options = SendOptions { mailbox_timeout: seconds("mailboxTimeout", mailbox_timeout)?, reply_timeout: None, immediate };
        let (settle, promise) = Settle::new(env, KameoPeerOutcome::closed)?;
        let fut = self.peer.tell(&target, &message_remote_id, payload.to_vec(), options);
        self.run(settle, async move { KameoPeerOutcome::from_result(fut.await, |()| KameoPeerOutcome::ok()) });
        Ok(promise)
    }

    /// The next ask or tell for a registered actor; `null` once the node is
    /// closed.
    #[napi]
    pub fn next_inbound<'e>(&self, env: &'e Env) -> Result<Object<'e>> {
        let (settle, promise) = Settle::<Option<KameoInboundRequest>>::new(env, || None)?;
        let inbound = self.inbound.clone();
        self.run(settle, async move { inbound.lock().await.recv().await.map(KameoInboundRequest::new) });
        Ok(promise)
    }

    /// Close the node (on a thread, so the event loop is not blocked);
    /// operations in flight settle with `KAMEO_NODE_CLOSED`.
    #[napi]
    pub fn close<'e>(&self, env: &'e Env) -> Result<Object<'e>> {
        let (settle, promise) = Settle::new(env, KameoPeerOutcome::ok)?;
        let peer = self.peer.clone();
        std::thread::Builder::new()
            .name("polywire-kameo-close".into())
            .spawn(move || {
                peer.close();
                settle.done(KameoPeerOutcome::ok());
            })
            .map_err(|e| Error::from_reason(format!("could not start a thread: {e}")))?;
        Ok(promise)
    }
}

fn target(id_bytes: &[u8], remote_id: String) -> Result<RemoteActor> {
    let id = ActorId::from_bytes(id_bytes).map_err(|e| invalid(format!("actor id: {}", e.message())))?;
    RemoteActor::new(&id, remote_id).map_err(|e| invalid(e.to_string()))
}

/// The actors a lookup finds, one `next()` at a time.
#[napi]
pub struct KameoPeerLookup {
    lookup: Arc<tokio::sync::Mutex<Lookup>>,
    peer: Peer,
}

#[napi]
impl KameoPeerLookup {
    #[napi]
    pub fn next<'e>(&self, env: &'e Env) -> Result<Object<'e>> {
        let (settle, promise) = Settle::new(env, KameoPeerOutcome::closed)?;
        let lookup = self.lookup.clone();
        self.peer.spawn(async move {
            settle.done(match lookup.lock().await.next().await {
                Some(Ok(actor)) => KameoPeerOutcome::actor(1, &actor),
                Some(Err(e)) => KameoPeerOutcome::error(&e),
                None => KameoPeerOutcome::end(),
            })
        });
        Ok(promise)
    }
}

/// An ask or tell for an actor the program registered.
#[napi]
pub struct KameoInboundRequest {
    request: Mutex<Option<peer::InboundRequest>>,
    name: String,
    actor_remote_id: String,
    message_remote_id: String,
    is_ask: bool,
    payload: Vec<u8>,
}

impl KameoInboundRequest {
    fn new(mut req: peer::InboundRequest) -> KameoInboundRequest {
        let payload = std::mem::take(&mut req.payload);
        KameoInboundRequest {
            name: req.name.clone(),
            actor_remote_id: req.actor_remote_id.clone(),
            message_remote_id: req.message_remote_id.clone(),
            is_ask: req.is_ask(),
            payload,
            request: Mutex::new(Some(req)),
        }
    }

    fn answer(&self, result: peer::AskResult) {
        let req = self.request.lock().ok().and_then(|mut r| r.take());
        if let Some(req) = req {
            req.respond(result);
        }
    }
}

#[napi]
impl KameoInboundRequest {
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }
    #[napi(getter)]
    pub fn actor_remote_id(&self) -> String {
        self.actor_remote_id.clone()
    }
    #[napi(getter)]
    pub fn message_remote_id(&self) -> String {
        self.message_remote_id.clone()
    }
    #[napi(getter)]
    pub fn is_ask(&self) -> bool {
        self.is_ask
    }
    /// The message, MessagePack.
    #[napi(getter)]
    pub fn payload(&self) -> Buffer {
        self.payload.clone().into()
    }

    /// Answer with the reply (MessagePack); later answers are ignored.
    #[napi]
    pub fn respond(&self, reply: Buffer) {
        self.answer(Ok(reply.to_vec()));
    }

    /// Answer with a `RemoteSendError` variant (`payload`: a HandlerError's
    /// MessagePack value; `message`: the text of the variants holding one).
    #[napi]
    pub fn fail(&self, variant: String, payload: Option<Buffer>, message: Option<String>) -> Result<()> {
        let guard = self.request.lock().map_err(|_| invalid("the request is poisoned".into()))?;
        let Some(req) = guard.as_ref() else { return Ok(()) };
        let e = peer::send_error_from_variant(&variant, payload.map(|p| p.to_vec()), message, req)
            .ok_or_else(|| invalid(format!("{variant:?} is not a RemoteSendError variant")))?;
        drop(guard);
        self.answer(Err(e));
        Ok(())
    }
}
