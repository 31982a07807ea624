//! libp2p `PeerId`s (multihash bytes and their base58 text) and kameo
//! `ActorId`s (u64 LE sequence id followed by the peer id's multihash).
//!
//! Parsing follows libp2p-identity 0.2 / multihash 0.19 / unsigned-varint 0.8
//! exactly, including their quirks: the varints must not end in a zero byte
//! (non-minimal), may be up to 10 bytes long and silently drop bits shifted
//! past 64; the digest may be at most 64 bytes; nothing may follow it; only
//! the identity code (digest of at most 42 bytes) and sha2-256 (`0x12`, any
//! digest length up to 64) are peer ids. A parsed id is kept in its
//! canonical (minimal varint) form, which is what libp2p writes back.

use super::err;
use crate::error::Result;
use sha2::{Digest, Sha256};
use std::fmt;

/// Multihash code of the identity "hash" (the key itself, inlined).
pub const MULTIHASH_IDENTITY: u64 = 0x00;
/// Multihash code of sha2-256.
pub const MULTIHASH_SHA2_256: u64 = 0x12;
/// Longest protobuf-encoded public key that is inlined with the identity
/// code; longer keys are hashed with sha2-256 (libp2p's rule).
pub const MAX_INLINE_KEY_LENGTH: usize = 42;
/// Largest digest a libp2p multihash (`Multihash<64>`) holds.
pub const MAX_DIGEST_LENGTH: usize = 64;
/// Longest base58 text [`PeerId::from_base58`] looks at. Any longer text
/// decodes to more than the 75 bytes a multihash can have (10-byte code
/// varint, 1-byte size, 64-byte digest), so libp2p rejects it too.
pub const MAX_BASE58_LENGTH: usize = 128;

/// A libp2p peer id: a multihash with the identity or sha2-256 code.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeerId {
    /// Canonical multihash bytes: varint code, varint size, digest.
    bytes: Vec<u8>,
    code: u64,
}

impl PeerId {
    /// A peer id from a multihash code and digest, as
    /// `PeerId::from_multihash(Multihash::wrap(code, digest))`.
    pub fn from_multihash(code: u64, digest: &[u8]) -> Result<PeerId> {
        if digest.len() > MAX_DIGEST_LENGTH {
            return Err(err("KAMEO_INVALID_PEER_ID", format!("expected a multihash digest of at most 64 bytes, got {}", digest.len())));
        }
        match code {
            MULTIHASH_SHA2_256 => {}
            MULTIHASH_IDENTITY if digest.len() <= MAX_INLINE_KEY_LENGTH => {}
            MULTIHASH_IDENTITY => {
                return Err(err(
                    "KAMEO_INVALID_PEER_ID",
                    format!("expected an identity multihash of at most 42 bytes, got {}", digest.len()),
                ))
            }
            _ => {
                return Err(err(
                    "KAMEO_INVALID_PEER_ID",
                    format!("unsupported multihash code {code:#x}: expected 0x0 (identity) or 0x12 (sha2-256)"),
                ))
            }
        }
        let mut bytes = Vec::with_capacity(digest.len() + 11);
        write_varint(&mut bytes, code);
        write_varint(&mut bytes, digest.len() as u64);
        bytes.extend_from_slice(digest);
        Ok(PeerId { bytes, code })
    }

    /// Parse multihash bytes, accepting exactly what `PeerId::from_bytes`
    /// accepts. The result keeps the canonical encoding.
    pub fn from_bytes(data: &[u8]) -> Result<PeerId> {
        let mut pos = 0;
        let code = read_varint(data, &mut pos)?;
        let size = read_varint(data, &mut pos)?;
        if size > MAX_DIGEST_LENGTH as u64 {
            return Err(err("KAMEO_INVALID_PEER_ID", format!("expected a multihash digest size of at most 64, got {size}")).at(pos));
        }
        let size = size as usize;
        let digest = data.get(pos..pos + size).ok_or_else(|| {
            err("KAMEO_INVALID_PEER_ID", format!("expected a {size}-byte multihash digest, got {}", data.len() - pos)).at(pos)
        })?;
        if pos + size != data.len() {
            return Err(err(
                "KAMEO_INVALID_PEER_ID",
                format!("expected the multihash to end after its digest, {} bytes follow", data.len() - pos - size),
            )
            .at(pos + size));
        }
        PeerId::from_multihash(code, digest)
    }

