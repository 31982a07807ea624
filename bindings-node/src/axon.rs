//! AXON for Node. Envelopes cross the boundary as JSON text: `axon.js` runs
//! `JSON.stringify`/`JSON.parse`, Rust does validation, encoding, agent ids
//! and the session.

use crate::errors::{invalid_arg, IntoNapi, Result};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use polywire::axon::{self, DecodeOptions, Envelope, ErrorCode, Inbound, Kind, Pending, StreamType};
use polywire::json::{self, ParseOptions};
use serde_json::{json, Map, Value};

fn as_sent() -> DecodeOptions {
    DecodeOptions { fill_defaults: false, max_size: usize::MAX }
}

fn parse(text: &str) -> Result<Value> {
    let opts = ParseOptions { max_depth: axon::MAX_DEPTH, ..ParseOptions::default() };
    json::parse(text.as_bytes(), opts)
        .map_err(|e| invalid_arg(ErrorCode::InvalidEnvelope.as_str(), format!("not a JSON value ({})", e.message())))
}

fn envelope_arg(text: &str) -> Result<Envelope> {
    Envelope::from_value(&parse(text)?, &as_sent()).napi()
}

fn payload_arg(text: &str) -> Result<Map<String, Value>> {
    match parse(text)? {
        Value::Object(m) => Ok(m),
        _ => Err(invalid_arg(ErrorCode::InvalidEnvelope.as_str(), "the payload must be an object".into())),
    }
}

fn kind_arg(kind: &str) -> Result<Kind> {
    Kind::parse(kind).ok_or_else(|| {
        invalid_arg(
            ErrorCode::UnknownKind.as_str(),
            format!("unknown message kind {kind:?}; the kinds are {}", Kind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")),
        )
    })
}

fn ms_arg(what: &str, v: Option<f64>) -> Result<u64> {
    match v {
        None => Ok(axon::now_ms()),
        Some(f) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= 9007199254740991.0 => Ok(f as u64),
        Some(f) => Err(invalid_arg(
            ErrorCode::InvalidEnvelope.as_str(),
            format!("{what} must be a non-negative integer number of milliseconds, got {f}"),
        )),
    }
}

fn text(v: &Value) -> String {
    v.to_string()
}

fn env_text(env: &Envelope) -> String {
    text(&env.to_value())
}

#[napi(js_name = "axonDecode")]
pub fn decode(data: &[u8], fill_defaults: Option<bool>) -> Result<String> {
    let opts = DecodeOptions { fill_defaults: fill_defaults.unwrap_or(true), ..DecodeOptions::default() };
    Ok(env_text(&axon::decode_with(data, &opts).napi()?))
}

/// Validate an envelope (JSON text) and encode it: the message body text.
#[napi(js_name = "axonEncode")]
pub fn encode(envelope_json: String) -> Result<String> {
    let bytes = axon::encode(&envelope_arg(&envelope_json)?).napi()?;
    // The encoder writes UTF-8 JSON.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[napi(js_name = "axonValidate")]
pub fn validate(envelope_json: String, fill_defaults: Option<bool>) -> Result<String> {
    let opts = DecodeOptions { fill_defaults: fill_defaults.unwrap_or(true), max_size: usize::MAX };
    Ok(env_text(&Envelope::from_value(&parse(&envelope_json)?, &opts).napi()?))
}

#[napi(js_name = "axonEnvelope")]
pub fn envelope(
    from: String,
    to: String,
    kind: String,
    payload_json: String,
    ref_id: Option<String>,
    id: Option<String>,
    ts: Option<f64>,
) -> Result<String> {
    let kind = kind_arg(&kind)?;
    let mut env =
        Envelope::new_with(&from, &to, kind, payload_arg(&payload_json)?, id.unwrap_or_else(axon::new_id), ms_arg("ts", ts)?).napi()?;
    env.ref_id = ref_id;
    Ok(env_text(&Envelope::from_value(&env.to_value(), &as_sent()).napi()?))
}

#[napi(js_name = "axonReply")]
pub fn reply(request_json: String, kind: String, payload_json: String, id: Option<String>, ts: Option<f64>) -> Result<String> {
    let req = envelope_arg(&request_json)?;
    let env =
        axon::reply_with(&req, kind_arg(&kind)?, payload_arg(&payload_json)?, id.unwrap_or_else(axon::new_id), ms_arg("ts", ts)?).napi()?;
    Ok(env_text(&env))
}

#[napi(js_name = "axonErrorEnvelope")]
pub fn error_envelope(
    request_json: String,
    code: String,
    message: String,
    retryable: Option<bool>,
    id: Option<String>,
    ts: Option<f64>,
) -> Result<String> {
    let req = envelope_arg(&request_json)?;
    let code = ErrorCode::parse(&code).ok_or_else(|| {
        invalid_arg(
            ErrorCode::InvalidEnvelope.as_str(),
            format!(
                "unknown error code {code:?}; the codes are {}",
                ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )
    })?;
    let env = axon::error_reply_with(&req, code, &message, retryable.unwrap_or(false), id.unwrap_or_else(axon::new_id), ms_arg("ts", ts)?);
    env.validate().napi()?;
    Ok(env_text(&env))
}

#[napi(js_name = "axonAgentId")]
pub fn agent_id(public_key: &[u8]) -> Result<String> {
    axon::agent_id(public_key).napi()
}

#[napi(js_name = "axonAgentIdFromSeed")]
pub fn agent_id_from_seed(seed: &[u8]) -> Result<String> {
    axon::agent_id_from_seed(seed).napi()
}

#[napi(js_name = "axonPublicKeyFromSeed")]
pub fn public_key_from_seed<'e>(env: &'e Env, seed: &[u8]) -> Result<BufferSlice<'e>> {
    crate::kado::v8_buffer(env, &axon::public_key_from_seed(seed).napi()?)
}

#[napi(js_name = "axonIsAgentId")]
pub fn is_agent_id(s: String) -> bool {
    axon::is_agent_id(&s)
}

#[napi(js_name = "axonSameAgent")]
pub fn same_agent(a: String, b: String) -> bool {
    axon::same_agent(&a, &b)
}

fn versions_arg(what: &str, v: &[f64]) -> Result<Vec<u8>> {
    v.iter()
        .map(|&x| {
            if x.fract() == 0.0 && (0.0..=255.0).contains(&x) {
                Ok(x as u8)
            } else {
                Err(invalid_arg(ErrorCode::InvalidEnvelope.as_str(), format!("{what} versions must be integers from 0 to 255, found {x}")))
            }
        })
        .collect()
}

#[napi(js_name = "axonNegotiate")]
pub fn negotiate(local_versions: Vec<f64>, remote_versions: Vec<f64>) -> Result<u32> {
    let l = versions_arg("local", &local_versions)?;
    let r = versions_arg("remote", &remote_versions)?;
    Ok(u32::from(axon::negotiate(&l, &r).napi()?))
}

fn names(ks: &[Kind]) -> Vec<&'static str> {
    ks.iter().map(|k| k.as_str()).collect()
}

