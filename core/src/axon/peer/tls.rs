//! The TLS and QUIC configuration of an AXON peer, as upstream's daemons set
//! theirs up: a self-signed Ed25519 certificate from the seed (CN
//! `axon-<agent id>`, SAN `localhost`), TLS 1.3 only, no 0-RTT, and custom
//! verifiers in both directions over one pin map (agent id -> public key).
//!
//! The client sends the expected agent id as the server name and checks that
//! the server's key derives to it and is the pinned one; the server requires
//! a client certificate, derives its agent id and checks the pin. TLS 1.3
//! signatures are verified with the ring provider's algorithms. The provider
//! is passed to the builders, never installed as the process default (libp2p
//! lives in the same process). An unknown key refuses the handshake and
//! raises a `pair_request` (at most once per agent id per 30 s).
//!
//! Beyond upstream: sessions are never resumed (each handshake checks the
//! certificate against the pins as they are then), and the certificate's key
//! algorithm must be Ed25519.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

use crate::axon::identity::{agent_id_of, canonical_agent_id, Identity};

/// Agent id -> pinned Ed25519 public key; shared by both verifiers and the peer.
pub type PinMap = Arc<RwLock<HashMap<String, [u8; 32]>>>;

/// How often a `pair_request` is raised for one agent id at most.
pub const PAIR_REQUEST_WINDOW: Duration = Duration::from_secs(30);

/// An unknown peer that tried to connect (or that we reached while it was
/// not pinned any more): upstream's `pair_request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRequest {
    pub agent_id: String,
    pub public_key: [u8; 32],
    /// The remote address, when known.
    pub addr: Option<SocketAddr>,
}

/// Where verifiers report unknown peers: rate-limited per agent id.
pub struct PairSink {
    last: Mutex<HashMap<String, Instant>>,
    emit: Box<dyn Fn(PairRequest) + Send + Sync>,
}

impl std::fmt::Debug for PairSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PairSink")
    }
}

impl PairSink {
    pub fn new(emit: impl Fn(PairRequest) + Send + Sync + 'static) -> PairSink {
        PairSink { last: Mutex::new(HashMap::new()), emit: Box::new(emit) }
    }

    fn report(&self, request: PairRequest) {
        let now = Instant::now();
        if let Ok(mut last) = self.last.lock() {
            if last.get(&request.agent_id).is_some_and(|t| now.duration_since(*t) < PAIR_REQUEST_WINDOW) {
                return;
            }
            if last.len() >= 4096 {
                last.retain(|_, t| now.duration_since(*t) < PAIR_REQUEST_WINDOW);
            }
            last.insert(request.agent_id.clone(), now);
        }
        (self.emit)(request);
    }
}

/// The provider every config is built with: ring, passed to the builders.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A certificate and its private key.
pub struct Certificate {
    pub cert: CertificateDer<'static>,
    pub key: PrivatePkcs8KeyDer<'static>,
}

impl Certificate {
    fn key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(self.key.clone_key())
    }
}

/// The PKCS#8 v2 document (RFC 5958 / RFC 8410) of an Ed25519 key pair.
fn pkcs8_v2(seed: &[u8; 32], public_key: &[u8; 32]) -> Vec<u8> {
    // OneAsymmetricKey { version 1, algorithm id-Ed25519 (1.3.101.112),
    // privateKey OCTET STRING { OCTET STRING seed }, [1] publicKey BIT STRING }
    let mut der = vec![0x30, 0x53, 0x02, 0x01, 0x01, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
    der.extend_from_slice(seed);
    der.extend_from_slice(&[0xa1, 0x23, 0x03, 0x21, 0x00]);
    der.extend_from_slice(public_key);
    der
}

/// A self-signed Ed25519 certificate for `identity` (CN `axon-<agent id>`,
/// SAN `localhost`), as upstream makes one at each start.
pub fn certificate(identity: &Identity) -> Result<Certificate, String> {
    let key = PrivatePkcs8KeyDer::from(pkcs8_v2(identity.seed(), identity.public_key()));
    let pair = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&key, &rcgen::PKCS_ED25519).map_err(|e| format!("the key pair: {e}"))?;
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).map_err(|e| format!("certificate parameters: {e}"))?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, format!("axon-{}", identity.agent_id()));
    let cert = params.self_signed(&pair).map_err(|e| format!("the certificate: {e}"))?;
    Ok(Certificate { cert: cert.der().clone(), key })
}

