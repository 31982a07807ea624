//! The floor of bench/axon_bench.py: a minimal quinn request/reply pair with
//! the AXON peer's TLS (polywire's `axon::peer::tls`: TLS 1.3, Ed25519
//! certificates pinned both ways, ALPN `axon/1`, upstream's transport
//! settings) and framing (one axon/1 envelope per bidirectional stream, FIN,
//! one reply read to FIN), and nothing else: no peer table, no handler
//! dispatch, no binding. One current-thread runtime per process, as the peer
//! has.
//!
//! - `axon-floor serve <client pubkey base64>`: listens on 127.0.0.1 (seed
//!   32×0x01), pins the client's key, prints `READY <agent id> <token>` and
//!   answers every request with a `response` `{"echo": <its payload>}` until
//!   stdin closes.
//! - `axon-floor bench <server token> <requests> <in flight>`: the client
//!   (seed 32×0x02): `{"i": k}` requests, that many in flight; prints
//!   `BENCH <p50 µs> <p99 µs> <requests per s>`.
//!
//! The seeds are fixed so that the bench's other clients (the polywire peers
//! in Rust, Python and Node, with the same client seed) are pinned too.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use polywire::axon::axon1;
use polywire::axon::identity::{self, Identity};
use polywire::axon::peer::tls;

const SERVER_SEED: [u8; 32] = [1; 32];
const CLIENT_SEED: [u8; 32] = [2; 32];

fn context(me: &Identity, pin: (&str, [u8; 32])) -> tls::TlsContext {
    tls::TlsContext {
        provider: tls::provider(),
        certificate: tls::certificate(me).expect("certificate"),
        pins: Arc::new(std::sync::RwLock::new([(pin.0.to_owned(), pin.1)].into_iter().collect())),
        pairs: Arc::new(tls::PairSink::new(|_| {})),
        alpn: Some(axon1::ALPN.to_vec()),
        transport: tls::transport(Duration::from_secs(15), Duration::from_secs(60)),
    }
}

async fn answer(mut send: quinn::SendStream, mut recv: quinn::RecvStream) {
    let Ok(data) = recv.read_to_end(axon1::MAX_MESSAGE_SIZE).await else { return };
    let Ok(request) = axon1::decode(&data) else { return };
    let reply = axon1::Envelope {
        id: polywire::axon::new_id(),
        kind: "response".into(),
        ref_id: Some(request.id.clone()),
        payload: format!("{{\"echo\":{}}}", request.payload),
    };
    if let Ok(bytes) = axon1::encode(&reply) {
        if send.write_all(&bytes).await.is_ok() {
            let _ = send.finish();
        }
    }
}

async fn serve(client_key: &str) {
    let me = Identity::from_seed(SERVER_SEED);
    let key = identity::public_key_from_base64(client_key).expect("the client's public key");
    let ctx = context(&me, (&identity::agent_id_of(&key), key));
    let config = ctx.server_config(None).expect("server config");
    let endpoint = quinn::Endpoint::server(config, "127.0.0.1:0".parse().unwrap()).expect("bind");
    let addr = endpoint.local_addr().unwrap();
    println!("READY {} {}", me.agent_id(), me.token(&addr.to_string()).unwrap());
    tokio::spawn(async move {
        while let Some(incoming) = endpoint.accept().await {
            tokio::spawn(async move {
                let Ok(conn) = incoming.await else { return };
                while let Ok((send, recv)) = conn.accept_bi().await {
                    tokio::spawn(answer(send, recv));
                }
            });
        }
    });
    // Until stdin closes.
    let _ = tokio::task::spawn_blocking(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {
            sink.clear();
        }
    })
    .await;
}

async fn one(conn: &quinn::Connection, i: usize) -> Duration {
    let start = Instant::now();
    let mut payload = serde_json::Map::new();
    payload.insert("i".into(), i.into());
    let request = axon1::request(&payload);
    let bytes = axon1::encode(&request).unwrap();
    let (mut send, mut recv) = conn.open_bi().await.expect("a stream");
    send.write_all(&bytes).await.expect("write");
    send.finish().expect("finish");
    let data = recv.read_to_end(axon1::MAX_MESSAGE_SIZE).await.expect("the reply");
    let reply = axon1::decode(&data).expect("a valid reply");
    assert_eq!(reply.ref_id.as_deref(), Some(request.id.as_str()));
    start.elapsed()
}

async fn bench(token: &str, n: usize, in_flight: usize) {
    let server = identity::parse_token(token).expect("a token");
    let me = Identity::from_seed(CLIENT_SEED);
    let ctx = context(&me, (&server.agent_id, server.public_key));
    let addr: SocketAddr = server.addr.parse().expect("ip:port");
    let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).expect("bind");
    endpoint.set_default_client_config(ctx.client_config(None).expect("client config"));
    let conn = endpoint.connect(addr, &server.agent_id).unwrap().await.expect("connected");
    let conn = Arc::new(conn);
    for i in 0..100.min(n) {
        one(&conn, i).await;
    }
    let start = Instant::now();
    let mut samples = Vec::with_capacity(n);
    let mut running = tokio::task::JoinSet::new();
    let mut next = 0;
    while samples.len() < n {
        while next < n && running.len() < in_flight {
            let conn = conn.clone();
            running.spawn(async move { one(&conn, next).await });
            next += 1;
        }
        samples.push(running.join_next().await.expect("a request").expect("no panic"));
    }
    let total = start.elapsed();
    samples.sort();
    let p = |q| axon_interop::percentile(&samples, q).as_secs_f64() * 1e6;
    println!("BENCH {:.1} {:.1} {:.0}", p(50.0), p(99.0), n as f64 / total.as_secs_f64());
    conn.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        match args.first().map(String::as_str) {
            Some("serve") => serve(args.get(1).expect("the client's public key")).await,
            Some("bench") => {
                let n = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
                let k = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
                bench(args.get(1).expect("the server's token"), n, k).await
            }
            _ => eprintln!("usage: axon-floor serve <client pubkey> | bench <server token> <requests> <in flight>"),
        }
    });
}
