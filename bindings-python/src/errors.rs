//! Exception classes: one per format, all subclasses of `PolywireError`,
//! itself a `ValueError`. Each instance carries `code` (stable string),
//! `offset` (byte offset or None), `line` and `column` (text formats, or None).

use polywire::Format;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;

create_exception!(polywire, PolywireError, PyValueError, "Base class of every polywire error (a ValueError).");
create_exception!(polywire, KadoError, PolywireError, "A Kado frame could not be encoded or decoded.");
create_exception!(polywire, ToonDecodeError, PolywireError, "TOON text could not be decoded.");
create_exception!(polywire, ToonEncodeError, PolywireError, "A value could not be encoded as TOON text.");
create_exception!(polywire, TetherError, PolywireError, "A Tether value could not be encoded or decoded.");
create_exception!(polywire, AxonError, PolywireError, "An AXON envelope is invalid; `code` is the protocol's error code.");
create_exception!(polywire, KameoError, PolywireError, "A Kameo message could not be encoded or decoded.");

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PolywireError", py.get_type::<PolywireError>())?;
    m.add("KadoError", py.get_type::<KadoError>())?;
    m.add("ToonDecodeError", py.get_type::<ToonDecodeError>())?;
    m.add("ToonEncodeError", py.get_type::<ToonEncodeError>())?;
    m.add("TetherError", py.get_type::<TetherError>())?;
    m.add("AxonError", py.get_type::<AxonError>())?;
    m.add("KameoError", py.get_type::<KameoError>())?;
    Ok(())
}

fn class_for(py: Python<'_>, format: Format) -> Bound<'_, PyType> {
    match format {
        Format::Json => py.get_type::<PolywireError>(),
        Format::Kado => py.get_type::<KadoError>(),
        Format::Toon => py.get_type::<ToonDecodeError>(),
        Format::Tether => py.get_type::<TetherError>(),
        Format::Axon => py.get_type::<AxonError>(),
        Format::Kameo => py.get_type::<KameoError>(),
    }
}

/// Convert a core error into the format's exception, with its attributes set.
#[cold]
pub fn to_pyerr(py: Python<'_>, e: polywire::Error) -> PyErr {
    to_pyerr_as(py, class_for(py, e.format()), e)
}

/// Convert a core error into a given exception class (a subclass of
/// `PolywireError`), with its attributes set.
#[cold]
pub fn to_pyerr_as(py: Python<'_>, class: Bound<'_, PyType>, e: polywire::Error) -> PyErr {
    let err = PyErr::from_type(class, e.to_string());
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in
    // practice; if it did, the exception without them is still correct.
    let _ = value.setattr("code", e.code());
    let _ = value.setattr("offset", e.offset());
    let _ = value.setattr("line", e.line());
    let _ = value.setattr("column", e.column());
    let _ = value.setattr("msg", e.message());
    err
}

/// Shorthand for `map_err` at the boundary.
pub trait IntoPyResult<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, polywire::Error> {
    #[inline]
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_pyerr(py, e))
    }
}
