//! The values and inputs the parity tests run through both codecs.

use polywire::kameo as pk;
use polywire::kameo::{ActorId, ActorStopReason, PanicError, PanicReason, RemoteSendError, SwarmRequest, SwarmResponse};
use std::time::Duration;

// ---------------------------------------------------------------- ids

/// The peer id libp2p derives from the Ed25519 key with this secret seed.
pub fn ed_peer(seed: u8) -> pk::PeerId {
    let kp = libp2p::identity::Keypair::ed25519_from_bytes([seed; 32]).expect("ed25519 secret");
    pk::PeerId::from_bytes(&kp.public().to_peer_id().to_bytes()).expect("peer id")
}

/// A sha2-256 peer id: the hash of a 60-byte protobuf key (too long to inline).
pub fn sha_peer() -> pk::PeerId {
    let mut key = vec![0x08, 0x00, 0x12, 56];
    key.extend((0..56u8).map(|i| i.wrapping_mul(37)));
    let p = pk::PeerId::from_public_key_protobuf(&key).expect("protobuf key");
    assert_eq!(p.code(), 0x12);
    p
}

fn local(seq: u64) -> ActorId {
    ActorId::new(seq, None)
}

fn remote(seq: u64, peer: pk::PeerId) -> ActorId {
    ActorId::new(seq, Some(peer))
}

fn bytes_300() -> Vec<u8> {
    (0..300u32).map(|i| (i * 7 % 256) as u8).collect()
}

fn long_id() -> String {
    "actor/".repeat(50)
}

const NON_ASCII: &str = "zähler-🦀-計數器";

// ---------------------------------------------------------------- requests

fn ask(actor_id: ActorId, arid: &str, mrid: &str, payload: Vec<u8>, mt: Option<Duration>, rt: Option<Duration>, imm: bool) -> SwarmRequest {
    SwarmRequest::Ask {
        actor_id,
        actor_remote_id: arid.into(),
        message_remote_id: mrid.into(),
        payload,
        mailbox_timeout: mt,
        reply_timeout: rt,
        immediate: imm,
    }
}

fn tell(actor_id: ActorId, arid: &str, mrid: &str, payload: Vec<u8>, mt: Option<Duration>, imm: bool) -> SwarmRequest {
    SwarmRequest::Tell {
        actor_id,
        actor_remote_id: arid.into(),
        message_remote_id: mrid.into(),
        payload,
        mailbox_timeout: mt,
        immediate: imm,
    }
}

fn signal(reason: ActorStopReason) -> SwarmRequest {
    SwarmRequest::SignalLinkDied {
        dead_actor_id: remote(7, ed_peer(2)),
        notified_actor_id: local(8),
        notified_actor_remote_id: "watcher".into(),
        stop_reason: reason,
    }
}

fn panicked(reason: PanicReason, message: Option<&str>) -> ActorStopReason {
    let err = match message {
        Some(m) => format!("{}: {m}", reason.description()),
        None => reason.description().to_owned(),
    };
    ActorStopReason::Panicked(PanicError { err, reason })
}

fn link_died(depth: usize, last: ActorStopReason) -> ActorStopReason {
    let mut r = last;
    for i in 0..depth {
        r = ActorStopReason::LinkDied { id: if i % 2 == 0 { local(i as u64) } else { remote(i as u64, ed_peer(3)) }, reason: Box::new(r) };
    }
    r
}

