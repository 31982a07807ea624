//! Byte input: `bytes` is read in place; `bytearray`, `memoryview` and other
//! buffer-protocol objects are copied first, because a mutable buffer could
//! change under us while Python code (a `__del__`, say) runs during decoding.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

pub fn with_bytes<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    if let Ok(b) = obj.cast_exact::<PyBytes>() {
        return f(b.as_bytes());
    }
    match PyBuffer::<u8>::get(obj) {
        Ok(buf) => {
            let v = buf.to_vec(obj.py())?;
            f(&v)
        }
        Err(_) => Err(PyTypeError::new_err(format!(
            "expected bytes, bytearray or memoryview, not {}",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
        ))),
    }
}
