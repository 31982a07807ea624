//! Framing (one message per stream, then FIN; 64 KiB, 10 s), the program's
//! requests and messages, and axon/1's serving rules (upstream HEAD's
//! `transport/connection.rs`, notes B.3):
//!
//! | input | unidirectional | bidirectional |
//! |---|---|---|
//! | unreadable, oversized, too slow | dropped | no reply (empty FIN) |
//! | `request` | dropped | validated; the program's answer, or `unhandled` |
//! | unknown kind | an event (kind kept) | `unknown_kind` |
//! | `message`/`response`/`error` | an event | an event, no reply |
//! | invalid `request` | — | `invalid_envelope` ("envelope validation failed: …") |

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use quinn::{ReadError, ReadToEndError, WriteError};
use serde_json::{Map, Value};

use super::conn::{connection_error, Link};
use super::node::Node;
use super::{Answer, Event, InboundRequest, Message, PeerError, Protocol, Reply};
use crate::axon::axon1;

/// How long the other side may take to write a message and its FIN.
pub(super) const READ_BUDGET: Duration = Duration::from_secs(10);
/// The largest message, in bytes.
pub(super) const MAX_MESSAGE: usize = axon1::MAX_MESSAGE_SIZE;

/// Read a message up to its FIN: `None` if it is too large, reset, or slow.
pub(super) async fn read_message(recv: &mut quinn::RecvStream) -> Option<Vec<u8>> {
    match tokio::time::timeout(READ_BUDGET, recv.read_to_end(MAX_MESSAGE)).await {
        Ok(Ok(data)) => Some(data),
        _ => {
            let _ = recv.stop(0u32.into());
            None
        }
    }
}

/// Write a message and FIN (errors are the other side's business).
pub(super) async fn write_message(send: &mut quinn::SendStream, bytes: &[u8]) {
    if send.write_all(bytes).await.is_ok() {
        let _ = send.finish();
    }
}

fn write_error(e: WriteError, to: &str) -> PeerError {
    match e {
        WriteError::ConnectionLost(c) => connection_error(&c, &format!("the connection to {to}")),
        WriteError::ClosedStream => PeerError::Closed,
        other => PeerError::ConnectionLost(format!("writing to {to}: {other}")),
    }
}

fn read_error(e: ReadToEndError, to: &str) -> PeerError {
    match e {
        ReadToEndError::TooLong => PeerError::MessageTooLarge(format!("the reply from {to} is over {MAX_MESSAGE} bytes")),
        ReadToEndError::Read(ReadError::ConnectionLost(c)) => connection_error(&c, &format!("the connection to {to}")),
        ReadToEndError::Read(ReadError::Reset(code)) => PeerError::ConnectionLost(format!("{to} reset the request's stream (code {code})")),
        ReadToEndError::Read(other) => PeerError::ConnectionLost(format!("reading from {to}: {other}")),
    }
}

/// Write `bytes` on a new bidirectional stream, FIN, and read the reply.
pub(super) async fn exchange(
    conn: &quinn::Connection,
    bytes: &[u8],
    deadline: tokio::time::Instant,
    to: &str,
    timeout: Duration,
    limit: usize,
) -> Result<Vec<u8>, PeerError> {
    let work = async {
        let (mut send, mut recv) = conn.open_bi().await.map_err(|e| connection_error(&e, &format!("the connection to {to}")))?;
        send.write_all(bytes).await.map_err(|e| write_error(e, to))?;
        let _ = send.finish();
        recv.read_to_end(limit).await.map_err(|e| read_error(e, to))
    };
    tokio::time::timeout_at(deadline, work)
        .await
        .map_err(|_| PeerError::Timeout(format!("no reply from {to} within {} s", timeout.as_secs_f64())))?
}

/// Write `bytes` on a new unidirectional stream and FIN.
pub(super) async fn push(
    conn: &quinn::Connection,
    bytes: &[u8],
    deadline: tokio::time::Instant,
    to: &str,
    timeout: Duration,
) -> Result<(), PeerError> {
    let work = async {
        let mut send = conn.open_uni().await.map_err(|e| connection_error(&e, &format!("the connection to {to}")))?;
        send.write_all(bytes).await.map_err(|e| write_error(e, to))?;
        let _ = send.finish();
        Ok(())
    };
    tokio::time::timeout_at(deadline, work)
        .await
        .map_err(|_| PeerError::Timeout(format!("the message to {to} could not be written within {} s", timeout.as_secs_f64())))?
}