const ED25519_OID: &[u64] = &[1, 3, 101, 112];

/// The 32-byte Ed25519 public key of a certificate.
pub fn certificate_public_key(der: &[u8]) -> Result<[u8; 32], String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).map_err(|e| format!("unparseable peer certificate: {e}"))?;
    let spki = cert.public_key();
    let oid: Option<Vec<u64>> = spki.algorithm.algorithm.iter().map(|i| i.collect());
    if oid.as_deref() != Some(ED25519_OID) {
        return Err("the peer certificate's key is not an Ed25519 key".into());
    }
    let data = &spki.subject_public_key.data;
    <[u8; 32]>::try_from(data.as_ref()).map_err(|_| format!("unexpected public key length {}; expected 32 bytes Ed25519", data.len()))
}

fn general(message: String) -> rustls::Error {
    rustls::Error::General(message)
}

/// What both verifiers hold: the pinned keys, where a refused peer is
/// reported, the address it is named with there, and the signature
/// algorithms of the provider.
#[derive(Debug)]
struct Pinning {
    pins: PinMap,
    pairs: Arc<PairSink>,
    addr: Option<SocketAddr>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl Pinning {
    /// Accept `key` as agent `id`'s only if it is the key pinned for `id`. An
    /// unknown `id` is reported as a pair request. The texts are upstream's:
    /// `mismatch` for another key, `side` (`server`, `client`) in the refusal.
    fn check(&self, id: String, key: [u8; 32], mismatch: &str, side: &str) -> Result<(), rustls::Error> {
        let pinned = self.pins.read().map_err(|_| general("the pin map is poisoned".into()))?.get(&id).copied();
        match pinned {
            Some(k) if k == key => Ok(()),
            Some(_) => Err(general(mismatch.into())),
            None => {
                self.pairs.report(PairRequest { agent_id: id.clone(), public_key: key, addr: self.addr });
                Err(general(format!("rejecting unknown {side} peer {id}: no public key on record")))
            }
        }
    }

    fn verify_tls13(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }
}

/// The verifier of server certificates (our side dials).
#[derive(Debug)]
struct ServerVerifier(Pinning);

impl ServerCertVerifier for ServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let raw = match server_name {
            ServerName::DnsName(d) => d.as_ref().to_owned(),
            other => format!("{other:?}"),
        };
        let expected = canonical_agent_id(&raw).ok_or_else(|| general(format!("invalid expected server agent_id in SNI: {raw}")))?;
        let key = certificate_public_key(end_entity).map_err(general)?;
        if agent_id_of(&key) != expected {
            return Err(general("server cert public key does not match expected agent_id".into()));
        }
        self.0.check(expected, key, "server cert public key mismatch against discovery data", "server")?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Err(general("TLS 1.2 not supported".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.algorithms.supported_schemes()
    }
}

/// The verifier of client certificates (the other side dials).
#[derive(Debug)]
struct ClientVerifier(Pinning);

impl ClientCertVerifier for ClientVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let key = certificate_public_key(end_entity).map_err(general)?;
        self.0.check(agent_id_of(&key), key, "client cert public key does not match discovered peer key", "client")?;
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Err(general("TLS 1.2 not supported".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.algorithms.supported_schemes()
    }
}

/// The QUIC transport settings of upstream's daemons: keep-alive 15 s, idle
/// 60 s, 8 bidirectional and 16 unidirectional streams at once.
pub fn transport(keep_alive: Duration, idle: Duration) -> Arc<quinn::TransportConfig> {
    let mut t = quinn::TransportConfig::default();
    t.keep_alive_interval(Some(keep_alive));
    t.max_idle_timeout(quinn::IdleTimeout::try_from(idle).ok());
    t.max_concurrent_bidi_streams(8u32.into());
    t.max_concurrent_uni_streams(16u32.into());
    Arc::new(t)
}

/// Everything the configs are built from.
pub struct TlsContext {
    pub provider: Arc<CryptoProvider>,
    pub certificate: Certificate,
    pub pins: PinMap,
    pub pairs: Arc<PairSink>,
    /// `Some(b"axon/1")` for axon/1; `None` (no ALPN) for v2.
    pub alpn: Option<Vec<u8>>,
    pub transport: Arc<quinn::TransportConfig>,
}

impl TlsContext {
    /// What a verifier of a connection with `addr` checks against.
    fn pinning(&self, addr: Option<SocketAddr>) -> Pinning {
        Pinning { pins: self.pins.clone(), pairs: self.pairs.clone(), addr, algorithms: self.provider.signature_verification_algorithms }
    }

