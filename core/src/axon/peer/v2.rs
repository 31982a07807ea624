//! The v2 protocol as upstream v0.2.0 runs it (notes part A): the dialer's
//! `hello` and the acceptor's checks, nothing else before it, `from` checked
//! against the TLS identity, request kinds on bidirectional streams, the
//! rest on unidirectional ones, a 300 s replay cache, and `ping`/`discover`
//! answered by the peer itself. Envelopes go through the v2 codec
//! ([`crate::axon::v2`]), so payloads are checked against their kind's schema
//! (stricter than upstream, which does not look at them).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::conn::{Link, HELLO_TIMEOUT};
use super::node::Node;
use super::serve::{deadline, exchange, push, read_message, remote_error, write_message, MAX_MESSAGE};
use super::{Answer, Event, Message, PeerError, Reply};
use crate::axon::v2::{self as codec, ErrorCode, Kind};

const NOT_READY: &str = "hello handshake must complete before other requests";

fn codec_error(e: crate::Error) -> PeerError {
    if e.message().starts_with("the encoded message is ") {
        PeerError::MessageTooLarge(e.message().to_owned())
    } else {
        PeerError::InvalidArgument(e.message().to_owned())
    }
}

/// The `hello` this side sends and answers with.
fn hello_payload(agent_name: Option<&str>, selected: Option<u8>) -> Map<String, Value> {
    codec::hello_payload(&[codec::PROTOCOL_VERSION], selected, agent_name, &codec::default_features())
}

/// What a v0.2.0 daemon answers without an application handler.
fn canned_answer(kind: Kind) -> Map<String, Value> {
    let mut m = Map::new();
    if kind == Kind::Query {
        let mut data = Map::new();
        data.insert("accepted".into(), Value::Bool(true));
        m.insert("data".into(), Value::Object(data));
        m.insert(
            "summary".into(),
            Value::from(
                "Query received by AXON transport layer. No application handler is registered; connect an IPC \
                 client to process queries.",
            ),
        );
        m.insert("tokens_used".into(), Value::from(0));
        m.insert("truncated".into(), Value::Bool(false));
    } else {
        m.insert("accepted".into(), Value::Bool(true));
    }
    m
}

/// The request a bidirectional message was, as far as its header can be
/// read (its id and sender): enough to address an error reply.
fn header(data: &[u8], to: &str) -> Option<(codec::Envelope, bool)> {
    let v: Value = serde_json::from_slice(data).ok()?;
    let o = v.as_object()?;
    let id = crate::tether::Uuid::parse(o.get("id")?.as_str()?)?.to_string();
    let from = o.get("from")?.as_str().filter(|s| codec::is_agent_id(s))?.to_ascii_lowercase();
    if !matches!(o.get("ref"), None | Some(Value::Null)) {
        return None;
    }
    let version = o.get("v").and_then(Value::as_u64).filter(|v| (1..=255).contains(v)).unwrap_or(1) as u8;
    let is_hello = o.get("kind").and_then(Value::as_str) == Some("hello");
    let env = codec::Envelope {
        v: version,
        id,
        from,
        to: to.to_owned(),
        ts: codec::now_ms().max(1),
        kind: Kind::Ping,
        ref_id: None,
        payload: Map::new(),
    };
    Some((env, is_hello))
}

impl Node {
    fn replayed(&self, id: &str) -> bool {
        self.replay.lock().map(|mut r| r.check(id, codec::now_ms())).unwrap_or(false)
    }

    /// The dialer's hello: sent first, on a bidirectional stream; the answer
    /// must select version 1.
    pub(super) async fn hello(&self, conn: &quinn::Connection, id: &str) -> Result<(), PeerError> {
        let me = self.identity.agent_id();
        let env = codec::Envelope::new(me, id, Kind::Hello, hello_payload(self.agent_name.as_deref(), None))
            .map_err(|e| PeerError::InvalidArgument(e.message().to_owned()))?;
        let bytes = codec::encode(&env).map_err(codec_error)?;
        let data = exchange(conn, &bytes, deadline(HELLO_TIMEOUT), id, HELLO_TIMEOUT, MAX_MESSAGE)
            .await
            .map_err(|e| PeerError::HandshakeRefused(format!("hello to {id}: {e}")))?;
        let reply =
            codec::decode(&data).map_err(|e| PeerError::HandshakeRefused(format!("the hello reply from {id} is not valid: {e}")))?;
        match reply.kind {
            Kind::Hello if reply.payload.get("selected_version").and_then(Value::as_u64) == Some(1) => Ok(()),
            Kind::Hello => Err(PeerError::HandshakeRefused(format!("peer {id} did not negotiate protocol version 1"))),
            Kind::Error => Err(PeerError::HandshakeRefused(format!("peer {id} rejected hello: {}", remote_error(&reply.payload)))),
            other => Err(PeerError::HandshakeRefused(format!("unexpected response kind '{other}' during hello handshake"))),
        }
    }

