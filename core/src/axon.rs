//! AXON v2 message types: agent-to-agent JSON envelopes.
//!
//! Upstream truth: hwbehrens/axon tags v0.1.0–v0.2.0 (`spec/MESSAGE_TYPES.md`,
//! `spec/WIRE_FORMAT.md`, `axon/src/message/`, `axon/src/transport/`). Every
//! message is one JSON object, sent alone on its own QUIC stream (the stream's
//! FIN ends it), at most [`MAX_MESSAGE_SIZE`] bytes:
//!
//! ```json
//! {"v":1,"id":"<uuid>","from":"ed25519.<32 hex>","to":"ed25519.<32 hex>",
//!  "ts":1771108000000,"kind":"query","ref":"<uuid, optional>","payload":{…}}
//! ```
//!
//! [`decode`] validates in upstream's order — first the field types (what
//! upstream's serde derive checks), then the kind (`unknown_kind`), then
//! upstream's `Envelope::validate` (`v` ≥ 1, `ts` > 0, agent ids) — and then
//! the payload against the kind's schema (upstream checks that lazily, with
//! `payload_as`). Every failure is an [`Error`] whose code is one of the
//! protocol's own error codes ([`ErrorCode`]), with a message that says what
//! to send instead. Unknown envelope fields are dropped and unknown payload
//! fields kept (they must be ignored, not rejected: forward compatibility).
//!
//! [`encode`] writes what upstream's `serde_json::to_vec(&Envelope)` writes
//! for the same message: the envelope fields in the order above, `ref` left
//! out when there is none, no whitespace, and the payload's object keys
//! sorted (upstream payloads pass through a `serde_json::Value`, whose map is
//! a `BTreeMap`), numbers formatted by `serde_json`.
//!
//! Stricter than upstream: duplicate object keys are rejected
//! (`invalid_envelope`) anywhere in a message, where upstream rejects them at
//! the top level and silently keeps the last one inside payload data; and a
//! typed agent id with another key type (`"rsa.…"`) is `incompatible_version`,
//! as `WIRE_FORMAT.md` §2.2 requires, where upstream's validate says
//! `invalid_envelope`.
//!
//! Numbers are read exactly (correctly rounded). Upstream's `serde_json`
//! is built without `float_roundtrip`, so when it re-encodes a payload it
//! received, a float can come out one unit in the last place off; polywire
//! writes back the number it was sent.
//!
//! Beyond the codec: agent ids ([`agent_id`], [`agent_id_from_seed`]), the
//! protocol rules as data ([`Kind`]), hello negotiation ([`negotiate`]),
//! reply builders ([`reply`], [`error_reply`]) and a sans-IO [`Session`] that
//! enforces hello gating, matches replies to requests and drops replays.

use crate::error::{Error, Format, Result};
use crate::tether::Uuid;
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::fmt;

/// The protocol version this implementation speaks.
pub const PROTOCOL_VERSION: u8 = 1;
/// Largest message body, in bytes (`WIRE_FORMAT.md` §5.2).
pub const MAX_MESSAGE_SIZE: usize = 65_536;
/// Replay de-duplication window (`WIRE_FORMAT.md` §7.4).
pub const REPLAY_WINDOW_MS: u64 = 300_000;
/// How many message ids the replay cache holds at most (upstream's daemon).
pub const REPLAY_CACHE_CAPACITY: usize = 100_000;
/// How long a request waits for its reply by default (`deadline_ms`).
pub const DEFAULT_DEADLINE_MS: u64 = 30_000;
/// Prefix of an Ed25519 agent id.
pub const AGENT_ID_PREFIX: &str = "ed25519.";
/// Deepest JSON nesting accepted in a message.
pub const MAX_DEPTH: usize = 128;

// ---------------------------------------------------------------- kinds

/// The 13 message kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Hello,
    Ping,
    Pong,
    Query,
    Response,
    Delegate,
    Ack,
    Result,
    Notify,
    Cancel,
    Discover,
    Capabilities,
    Error,
}

/// How a message travels: a request opens a bidirectional stream and reads
/// the reply from it; fire-and-forget messages use a unidirectional stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamType {
    Bidirectional,
    Unidirectional,
}

impl StreamType {
    pub fn as_str(self) -> &'static str {
        match self {
            StreamType::Bidirectional => "bidirectional",
            StreamType::Unidirectional => "unidirectional",
        }
    }
}

impl Kind {
    pub const ALL: [Kind; 13] = [
        Kind::Hello,
        Kind::Ping,
        Kind::Pong,
        Kind::Query,
        Kind::Response,
        Kind::Delegate,
        Kind::Ack,
        Kind::Result,
        Kind::Notify,
        Kind::Cancel,
        Kind::Discover,
        Kind::Capabilities,
        Kind::Error,
    ];

    /// Kinds every peer supports.
    pub const REQUIRED: [Kind; 7] =
        [Kind::Hello, Kind::Ping, Kind::Pong, Kind::Query, Kind::Response, Kind::Notify, Kind::Error];

    /// Kinds a peer supports only if its hello lists them in `features`.
    pub const OPTIONAL: [Kind; 6] =
        [Kind::Delegate, Kind::Ack, Kind::Result, Kind::Cancel, Kind::Discover, Kind::Capabilities];

