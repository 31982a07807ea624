//! The sans-IO AXON v2 [`Session`]: hello gating, reply matching, replays.

use super::*;
use std::collections::{HashMap, VecDeque};

/// Configuration of a [`Session`].
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// This agent's id.
    pub local_id: String,
    /// Versions offered in hello, ascending (default `[1]`).
    pub protocol_versions: Vec<u8>,
    /// Optional kinds advertised in hello (default: all six).
    pub features: Vec<String>,
    pub agent_name: Option<String>,
    /// When set, only a hello from this agent is accepted (what TLS pinning
    /// guarantees in upstream's transport).
    pub expected_peer: Option<String>,
    pub replay_window_ms: u64,
    pub replay_capacity: usize,
}

impl SessionConfig {
    pub fn new(local_id: &str) -> SessionConfig {
        SessionConfig {
            local_id: local_id.to_owned(),
            protocol_versions: vec![PROTOCOL_VERSION],
            features: default_features(),
            agent_name: None,
            expected_peer: None,
            replay_window_ms: REPLAY_WINDOW_MS,
            replay_capacity: REPLAY_CACHE_CAPACITY,
        }
    }
}

/// A request this side sent and still expects an answer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub id: String,
    pub kind: Kind,
    /// The agent it was sent to; only that agent's replies match it.
    pub to: String,
    pub sent_ms: u64,
    /// When the caller gives up (`deadline_ms` of the payload, else 30 s).
    pub deadline_ms: u64,
    /// For a delegate: whether it asked for a `result` (`report_back`).
    pub report_back: bool,
    /// A delegate that was acknowledged and now awaits its `result` (it no
    /// longer expires; [`Session::forget`] it when giving up).
    pub awaiting_result: bool,
}

/// Why [`Session::receive`] dropped a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// Not a valid message, on a stream that gets no reply.
    Malformed,
    /// Before hello completed, on a unidirectional stream.
    BeforeHello,
    /// Its id was seen within the replay window.
    Replay,
    /// A kind on the wrong stream type (a request on a unidirectional
    /// stream, a hello reply nobody asked for, ...).
    WrongStream,
    /// An unknown kind on a unidirectional stream.
    UnknownKind,
    /// A reply whose kind does not answer the request it refers to.
    UnexpectedReply,
}

/// What to do with a received message.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// Hand the message to the application. For a reply, `in_reply_to` is
    /// the request it answers. A bidirectional request must be answered
    /// (build the answer with [`reply`]).
    Deliver { envelope: Envelope, in_reply_to: Option<Pending> },
    /// Write `reply` back on the same bidirectional stream. `delivered` is
    /// the received message when the application should see it too (an
    /// accepted hello).
    Respond { reply: Envelope, delivered: Option<Envelope> },
    /// Ignore the message; `message` says why.
    Dropped { reason: DropReason, message: String },
}

/// Where [`Session::send`] says to write a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Open a new bidirectional stream and read the reply from it.
    OpenBidirectional,
    /// Write on the stream the request came in on, then finish it.
    ReplyOnRequestStream,
    /// Open a new unidirectional stream.
    OpenUnidirectional,
}

impl Route {
    /// The snake_case name the bindings and vectors use.
    pub fn as_str(self) -> &'static str {
        match self {
            Route::OpenBidirectional => "open_bidirectional",
            Route::ReplyOnRequestStream => "reply_on_request_stream",
            Route::OpenUnidirectional => "open_unidirectional",
        }
    }
}

impl DropReason {
    /// The snake_case name the bindings and vectors use.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Malformed => "malformed",
            DropReason::BeforeHello => "before_hello",
            DropReason::Replay => "replay",
            DropReason::WrongStream => "wrong_stream",
            DropReason::UnknownKind => "unknown_kind",
            DropReason::UnexpectedReply => "unexpected_reply",
        }
    }
}

