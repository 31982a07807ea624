//! The AXON peer of the core (`polywire::axon::peer`) for Node: every
//! operation returns a Promise settled from the peer's own thread through a
//! `JsDeferred`, so nothing blocks the event loop. The public API (`Peer`,
//! the error classes) is `bindings-node/lib/axon.js`.
//!
//! As the Kameo peer: a Promise is always settled (an operation the peer
//! drops unanswered, because it closed, settles with an `AXON_CLOSED`
//! outcome), outcomes are plain objects, and payloads cross as JSON text.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use polywire::axon::identity::{self, Identity};
use polywire::axon::peer::{self, Event, Peer, PeerConfig, PeerError, PeerInfo, Protocol};
use polywire::json::{self, ParseOptions};
use serde_json::{json, Map, Value};

use crate::errors::Code;

use crate::settle::Settle;

/// Why an operation failed.
#[napi(object)]
pub struct AxonPeerError {
    pub code: String,
    pub message: String,
    /// An `error` reply's code, message and retryable.
    pub remote_code: Option<String>,
    pub remote_message: Option<String>,
    pub retryable: Option<bool>,
}

/// What an operation gave: `kind` 0 ok (`json`: a payload, the events or the
/// peers; `text`: an id), 4 an error.
#[napi(object)]
pub struct AxonPeerOutcome {
    pub kind: u32,
    pub json: Option<String>,
    pub text: Option<String>,
    pub error: Option<AxonPeerError>,
}

impl AxonPeerOutcome {
    fn json(v: String) -> Self {
        AxonPeerOutcome { kind: 0, json: Some(v), text: None, error: None }
    }
    fn text(t: String) -> Self {
        AxonPeerOutcome { kind: 0, json: None, text: Some(t), error: None }
    }
    fn error(e: &PeerError) -> Self {
        let (remote_code, remote_message, retryable) = match e {
            PeerError::Remote { code, message, retryable } => (Some(code.clone()), Some(message.clone()), Some(*retryable)),
            _ => (None, None, None),
        };
        AxonPeerOutcome {
            kind: 4,
            json: None,
            text: None,
            error: Some(AxonPeerError { code: e.code().to_owned(), message: e.to_string(), remote_code, remote_message, retryable }),
        }
    }
    fn closed() -> Self {
        Self::error(&PeerError::Closed)
    }
}

/// A peer to pin: `token`, or `pubkey` (standard base64) with `agentId` and `addr`.
#[napi(object)]
pub struct AxonPeerSpec {
    pub token: Option<String>,
    pub agent_id: Option<String>,
    pub pubkey: Option<String>,
    pub addr: Option<String>,
}

#[napi(object)]
pub struct AxonPeerOptions {
    pub seed: Option<Buffer>,
    pub key_file: Option<String>,
    pub listen: String,
    pub peers: Vec<AxonPeerSpec>,
    pub protocol: String,
    /// JSON text of an object.
    pub capabilities: Option<String>,
    pub agent_name: Option<String>,
    pub handler_timeout: f64,
    /// Seconds (the wrapper checks the range).
    pub busy_poll: f64,
}

fn invalid(message: String) -> napi::Error<Code> {
    napi::Error::new(Code("AXON_INVALID_ARGUMENT"), message)
}

fn thrown(e: &PeerError) -> napi::Error<Code> {
    napi::Error::new(Code(e.code()), e.to_string())
}

fn seconds(name: &str, s: f64) -> napi::Result<Duration, Code> {
    Duration::try_from_secs_f64(s).map_err(|_| invalid(format!("{name} must be a finite, non-negative number of seconds, got {s}")))
}

fn object(text: &str, what: &str) -> napi::Result<Map<String, Value>, Code> {
    let opts = ParseOptions { max_depth: polywire::axon::MAX_DEPTH, ..ParseOptions::default() };
    match json::parse(text.as_bytes(), opts) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(invalid(format!("{what} must be an object"))),
        Err(e) => Err(invalid(format!("{what} is not JSON: {}", e.message()))),
    }
}

