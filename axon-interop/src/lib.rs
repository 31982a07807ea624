//! What the AXON interop programs and tests share: the test handler every
//! language's test peer implements the same way, and the line protocol of
//! `axon-node`.
//!
//! The test handler answers a request from the payload it carries:
//! `{"sleep_ms": n}` waits n ms first; `{"fail": {"code", "message",
//! "retryable"}}` answers with that error; anything else is echoed: axon/1
//! `{"echo": payload, "from": sender}`; v2 `query` a `response`
//! `{"data": {"echo": payload, "from": sender}, "summary": "echo"}`,
//! `delegate`/`cancel` an `ack` `{"accepted": true}`.

use std::time::Duration;

use polywire::axon::peer::{Answer, Protocol};
use serde_json::{json, Map, Value};

/// The test handler's answer to a request, and how long to wait first.
pub fn answer(protocol: Protocol, from: &str, kind: &str, payload: &Map<String, Value>) -> (Option<Duration>, Answer) {
    let delay = payload.get("sleep_ms").and_then(Value::as_u64).map(Duration::from_millis);
    if let Some(Value::Object(f)) = payload.get("fail") {
        let text = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let retryable = f.get("retryable").and_then(Value::as_bool).unwrap_or(false);
        return (delay, Answer::Error { code: text("code"), message: text("message"), retryable });
    }
    let echo = json!({"echo": Value::Object(payload.clone()), "from": from});
    let reply = match (protocol, kind) {
        (Protocol::Axon1, _) => echo,
        (Protocol::V2, "query") => json!({"data": echo, "summary": "echo"}),
        (Protocol::V2, _) => json!({"accepted": true}),
    };
    (delay, Answer::Payload(reply.as_object().cloned().unwrap_or_default()))
}

/// Serve `request` with the test handler (on the caller's runtime).
pub async fn serve_one(protocol: Protocol, request: polywire::axon::peer::InboundRequest) {
    let (delay, answer) = answer(protocol, &request.from, &request.kind, &request.payload);
    if let Some(d) = delay {
        tokio::time::sleep(d).await;
    }
    match answer {
        Answer::Payload(p) => request.respond(p),
        Answer::Error { code, message, retryable } => request.fail(&code, &message, retryable),
    }
}

/// Percentile `p` (0..=100) of sorted samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p / 100.0).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}
