//! Returning bytes to JavaScript in memory V8 owns and accounts for.
//!
//! `Buffer::from(Vec<u8>)` hands V8 an *external* buffer: the Vec is freed by
//! a finalizer that runs only when the event loop turns, and V8 does not
//! count its bytes toward its heap limits, so a synchronous loop of encodes
//! grows RSS without bound (200,000 `tether.encode` calls took RSS from 42
//! to 327 MB). Copying the bytes into a Buffer created by
//! `napi_create_buffer_copy` gives V8 an ordinary ArrayBuffer backing store:
//! its size counts as external memory, the GC collects it without waiting
//! for the loop, and the Rust Vec is freed before returning. The copy is a
//! memcpy of the output, small next to producing it.

use crate::errors::Code;
use napi::bindgen_prelude::*;

/// A JS Buffer holding a copy of `bytes` (V8-owned memory).
pub fn js_buffer<'e>(env: &'e Env, bytes: &[u8]) -> napi::Result<BufferSlice<'e>, Code> {
    BufferSlice::copy_from(env, bytes).map_err(|e| napi::Error::new(Code("POLYWIRE_BUFFER_FAILED"), e.reason.clone()))
}
