//! Byte input: `bytes` is read in place; `bytearray`, `memoryview` and other
//! buffer-protocol objects are copied first, because a mutable buffer could
//! change under us while Python code (a `__del__`, say) runs during decoding.

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

pub fn with_bytes<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    with_bytes_in("POLYWIRE_INVALID_ARGUMENT", obj, f)
}

/// [`with_bytes`] whose wrong-type error (a `PolywireTypeError`) carries
/// the format's `code`.
pub fn with_bytes_in<R>(code: &'static str, obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    if let Ok(b) = obj.cast_exact::<PyBytes>() {
        return f(b.as_bytes());
    }
    match PyBuffer::<u8>::get(obj) {
        Ok(buf) => {
            let v = buf.to_vec(obj.py())?;
            f(&v)
        }
        Err(_) => Err(crate::errors::type_error(
            obj.py(),
            code,
            format!("expected bytes, bytearray or memoryview, not {}", crate::pyjson::type_name(obj)),
        )),
    }
}