    /// Parse base58 (Bitcoin alphabet) text, as `PeerId::from_str`.
    pub fn from_base58(text: &str) -> Result<PeerId> {
        if text.len() > MAX_BASE58_LENGTH {
            return Err(err(
                "KAMEO_INVALID_PEER_ID",
                format!("expected a base58 peer id of at most {MAX_BASE58_LENGTH} characters, got {}", text.len()),
            ));
        }
        PeerId::from_bytes(&base58_decode(text)?)
    }

    /// The peer id of an Ed25519 public key (32 bytes): the identity
    /// multihash of its protobuf encoding `08 01 12 20 <key>`. The key is
    /// not checked to be a valid curve point.
    pub fn from_ed25519_public_key(key: &[u8; 32]) -> PeerId {
        let mut encoded = Vec::with_capacity(36);
        encoded.extend_from_slice(&[0x08, 0x01, 0x12, 0x20]);
        encoded.extend_from_slice(key);
        let mut bytes = Vec::with_capacity(38);
        bytes.extend_from_slice(&[0x00, 36]);
        bytes.extend_from_slice(&encoded);
        PeerId { bytes, code: MULTIHASH_IDENTITY }
    }

    /// The peer id of a protobuf-encoded libp2p public key
    /// (`08 <key type 0..=3> 12 <varint length> <key bytes>`, as
    /// `PublicKey::encode_protobuf` writes it): inlined with the identity
    /// code when at most 42 bytes long, otherwise its sha2-256 digest. Only
    /// the framing is checked, not the key material.
    pub fn from_public_key_protobuf(encoded: &[u8]) -> Result<PeerId> {
        let bad = |what: &str| err("KAMEO_INVALID_PUBLIC_KEY", format!("expected a protobuf-encoded public key: {what}"));
        match encoded {
            [0x08, 0..=3, 0x12, rest @ ..] => {
                let mut pos = 0;
                let len = read_varint(rest, &mut pos).map_err(|_| bad("bad key length varint"))?;
                if len != (rest.len() - pos) as u64 {
                    return Err(bad("key length does not match the data"));
                }
            }
            _ => return Err(bad("expected 08 <type 0..3> 12 <length> <key>")),
        }
        if encoded.len() <= MAX_INLINE_KEY_LENGTH {
            PeerId::from_multihash(MULTIHASH_IDENTITY, encoded)
        } else {
            PeerId::from_multihash(MULTIHASH_SHA2_256, &Sha256::digest(encoded))
        }
    }

    /// The peer id of a public key given either as the 32 raw bytes of an
    /// Ed25519 key or protobuf-encoded (any key type); what the bindings'
    /// `peer_id_from_public_key` calls.
    pub fn from_public_key(key: &[u8]) -> Result<PeerId> {
        match <&[u8; 32]>::try_from(key) {
            Ok(raw) => Ok(PeerId::from_ed25519_public_key(raw)),
            Err(_) => PeerId::from_public_key_protobuf(key),
        }
    }

    /// Canonical multihash bytes (what `PeerId::to_bytes` returns).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes.clone()
    }

    /// The multihash code (0 or 0x12).
    pub fn code(&self) -> u64 {
        self.code
    }

    /// The multihash digest (the inlined key for identity ids).
    pub fn digest(&self) -> &[u8] {
        // code varint, then a one-byte size (digests are at most 64 bytes)
        let code_len = varint_len(self.code);
        &self.bytes[code_len + 1..]
    }

    /// Base58 (Bitcoin alphabet) text, e.g. `12D3KooW...`.
    pub fn to_base58(&self) -> String {
        base58_encode(&self.bytes)
    }
}

impl fmt::Display for PeerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base58())
    }
}

impl fmt::Debug for PeerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PeerId({:?})", self.to_base58())
    }
}

impl std::str::FromStr for PeerId {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<PeerId> {
        PeerId::from_base58(s)
    }
}