pub fn requests() -> Vec<(String, SwarmRequest)> {
    let inc_payload = vec![0x81, 0xA6, b'a', b'm', b'o', b'u', b'n', b't', 0x05]; // {"amount": 5}
    let mut v: Vec<(String, SwarmRequest)> = vec![
        ("ask_minimal".into(), ask(local(0), "", "", vec![], None, None, false)),
        (
            "ask_typical".into(),
            ask(
                remote(42, ed_peer(1)),
                "counter",
                "inc",
                inc_payload.clone(),
                Some(Duration::new(1, 500_000_000)),
                Some(Duration::from_secs(5)),
                false,
            ),
        ),
        (
            "ask_edges".into(),
            ask(
                remote(u64::MAX, sha_peer()),
                NON_ASCII,
                &long_id(),
                bytes_300(),
                Some(Duration::new((1 << 32) + 7, 999_999_999)),
                Some(Duration::new(u64::MAX, 999_999_999)),
                true,
            ),
        ),
        (
            "ask_zero_timeouts".into(),
            ask(remote(1 << 32, ed_peer(4)), "a", "b", vec![23, 24, 255, 0], Some(Duration::ZERO), Some(Duration::new(0, 1)), true),
        ),
        ("ask_local_max".into(), ask(local(u64::MAX), "counter", "inc", vec![0; 24], Some(Duration::new(23, 24)), None, false)),
        ("tell_minimal".into(), tell(local(0), "", "", vec![], None, false)),
        ("tell_typical".into(), tell(remote(42, ed_peer(1)), "counter", "inc", inc_payload, Some(Duration::from_millis(250)), false)),
        (
            "tell_edges".into(),
            tell(remote(u64::MAX, sha_peer()), NON_ASCII, &long_id(), bytes_300(), Some(Duration::new(u64::MAX, 999_999_999)), true),
        ),
        (
            "link".into(),
            SwarmRequest::Link {
                actor_id: remote(1, ed_peer(1)),
                actor_remote_id: "parent".into(),
                sibling_id: remote(2, sha_peer()),
                sibling_remote_id: NON_ASCII.into(),
            },
        ),
        (
            "link_local_ids".into(),
            SwarmRequest::Link {
                actor_id: local(0),
                actor_remote_id: "".into(),
                sibling_id: local(u64::MAX),
                sibling_remote_id: "".into(),
            },
        ),
        ("unlink".into(), SwarmRequest::Unlink { actor_id: remote(9, ed_peer(5)), actor_remote_id: "p".into(), sibling_id: local(10) }),
        (
            "unlink_long_id".into(),
            SwarmRequest::Unlink { actor_id: local(1), actor_remote_id: long_id(), sibling_id: remote(u64::MAX, sha_peer()) },
        ),
    ];
    for (name, reason) in [
        ("normal", ActorStopReason::Normal),
        ("supervisor_restart", ActorStopReason::SupervisorRestart),
        ("killed", ActorStopReason::Killed),
        ("peer_disconnected", ActorStopReason::PeerDisconnected),
        ("panicked_opaque_error", panicked(PanicReason::OnStart, None)),
        ("panicked_empty_message", panicked(PanicReason::HandlerPanic, Some(""))),
        ("link_died_nested", link_died(3, panicked(PanicReason::OnLinkDied, Some(NON_ASCII)))),
        ("link_died_deep", link_died(30, ActorStopReason::Killed)),
    ] {
        v.push((format!("signal_link_died_{name}"), signal(reason)));
    }
    for reason in PanicReason::ALL {
        v.push((format!("signal_link_died_panicked_{}", reason.name()), signal(panicked(reason, Some("boom")))));
    }
    v
}

/// Requests kameo reads but cannot write (its `PanicError` always prefixes
/// the reason to a string error).
pub fn decode_only_requests() -> Vec<(String, SwarmRequest)> {
    vec![(
        "panicked_unprefixed_err".into(),
        signal(ActorStopReason::Panicked(PanicError { err: "no prefix".into(), reason: PanicReason::Next })),
    )]
}

// ---------------------------------------------------------------- responses

fn all_errors<E>(handler: Option<E>) -> Vec<RemoteSendError<E>> {
    let mut v = vec![
        RemoteSendError::ActorNotRunning,
        RemoteSendError::ActorStopped,
        RemoteSendError::UnknownActor { actor_remote_id: NON_ASCII.into() },
        RemoteSendError::UnknownMessage { actor_remote_id: "counter".into(), message_remote_id: "".into() },
        RemoteSendError::BadActorType,
        RemoteSendError::MailboxFull,
        RemoteSendError::ReplyTimeout,
        RemoteSendError::SerializeMessage("invalid type: string \"x\", expected u32".into()),
        RemoteSendError::DeserializeMessage("".into()),
        RemoteSendError::SerializeReply(long_id()),
        RemoteSendError::SerializeHandlerError(NON_ASCII.into()),
        RemoteSendError::DeserializeHandlerError("bad".into()),
        RemoteSendError::SwarmNotBootstrapped,
        RemoteSendError::DialFailure,
        RemoteSendError::NetworkTimeout,
        RemoteSendError::ConnectionClosed,
        RemoteSendError::UnsupportedProtocols,
    ];
    if let Some(h) = handler {
        v.insert(7, RemoteSendError::HandlerError(h));
    }
    v
}

