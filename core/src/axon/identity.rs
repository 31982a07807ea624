//! AXON identities as upstream keeps them: an Ed25519 key pair from a 32-byte
//! seed, the `identity.key` file (standard padded base64 of the seed), the
//! agent id (`ed25519.` + hex of the first 16 bytes of SHA-256 of the public
//! key) and the enrollment token `axon://<base64url public key>@host:port`.
//!
//! The rules and messages are upstream's at HEAD (`identity/mod.rs`,
//! `peer_token/mod.rs`): the same file or token is accepted or refused, for
//! the same reason. Errors are [`Error`]s of format Axon with the code
//! [`INVALID_ARGUMENT`].

use crate::error::{Error, Format, Result};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use std::path::Path;

/// The code of every error of this module.
pub const INVALID_ARGUMENT: &str = "AXON_INVALID_ARGUMENT";

/// The scheme of an enrollment token.
pub const TOKEN_PREFIX: &str = "axon://";

#[cold]
fn invalid(message: impl Into<String>) -> Error {
    Error::new(Format::Axon, INVALID_ARGUMENT, message)
}

/// An Ed25519 identity: the seed, its public key and agent id.
#[derive(Clone, PartialEq, Eq)]
pub struct Identity {
    seed: [u8; 32],
    public_key: [u8; 32],
    agent_id: String,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the seed.
        f.debug_struct("Identity").field("agent_id", &self.agent_id).finish_non_exhaustive()
    }
}

impl Identity {
    /// The identity of a 32-byte seed.
    pub fn from_seed(seed: [u8; 32]) -> Identity {
        let public_key = ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key().to_bytes();
        let agent_id = agent_id_of(&public_key);
        Identity { seed, public_key, agent_id }
    }

    /// A new random identity.
    pub fn generate() -> Result<Identity> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| invalid(format!("failed to gather randomness: {e}")))?;
        Ok(Identity::from_seed(seed))
    }

    /// The identity in an upstream `identity.key` file (its text: the seed in
    /// standard padded base64, white space around it ignored).
    pub fn from_key_file(path: &Path) -> Result<Identity> {
        let raw = std::fs::read(path).map_err(|e| invalid(format!("failed to read {}: {e}", path.display())))?;
        Ok(Identity::from_seed(parse_key_file(&raw, path)?))
    }

    pub fn seed(&self) -> &[u8; 32] {
        &self.seed
    }

    pub fn public_key(&self) -> &[u8; 32] {
        &self.public_key
    }

    /// The public key in standard padded base64 (upstream's `identity.pub`).
    pub fn public_key_base64(&self) -> String {
        STANDARD.encode(self.public_key)
    }

    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// What upstream writes to `identity.key` for this identity.
    pub fn key_file_text(&self) -> String {
        STANDARD.encode(self.seed)
    }

    /// The enrollment token for this identity at `addr`.
    pub fn token(&self, addr: &str) -> Result<String> {
        token(&self.public_key, addr)
    }
}

/// The seed in the contents of an `identity.key` file (`path` is only for
/// the messages), as upstream reads it: UTF-8 text, trimmed, canonical padded
/// standard base64 of exactly 32 bytes.
pub fn parse_key_file(raw: &[u8], path: &Path) -> Result<[u8; 32]> {
    const AGAIN: &str = "Remove identity.key and identity.pub from this root to re-initialize identity.";
    let text = std::str::from_utf8(raw).map_err(|_| {
        invalid(format!(
            "invalid identity.key format at {}: expected base64 text containing a 32-byte seed; non-text key data \
             is unsupported. {AGAIN}",
            path.display()
        ))
    })?;
    let bytes = STANDARD.decode(text.trim()).map_err(|e| {
        invalid(format!(
            "invalid identity.key contents at {}: expected base64 text containing a 32-byte seed ({e}). {AGAIN}",
            path.display()
        ))
    })?;
    let n = bytes.len();
    bytes
        .try_into()
        .map_err(|_| invalid(format!("invalid identity.key length at {}: expected 32 decoded bytes, got {n}. {AGAIN}", path.display())))
}