fn peer_info(spec: &AxonPeerSpec) -> napi::Result<PeerInfo, Code> {
    let r = match (&spec.token, &spec.pubkey) {
        (Some(t), _) => PeerInfo::from_token(t),
        (None, Some(k)) => PeerInfo::from_parts(spec.agent_id.as_deref(), k, spec.addr.as_deref()),
        (None, None) => Err(PeerError::InvalidArgument("a peer is a token or an object with a pubkey".into())),
    };
    r.map_err(|e| thrown(&e))
}

fn event_json(e: &Event) -> Value {
    match e {
        Event::Message(m) | Event::Error(m) => {
            let mut v = json!({
                "type": if matches!(e, Event::Error(_)) { "error" } else { "message" },
                "from": m.from, "id": m.id, "kind": m.kind, "ref": m.ref_id, "payload": Value::Object(m.payload.clone()),
            });
            if matches!(e, Event::Error(_)) {
                v["code"] = m.payload.get("code").filter(|c| c.is_string()).cloned().unwrap_or(Value::Null);
                v["message"] = m.payload.get("message").filter(|c| c.is_string()).cloned().unwrap_or(Value::Null);
                v["retryable"] = Value::Bool(m.payload.get("retryable").and_then(Value::as_bool).unwrap_or(false));
            }
            v
        }
        Event::PairRequest(p) => {
            let addr = p.addr.map(|a| a.to_string());
            json!({
                "type": "pair_request", "agent_id": p.agent_id, "pubkey": identity::public_key_to_base64(&p.public_key),
                "addr": addr, "token": addr.as_deref().and_then(|a| identity::token(&p.public_key, a).ok()),
            })
        }
    }
}

/// Gives the processor to another runnable thread (sched_yield). The event
/// loop's spin while a reply is awaited (axon.js) calls it at each turn, so
/// that on a machine with few cores it does not keep the threads that would
/// answer (the peer's own, the other side's) from running.
#[napi(js_name = "axonYield")]
pub fn yield_now() {
    std::thread::yield_now();
}

/// Start a peer on a thread of its own; the Promise resolves with it, or
/// with an error outcome.
#[napi(js_name = "axonPeerStart")]
pub fn start(env: &Env, options: AxonPeerOptions) -> napi::Result<Object<'_>, Code> {
    let identity = match (&options.seed, &options.key_file) {
        (Some(s), _) => Some(Identity::from_seed(
            <[u8; 32]>::try_from(&s[..]).map_err(|_| invalid(format!("identity must be a 32-byte seed, got {} bytes", s.len())))?,
        )),
        (None, Some(path)) => Some(Identity::from_key_file(std::path::Path::new(path)).map_err(|e| invalid(e.message().to_owned()))?),
        (None, None) => None,
    };
    let protocol = Protocol::parse(&options.protocol)
        .ok_or_else(|| invalid(format!("protocol must be \"axon/1\" or \"v2\", got {:?}", options.protocol)))?;
    let peers = options.peers.iter().map(peer_info).collect::<napi::Result<Vec<_>, Code>>()?;
    let capabilities = match &options.capabilities {
        Some(c) => Some(object(c, "capabilities")?),
        None => None,
    };
    let config = PeerConfig {
        identity,
        listen: options.listen,
        peers,
        protocol,
        capabilities,
        agent_name: options.agent_name,
        handler_timeout: seconds("handlerTimeout", options.handler_timeout)?,
        busy_poll: seconds("busyPoll", options.busy_poll)?,
        ..PeerConfig::default()
    };
    let (settle, promise) =
        Settle::<Started>::new(env, || Started::Failed(AxonPeerOutcome::closed())).map_err(|e| invalid(e.to_string()))?;
    std::thread::Builder::new()
        .name("polywire-axon-start".into())
        .spawn(move || {
            settle.done(match Peer::start(config) {
                Ok((peer, inbound)) => Started::Peer(AxonPeerNode {
                    peer,
                    requests: Arc::new(tokio::sync::Mutex::new(Some(inbound.requests))),
                    events: Arc::new(tokio::sync::Mutex::new(Some(inbound.events))),
                }),
                Err(e) => Started::Failed(AxonPeerOutcome::error(&e)),
            })
        })
        .map_err(|e| invalid(format!("could not start a thread: {e}")))?;
    Ok(promise)
}

/// The peer, or why it did not start.
pub enum Started {
    Peer(AxonPeerNode),
    Failed(AxonPeerOutcome),
}