pub fn responses() -> Vec<(String, SwarmResponse)> {
    let mut v: Vec<(String, SwarmResponse)> = vec![
        ("ask_ok_empty".into(), SwarmResponse::Ask(Ok(vec![]))),
        ("ask_ok_reply".into(), SwarmResponse::Ask(Ok(vec![0x05]))),
        ("ask_ok_300_bytes".into(), SwarmResponse::Ask(Ok(bytes_300()))),
        ("ask_err_handler_error_empty".into(), SwarmResponse::Ask(Err(RemoteSendError::HandlerError(vec![])))),
    ];
    // handler error: rmp_serde of the string "insufficient funds"
    let mut handler = vec![0xB2];
    handler.extend_from_slice(b"insufficient funds");
    for e in all_errors(Some(handler)) {
        v.push((format!("ask_err_{}", e.variant_name()), SwarmResponse::Ask(Err(e))));
    }
    for e in all_errors(None) {
        v.push((format!("tell_err_{}", e.variant_name()), SwarmResponse::Tell(Err(e))));
    }
    for e in all_errors(None) {
        v.push((format!("outbound_failure_{}", e.variant_name()), SwarmResponse::OutboundFailure(e)));
    }
    v.push(("tell_ok".into(), SwarmResponse::Tell(Ok(()))));
    v.push(("link_ok".into(), SwarmResponse::Link(Ok(()))));
    v.push(("link_err".into(), SwarmResponse::Link(Err(RemoteSendError::BadActorType))));
    v.push(("unlink_ok".into(), SwarmResponse::Unlink(Ok(()))));
    v.push(("unlink_err".into(), SwarmResponse::Unlink(Err(RemoteSendError::UnknownActor { actor_remote_id: "gone".into() }))));
    v.push(("signal_link_died_ok".into(), SwarmResponse::SignalLinkDied(Ok(()))));
    v.push(("signal_link_died_err".into(), SwarmResponse::SignalLinkDied(Err(RemoteSendError::ActorNotRunning))));
    v
}

// ---------------------------------------------------------------- hand-made CBOR

pub fn h(s: &str) -> Vec<u8> {
    super::common::unhex(s)
}

fn head(major: u8, n: u64) -> Vec<u8> {
    let m = major << 5;
    match n {
        0..=23 => vec![m | n as u8],
        24..=0xFF => vec![m | 24, n as u8],
        0x100..=0xFFFF => [vec![m | 25], (n as u16).to_be_bytes().to_vec()].concat(),
        0x1_0000..=0xFFFF_FFFF => [vec![m | 26], (n as u32).to_be_bytes().to_vec()].concat(),
        _ => [vec![m | 27], n.to_be_bytes().to_vec()].concat(),
    }
}

fn t(s: &str) -> Vec<u8> {
    [head(3, s.len() as u64), s.as_bytes().to_vec()].concat()
}

fn by(b: &[u8]) -> Vec<u8> {
    [head(2, b.len() as u64), b.to_vec()].concat()
}

fn u(n: u64) -> Vec<u8> {
    head(0, n)
}

macro_rules! cat {
    ($($e:expr),* $(,)?) => {{
        let mut v: Vec<u8> = Vec::new();
        $(v.extend_from_slice(&$e);)*
        v
    }};
}

type Fields = Vec<(Vec<u8>, Vec<u8>)>;

fn actor_id_bytes() -> Vec<u8> {
    remote(42, ed_peer(1)).to_bytes()
}

fn tell_fields() -> Fields {
    vec![
        (t("actor_id"), by(&actor_id_bytes())),
        (t("actor_remote_id"), t("counter")),
        (t("message_remote_id"), t("inc")),
        (t("payload"), h("83 01 02 03")),
        (t("mailbox_timeout"), h("f6")),
        (t("immediate"), h("f4")),
    ]
}

fn ask_fields() -> Fields {
    let mut f = tell_fields();
    f.insert(5, (t("reply_timeout"), h("f6")));
    f
}

