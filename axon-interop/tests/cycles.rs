//! 200 starts and closes of polywire's AXON peer (both protocols, serving, a
//! connection each) leave no thread and no file descriptor behind. Alone in
//! its test binary: it counts the whole process's threads and descriptors.

use std::time::Duration;

use polywire::axon::peer::{Peer, PeerConfig, PeerInfo, Protocol};
use serde_json::Map;

fn count_dir(path: &str) -> usize {
    std::fs::read_dir(path).map(|d| d.count()).unwrap_or(0)
}

fn cycle(protocol: Protocol, target: Option<&Peer>) {
    let (peer, inbound) = Peer::start(PeerConfig { protocol, ..PeerConfig::default() }).unwrap();
    peer.set_serving(true);
    if let Some(t) = target {
        peer.add_peer(PeerInfo::from_token(&t.token()).unwrap()).unwrap();
        t.add_peer(PeerInfo::from_token(&peer.token()).unwrap()).unwrap();
        let kind = if protocol == Protocol::V2 { "ping" } else { "request" };
        let fut = peer.request(t.agent_id(), kind, Map::new(), Duration::from_secs(10));
        let (tx, rx) = std::sync::mpsc::channel();
        peer.spawn(async move {
            let _ = tx.send(fut.await);
        });
        // The target does not serve axon/1 requests: `unhandled` is an answer too.
        let answer = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(answer.is_ok() || answer.unwrap_err().code() == "AXON_REMOTE_ERROR");
        t.remove_peer(peer.agent_id()).unwrap();
    }
    peer.close();
    drop(inbound);
}

#[test]
fn start_close_cycles_leak_nothing() {
    let targets: Vec<(Peer, _)> = [Protocol::Axon1, Protocol::V2]
        .into_iter()
        .map(|p| Peer::start(PeerConfig { protocol: p, ..PeerConfig::default() }).unwrap())
        .collect();
    cycle(Protocol::Axon1, Some(&targets[0].0));
    cycle(Protocol::V2, Some(&targets[1].0));
    std::thread::sleep(Duration::from_millis(100));
    let (threads, fds) = (count_dir("/proc/self/task"), count_dir("/proc/self/fd"));
    for i in 0..200 {
        let protocol = if i % 2 == 0 { Protocol::Axon1 } else { Protocol::V2 };
        // Every tenth talks to a target first.
        let target = (i % 10 < 2).then(|| &targets[i % 2].0);
        cycle(protocol, target);
    }
    std::thread::sleep(Duration::from_millis(200));
    let (threads2, fds2) = (count_dir("/proc/self/task"), count_dir("/proc/self/fd"));
    assert!(threads2 <= threads, "threads {threads} -> {threads2}");
    assert!(fds2 <= fds, "fds {fds} -> {fds2}");
    for (t, _) in targets {
        t.close();
    }
}
