//! `_polywire.axon_peer`: the AXON peer of the core (`polywire::axon::peer`)
//! for asyncio. The public wrapper (`Peer`, the error classes) is in
//! `polywire/axon.py`.
//!
//! As the Kameo peer (`kameo_peer.rs`): nothing here blocks the event loop or
//! calls Python from the peer's thread. Each operation is spawned on the
//! peer's runtime and answered later: on POSIX loops through a queue the loop
//! drains when a byte arrives on `wakeup_fd`, elsewhere through `notify(token,
//! kind, value)` called by a notifier thread. An operation the peer drops
//! unanswered (it closed) is answered `AXON_CLOSED`. Requests for the program
//! arrive the same way (kind [`INBOUND`]) as `_AxonInboundRequest` objects,
//! answered with `respond` or `fail`. Payloads cross as dicts, converted
//! without running any Python code of the value (`axon::to_json`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use polywire::axon::identity::{self, Identity};
use polywire::axon::peer::{self, Event, Peer, PeerConfig, PeerError, PeerInfo, Protocol};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{Map, Value};

#[cfg(unix)]
use crate::completions::WakeQueue;
use crate::completions::{self, Completions};

const OK: u8 = 0;
const EVENTS: u8 = 1;
const INBOUND: u8 = 3;
const ERROR: u8 = 4;

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "axon_peer", |m| {
        m.add_class::<PeerNode>()?;
        m.add_class::<InboundRequest>()?;
        m.add("OK", OK)?;
        m.add("EVENTS", EVENTS)?;
        m.add("INBOUND", INBOUND)?;
        m.add("ERROR", ERROR)?;
        Ok(())
    })
}

enum Done {
    Payload(Map<String, Value>),
    Text(String),
    Events(Vec<Event>),
    Inbound(peer::InboundRequest),
    Err(PeerError),
}

fn invalid(py: Python<'_>, message: impl Into<String>) -> PyErr {
    crate::errors::value_error(py, polywire::Format::Axon, "AXON_INVALID_ARGUMENT", message)
}

fn peer_error_now(py: Python<'_>, e: &PeerError) -> PyErr {
    crate::errors::value_error(py, polywire::Format::Axon, e.code(), e.to_string())
}

/// `(code, message, remote_code, remote_message, retryable)`.
fn error_tuple<'py>(py: Python<'py>, e: &PeerError) -> PyResult<Bound<'py, PyAny>> {
    let (rc, rm, r) = match e {
        PeerError::Remote { code, message, retryable } => (Some(code.clone()), Some(message.clone()), Some(*retryable)),
        _ => (None, None, None),
    };
    Ok((e.code(), e.to_string(), rc, rm, r).into_pyobject(py)?.into_any())
}

fn dict_of<'py>(py: Python<'py>, m: &Map<String, Value>) -> PyResult<Bound<'py, PyAny>> {
    crate::axon::from_json(py, &Value::Object(m.clone()))
}

fn event_dict<'py>(py: Python<'py>, e: &Event) -> PyResult<Bound<'py, PyAny>> {
    let d = PyDict::new(py);
    match e {
        Event::Message(m) | Event::Error(m) => {
            d.set_item("type", if matches!(e, Event::Error(_)) { "error" } else { "message" })?;
            d.set_item("from", &m.from)?;
            d.set_item("id", &m.id)?;
            d.set_item("kind", &m.kind)?;
            d.set_item("ref", m.ref_id.as_deref())?;
            d.set_item("payload", dict_of(py, &m.payload)?)?;
            if matches!(e, Event::Error(_)) {
                let text = |k: &str| m.payload.get(k).and_then(Value::as_str).map(str::to_owned);
                d.set_item("code", text("code"))?;
                d.set_item("message", text("message"))?;
                d.set_item("retryable", m.payload.get("retryable").and_then(Value::as_bool).unwrap_or(false))?;
            }
        }
        Event::PairRequest(p) => {
            d.set_item("type", "pair_request")?;
            d.set_item("agent_id", &p.agent_id)?;
            d.set_item("pubkey", identity::public_key_to_base64(&p.public_key))?;
            let addr = p.addr.map(|a| a.to_string());
            d.set_item("token", addr.as_deref().and_then(|a| identity::token(&p.public_key, a).ok()))?;
            d.set_item("addr", addr)?;
        }
    }
    Ok(d.into_any())
}

