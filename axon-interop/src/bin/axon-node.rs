//! polywire's AXON peer (`polywire::axon::peer`) as a program driven line by
//! line on stdin, answering on stdout: the Rust peer of the Python and Node
//! peer tests (and the server of bench/axon_bench.py).
//!
//! `axon-node [--protocol axon/1|v2] [--seed <64 hex>] [--listen ip:port]
//! [--serve] [--agent-name name]` starts a peer on 127.0.0.1 and prints
//! `READY <agent id> <listen addr> <token> <public key base64>`. With
//! `--serve` it answers requests with the test handler
//! ([`axon_interop::answer`]). Then, per line (one answer line each):
//!
//! - `add <token>` / `addkey <pubkey base64> <addr or ->`: `ADDED <agent id>`
//! - `remove <agent id>`: `REMOVED true|false`
//! - `serve on|off`, `wrongref on|off`: `OK`
//! - `request <agent id> <kind> <timeout s> <json payload>`: `REPLY <json
//!   payload>` or `ERROR <code> <json {"message","remote_code","retryable"}>`
//! - `send <agent id> <kind> <json payload>`: `SENT <id>` or `ERROR ...`
//! - `burst <agent id> <n> <timeout s>`: n requests at once, each `{"i": k}`,
//!   every reply checked: `BURST <answered> <failed>`
//! - `flood <agent id> <n>`: n messages one after another (axon/1 `message`
//!   `{"i": k}`, v2 `notify` `{"topic": "flood", "data": k}`): `FLOODED <n>`
//! - `raw <agent id> uni|bidi <size>`: a message of exactly `size` bytes
//!   (over 65,536 on purpose, say) on a new stream: `RAW <json reply text>`
//! - `events`: the last 1,000 events, then forgotten: `EVENTS <json array>`
//! - `count`: `COUNT <messages> <errors> <pair requests>` received so far
//! - `connid <agent id>`: `CONNID <stable id of the connection or none>`
//! - `peers`: `PEERS <json>`
//! - `bench <agent id> <requests> <in flight>`: `BENCH <p50 µs> <p99 µs> <per s>`
//! - `quit`

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use polywire::axon::identity::Identity;
use polywire::axon::peer::{Event, Peer, PeerConfig, PeerError, PeerInfo, Protocol};
use serde_json::{json, Map, Value};

#[derive(Default)]
struct Seen {
    messages: u64,
    errors: u64,
    pairs: u64,
    last: VecDeque<Value>,
}

fn event_json(e: &Event) -> Value {
    match e {
        Event::Message(m) | Event::Error(m) => json!({
            "type": if matches!(e, Event::Error(_)) { "error" } else { "message" },
            "from": m.from, "id": m.id, "kind": m.kind, "ref": m.ref_id, "payload": Value::Object(m.payload.clone()),
        }),
        Event::PairRequest(p) => json!({
            "type": "pair_request", "agent_id": p.agent_id,
            "pubkey": polywire::axon::identity::public_key_to_base64(&p.public_key),
            "addr": p.addr.map(|a| a.to_string()),
        }),
    }
}

fn error_line(e: &PeerError) -> String {
    let detail = match e {
        PeerError::Remote { code, message, retryable } => {
            json!({"message": e.to_string(), "remote_code": code, "remote_message": message, "retryable": retryable})
        }
        _ => json!({"message": e.to_string()}),
    };
    format!("ERROR {} {detail}", e.code())
}

fn object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(format!("ERROR BAD_COMMAND {}", json!({"message": "the payload must be a JSON object"}))),
    }
}

