//! A real Kameo node (kameo =0.22.2, feature `remote`) for the interop tests
//! of polywire's Kameo peer. It is driven line by line on stdin and answers
//! on stdout, so Rust, Python and Node tests can run it as a subprocess.
//!
//! On start it listens on 127.0.0.1 (TCP, and QUIC with `--quic`), spawns
//! and registers its actors, and prints
//! `READY <peer id> <listen multiaddr with /p2p/...>`. Then, per line:
//!
//! - `dial <multiaddr>`: dial a peer; prints `DIALED` or `ERROR dial <why>`.
//! - `ask <name> <message> <json> [reply_timeout_ms]`: look `name` up as a
//!   [`Peerside`] actor (remote id `polywire.test.Peerside`) and ask it
//!   `<message>` (`echo`: [`Echo`], `inc`: [`Inc`], `fail`: [`Fail`]) with
//!   the JSON value as the message's field(s); prints `REPLY <json>`,
//!   `NOTFOUND` or `ERROR <code> <json detail>`.
//! - `tell <name> <message> <json>`: likewise with `tell`; prints `TOLD`.
//! - `bench <name> <asks> <in flight>`: look `name` up as a [`Counter`] and
//!   ask it `get` that many times, keeping that many asks in flight; prints
//!   `BENCH <p50 µs> <p99 µs> <asks per second>` (the Rust row of
//!   bench/kameo_bench.py).
//! - `stop`: stop the `doomed` actor; prints `STOPPED`.
//! - `quit`.
//!
//! Its own actors (remote ids `polywire.test.Counter`):
//! - `counter` (or the name after `--counter-name`): a [`Counter`]: `inc` adds `amount` and replies with the new
//!   count, `get` replies with it, `fail` replies with
//!   `Err(message)` (a `HandlerError` holding the string), `sleep` sleeps
//!   `ms` milliseconds and replies with `ms`, `echo` replies with its value;
//! - `doomed`: a `Counter` that the `stop` command stops.

use std::{collections::HashMap, io::BufRead, time::Duration};

use futures::StreamExt;
use kameo::{
    actor::{ActorRef, RemoteActorRef, Spawn},
    error::RemoteSendError,
    message::{Context, Message},
    remote::{self, messaging},
    remote_message, Actor, RemoteActor,
};
use libp2p::{noise, swarm::SwarmEvent, tcp, yamux, Multiaddr, SwarmBuilder};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

#[derive(Actor, RemoteActor, Default)]
#[remote_actor(id = "polywire.test.Counter")]
struct Counter {
    count: i64,
}

/// The actor type the `ask`/`tell` commands address: a foreign peer hosts
/// it (a polywire `Node`); this program only needs its type to address it.
#[derive(Actor, RemoteActor, Default)]
#[remote_actor(id = "polywire.test.Peerside")]
struct Peerside;

#[derive(Serialize, Deserialize)]
struct Inc {
    amount: i64,
}
#[derive(Serialize, Deserialize)]
struct Get;
#[derive(Serialize, Deserialize)]
struct Fail {
    message: String,
}
#[derive(Serialize, Deserialize)]
struct Sleep {
    ms: u64,
}
#[derive(Serialize, Deserialize)]
struct Echo {
    value: Value,
}
/// A JSON value as a reply (kameo replies implement `Reply`; `Value` does
/// not). Transparent: it is written as the value itself.
#[derive(kameo::Reply, Serialize, Deserialize)]
#[serde(transparent)]
struct Json(Value);

#[remote_message("inc")]
impl Message<Inc> for Counter {
    type Reply = i64;
    async fn handle(&mut self, msg: Inc, _: &mut Context<Self, Self::Reply>) -> i64 {
        self.count += msg.amount;
        self.count
    }
}
#[remote_message("get")]
impl Message<Get> for Counter {
    type Reply = i64;
    async fn handle(&mut self, _: Get, _: &mut Context<Self, Self::Reply>) -> i64 {
        self.count
    }
}
#[remote_message("fail")]
impl Message<Fail> for Counter {
    type Reply = Result<i64, String>;
    async fn handle(&mut self, msg: Fail, _: &mut Context<Self, Self::Reply>) -> Result<i64, String> {
        Err(msg.message)
    }
}
#[remote_message("sleep")]
impl Message<Sleep> for Counter {
    type Reply = u64;
    async fn handle(&mut self, msg: Sleep, _: &mut Context<Self, Self::Reply>) -> u64 {
        tokio::time::sleep(Duration::from_millis(msg.ms)).await;
        msg.ms
    }
}
#[remote_message("echo")]
impl Message<Echo> for Counter {
    type Reply = Json;
    async fn handle(&mut self, msg: Echo, _: &mut Context<Self, Self::Reply>) -> Json {
        Json(msg.value)
    }
}

