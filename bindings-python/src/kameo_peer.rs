//! `_polywire.kameo_peer`: the Kameo peer of the core (`polywire::kameo::peer`)
//! for asyncio. The public wrapper (`Node`, `RemoteActorRef`, the error
//! classes) is `polywire/kameo.py`.
//!
//! Nothing here blocks the caller's event loop or calls Python from the
//! node's own thread: each operation is spawned on the node and answered
//! later through `completions.rs` (a queue the loop drains, or a notifier
//! thread). An operation the node drops unanswered (it closed) is answered
//! with `KAMEO_NODE_CLOSED`, so no future waits forever. Asks and tells for
//! the actors the program registers arrive the same way (kind [`INBOUND`])
//! as `_InboundRequest` objects, which the wrapper answers with `respond` or
//! `fail`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use polywire::kameo::model::RemoteSendError;
use polywire::kameo::peer::{self, Peer, PeerConfig, PeerError, RemoteActor, SendOptions};
use polywire::kameo::ActorId;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

#[cfg(unix)]
use crate::completions::WakeQueue;
use crate::completions::{self, Completions};

/// `notify` kinds.
const OK: u8 = 0;
const LOOKUP_ITEM: u8 = 1;
const LOOKUP_END: u8 = 2;
const INBOUND: u8 = 3;
const ERROR: u8 = 4;

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "kameo_peer", |m| {
        m.add_class::<PeerNode>()?;
        m.add_class::<InboundRequest>()?;
        m.add("OK", OK)?;
        m.add("LOOKUP_ITEM", LOOKUP_ITEM)?;
        m.add("LOOKUP_END", LOOKUP_END)?;
        m.add("INBOUND", INBOUND)?;
        m.add("ERROR", ERROR)?;
        Ok(())
    })
}

enum Done {
    Unit,
    Bytes(Vec<u8>),
    Bool(bool),
    Actor(RemoteActor),
    LookupItem(RemoteActor),
    LookupEnd,
    Inbound(peer::InboundRequest),
    Err(PeerError),
}

fn actor_tuple<'py>(py: Python<'py>, actor: &RemoteActor) -> PyResult<Bound<'py, PyTuple>> {
    let id = actor.actor_id();
    (PyBytes::new(py, &id.to_bytes()), id.sequence_id, actor.peer_id(), actor.remote_id()).into_pyobject(py)
}

/// `(code, message, variant, handler_error_payload, detail)`; `variant` is the
/// `RemoteSendError` variant name for send errors, else None; `detail` the
/// variant's fields (`UnknownMessage`: `(actor_remote_id, message_remote_id)`).
fn error_tuple<'py>(py: Python<'py>, e: &PeerError) -> PyResult<Bound<'py, PyTuple>> {
    let (variant, payload, detail): (Option<&str>, Option<Bound<'py, PyBytes>>, Option<(String, Option<String>)>) = match e {
        PeerError::Send(s) => {
            let payload = match s {
                RemoteSendError::HandlerError(b) => Some(PyBytes::new(py, b)),
                _ => None,
            };
            let detail = match s {
                RemoteSendError::UnknownActor { actor_remote_id } => Some((actor_remote_id.clone(), None)),
                RemoteSendError::UnknownMessage { actor_remote_id, message_remote_id } => {
                    Some((actor_remote_id.clone(), Some(message_remote_id.clone())))
                }
                _ => None,
            };
            (Some(s.variant_name()), payload, detail)
        }
        PeerError::Io(_) => (Some("Io"), None, None),
        PeerError::Dial(_) => (Some("DialFailure"), None, None),
        _ => (None, None, None),
    };
    (e.code(), e.to_string(), variant, payload, detail).into_pyobject(py)
}

type Reply = completions::Reply<Done>;

impl completions::Outcome for Done {
    fn closed() -> Self {
        Done::Err(PeerError::Closed)
    }

