//! Byte input: `bytes` is read in place; `bytearray`, `memoryview` and other
//! buffer-protocol objects are copied first, because a mutable buffer could
//! change under us while Python code (a `__del__`, say) runs during decoding.

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The bytes of `obj` (the parameter `name`), or a `PolywireTypeError`
/// carrying the format's `code` and naming the parameter.
pub fn with_bytes_in<R>(code: &'static str, name: &str, obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
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
            format!("{name}: expected bytes, bytearray or memoryview, not {}", crate::pyjson::type_name(obj)),
        )),
    }
}
