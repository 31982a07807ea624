//! napi-rs shim over the `polywire` core crate.
//!
//! Thin by design: native functions take and return bytes and strings; the
//! per-format JavaScript files (`bindings-node/lib/<format>.js`) shape the public
//! API, do the JSON transcoding where it measures faster than converting
//! values through N-API, and turn native errors into typed error classes.

mod axon;
mod axon_peer;
mod cli;
mod errors;
mod jsbuf;
mod kado;
mod kameo;
mod kameo_peer;
mod llm;
mod settle;
mod tether;
mod toon;