/// An encoded message and where to write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outbound {
    pub bytes: Vec<u8>,
    pub route: Route,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    AwaitingHello,
    Ready {
        peer: String,
        version: u8,
        peer_features: Vec<String>,
    },
    /// Our hello was refused; only a new hello can help.
    Refused,
}

/// A sans-IO AXON connection endpoint: feed it received message bodies and
/// the messages to send, with the current time in milliseconds; it enforces
/// the protocol rules and says what to do. It never reads a clock itself.
///
/// Rules enforced (upstream's `transport/connection.rs`): nothing but hello
/// until a hello exchange completes — a unidirectional message is dropped,
/// a bidirectional request is answered `not_authorized`; an unknown kind on
/// a bidirectional stream is answered `unknown_kind`, an invalid request
/// `invalid_envelope`; requests on unidirectional streams are dropped;
/// replies are matched to requests by `ref`; an id seen in the last
/// `replay_window_ms` (300 s) is dropped as a replay.
#[derive(Debug, Clone)]
pub struct Session {
    config: SessionConfig,
    state: State,
    /// Requests we sent, by id.
    pending: HashMap<String, Pending>,
    /// Bidirectional requests we received and have not answered, by id.
    awaiting_reply: HashMap<String, Kind>,
    seen: HashMap<String, u64>,
    seen_order: VecDeque<(String, u64)>,
}

impl Session {
    pub fn new(mut config: SessionConfig) -> Result<Session> {
        config.local_id = check_agent_id("the session's local id", &config.local_id)?;
        if let Some(p) = &config.expected_peer {
            config.expected_peer = Some(check_agent_id("the expected peer", p)?);
        }
        if config.protocol_versions.is_empty() || config.protocol_versions.contains(&0) {
            return Err(err(ErrorCode::IncompatibleVersion, "a session needs protocol versions of 1 or more, e.g. [1]"));
        }
        Ok(Session {
            config,
            state: State::AwaitingHello,
            pending: HashMap::new(),
            awaiting_reply: HashMap::new(),
            seen: HashMap::new(),
            seen_order: VecDeque::new(),
        })
    }

    pub fn local_id(&self) -> &str {
        &self.config.local_id
    }

