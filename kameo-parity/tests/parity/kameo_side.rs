//! The kameo side: its wire path (libp2p's request-response cbor codec over
//! an in-memory stream) and conversions between its types and polywire's.

use futures::executor::block_on;
use futures::io::Cursor;
use kameo::actor::ActorId as KActorId;
use kameo::error::{
    ActorStopReason as KStop, Infallible as KInfallible, PanicError as KPanic, PanicReason as KReason, RemoteSendError as KErr,
};
use kameo::remote::messaging::{SwarmRequest as KReq, SwarmResponse as KResp};
use kameo::remote::registry::ActorRegistration as KReg;
use libp2p::request_response::{cbor::codec::Codec as CborCodec, Codec as _};
use libp2p::StreamProtocol;
use polywire::kameo as pk;
use std::borrow::Cow;
use std::convert::Infallible;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

const PROTOCOL: StreamProtocol = StreamProtocol::new("/kameo/messaging/1.0.0");

/// What kameo made of an input.
#[derive(Debug)]
pub enum Outcome<T> {
    Ok(T),
    Err(#[allow(dead_code)] String),
    Panic,
}

/// kameo panics on short actor ids; keep those expected panics off stderr.
pub fn quiet_kameo_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_kameo = info.location().is_some_and(|l| l.file().contains("kameo-0.22.2"));
            if !in_kameo {
                default(info);
            }
        }));
    });
}

fn codec() -> CborCodec<KReq, KResp> {
    CborCodec::default()
}

pub fn k_write_request(req: KReq) -> Vec<u8> {
    let mut io = Cursor::new(Vec::new());
    block_on(codec().write_request(&PROTOCOL, &mut io, req)).expect("kameo writes the request");
    io.into_inner()
}

pub fn k_write_response(resp: KResp) -> Vec<u8> {
    let mut io = Cursor::new(Vec::new());
    block_on(codec().write_response(&PROTOCOL, &mut io, resp)).expect("kameo writes the response");
    io.into_inner()
}

pub fn k_read_request(bytes: &[u8]) -> Outcome<KReq> {
    let mut io = Cursor::new(bytes.to_vec());
    match catch_unwind(AssertUnwindSafe(|| block_on(codec().read_request(&PROTOCOL, &mut io)))) {
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(e)) => Outcome::Err(e.to_string()),
        Err(_) => Outcome::Panic,
    }
}

pub fn k_read_response(bytes: &[u8]) -> Outcome<KResp> {
    let mut io = Cursor::new(bytes.to_vec());
    match catch_unwind(AssertUnwindSafe(|| block_on(codec().read_response(&PROTOCOL, &mut io)))) {
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(e)) => Outcome::Err(e.to_string()),
        Err(_) => Outcome::Panic,
    }
}

pub fn k_read_registration(bytes: &[u8]) -> Outcome<(pk::ActorId, String)> {
    match catch_unwind(|| KReg::from_bytes(bytes).map(|r| (p_actor_id(&r.actor_id), r.remote_id.into_owned()))) {
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(e)) => Outcome::Err(e.to_string()),
        Err(_) => Outcome::Panic,
    }
}

// ---------------------------------------------------------------- ids

pub fn k_peer(p: &pk::PeerId) -> libp2p::PeerId {
    libp2p::PeerId::from_bytes(p.as_bytes()).expect("libp2p reads our peer id")
}

pub fn k_actor_id(a: &pk::ActorId) -> KActorId {
    match &a.peer_id {
        None => KActorId::new(a.sequence_id),
        Some(p) => KActorId::new_with_peer_id(a.sequence_id, k_peer(p)),
    }
}

pub fn p_actor_id(a: &KActorId) -> pk::ActorId {
    pk::ActorId::new(a.sequence_id(), a.peer_id().map(|p| pk::PeerId::from_bytes(&p.to_bytes()).expect("peer id")))
}

pub fn k_registration(r: &pk::ActorRegistration) -> KReg<'static> {
    KReg::new(k_actor_id(&r.actor_id), Cow::Owned(r.remote_id.clone()))
}

// ---------------------------------------------------------------- errors