type Reply = completions::Reply<Done>;

impl completions::Outcome for Done {
    fn closed() -> Self {
        Done::Err(PeerError::Closed)
    }

    fn to_py<'py>(self, py: Python<'py>) -> PyResult<(u8, Bound<'py, PyAny>)> {
        match self {
            Done::Payload(m) => Ok((OK, dict_of(py, &m)?)),
            Done::Text(t) => Ok((OK, t.into_pyobject(py)?.into_any())),
            Done::Events(events) => {
                let list = PyList::empty(py);
                for e in &events {
                    list.append(event_dict(py, e)?)?;
                }
                Ok((EVENTS, list.into_any()))
            }
            Done::Inbound(req) => {
                let payload = dict_of(py, &req.payload)?.unbind();
                Bound::new(py, InboundRequest::new(req, payload)).map(|r| (INBOUND, r.into_any()))
            }
            Done::Err(e) => Ok((ERROR, error_tuple(py, &e)?)),
        }
    }

    fn unconvertible<'py>(py: Python<'py>, e: PyErr) -> PyResult<(u8, Bound<'py, PyAny>)> {
        let value = ("AXON_INVALID_REPLY", e.to_string(), None::<String>, None::<String>, None::<bool>);
        Ok((ERROR, value.into_pyobject(py)?.into_any()))
    }
}

fn seconds(py: Python<'_>, name: &str, s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| invalid(py, format!("{name} must be a finite, non-negative number of seconds, got {s}")))
}

fn payload_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Map<String, Value>> {
    match crate::axon::to_json(py, obj, 0)? {
        Value::Object(m) => Ok(m),
        _ => Err(crate::errors::type_error(py, "AXON_INVALID_ARGUMENT", "payload must be a dict")),
    }
}

/// A peer given as `("token", token)` or `("parts", agent_id | None, pubkey, addr | None)`.
fn peer_info(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PeerInfo> {
    let r = if let Ok((tag, token)) = spec.extract::<(String, String)>() {
        if tag != "token" {
            return Err(invalid(py, "a peer is a token or a mapping"));
        }
        PeerInfo::from_token(&token)
    } else {
        let (_, agent_id, pubkey, addr): (String, Option<String>, String, Option<String>) = spec.extract()?;
        PeerInfo::from_parts(agent_id.as_deref(), &pubkey, addr.as_deref())
    };
    r.map_err(|e| peer_error_now(py, &e))
}

/// A running peer. Every method but `close` returns at once; results come
/// through `drain` (or `notify`).
#[pyclass(module = "polywire.axon", name = "_AxonPeerNode", frozen)]
struct PeerNode {
    peer: Peer,
    /// Taken at close (see the Node binding: a receiver keeps the peer's
    /// runtime's descriptors alive through a task's waker).
    events: Arc<tokio::sync::Mutex<Option<tokio::sync::mpsc::Receiver<Event>>>>,
    completions: Mutex<Option<Completions<Done>>>,
    notifier: Mutex<Option<std::thread::JoinHandle<()>>>,
    #[cfg(unix)]
    queue: Option<Arc<WakeQueue<Done>>>,
}

impl PeerNode {
    fn spawn<F, Fut>(&self, token: u64, work: F)
    where
        F: FnOnce(Reply) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let Some(tx) = self.completions.lock().ok().and_then(|c| c.clone()) else { return };
        // A closed peer drops the work, and with it the reply: AXON_CLOSED.
        self.peer.spawn(work(Reply::new(token, &tx)));
    }
}