fn body(fields: &Fields) -> Vec<u8> {
    let mut v = head(5, fields.len() as u64);
    for (k, val) in fields {
        v.extend_from_slice(k);
        v.extend_from_slice(val);
    }
    v
}

fn variant(name: &str, content: Vec<u8>) -> Vec<u8> {
    cat!(h("a1"), t(name), content)
}

fn tell_with(f: impl FnOnce(&mut Fields)) -> Vec<u8> {
    let mut fields = tell_fields();
    f(&mut fields);
    variant("Tell", body(&fields))
}

fn ask_with(f: impl FnOnce(&mut Fields)) -> Vec<u8> {
    let mut fields = ask_fields();
    f(&mut fields);
    variant("Ask", body(&fields))
}

fn set(fields: &mut Fields, key: &str, value: Vec<u8>) {
    let k = t(key);
    let slot = fields.iter_mut().find(|(fk, _)| *fk == k).expect("field");
    slot.1 = value;
}

fn duration(secs: Vec<u8>, nanos: Vec<u8>) -> Vec<u8> {
    cat!(h("a2"), t("secs"), secs, t("nanos"), nanos)
}

fn signal_with(reason: Vec<u8>) -> Vec<u8> {
    variant(
        "SignalLinkDied",
        cat!(
            h("a4"),
            t("dead_actor_id"),
            by(&local(1).to_bytes()),
            t("notified_actor_id"),
            by(&local(2).to_bytes()),
            t("notified_actor_remote_id"),
            t("w"),
            t("stop_reason"),
            reason
        ),
    )
}

/// `LinkDied` wrapped `depth` times around `Killed`.
fn nested_link_died(depth: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for _ in 0..depth {
        v.extend(cat!(h("a1"), t("LinkDied"), h("a2"), t("id"), by(&local(0).to_bytes()), t("reason")));
    }
    v.extend(t("Killed"));
    v
}