fn k_reason(r: pk::PanicReason) -> KReason {
    match r {
        pk::PanicReason::HandlerPanic => KReason::HandlerPanic,
        pk::PanicReason::OnMessage => KReason::OnMessage,
        pk::PanicReason::OnStart => KReason::OnStart,
        pk::PanicReason::OnPanic => KReason::OnPanic,
        pk::PanicReason::OnLinkDied => KReason::OnLinkDied,
        pk::PanicReason::OnStop => KReason::OnStop,
        pk::PanicReason::OnUndelivered => KReason::OnUndelivered,
        pk::PanicReason::Next => KReason::Next,
    }
}

fn p_reason(r: KReason) -> pk::PanicReason {
    pk::PanicReason::ALL.into_iter().find(|p| k_reason(*p) == r).expect("every reason is mapped")
}

/// An error kameo's `PanicError` does not see as a string, so its `Display`
/// (and so the wire `err`) is just the reason's text.
#[derive(Debug)]
struct NotAString;

/// The kameo `PanicError` whose wire form is `p`, when kameo can make one:
/// kameo writes `"{reason}: {message}"` for string errors, else `"{reason}"`.
fn k_panic(p: &pk::PanicError) -> Option<KPanic> {
    let desc = p.reason.description();
    let reason = k_reason(p.reason);
    if p.err == desc {
        Some(KPanic::new(Box::new(NotAString), reason))
    } else {
        let message = p.err.strip_prefix(desc)?.strip_prefix(": ")?;
        Some(KPanic::new(Box::new(message.to_owned()), reason))
    }
}

/// A decoded kameo `PanicError` holds the wire `err` as its string error.
fn p_panic(p: &KPanic) -> pk::PanicError {
    pk::PanicError { err: p.with_str(str::to_owned).expect("decoded errors are strings"), reason: p_reason(p.reason()) }
}

pub fn k_stop(r: &pk::ActorStopReason) -> Option<KStop> {
    Some(match r {
        pk::ActorStopReason::Normal => KStop::Normal,
        pk::ActorStopReason::SupervisorRestart => KStop::SupervisorRestart,
        pk::ActorStopReason::Killed => KStop::Killed,
        pk::ActorStopReason::PeerDisconnected => KStop::PeerDisconnected,
        pk::ActorStopReason::Panicked(p) => KStop::Panicked(k_panic(p)?),
        pk::ActorStopReason::LinkDied { id, reason } => KStop::LinkDied { id: k_actor_id(id), reason: Box::new(k_stop(reason)?) },
    })
}

pub fn p_stop(r: &KStop) -> pk::ActorStopReason {
    match r {
        KStop::Normal => pk::ActorStopReason::Normal,
        KStop::SupervisorRestart => pk::ActorStopReason::SupervisorRestart,
        KStop::Killed => pk::ActorStopReason::Killed,
        KStop::PeerDisconnected => pk::ActorStopReason::PeerDisconnected,
        KStop::Panicked(p) => pk::ActorStopReason::Panicked(p_panic(p)),
        KStop::LinkDied { id, reason } => pk::ActorStopReason::LinkDied { id: p_actor_id(id), reason: Box::new(p_stop(reason)) },
    }
}

fn k_err<E, F>(e: &pk::RemoteSendError<E>, f: fn(&E) -> F) -> KErr<F> {
    use pk::RemoteSendError as P;
    match e {
        P::ActorNotRunning => KErr::ActorNotRunning,
        P::ActorStopped => KErr::ActorStopped,
        P::UnknownActor { actor_remote_id } => KErr::UnknownActor { actor_remote_id: actor_remote_id.clone().into() },
        P::UnknownMessage { actor_remote_id, message_remote_id } => {
            KErr::UnknownMessage { actor_remote_id: actor_remote_id.clone().into(), message_remote_id: message_remote_id.clone().into() }
        }
        P::BadActorType => KErr::BadActorType,
        P::MailboxFull => KErr::MailboxFull,
        P::ReplyTimeout => KErr::ReplyTimeout,
        P::HandlerError(x) => KErr::HandlerError(f(x)),
        P::SerializeMessage(s) => KErr::SerializeMessage(s.clone()),
        P::DeserializeMessage(s) => KErr::DeserializeMessage(s.clone()),
        P::SerializeReply(s) => KErr::SerializeReply(s.clone()),
        P::SerializeHandlerError(s) => KErr::SerializeHandlerError(s.clone()),
        P::DeserializeHandlerError(s) => KErr::DeserializeHandlerError(s.clone()),
        P::SwarmNotBootstrapped => KErr::SwarmNotBootstrapped,
        P::DialFailure => KErr::DialFailure,
        P::NetworkTimeout => KErr::NetworkTimeout,
        P::ConnectionClosed => KErr::ConnectionClosed,
        P::UnsupportedProtocols => KErr::UnsupportedProtocols,
    }
}

