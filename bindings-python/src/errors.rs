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
create_exception!(polywire, LlmError, PolywireError, "Tokens could not be counted: an unknown encoding, an unreadable tokenizer.json.");

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PolywireError", py.get_type::<PolywireError>())?;
    m.add("KadoError", py.get_type::<KadoError>())?;
    m.add("ToonDecodeError", py.get_type::<ToonDecodeError>())?;
    m.add("ToonEncodeError", py.get_type::<ToonEncodeError>())?;
    m.add("TetherError", py.get_type::<TetherError>())?;
    m.add("AxonError", py.get_type::<AxonError>())?;
    m.add("KameoError", py.get_type::<KameoError>())?;
    m.add("LlmError", py.get_type::<LlmError>())?;
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
        Format::Llm => py.get_type::<LlmError>(),
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

// ---------------------------------------------------------------- typed argument errors
//
// Every error a public function raises for bad input carries `code`:
// a value of the wrong type is a `PolywireTypeError` (a `TypeError`), a value
// of the right type but out of range, a lone surrogate or a huge int is the
// format's error class (a `ValueError`). pyo3's own argument conversions
// raise a plain `TypeError` (or `OverflowError` for an int out of range), so
// the functions take such arguments as objects and convert them here, naming
// the parameter in the message.
//
// `PolywireTypeError` derives from `TypeError` and from `PolywireError`, so
// `except polywire.PolywireError` catches every error polywire raises, as
// `err instanceof PolywireError` holds in Node for its coded TypeErrors. (It
// is a `ValueError` too, through `PolywireError`.) `create_exception!` takes
// one base, so the class is made with `PyErr_NewExceptionWithDoc` and a tuple
// of bases.

static POLYWIRE_TYPE_ERROR: pyo3::sync::PyOnceLock<Py<PyType>> = pyo3::sync::PyOnceLock::new();

/// The `polywire.PolywireTypeError` class (`TypeError`, `PolywireError`).
pub fn polywire_type_error(py: Python<'_>) -> &Bound<'_, PyType> {
    POLYWIRE_TYPE_ERROR
        .get_or_init(py, || {
            let bases = pyo3::types::PyTuple::new(py, [py.get_type::<pyo3::exceptions::PyTypeError>(), py.get_type::<PolywireError>()])
                .expect("a tuple of two classes");
            let doc = c"An argument or value has a type polywire cannot take: a TypeError with `code`, and a PolywireError.";
            // SAFETY: the name and doc are NUL-terminated; the bases tuple
            // is alive for the call; a new reference (or NULL with an
            // exception set) comes back.
            let ptr = unsafe {
                pyo3::ffi::PyErr_NewExceptionWithDoc(
                    c"polywire.PolywireTypeError".as_ptr(),
                    doc.as_ptr(),
                    bases.as_ptr(),
                    std::ptr::null_mut(),
                )
            };
            unsafe { Py::from_owned_ptr_or_err(py, ptr) }
                .and_then(|t: Py<PyAny>| Ok(t.into_bound(py).cast_into::<PyType>()?.unbind()))
                .expect("PolywireTypeError is created")
        })
        .bind(py)
}

pub fn register_type_error(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PolywireTypeError", polywire_type_error(m.py()))
}

/// A `PolywireTypeError` with `code` (and the other attributes None).
#[cold]
pub fn type_error(py: Python<'_>, code: &'static str, msg: impl Into<String>) -> PyErr {
    to_pyerr_as(py, polywire_type_error(py).clone(), polywire::Error::new(Format::Json, code, msg.into()))
}

/// The format's error (its class) with `code`.
#[cold]
pub fn value_error(py: Python<'_>, format: Format, code: &'static str, msg: impl Into<String>) -> PyErr {
    to_pyerr(py, polywire::Error::new(format, code, msg.into()))
}

/// `repr(obj)` for messages; runs Python code, so only on error paths.
#[cold]
pub fn repr(obj: &Bound<'_, PyAny>) -> String {
    // An int too long for str() (the 4,300-digit limit) has no repr either.
    obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| format!("<{}>", crate::pyjson::type_name(obj)))
}