    pub(super) async fn request_v2(
        self: Arc<Self>,
        to: String,
        kind: String,
        payload: Map<String, Value>,
        timeout: Duration,
    ) -> Result<Reply, PeerError> {
        let k = Kind::parse(&kind)
            .filter(|k| matches!(k, Kind::Query | Kind::Delegate | Kind::Discover | Kind::Ping | Kind::Cancel))
            .ok_or_else(|| {
                PeerError::InvalidArgument(format!("with v2 a request's kind is query, delegate, discover, ping or cancel, got {kind:?}"))
            })?;
        let env = codec::Envelope::new(self.identity.agent_id(), &to, k, payload).map_err(codec_error)?;
        let bytes = codec::encode(&env).map_err(codec_error)?;
        let deadline = deadline(timeout);
        let conn = self.ensure_connection(&to, deadline).await?;
        let data = exchange(&conn, &bytes, deadline, &to, timeout, MAX_MESSAGE).await?;
        if data.is_empty() {
            return Err(PeerError::InvalidReply(format!(
                "{to} ended the request's stream without a reply (it could not read the request, or saw it before)"
            )));
        }
        let reply = codec::decode(&data).map_err(|e| PeerError::InvalidReply(format!("the reply from {to} is not valid: {e}")))?;
        if reply.ref_id.as_deref() != Some(env.id.as_str()) {
            return Err(PeerError::InvalidReply(format!("the reply's ref {:?} does not match request {}", reply.ref_id, env.id)));
        }
        if !k.response_kinds().contains(&reply.kind) {
            return Err(PeerError::InvalidReply(format!("a {} does not answer a {k}", reply.kind)));
        }
        if !codec::same_agent(&reply.from, &to) {
            return Err(PeerError::InvalidReply(format!("the reply claims to come from {}, not {to}", reply.from)));
        }
        if self.replayed(&reply.id) {
            return Err(PeerError::InvalidReply(format!("the reply {} was already received", reply.id)));
        }
        if reply.kind == Kind::Error {
            return Err(remote_error(&reply.payload));
        }
        Ok(Reply { id: reply.id, kind: reply.kind.as_str().to_owned(), payload: reply.payload })
    }

    pub(super) async fn send_v2(
        self: Arc<Self>,
        to: String,
        kind: String,
        payload: Map<String, Value>,
        ref_id: Option<String>,
        timeout: Duration,
    ) -> Result<String, PeerError> {
        let k = Kind::parse(&kind)
            .filter(|k| matches!(k, Kind::Notify | Kind::Result | Kind::Error))
            .ok_or_else(|| PeerError::InvalidArgument(format!("with v2 send() sends notify, result or error, got {kind:?}")))?;
        let mut env = codec::Envelope::new(self.identity.agent_id(), &to, k, payload).map_err(codec_error)?;
        env.ref_id = ref_id;
        let bytes = codec::encode(&env).map_err(codec_error)?;
        let deadline = deadline(timeout);
        let conn = self.ensure_connection(&to, deadline).await?;
        push(&conn, &bytes, deadline, &to, timeout).await?;
        Ok(env.id)
    }

    async fn reply_v2(&self, send: &mut quinn::SendStream, reply: codec::Envelope, request: &codec::Envelope) {
        let mut reply = reply;
        if self.wrong_ref.load(Ordering::Relaxed) {
            reply.ref_id = Some(codec::new_id());
        }
        let bytes = match codec::encode(&reply) {
            Ok(b) => b,
            Err(e) => {
                let fallback =
                    codec::error_reply(request, ErrorCode::Internal, &format!("the reply could not be sent: {}", e.message()), false);
                codec::encode(&fallback).unwrap_or_default()
            }
        };
        write_message(send, &bytes).await;
    }

