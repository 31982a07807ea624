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
    pub const REQUIRED: [Kind; 7] = [Kind::Hello, Kind::Ping, Kind::Pong, Kind::Query, Kind::Response, Kind::Notify, Kind::Error];

    /// Kinds a peer supports only if its hello lists them in `features`.
    pub const OPTIONAL: [Kind; 6] = [Kind::Delegate, Kind::Ack, Kind::Result, Kind::Cancel, Kind::Discover, Kind::Capabilities];

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
        Ty::Enum(names) => format!("one of {}", names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")),
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
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// A fresh message id (random UUID v4, lowercase hyphenated).
pub fn new_id() -> String {
    Uuid::new_v4().to_string()
}

fn check_uuid(what: &str, v: &Value) -> Result<String> {
    match v.as_str().and_then(Uuid::parse) {
        Some(u) => Ok(u.to_string()),
        None => Err(invalid(format!("{what} must be a UUID such as \"6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1\", found {}", describe(v)))),
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
        let obj = value
            .as_object()
            .ok_or_else(|| invalid(format!("an AXON message is one JSON object with {ENVELOPE_FIELDS}; found {}", describe(value))))?;
        let get = |name: &str, about: &str| obj.get(name).ok_or_else(|| invalid(format!("the envelope needs {name:?}: {about}; add it")));
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
        let kind_name =
            kind.as_str().ok_or_else(|| invalid(format!("\"kind\" must be a string such as \"query\", found {}", describe(kind))))?;
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
        let mut payload =
            payload.as_object().ok_or_else(|| invalid(format!("\"payload\" must be a JSON object, found {}", describe(payload))))?.clone();
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
                return Err(invalid(format!("the key {k:?} appears twice in one object; send each field once")));
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
        let e = invalid(format!("the message is not valid JSON ({}); send exactly one UTF-8 JSON object per stream", e.message()));
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
    local_versions.iter().filter(|v| **v != 0 && remote_versions.contains(v)).max().copied().ok_or_else(|| {
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
                format!("a {} expects no reply; send a new message (ref null) or, for a failure, an error", request.kind)
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
pub fn error_reply_with(request: &Envelope, code: ErrorCode, message: &str, retryable: bool, id: String, ts: u64) -> Envelope {
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

mod session;
pub use session::*;