/// An `int` argument (not a `bool`) in `min..=max`. Without calling any
/// `__index__`: an int subclass is read as the int it is.
pub fn int_arg(
    py: Python<'_>,
    format: Format,
    code: &'static str,
    name: &str,
    obj: &Bound<'_, PyAny>,
    min: i128,
    max: i128,
) -> PyResult<i128> {
    unsafe {
        let p = obj.as_ptr();
        if pyo3::ffi::PyLong_Check(p) == 0 || pyo3::ffi::PyBool_Check(p) != 0 {
            return Err(type_error(py, code, format!("{name} must be an int, not {}", crate::pyjson::type_name(obj))));
        }
        let mut overflow: std::os::raw::c_int = 0;
        let v = pyo3::ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow);
        let v = if overflow > 0 {
            // Past i64: u64 values still count.
            let u = pyo3::ffi::PyLong_AsUnsignedLongLong(p);
            if u == u64::MAX && !pyo3::ffi::PyErr_Occurred().is_null() {
                pyo3::ffi::PyErr_Clear();
                None
            } else {
                Some(i128::from(u))
            }
        } else if overflow < 0 {
            None
        } else if v == -1 && !pyo3::ffi::PyErr_Occurred().is_null() {
            return Err(PyErr::fetch(py));
        } else {
            Some(i128::from(v))
        };
        match v {
            Some(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(value_error(py, format, code, format!("{name} must be an int in {min}..={max}, got {}", int_text(obj)))),
        }
    }
}

/// The decimal text of an int for messages, or its size when it is too
/// long for `str()`.
#[cold]
pub fn int_text(obj: &Bound<'_, PyAny>) -> String {
    unsafe {
        let p = obj.as_ptr();
        let r = (*std::ptr::addr_of_mut!(pyo3::ffi::PyLong_Type)).tp_repr.map(|f| f(p)).unwrap_or(std::ptr::null_mut());
        if r.is_null() {
            pyo3::ffi::PyErr_Clear();
            let bits = pyo3::ffi::_PyLong_NumBits(p);
            pyo3::ffi::PyErr_Clear();
            return format!("an int of {bits} bits");
        }
        Bound::from_owned_ptr(obj.py(), r).to_string()
    }
}

/// An optional int argument (`None` -> `None`).
pub fn opt_int_arg(
    py: Python<'_>,
    format: Format,
    code: &'static str,
    name: &str,
    obj: Option<&Bound<'_, PyAny>>,
    min: i128,
    max: i128,
) -> PyResult<Option<i128>> {
    match obj {
        Some(o) if !o.is_none() => int_arg(py, format, code, name, o, min, max).map(Some),
        _ => Ok(None),
    }
}

/// A `bool` argument: `True`/`False` only (as pyo3's own), typed.
pub fn bool_arg(py: Python<'_>, code: &'static str, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    unsafe {
        let p = obj.as_ptr();
        if p == pyo3::ffi::Py_True() {
            Ok(true)
        } else if p == pyo3::ffi::Py_False() {
            Ok(false)
        } else {
            Err(type_error(py, code, format!("{name} must be a bool, not {}", crate::pyjson::type_name(obj))))
        }
    }
}

/// A `str` argument as UTF-8: wrong type -> `PolywireTypeError`, a lone
/// surrogate -> the format's error (never `UnicodeEncodeError`). Reads a
/// subclass's text without calling any of its methods.
pub fn str_arg<'a>(py: Python<'_>, format: Format, code: &'static str, name: &str, obj: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    unsafe {
        if pyo3::ffi::PyUnicode_Check(obj.as_ptr()) == 0 {
            return Err(type_error(py, code, format!("{name} must be a str, not {}", crate::pyjson::type_name(obj))));
        }
        match crate::pyjson::pystr_utf8(obj.as_ptr()) {
            Some(s) => Ok(s),
            None => Err(value_error(py, format, code, format!("{name} holds an unpaired surrogate (expected valid Unicode text)"))),
        }
    }
}

#[allow(dead_code)]
pub fn opt_str_arg(
    py: Python<'_>,
    format: Format,
    code: &'static str,
    name: &str,
    obj: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<String>> {
    match obj {
        Some(o) if !o.is_none() => str_arg(py, format, code, name, o).map(|s| Some(s.to_owned())),
        _ => Ok(None),
    }
}

/// An optional `bool` argument: `None` (or left out) -> `default`.
pub fn opt_bool_arg(py: Python<'_>, code: &'static str, name: &str, obj: Option<&Bound<'_, PyAny>>, default: bool) -> PyResult<bool> {
    match obj {
        Some(o) if !o.is_none() => bool_arg(py, code, name, o),
        _ => Ok(default),
    }
}
