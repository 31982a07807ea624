//! polywire's AXON peer against itself (Rust to Rust, both protocols) and
//! against the `axon-node` program (a peer killed mid-request), on
//! 127.0.0.1; every wait bounded. The Python and Node suites
//! (tests-py/test_axon_peer.py, tests-js/axon_peer.test.js) run the other
//! pairings against `axon-node`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use polywire::axon::identity::Identity;
use polywire::axon::peer::{tls, Event, Peer, PeerConfig, PeerError, PeerInfo, Protocol};
use serde_json::{json, Map, Value};

const WAIT: Duration = Duration::from_secs(20);

struct TestPeer {
    peer: Peer,
    events: Arc<Mutex<Vec<Event>>>,
}

impl TestPeer {
    fn start(protocol: Protocol, serve: bool) -> TestPeer {
        TestPeer::start_with(PeerConfig { protocol, ..PeerConfig::default() }, serve)
    }

    fn start_with(config: PeerConfig, serve: bool) -> TestPeer {
        let protocol = config.protocol;
        let (peer, inbound) = Peer::start(config).expect("the peer starts");
        peer.set_serving(serve);
        let events = Arc::new(Mutex::new(Vec::new()));
        let record = events.clone();
        let mut rx = inbound.events;
        peer.spawn(async move {
            while let Some(e) = rx.recv().await {
                record.lock().unwrap().push(e);
            }
        });
        let mut requests = inbound.requests;
        peer.spawn(async move {
            while let Some(r) = requests.recv().await {
                tokio::spawn(axon_interop::serve_one(protocol, r));
            }
        });
        TestPeer { peer, events }
    }

    fn info(&self) -> PeerInfo {
        PeerInfo::from_token(&self.peer.token()).unwrap()
    }