/// A kameo actor id: a sequence id and, for an actor of a known peer, its
/// peer id. On the wire (`ActorId::to_bytes`): the sequence id as u64
/// little-endian, then the peer id's multihash bytes when there is one.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ActorId {
    pub sequence_id: u64,
    /// `None` for a local id of a node whose swarm is not bootstrapped
    /// (kameo then writes just the 8 sequence bytes).
    pub peer_id: Option<PeerId>,
}

impl ActorId {
    pub fn new(sequence_id: u64, peer_id: Option<PeerId>) -> ActorId {
        ActorId { sequence_id, peer_id }
    }

    /// `sequence_id` LE, then the peer id's multihash bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.peer_id.as_ref().map_or(0, |p| p.bytes.len()));
        out.extend_from_slice(&self.sequence_id.to_le_bytes());
        if let Some(peer) = &self.peer_id {
            out.extend_from_slice(&peer.bytes);
        }
        out
    }

    /// Parse `ActorId::from_bytes` input. Fewer than 8 bytes is an error
    /// here (kameo 0.22.2 panics on it); exactly 8 is an id without a peer.
    pub fn from_bytes(bytes: &[u8]) -> Result<ActorId> {
        let Some((seq, rest)) = bytes.split_first_chunk::<8>() else {
            return Err(err("KAMEO_ACTOR_ID_TOO_SHORT", format!("expected an ActorId of at least 8 bytes, got {}", bytes.len())));
        };
        let peer_id = if rest.is_empty() { None } else { Some(PeerId::from_bytes(rest).map_err(|e| e.shifted(8))?) };
        Ok(ActorId { sequence_id: u64::from_le_bytes(*seq), peer_id })
    }
}

// ---------------------------------------------------------------- varints

/// unsigned-varint 0.8 `io::read_u64` as multihash uses it: up to 10 bytes,
/// the last may not be zero in a multi-byte varint, bits past 64 vanish.
fn read_varint(data: &[u8], pos: &mut usize) -> Result<u64> {
    let start = *pos;
    let mut n: u64 = 0;
    for i in 0..10 {
        let Some(&b) = data.get(start + i) else {
            return Err(err("KAMEO_INVALID_PEER_ID", "expected more multihash varint bytes").at(start + i));
        };
        n |= u64::from(b & 0x7F) << (i * 7);
        if b & 0x80 == 0 {
            if b == 0 && i > 0 {
                return Err(err("KAMEO_INVALID_PEER_ID", "expected a minimal multihash varint").at(start + i));
            }
            *pos = start + i + 1;
            return Ok(n);
        }
    }
    Err(err("KAMEO_INVALID_PEER_ID", "expected a multihash varint of at most 10 bytes").at(start))
}