    fn to_py<'py>(self, py: Python<'py>) -> PyResult<(u8, Bound<'py, PyAny>)> {
        match self {
            Done::Unit => Ok((OK, py.None().into_bound(py))),
            Done::Bytes(b) => Ok((OK, PyBytes::new(py, &b).into_any())),
            Done::Bool(b) => Ok((OK, pyo3::types::PyBool::new(py, b).to_owned().into_any())),
            Done::Actor(a) => actor_tuple(py, &a).map(|t| (OK, t.into_any())),
            Done::LookupItem(a) => actor_tuple(py, &a).map(|t| (LOOKUP_ITEM, t.into_any())),
            Done::LookupEnd => Ok((LOOKUP_END, py.None().into_bound(py))),
            Done::Inbound(req) => Bound::new(py, InboundRequest::new(req)).map(|r| (INBOUND, r.into_any())),
            Done::Err(e) => error_tuple(py, &e).map(|t| (ERROR, t.into_any())),
        }
    }

    fn unconvertible<'py>(py: Python<'py>, e: PyErr) -> PyResult<(u8, Bound<'py, PyAny>)> {
        let value = ("KAMEO_INVALID_VALUE", e.to_string(), None::<String>, None::<Vec<u8>>, None::<(String, Option<String>)>);
        Ok((ERROR, value.into_pyobject(py)?.into_any()))
    }
}

fn seconds(name: &str, v: Option<f64>) -> PyResult<Option<Duration>> {
    v.map(|s| {
        Duration::try_from_secs_f64(s).map_err(|_| {
            Python::attach(|py| {
                crate::errors::value_error(
                    py,
                    polywire::Format::Kameo,
                    "KAMEO_INVALID_VALUE",
                    format!("{name} must be a finite, non-negative number of seconds, got {s}"),
                )
            })
        })
    })
    .transpose()
}

fn invalid(msg: String) -> PyErr {
    Python::attach(|py| crate::errors::value_error(py, polywire::Format::Kameo, "KAMEO_INVALID_ARGUMENT", msg))
}

/// A running node. Every method but `close` returns at once; results come
/// through `notify`.
#[pyclass(module = "polywire.kameo", name = "_PeerNode", frozen)]
struct PeerNode {
    peer: Peer,
    completions: Mutex<Option<Completions<Done>>>,
    notifier: Mutex<Option<std::thread::JoinHandle<()>>>,
    #[cfg(unix)]
    queue: Option<Arc<WakeQueue<Done>>>,
}

impl PeerNode {
    fn completions(&self) -> Option<Completions<Done>> {
        self.completions.lock().ok().and_then(|c| c.clone())
    }

    /// Run `work` on the node's runtime with a reply for `token`; a closed
    /// node answers `KAMEO_NODE_CLOSED` at once.
    fn spawn<F, Fut>(&self, token: u64, work: F)
    where
        F: FnOnce(Reply) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let Some(tx) = self.completions() else {
            return;
        };
        // On a closed node (or one whose runtime is gone) the work, and with
        // it `reply`, is dropped, which answers `KAMEO_NODE_CLOSED`.
        self.peer.spawn(work(Reply::new(token, &tx)));
    }
}

#[pymethods]
impl PeerNode {
    /// Start a node (blocks until it listens; call it off the event loop).
    /// `notify` None: completions queue up for `drain`, announced by a byte
    /// on `wakeup_fd` (POSIX only); else the notifier thread calls it.
    #[new]
    #[pyo3(signature = (notify, keypair_seed, listen, bootstrap, mdns, request_timeout, dial_timeout))]
    fn new(
        py: Python<'_>,
        notify: Option<Py<PyAny>>,
        keypair_seed: Option<Vec<u8>>,
        listen: Vec<String>,
        bootstrap: Vec<String>,
        mdns: bool,
        request_timeout: f64,
        dial_timeout: f64,
    ) -> PyResult<Self> {
        let keypair_seed = match keypair_seed {
            None => None,
            Some(s) => {
                Some(<[u8; 32]>::try_from(s.as_slice()).map_err(|_| invalid(format!("keypair_seed must be 32 bytes, got {}", s.len())))?)
            }
        };
        let config = PeerConfig {
            keypair_seed,
            listen,
            bootstrap,
            mdns,
            request_timeout: seconds("request_timeout", Some(request_timeout))?.unwrap_or_default(),
            dial_timeout: seconds("dial_timeout", Some(dial_timeout))?.unwrap_or_default(),
            ..PeerConfig::default()
        };
        let channel = completions::open::<Done>(notify, "polywire-kameo-notify").map_err(invalid)?;
        let (peer, mut inbound) = py.detach(|| Peer::start(config)).map_err(|e| peer_error_now(py, &e))?;
        let tx = channel.completions;
        let forward = tx.clone();
        peer.spawn(async move {
            while let Some(req) = inbound.recv().await {
                if forward.send(0, Done::Inbound(req)).is_err() {
                    break;
                }
            }
        });
        Ok(PeerNode {
            peer,
            completions: Mutex::new(Some(tx)),
            notifier: Mutex::new(channel.notifier),
            #[cfg(unix)]
            queue: channel.queue,
        })
    }