pub fn decode_cases() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let ok_tell = tell_with(|_| {});
    // tag 1 around an indefinite map holding an indefinite array of floats
    // and an indefinite byte string whose chunk is a text string
    let junk = h("c1 bf 01 9f f9 3c 00 fb 3f f8 00 00 00 00 00 00 ff 63 6b 65 79 5f 61 62 ff ff");
    let mut deep_junk = vec![0x81; 300];
    deep_junk.push(0);
    let mut big_tell = tell_fields();
    // 1 MiB + 100 one-byte elements: more than the codec reads of a request
    let n = 1024 * 1024 + 100;
    big_tell[3].1 = cat!(head(4, n as u64), vec![1u8; n]);
    let mut fits = ok_tell.clone();
    fits.extend(vec![0xFF; 1024 * 1024]);
    vec![
        ("request", "fields_reordered", variant("Tell", body(&tell_fields().into_iter().rev().collect()))),
        (
            "request",
            "unknown_fields_skipped",
            tell_with(|f| {
                f.insert(2, (t("extra"), junk.clone()));
                f.push((t("zzz"), h("d8 20 a0")));
            }),
        ),
        ("request", "missing_optional_fields", ask_with(|f| f.retain(|(k, _)| *k != t("mailbox_timeout") && *k != t("reply_timeout")))),
        ("request", "missing_required_field", tell_with(|f| f.retain(|(k, _)| *k != t("immediate")))),
        ("request", "missing_actor_id", tell_with(|f| f.retain(|(k, _)| *k != t("actor_id")))),
        ("request", "duplicate_field", tell_with(|f| f.push((t("actor_remote_id"), t("again"))))),
        ("request", "duplicate_optional_field", ask_with(|f| f.push((t("reply_timeout"), h("f6"))))),
        (
            "request",
            "non_minimal_integers",
            ask_with(|f| {
                set(f, "payload", h("83 18 01 18 02 18 ff"));
                set(f, "mailbox_timeout", duration(h("1b 00 00 00 00 00 00 00 01"), h("1a 00 00 00 05")));
                set(f, "reply_timeout", duration(h("19 00 02"), h("18 06")));
            }),
        ),
        ("request", "nanos_too_wide", tell_with(|f| set(f, "mailbox_timeout", duration(u(1), h("1b 00 00 00 00 00 00 00 05"))))),
        ("request", "payload_element_too_wide", tell_with(|f| set(f, "payload", h("81 19 00 01")))),
        ("request", "payload_element_negative", tell_with(|f| set(f, "payload", h("81 20")))),
        ("request", "payload_as_byte_string", tell_with(|f| set(f, "payload", h("43 01 02 03")))),
        ("request", "payload_indefinite_array", tell_with(|f| set(f, "payload", h("9f 01 02 ff")))),
        ("request", "payload_uint_head", tell_with(|f| set(f, "payload", h("03 01 02 03")))),
        ("request", "duration_as_array", tell_with(|f| set(f, "mailbox_timeout", h("82 01 00")))),
        ("request", "duration_nanos_carry", tell_with(|f| set(f, "mailbox_timeout", duration(u(1), u(1_500_000_000))))),
        ("request", "duration_overflow", tell_with(|f| set(f, "mailbox_timeout", duration(u(u64::MAX), u(1_000_000_000))))),
        (
            "request",
            "duration_unknown_field",
            tell_with(|f| set(f, "mailbox_timeout", cat!(h("a3"), t("secs"), u(1), t("nanos"), u(0), t("millis"), u(0)))),
        ),
        ("request", "duration_missing_nanos", tell_with(|f| set(f, "mailbox_timeout", cat!(h("a1"), t("secs"), u(1))))),
        (
            "request",
            "duration_fields_reordered",
            tell_with(|f| set(f, "mailbox_timeout", cat!(h("a2"), t("nanos"), u(7), t("secs"), u(3)))),
        ),
        ("request", "timeout_undefined", tell_with(|f| set(f, "mailbox_timeout", h("f7")))),
        ("request", "actor_id_7_bytes", tell_with(|f| set(f, "actor_id", by(&[1, 2, 3, 4, 5, 6, 7])))),
        ("request", "actor_id_empty", tell_with(|f| set(f, "actor_id", by(&[])))),
        ("request", "actor_id_bad_peer", tell_with(|f| set(f, "actor_id", by(&[1, 0, 0, 0, 0, 0, 0, 0, 0x13, 0x00])))),
        ("request", "actor_id_peer_trailing_byte", tell_with(|f| set(f, "actor_id", by(&cat!(actor_id_bytes(), [0]))))),
        (
            "request",
            "actor_id_non_minimal_peer_code",
            tell_with(|f| set(f, "actor_id", by(&cat!([5, 0, 0, 0, 0, 0, 0, 0], h("92 80 80 80 80 80 80 80 80 02 01 aa"))))),
        ),
        ("request", "actor_id_as_array", tell_with(|f| set(f, "actor_id", h("88 01 00 00 00 00 00 00 00")))),
        ("request", "actor_id_uint_head", tell_with(|f| set(f, "actor_id", cat!(u(8), [9, 0, 0, 0, 0, 0, 0, 0])))),
        (
            "request",
            "actor_id_indefinite_bytes",
            tell_with(|f| {
                f.rotate_left(1); // actor_id last, so the unread 0xFF is trailing
                set(f, "actor_id", h("5f 43 01 00 00 5f 45 00 00 00 00 00 ff"));
            }),
        ),
        ("request", "field_name_as_byte_string", tell_with(|f| f[0].0 = by(b"actor_id"))),
        ("request", "field_name_uint_head", tell_with(|f| f[1].0 = cat!(u(15), *b"actor_remote_id"))),
        ("request", "text_negative_head", tell_with(|f| set(f, "actor_remote_id", cat!(head(1, 3), *b"abc")))),
        (
            "request",
            "indefinite_text_last_field",
            tell_with(|f| {
                f.rotate_left(2);
                set(f, "actor_remote_id", h("7f 63 63 6f 75 64 6e 74 65 72 ff"));
            }),
        ),
        ("request", "indefinite_text_middle_field", tell_with(|f| set(f, "actor_remote_id", h("7f 63 63 6f 75 64 6e 74 65 72 ff")))),
        (
            "request",
            "indefinite_map_struct",
            variant("Tell", {
                let mut b = body(&tell_fields());
                b[0] = 0xBF;
                b.push(0xFF);
                b
            }),
        ),
        (
            "request",
            "map_head_as_array_header",
            variant("Tell", {
                let mut b = body(&tell_fields());
                b[0] = 0x86;
                b
            }),
        ),
        (
            "request",
            "map_head_as_uint",
            variant("Tell", {
                let mut b = body(&tell_fields());
                b[0] = 0x06;
                b
            }),
        ),
        (
            "request",
            "map_head_as_byte_string",
            variant("Tell", {
                let mut b = body(&tell_fields());
                b[0] = 0x46;
                b
            }),
        ),
        ("request", "enum_as_text_then_content", cat!(t("Tell"), body(&tell_fields()))),
        ("request", "enum_map_two_entries", {
            let mut b = ok_tell.clone();
            b[0] = 0xA2;
            b
        }),
        ("request", "enum_map_non_minimal_one", cat!(h("b8 01"), ok_tell[1..])),
        ("request", "unknown_variant", variant("Shout", body(&tell_fields()))),
        ("request", "trailing_bytes", cat!(ok_tell.clone(), h("ff ff 00"))),
        ("request", "truncated", ok_tell[..ok_tell.len() - 1].to_vec()),
        ("request", "empty_input", vec![]),
        ("request", "immediate_as_int", tell_with(|f| set(f, "immediate", u(1)))),
        ("request", "immediate_undefined", tell_with(|f| set(f, "immediate", h("f7")))),
        ("request", "invalid_utf8_remote_id", tell_with(|f| set(f, "actor_remote_id", h("62 c3 28")))),
        ("request", "ignored_value_too_deep", tell_with(|f| f.push((t("deep"), deep_junk.clone())))),
        ("request", "ignored_simple_value_f8", tell_with(|f| f.push((t("x"), h("f8 20"))))),
        ("request", "ignored_break_as_value", tell_with(|f| f.push((t("x"), h("ff"))))),
        ("request", "request_over_size_limit", variant("Tell", body(&big_tell))),
        ("request", "request_fits_then_junk_past_limit", fits),
        ("request", "stop_reason_unit_as_map_last", signal_with(cat!(h("a1"), t("Normal"), h("f6")))),
        (
            "request",
            "stop_reason_unit_as_map_without_value",
            variant(
                "SignalLinkDied",
                cat!(
                    h("a4"),
                    t("stop_reason"),
                    h("a1"),
                    t("Normal"),
                    t("dead_actor_id"),
                    by(&local(1).to_bytes()),
                    t("notified_actor_id"),
                    by(&local(2).to_bytes()),
                    t("notified_actor_remote_id"),
                    t("w")
                ),
            ),
        ),
        (
            "request",
            "panic_error_fields_reordered",
            signal_with(cat!(h("a1"), t("Panicked"), h("a2"), t("reason"), t("Next"), t("err"), t("x"))),
        ),
        (
            "request",
            "panic_error_unknown_field",
            signal_with(cat!(h("a1"), t("Panicked"), h("a3"), t("err"), t("x"), t("reason"), t("Next"), t("at"), u(1))),
        ),
        ("request", "panic_error_missing_reason", signal_with(cat!(h("a1"), t("Panicked"), h("a1"), t("err"), t("x")))),
        (
            "request",
            "panic_reason_unknown",
            signal_with(cat!(h("a1"), t("Panicked"), h("a2"), t("err"), t("x"), t("reason"), t("OnWhatever"))),
        ),
        (
            "request",
            "link_died_unknown_field",
            signal_with(cat!(h("a1"), t("LinkDied"), h("a3"), t("id"), by(&local(0).to_bytes()), t("why"), u(3), t("reason"), t("Killed"))),
        ),
        ("request", "link_died_nesting_at_depth_limit", signal_with(nested_link_died(126))),
        ("request", "link_died_nesting_past_depth_limit", signal_with(nested_link_died(127))),
        ("response", "tell_ok_text_variant", cat!(t("Tell"), h("a1"), t("Ok"), h("80"))),
        ("response", "tell_ok_null", variant("Tell", variant("Ok", h("f6")))),
        ("response", "tell_ok_indefinite_empty_array", variant("Tell", variant("Ok", h("9f ff")))),
        ("response", "tell_ok_uint_zero", variant("Tell", variant("Ok", h("00")))),
        ("response", "unit_error_as_map_with_value", variant("Tell", variant("Err", variant("MailboxFull", h("f6"))))),
        ("response", "handler_error_in_tell", variant("Tell", variant("Err", variant("HandlerError", h("81 01"))))),
        ("response", "handler_error_in_tell_as_text", variant("Tell", variant("Err", variant("HandlerError", t("x"))))),
        ("response", "io_variant", variant("OutboundFailure", t("Io"))),
        ("response", "ask_ok_as_byte_string", variant("Ask", variant("Ok", h("42 01 02")))),
        ("response", "ask_ok_element_too_wide", variant("Ask", variant("Ok", h("81 19 01 00")))),
        ("response", "ask_handler_error_bytes", variant("Ask", variant("Err", variant("HandlerError", h("9f 18 a1 ff"))))),
        ("response", "result_unknown_variant", variant("Ask", variant("Maybe", h("80")))),
        (
            "response",
            "unknown_actor_extra_field",
            variant("Ask", variant("Err", variant("UnknownActor", cat!(h("a2"), t("actor_remote_id"), t("x"), t("extra"), u(1))))),
        ),
        (
            "response",
            "unknown_message_missing_field",
            variant("Ask", variant("Err", variant("UnknownMessage", cat!(h("a1"), t("actor_remote_id"), t("x"))))),
        ),
        ("response", "serialize_message_non_string", variant("Tell", variant("Err", variant("SerializeMessage", u(1))))),
        ("response", "newtype_variants_as_text", cat!(t("OutboundFailure"), t("SerializeReply"), t("oops"))),
        ("response", "unknown_response_variant", variant("Ping", h("80"))),
        ("response", "response_trailing_bytes", cat!(variant("Link", variant("Ok", h("80"))), h("00 ff"))),
    ]
    .into_iter()
    .map(|(kind, name, bytes)| (name, kind, bytes))
    .collect()
}