impl ToNapiValue for Started {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> napi::Result<napi::sys::napi_value> {
        match val {
            Started::Peer(n) => unsafe { AxonPeerNode::to_napi_value(env, n) },
            Started::Failed(o) => unsafe { AxonPeerOutcome::to_napi_value(env, o) },
        }
    }
}

/// A running peer (see axon.js `Peer`).
#[napi]
pub struct AxonPeerNode {
    peer: Peer,
    /// Taken at close: a receiver keeps the waker a task of the peer's
    /// runtime left in its channel, and with it the runtime's descriptors,
    /// until it is dropped (here, not when V8 collects this object).
    requests: Arc<tokio::sync::Mutex<Option<tokio::sync::mpsc::Receiver<peer::InboundRequest>>>>,
    events: Arc<tokio::sync::Mutex<Option<tokio::sync::mpsc::Receiver<Event>>>>,
}

impl AxonPeerNode {
    fn run<T, F>(&self, settle: Settle<T>, work: F)
    where
        T: ToNapiValue + Send + 'static,
        F: std::future::Future<Output = T> + Send + 'static,
    {
        // A closed peer drops the work, and with it `settle`.
        self.peer.spawn(async move { settle.done(work.await) });
    }
}

#[napi]
impl AxonPeerNode {
    #[napi(getter)]
    pub fn agent_id(&self) -> String {
        self.peer.agent_id().to_owned()
    }

    #[napi(getter)]
    pub fn public_key(&self) -> String {
        self.peer.public_key_base64()
    }

    #[napi(getter)]
    pub fn listen_addr(&self) -> String {
        self.peer.listen_addr()
    }

    #[napi(getter)]
    pub fn token(&self) -> String {
        self.peer.token()
    }

    #[napi(getter)]
    pub fn protocol(&self) -> String {
        self.peer.protocol().as_str().to_owned()
    }

    /// Pin a peer; its agent id.
    #[napi]
    pub fn add_peer(&self, spec: AxonPeerSpec) -> napi::Result<String, Code> {
        let info = peer_info(&spec)?;
        let id = info.agent_id.clone();
        self.peer.add_peer(info).map_err(|e| thrown(&e))?;
        Ok(id)
    }

    #[napi]
    pub fn remove_peer(&self, agent_id: String) -> napi::Result<bool, Code> {
        self.peer.remove_peer(&agent_id).map_err(|e| thrown(&e))
    }

    /// The known peers, JSON text.
    #[napi]
    pub fn peers(&self) -> String {
        let list: Vec<Value> = self
            .peer
            .peers()
            .into_iter()
            .map(|p| {
                json!({"agent_id": p.agent_id, "addr": p.addr, "status": p.status,
                       "rtt_ms": p.rtt.map(|r| r.as_secs_f64() * 1000.0)})
            })
            .collect();
        Value::Array(list).to_string()
    }

    #[napi]
    pub fn set_serving(&self, on: bool) {
        self.peer.set_serving(on);
    }