    /// The acceptor's side of a hello: the sender must be the certificate's
    /// identity and speak version 1; then the connection is this peer's.
    async fn accept_hello(&self, link: &Link, env: codec::Envelope, send: &mut quinn::SendStream) {
        let refuse = |code, message: String| codec::error_reply(&env, code, &message, false);
        let failure = if !codec::same_agent(&env.from, &link.peer) {
            Some(refuse(ErrorCode::NotAuthorized, "peer hello 'from' does not match certificate public key identity".into()))
        } else {
            let versions = env.payload.get("protocol_versions");
            let speaks = versions.and_then(Value::as_array).is_some_and(|a| a.iter().any(|v| v.as_u64() == Some(1)));
            (!speaks).then(|| {
                let received = versions.map_or_else(|| "None".to_owned(), Value::to_string);
                refuse(
                    ErrorCode::IncompatibleVersion,
                    format!("no mutually supported protocol version. This agent supports: [1]. Received: {received}"),
                )
            })
        };
        if let Some(reply) = failure {
            self.reply_v2(send, reply, &env).await;
            // As upstream, the connection ends after a failed hello (once the
            // reply has had a moment to go out).
            let conn = link.conn.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                conn.close(0u32.into(), b"hello failed");
            });
            return;
        }
        let answer = match codec::reply(&env, Kind::Hello, hello_payload(self.agent_name.as_deref(), Some(1))) {
            Ok(r) => r,
            Err(e) => codec::error_reply(&env, ErrorCode::Internal, e.message(), false),
        };
        link.ready.store(true, Ordering::Release);
        self.register(&link.peer, &link.conn, false);
        self.reply_v2(send, answer, &env).await;
    }

    fn pong(&self) -> Map<String, Value> {
        let busy = self.busy.load(Ordering::Relaxed);
        let mut m = Map::new();
        m.insert("active_tasks".into(), Value::from(busy.min(u32::MAX as usize) as u64));
        if let Some(n) = &self.agent_name {
            m.insert("agent_name".into(), Value::from(n.as_str()));
        }
        m.insert("status".into(), Value::from(if busy == 0 { "idle" } else { "busy" }));
        m.insert("uptime_secs".into(), Value::from(self.started.elapsed().as_secs()));
        m
    }

    pub(super) async fn serve_bi_v2(self: Arc<Self>, link: Arc<Link>, mut send: quinn::SendStream, mut recv: quinn::RecvStream) {
        let me = self.identity.agent_id().to_owned();
        let Some(data) = read_message(&mut recv).await else {
            let _ = send.finish();
            return;
        };
        let env = match codec::decode(&data) {
            Ok(env) => env,
            Err(e) => {
                let Some((request, is_hello)) = header(&data, &me) else {
                    let _ = send.finish();
                    return;
                };
                let reply = if !is_hello && !link.ready.load(Ordering::Acquire) {
                    codec::error_reply(&request, ErrorCode::NotAuthorized, NOT_READY, false)
                } else {
                    match ErrorCode::of(&e) {
                        Some(ErrorCode::UnknownKind) => {
                            codec::error_reply(&request, ErrorCode::UnknownKind, "unknown message kind on bidirectional stream", false)
                        }
                        code => codec::error_reply(
                            &request,
                            code.unwrap_or(ErrorCode::InvalidEnvelope),
                            &format!("envelope validation failed: {}", e.message()),
                            false,
                        ),
                    }
                };
                return self.reply_v2(&mut send, reply, &request).await;
            }
        };
        if env.kind == Kind::Hello && env.ref_id.is_none() {
            return self.accept_hello(&link, env, &mut send).await;
        }
        if !link.ready.load(Ordering::Acquire) || !codec::same_agent(&env.from, &link.peer) {
            let reply = codec::error_reply(&env, ErrorCode::NotAuthorized, NOT_READY, false);
            return self.reply_v2(&mut send, reply, &env).await;
        }
        if !env.kind.expects_response() || env.ref_id.is_some() && env.kind == Kind::Hello {
            // Fire-and-forget on a bidirectional stream: delivered, no reply.
            if !self.replayed(&env.id) {
                self.emit(event(&link.peer, env)).await;
            }
            let _ = send.finish();
            return;
        }
        if self.replayed(&env.id) {
            // A replayed request gets no reply at all.
            let _ = send.finish();
            return;
        }
        let reply = match env.kind {
            Kind::Ping => codec::reply(&env, Kind::Pong, self.pong()),
            Kind::Discover => codec::reply(&env, Kind::Capabilities, self.capabilities.clone()),
            kind => {
                let reply_kind = if kind == Kind::Query { Kind::Response } else { Kind::Ack };
                match self.ask_program(&link.peer, &env.id, kind.as_str(), env.payload.clone()).await {
                    None => codec::reply(&env, reply_kind, canned_answer(kind)),
                    Some(Answer::Payload(p)) => codec::reply(&env, reply_kind, p).map_err(|e| {
                        crate::Error::new(
                            crate::Format::Axon,
                            "internal",
                            format!("the handler's reply is not a valid {reply_kind}: {}", e.message()),
                        )
                    }),
                    Some(Answer::Error { code, message, retryable }) => Ok(match ErrorCode::parse(&code) {
                        Some(c) => codec::error_reply(&env, c, &message, retryable),
                        None => codec::error_reply(&env, ErrorCode::Internal, &format!("{code}: {message}"), retryable),
                    }),
                }
            }
        };
        let reply = reply.unwrap_or_else(|e| codec::error_reply(&env, ErrorCode::Internal, e.message(), false));
        self.reply_v2(&mut send, reply, &env).await;
    }

    pub(super) async fn serve_uni_v2(self: Arc<Self>, link: Arc<Link>, mut recv: quinn::RecvStream) {
        let Some(data) = read_message(&mut recv).await else { return };
        let Ok(env) = codec::decode(&data) else { return };
        if !link.ready.load(Ordering::Acquire) || env.kind.expects_response() || !codec::same_agent(&env.from, &link.peer) {
            return;
        }
        if self.replayed(&env.id) {
            return;
        }
        self.emit(event(&link.peer, env)).await;
        drop(recv);
    }
}

fn event(from: &str, env: codec::Envelope) -> Event {
    let m = Message { from: from.to_owned(), id: env.id, kind: env.kind.as_str().to_owned(), ref_id: env.ref_id, payload: env.payload };
    if env.kind == Kind::Error {
        Event::Error(m)
    } else {
        Event::Message(m)
    }
}