// ---------------------------------------------------------------- registry

pub fn registrations() -> Vec<(String, pk::ActorRegistration)> {
    vec![
        ("local".into(), pk::ActorRegistration::new(local(5), "counter")),
        ("ed25519".into(), pk::ActorRegistration::new(remote(42, ed_peer(1)), "my_app::actors::Counter")),
        ("sha2_256_max_seq".into(), pk::ActorRegistration::new(remote(u64::MAX, sha_peer()), NON_ASCII)),
        ("empty_remote_id".into(), pk::ActorRegistration::new(remote(0, ed_peer(9)), "")),
        ("long_remote_id".into(), pk::ActorRegistration::new(local(1 << 40), long_id())),
    ]
}

pub fn registration_decode_cases() -> Vec<(String, Vec<u8>)> {
    let good = pk::ActorRegistration::new(remote(3, ed_peer(1)), "x").to_bytes();
    vec![
        ("empty".into(), vec![]),
        ("length_byte_only".into(), vec![0]),
        ("local_without_remote_id".into(), h("00 01 00 00 00 00 00 00 00")),
        ("short_sequence_id".into(), h("00 01 00 00")),
        ("peer_shorter_than_length".into(), good[..good.len() - 3].to_vec()),
        ("peer_length_255".into(), cat!([255], [0u8; 60])),
        ("invalid_peer_bytes".into(), h("02 01 00 00 00 00 00 00 00 13 00")),
        ("invalid_utf8_remote_id".into(), h("00 01 00 00 00 00 00 00 00 c3 28")),
        ("peer_length_points_into_remote_id".into(), {
            let mut b = good.clone();
            b[0] += 1;
            b
        }),
    ]
}