/// `{kind: {required, expectsResponse, responseKinds, laterResponses, stream, fields}}` as JSON.
#[napi(js_name = "axonKindRules")]
pub fn kind_rules() -> String {
    let mut m = Map::new();
    for k in Kind::ALL {
        let fields: Vec<Value> = axon::payload_fields(k).into_iter().map(|(n, req)| json!([n, req])).collect();
        m.insert(
            k.as_str().into(),
            json!({
                "required": k.is_required(),
                "expectsResponse": k.expects_response(),
                "responseKinds": names(k.response_kinds()),
                "laterResponses": names(k.later_responses()),
                "stream": k.stream().as_str(),
                "fields": fields,
            }),
        );
    }
    text(&Value::Object(m))
}

/// `{kind: {field: default}}` as JSON.
#[napi(js_name = "axonPayloadDefaults")]
pub fn payload_defaults() -> String {
    let mut m = Map::new();
    for k in Kind::ALL {
        let mut f = Map::new();
        for (name, _) in axon::payload_fields(k) {
            if let Some(v) = axon::payload_default(k, name) {
                f.insert(name.into(), v);
            }
        }
        if !f.is_empty() {
            m.insert(k.as_str().into(), Value::Object(f));
        }
    }
    text(&Value::Object(m))
}

// ---------------------------------------------------------------- session

fn pending_value(p: &Pending) -> Value {
    json!({
        "id": p.id,
        "kind": p.kind.as_str(),
        "to": p.to,
        "sentMs": p.sent_ms,
        "deadlineMs": p.deadline_ms,
        "reportBack": p.report_back,
        "awaitingResult": p.awaiting_result,
    })
}

fn body_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The sans-IO session; the JS `Session` wraps it. Results are JSON text;
/// message bodies inside them (`body`) are the encoded JSON text.
#[napi]
pub struct AxonSession {
    inner: axon::Session,
}