fn write_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn varint_len(n: u64) -> usize {
    let bits = 64 - n.leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

// ---------------------------------------------------------------- base58

const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Base58 (Bitcoin alphabet), as the `bs58` crate writes it.
pub fn base58_encode(input: &[u8]) -> String {
    let zeros = input.iter().take_while(|&&b| b == 0).count();
    // little-endian base-58 digits of the number after the leading zeros
    let mut digits: Vec<u8> = Vec::with_capacity(input.len() * 138 / 100 + 1);
    for &byte in &input[zeros..] {
        let mut carry = u32::from(byte);
        for d in digits.iter_mut() {
            carry += u32::from(*d) << 8;
            *d = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let mut out = String::with_capacity(zeros + digits.len());
    out.extend(std::iter::repeat_n('1', zeros));
    out.extend(digits.iter().rev().map(|&d| ALPHABET[d as usize] as char));
    out
}

/// Base58 (Bitcoin alphabet) decoding, as the `bs58` crate does it: every
/// character must be in the alphabet, each leading `1` is a zero byte.
pub fn base58_decode(text: &str) -> Result<Vec<u8>> {
    let zeros = text.bytes().take_while(|&c| c == b'1').count();
    let mut bytes: Vec<u8> = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        let value = ALPHABET
            .iter()
            .position(|&a| a as char == c)
            .ok_or_else(|| err("KAMEO_INVALID_BASE58", format!("expected a base58 character, found {c:?}")).at(i))?;
        let mut carry = value as u32;
        for b in bytes.iter_mut() {
            carry += u32::from(*b) * 58;
            *b = carry as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.push(carry as u8);
            carry >>= 8;
        }
    }
    // `bytes` holds the little-endian number including the leading ones'
    // zero value (they add no digits); prepend a zero byte per leading '1'.
    let mut out = vec![0u8; zeros];
    out.extend(bytes.iter().rev());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base58_round_trip_and_leading_zeros() {
        assert_eq!(base58_encode(b""), "");
        assert_eq!(base58_encode(&[0, 0, 1]), "112");
        assert_eq!(base58_decode("112").unwrap(), vec![0, 0, 1]);
        assert_eq!(base58_encode(b"hello world"), "StV1DL6CwTryKyV");
        assert_eq!(base58_decode("StV1DL6CwTryKyV").unwrap(), b"hello world");
        assert_eq!(base58_decode("0").unwrap_err().code(), "KAMEO_INVALID_BASE58");
        assert_eq!(base58_decode("é").unwrap_err().code(), "KAMEO_INVALID_BASE58");
    }

    #[test]
    fn ed25519_peer_id_is_identity_multihash() {
        let p = PeerId::from_ed25519_public_key(&[7; 32]);
        assert_eq!(&p.as_bytes()[..6], &[0, 36, 8, 1, 0x12, 0x20]);
        assert!(p.to_base58().starts_with("12D3KooW"));
        assert_eq!(PeerId::from_base58(&p.to_base58()).unwrap(), p);
        assert_eq!(p.digest().len(), 36);
        let mut proto = vec![8, 1, 0x12, 0x20];
        proto.extend_from_slice(&[7; 32]);
        assert_eq!(PeerId::from_public_key_protobuf(&proto).unwrap(), p);
        assert_eq!(PeerId::from_public_key(&proto).unwrap(), p);
        assert_eq!(PeerId::from_public_key(&[7; 32]).unwrap(), p);
        assert_eq!(PeerId::from_public_key(&[7; 31]).unwrap_err().code(), "KAMEO_INVALID_PUBLIC_KEY");
    }

    #[test]
    fn multihash_quirks() {
        // non-minimal varint (trailing zero byte) is rejected
        assert!(PeerId::from_bytes(&[0x92, 0x00, 0x00]).is_err());
        // a 10-byte code whose high bits fall off decodes to 0x12
        let mut b = vec![0x92, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0x01, 0xAA];
        let p = PeerId::from_bytes(&b).unwrap();
        assert_eq!(p.as_bytes(), &[0x12, 0x01, 0xAA]);
        b.push(0);
        assert!(PeerId::from_bytes(&b).is_err());
        // identity up to 42 bytes
        let mut id = vec![0x00, 42];
        id.extend_from_slice(&[1; 42]);
        assert!(PeerId::from_bytes(&id).is_ok());
        let mut id = vec![0x00, 43];
        id.extend_from_slice(&[1; 43]);
        assert!(PeerId::from_bytes(&id).is_err());
        // sha2-256 with any digest size up to 64
        assert!(PeerId::from_bytes(&[0x12, 0x00]).is_ok());
        let mut s = vec![0x12, 64];
        s.extend_from_slice(&[9; 64]);
        assert!(PeerId::from_bytes(&s).is_ok());
        let mut s = vec![0x12, 65];
        s.extend_from_slice(&[9; 65]);
        assert!(PeerId::from_bytes(&s).is_err());
        assert!(PeerId::from_bytes(&[0x13, 0x00]).is_err());
        assert!(PeerId::from_bytes(&[]).is_err());
    }

    #[test]
    fn actor_id_bytes() {
        let a = ActorId::new(42, None);
        assert_eq!(a.to_bytes(), 42u64.to_le_bytes());
        assert_eq!(ActorId::from_bytes(&a.to_bytes()).unwrap(), a);
        assert_eq!(ActorId::from_bytes(&[1, 2, 3]).unwrap_err().code(), "KAMEO_ACTOR_ID_TOO_SHORT");
        let p = PeerId::from_ed25519_public_key(&[1; 32]);
        let a = ActorId::new(u64::MAX, Some(p));
        assert_eq!(ActorId::from_bytes(&a.to_bytes()).unwrap(), a);
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(0x7f), 1);
        assert_eq!(varint_len(0x80), 2);
        assert_eq!(varint_len(u64::MAX), 10);
    }
}