pub(super) fn deadline(timeout: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(timeout).unwrap_or(now + Duration::from_secs(86_400 * 365))
}

fn too_large_or_invalid(e: crate::Error) -> PeerError {
    if e.message().starts_with("message size ") || e.message().starts_with("the encoded message is ") {
        PeerError::MessageTooLarge(e.message().to_owned())
    } else {
        PeerError::InvalidArgument(e.message().to_owned())
    }
}

impl Node {
    fn check_known(&self, to: &str) -> Result<String, PeerError> {
        let id = crate::axon::identity::canonical_agent_id(to).unwrap_or_else(|| to.to_owned());
        if !self.lock().contains_key(&id) {
            return Err(PeerError::UnknownPeer(format!(
                "no peer {to} is known: add it first (add_peer) with its enrollment token or public key"
            )));
        }
        Ok(id)
    }

    pub(super) async fn request(
        self: Arc<Self>,
        to: String,
        kind: String,
        payload: Map<String, Value>,
        timeout: Duration,
    ) -> Result<Reply, PeerError> {
        let to = self.check_known(&to)?;
        if self.protocol == Protocol::V2 {
            return self.request_v2(to, kind, payload, timeout).await;
        }
        if kind != "request" {
            return Err(PeerError::InvalidArgument(format!(
                "with axon/1 a request's kind is \"request\", got {kind:?}; send other kinds with send()"
            )));
        }
        let env = axon1::request(&payload);
        let bytes = axon1::encode(&env).map_err(too_large_or_invalid)?;
        let deadline = deadline(timeout);
        let conn = self.ensure_connection(&to, deadline).await?;
        let data = exchange(&conn, &bytes, deadline, &to, timeout, MAX_MESSAGE).await?;
        if data.is_empty() {
            return Err(PeerError::InvalidReply(format!(
                "{to} ended the request's stream without a reply (it could not read the request)"
            )));
        }
        let reply = axon1::decode(&data).map_err(|e| PeerError::InvalidReply(format!("the reply from {to} is not valid: {e}")))?;
        if !reply.is_response() {
            return Err(PeerError::InvalidReply(format!("bidirectional reply must use response|error kind, got {}", reply.kind)));
        }
        if reply.ref_id.as_deref() != Some(env.id.as_str()) {
            return Err(PeerError::InvalidReply(format!("bidirectional reply ref {:?} does not match request {}", reply.ref_id, env.id)));
        }
        let payload = reply.payload_object().map_err(|e| PeerError::InvalidReply(format!("the reply's payload from {to}: {e}")))?;
        if reply.kind == "error" {
            return Err(remote_error(&payload));
        }
        Ok(Reply { id: reply.id, kind: reply.kind, payload })
    }

    pub(super) async fn send(
        self: Arc<Self>,
        to: String,
        kind: String,
        payload: Map<String, Value>,
        ref_id: Option<String>,
        timeout: Duration,
    ) -> Result<String, PeerError> {
        let to = self.check_known(&to)?;
        if self.protocol == Protocol::V2 {
            return self.send_v2(to, kind, payload, ref_id, timeout).await;
        }
        if kind == "request" || kind.is_empty() {
            return Err(PeerError::InvalidArgument(format!(
                "send() sends any kind but \"request\" (use request() for that), got {kind:?}"
            )));
        }
        let mut env = axon1::Envelope::new(&kind, &payload);
        env.ref_id = ref_id;
        let bytes = axon1::encode(&env).map_err(too_large_or_invalid)?;
        let deadline = deadline(timeout);
        let conn = self.ensure_connection(&to, deadline).await?;
        push(&conn, &bytes, deadline, &to, timeout).await?;
        Ok(env.id)
    }

    /// Testing: raw bytes on a new stream of a (new or live) connection.
    pub(super) async fn raw(self: Arc<Self>, to: String, data: Vec<u8>, bidi: bool, timeout: Duration) -> Result<Vec<u8>, PeerError> {
        let to = self.check_known(&to)?;
        let deadline = deadline(timeout);
        let conn = self.ensure_connection(&to, deadline).await?;
        if bidi {
            exchange(&conn, &data, deadline, &to, timeout, 1 << 20).await
        } else {
            push(&conn, &data, deadline, &to, timeout).await.map(|()| Vec::new())
        }
    }