/// The agent id of a 32-byte Ed25519 public key.
pub fn agent_id_of(public_key: &[u8; 32]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(public_key);
    let mut id = String::with_capacity(40);
    id.push_str(super::v2::AGENT_ID_PREFIX);
    id.push_str(&crate::tether::to_hex(&digest[..16]));
    id
}

/// A public key given as standard base64 (upstream's `pubkey` fields;
/// white space around it ignored), its 32 bytes.
pub fn public_key_from_base64(text: &str) -> Result<[u8; 32]> {
    let bytes = STANDARD.decode(text.trim()).map_err(|e| invalid(format!("pubkey is not valid base64: {e}")))?;
    let n = bytes.len();
    bytes.try_into().map_err(|_| invalid(format!("pubkey must decode to 32 bytes, got {n}")))
}

/// Standard padded base64 of a public key.
pub fn public_key_to_base64(public_key: &[u8; 32]) -> String {
    STANDARD.encode(public_key)
}

/// An agent id written as upstream's verifiers compare them: any prefix, a
/// dot, 32 hex digits, lowercased; `None` for anything else.
pub fn canonical_agent_id(s: &str) -> Option<String> {
    let (prefix, hex) = s.split_once('.')?;
    if prefix.is_empty() || hex.len() != 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some(s.to_ascii_lowercase())
}

/// An enrollment token, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerToken {
    pub public_key: [u8; 32],
    pub agent_id: String,
    /// `ip:port` or `host:port`, trimmed.
    pub addr: String,
}

/// `axon://` + base64url (no padding) of the public key + `@` + `addr`.
pub fn token(public_key: &[u8; 32], addr: &str) -> Result<String> {
    check_addr(addr)?;
    Ok(format!("{TOKEN_PREFIX}{}@{}", URL_SAFE_NO_PAD.encode(public_key), addr.trim()))
}

/// Decode an enrollment token with upstream's rules and messages.
pub fn parse_token(token: &str) -> Result<PeerToken> {
    let rest = token.strip_prefix(TOKEN_PREFIX).ok_or_else(|| invalid(format!("peer token must start with '{TOKEN_PREFIX}'")))?;
    let (key, addr) = rest.split_once('@').ok_or_else(|| invalid("peer token must contain '@' between pubkey and addr"))?;
    if key.is_empty() {
        return Err(invalid("peer token pubkey segment is empty"));
    }
    check_addr(addr)?;
    let bytes = URL_SAFE_NO_PAD.decode(key).map_err(|_| invalid("peer token pubkey is not valid base64url"))?;
    let n = bytes.len();
    let public_key: [u8; 32] = bytes.try_into().map_err(|_| invalid(format!("peer token pubkey must decode to 32 bytes, got {n}")))?;
    Ok(PeerToken { agent_id: agent_id_of(&public_key), public_key, addr: addr.trim().to_owned() })
}