#[pymethods]
impl PeerNode {
    /// Start a peer (blocks until it listens; call it off the event loop).
    #[new]
    #[pyo3(signature = (notify, seed, key_file, listen, peers, protocol, capabilities, agent_name, handler_timeout, busy_poll))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        notify: Option<Py<PyAny>>,
        seed: Option<Vec<u8>>,
        key_file: Option<std::path::PathBuf>,
        listen: String,
        peers: Vec<Bound<'_, PyAny>>,
        protocol: String,
        capabilities: Option<Bound<'_, PyAny>>,
        agent_name: Option<String>,
        handler_timeout: f64,
        busy_poll: f64,
    ) -> PyResult<Self> {
        let identity = match (seed, key_file) {
            (Some(s), _) => Some(Identity::from_seed(
                <[u8; 32]>::try_from(s.as_slice())
                    .map_err(|_| invalid(py, format!("identity must be a 32-byte seed, got {} bytes", s.len())))?,
            )),
            (None, Some(path)) => Some(Identity::from_key_file(&path).map_err(|e| invalid(py, e.message().to_owned()))?),
            (None, None) => None,
        };
        let protocol =
            Protocol::parse(&protocol).ok_or_else(|| invalid(py, format!("protocol must be \"axon/1\" or \"v2\", got {protocol:?}")))?;
        let peers = peers.iter().map(|p| peer_info(py, p)).collect::<PyResult<Vec<_>>>()?;
        let capabilities = match capabilities {
            Some(c) => Some(payload_arg(py, &c)?),
            None => None,
        };
        let config = PeerConfig {
            identity,
            listen,
            peers,
            protocol,
            capabilities,
            agent_name,
            handler_timeout: seconds(py, "handler_timeout", handler_timeout)?,
            busy_poll: seconds(py, "busy_poll", busy_poll)?,
            ..PeerConfig::default()
        };
        let channel = completions::open::<Done>(notify, "polywire-axon-notify").map_err(|e| invalid(py, e))?;
        let (peer, inbound) = py.detach(|| Peer::start(config)).map_err(|e| peer_error_now(py, &e))?;
        let tx = channel.completions;
        let forward = tx.clone();
        let mut requests = inbound.requests;
        peer.spawn(async move {
            while let Some(req) = requests.recv().await {
                if forward.send(0, Done::Inbound(req)).is_err() {
                    break;
                }
            }
        });
        Ok(PeerNode {
            peer,
            events: Arc::new(tokio::sync::Mutex::new(Some(inbound.events))),
            completions: Mutex::new(Some(tx)),
            notifier: Mutex::new(channel.notifier),
            #[cfg(unix)]
            queue: channel.queue,
        })
    }

    #[getter]
    fn wakeup_fd(&self) -> Option<i32> {
        #[cfg(unix)]
        return completions::wakeup_fd(self.queue.as_ref());
        #[cfg(not(unix))]
        None
    }

    /// The completions queued since the last call, as `(token, kind, value)`.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Vec<(u64, u8, Bound<'py, PyAny>)>> {
        #[cfg(unix)]
        return completions::drain(py, self.queue.as_ref());
        #[cfg(not(unix))]
        Ok(Vec::new())
    }

    #[getter]
    fn agent_id(&self) -> String {
        self.peer.agent_id().to_owned()
    }

    #[getter]
    fn public_key(&self) -> String {
        self.peer.public_key_base64()
    }

    #[getter]
    fn listen_addr(&self) -> String {
        self.peer.listen_addr()
    }

    #[getter]
    fn token(&self) -> String {
        self.peer.token()
    }

    #[getter]
    fn protocol(&self) -> &'static str {
        self.peer.protocol().as_str()
    }

    #[getter]
    fn running(&self) -> bool {
        self.peer.is_running()
    }

    /// Pin a peer: `("token", token)` or `("parts", agent_id, pubkey, addr)`; its agent id.
    fn add_peer(&self, py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<String> {
        let info = peer_info(py, spec)?;
        let id = info.agent_id.clone();
        self.peer.add_peer(info).map_err(|e| peer_error_now(py, &e))?;
        Ok(id)
    }

    fn remove_peer(&self, py: Python<'_>, agent_id: &str) -> PyResult<bool> {
        self.peer.remove_peer(agent_id).map_err(|e| peer_error_now(py, &e))
    }

    fn peers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for p in self.peer.peers() {
            let d = PyDict::new(py);
            d.set_item("agent_id", p.agent_id)?;
            d.set_item("addr", p.addr)?;
            d.set_item("status", p.status)?;
            d.set_item("rtt_ms", p.rtt.map(|r| r.as_secs_f64() * 1000.0))?;
            list.append(d)?;
        }
        Ok(list)
    }

    fn set_serving(&self, on: bool) {
        self.peer.set_serving(on);
    }

    fn request(&self, py: Python<'_>, to: &str, kind: &str, payload: &Bound<'_, PyAny>, timeout: f64, token: u64) -> PyResult<()> {
        let payload = payload_arg(py, payload)?;
        let fut = self.peer.request(to, kind, payload, seconds(py, "timeout", timeout)?);
        self.spawn(token, |reply| async move {
            reply.send(match fut.await {
                Ok(r) => Done::Payload(r.payload),
                Err(e) => Done::Err(e),
            })
        });
        Ok(())
    }

    #[pyo3(signature = (to, kind, payload, ref_id, timeout, token))]
    #[allow(clippy::too_many_arguments)]
    fn send(
        &self,
        py: Python<'_>,
        to: &str,
        kind: &str,
        payload: &Bound<'_, PyAny>,
        ref_id: Option<String>,
        timeout: f64,
        token: u64,
    ) -> PyResult<()> {
        let payload = payload_arg(py, payload)?;
        let fut = self.peer.send(to, kind, payload, ref_id, seconds(py, "timeout", timeout)?);
        self.spawn(token, |reply| async move {
            reply.send(match fut.await {
                Ok(id) => Done::Text(id),
                Err(e) => Done::Err(e),
            })
        });
        Ok(())
    }

    /// The next events (at least one, at most 256), or `AXON_CLOSED`.
    fn next_events(&self, token: u64) {
        let events = self.events.clone();
        self.spawn(token, |reply| async move {
            let mut guard = events.lock().await;
            let Some(rx) = guard.as_mut() else { return };
            let Some(first) = rx.recv().await else { return };
            let mut batch = vec![first];
            while batch.len() < 256 {
                match rx.try_recv() {
                    Ok(e) => batch.push(e),
                    Err(_) => break,
                }
            }
            reply.send(Done::Events(batch));
        });
    }

    /// Close the peer and wait for its threads (blocks; call it off the loop).
    fn close(&self, py: Python<'_>) {
        let completions = self.completions.lock().ok().and_then(|mut c| c.take());
        let notifier = self.notifier.lock().ok().and_then(|mut n| n.take());
        py.detach(|| {
            self.peer.close();
            drop(self.events.try_lock().ok().and_then(|mut e| e.take()));
            drop(completions);
            if let Some(t) = notifier {
                if t.thread().id() != std::thread::current().id() {
                    let _ = t.join();
                }
            }
        });
    }
}