    /// The descriptor to watch for readability (queue mode), else None.
    #[getter]
    fn wakeup_fd(&self) -> Option<i32> {
        #[cfg(unix)]
        return completions::wakeup_fd(self.queue.as_ref());
        #[cfg(not(unix))]
        None
    }

    /// The completions queued since the last call, as `(token, kind, value)`
    /// (queue mode; empty otherwise). Call it when `wakeup_fd` is readable.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Vec<(u64, u8, Bound<'py, PyAny>)>> {
        #[cfg(unix)]
        return completions::drain(py, self.queue.as_ref());
        #[cfg(not(unix))]
        Ok(Vec::new())
    }

    #[getter]
    fn peer_id(&self) -> String {
        self.peer.peer_id()
    }

    #[getter]
    fn listen_addrs(&self) -> Vec<String> {
        self.peer.listen_addrs()
    }

    #[getter]
    fn running(&self) -> bool {
        self.peer.is_running()
    }

    fn dial(&self, addr: String, token: u64) {
        let fut = self.peer.dial(&addr);
        self.spawn(token, |reply| async move {
            reply.send(match fut.await {
                Ok(()) => Done::Unit,
                Err(e) => Done::Err(e),
            })
        });
    }

    fn lookup(&self, name: String, token: u64) {
        let mut all = self.peer.lookup_all(&name);
        self.spawn(token, |reply| async move {
            while let Some(item) = all.next().await {
                match item {
                    Ok(actor) => reply.item(Done::LookupItem(actor)),
                    Err(e) => reply.item(Done::Err(e)),
                }
            }
            reply.send(Done::LookupEnd);
        });
    }

    fn register(&self, name: String, remote_id: String, token: u64) {
        let fut = self.peer.register(&name, &remote_id);
        self.spawn(token, |reply| async move {
            reply.send(match fut.await {
                Ok(actor) => Done::Actor(actor),
                Err(e) => Done::Err(e),
            })
        });
    }

    fn unregister(&self, name: String, token: u64) {
        let fut = self.peer.unregister(&name);
        self.spawn(token, |reply| async move {
            reply.send(match fut.await {
                Ok(known) => Done::Bool(known),
                Err(e) => Done::Err(e),
            })
        });
    }

    #[pyo3(signature = (actor_id, remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate, token))]
    #[allow(clippy::too_many_arguments)]
    fn ask(
        &self,
        actor_id: Vec<u8>,
        remote_id: String,
        message_remote_id: String,
        payload: Vec<u8>,
        mailbox_timeout: Option<f64>,
        reply_timeout: Option<f64>,
        immediate: bool,
        token: u64,
    ) -> PyResult<()> {
        let target = target(&actor_id, remote_id)?;
        let options = SendOptions {
            mailbox_timeout: seconds("mailbox_timeout", mailbox_timeout)?,
            reply_timeout: seconds("reply_timeout", reply_timeout)?,
            immediate,
        };
        let fut = self.peer.ask(&target, &message_remote_id, payload, options);
        self.spawn(token, |reply| async move {
            reply.send(match fut.await {
                Ok(bytes) => Done::Bytes(bytes),
                Err(e) => Done::Err(e),
            })
        });
        Ok(())
    }

    #[pyo3(signature = (actor_id, remote_id, message_remote_id, payload, mailbox_timeout, immediate, token))]
    #[allow(clippy::too_many_arguments)]
    fn tell(
        &self,
        actor_id: Vec<u8>,
        remote_id: String,
        message_remote_id: String,
        payload: Vec<u8>,
        mailbox_timeout: Option<f64>,
        immediate: bool,
        token: u64,
    ) -> PyResult<()> {
        let target = target(&actor_id, remote_id)?;
        let options = SendOptions { mailbox_timeout: seconds("mailbox_timeout", mailbox_timeout)?, reply_timeout: None, immediate };
        let fut = self.peer.tell(&target, &message_remote_id, payload, options);
        self.spawn(token, |reply| async move {
            reply.send(match fut.await {
                Ok(()) => Done::Unit,
                Err(e) => Done::Err(e),
            })
        });
        Ok(())
    }

    /// Close the node and wait for its threads (blocks; call it off the
    /// event loop). Operations in flight are answered `KAMEO_NODE_CLOSED`.
    fn close(&self, py: Python<'_>) {
        let completions = self.completions.lock().ok().and_then(|mut c| c.take());
        let notifier = self.notifier.lock().ok().and_then(|mut n| n.take());
        py.detach(|| {
            self.peer.close();
            drop(completions);
            if let Some(t) = notifier {
                // `close` called from a `notify` callback runs on the
                // notifier thread itself, which cannot wait for itself.
                if t.thread().id() != std::thread::current().id() {
                    let _ = t.join();
                }
            }
        });
    }
}