    /// The wire name (`"hello"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Hello => "hello",
            Kind::Ping => "ping",
            Kind::Pong => "pong",
            Kind::Query => "query",
            Kind::Response => "response",
            Kind::Delegate => "delegate",
            Kind::Ack => "ack",
            Kind::Result => "result",
            Kind::Notify => "notify",
            Kind::Cancel => "cancel",
            Kind::Discover => "discover",
            Kind::Capabilities => "capabilities",
            Kind::Error => "error",
        }
    }

    /// The kind with this exact wire name (names are lowercase).
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn is_required(self) -> bool {
        Kind::REQUIRED.contains(&self)
    }

    pub fn is_optional(self) -> bool {
        !self.is_required()
    }

    /// A request: sent on a bidirectional stream, answered on it.
    pub fn expects_response(self) -> bool {
        matches!(self, Kind::Hello | Kind::Ping | Kind::Query | Kind::Delegate | Kind::Cancel | Kind::Discover)
    }

    /// A kind that answers a request (upstream `is_response`; `hello` is both).
    pub fn is_response(self) -> bool {
        matches!(self, Kind::Pong | Kind::Response | Kind::Ack | Kind::Capabilities | Kind::Error)
    }

    /// The kinds that may answer this request on its stream (empty for
    /// kinds that are not requests). A delegate's `result`, which comes
    /// later on its own stream, is in [`Kind::later_responses`].
    pub fn response_kinds(self) -> &'static [Kind] {
        match self {
            Kind::Hello => &[Kind::Hello, Kind::Error],
            Kind::Ping => &[Kind::Pong, Kind::Error],
            Kind::Query => &[Kind::Response, Kind::Error],
            Kind::Delegate | Kind::Cancel => &[Kind::Ack, Kind::Error],
            Kind::Discover => &[Kind::Capabilities, Kind::Error],
            _ => &[],
        }
    }

    /// Kinds that may refer to this request later, on a unidirectional
    /// stream: a delegate's `result` (when `report_back` is true).
    pub fn later_responses(self) -> &'static [Kind] {
        match self {
            Kind::Delegate => &[Kind::Result, Kind::Error],
            _ => &[],
        }
    }

    /// The stream a message of this kind is sent on when it starts an
    /// exchange: requests bidirectional; `notify`, `result` and an
    /// unsolicited `error` unidirectional. (A reply travels back on its
    /// request's bidirectional stream.)
    pub fn stream(self) -> StreamType {
        match self {
            Kind::Notify | Kind::Result | Kind::Error => StreamType::Unidirectional,
            _ => StreamType::Bidirectional,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The optional kinds, as upstream's hello advertises them by default.
pub fn default_features() -> Vec<String> {
    Kind::OPTIONAL.iter().map(|k| k.as_str().to_owned()).collect()
}

// ---------------------------------------------------------------- errors

/// The protocol's error codes (the `code` of an `error` payload, and the
/// code of every [`Error`] this module returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NotAuthorized,
    UnknownDomain,
    Overloaded,
    Internal,
    Timeout,
    Cancelled,
    IncompatibleVersion,
    UnknownKind,
    PeerNotFound,
    InvalidEnvelope,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::NotAuthorized,
        ErrorCode::UnknownDomain,
        ErrorCode::Overloaded,
        ErrorCode::Internal,
        ErrorCode::Timeout,
        ErrorCode::Cancelled,
        ErrorCode::IncompatibleVersion,
        ErrorCode::UnknownKind,
        ErrorCode::PeerNotFound,
        ErrorCode::InvalidEnvelope,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotAuthorized => "not_authorized",
            ErrorCode::UnknownDomain => "unknown_domain",
            ErrorCode::Overloaded => "overloaded",
            ErrorCode::Internal => "internal",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::IncompatibleVersion => "incompatible_version",
            ErrorCode::UnknownKind => "unknown_kind",
            ErrorCode::PeerNotFound => "peer_not_found",
            ErrorCode::InvalidEnvelope => "invalid_envelope",
        }
    }

    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The code of an error returned by this module.
    pub fn of(e: &Error) -> Option<ErrorCode> {
        ErrorCode::parse(e.code())
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cold]
fn err(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(Format::Axon, code.as_str(), message)
}

#[cold]
fn invalid(message: impl Into<String>) -> Error {
    err(ErrorCode::InvalidEnvelope, message)
}