#[napi]
impl AxonSession {
    /// `config`: `{localId, protocolVersions?, features?, agentName?, expectedPeer?, replayWindowMs?, replayCapacity?}` as JSON.
    #[napi(constructor)]
    pub fn new(config_json: String) -> Result<Self> {
        let c = parse(&config_json)?;
        let bad = |m: &str| invalid_arg(ErrorCode::InvalidEnvelope.as_str(), m.to_owned());
        let local = c.get("localId").and_then(Value::as_str).ok_or_else(|| bad("localId (an agent id) is required"))?;
        let mut config = axon::SessionConfig::new(local);
        if let Some(v) = c.get("protocolVersions").filter(|v| !v.is_null()) {
            let list: Vec<f64> =
                v.as_array().ok_or_else(|| bad("protocolVersions must be an array"))?.iter().filter_map(Value::as_f64).collect();
            config.protocol_versions = versions_arg("the session's", &list)?;
        }
        if let Some(v) = c.get("features").filter(|v| !v.is_null()) {
            config.features = v
                .as_array()
                .ok_or_else(|| bad("features must be an array of strings"))?
                .iter()
                .map(|f| f.as_str().map(str::to_owned).ok_or_else(|| bad("features must be an array of strings")))
                .collect::<Result<_>>()?;
        }
        config.agent_name = c.get("agentName").and_then(Value::as_str).map(str::to_owned);
        config.expected_peer = c.get("expectedPeer").and_then(Value::as_str).map(str::to_owned);
        if let Some(v) = c.get("replayWindowMs").filter(|v| !v.is_null()) {
            config.replay_window_ms = v.as_u64().ok_or_else(|| bad("replayWindowMs must be a non-negative integer"))?;
        }
        if let Some(v) = c.get("replayCapacity").filter(|v| !v.is_null()) {
            config.replay_capacity = v.as_u64().ok_or_else(|| bad("replayCapacity must be a non-negative integer"))? as usize;
        }
        Ok(AxonSession { inner: axon::Session::new(config).napi()? })
    }

    /// `{body, route, envelope}` of the hello to send.
    #[napi]
    pub fn hello(&mut self, to: String, now_ms: Option<f64>) -> Result<String> {
        let out = self.inner.hello(&to, ms_arg("nowMs", now_ms)?).napi()?;
        let env = axon::decode_with(&out.bytes, &as_sent()).napi()?;
        Ok(text(&json!({ "body": body_text(&out.bytes), "route": out.route.as_str(), "envelope": env.to_value() })))
    }

    /// `{body, route, envelope}` of a message to send.
    #[napi]
    pub fn send(&mut self, envelope_json: String, now_ms: Option<f64>) -> Result<String> {
        let env = envelope_arg(&envelope_json)?;
        let out = self.inner.send(&env, ms_arg("nowMs", now_ms)?).napi()?;
        Ok(text(&json!({ "body": body_text(&out.bytes), "route": out.route.as_str(), "envelope": env.to_value() })))
    }

    /// What to do with a received body (see `Inbound` in axon.d.ts).
    #[napi]
    pub fn receive(&mut self, data: &[u8], stream: String, now_ms: Option<f64>) -> Result<String> {
        let stream = match stream.as_str() {
            "bidirectional" | "bidi" => StreamType::Bidirectional,
            "unidirectional" | "uni" => StreamType::Unidirectional,
            other => {
                return Err(invalid_arg(
                    ErrorCode::InvalidEnvelope.as_str(),
                    format!("stream must be \"bidirectional\" or \"unidirectional\", not {other:?}"),
                ))
            }
        };
        let now = ms_arg("nowMs", now_ms)?;
        Ok(text(&match self.inner.receive(data, stream, now) {
            Inbound::Deliver { envelope, in_reply_to } => json!({
                "action": "deliver",
                "envelope": envelope.to_value(),
                "inReplyTo": in_reply_to.as_ref().map(pending_value),
            }),
            Inbound::Respond { reply, delivered } => json!({
                "action": "respond",
                "reply": reply.to_value(),
                "body": body_text(&axon::encode(&reply).napi()?),
                "delivered": delivered.as_ref().map(Envelope::to_value),
            }),
            Inbound::Dropped { reason, message } => json!({
                "action": "dropped",
                "reason": reason.as_str(),
                "message": message,
            }),
        }))
    }

    #[napi]
    pub fn expire(&mut self, now_ms: Option<f64>) -> Result<String> {
        let gone: Vec<Value> = self.inner.expire(ms_arg("nowMs", now_ms)?).iter().map(pending_value).collect();
        Ok(text(&Value::Array(gone)))
    }