impl Drop for PeerNode {
    fn drop(&mut self) {
        // A node dropped unclosed still stops; its threads end on their own.
        if self.peer.is_running() {
            let peer = self.peer.clone();
            // Joining may wait on the GIL-holding notifier; close on a
            // helper thread instead of in a destructor.
            let _ = std::thread::Builder::new().name("polywire-kameo-close".into()).spawn(move || peer.close());
        }
    }
}

fn target(actor_id: &[u8], remote_id: String) -> PyResult<RemoteActor> {
    let id = ActorId::from_bytes(actor_id).map_err(|e| invalid(format!("actor_id: {}", e.message())))?;
    RemoteActor::new(&id, remote_id).map_err(|e| invalid(e.to_string()))
}

/// A `KameoError` for an error at start (raised directly, not notified).
fn peer_error_now(py: Python<'_>, e: &PeerError) -> PyErr {
    crate::errors::value_error(py, polywire::Format::Kameo, e.code(), e.to_string())
}

/// An ask or tell for an actor the program registered.
#[pyclass(module = "polywire.kameo", name = "_InboundRequest", frozen)]
struct InboundRequest {
    request: Mutex<Option<peer::InboundRequest>>,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    actor_remote_id: String,
    #[pyo3(get)]
    message_remote_id: String,
    #[pyo3(get)]
    is_ask: bool,
    #[pyo3(get)]
    reply_timeout: Option<f64>,
    payload: Vec<u8>,
}

impl InboundRequest {
    fn new(mut req: peer::InboundRequest) -> InboundRequest {
        let payload = std::mem::take(&mut req.payload);
        InboundRequest {
            name: req.name.clone(),
            actor_remote_id: req.actor_remote_id.clone(),
            message_remote_id: req.message_remote_id.clone(),
            is_ask: req.is_ask(),
            reply_timeout: req.reply_timeout.map(|d| d.as_secs_f64()),
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

#[pymethods]
impl InboundRequest {
    /// The message, MessagePack.
    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.payload)
    }

    /// Answer with the reply (MessagePack). Later answers are ignored.
    fn respond(&self, reply: Vec<u8>) {
        self.answer(Ok(reply));
    }

    /// Answer with an error: a `RemoteSendError` variant name; `payload` is
    /// the MessagePack error value of `HandlerError`, `message` the text of
    /// the variants that hold one (`SerializeReply`, ...).
    #[pyo3(signature = (variant, payload=None, message=None))]
    fn fail(&self, variant: &str, payload: Option<Vec<u8>>, message: Option<String>) -> PyResult<()> {
        let guard = self.request.lock().map_err(|_| invalid("the request is poisoned".into()))?;
        let Some(req) = guard.as_ref() else { return Ok(()) };
        let e = peer::send_error_from_variant(variant, payload, message, req)
            .ok_or_else(|| invalid(format!("{variant:?} is not a RemoteSendError variant")))?;
        drop(guard);
        self.answer(Err(e));
        Ok(())
    }
}