/// A short description of a JSON value, for messages.
fn describe(v: &Value) -> String {
    let s = match v {
        Value::Null => return "null".into(),
        Value::Bool(b) => return format!("the boolean {b}"),
        Value::Number(n) => return format!("the number {n}"),
        Value::String(s) => {
            let mut t: String = s.chars().take(48).collect();
            if t.len() < s.len() {
                t.push('…');
            }
            return format!("the string {t:?}");
        }
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    s.into()
}

// ---------------------------------------------------------------- agent ids

/// The agent id of an Ed25519 public key: `"ed25519."` + the first 16 bytes
/// of SHA-256(key) in lowercase hex (40 characters).
pub fn agent_id(public_key: &[u8]) -> Result<String> {
    use sha2::{Digest, Sha256};
    if public_key.len() != 32 {
        return Err(invalid(format!(
            "an Ed25519 public key is 32 bytes, got {}; pass the raw key bytes (not base64 text or a DER certificate)",
            public_key.len()
        )));
    }
    let digest = Sha256::digest(public_key);
    let mut id = String::with_capacity(40);
    id.push_str(AGENT_ID_PREFIX);
    id.push_str(&crate::tether::to_hex(&digest[..16]));
    Ok(id)
}

/// The Ed25519 public key of a 32-byte private seed.
pub fn public_key_from_seed(seed: &[u8]) -> Result<[u8; 32]> {
    let seed: &[u8; 32] = seed.try_into().map_err(|_| {
        invalid(format!(
            "an Ed25519 private seed is 32 bytes, got {}; upstream stores it base64-encoded in identity.key — decode it first",
            seed.len()
        ))
    })?;
    Ok(ed25519_dalek::SigningKey::from_bytes(seed).verifying_key().to_bytes())
}

/// The agent id of the key pair with this 32-byte private seed.
pub fn agent_id_from_seed(seed: &[u8]) -> Result<String> {
    agent_id(&public_key_from_seed(seed)?)
}

/// Whether `s` is an agent id (`ed25519.` + 32 hex digits, either case).
pub fn is_agent_id(s: &str) -> bool {
    s.strip_prefix(AGENT_ID_PREFIX).is_some_and(|h| h.len() == 32 && h.bytes().all(|c| c.is_ascii_hexdigit()))
}

/// Check an agent id and write it as ids are written: lowercase hex.
pub fn normalize_agent_id(s: &str) -> Result<String> {
    check_agent_id("an agent id", s)
}

/// Compare agent ids as the protocol does: the hex case-insensitively.
pub fn same_agent(a: &str, b: &str) -> bool {
    is_agent_id(a) && is_agent_id(b) && a.eq_ignore_ascii_case(b)
}

fn check_agent_id(what: &str, s: &str) -> Result<String> {
    if is_agent_id(s) {
        return Ok(s.to_ascii_lowercase());
    }
    if let Some((alg, _)) = s.split_once('.') {
        if alg.eq_ignore_ascii_case("ed25519") && alg != "ed25519" {
            return Err(invalid(format!(
                "{what} {s:?} must start with the lowercase prefix \"ed25519.\" (only the hex part is case-insensitive)"
            )));
        }
        if alg != "ed25519" && !alg.is_empty() && alg.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
            return Err(err(
                ErrorCode::IncompatibleVersion,
                format!(
                    "{what} {s:?} uses the key type {alg:?}, which this implementation does not support; AXON v1 agent \
                     ids are \"ed25519.\" followed by 32 hex characters"
                ),
            ));
        }
    }
    Err(invalid(format!(
        "{what} must be \"ed25519.\" followed by 32 hex characters (the first 16 bytes of the SHA-256 of the Ed25519 \
         public key, 40 characters in all), found {s:?}"
    )))
}

// ---------------------------------------------------------------- payload schemas

#[derive(Clone, Copy)]
enum Ty {
    Str,
    /// An integer that fits the named unsigned type.
    Uint(u64, &'static str),
    Bool,
    /// Any JSON value, null included.
    Any,
    StrList,
    /// protocol_versions: a list of integers 0..=255.
    U8List,
    Enum(&'static [&'static str]),
}

#[derive(Clone, Copy)]
enum Presence {
    /// Must be present (and not null unless the type is `Any`).
    Required,
    /// May be absent or null (upstream `Option`).
    Optional,
    /// May be absent, not null; absent means the default (upstream
    /// `#[serde(default)]`).
    Defaulted,
}

struct Field {
    name: &'static str,
    ty: Ty,
    presence: Presence,
    /// Filled in by `decode` when absent (or null, for optional fields).
    default: Option<fn() -> Value>,
    /// What the field holds, for messages.
    about: &'static str,
}

const fn f(name: &'static str, ty: Ty, presence: Presence, about: &'static str) -> Field {
    Field { name, ty, presence, default: None, about }
}

const fn fd(name: &'static str, ty: Ty, presence: Presence, default: fn() -> Value, about: &'static str) -> Field {
    Field { name, ty, presence, default: Some(default), about }
}

use Presence::{Defaulted, Optional, Required};

const U8: Ty = Ty::Uint(u8::MAX as u64, "255");
const U32: Ty = Ty::Uint(u32::MAX as u64, "2^32 - 1");
const U64: Ty = Ty::Uint(u64::MAX, "2^64 - 1");
const ERROR_CODES: &[&str] = &[
    "not_authorized",
    "unknown_domain",
    "overloaded",
    "internal",
    "timeout",
    "cancelled",
    "incompatible_version",
    "unknown_kind",
    "peer_not_found",
    "invalid_envelope",
];

fn empty_list() -> Value {
    Value::Array(Vec::new())
}