pub fn peer_id_bytes() -> Vec<Vec<u8>> {
    let mut v = vec![
        vec![],
        h("00 00"),
        h("12 00"),
        cat!(h("00 2a"), [7u8; 42]),
        cat!(h("00 2b"), [7u8; 43]),
        cat!(h("12 20"), [9u8; 32]),
        cat!(h("12 40"), [9u8; 64]),
        cat!(h("12 41"), [9u8; 65]),
        cat!(h("12 20"), [9u8; 31]),
        cat!(h("12 20"), [9u8; 33]),
        h("13 01 00"),
        h("92 00 00"),
        h("92 80 80 80 80 80 80 80 80 02 01 aa"),
        h("92 80 80 80 80 80 80 80 80 82 01 aa"),
        h("80 80 80 80 80 80 80 80 80 80 01 aa"),
        h("00 81 00"),
    ];
    v.push(ed_peer(1).to_bytes());
    v.push(sha_peer().to_bytes());
    v
}

pub fn key_cases() -> Vec<(&'static str, pk::PeerId)> {
    vec![("counter", ed_peer(1)), ("zähler 🦀", sha_peer()), ("my_app::actors::Counter", ed_peer(200))]
}

// ---------------------------------------------------------------- remote ids

pub mod actors {
    use kameo::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(Actor, RemoteActor)]
    pub struct Counter;

    #[derive(Actor, RemoteActor)]
    #[remote_actor(id = "custom-actor-id")]
    pub struct Custom;

    #[derive(Serialize, Deserialize)]
    pub struct Inc {
        pub amount: u32,
    }

    #[derive(Serialize, Deserialize)]
    pub struct Wrapped<T>(pub T);

    #[derive(Serialize, Deserialize)]
    pub struct Reset;

    pub mod inner {
        #[derive(serde::Serialize, serde::Deserialize)]
        pub struct Ping;
    }

    #[remote_message]
    impl Message<Inc> for Counter {
        type Reply = u32;
        async fn handle(&mut self, msg: Inc, _: &mut Context<Self, Self::Reply>) -> u32 {
            msg.amount
        }
    }

    #[remote_message]
    impl Message<Wrapped<Vec<u8>>> for Counter {
        type Reply = usize;
        async fn handle(&mut self, msg: Wrapped<Vec<u8>>, _: &mut Context<Self, Self::Reply>) -> usize {
            msg.0.len()
        }
    }

    #[remote_message]
    impl Message<self::inner::Ping> for Counter {
        type Reply = ();
        async fn handle(&mut self, _: self::inner::Ping, _: &mut Context<Self, Self::Reply>) {}
    }

    #[remote_message]
    impl Message<Reset> for Counter
    where
        Counter: Send,
    {
        type Reply = bool;
        async fn handle(&mut self, _: Reset, _: &mut Context<Self, Self::Reply>) -> bool {
            true
        }
    }

    #[remote_message("explicit-message-id")]
    impl Message<Inc> for Custom {
        type Reply = u32;
        async fn handle(&mut self, msg: Inc, _: &mut Context<Self, Self::Reply>) -> u32 {
            msg.amount
        }
    }

    pub const MODULE_PATH: &str = module_path!();
}

