//! Connections: dialing, accepting, and the loops that take a connection's
//! streams.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::node::Node;
use super::{tls, PeerError, Protocol};
use crate::axon::identity::agent_id_of;

/// v2: how long the dialer has to send its `hello` (upstream's handshake
/// timeout), and how long the dialer waits for the answer.
pub(super) const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// One connection's peer, and (v2) whether its hello has come.
#[derive(Debug)]
pub(super) struct Link {
    pub conn: quinn::Connection,
    /// The agent id of the peer's TLS certificate.
    pub peer: String,
    pub ready: AtomicBool,
}

/// A QUIC error as the peer error it means for whoever waits.
pub(super) fn connection_error(e: &quinn::ConnectionError, what: &str) -> PeerError {
    use quinn::ConnectionError as C;
    let crypto = |code: u64| (0x100..0x200).contains(&code);
    match e {
        C::TransportError(t) if crypto(t.code.into()) => PeerError::HandshakeRefused(format!("{what}: TLS refused: {t}")),
        C::ConnectionClosed(c) if crypto(c.error_code.into()) => {
            PeerError::HandshakeRefused(format!("{what}: the peer refused the TLS handshake ({c})"))
        }
        C::TimedOut => PeerError::Unreachable(format!("{what}: timed out")),
        C::LocallyClosed => PeerError::Closed,
        other => PeerError::ConnectionLost(format!("{what}: {other}")),
    }
}

impl Node {
    /// Serve an incoming connection.
    pub(super) async fn accept(self: Arc<Self>, incoming: quinn::Incoming) {
        let remote = incoming.remote_address();
        let Ok(config) = self.tls.server_config(Some(remote)) else {
            incoming.refuse();
            return;
        };
        let Ok(connecting) = incoming.accept_with(Arc::new(config)) else { return };
        let conn = match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(Ok(conn)) => conn,
            _ => return,
        };
        let Some(key) = tls::peer_public_key(&conn) else {
            conn.close(0u32.into(), b"no certificate");
            return;
        };
        let peer = agent_id_of(&key);
        let link = Arc::new(Link { conn, peer, ready: AtomicBool::new(self.protocol == Protocol::Axon1) });
        match self.protocol {
            Protocol::Axon1 => {
                if !self.register(&link.peer, &link.conn, false) {
                    return;
                }
            }
            Protocol::V2 => {
                // Nothing but a hello until one succeeds; none within the
                // handshake timeout closes the connection.
                let watch = link.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(HELLO_TIMEOUT).await;
                    if !watch.ready.load(Ordering::Acquire) {
                        watch.conn.close(0u32.into(), b"handshake timeout");
                    }
                });
            }
        }
        self.serve_connection(link).await;
    }

    /// Dial `id` (its `dialing` flag is set) and record how it went.
    pub(super) async fn dial(self: Arc<Self>, id: String) {
        let result = match self.connect(&id).await {
            Ok(conn) => {
                let link = Arc::new(Link { conn, peer: id.clone(), ready: AtomicBool::new(true) });
                if self.register(&id, &link.conn, true) {
                    tokio::spawn(self.clone().serve_connection(link));
                }
                Ok(())
            }
            Err(e) => Err(e),
        };
        self.dial_finished(&id, result);
    }

    async fn resolve(&self, addr: &str) -> Result<SocketAddr, PeerError> {
        if let Ok(a) = addr.parse::<SocketAddr>() {
            return Ok(a);
        }
        let found: Vec<SocketAddr> = tokio::time::timeout(self.connect_timeout, tokio::net::lookup_host(addr))
            .await
            .map_err(|_| PeerError::Unreachable(format!("{addr}: the name did not resolve in time")))?
            .map_err(|e| PeerError::Unreachable(format!("{addr}: {e}")))?
            .collect();
        found
            .iter()
            .find(|a| a.is_ipv4())
            .or(found.first())
            .copied()
            .ok_or_else(|| PeerError::Unreachable(format!("{addr}: the name has no address")))
    }

    /// A QUIC connection to `id` (v2: with the hello exchanged).
    async fn connect(self: &Arc<Self>, id: &str) -> Result<quinn::Connection, PeerError> {
        let addr = self.lock().get(id).and_then(|e| e.addr.clone());
        let addr = addr.ok_or_else(|| PeerError::Unreachable(format!("no address is known for {id}")))?;
        let sock = self.resolve(&addr).await?;
        let config = self.tls.client_config(Some(sock)).map_err(PeerError::Unreachable)?;
        let endpoint = self.endpoint().ok_or(PeerError::Closed)?;
        let connecting =
            endpoint.connect_with(config, sock, id).map_err(|e| PeerError::Unreachable(format!("cannot dial {id} at {addr}: {e}")))?;
        let conn = match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(connection_error(&e, &format!("connecting to {id} at {addr}"))),
            Err(_) => {
                return Err(PeerError::Unreachable(format!(
                    "no answer from {id} at {addr} within {} s",
                    self.connect_timeout.as_secs_f64()
                )))
            }
        };
        if self.protocol == Protocol::V2 {
            if let Err(e) = self.hello(&conn, id).await {
                conn.close(0u32.into(), b"hello failed");
                return Err(e);
            }
        }
        Ok(conn)
    }

    /// Take the connection's streams until it closes, each in a task of its own.
    pub(super) async fn serve_connection(self: Arc<Self>, link: Arc<Link>) {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let uni = {
            let (node, link) = (self.clone(), link.clone());
            tokio::spawn(async move {
                while let Ok(recv) = link.conn.accept_uni().await {
                    tokio::spawn(node.clone().serve_uni(link.clone(), recv));
                }
            })
        };
        while let Ok((send, recv)) = link.conn.accept_bi().await {
            tokio::spawn(self.clone().serve_bi(link.clone(), send, recv));
        }
        uni.abort();
        self.connections.fetch_sub(1, Ordering::Relaxed);
        self.unregister(&link.peer, &link.conn);
    }
}