// The foreign actor's messages: never handled here (asks go to the peer
// that registered the name), but kameo needs the types to address them.
#[remote_message("echo")]
impl Message<Echo> for Peerside {
    type Reply = Json;
    async fn handle(&mut self, msg: Echo, _: &mut Context<Self, Self::Reply>) -> Json {
        Json(msg.value)
    }
}
#[remote_message("inc")]
impl Message<Inc> for Peerside {
    type Reply = i64;
    async fn handle(&mut self, msg: Inc, _: &mut Context<Self, Self::Reply>) -> i64 {
        msg.amount
    }
}
#[remote_message("fail")]
impl Message<Fail> for Peerside {
    type Reply = Result<Value, Value>;
    async fn handle(&mut self, msg: Fail, _: &mut Context<Self, Self::Reply>) -> Result<Value, Value> {
        Err(Value::String(msg.message))
    }
}

/// A stable code and a JSON detail for each `RemoteSendError` variant.
fn error_line(err: RemoteSendError<Value>) -> String {
    let (code, detail) = match err {
        RemoteSendError::ActorNotRunning => ("ActorNotRunning", Value::Null),
        RemoteSendError::ActorStopped => ("ActorStopped", Value::Null),
        RemoteSendError::UnknownActor { actor_remote_id } => ("UnknownActor", json!(actor_remote_id)),
        RemoteSendError::UnknownMessage { actor_remote_id, message_remote_id } => {
            ("UnknownMessage", json!([actor_remote_id, message_remote_id]))
        }
        RemoteSendError::BadActorType => ("BadActorType", Value::Null),
        RemoteSendError::MailboxFull => ("MailboxFull", Value::Null),
        RemoteSendError::ReplyTimeout => ("ReplyTimeout", Value::Null),
        RemoteSendError::HandlerError(v) => ("HandlerError", v),
        RemoteSendError::SerializeMessage(s) => ("SerializeMessage", json!(s)),
        RemoteSendError::DeserializeMessage(s) => ("DeserializeMessage", json!(s)),
        RemoteSendError::SerializeReply(s) => ("SerializeReply", json!(s)),
        RemoteSendError::SerializeHandlerError(s) => ("SerializeHandlerError", json!(s)),
        RemoteSendError::DeserializeHandlerError(s) => ("DeserializeHandlerError", json!(s)),
        RemoteSendError::SwarmNotBootstrapped => ("SwarmNotBootstrapped", Value::Null),
        RemoteSendError::DialFailure => ("DialFailure", Value::Null),
        RemoteSendError::NetworkTimeout => ("NetworkTimeout", Value::Null),
        RemoteSendError::ConnectionClosed => ("ConnectionClosed", Value::Null),
        RemoteSendError::UnsupportedProtocols => ("UnsupportedProtocols", Value::Null),
        RemoteSendError::Io(e) => ("Io", json!(e.map(|e| e.to_string()))),
    };
    format!("ERROR {code} {detail}")
}

fn reply_line<T: Serialize>(res: Result<T, RemoteSendError<Value>>) -> String {
    match res {
        Ok(v) => format!("REPLY {}", serde_json::to_value(v).unwrap_or(Value::Null)),
        Err(e) => error_line(e),
    }
}

async fn ask(name: &str, message: &str, arg: Value, reply_timeout: Option<Duration>) -> String {
    let target = match RemoteActorRef::<Peerside>::lookup(name).await {
        Ok(Some(r)) => r,
        Ok(None) => return "NOTFOUND".into(),
        Err(e) => return format!("ERROR Lookup {}", json!(e.to_string())),
    };
    match message {
        "echo" => {
            let msg = Echo { value: arg };
            let r = target.ask(&msg);
            let r = match reply_timeout {
                Some(t) => r.reply_timeout(t).send().await,
                None => r.send().await,
            };
            reply_line(r.map_err(|e| e.map_err(|_: kameo::error::Infallible| Value::Null)))
        }
        "inc" => {
            let amount = arg.as_i64().unwrap_or(0);
            reply_line(target.ask(&Inc { amount }).send().await.map_err(|e| e.map_err(|_| Value::Null)))
        }
        "fail" => {
            let message = arg.as_str().unwrap_or("").to_owned();
            reply_line(target.ask(&Fail { message }).send().await)
        }
        other => format!("ERROR Usage {}", json!(format!("unknown message {other}"))),
    }
}