pub struct MessageIdCase {
    pub crate_name: &'static str,
    pub crate_major: u64,
    pub module_path: &'static str,
    pub message_type: &'static str,
    pub actor_type: &'static str,
    pub impl_generics: &'static str,
    pub kameo_id: &'static str,
}

pub fn remote_message_ids() -> Vec<MessageIdCase> {
    use actors::*;
    use kameo::remote::RemoteMessage;
    let case = |message_type, impl_generics, kameo_id| MessageIdCase {
        crate_name: env!("CARGO_PKG_NAME"),
        crate_major: env!("CARGO_PKG_VERSION_MAJOR").parse().expect("major"),
        module_path: MODULE_PATH,
        message_type,
        actor_type: "Counter",
        impl_generics,
        kameo_id,
    };
    // The type strings as a caller would write them; token spacing does not matter.
    vec![
        case("Inc", "", <Counter as RemoteMessage<Inc>>::REMOTE_ID),
        case("Wrapped<Vec<u8>>", "", <Counter as RemoteMessage<Wrapped<Vec<u8>>>>::REMOTE_ID),
        case("self :: inner :: Ping", "", <Counter as RemoteMessage<inner::Ping>>::REMOTE_ID),
        // a where clause is not part of the id (impl generics print without it)
        case("Reset", "", <Counter as RemoteMessage<Reset>>::REMOTE_ID),
    ]
}

pub fn remote_actor_ids() -> Vec<(&'static str, &'static str, &'static str)> {
    use kameo::remote::{RemoteActor, RemoteMessage};
    assert_eq!(<actors::Custom as RemoteActor>::REMOTE_ID, "custom-actor-id");
    assert_eq!(<actors::Custom as RemoteMessage<actors::Inc>>::REMOTE_ID, "explicit-message-id");
    vec![(actors::MODULE_PATH, "Counter", <actors::Counter as RemoteActor>::REMOTE_ID)]
}