    /// Wait until `pred` holds for the events received (bounded).
    async fn wait_events(&self, pred: impl Fn(&[Event]) -> bool) -> Vec<Event> {
        let start = Instant::now();
        loop {
            {
                let e = self.events.lock().unwrap();
                if pred(&e) {
                    return e.clone();
                }
            }
            assert!(start.elapsed() < WAIT, "events never came: {:?}", self.events.lock().unwrap());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn messages(&self) -> usize {
        self.events.lock().unwrap().iter().filter(|e| matches!(e, Event::Message(_))).count()
    }
}

fn pair(protocol: Protocol) -> (TestPeer, TestPeer) {
    let a = TestPeer::start(protocol, true);
    let b = TestPeer::start(protocol, true);
    a.peer.add_peer(b.info()).unwrap();
    b.peer.add_peer(a.info()).unwrap();
    (a, b)
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn request_kind(protocol: Protocol) -> &'static str {
    if protocol == Protocol::V2 {
        "query"
    } else {
        "request"
    }
}

fn payload(protocol: Protocol, v: Value) -> Map<String, Value> {
    let mut p = obj(v);
    if protocol == Protocol::V2 {
        p.insert("question".into(), Value::from("?"));
    }
    p
}

fn echo_of(protocol: Protocol, reply: &Map<String, Value>) -> Value {
    if protocol == Protocol::V2 {
        reply["data"]["echo"].clone()
    } else {
        reply["echo"].clone()
    }
}

const BOTH: [Protocol; 2] = [Protocol::Axon1, Protocol::V2];

#[tokio::test]
async fn requests_both_ways_messages_and_errors() {
    for protocol in BOTH {
        let (a, b) = pair(protocol);
        let (ida, idb) = (a.peer.agent_id().to_owned(), b.peer.agent_id().to_owned());
        let kind = request_kind(protocol);
        for (from, to, to_id) in [(&a, &b, &idb), (&b, &a, &ida)] {
            let r = from.peer.request(to_id, kind, payload(protocol, json!({"n": 1})), WAIT).await.unwrap();
            assert_eq!(echo_of(protocol, &r.payload)["n"], json!(1), "{protocol:?}");
            let from_id = if protocol == Protocol::V2 { &r.payload["data"]["from"] } else { &r.payload["from"] };
            assert_eq!(from_id, &json!(from.peer.agent_id()));
            let _ = to;
        }
        // An error reply.
        let code = if protocol == Protocol::V2 { "overloaded" } else { "busy" };
        let fail = payload(protocol, json!({"fail": {"code": code, "message": "try later", "retryable": true}}));
        match a.peer.request(&idb, kind, fail, WAIT).await {
            Err(PeerError::Remote { code: c, message, retryable }) => {
                assert_eq!((c.as_str(), message.as_str(), retryable), (code, "try later", true))
            }
            other => panic!("{other:?}"),
        }
        // Messages and an unsolicited error, from the TLS identity.
        let (mkind, m) = match protocol {
            Protocol::Axon1 => ("message", json!({"hello": "world"})),
            Protocol::V2 => ("notify", json!({"topic": "t", "data": "world"})),
        };
        let id = a.peer.send(&idb, mkind, obj(m.clone()), None, WAIT).await.unwrap();
        let err = json!({"code": "timeout", "message": "late", "retryable": false});
        a.peer.send(&idb, "error", obj(err), Some(id.clone()), WAIT).await.unwrap();
        let events = b.wait_events(|e| e.len() >= 2).await;
        let Event::Message(got) = &events[0] else { panic!("{events:?}") };
        assert_eq!((got.from.as_str(), got.id.as_str(), got.kind.as_str()), (ida.as_str(), id.as_str(), mkind));
        let Event::Error(e) = &events[1] else { panic!("{events:?}") };
        assert_eq!((e.ref_id.as_deref(), &e.payload["message"]), (Some(id.as_str()), &json!("late")));
        // A request to a peer that does not serve: upstream's answer.
        b.peer.set_serving(false);
        match (protocol, a.peer.request(&idb, kind, payload(protocol, json!({})), WAIT).await) {
            (Protocol::Axon1, Err(PeerError::Remote { code, message, .. })) => {
                assert_eq!(code, "unhandled");
                assert!(message.starts_with("no application handler registered for request '"), "{message}");
            }
            (Protocol::V2, Ok(r)) => assert_eq!(r.payload["data"], json!({"accepted": true})),
            other => panic!("{other:?}"),
        }
        if protocol == Protocol::V2 {
            let pong = a.peer.request(&idb, "ping", Map::new(), WAIT).await.unwrap();
            assert_eq!((pong.kind.as_str(), &pong.payload["status"]), ("pong", &json!("idle")));
            let caps = a.peer.request(&idb, "discover", Map::new(), WAIT).await.unwrap();
            assert_eq!((caps.kind.as_str(), &caps.payload["agent_name"]), ("capabilities", &json!("polywire")));
            let ack = b.peer.request(&ida, "delegate", obj(json!({"task": "t"})), WAIT).await.unwrap();
            assert_eq!((ack.kind.as_str(), &ack.payload), ("ack", &obj(json!({"accepted": true}))));
        }
        // Typed errors for what cannot be sent.
        let stranger = Identity::from_seed([9; 32]);
        assert_eq!(a.peer.request(stranger.agent_id(), kind, Map::new(), WAIT).await.unwrap_err().code(), "AXON_UNKNOWN_PEER");
        let big = payload(protocol, json!({"data": "x".repeat(70_000)}));
        assert_eq!(a.peer.request(&idb, kind, big, WAIT).await.unwrap_err().code(), "AXON_MESSAGE_TOO_LARGE");
        assert_eq!(a.peer.request(&idb, "hello", Map::new(), WAIT).await.unwrap_err().code(), "AXON_INVALID_ARGUMENT");
        let states = a.peer.peers();
        assert_eq!((states.len(), states[0].status), (1, "connected"));
        a.peer.close();
        b.peer.close();
    }
}

#[tokio::test]
async fn unknown_peer_refused_with_pair_request() {
    for protocol in BOTH {
        let a = TestPeer::start(protocol, true);
        let b = TestPeer::start(protocol, true);
        // v2: the lower agent id dials; make `a` the dialer either way.
        let (a, b) = if protocol == Protocol::V2 && a.peer.agent_id() > b.peer.agent_id() { (b, a) } else { (a, b) };
        a.peer.add_peer(b.info()).unwrap();
        let idb = b.peer.agent_id().to_owned();
        let e = a.peer.request(&idb, request_kind(protocol), payload(protocol, json!({})), WAIT).await.unwrap_err();
        assert_eq!(e.code(), "AXON_HANDSHAKE_REFUSED", "{e}");
        let events = b.wait_events(|e| !e.is_empty()).await;
        let Event::PairRequest(p) = &events[0] else { panic!("{events:?}") };
        assert_eq!((p.agent_id.as_str(), &p.public_key), (a.peer.agent_id(), a.peer.public_key()));
        assert_eq!(p.addr.map(|a| a.to_string()), Some(a.peer.listen_addr()));
        // Paired from the event, it works.
        b.peer.add_peer(PeerInfo::new(p.public_key, None).unwrap()).unwrap();
        let r = a.peer.request(&idb, request_kind(protocol), payload(protocol, json!({"x": 1})), WAIT).await.unwrap();
        assert_eq!(echo_of(protocol, &r.payload)["x"], json!(1));
        a.peer.close();
        b.peer.close();
    }
}

#[tokio::test]
async fn wrong_alpn_and_other_generation_refused() {
    let b = TestPeer::start(Protocol::Axon1, true);
    let v2 = TestPeer::start(Protocol::V2, true);
    // A v2 peer (no ALPN) and an axon/1 peer do not connect, either way.
    v2.peer.add_peer(b.info()).unwrap();
    b.peer.add_peer(v2.info()).unwrap();
    let (lo, hi) = if v2.peer.agent_id() < b.peer.agent_id() { (&v2, &b) } else { (&b, &v2) };
    let kind = if lo.peer.protocol() == Protocol::V2 { "query" } else { "request" };
    let e = lo.peer.request(hi.peer.agent_id(), kind, payload(lo.peer.protocol(), json!({})), WAIT).await.unwrap_err();
    assert_eq!(e.code(), "AXON_HANDSHAKE_REFUSED", "{e}");
    // A raw QUIC client offering another ALPN, with the right pins and key.
    let me = Identity::from_seed([3; 32]);
    b.peer.add_peer(PeerInfo::new(*me.public_key(), None).unwrap()).unwrap();
    let pins = Arc::new(std::sync::RwLock::new([(b.peer.agent_id().to_owned(), *b.peer.public_key())].into_iter().collect()));
    let ctx = tls::TlsContext {
        provider: tls::provider(),
        certificate: tls::certificate(&me).unwrap(),
        pins,
        pairs: Arc::new(tls::PairSink::new(|_| {})),
        alpn: Some(b"axon/2".to_vec()),
        transport: tls::transport(Duration::from_secs(15), Duration::from_secs(60)),
    };
    let endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = b.peer.listen_addr().parse().unwrap();
    let connecting = endpoint.connect_with(ctx.client_config(None).unwrap(), addr, b.peer.agent_id()).unwrap();
    let e = tokio::time::timeout(WAIT, connecting).await.unwrap().unwrap_err();
    assert!(e.to_string().contains("no_application_protocol") || e.to_string().contains("120"), "{e}");
    // With the right ALPN the same client gets in.
    let ok = tls::TlsContext { alpn: Some(b"axon/1".to_vec()), ..ctx };
    let conn = endpoint.connect_with(ok.client_config(None).unwrap(), addr, b.peer.agent_id()).unwrap();
    tokio::time::timeout(WAIT, conn).await.unwrap().unwrap();
    b.peer.close();
    v2.peer.close();
}

#[tokio::test]
async fn oversized_message_dropped_connection_kept() {
    for protocol in BOTH {
        // Only `a` dials (`b` knows no address of it, and with v2 `a` has the
        // lower id): one connection, whose id must not change.
        let (a, b) = (TestPeer::start(protocol, true), TestPeer::start(protocol, true));
        let (a, b) = if a.peer.agent_id() > b.peer.agent_id() { (b, a) } else { (a, b) };
        a.peer.add_peer(b.info()).unwrap();
        b.peer.add_peer(PeerInfo::new(*a.peer.public_key(), None).unwrap()).unwrap();
        let idb = b.peer.agent_id().to_owned();
        let r = a.peer.request(&idb, request_kind(protocol), payload(protocol, json!({})), WAIT).await.unwrap();
        drop(r);
        let before = a.peer.testing().connection_id(&idb).unwrap();
        // 65,537 bytes on a unidirectional and on a bidirectional stream.
        let big = format!(r#"{{"id":"{}","kind":"message","payload":{{"data":"{}"}}}}"#, polywire::axon::new_id(), "x".repeat(65_537));
        a.peer.testing().raw(&idb, big.clone().into_bytes(), false, WAIT).await.unwrap();
        let reply = a.peer.testing().raw(&idb, big.into_bytes(), true, WAIT).await;
        assert!(matches!(&reply, Ok(r) if r.is_empty()) || matches!(&reply, Err(PeerError::ConnectionLost(_))), "{reply:?}");
        let (mkind, m) = match protocol {
            Protocol::Axon1 => ("message", json!({"after": true})),
            Protocol::V2 => ("notify", json!({"topic": "after", "data": true})),
        };
        a.peer.send(&idb, mkind, obj(m), None, WAIT).await.unwrap();
        b.wait_events(|e| !e.is_empty()).await;
        assert_eq!(b.messages(), 1);
        assert_eq!(a.peer.testing().connection_id(&idb), Some(before), "the connection was kept");
        let r = a.peer.request(&idb, request_kind(protocol), payload(protocol, json!({"k": 2})), WAIT).await.unwrap();
        assert_eq!(echo_of(protocol, &r.payload)["k"], json!(2));
        // axon/1's answers to bad requests, as upstream gives them.
        if protocol == Protocol::Axon1 {
            let bad = |id: &str, kind: &str| format!(r#"{{"id":"{id}","kind":"{kind}","payload":{{}}}}"#).into_bytes();
            let testing = a.peer.testing();
            let raw = |data| testing.raw(&idb, data, true, WAIT);
            let text = String::from_utf8(raw(bad(&polywire::axon::new_id(), "frobnicate")).await.unwrap()).unwrap();
            assert!(
                text.contains(
                    r#""payload":{"code":"unknown_kind","message":"unknown message kind on bidirectional stream","retryable":false}"#
                ),
                "{text}"
            );
            let v1 = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6";
            let text = String::from_utf8(raw(bad(v1, "request")).await.unwrap()).unwrap();
            assert!(
                text.contains(r#""code":"invalid_envelope","message":"envelope validation failed: message id must be UUID v4""#),
                "{text}"
            );
            assert!(text.contains(&format!(r#""ref":"{v1}""#)), "{text}");
            assert!(raw(b"not json".to_vec()).await.unwrap().is_empty());
        } else {
            // A replayed request gets no reply at all.
            let ping = polywire::axon::v2::Envelope::new(a.peer.agent_id(), &idb, polywire::axon::Kind::Ping, Map::new()).unwrap();
            let bytes = polywire::axon::encode(&ping).unwrap();
            let first = a.peer.testing().raw(&idb, bytes.clone(), true, WAIT).await.unwrap();
            assert!(String::from_utf8(first).unwrap().contains(r#""kind":"pong""#));
            assert!(a.peer.testing().raw(&idb, bytes, true, WAIT).await.unwrap().is_empty());
        }
        a.peer.close();
        b.peer.close();
    }
}

#[tokio::test]
async fn wrong_ref_rejected() {
    for protocol in BOTH {
        let (a, b) = pair(protocol);
        b.peer.testing().set_wrong_ref(true);
        let e = a.peer.request(b.peer.agent_id(), request_kind(protocol), payload(protocol, json!({})), WAIT).await.unwrap_err();
        assert_eq!(e.code(), "AXON_INVALID_REPLY", "{e}");
        assert!(e.to_string().contains("does not match request"), "{e}");
        a.peer.close();
        b.peer.close();
    }
}

#[tokio::test]
async fn close_with_requests_in_flight() {
    let (a, b) = pair(Protocol::Axon1);
    let idb = b.peer.agent_id().to_owned();
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let fut = a.peer.request(&idb, "request", obj(json!({"sleep_ms": 5000})), WAIT);
        tasks.push(tokio::spawn(fut));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let closer = a.peer.clone();
    tokio::task::spawn_blocking(move || closer.close()).await.unwrap();
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap_err(), PeerError::Closed);
    }
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(a.peer.request(&idb, "request", Map::new(), WAIT).await.unwrap_err(), PeerError::Closed);
    assert!(a.peer.add_peer(b.info()).is_err());
    b.peer.close();
}

#[tokio::test]
async fn thousand_concurrent_requests() {
    for protocol in BOTH {
        let (a, b) = pair(protocol);
        let idb = b.peer.agent_id().to_owned();
        let mut tasks = Vec::new();
        for i in 0..1000 {
            let fut = a.peer.request(&idb, request_kind(protocol), payload(protocol, json!({"i": i})), Duration::from_secs(60));
            tasks.push(tokio::spawn(async move { (i, fut.await) }));
        }
        for t in tasks {
            let (i, r) = t.await.unwrap();
            assert_eq!(echo_of(protocol, &r.unwrap().payload)["i"], json!(i));
        }
        a.peer.close();
        b.peer.close();
    }
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()).unwrap_or(0)
}

#[tokio::test]
async fn hundred_thousand_messages_flat_memory() {
    let (a, b) = pair(Protocol::Axon1);
    let idb = b.peer.agent_id().to_owned();
    // B keeps a count only.
    b.events.lock().unwrap().clear();
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut mid = 0;
    for i in 0..100_000 {
        if i == 20_000 {
            mid = rss_kib();
        }
        a.peer.send(&idb, "message", obj(json!({"i": i})), None, WAIT).await.unwrap();
        if i % 1000 == 999 {
            let n = b.events.lock().unwrap().drain(..).count();
            count.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let start = Instant::now();
    while count.load(std::sync::atomic::Ordering::Relaxed) < 100_000 {
        let n = b.events.lock().unwrap().drain(..).count();
        count.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        assert!(start.elapsed() < WAIT, "{} arrived", count.load(std::sync::atomic::Ordering::Relaxed));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let end = rss_kib();
    assert!(end < mid + 20_000, "memory grew from {mid} KiB to {end} KiB");
    a.peer.close();
    b.peer.close();
}

#[tokio::test]
async fn garbage_datagrams_at_the_port() {
    for protocol in BOTH {
        let (a, b) = pair(protocol);
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..2000usize {
            let n = 1 + (i * 37) % 1400;
            let mut buf = vec![0u8; n];
            for b in buf.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            if i % 3 == 0 {
                buf[0] = 0xc0 | (buf[0] & 0x0f); // a long-header (Initial-like) packet
            }
            let _ = socket.send_to(&buf, b.peer.listen_addr());
        }
        let r = a.peer.request(b.peer.agent_id(), request_kind(protocol), payload(protocol, json!({"ok": 1})), WAIT).await.unwrap();
        assert_eq!(echo_of(protocol, &r.payload)["ok"], json!(1));
        a.peer.close();
        b.peer.close();
    }
}

/// The `axon-node` program of this crate, killed when dropped.
struct Node {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    token: String,
}

impl Node {
    fn start(protocol: Protocol) -> Node {
        let mut child = Command::new(env!("CARGO_BIN_EXE_axon-node"))
            .args(["--protocol", protocol.as_str(), "--serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let ready = lines.recv_timeout(WAIT).unwrap();
        let words: Vec<&str> = ready.split(' ').collect();
        assert_eq!(words[0], "READY", "{ready}");
        let token = words[3].to_owned();
        Node { child, stdin, lines, token }
    }

    fn command(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.lines.recv_timeout(WAIT).unwrap()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn peer_killed_mid_request() {
    for protocol in BOTH {
        let a = TestPeer::start(protocol, true);
        let mut node = Node::start(protocol);
        let info = PeerInfo::from_token(&node.token).unwrap();
        let id = info.agent_id.clone();
        a.peer.add_peer(info).unwrap();
        assert!(node.command(&format!("add {}", a.peer.token())).starts_with("ADDED"));
        let kind = request_kind(protocol);
        let r = a.peer.request(&id, kind, payload(protocol, json!({"warm": 1})), WAIT).await.unwrap();
        assert_eq!(echo_of(protocol, &r.payload)["warm"], json!(1));
        let fut = a.peer.request(&id, kind, payload(protocol, json!({"sleep_ms": 20_000})), Duration::from_secs(3));
        let started = Instant::now();
        let pending = tokio::spawn(fut);
        tokio::time::sleep(Duration::from_millis(300)).await;
        node.child.kill().unwrap();
        let e = tokio::time::timeout(Duration::from_secs(10), pending).await.unwrap().unwrap().unwrap_err();
        assert!(matches!(e.code(), "AXON_TIMEOUT" | "AXON_CONNECTION_LOST"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
        a.peer.close();
    }
}

#[tokio::test]
async fn identity_from_a_key_file() {
    let dir = std::env::temp_dir().join(format!("polywire-axon-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("identity.key");
    std::fs::write(&path, "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n").unwrap();
    let identity = Identity::from_key_file(&path).unwrap();
    let p = TestPeer::start_with(PeerConfig { identity: Some(identity), ..PeerConfig::default() }, false);
    assert_eq!(p.peer.agent_id(), "ed25519.fe812c12f3ab4ce6ac5db69ac352f906");
    assert!(p.peer.token().starts_with("axon://6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw@127.0.0.1:"));
    p.peer.close();
    let _ = std::fs::remove_dir_all(dir);
    assert_eq!(Peer::start(PeerConfig { listen: "nowhere".into(), ..PeerConfig::default() }).unwrap_err().code(), "AXON_INVALID_ARGUMENT");
}

/// Two serving peers that know each other, the second with `busy_poll`.
fn pair_with_busy_poll(busy_poll: Duration) -> (TestPeer, TestPeer) {
    let a = TestPeer::start(Protocol::Axon1, true);
    let b = TestPeer::start_with(PeerConfig { busy_poll, ..PeerConfig::default() }, true);
    a.peer.add_peer(b.info()).unwrap();
    b.peer.add_peer(a.info()).unwrap();
    (a, b)
}

#[tokio::test]
async fn busy_poll_off_answers_requests() {
    let (a, b) = pair_with_busy_poll(Duration::ZERO);
    for (from, to) in [(&a, &b), (&b, &a)] {
        let r = from.peer.request(to.peer.agent_id(), "request", obj(json!({"n": 2})), WAIT).await.unwrap();
        assert_eq!(r.payload["echo"]["n"], json!(2));
    }
    a.peer.close();
    b.peer.close();
}

#[tokio::test]
async fn busy_poll_ends_when_work_or_a_datagram_arrives() {
    // A window of 2 s: were the spin blind to a request handed over (the
    // runtime's global queue) or to a reply at the socket, each of these
    // round trips would wait for the window's end, twice.
    let (a, b) = pair_with_busy_poll(Duration::from_secs(2));
    let first = b.peer.request(a.peer.agent_id(), "request", obj(json!({"n": 0})), WAIT).await.unwrap();
    assert_eq!(first.payload["echo"]["n"], json!(0));
    let started = Instant::now();
    for n in 1..=5 {
        // From this runtime (another thread: the global queue) and back.
        let r = b.peer.request(a.peer.agent_id(), "request", obj(json!({"n": n})), WAIT).await.unwrap();
        assert_eq!(r.payload["echo"]["n"], json!(n));
        // Served by the spinning peer: the request arrives as a datagram,
        // the handler's answer comes back from another task.
        let r = a.peer.request(b.peer.agent_id(), "request", obj(json!({"n": n})), WAIT).await.unwrap();
        assert_eq!(r.payload["echo"]["n"], json!(n));
    }
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1500), "10 round trips took {took:?}: the spin waited out its window");
    a.peer.close();
    b.peer.close();
}

#[tokio::test]
async fn a_closed_peer_frees_its_port_while_a_runtime_handle_lives() {
    // The busy-poll keeps a second handle on the socket in the runtime's
    // configuration, which lives as long as any handle on the runtime: it is
    // released with the endpoint, so the port is free once `close` returns.
    let p = TestPeer::start(Protocol::Axon1, false);
    let addr = p.peer.listen_addr();
    let (tx, rx) = std::sync::mpsc::channel();
    assert!(p.peer.spawn(async move {
        let _ = tx.send(tokio::runtime::Handle::current());
    }));
    let handle = rx.recv_timeout(WAIT).expect("the task ran");
    p.peer.close();
    let again = std::net::UdpSocket::bind(&addr);
    assert!(again.is_ok(), "{addr} still bound after close: {again:?}");
    drop(handle);
}