    /// Whether a hello exchange has completed.
    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready { .. })
    }

    /// The authenticated peer, once hello completed.
    pub fn peer(&self) -> Option<&str> {
        match &self.state {
            State::Ready { peer, .. } => Some(peer),
            _ => None,
        }
    }

    /// The negotiated protocol version, once hello completed.
    pub fn version(&self) -> Option<u8> {
        match &self.state {
            State::Ready { version, .. } => Some(*version),
            _ => None,
        }
    }

    /// The optional kinds the peer advertised.
    pub fn peer_features(&self) -> Option<&[String]> {
        match &self.state {
            State::Ready { peer_features, .. } => Some(peer_features),
            _ => None,
        }
    }

    /// Requests sent and not yet answered.
    pub fn pending(&self) -> impl Iterator<Item = &Pending> {
        self.pending.values()
    }

    /// Forget and return the requests whose deadline has passed (answer
    /// them locally with a `timeout`).
    pub fn expire(&mut self, now_ms: u64) -> Vec<Pending> {
        let mut gone: Vec<Pending> = Vec::new();
        self.pending.retain(|_, p| {
            let late = !p.awaiting_result && now_ms.saturating_sub(p.sent_ms) > p.deadline_ms;
            if late {
                gone.push(p.clone());
            }
            !late
        });
        gone.sort_by(|a, b| a.sent_ms.cmp(&b.sent_ms).then_with(|| a.id.cmp(&b.id)));
        gone
    }

    /// Stop waiting for the answer to a request.
    pub fn forget(&mut self, id: &str) -> Option<Pending> {
        self.pending.remove(&id.to_ascii_lowercase())
    }

    /// Start the handshake: the hello request to send to `to` on a new
    /// bidirectional stream.
    pub fn hello(&mut self, to: &str, now_ms: u64) -> Result<Outbound> {
        let payload = hello_payload(&self.config.protocol_versions, None, self.config.agent_name.as_deref(), &self.config.features);
        let env = Envelope::new_with(&self.config.local_id, to, Kind::Hello, payload, new_id(), now_ms.max(1))?;
        self.state = match &self.state {
            State::Refused => State::AwaitingHello,
            s => s.clone(),
        };
        self.send(&env, now_ms)
    }

    /// Check and encode a message to send, and say where to write it.
    /// Requests are remembered so that their replies can be matched.
    pub fn send(&mut self, env: &Envelope, now_ms: u64) -> Result<Outbound> {
        if !same_agent(&env.from, &self.config.local_id) {
            return Err(invalid(format!(
                "\"from\" is {}, but this session's agent is {}; send as the local agent",
                env.from, self.config.local_id
            )));
        }
        let answering = env.ref_id.as_ref().and_then(|r| self.awaiting_reply.get(r).map(|k| (r.clone(), *k)));
        let is_hello_traffic = env.kind == Kind::Hello || answering.as_ref().is_some_and(|(_, k)| *k == Kind::Hello);
        match &self.state {
            State::Ready { peer, peer_features, .. } if !is_hello_traffic => {
                if !same_agent(&env.to, peer) {
                    return Err(err(
                        ErrorCode::PeerNotFound,
                        format!("this session is connected to {peer}, not {}; use that peer's session", env.to),
                    ));
                }
                // Only requests need the peer's support up front; ack, result
                // and capabilities answer requests the peer itself sent.
                if env.kind.expects_response() && env.kind.is_optional() && !peer_features.iter().any(|f| f == env.kind.as_str()) {
                    return Err(err(
                        ErrorCode::UnknownKind,
                        format!(
                            "{peer} did not list {:?} in its hello features {peer_features:?}, so it would answer \
                             unknown_kind; use the required kinds (ping, query, notify) instead",
                            env.kind.as_str()
                        ),
                    ));
                }
            }
            State::Ready { .. } => {}
            _ if is_hello_traffic || answering.is_some() => {}
            _ => {
                return Err(err(
                    ErrorCode::NotAuthorized,
                    format!(
                        "cannot send a {} yet: the hello handshake must complete before other messages; call \
                         hello() and wait for the peer's hello reply",
                        env.kind
                    ),
                ))
            }
        }
        if let Some((_, request_kind)) = &answering {
            if !request_kind.response_kinds().contains(&env.kind) {
                return Err(invalid(format!(
                    "a {request_kind} is answered with {}, not {}",
                    request_kind.response_kinds().iter().map(|k| k.as_str()).collect::<Vec<_>>().join(" or "),
                    env.kind
                )));
            }
        }
        let bytes = encode(env)?;
        let route = if let Some((r, _)) = answering {
            self.awaiting_reply.remove(&r);
            Route::ReplyOnRequestStream
        } else if env.kind.expects_response() {
            let deadline_ms = env.payload.get("deadline_ms").and_then(Value::as_u64).unwrap_or(DEFAULT_DEADLINE_MS);
            let report_back = env.kind == Kind::Delegate && env.payload.get("report_back") != Some(&Value::Bool(false));
            self.pending.insert(
                env.id.clone(),
                Pending {
                    id: env.id.clone(),
                    kind: env.kind,
                    to: env.to.to_ascii_lowercase(),
                    sent_ms: now_ms,
                    deadline_ms,
                    report_back,
                    awaiting_result: false,
                },
            );
            Route::OpenBidirectional
        } else {
            Route::OpenUnidirectional
        };
        Ok(Outbound { bytes, route })
    }

    /// Whether `id` was seen within the window; records it if not.
    fn is_replay(&mut self, id: &str, now_ms: u64) -> bool {
        let window = self.config.replay_window_ms;
        while let Some((front, t)) = self.seen_order.front() {
            if now_ms.saturating_sub(*t) <= window {
                break;
            }
            if self.seen.get(front) == Some(t) {
                self.seen.remove(front);
            }
            self.seen_order.pop_front();
        }
        if self.seen.contains_key(id) {
            return true;
        }
        self.seen.insert(id.to_owned(), now_ms);
        self.seen_order.push_back((id.to_owned(), now_ms));
        while self.seen.len() > self.config.replay_capacity {
            match self.seen_order.pop_front() {
                Some((old, t)) => {
                    if self.seen.get(&old) == Some(&t) {
                        self.seen.remove(&old);
                    }
                }
                None => break,
            }
        }
        false
    }

    fn peer_is(&self, from: &str) -> bool {
        matches!(&self.state, State::Ready { peer, .. } if same_agent(peer, from))
    }

    fn respond(&self, request: &Envelope, code: ErrorCode, message: String, now_ms: u64) -> Inbound {
        let mut reply = error_reply_with(request, code, &message, false, new_id(), now_ms);
        reply.from = self.config.local_id.clone();
        Inbound::Respond { reply, delivered: None }
    }

    fn dropped(reason: DropReason, message: impl Into<String>) -> Inbound {
        Inbound::Dropped { reason, message: message.into() }
    }

    /// Process one received message body. `stream` is the kind of stream it
    /// arrived on: a reply read from a stream this side opened is passed as
    /// `Bidirectional` too.
    pub fn receive(&mut self, data: &[u8], stream: StreamType, now_ms: u64) -> Inbound {
        let bidi = stream == StreamType::Bidirectional;
        let env = match decode(data) {
            Ok(env) => env,
            Err(e) => return self.receive_invalid(data, bidi, e, now_ms),
        };

        // A reply to one of our requests.
        if let Some(p) = env.ref_id.as_ref().and_then(|r| self.pending.get(r)).cloned() {
            return self.receive_reply(env, p, now_ms);
        }

        if env.kind == Kind::Hello && env.ref_id.is_none() {
            if !bidi {
                return Self::dropped(DropReason::WrongStream, "a hello must come on a bidirectional stream");
            }
            return self.receive_hello(env, now_ms);
        }

        if !self.peer_is(&env.from) {
            return if bidi && env.ref_id.is_none() {
                self.respond(&env, ErrorCode::NotAuthorized, "hello handshake must complete before other requests".into(), now_ms)
            } else {
                Self::dropped(
                    DropReason::BeforeHello,
                    format!("dropped a {} from {}: no completed hello with that agent", env.kind, env.from),
                )
            };
        }

        if env.kind == Kind::Hello {
            return Self::dropped(DropReason::WrongStream, "a hello reply that answers no hello sent by this side");
        }
        if !bidi && env.kind.expects_response() {
            return Self::dropped(DropReason::WrongStream, format!("a {} is a request and must come on a bidirectional stream", env.kind));
        }
        if self.is_replay(&env.id, now_ms) {
            return Self::dropped(
                DropReason::Replay,
                format!("message {} was already received within the last {} ms", env.id, self.config.replay_window_ms),
            );
        }
        if bidi && env.kind.expects_response() {
            self.awaiting_reply.insert(env.id.clone(), env.kind);
        }
        Inbound::Deliver { envelope: env, in_reply_to: None }
    }

    fn receive_invalid(&mut self, data: &[u8], bidi: bool, e: Error, now_ms: u64) -> Inbound {
        // Answer when the request can be addressed: its id and sender are
        // readable. Otherwise, and on unidirectional streams, drop it.
        let header = parse_json(data, MAX_MESSAGE_SIZE).ok().and_then(|v| {
            let o = v.as_object()?;
            let id = o.get("id")?.as_str().and_then(Uuid::parse)?.to_string();
            let from = o.get("from")?.as_str().filter(|s| is_agent_id(s))?.to_ascii_lowercase();
            let has_ref = !matches!(o.get("ref"), None | Some(Value::Null));
            let v = o.get("v").and_then(Value::as_u64).filter(|v| (1..=255).contains(v)).unwrap_or(1) as u8;
            let is_hello = o.get("kind").and_then(Value::as_str) == Some("hello");
            Some((id, from, has_ref, v, is_hello))
        });
        let code = ErrorCode::of(&e).unwrap_or(ErrorCode::InvalidEnvelope);
        match header {
            Some((id, from, false, v, is_hello)) if bidi => {
                let request = Envelope {
                    v,
                    id,
                    from,
                    to: self.config.local_id.clone(),
                    ts: now_ms.max(1),
                    kind: Kind::Ping,
                    ref_id: None,
                    payload: Map::new(),
                };
                if !is_hello && !self.peer_is(&request.from) {
                    return self.respond(
                        &request,
                        ErrorCode::NotAuthorized,
                        "hello handshake must complete before other requests".into(),
                        now_ms,
                    );
                }
                self.respond(&request, code, e.message().to_owned(), now_ms)
            }
            _ => Self::dropped(if code == ErrorCode::UnknownKind { DropReason::UnknownKind } else { DropReason::Malformed }, e.to_string()),
        }
    }

    fn receive_hello(&mut self, env: Envelope, now_ms: u64) -> Inbound {
        if let Some(expected) = &self.config.expected_peer {
            if !same_agent(expected, &env.from) {
                let m = format!("this agent expects a hello from {expected}, not {}", env.from);
                return self.respond(&env, ErrorCode::NotAuthorized, m, now_ms);
            }
        }
        if !same_agent(&env.to, &self.config.local_id) {
            let m = format!("this hello is addressed to {}, but this agent is {}; look the peer up again", env.to, self.config.local_id);
            return self.respond(&env, ErrorCode::PeerNotFound, m, now_ms);
        }
        let remote: Vec<u8> = env
            .payload
            .get("protocol_versions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_u64().map(|n| n as u8)).collect())
            .unwrap_or_default();
        let version = match negotiate(&self.config.protocol_versions, &remote) {
            Ok(v) => v,
            Err(e) => return self.respond(&env, ErrorCode::IncompatibleVersion, e.message().to_owned(), now_ms),
        };
        let payload =
            hello_payload(&self.config.protocol_versions, Some(version), self.config.agent_name.as_deref(), &self.config.features);
        let reply = Envelope {
            v: env.v,
            id: new_id(),
            from: self.config.local_id.clone(),
            to: env.from.clone(),
            ts: now_ms.max(1),
            kind: Kind::Hello,
            ref_id: Some(env.id.clone()),
            payload,
        };
        self.state = State::Ready { peer: env.from.clone(), version, peer_features: string_list(&env.payload, "features") };
        Inbound::Respond { reply, delivered: Some(env) }
    }

    fn receive_reply(&mut self, env: Envelope, p: Pending, now_ms: u64) -> Inbound {
        let allowed: &[Kind] = if p.awaiting_result { p.kind.later_responses() } else { p.kind.response_kinds() };
        if !allowed.contains(&env.kind) {
            return Self::dropped(
                DropReason::UnexpectedReply,
                format!(
                    "a {} does not answer the {} {} (expected {})",
                    env.kind,
                    p.kind,
                    p.id,
                    allowed.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(" or ")
                ),
            );
        }
        if !same_agent(&env.from, &p.to) {
            return Self::dropped(DropReason::UnexpectedReply, format!("a reply from {} to the {} sent to {}", env.from, p.kind, p.to));
        }
        if self.is_replay(&env.id, now_ms) {
            return Self::dropped(DropReason::Replay, format!("message {} was already received", env.id));
        }
        match (p.kind, env.kind) {
            (Kind::Hello, Kind::Hello) => {
                let selected = env.payload.get("selected_version").and_then(Value::as_u64);
                match selected {
                    Some(v) if v <= 255 && self.config.protocol_versions.contains(&(v as u8)) => {
                        self.state =
                            State::Ready { peer: env.from.clone(), version: v as u8, peer_features: string_list(&env.payload, "features") };
                    }
                    _ => {
                        return Self::dropped(
                            DropReason::Malformed,
                            format!(
                                "the hello reply selects version {selected:?}, which this agent did not offer ({:?})",
                                self.config.protocol_versions
                            ),
                        )
                    }
                }
            }
            (Kind::Hello, _) => self.state = State::Refused,
            _ => {}
        }
        let keep = p.report_back && env.kind == Kind::Ack && env.payload.get("accepted") == Some(&Value::Bool(true));
        if keep {
            if let Some(q) = self.pending.get_mut(&p.id) {
                q.awaiting_result = true;
            }
        } else {
            self.pending.remove(&p.id);
        }
        Inbound::Deliver { envelope: env, in_reply_to: Some(p) }
    }
}