    #[napi]
    pub fn forget(&mut self, id: String) -> Option<String> {
        self.inner.forget(&id).map(|p| text(&pending_value(&p)))
    }

    #[napi(getter)]
    pub fn local_id(&self) -> String {
        self.inner.local_id().to_owned()
    }

    #[napi(getter)]
    pub fn ready(&self) -> bool {
        self.inner.is_ready()
    }

    #[napi(getter)]
    pub fn peer(&self) -> Option<String> {
        self.inner.peer().map(str::to_owned)
    }

    #[napi(getter)]
    pub fn version(&self) -> Option<u32> {
        self.inner.version().map(u32::from)
    }

    #[napi(getter)]
    pub fn peer_features(&self) -> Option<Vec<String>> {
        self.inner.peer_features().map(<[String]>::to_vec)
    }

    /// Pending requests, oldest first, as JSON.
    #[napi(getter)]
    pub fn pending(&self) -> String {
        let mut ps: Vec<&Pending> = self.inner.pending().collect();
        ps.sort_by(|a, b| a.sent_ms.cmp(&b.sent_ms).then_with(|| a.id.cmp(&b.id)));
        text(&Value::Array(ps.into_iter().map(pending_value).collect()))
    }
}

// ---------------------------------------------------------------- axon/1

use polywire::axon::axon1;

fn axon1_text(env: &axon1::Envelope) -> Result<String> {
    let payload = parse(&env.payload)?;
    Ok(json!({"id": env.id, "kind": env.kind, "ref": env.ref_id, "payload": payload}).to_string())
}

/// An axon/1 envelope from its JSON text (`id`, `kind`, `ref`, `payload`;
/// other keys ignored, as the wire ignores them).
fn axon1_arg(text: &str) -> Result<axon1::Envelope> {
    let invalid = |m: String| invalid_arg(axon1::INVALID_ENVELOPE, m);
    let Value::Object(m) = parse(text)? else { return Err(invalid("the envelope must be an object".into())) };
    let string = |key: &str| match m.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(invalid(format!("the envelope's {key:?} must be a string"))),
    };
    let ref_id = match m.get("ref") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid("the envelope's \"ref\" must be a string or null".into())),
    };
    let payload = match m.get("payload") {
        Some(Value::Object(p)) => axon1::payload_text(p),
        _ => return Err(invalid("the envelope's \"payload\" must be an object".into())),
    };
    Ok(axon1::Envelope { id: string("id")?, kind: string("kind")?, ref_id, payload })
}

fn axon1_built(env: axon1::Envelope) -> Result<String> {
    axon1::encode(&env).napi()?;
    axon1_text(&env)
}

/// Decode and validate one axon/1 message: the envelope as JSON text.
#[napi(js_name = "axon1Decode")]
pub fn axon1_decode(data: &[u8]) -> Result<String> {
    axon1_text(&axon1::decode(data).napi()?)
}

/// Validate an axon/1 envelope (JSON text) and encode it for the wire.
#[napi(js_name = "axon1Encode")]
pub fn axon1_encode(envelope_json: String) -> Result<Buffer> {
    Ok(axon1::encode(&axon1_arg(&envelope_json)?).napi()?.into())
}

/// A new axon/1 message of `kind` (a fresh id unless given).
#[napi(js_name = "axon1Message")]
pub fn axon1_message(kind: String, payload_json: String, ref_id: Option<String>, id: Option<String>) -> Result<String> {
    let mut env = axon1::Envelope::new(&kind, &payload_arg(&payload_json)?);
    env.ref_id = ref_id;
    if let Some(id) = id {
        env.id = id;
    }
    axon1_built(env)
}

/// A `response` (`error_code` None) or an `error` reply to a request.
#[napi(js_name = "axon1Reply")]
pub fn axon1_reply(
    request_json: String,
    payload_json: Option<String>,
    error_code: Option<String>,
    error_message: Option<String>,
    retryable: Option<bool>,
    id: Option<String>,
) -> Result<String> {
    let req = axon1_arg(&request_json)?;
    let mut env = match error_code {
        Some(code) => axon1::error_to(&req, &code, error_message.as_deref().unwrap_or_default(), retryable.unwrap_or(false)),
        None => axon1::response_to(&req, &payload_arg(payload_json.as_deref().unwrap_or("{}"))?),
    };
    if let Some(id) = id {
        env.id = id;
    }
    axon1_built(env)
}