/// An address as upstream's tokens and `add_peer` take it: `ip:port` or
/// `host:port` with a u16 port.
pub fn check_addr(addr: &str) -> Result<()> {
    let addr = addr.trim();
    if addr.is_empty() {
        return Err(invalid("peer token addr cannot be empty"));
    }
    if addr.parse::<std::net::SocketAddr>().is_ok() {
        return Ok(());
    }
    let (host, port) = addr.rsplit_once(':').ok_or_else(|| invalid("peer token addr must be host:port or ip:port"))?;
    if host.is_empty() {
        return Err(invalid("peer token addr host cannot be empty"));
    }
    port.parse::<u16>().map_err(|_| invalid(format!("peer token addr has invalid port '{port}'")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_identities() {
        // Computed independently (Python `cryptography`), not taken from upstream.
        let cases = [
            ([7u8; 32], "6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw=", "ed25519.fe812c12f3ab4ce6ac5db69ac352f906"),
            ([0x2a; 32], "GX9rI+FshTLGq8g4+s1ep4m+DHaykgM0A5v6iz02jWE=", "ed25519.b600306cfa76723fdec395e53a9b3d9f"),
            ([0; 32], "O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik=", "ed25519.139e3940e64b5491722088d9a0d74162"),
        ];
        for (seed, public, id) in cases {
            let identity = Identity::from_seed(seed);
            assert_eq!(identity.public_key_base64(), public);
            assert_eq!(identity.agent_id(), id);
            let t = identity.token("127.0.0.1:7100").unwrap();
            let back = parse_token(&t).unwrap();
            assert_eq!((back.public_key, back.agent_id.as_str(), back.addr.as_str()), (seed_key(seed), id, "127.0.0.1:7100"));
            let file = identity.key_file_text();
            assert_eq!(parse_key_file(format!("  {file}\n").as_bytes(), Path::new("k")).unwrap(), seed);
        }
        assert_eq!(
            Identity::from_seed([7; 32]).token("127.0.0.1:7100").unwrap(),
            "axon://6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw@127.0.0.1:7100"
        );
    }

    fn seed_key(seed: [u8; 32]) -> [u8; 32] {
        *Identity::from_seed(seed).public_key()
    }

    #[test]
    fn token_errors_are_upstreams() {
        let key = "6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw";
        let cases = [
            ("http://x@1.2.3.4:1", "peer token must start with 'axon://'"),
            ("axon://abc", "peer token must contain '@' between pubkey and addr"),
            ("axon://@1.2.3.4:1", "peer token pubkey segment is empty"),
            ("axon://abc@", "peer token addr cannot be empty"),
            ("axon://abc@host", "peer token addr must be host:port or ip:port"),
            ("axon://abc@:80", "peer token addr host cannot be empty"),
            ("axon://abc@h:99999", "peer token addr has invalid port '99999'"),
            ("axon://a*b@h:1", "peer token pubkey is not valid base64url"),
            ("axon://6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw=@h:1", "peer token pubkey is not valid base64url"),
            ("axon://AAAA@h:1", "peer token pubkey must decode to 32 bytes, got 3"),
        ];
        for (t, m) in cases {
            let e = parse_token(t).unwrap_err();
            assert_eq!((e.code(), e.message()), (INVALID_ARGUMENT, m), "{t}");
        }
        let ok = parse_token(&format!("axon://{key}@ some-host:7100 ")).unwrap();
        assert_eq!(ok.addr, "some-host:7100");
        assert!(parse_token(&format!("axon://{key}@[::1]:7100")).is_ok());
    }

    #[test]
    fn key_file_errors_are_upstreams() {
        let p = Path::new("/r/identity.key");
        let e = parse_key_file(&[0xff, 0xfe], p).unwrap_err();
        assert!(e.message().starts_with("invalid identity.key format at /r/identity.key: expected base64 text"), "{e}");
        let e = parse_key_file(b"AAAA", p).unwrap_err();
        assert!(e.message().starts_with("invalid identity.key length at /r/identity.key: expected 32 decoded bytes, got 3."), "{e}");
        let e = parse_key_file(b"BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc", p).unwrap_err();
        assert!(e.message().starts_with("invalid identity.key contents at /r/identity.key"), "{e}");
        // Non-canonical trailing bits are refused, as STANDARD refuses them.
        assert!(parse_key_file(b"BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwd=", p).is_err());
        assert_eq!(canonical_agent_id("ED25519.FE812C12F3AB4CE6AC5DB69AC352F906").unwrap(), "ed25519.fe812c12f3ab4ce6ac5db69ac352f906");
        assert!(canonical_agent_id("ed25519.fe81").is_none());
    }
}