/// Asks `get` of the counter named `name`, `asks` times with `in_flight`
/// at once: the latency percentiles and the rate.
async fn bench(name: &str, asks: usize, in_flight: usize) -> String {
    let target = match RemoteActorRef::<Counter>::lookup(name).await {
        Ok(Some(r)) => r,
        Ok(None) => return "NOTFOUND".into(),
        Err(e) => return format!("ERROR Lookup {}", json!(e.to_string())),
    };
    let in_flight = in_flight.clamp(1, asks.max(1));
    let started = std::time::Instant::now();
    let mut latencies: Vec<u128> = futures::stream::iter(0..asks)
        .map(|_| {
            let target = target.clone();
            async move {
                let t = std::time::Instant::now();
                let _ = target.ask(&Get).send().await;
                t.elapsed().as_micros()
            }
        })
        .buffer_unordered(in_flight)
        .collect()
        .await;
    let total = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let at = |q: f64| latencies.get(((latencies.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0);
    format!("BENCH {} {} {:.0}", at(0.5), at(0.99), asks as f64 / total)
}

/// `asks` asks of `name`'s counter, all at once: how many were answered and
/// how many failed with each error (what kameo itself does with thousands
/// in flight, for the peers to be measured against).
async fn flood(name: &str, asks: usize) -> String {
    let target = match RemoteActorRef::<Counter>::lookup(name).await {
        Ok(Some(r)) => r,
        Ok(None) => return "NOTFOUND".into(),
        Err(e) => return format!("ERROR Lookup {}", json!(e.to_string())),
    };
    let started = std::time::Instant::now();
    let results: Vec<Result<i64, String>> = futures::stream::iter(0..asks)
        .map(|_| {
            let target = target.clone();
            async move { target.ask(&Get).send().await.map_err(|e| format!("{e:?}").split(['(', ' ', '{']).next().unwrap_or("").to_owned()) }
        })
        .buffer_unordered(asks.max(1))
        .collect()
        .await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let mut errors: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for e in results.into_iter().filter_map(Result::err) {
        *errors.entry(e).or_default() += 1;
    }
    format!("FLOOD {ok} {} {:.2} {}", asks - ok, started.elapsed().as_secs_f64(), json!(errors))
}

async fn tell(name: &str, message: &str, arg: Value) -> String {
    let target = match RemoteActorRef::<Peerside>::lookup(name).await {
        Ok(Some(r)) => r,
        Ok(None) => return "NOTFOUND".into(),
        Err(e) => return format!("ERROR Lookup {}", json!(e.to_string())),
    };
    let res = match message {
        "echo" => target.tell(&Echo { value: arg }).send(),
        "inc" => target.tell(&Inc { amount: arg.as_i64().unwrap_or(0) }).send(),
        other => return format!("ERROR Usage {}", json!(format!("unknown message {other}"))),
    };
    match res {
        Ok(()) => "TOLD".into(),
        Err(e) => error_line(e.map_err(|_: kameo::error::Infallible| Value::Null)),
    }
}

enum SwarmCmd {
    Dial(Multiaddr, oneshot::Sender<Result<(), String>>),
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let quic = args.iter().any(|a| a == "--quic");
    let counter_name =
        args.iter().position(|a| a == "--counter-name").and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| "counter".to_owned());
    let mut swarm = SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_tcp(tcp::Config::default().nodelay(true), noise::Config::new, yamux::Config::default)?
        .with_quic()
        .with_behaviour(|key| Ok(remote::Behaviour::new(key.public().to_peer_id(), messaging::Config::default())))?
        // The tests' connections stay up between commands.
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(600)))
        .build();
    swarm.behaviour().try_init_global()?;
    let listen: Multiaddr = if quic { "/ip4/127.0.0.1/udp/0/quic-v1" } else { "/ip4/127.0.0.1/tcp/0" }.parse()?;
    swarm.listen_on(listen)?;
    let peer_id = *swarm.local_peer_id();

    let addr = loop {
        if let SwarmEvent::NewListenAddr { address, .. } = swarm.select_next_some().await {
            break address;
        }
    };

    let (cmd_tx, mut cmd_rx) = mpsc::unbounded_channel::<SwarmCmd>();
    tokio::spawn(async move {
        let mut dials: HashMap<libp2p::swarm::ConnectionId, oneshot::Sender<Result<(), String>>> = HashMap::new();
        loop {
            tokio::select! {
                cmd = cmd_rx.recv() => match cmd {
                    Some(SwarmCmd::Dial(addr, reply)) => {
                        // As kameo's bootstrap does for mDNS peers: the
                        // address goes into the Kademlia table.
                        let mut base = addr.clone();
                        if let Some(libp2p::multiaddr::Protocol::P2p(peer)) = base.pop() {
                            swarm.add_peer_address(peer, base);
                        }
                        let opts = libp2p::swarm::dial_opts::DialOpts::from(addr);
                        let id = opts.connection_id();
                        match swarm.dial(opts) {
                            Ok(()) => { dials.insert(id, reply); }
                            Err(e) => { let _ = reply.send(Err(e.to_string())); }
                        }
                    }
                    None => break,
                },
                ev = swarm.select_next_some() => match ev {
                    SwarmEvent::ConnectionEstablished { connection_id, .. } => {
                        if let Some(r) = dials.remove(&connection_id) { let _ = r.send(Ok(())); }
                    }
                    SwarmEvent::OutgoingConnectionError { connection_id, error, .. } => {
                        if let Some(r) = dials.remove(&connection_id) { let _ = r.send(Err(error.to_string())); }
                    }
                    _ => {}
                },
            }
        }
    });

    let counter: ActorRef<Counter> = Counter::spawn(Counter::default());
    counter.register(counter_name).await?;
    let doomed: ActorRef<Counter> = Counter::spawn(Counter::default());
    doomed.register("doomed").await?;
    let mut doomed = Some(doomed);

    println!("READY {peer_id} {addr}/p2p/{peer_id}");

    let (line_tx, mut line_rx) = mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line_tx.send(line).is_err() {
                break;
            }
        }
    });
    while let Some(line) = line_rx.recv().await {
        let mut parts = line.splitn(4, ' ');
        let out = match parts.next().unwrap_or("") {
            "dial" => {
                let (tx, rx) = oneshot::channel();
                match parts.next().unwrap_or("").parse::<Multiaddr>() {
                    Ok(addr) => {
                        let _ = cmd_tx.send(SwarmCmd::Dial(addr, tx));
                        match rx.await {
                            Ok(Ok(())) => "DIALED".to_string(),
                            Ok(Err(e)) => format!("ERROR dial {}", json!(e)),
                            Err(_) => "ERROR dial \"swarm gone\"".into(),
                        }
                    }
                    Err(e) => format!("ERROR dial {}", json!(e.to_string())),
                }
            }
            cmd @ ("ask" | "tell") => {
                let name = parts.next().unwrap_or("").to_owned();
                let message = parts.next().unwrap_or("").to_owned();
                let rest = parts.next().unwrap_or("null");
                // `<json> [reply_timeout_ms]`: the timeout, if any, is the last word.
                let (json_text, timeout) = match rest.rsplit_once(' ') {
                    Some((j, t)) if t.parse::<u64>().is_ok() && serde_json::from_str::<Value>(j).is_ok() => {
                        (j.to_owned(), t.parse::<u64>().ok().map(Duration::from_millis))
                    }
                    _ => (rest.to_owned(), None),
                };
                match serde_json::from_str::<Value>(&json_text) {
                    Ok(arg) if cmd == "ask" => ask(&name, &message, arg, timeout).await,
                    Ok(arg) => tell(&name, &message, arg).await,
                    Err(e) => format!("ERROR Usage {}", json!(e.to_string())),
                }
            }
            "bench" => {
                let name = parts.next().unwrap_or("").to_owned();
                let asks = parts.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
                let in_flight = parts.next().and_then(|n| n.trim().parse().ok()).unwrap_or(1);
                bench(&name, asks, in_flight).await
            }
            "flood" => {
                let name = parts.next().unwrap_or("").to_owned();
                let asks = parts.next().and_then(|n| n.trim().parse().ok()).unwrap_or(10_000);
                flood(&name, asks).await
            }
            "stop" => match doomed.take() {
                Some(actor) => {
                    let _ = actor.stop_gracefully().await;
                    actor.wait_for_shutdown().await;
                    "STOPPED".to_string()
                }
                None => "ERROR Usage \"already stopped\"".to_string(),
            },
            "quit" | "" => break,
            other => format!("ERROR Usage {}", json!(format!("unknown command {other}"))),
        };
        println!("{out}");
    }
    Ok(())
}