fn p_err<E, F>(e: &KErr<E>, f: fn(&E) -> F) -> pk::RemoteSendError<F> {
    use pk::RemoteSendError as P;
    match e {
        KErr::ActorNotRunning => P::ActorNotRunning,
        KErr::ActorStopped => P::ActorStopped,
        KErr::UnknownActor { actor_remote_id } => P::UnknownActor { actor_remote_id: actor_remote_id.to_string() },
        KErr::UnknownMessage { actor_remote_id, message_remote_id } => {
            P::UnknownMessage { actor_remote_id: actor_remote_id.to_string(), message_remote_id: message_remote_id.to_string() }
        }
        KErr::BadActorType => P::BadActorType,
        KErr::MailboxFull => P::MailboxFull,
        KErr::ReplyTimeout => P::ReplyTimeout,
        KErr::HandlerError(x) => P::HandlerError(f(x)),
        KErr::SerializeMessage(s) => P::SerializeMessage(s.clone()),
        KErr::DeserializeMessage(s) => P::DeserializeMessage(s.clone()),
        KErr::SerializeReply(s) => P::SerializeReply(s.clone()),
        KErr::SerializeHandlerError(s) => P::SerializeHandlerError(s.clone()),
        KErr::DeserializeHandlerError(s) => P::DeserializeHandlerError(s.clone()),
        KErr::SwarmNotBootstrapped => P::SwarmNotBootstrapped,
        KErr::DialFailure => P::DialFailure,
        KErr::NetworkTimeout => P::NetworkTimeout,
        KErr::ConnectionClosed => P::ConnectionClosed,
        KErr::UnsupportedProtocols => P::UnsupportedProtocols,
        KErr::Io(_) => panic!("Io has no wire form"),
    }
}

fn to_k_infallible(e: &Infallible) -> KInfallible {
    match *e {}
}

fn to_p_infallible(e: &KInfallible) -> Infallible {
    match *e {}
}

#[allow(clippy::ptr_arg)] // used as `fn(&E)` with `E = Vec<u8>`
fn clone_bytes(b: &Vec<u8>) -> Vec<u8> {
    b.clone()
}

fn k_unit(r: &Result<(), pk::RemoteSendError>) -> Result<(), KErr> {
    r.as_ref().map(|_| ()).map_err(|e| k_err(e, to_k_infallible))
}

fn p_unit(r: &Result<(), KErr>) -> Result<(), pk::RemoteSendError> {
    r.as_ref().map(|_| ()).map_err(|e| p_err(e, to_p_infallible))
}

// ---------------------------------------------------------------- messages

pub fn k_request(r: &pk::SwarmRequest) -> Option<KReq> {
    use pk::SwarmRequest as P;
    Some(match r {
        P::Ask { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate } => KReq::Ask {
            actor_id: k_actor_id(actor_id),
            actor_remote_id: actor_remote_id.clone().into(),
            message_remote_id: message_remote_id.clone().into(),
            payload: payload.clone(),
            mailbox_timeout: *mailbox_timeout,
            reply_timeout: *reply_timeout,
            immediate: *immediate,
        },
        P::Tell { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate } => KReq::Tell {
            actor_id: k_actor_id(actor_id),
            actor_remote_id: actor_remote_id.clone().into(),
            message_remote_id: message_remote_id.clone().into(),
            payload: payload.clone(),
            mailbox_timeout: *mailbox_timeout,
            immediate: *immediate,
        },
        P::Link { actor_id, actor_remote_id, sibling_id, sibling_remote_id } => KReq::Link {
            actor_id: k_actor_id(actor_id),
            actor_remote_id: actor_remote_id.clone().into(),
            sibling_id: k_actor_id(sibling_id),
            sibling_remote_id: sibling_remote_id.clone().into(),
        },
        P::Unlink { actor_id, actor_remote_id, sibling_id } => KReq::Unlink {
            actor_id: k_actor_id(actor_id),
            actor_remote_id: actor_remote_id.clone().into(),
            sibling_id: k_actor_id(sibling_id),
        },
        P::SignalLinkDied { dead_actor_id, notified_actor_id, notified_actor_remote_id, stop_reason } => KReq::SignalLinkDied {
            dead_actor_id: k_actor_id(dead_actor_id),
            notified_actor_id: k_actor_id(notified_actor_id),
            notified_actor_remote_id: notified_actor_remote_id.clone().into(),
            stop_reason: k_stop(stop_reason)?,
        },
    })
}