fn string_list(payload: &Map<String, Value>, key: &str) -> Vec<String> {
    payload.get(key).and_then(Value::as_array).map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const A: &str = "ed25519.fe812c12f3ab4ce6ac5db69ac352f906";
    const B: &str = "ed25519.b600306cfa76723fdec395e53a9b3d9f";

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn agent_ids() {
        assert_eq!(agent_id_from_seed(&[7; 32]).unwrap(), A);
        assert_eq!(agent_id(&[0; 31]).unwrap_err().code(), "invalid_envelope");
        assert_eq!(agent_id_from_seed(&[0; 33]).unwrap_err().code(), "invalid_envelope");
        assert!(same_agent(A, &A.to_uppercase().replacen("ED25519", "ed25519", 1)));
        assert!(!same_agent(A, B));
        assert_eq!(normalize_agent_id("ed25519.FE812C12F3AB4CE6AC5DB69AC352F906").unwrap(), A);
        assert_eq!(normalize_agent_id("x25519.fe812c12f3ab4ce6ac5db69ac352f906").unwrap_err().code(), "incompatible_version");
    }

    #[test]
    fn negotiation() {
        assert_eq!(negotiate(&[1, 2], &[2, 1]).unwrap(), 2);
        let e = negotiate(&[1], &[2, 3]).unwrap_err();
        assert_eq!(e.code(), "incompatible_version");
        assert!(e.message().contains("[1]") && e.message().contains("[2, 3]"), "{e}");
        assert_eq!(negotiate(&[0], &[0]).unwrap_err().code(), "incompatible_version");
    }

    #[test]
    fn builders_swap_and_stamp() {
        let q = Envelope::new(A, B, Kind::Query, obj(json!({"question": "?"}))).unwrap();
        assert_eq!(Uuid::parse(&q.id).unwrap().0[6] >> 4, 4);
        assert!(q.ts > 1_700_000_000_000);
        let r = reply(&q, Kind::Response, obj(json!({"data": null, "summary": "none"}))).unwrap();
        assert_eq!((r.from.as_str(), r.to.as_str(), r.ref_id.as_deref()), (B, A, Some(q.id.as_str())));
        assert_ne!(r.id, q.id);
        let e = reply(&q, Kind::Pong, obj(json!({"status": "idle", "uptime_secs": 0, "active_tasks": 0}))).unwrap_err();
        assert!(e.message().contains("a query is answered with response or error"), "{e}");
        let e = error_reply(&q, ErrorCode::Timeout, "took too long; ask again with a larger deadline_ms", true);
        assert_eq!(e.payload["retryable"], json!(true));
        assert_eq!(decode(&encode(&e).unwrap()).unwrap(), e);
        // A payload that breaks its schema cannot be built or encoded.
        assert!(Envelope::new(A, B, Kind::Query, Map::new()).is_err());
        let mut bad = q.clone();
        bad.payload.insert("max_tokens".into(), json!(-1));
        assert_eq!(encode(&bad).unwrap_err().code(), "invalid_envelope");
    }

    #[test]
    fn defaults_fill_only_on_request() {
        let body = br#"{"v":1,"id":"6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1","from":"ed25519.fe812c12f3ab4ce6ac5db69ac352f906","to":"ed25519.b600306cfa76723fdec395e53a9b3d9f","ts":5,"kind":"delegate","payload":{"task":"t"}}"#;
        let filled = decode(body).unwrap();
        assert_eq!(filled.payload, obj(json!({"task": "t", "priority": "normal", "report_back": true})));
        let raw = decode_with(body, &DecodeOptions { fill_defaults: false, ..Default::default() }).unwrap();
        assert_eq!(encode(&raw).unwrap(), body.to_vec());
        assert_eq!(payload_default(Kind::Query, "deadline_ms"), Some(json!(30000)));
        assert_eq!(payload_fields(Kind::Ack), vec![("accepted", true), ("estimated_ms", false)]);
    }

    fn ready_pair() -> (Session, Session) {
        let mut a = Session::new(SessionConfig::new(A)).unwrap();
        let mut b = Session::new(SessionConfig::new(B)).unwrap();
        let hello = a.hello(B, 1000).unwrap();
        let Inbound::Respond { reply, delivered: Some(_) } = b.receive(&hello.bytes, StreamType::Bidirectional, 1001) else {
            panic!("hello not answered")
        };
        let back = encode(&reply).unwrap();
        assert!(matches!(a.receive(&back, StreamType::Bidirectional, 1002), Inbound::Deliver { .. }));
        assert!(a.is_ready() && b.is_ready());
        assert_eq!(a.peer_features().unwrap(), default_features().as_slice());
        (a, b)
    }

    #[test]
    fn session_delegate_cancel_roundtrip() {
        let (mut a, mut b) = ready_pair();
        let d = Envelope::new_with(A, B, Kind::Delegate, obj(json!({"task": "t"})), new_id(), 2000).unwrap();
        let out = a.send(&d, 2000).unwrap();
        assert_eq!(out.route, Route::OpenBidirectional);
        let Inbound::Deliver { envelope: got, .. } = b.receive(&out.bytes, StreamType::Bidirectional, 2001) else { panic!() };
        let ack = reply(&got, Kind::Ack, obj(json!({"accepted": true}))).unwrap();
        assert_eq!(b.send(&ack, 2002).unwrap().route, Route::ReplyOnRequestStream);
        // The same request cannot be answered twice on its stream.
        assert_eq!(
            b.send(&reply(&got, Kind::Ack, obj(json!({"accepted": true}))).unwrap(), 2003).unwrap().route,
            Route::OpenUnidirectional
        );
        let mut cancel = Envelope::new_with(A, B, Kind::Cancel, obj(json!({"reason": "plans changed"})), new_id(), 3000).unwrap();
        cancel.ref_id = Some(d.id.clone());
        assert_eq!(a.send(&cancel, 3000).unwrap().route, Route::OpenBidirectional);
        assert_eq!(a.pending().count(), 2);
        assert!(a.forget(&d.id).is_some());
        assert_eq!(a.pending().count(), 1);
    }

    #[test]
    fn replay_cache_is_bounded() {
        let mut config = SessionConfig::new(B);
        config.replay_capacity = 2;
        let mut s = Session::new(config).unwrap();
        for (i, id) in ["1", "2", "3"].iter().enumerate() {
            assert!(!s.is_replay(id, i as u64));
        }
        assert_eq!(s.seen.len(), 2);
        assert!(!s.is_replay("1", 10), "evicted ids are forgotten");
        assert!(s.is_replay("3", 11));
    }

    #[test]
    fn sending_before_hello_is_refused() {
        let mut a = Session::new(SessionConfig::new(A)).unwrap();
        let q = Envelope::new(A, B, Kind::Query, obj(json!({"question": "?"}))).unwrap();
        let e = a.send(&q, 1).unwrap_err();
        assert_eq!(e.code(), "not_authorized");
        assert!(e.message().contains("hello"), "{e}");
        assert!(Session::new(SessionConfig::new("agent-id")).is_err());
    }
}