static HELLO: &[Field] = &[
    f("protocol_versions", Ty::U8List, Required, "the protocol versions the sender speaks, ascending, e.g. [1]"),
    f("selected_version", U8, Optional, "the version the responder chose (only in the reply)"),
    f("agent_name", Ty::Str, Optional, "a display name"),
    fd("features", Ty::StrList, Defaulted, empty_list, "the optional kinds supported, e.g. [\"delegate\", \"discover\"]"),
];
static PONG: &[Field] = &[
    f("status", Ty::Enum(&["idle", "busy", "overloaded"]), Required, "the peer's load"),
    f("uptime_secs", U64, Required, "seconds since the agent started"),
    f("active_tasks", U32, Required, "how many tasks are running"),
    f("agent_name", Ty::Str, Optional, "a display name"),
];
static QUERY: &[Field] = &[
    f("question", Ty::Str, Required, "the question, in natural language or structured"),
    f("domain", Ty::Str, Optional, "a dot-separated topic hint such as \"family.calendar\""),
    fd("max_tokens", U32, Optional, || Value::from(0u32), "the token budget for the answer; 0 = no limit"),
    fd("deadline_ms", U64, Optional, || Value::from(DEFAULT_DEADLINE_MS), "how long the sender waits, in ms"),
];
static RESPONSE: &[Field] = &[
    f("data", Ty::Any, Required, "the structured answer (any JSON value; null if there is none)"),
    f("summary", Ty::Str, Required, "a human-readable one-line answer"),
    f("tokens_used", U32, Optional, "the budget consumed"),
    f("truncated", Ty::Bool, Optional, "whether the answer was cut short by max_tokens"),
];
static DELEGATE: &[Field] = &[
    f("task", Ty::Str, Required, "the task, in natural language"),
    f("context", Ty::Any, Optional, "structured data the receiver needs"),
    fd("priority", Ty::Enum(&["normal", "urgent"]), Defaulted, || Value::from("normal"), "the task's priority"),
    fd("report_back", Ty::Bool, Defaulted, || Value::Bool(true), "whether to send a result when done"),
    f("deadline_ms", U64, Optional, "the window to attempt the task in, in ms"),
];
static ACK: &[Field] = &[
    f("accepted", Ty::Bool, Required, "whether the receiver will attempt the task (false = refused)"),
    f("estimated_ms", U64, Optional, "a rough completion estimate in ms"),
];
static RESULT: &[Field] = &[
    f("status", Ty::Enum(&["completed", "failed", "partial"]), Required, "how the task ended"),
    f("outcome", Ty::Str, Required, "a natural-language summary of what happened"),
    f("data", Ty::Any, Optional, "the structured result"),
    f("error", Ty::Str, Optional, "the error message if the task failed; null on success"),
];
static NOTIFY: &[Field] = &[
    f("topic", Ty::Str, Required, "a dot-separated topic such as \"user.location\""),
    f("data", Ty::Any, Required, "the notification's data (any JSON value)"),
    fd("importance", Ty::Enum(&["low", "medium", "high"]), Defaulted, || Value::from("low"), "how urgent it is"),
];
static CANCEL: &[Field] = &[f("reason", Ty::Str, Optional, "why the delegation is cancelled")];
static CAPABILITIES: &[Field] = &[
    f("agent_name", Ty::Str, Optional, "a display name"),
    fd("domains", Ty::StrList, Defaulted, empty_list, "the domains served"),
    fd("channels", Ty::StrList, Defaulted, empty_list, "the channels reachable"),
    fd("tools", Ty::StrList, Defaulted, empty_list, "the tools available"),
    f("max_concurrent_tasks", U32, Optional, "how many tasks can run at once"),
    f("model", Ty::Str, Optional, "the model behind the agent"),
];
static ERROR: &[Field] = &[
    f("code", Ty::Enum(ERROR_CODES), Required, "the error code"),
    f("message", Ty::Str, Required, "what went wrong and what to try instead"),
    fd("retryable", Ty::Bool, Defaulted, || Value::Bool(false), "whether retrying may succeed"),
];

fn schema(kind: Kind) -> &'static [Field] {
    match kind {
        Kind::Hello => HELLO,
        Kind::Ping | Kind::Discover => &[],
        Kind::Pong => PONG,
        Kind::Query => QUERY,
        Kind::Response => RESPONSE,
        Kind::Delegate => DELEGATE,
        Kind::Ack => ACK,
        Kind::Result => RESULT,
        Kind::Notify => NOTIFY,
        Kind::Cancel => CANCEL,
        Kind::Capabilities => CAPABILITIES,
        Kind::Error => ERROR,
    }
}

/// The payload fields a kind defines, as `(name, required)` pairs.
pub fn payload_fields(kind: Kind) -> Vec<(&'static str, bool)> {
    schema(kind).iter().map(|f| (f.name, matches!(f.presence, Required))).collect()
}

/// The value `decode` fills in for an absent field of a kind's payload.
pub fn payload_default(kind: Kind, field: &str) -> Option<Value> {
    schema(kind).iter().find(|f| f.name == field).and_then(|f| f.default.map(|d| d()))
}

