//! AXON: agent-to-agent messaging over QUIC (hwbehrens/axon), both protocol
//! generations.
//!
//! - [`v2`]: the design document's protocol, upstream tag v0.2.0 ("message
//!   types v2"; its wire field `v` is 1): envelopes `{v, id, from, to, ts,
//!   kind, ref?, payload}`, 13 kinds, a mandatory `hello`. Everything in it is
//!   also re-exported here (`polywire::axon::decode` is `v2::decode`), as it
//!   was before the second generation came.
//! - [`axon1`]: today's protocol, "AXON protocol version 1" (upstream v0.3.0
//!   and later: v0.7.2 and main), ALPN `axon/1`: envelopes `{id, kind, ref?,
//!   payload}`, kinds request/response/message/error, no hello.
//! - [`identity`]: Ed25519 identities as upstream keeps them (a 32-byte seed,
//!   `identity.key`), agent ids and enrollment tokens (`axon://…`).
//! - `peer` (cargo feature `axon-peer`): a peer that talks to real AXON
//!   daemons over QUIC with mutual TLS, in either generation.

pub mod axon1;
pub mod identity;
#[cfg(feature = "axon-peer")]
pub mod peer;
pub mod v2;

pub use v2::*;