pub fn p_request(r: &KReq) -> pk::SwarmRequest {
    use pk::SwarmRequest as P;
    match r {
        KReq::Ask { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, reply_timeout, immediate } => P::Ask {
            actor_id: p_actor_id(actor_id),
            actor_remote_id: actor_remote_id.to_string(),
            message_remote_id: message_remote_id.to_string(),
            payload: payload.clone(),
            mailbox_timeout: *mailbox_timeout,
            reply_timeout: *reply_timeout,
            immediate: *immediate,
        },
        KReq::Tell { actor_id, actor_remote_id, message_remote_id, payload, mailbox_timeout, immediate } => P::Tell {
            actor_id: p_actor_id(actor_id),
            actor_remote_id: actor_remote_id.to_string(),
            message_remote_id: message_remote_id.to_string(),
            payload: payload.clone(),
            mailbox_timeout: *mailbox_timeout,
            immediate: *immediate,
        },
        KReq::Link { actor_id, actor_remote_id, sibling_id, sibling_remote_id } => P::Link {
            actor_id: p_actor_id(actor_id),
            actor_remote_id: actor_remote_id.to_string(),
            sibling_id: p_actor_id(sibling_id),
            sibling_remote_id: sibling_remote_id.to_string(),
        },
        KReq::Unlink { actor_id, actor_remote_id, sibling_id } => {
            P::Unlink { actor_id: p_actor_id(actor_id), actor_remote_id: actor_remote_id.to_string(), sibling_id: p_actor_id(sibling_id) }
        }
        KReq::SignalLinkDied { dead_actor_id, notified_actor_id, notified_actor_remote_id, stop_reason } => P::SignalLinkDied {
            dead_actor_id: p_actor_id(dead_actor_id),
            notified_actor_id: p_actor_id(notified_actor_id),
            notified_actor_remote_id: notified_actor_remote_id.to_string(),
            stop_reason: p_stop(stop_reason),
        },
    }
}

pub fn k_response(r: &pk::SwarmResponse) -> Option<KResp> {
    use pk::SwarmResponse as P;
    Some(match r {
        P::Ask(res) => KResp::Ask(res.clone().map_err(|e| k_err(&e, clone_bytes))),
        P::Tell(res) => KResp::Tell(k_unit(res)),
        P::Link(res) => KResp::Link(k_unit(res)),
        P::Unlink(res) => KResp::Unlink(k_unit(res)),
        P::SignalLinkDied(res) => KResp::SignalLinkDied(k_unit(res)),
        P::OutboundFailure(e) => KResp::OutboundFailure(k_err(e, to_k_infallible)),
    })
}

pub fn p_response(r: &KResp) -> pk::SwarmResponse {
    use pk::SwarmResponse as P;
    match r {
        KResp::Ask(res) => P::Ask(match res {
            Ok(b) => Ok(b.clone()),
            Err(e) => Err(p_err(e, clone_bytes)),
        }),
        KResp::Tell(res) => P::Tell(p_unit(res)),
        KResp::Link(res) => P::Link(p_unit(res)),
        KResp::Unlink(res) => P::Unlink(p_unit(res)),
        KResp::SignalLinkDied(res) => P::SignalLinkDied(p_unit(res)),
        KResp::OutboundFailure(e) => P::OutboundFailure(p_err(e, to_p_infallible)),
    }
}