impl Drop for PeerNode {
    fn drop(&mut self) {
        if self.peer.is_running() {
            let peer = self.peer.clone();
            let _ = std::thread::Builder::new().name("polywire-axon-close".into()).spawn(move || peer.close());
        }
    }
}

/// A request for the program.
#[pyclass(module = "polywire.axon", name = "_AxonInboundRequest", frozen)]
struct InboundRequest {
    request: Mutex<Option<peer::InboundRequest>>,
    #[pyo3(get)]
    sender: String,
    #[pyo3(get)]
    id: String,
    #[pyo3(get)]
    kind: String,
    #[pyo3(get)]
    payload: Py<PyAny>,
}

impl InboundRequest {
    fn new(req: peer::InboundRequest, payload: Py<PyAny>) -> InboundRequest {
        InboundRequest { sender: req.from.clone(), id: req.id.clone(), kind: req.kind.clone(), payload, request: Mutex::new(Some(req)) }
    }

    fn take(&self) -> Option<peer::InboundRequest> {
        self.request.lock().ok().and_then(|mut r| r.take())
    }
}

#[pymethods]
impl InboundRequest {
    /// Answer with this payload (a dict); later answers are ignored.
    fn respond(&self, py: Python<'_>, payload: &Bound<'_, PyAny>) -> PyResult<()> {
        let payload = payload_arg(py, payload)?;
        if let Some(req) = self.take() {
            req.respond(payload);
        }
        Ok(())
    }

    /// Answer with an `error` (code, message, retryable).
    fn fail(&self, code: &str, message: &str, retryable: bool) {
        if let Some(req) = self.take() {
            req.fail(code, message, retryable);
        }
    }
}