/// A message of exactly `size` bytes (padding in the payload).
fn sized_message(protocol: Protocol, me: &str, to: &str, size: usize) -> Vec<u8> {
    let build = |fill: usize| -> Vec<u8> {
        let data = "x".repeat(fill);
        match protocol {
            Protocol::Axon1 => {
                let env = polywire::axon::axon1::Envelope {
                    id: polywire::axon::new_id(),
                    kind: "message".into(),
                    ref_id: None,
                    payload: json!({"data": data}).to_string(),
                };
                format!(r#"{{"id":"{}","kind":"message","payload":{}}}"#, env.id, env.payload).into_bytes()
            }
            Protocol::V2 => format!(
                r#"{{"v":1,"id":"{}","from":"{me}","to":"{to}","ts":{},"kind":"notify","payload":{{"data":"{data}","topic":"raw"}}}}"#,
                polywire::axon::new_id(),
                polywire::axon::now_ms()
            )
            .into_bytes(),
        }
    };
    let base = build(0).len();
    build(size.saturating_sub(base))
}

async fn command(peer: &Peer, seen: &Arc<Mutex<Seen>>, line: &str) -> Option<String> {
    let protocol = peer.protocol();
    let (cmd, rest) = line.split_once(' ').unwrap_or((line, ""));
    // The last argument of a command is the rest of the line (a JSON payload
    // may hold spaces).
    let count = match cmd {
        "send" => 3,
        "request" => 4,
        _ => 8,
    };
    let mut words = rest.splitn(count, ' ');
    let mut arg = || words.next().unwrap_or_default().to_owned();
    Some(match cmd {
        "quit" => return None,
        "add" => match PeerInfo::from_token(&arg()).and_then(|i| peer.add_peer(i.clone()).map(|()| i)) {
            Ok(i) => format!("ADDED {}", i.agent_id),
            Err(e) => error_line(&e),
        },
        "addkey" => {
            let (key, addr) = (arg(), arg());
            let addr = (addr != "-").then_some(addr);
            match PeerInfo::from_parts(None, &key, addr.as_deref()).and_then(|i| peer.add_peer(i.clone()).map(|()| i)) {
                Ok(i) => format!("ADDED {}", i.agent_id),
                Err(e) => error_line(&e),
            }
        }
        "remove" => match peer.remove_peer(&arg()) {
            Ok(known) => format!("REMOVED {known}"),
            Err(e) => error_line(&e),
        },
        "serve" => {
            peer.set_serving(arg() == "on");
            "OK".into()
        }
        "wrongref" => {
            peer.testing().set_wrong_ref(arg() == "on");
            "OK".into()
        }
        "request" => {
            let (to, kind, timeout) = (arg(), arg(), arg().parse::<f64>().unwrap_or(30.0));
            let payload = match object(&arg()) {
                Ok(p) => p,
                Err(e) => return Some(e),
            };
            match peer.request(&to, &kind, payload, Duration::from_secs_f64(timeout)).await {
                Ok(r) => format!("REPLY {}", Value::Object(r.payload)),
                Err(e) => error_line(&e),
            }
        }
        "send" => {
            let (to, kind) = (arg(), arg());
            let payload = match object(&arg()) {
                Ok(p) => p,
                Err(e) => return Some(e),
            };
            match peer.send(&to, &kind, payload, None, Duration::from_secs(30)).await {
                Ok(id) => format!("SENT {id}"),
                Err(e) => error_line(&e),
            }
        }
        "burst" => {
            let (to, n, timeout) = (arg(), arg().parse::<usize>().unwrap_or(0), arg().parse::<f64>().unwrap_or(30.0));
            let kind = if protocol == Protocol::V2 { "query" } else { "request" };
            let mut tasks = Vec::with_capacity(n);
            for i in 0..n {
                let mut p = Map::new();
                if protocol == Protocol::V2 {
                    p.insert("question".into(), Value::from(format!("{i}")));
                }
                p.insert("i".into(), Value::from(i));
                let fut = peer.request(&to, kind, p, Duration::from_secs_f64(timeout));
                tasks.push(tokio::spawn(async move {
                    let r = fut.await.ok()?;
                    let echo = if protocol == Protocol::V2 { &r.payload["data"]["echo"] } else { &r.payload["echo"] };
                    (echo["i"] == json!(i)).then_some(())
                }));
            }
            let mut ok = 0;
            for t in tasks {
                if let Ok(Some(())) = t.await {
                    ok += 1;
                }
            }
            format!("BURST {ok} {}", n - ok)
        }
        "flood" => {
            let (to, n) = (arg(), arg().parse::<usize>().unwrap_or(0));
            for i in 0..n {
                let (kind, p) = match protocol {
                    Protocol::Axon1 => ("message", json!({"i": i})),
                    Protocol::V2 => ("notify", json!({"topic": "flood", "data": i})),
                };
                let p = p.as_object().cloned().unwrap_or_default();
                if let Err(e) = peer.send(&to, kind, p, None, Duration::from_secs(30)).await {
                    return Some(error_line(&e));
                }
            }
            format!("FLOODED {n}")
        }
        "raw" => {
            let (to, how, size) = (arg(), arg(), arg().parse::<usize>().unwrap_or(0));
            let data = sized_message(protocol, peer.agent_id(), &to, size);
            match peer.testing().raw(&to, data, how == "bidi", Duration::from_secs(15)).await {
                Ok(reply) => format!("RAW {}", Value::from(String::from_utf8_lossy(&reply).into_owned())),
                Err(e) => error_line(&e),
            }
        }
        "events" => {
            let all: Vec<Value> = seen.lock().map(|mut s| s.last.drain(..).collect()).unwrap_or_default();
            format!("EVENTS {}", Value::Array(all))
        }
        "count" => {
            let s = seen.lock().map(|s| (s.messages, s.errors, s.pairs)).unwrap_or_default();
            format!("COUNT {} {} {}", s.0, s.1, s.2)
        }
        "connid" => match peer.testing().connection_id(&arg()) {
            Some(id) => format!("CONNID {id}"),
            None => "CONNID none".into(),
        },
        "peers" => {
            let list: Vec<Value> = peer
                .peers()
                .into_iter()
                .map(|p| json!({"agent_id": p.agent_id, "addr": p.addr, "status": p.status, "rtt_ms": p.rtt.map(|r| r.as_secs_f64() * 1000.0)}))
                .collect();
            format!("PEERS {}", Value::Array(list))
        }
        "bench" => {
            let (to, n, in_flight) = (arg(), arg().parse::<usize>().unwrap_or(0), arg().parse::<usize>().unwrap_or(1).max(1));
            bench(peer, &to, n, in_flight).await
        }
        other => format!("ERROR BAD_COMMAND {}", json!({"message": format!("unknown command {other:?}")})),
    })
}

async fn bench(peer: &Peer, to: &str, n: usize, in_flight: usize) -> String {
    let kind = if peer.protocol() == Protocol::V2 { "query" } else { "request" };
    let payload = |i: usize| {
        let mut p = Map::new();
        if peer.protocol() == Protocol::V2 {
            p.insert("question".into(), Value::from("bench"));
        }
        p.insert("i".into(), Value::from(i));
        p
    };
    // Warm up (connection, caches).
    for i in 0..100.min(n) {
        if let Err(e) = peer.request(to, kind, payload(i), Duration::from_secs(30)).await {
            return error_line(&e);
        }
    }
    let start = Instant::now();
    let mut samples = Vec::with_capacity(n);
    let mut next = 0;
    let mut running = tokio::task::JoinSet::new();
    while samples.len() < n {
        while next < n && running.len() < in_flight {
            let fut = peer.request(to, kind, payload(next), Duration::from_secs(30));
            running.spawn(async move {
                let t = Instant::now();
                fut.await.map(|_| t.elapsed())
            });
            next += 1;
        }
        match running.join_next().await {
            Some(Ok(Ok(d))) => samples.push(d),
            Some(Ok(Err(e))) => return error_line(&e),
            _ => return "ERROR BENCH {}".into(),
        }
    }
    let total = start.elapsed();
    samples.sort();
    let p50 = axon_interop::percentile(&samples, 50.0);
    let p99 = axon_interop::percentile(&samples, 99.0);
    format!("BENCH {:.1} {:.1} {:.0}", p50.as_secs_f64() * 1e6, p99.as_secs_f64() * 1e6, n as f64 / total.as_secs_f64())
}

fn main() {
    let mut config = PeerConfig::default();
    let mut serve = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--protocol" => config.protocol = Protocol::parse(&args.next().unwrap_or_default()).expect("axon/1 or v2"),
            "--listen" => config.listen = args.next().expect("an address"),
            "--agent-name" => config.agent_name = args.next(),
            "--serve" => serve = true,
            "--seed" => {
                let hex = args.next().expect("64 hex digits");
                let mut seed = [0u8; 32];
                for (i, b) in seed.iter_mut().enumerate() {
                    *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex");
                }
                config.identity = Some(Identity::from_seed(seed));
            }
            other => panic!("unknown option {other}"),
        }
    }
    let protocol = config.protocol;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let (peer, inbound) = match Peer::start(config) {
            Ok(p) => p,
            Err(e) => {
                println!("{}", error_line(&e));
                return;
            }
        };
        peer.set_serving(serve);
        println!("READY {} {} {} {}", peer.agent_id(), peer.listen_addr(), peer.token(), peer.public_key_base64());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut events = inbound.events;
        let record = seen.clone();
        tokio::spawn(async move {
            while let Some(e) = events.recv().await {
                if let Ok(mut s) = record.lock() {
                    match &e {
                        Event::Message(_) => s.messages += 1,
                        Event::Error(_) => s.errors += 1,
                        Event::PairRequest(_) => s.pairs += 1,
                    }
                    if s.last.len() >= 1000 {
                        s.last.pop_front();
                    }
                    s.last.push_back(event_json(&e));
                }
            }
        });
        let mut requests = inbound.requests;
        tokio::spawn(async move {
            while let Some(r) = requests.recv().await {
                tokio::spawn(axon_interop::serve_one(protocol, r));
            }
        });
        let (tx, mut lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        while let Some(line) = lines.recv().await {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            match command(&peer, &seen, line).await {
                Some(answer) => println!("{answer}"),
                None => break,
            }
        }
        let closing = peer.clone();
        let _ = tokio::task::spawn_blocking(move || closing.close()).await;
    });
}