    /// The program's answer to a request, or `None` when it does not serve.
    pub(super) async fn ask_program(&self, from: &str, id: &str, kind: &str, payload: Map<String, Value>) -> Option<Answer> {
        if !self.serving.load(Ordering::Relaxed) {
            return None;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let request = InboundRequest { from: from.to_owned(), id: id.to_owned(), kind: kind.to_owned(), payload, answer: Some(tx) };
        self.requests()?.send(request).await.ok()?;
        self.busy.fetch_add(1, Ordering::Relaxed);
        let answer = match tokio::time::timeout(self.handler_timeout, rx).await {
            Ok(Ok(a)) => a,
            Ok(Err(_)) => Answer::Error {
                code: "internal".into(),
                message: "the handler dropped the request without answering it".into(),
                retryable: false,
            },
            Err(_) => Answer::Error {
                code: "timeout".into(),
                message: format!("the handler did not answer within {} s", self.handler_timeout.as_secs_f64()),
                retryable: true,
            },
        };
        self.busy.fetch_sub(1, Ordering::Relaxed);
        Some(answer)
    }

    pub(super) async fn serve_bi(self: Arc<Self>, link: Arc<Link>, mut send: quinn::SendStream, mut recv: quinn::RecvStream) {
        if self.protocol == Protocol::V2 {
            return self.serve_bi_v2(link, send, recv).await;
        }
        let Some(data) = read_message(&mut recv).await else {
            let _ = send.finish();
            return;
        };
        let env = match axon1::parse(&data) {
            Ok(env) => env,
            Err(_) => {
                let _ = send.finish();
                return;
            }
        };
        let reply = if !env.is_known_kind() {
            axon1::error_to(&env, "unknown_kind", "unknown message kind on bidirectional stream", false)
        } else if let Err(e) = env.validate() {
            if !env.is_request() {
                let _ = send.finish();
                return;
            }
            axon1::error_to(&env, "invalid_envelope", &format!("envelope validation failed: {}", e.message()), false)
        } else if !env.is_request() {
            // Fire-and-forget on a bidirectional stream: delivered, no reply.
            if let Ok(payload) = env.payload_object() {
                self.emit(event(&link.peer, env, payload)).await;
            }
            let _ = send.finish();
            return;
        } else {
            match env.payload_object() {
                Err(e) => axon1::error_to(&env, "invalid_envelope", &format!("envelope validation failed: {}", e.message()), false),
                Ok(payload) => match self.ask_program(&link.peer, &env.id, "request", payload).await {
                    None => {
                        axon1::error_to(&env, "unhandled", &format!("no application handler registered for request '{}'", env.id), false)
                    }
                    Some(Answer::Payload(p)) => axon1::response_to(&env, &p),
                    Some(Answer::Error { code, message, retryable }) => axon1::error_to(&env, &code, &message, retryable),
                },
            }
        };
        let mut reply = reply;
        if self.wrong_ref.load(Ordering::Relaxed) {
            reply.ref_id = Some(crate::axon::v2::new_id());
        }
        let bytes = match axon1::encode(&reply) {
            Ok(b) => b,
            Err(e) => {
                let fallback = axon1::error_to(&env, "handler_error", &format!("the reply could not be sent: {}", e.message()), false);
                axon1::encode(&fallback).unwrap_or_default()
            }
        };
        write_message(&mut send, &bytes).await;
    }

    pub(super) async fn serve_uni(self: Arc<Self>, link: Arc<Link>, mut recv: quinn::RecvStream) {
        if self.protocol == Protocol::V2 {
            return self.serve_uni_v2(link, recv).await;
        }
        let Some(data) = read_message(&mut recv).await else { return };
        let Ok(env) = axon1::decode(&data) else { return };
        if env.is_request() {
            return;
        }
        if let Ok(payload) = env.payload_object() {
            // `recv` lives until the event is queued: a full queue holds the
            // stream, and the sender's flow control holds the sender.
            self.emit(event(&link.peer, env, payload)).await;
        }
        drop(recv);
    }
}

fn event(from: &str, env: axon1::Envelope, payload: Map<String, Value>) -> Event {
    let m = Message { from: from.to_owned(), id: env.id, kind: env.kind, ref_id: env.ref_id, payload };
    if m.kind == "error" {
        Event::Error(m)
    } else {
        Event::Message(m)
    }
}

/// An `error` reply's payload as the error it is (fields read leniently:
/// another type is shown as JSON).
pub(super) fn remote_error(payload: &Map<String, Value>) -> PeerError {
    let text = |key: &str| match payload.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    PeerError::Remote {
        code: text("code"),
        message: text("message"),
        retryable: payload.get("retryable").and_then(Value::as_bool).unwrap_or(false),
    }
}