    #[napi]
    pub fn request<'e>(
        &self,
        env: &'e Env,
        to: String,
        kind: String,
        payload_json: String,
        timeout: f64,
    ) -> napi::Result<Object<'e>, Code> {
        let payload = object(&payload_json, "payload")?;
        let fut = self.peer.request(&to, &kind, payload, seconds("timeout", timeout)?);
        let (settle, promise) = Settle::new(env, AxonPeerOutcome::closed).map_err(|e| invalid(e.to_string()))?;
        self.run(settle, async move {
            match fut.await {
                Ok(r) => AxonPeerOutcome::json(Value::Object(r.payload).to_string()),
                Err(e) => AxonPeerOutcome::error(&e),
            }
        });
        Ok(promise)
    }

    #[napi]
    pub fn send<'e>(
        &self,
        env: &'e Env,
        to: String,
        kind: String,
        payload_json: String,
        ref_id: Option<String>,
        timeout: f64,
    ) -> napi::Result<Object<'e>, Code> {
        let payload = object(&payload_json, "payload")?;
        let fut = self.peer.send(&to, &kind, payload, ref_id, seconds("timeout", timeout)?);
        let (settle, promise) = Settle::new(env, AxonPeerOutcome::closed).map_err(|e| invalid(e.to_string()))?;
        self.run(settle, async move {
            match fut.await {
                Ok(id) => AxonPeerOutcome::text(id),
                Err(e) => AxonPeerOutcome::error(&e),
            }
        });
        Ok(promise)
    }

    /// The next events (at least one, at most 256) as a JSON array, or `AXON_CLOSED`.
    #[napi]
    pub fn next_events<'e>(&self, env: &'e Env) -> napi::Result<Object<'e>, Code> {
        let (settle, promise) = Settle::new(env, AxonPeerOutcome::closed).map_err(|e| invalid(e.to_string()))?;
        let events = self.events.clone();
        self.peer.spawn(async move {
            let mut guard = events.lock().await;
            let Some(rx) = guard.as_mut() else { return };
            let Some(first) = rx.recv().await else { return };
            let mut batch = vec![event_json(&first)];
            while batch.len() < 256 {
                match rx.try_recv() {
                    Ok(e) => batch.push(event_json(&e)),
                    Err(_) => break,
                }
            }
            settle.done(AxonPeerOutcome::json(Value::Array(batch).to_string()));
        });
        Ok(promise)
    }

    /// The next request for the program; `null` once the peer is closed.
    #[napi]
    pub fn next_inbound<'e>(&self, env: &'e Env) -> napi::Result<Object<'e>, Code> {
        let (settle, promise) = Settle::<Option<AxonInboundRequest>>::new(env, || None).map_err(|e| invalid(e.to_string()))?;
        let requests = self.requests.clone();
        self.run(settle, async move {
            let mut guard = requests.lock().await;
            match guard.as_mut() {
                Some(rx) => rx.recv().await.map(AxonInboundRequest::new),
                None => None,
            }
        });
        Ok(promise)
    }

    /// Close the peer (on a thread, so the event loop is not blocked).
    #[napi]
    pub fn close<'e>(&self, env: &'e Env) -> napi::Result<Object<'e>, Code> {
        let (settle, promise) = Settle::new(env, || AxonPeerOutcome::text(String::new())).map_err(|e| invalid(e.to_string()))?;
        let (peer, requests, events) = (self.peer.clone(), self.requests.clone(), self.events.clone());
        std::thread::Builder::new()
            .name("polywire-axon-close".into())
            .spawn(move || {
                peer.close();
                // The runtime is gone: nothing holds these locks any more.
                drop(requests.try_lock().ok().and_then(|mut r| r.take()));
                drop(events.try_lock().ok().and_then(|mut e| e.take()));
                settle.done(AxonPeerOutcome::text(String::new()));
            })
            .map_err(|e| invalid(format!("could not start a thread: {e}")))?;
        Ok(promise)
    }
}

/// A request for the program.
#[napi]
pub struct AxonInboundRequest {
    request: Mutex<Option<peer::InboundRequest>>,
    sender: String,
    id: String,
    kind: String,
    payload: String,
}

impl AxonInboundRequest {
    fn new(req: peer::InboundRequest) -> AxonInboundRequest {
        AxonInboundRequest {
            sender: req.from.clone(),
            id: req.id.clone(),
            kind: req.kind.clone(),
            payload: Value::Object(req.payload.clone()).to_string(),
            request: Mutex::new(Some(req)),
        }
    }

    fn take(&self) -> Option<peer::InboundRequest> {
        self.request.lock().ok().and_then(|mut r| r.take())
    }
}

#[napi]
impl AxonInboundRequest {
    #[napi(getter)]
    pub fn sender(&self) -> String {
        self.sender.clone()
    }
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }
    #[napi(getter)]
    pub fn kind(&self) -> String {
        self.kind.clone()
    }
    /// The payload, JSON text.
    #[napi(getter)]
    pub fn payload(&self) -> String {
        self.payload.clone()
    }

    /// Answer with this payload (JSON text of an object); later answers are ignored.
    #[napi]
    pub fn respond(&self, payload_json: String) -> napi::Result<(), Code> {
        let payload = object(&payload_json, "the reply's payload")?;
        if let Some(req) = self.take() {
            req.respond(payload);
        }
        Ok(())
    }

    /// Answer with an `error`.
    #[napi]
    pub fn fail(&self, code: String, message: String, retryable: bool) {
        if let Some(req) = self.take() {
            req.fail(&code, &message, retryable);
        }
    }
}