fn type_text(ty: Ty) -> String {
    match ty {
        Ty::Str => "a string".into(),
        Ty::Uint(_, max) => format!("a whole number from 0 to {max}"),
        Ty::Bool => "true or false".into(),
        Ty::Any => "any JSON value".into(),
        Ty::StrList => "an array of strings".into(),
        Ty::U8List => "an array of whole numbers from 0 to 255".into(),
        Ty::Enum(names) => format!(
            "one of {}",
            names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn type_ok(ty: Ty, v: &Value) -> bool {
    let uint = |v: &Value, max: u64| v.as_u64().is_some_and(|n| n <= max);
    match ty {
        Ty::Str => v.is_string(),
        Ty::Uint(max, _) => uint(v, max),
        Ty::Bool => v.is_boolean(),
        Ty::Any => true,
        Ty::StrList => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        Ty::U8List => v.as_array().is_some_and(|a| a.iter().all(|x| uint(x, 255))),
        Ty::Enum(names) => v.as_str().is_some_and(|s| names.contains(&s)),
    }
}

/// Check a payload against its kind's schema; unknown fields are ignored.
fn check_payload(kind: Kind, payload: &Map<String, Value>) -> Result<()> {
    for field in schema(kind) {
        let value = payload.get(field.name);
        let any = matches!(field.ty, Ty::Any);
        match (field.presence, value) {
            (Required, None) => {
                return Err(invalid(format!(
                    "the {kind} payload needs {:?}: {} ({}); add it",
                    field.name,
                    field.about,
                    type_text(field.ty)
                )));
            }
            (Required, Some(Value::Null)) if !any => {
                return Err(invalid(format!(
                    "the {kind} payload's {:?} must not be null: it is {} ({})",
                    field.name,
                    field.about,
                    type_text(field.ty)
                )));
            }
            (Defaulted, Some(Value::Null)) => {
                return Err(invalid(format!(
                    "the {kind} payload's {:?} may be left out (it then defaults to {}) but not null; it is {} ({})",
                    field.name,
                    field.default.map_or_else(|| "nothing".into(), |d| d().to_string()),
                    field.about,
                    type_text(field.ty)
                )));
            }
            (Optional, Some(Value::Null)) | (_, None) => {}
            (_, Some(v)) => {
                if !type_ok(field.ty, v) {
                    return Err(invalid(format!(
                        "the {kind} payload's {:?} must be {} ({}), found {}",
                        field.name,
                        type_text(field.ty),
                        field.about,
                        describe(v)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Fill in the defaults of absent (or, for optional fields, null) fields.
fn fill_payload_defaults(kind: Kind, payload: &mut Map<String, Value>) {
    for field in schema(kind) {
        if let Some(d) = field.default {
            if payload.get(field.name).is_none_or(Value::is_null) {
                payload.insert(field.name.to_owned(), d());
            }
        }
    }
}

// ---------------------------------------------------------------- envelope

/// One AXON message. Ids are kept in their written form: `id` and `ref_id`
/// lowercase hyphenated UUIDs, `from` and `to` lowercase agent ids.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub v: u8,
    pub id: String,
    pub from: String,
    pub to: String,
    /// Unix time in milliseconds.
    pub ts: u64,
    pub kind: Kind,
    /// The id of the message this one answers (`ref` on the wire).
    pub ref_id: Option<String>,
    pub payload: Map<String, Value>,
}

/// Options for [`decode_with`] and [`Envelope::from_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Fill in the documented defaults of absent payload fields:
    /// `priority` "normal", `report_back` true, `importance` "low",
    /// `retryable` false, query `max_tokens` 0 (no limit) and `deadline_ms`
    /// 30000, and empty `features`/`domains`/`channels`/`tools`. Off, the
    /// payload is kept as sent, so that re-encoding gives the same bytes.
    pub fill_defaults: bool,
    /// Largest accepted body (at least [`MAX_MESSAGE_SIZE`] to interoperate).
    pub max_size: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions { fill_defaults: true, max_size: MAX_MESSAGE_SIZE }
    }
}

/// Unix time now, in milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A fresh message id (random UUID v4, lowercase hyphenated).
pub fn new_id() -> String {
    Uuid::new_v4().to_string()
}

fn check_uuid(what: &str, v: &Value) -> Result<String> {
    match v.as_str().and_then(Uuid::parse) {
        Some(u) => Ok(u.to_string()),
        None => Err(invalid(format!(
            "{what} must be a UUID such as \"6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1\", found {}",
            describe(v)
        ))),
    }
}

const ENVELOPE_FIELDS: &str = "v, id, from, to, ts, kind, payload (and ref when answering)";

impl Envelope {
    /// A new initiating message (protocol version 1, fresh id, current
    /// time, no `ref`), with the payload checked against the kind's schema.
    pub fn new(from: &str, to: &str, kind: Kind, payload: Map<String, Value>) -> Result<Envelope> {
        Envelope::new_with(from, to, kind, payload, new_id(), now_ms())
    }

    /// [`Envelope::new`] with the id and timestamp given.
    pub fn new_with(from: &str, to: &str, kind: Kind, payload: Map<String, Value>, id: String, ts: u64) -> Result<Envelope> {
        let env = Envelope {
            v: PROTOCOL_VERSION,
            id,
            from: check_agent_id("\"from\"", from)?,
            to: check_agent_id("\"to\"", to)?,
            ts,
            kind,
            ref_id: None,
            payload,
        };
        env.validate()?;
        Ok(env)
    }

    /// Check an envelope from JSON: the field types, then the kind, then
    /// version, timestamp and agent ids, then the payload.
    pub fn from_value(value: &Value, opts: &DecodeOptions) -> Result<Envelope> {
        let obj = value.as_object().ok_or_else(|| {
            invalid(format!(
                "an AXON message is one JSON object with {ENVELOPE_FIELDS}; found {}",
                describe(value)
            ))
        })?;
        let get = |name: &str, about: &str| {
            obj.get(name).ok_or_else(|| invalid(format!("the envelope needs {name:?}: {about}; add it")))
        };
        // Types first (what upstream's serde derive checks).
        let v = get("v", "the protocol version, 1")?;
        let v = v.as_u64().filter(|n| *n <= 255).ok_or_else(|| {
            invalid(format!("\"v\" must be the protocol version, a whole number from 1 to 255 (currently 1), found {}", describe(v)))
        })? as u8;
        let id = check_uuid("\"id\"", get("id", "a fresh UUID v4 for this message")?)?;
        let agent = |name: &str| -> Result<&str> {
            let x = get(name, "an agent id, \"ed25519.\" + 32 hex characters")?;
            x.as_str().ok_or_else(|| invalid(format!("{name:?} must be an agent id string, found {}", describe(x))))
        };
        let from = agent("from")?;
        let to = agent("to")?;
        let ts = get("ts", "the send time in unix milliseconds, e.g. 1771108000000")?;
        let ts = ts.as_u64().ok_or_else(|| {
            invalid(format!("\"ts\" must be the send time in unix milliseconds (a positive whole number), found {}", describe(ts)))
        })?;
        let kind = get("kind", "the message kind, e.g. \"query\"")?;
        let kind_name = kind
            .as_str()
            .ok_or_else(|| invalid(format!("\"kind\" must be a string such as \"query\", found {}", describe(kind))))?;
        let ref_id = match obj.get("ref") {
            None | Some(Value::Null) => None,
            Some(r) => Some(check_uuid("\"ref\" (the id of the message this one answers, or null)", r)?),
        };
        let payload = get("payload", "an object with the kind's fields ({} for ping and discover)")?;
        // Then the kind. (Upstream's envelope holds any JSON value as the
        // payload, so an unknown kind is `unknown_kind` whatever the payload.)
        let kind = Kind::parse(kind_name).ok_or_else(|| {
            err(
                ErrorCode::UnknownKind,
                format!(
                    "unknown message kind {kind_name:?}; the kinds are {} (lowercase)",
                    Kind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let mut payload = payload
            .as_object()
            .ok_or_else(|| invalid(format!("\"payload\" must be a JSON object, found {}", describe(payload))))?
            .clone();
        // Then upstream's Envelope::validate.
        if v == 0 {
            return Err(invalid("\"v\" must be the protocol version, 1 or more (currently 1), found 0"));
        }
        let from = check_agent_id("\"from\"", from)?;
        let to = check_agent_id("\"to\"", to)?;
        if ts == 0 {
            return Err(invalid("\"ts\" must be the send time in unix milliseconds, not 0"));
        }
        check_payload(kind, &payload)?;
        if opts.fill_defaults {
            fill_payload_defaults(kind, &mut payload);
        }
        Ok(Envelope { v, id, from, to, ts, kind, ref_id, payload })
    }

    /// Re-check an envelope built or changed in code.
    pub fn validate(&self) -> Result<()> {
        if self.v == 0 {
            return Err(invalid("\"v\" must be the protocol version, 1 or more (currently 1), found 0"));
        }
        check_uuid("\"id\"", &Value::from(self.id.as_str()))?;
        check_agent_id("\"from\"", &self.from)?;
        check_agent_id("\"to\"", &self.to)?;
        if self.ts == 0 {
            return Err(invalid("\"ts\" must be the send time in unix milliseconds, not 0"));
        }
        if let Some(r) = &self.ref_id {
            check_uuid("\"ref\"", &Value::from(r.as_str()))?;
        }
        check_payload(self.kind, &self.payload)
    }

    /// As a JSON object with every envelope field, `ref` null when absent.
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(8);
        m.insert("v".into(), Value::from(self.v));
        m.insert("id".into(), Value::from(self.id.as_str()));
        m.insert("from".into(), Value::from(self.from.as_str()));
        m.insert("to".into(), Value::from(self.to.as_str()));
        m.insert("ts".into(), Value::from(self.ts));
        m.insert("kind".into(), Value::from(self.kind.as_str()));
        m.insert("ref".into(), self.ref_id.as_deref().map_or(Value::Null, Value::from));
        m.insert("payload".into(), Value::Object(self.payload.clone()));
        Value::Object(m)
    }

    /// Whether this message answers another (has a `ref`).
    pub fn is_reply(&self) -> bool {
        self.ref_id.is_some()
    }
}

/// Builds `serde_json::Value`s like the crate's JSON layer, but rejects
/// duplicate object keys.
struct NoDuplicates;

impl crate::json::Builder for NoDuplicates {
    type Value = Value;
    type Key = String;
    type Error = Error;

    fn null(&mut self) -> Result<Value> {
        crate::json::ValueBuilder.null()
    }
    fn bool(&mut self, b: bool) -> Result<Value> {
        crate::json::ValueBuilder.bool(b)
    }
    fn int(&mut self, i: i64) -> Result<Value> {
        crate::json::ValueBuilder.int(i)
    }
    fn big_int(&mut self, digits: &str) -> Result<Value> {
        crate::json::ValueBuilder.big_int(digits)
    }
    fn float(&mut self, x: f64) -> Result<Value> {
        crate::json::ValueBuilder.float(x)
    }
    fn string(&mut self, s: &str) -> Result<Value> {
        crate::json::ValueBuilder.string(s)
    }
    fn key(&mut self, s: &str) -> Result<String> {
        Ok(s.to_owned())
    }
    fn array(&mut self, items: std::vec::Drain<'_, Value>) -> Result<Value> {
        Ok(Value::Array(items.collect()))
    }
    fn object(&mut self, entries: std::vec::Drain<'_, (String, Value)>) -> Result<Value> {
        let mut map = Map::with_capacity(entries.len());
        for (k, v) in entries {
            if map.contains_key(&k) {
                return Err(invalid(format!(
                    "the key {k:?} appears twice in one object; send each field once"
                )));
            }
            map.insert(k, v);
        }
        Ok(Value::Object(map))
    }
}

/// Parse message bytes to JSON (size, UTF-8, syntax, duplicate keys).
fn parse_json(data: &[u8], max_size: usize) -> Result<Value> {
    if data.len() > max_size {
        return Err(invalid(format!(
            "the message is {} bytes; AXON allows at most {max_size} bytes per message — shorten it, or send large \
             data by reference (a URL or a path)",
            data.len()
        )));
    }
    let opts = crate::json::ParseOptions { allow_nan: false, max_depth: MAX_DEPTH, ..Default::default() };
    crate::json::parse_with(data, opts, &mut NoDuplicates).map_err(|e| {
        if e.format() == Format::Axon {
            return e;
        }
        let at = e.offset();
        let e = invalid(format!(
            "the message is not valid JSON ({}); send exactly one UTF-8 JSON object per stream",
            e.message()
        ));
        match at {
            Some(o) => e.at(o),
            None => e,
        }
    })
}

/// Decode and validate one message body, filling in payload defaults.
pub fn decode(data: &[u8]) -> Result<Envelope> {
    decode_with(data, &DecodeOptions::default())
}

/// Decode and validate one message body.
pub fn decode_with(data: &[u8], opts: &DecodeOptions) -> Result<Envelope> {
    Envelope::from_value(&parse_json(data, opts.max_size)?, opts)
}

/// An object with its keys sorted, as a `BTreeMap` orders them.
fn write_map(out: &mut Vec<u8>, m: &Map<String, Value>, depth: usize) -> Result<()> {
    if depth >= MAX_DEPTH {
        return Err(invalid(format!("the payload nests deeper than {MAX_DEPTH} levels")));
    }
    let mut entries: Vec<(&String, &Value)> = m.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (k, x)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, k);
        out.push(b':');
        write_json(out, x, depth + 1)?;
    }
    out.push(b'}');
    Ok(())
}

fn write_json(out: &mut Vec<u8>, v: &Value, depth: usize) -> Result<()> {
    match v {
        Value::Object(m) => write_map(out, m, depth)?,
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(invalid(format!("the payload nests deeper than {MAX_DEPTH} levels")));
            }
            out.push(b'[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(out, x, depth + 1)?;
            }
            out.push(b']');
        }
        scalar => write_scalar(out, scalar),
    }
    Ok(())
}

/// Scalars exactly as serde_json writes them (escapes, float format).
fn write_scalar(out: &mut Vec<u8>, v: &Value) {
    // Writing a scalar Value to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Encode one message exactly as upstream writes it (see the module docs);
/// the envelope is validated first.
pub fn encode(env: &Envelope) -> Result<Vec<u8>> {
    env.validate()?;
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"v\":");
    out.extend_from_slice(itoa::Buffer::new().format(env.v).as_bytes());
    out.extend_from_slice(b",\"id\":");
    write_str(&mut out, &env.id.to_ascii_lowercase());
    out.extend_from_slice(b",\"from\":");
    write_str(&mut out, &env.from.to_ascii_lowercase());
    out.extend_from_slice(b",\"to\":");
    write_str(&mut out, &env.to.to_ascii_lowercase());
    out.extend_from_slice(b",\"ts\":");
    out.extend_from_slice(itoa::Buffer::new().format(env.ts).as_bytes());
    out.extend_from_slice(b",\"kind\":\"");
    out.extend_from_slice(env.kind.as_str().as_bytes());
    out.push(b'"');
    if let Some(r) = &env.ref_id {
        out.extend_from_slice(b",\"ref\":");
        write_str(&mut out, &r.to_ascii_lowercase());
    }
    out.extend_from_slice(b",\"payload\":");
    write_map(&mut out, &env.payload, 1)?;
    out.push(b'}');
    if out.len() > MAX_MESSAGE_SIZE {
        return Err(invalid(format!(
            "the encoded message is {} bytes; AXON allows at most {MAX_MESSAGE_SIZE} bytes per message — shorten \
             it, or send large data by reference (a URL or a path)",
            out.len()
        )));
    }
    Ok(out)
}

/// Validate an envelope given as JSON (payload kept as given, no defaults
/// added) and encode it.
pub fn encode_value(value: &Value) -> Result<Vec<u8>> {
    encode(&Envelope::from_value(value, &DecodeOptions { fill_defaults: false, max_size: usize::MAX })?)
}

// ---------------------------------------------------------------- negotiation and builders

/// The highest protocol version both sides speak, or an
/// `incompatible_version` error saying what each side offered.
pub fn negotiate(local_versions: &[u8], remote_versions: &[u8]) -> Result<u8> {
    local_versions
        .iter()
        .filter(|v| **v != 0 && remote_versions.contains(v))
        .max()
        .copied()
        .ok_or_else(|| {
            err(
                ErrorCode::IncompatibleVersion,
                format!(
                    "no mutually supported protocol version: this agent supports {local_versions:?}, the peer offered \
                     {remote_versions:?}; upgrade whichever side is older"
                ),
            )
        })
}

/// The payload of a hello (request when `selected_version` is None, reply
/// otherwise). Empty `features` are left out, as upstream does.
pub fn hello_payload(
    protocol_versions: &[u8],
    selected_version: Option<u8>,
    agent_name: Option<&str>,
    features: &[String],
) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("protocol_versions".into(), Value::from(protocol_versions.to_vec()));
    if let Some(v) = selected_version {
        p.insert("selected_version".into(), Value::from(v));
    }
    if let Some(n) = agent_name {
        p.insert("agent_name".into(), Value::from(n));
    }
    if !features.is_empty() {
        p.insert("features".into(), Value::from(features.to_vec()));
    }
    p
}

/// The payload of an `error` message.
pub fn error_payload(code: ErrorCode, message: &str, retryable: bool) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("code".into(), Value::from(code.as_str()));
    p.insert("message".into(), Value::from(message));
    p.insert("retryable".into(), Value::Bool(retryable));
    p
}

/// A reply to `request`: `ref` = the request's id, `from`/`to` swapped, the
/// request's `v`, a fresh id and the current time. The kind must be one
/// that answers the request's kind.
pub fn reply(request: &Envelope, kind: Kind, payload: Map<String, Value>) -> Result<Envelope> {
    reply_with(request, kind, payload, new_id(), now_ms())
}

/// [`reply`] with the id and timestamp given.
pub fn reply_with(request: &Envelope, kind: Kind, payload: Map<String, Value>, id: String, ts: u64) -> Result<Envelope> {
    let allowed = [request.kind.response_kinds(), request.kind.later_responses()];
    if !allowed.iter().any(|ks| ks.contains(&kind)) {
        let expected = request.kind.response_kinds();
        return Err(err(
            ErrorCode::InvalidEnvelope,
            if expected.is_empty() {
                format!(
                    "a {} expects no reply; send a new message (ref null) or, for a failure, an error",
                    request.kind
                )
            } else {
                format!(
                    "a {} is answered with {}, not {kind}",
                    request.kind,
                    expected.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(" or ")
                )
            },
        ));
    }
    let env = Envelope {
        v: request.v,
        id,
        from: request.to.clone(),
        to: request.from.clone(),
        ts,
        kind,
        ref_id: Some(request.id.clone()),
        payload,
    };
    env.validate()?;
    Ok(env)
}

/// An `error` reply to `request` (see [`reply`]). Make the message
/// instructive: say what went wrong and what to try instead.
pub fn error_reply(request: &Envelope, code: ErrorCode, message: &str, retryable: bool) -> Envelope {
    error_reply_with(request, code, message, retryable, new_id(), now_ms())
}

/// [`error_reply`] with the id and timestamp given.
pub fn error_reply_with(
    request: &Envelope,
    code: ErrorCode,
    message: &str,
    retryable: bool,
    id: String,
    ts: u64,
) -> Envelope {
    Envelope {
        v: request.v.max(1),
        id,
        from: request.to.clone(),
        to: request.from.clone(),
        ts: ts.max(1),
        kind: Kind::Error,
        ref_id: Some(request.id.clone()),
        payload: error_payload(code, message, retryable),
    }
}

// ---------------------------------------------------------------- session

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
    Ready { peer: String, version: u8, peer_features: Vec<String> },
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
        let payload = hello_payload(
            &self.config.protocol_versions,
            None,
            self.config.agent_name.as_deref(),
            &self.config.features,
        );
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
        let is_hello_traffic = env.kind == Kind::Hello
            || answering.as_ref().is_some_and(|(_, k)| *k == Kind::Hello);
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
                if env.kind.expects_response()
                    && env.kind.is_optional()
                    && !peer_features.iter().any(|f| f == env.kind.as_str())
                {
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
            let report_back =
                env.kind == Kind::Delegate && env.payload.get("report_back") != Some(&Value::Bool(false));
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
            return Self::dropped(
                DropReason::WrongStream,
                format!("a {} is a request and must come on a bidirectional stream", env.kind),
            );
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
            _ => Self::dropped(
                if code == ErrorCode::UnknownKind { DropReason::UnknownKind } else { DropReason::Malformed },
                e.to_string(),
            ),
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
            let m = format!(
                "this hello is addressed to {}, but this agent is {}; look the peer up again",
                env.to, self.config.local_id
            );
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
        let payload = hello_payload(
            &self.config.protocol_versions,
            Some(version),
            self.config.agent_name.as_deref(),
            &self.config.features,
        );
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
            return Self::dropped(
                DropReason::UnexpectedReply,
                format!("a reply from {} to the {} sent to {}", env.from, p.kind, p.to),
            );
        }
        if self.is_replay(&env.id, now_ms) {
            return Self::dropped(DropReason::Replay, format!("message {} was already received", env.id));
        }
        match (p.kind, env.kind) {
            (Kind::Hello, Kind::Hello) => {
                let selected = env.payload.get("selected_version").and_then(Value::as_u64);
                match selected {
                    Some(v) if v <= 255 && self.config.protocol_versions.contains(&(v as u8)) => {
                        self.state = State::Ready {
                            peer: env.from.clone(),
                            version: v as u8,
                            peer_features: string_list(&env.payload, "features"),
                        };
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
    payload
        .get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
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
        assert_eq!(b.send(&reply(&got, Kind::Ack, obj(json!({"accepted": true}))).unwrap(), 2003).unwrap().route, Route::OpenUnidirectional);
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