    /// The server side, for a connection from `addr` (named in pair requests).
    pub fn server_config(&self, addr: Option<SocketAddr>) -> Result<quinn::ServerConfig, String> {
        let verifier = ClientVerifier(self.pinning(addr));
        let mut tls = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| format!("TLS: {e}"))?
            .with_client_cert_verifier(Arc::new(verifier))
            .with_single_cert(vec![self.certificate.cert.clone()], self.certificate.key())
            .map_err(|e| format!("TLS certificate: {e}"))?;
        tls.max_early_data_size = 0;
        tls.send_tls13_tickets = 0;
        tls.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        tls.alpn_protocols = self.alpn.iter().cloned().collect();
        let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).map_err(|e| format!("QUIC TLS: {e}"))?;
        let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        config.transport_config(self.transport.clone());
        Ok(config)
    }

    /// The client side, for dialing `addr`.
    pub fn client_config(&self, addr: Option<SocketAddr>) -> Result<quinn::ClientConfig, String> {
        let verifier = ServerVerifier(self.pinning(addr));
        let mut tls = rustls::ClientConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_client_auth_cert(vec![self.certificate.cert.clone()], self.certificate.key())
            .map_err(|e| format!("TLS certificate: {e}"))?;
        tls.enable_early_data = false;
        tls.resumption = rustls::client::Resumption::disabled();
        tls.alpn_protocols = self.alpn.iter().cloned().collect();
        let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|e| format!("QUIC TLS: {e}"))?;
        let mut config = quinn::ClientConfig::new(Arc::new(crypto));
        config.transport_config(self.transport.clone());
        Ok(config)
    }
}

/// The Ed25519 public key of a connection's peer (its TLS certificate).
pub fn peer_public_key(conn: &quinn::Connection) -> Option<[u8; 32]> {
    let certs = conn.peer_identity()?.downcast::<Vec<CertificateDer<'static>>>().ok()?;
    certificate_public_key(certs.first()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_carries_the_identity() {
        let identity = Identity::from_seed([7; 32]);
        let c = certificate(&identity).unwrap();
        assert_eq!(certificate_public_key(&c.cert).unwrap(), *identity.public_key());
        let (_, cert) = x509_parser::parse_x509_certificate(&c.cert).unwrap();
        assert_eq!(cert.subject().to_string(), format!("CN=axon-{}", identity.agent_id()));
        // Deterministic for a seed (Ed25519 signatures are).
        assert_eq!(certificate(&identity).unwrap().cert, c.cert);
    }

    #[test]
    fn pair_requests_are_rate_limited() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let sink = PairSink::new(move |r| s.lock().unwrap().push(r.agent_id));
        for id in ["a", "a", "b", "a"] {
            sink.report(PairRequest { agent_id: id.into(), public_key: [0; 32], addr: None });
        }
        assert_eq!(*seen.lock().unwrap(), vec!["a".to_owned(), "b".to_owned()]);
    }
}
