//! `_polywire.tether`: Tether values and frames. The public wrapper is
//! `polywire/tether.py`.
//!
//! Python values map to Tether as: `bool` -> true/false, `int` -> SmallInteger,
//! `None` -> nil, `str` -> String, `Symbol` -> Symbol, `bytes`/`bytearray`/
//! `memoryview` -> ByteArray, `list`/`tuple` -> Array, `uuid.UUID` -> UUID,
//! `Proxy` -> proxy; decoding gives `bytes` for ByteArray and `list` for Array.

use crate::buffer::with_bytes;
use crate::errors::{to_pyerr, IntoPyResult};
use polywire::tether::{self, Options, Text, Uuid, Value};
use polywire::{Error, Format};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyInt, PyList, PyMemoryView, PyString, PyTuple, PyType};

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "tether", |m| {
        m.add_class::<Symbol>()?;
        m.add_class::<Proxy>()?;
        m.add_function(wrap_pyfunction!(encode, m)?)?;
        m.add_function(wrap_pyfunction!(decode, m)?)?;
        m.add_function(wrap_pyfunction!(encode_message_send, m)?)?;
        m.add_function(wrap_pyfunction!(decode_message_send, m)?)?;
        m.add_function(wrap_pyfunction!(encode_answer, m)?)?;
        m.add_function(wrap_pyfunction!(decode_answer, m)?)?;
        m.add_function(wrap_pyfunction!(encode_handshake, m)?)?;
        m.add_function(wrap_pyfunction!(decode_handshake, m)?)?;
        m.add_function(wrap_pyfunction!(to_hex, m)?)?;
        m.add_function(wrap_pyfunction!(from_hex, m)?)?;
        m.add_function(wrap_pyfunction!(tool_arguments, m)?)?;
        m.add_function(wrap_pyfunction!(decode_result_hex, m)?)?;
        m.add_function(wrap_pyfunction!(read_tool_result, m)?)?;
        m.add("MAX_SMALL_INTEGER", tether::MAX_SMALL_INTEGER)?;
        m.add("MAX_EXPOSURE_HASH", tether::MAX_EXPOSURE_HASH)?;
        m.add("DEFAULT_MAX_DEPTH", tether::DEFAULT_MAX_DEPTH)?;
        Ok(())
    })
}

/// A Smalltalk Symbol (a selector such as `#printString`); equal by name.
#[pyclass(module = "polywire.tether", name = "Symbol", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct Symbol {
    #[pyo3(get)]
    name: String,
}

#[pymethods]
impl Symbol {
    #[new]
    fn new(name: String) -> Self {
        Symbol { name }
    }

    fn __repr__(&self) -> String {
        format!("Symbol({})", py_repr_str(&self.name))
    }

    fn __str__(&self) -> &str {
        &self.name
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, (String,))> {
        Ok((slf.get_type(), (slf.get().name.clone(),)))
    }
}

/// A reference to a remote object by its exposure hash; equal by hash.
#[pyclass(module = "polywire.tether", name = "Proxy", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct Proxy {
    #[pyo3(get)]
    exposure_hash: u32,
}

#[pymethods]
impl Proxy {
    #[new]
    fn new(py: Python<'_>, exposure_hash: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Proxy { exposure_hash: exposure_hash_arg(py, "a proxy's", exposure_hash)? })
    }

    fn __repr__(&self) -> String {
        format!("Proxy({})", self.exposure_hash)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, (u32,))> {
        Ok((slf.get_type(), (slf.get().exposure_hash,)))
    }
}

/// Python's repr of a str, for messages.
fn py_repr_str(s: &str) -> String {
    Python::attach(|py| PyString::new(py, s).repr().map(|r| r.to_string()).unwrap_or_else(|_| format!("{s:?}")))
}

#[cold]
fn tether_error(code: &'static str, msg: String) -> Error {
    Error::new(Format::Tether, code, msg)
}

fn exposure_hash_arg(py: Python<'_>, what: &str, v: &Bound<'_, PyAny>) -> PyResult<u32> {
    if let Ok(n) = v.extract::<i128>() {
        if (0..=tether::MAX_EXPOSURE_HASH as i128).contains(&n) {
            return Ok(n as u32);
        }
    } else if !v.is_instance_of::<PyInt>() {
        return Err(to_pyerr(
            py,
            tether_error("TETHER_UNSUPPORTED_TYPE", format!("{what} exposure hash must be an int, not {}", crate::pyjson::type_name(v))),
        ));
    }
    Err(to_pyerr(
        py,
        tether_error(
            "TETHER_EXPOSURE_HASH_RANGE",
            format!(
                "{what} exposure hash {} is out of range: it must be 0..={} (0x{:08x})",
                v.repr().map(|r| r.to_string()).unwrap_or_default(),
                tether::MAX_EXPOSURE_HASH,
                tether::MAX_EXPOSURE_HASH
            ),
        ),
    ))
}

fn options(latin1: bool, max_depth: usize) -> Options {
    Options { text: if latin1 { Text::Latin1 } else { Text::Utf8 }, max_depth }
}

static UUID_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn uuid_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UUID_CLASS.import(py, "uuid", "UUID")
}

fn uuid_to_py<'py>(py: Python<'py>, u: &Uuid) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("bytes", PyBytes::new(py, u.as_bytes()))?;
    uuid_class(py)?.call((), Some(&kwargs))
}

/// A `uuid.UUID` (or None for "make one").
fn uuid_arg(py: Python<'_>, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Uuid>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => {
            if v.is_instance(uuid_class(py)?)? {
                let b = v.getattr("bytes")?;
                let b: &[u8] = b.cast::<PyBytes>()?.as_bytes();
                let arr: [u8; 16] = b.try_into().map_err(|_| {
                    to_pyerr(py, tether_error("TETHER_UNSUPPORTED_TYPE", "a UUID must have 16 bytes".into()))
                })?;
                Ok(Some(Uuid(arr)))
            } else if let Ok(s) = v.cast::<PyString>() {
                let s = s.to_str()?;
                Uuid::parse(s).map(Some).ok_or_else(|| {
                    to_pyerr(py, tether_error("TETHER_UNSUPPORTED_TYPE", format!("{s:?} is not a UUID")))
                })
            } else {
                Err(to_pyerr(
                    py,
                    tether_error(
                        "TETHER_UNSUPPORTED_TYPE",
                        format!("uuid must be a uuid.UUID, a UUID string or None, not {}", crate::pyjson::type_name(v)),
                    ),
                ))
            }
        }
    }
}

/// Python object -> Tether value. `depth` counts enclosing sequences, so a
/// self-referential list ends in `TETHER_TOO_DEEP`, not a crash.
fn to_value(py: Python<'_>, obj: &Bound<'_, PyAny>, depth: usize, max_depth: usize) -> PyResult<Value> {
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.is_truthy()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return match obj.extract::<i128>() {
            Ok(n) => Value::integer(n).py_err(py),
            Err(_) => Err(to_pyerr(py, tether::integer_out_of_range(obj.str()?.to_str()?))),
        };
    }
    if obj.is_none() {
        return Ok(Value::Nil);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        if depth >= max_depth {
            return Err(to_pyerr(
                py,
                tether_error(
                    "TETHER_TOO_DEEP",
                    format!("lists nested deeper than {max_depth} levels (is the list circular?)"),
                ),
            ));
        }
        let mut items = Vec::with_capacity(obj.len().unwrap_or(0));
        for item in obj.try_iter()? {
            items.push(to_value(py, &item?, depth + 1, max_depth)?);
        }
        return Ok(Value::Array(items));
    }
    if let Ok(s) = obj.cast::<Symbol>() {
        return Ok(Value::Symbol(s.get().name.clone()));
    }
    if let Ok(p) = obj.cast::<Proxy>() {
        return Ok(Value::Proxy(p.get().exposure_hash));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::ByteArray(b.as_bytes().to_vec()));
    }
    if obj.is_instance_of::<PyByteArray>() || obj.is_instance_of::<PyMemoryView>() {
        return with_bytes(obj, |b| Ok(Value::ByteArray(b.to_vec())));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if obj.is_instance(uuid_class(py)?)? {
        return Ok(Value::Uuid(uuid_arg(py, Some(obj))?.unwrap_or(Uuid([0; 16]))));
    }
    Err(to_pyerr(
        py,
        tether_error(
            "TETHER_UNSUPPORTED_TYPE",
            format!(
                "cannot encode {} as Tether: use int, bool, None, str, Symbol, bytes, list or tuple, uuid.UUID or Proxy",
                crate::pyjson::type_name(obj)
            ),
        ),
    ))
}

/// Tether value -> Python object.
fn from_value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::SmallInteger(n) => n.into_pyobject(py)?.into_any(),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Nil => py.None().into_bound(py),
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Symbol(s) => Bound::new(py, Symbol { name: s.clone() })?.into_any(),
        Value::ByteArray(b) => PyBytes::new(py, b).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(from_value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Uuid(u) => uuid_to_py(py, u)?,
        Value::Proxy(h) => Bound::new(py, Proxy { exposure_hash: *h })?.into_any(),
    })
}

fn arguments_arg(py: Python<'_>, arguments: &Bound<'_, PyAny>, max_depth: usize) -> PyResult<Vec<Value>> {
    if !(arguments.is_instance_of::<PyList>() || arguments.is_instance_of::<PyTuple>()) {
        return Err(to_pyerr(
            py,
            tether_error(
                "TETHER_UNSUPPORTED_TYPE",
                format!("arguments must be a list or tuple, not {}", crate::pyjson::type_name(arguments)),
            ),
        ));
    }
    match to_value(py, arguments, 0, max_depth)? {
        Value::Array(items) => Ok(items),
        other => Ok(vec![other]),
    }
}

// The text_signatures below spell out max_depth=256, which pyo3 would show as `...`;
// tests-py/test_stubs.py checks it equals DEFAULT_MAX_DEPTH.
#[pyfunction]
#[pyo3(signature = (value, latin1=false, max_depth=tether::DEFAULT_MAX_DEPTH), text_signature = "(value, latin1=False, max_depth=256)")]
fn encode<'py>(py: Python<'py>, value: &Bound<'py, PyAny>, latin1: bool, max_depth: usize) -> PyResult<Bound<'py, PyBytes>> {
    let v = to_value(py, value, 0, max_depth)?;
    Ok(PyBytes::new(py, &tether::encode_with(&v, &options(latin1, max_depth)).py_err(py)?))
}

#[pyfunction]
#[pyo3(signature = (data, latin1=false, max_depth=tether::DEFAULT_MAX_DEPTH), text_signature = "(data, latin1=False, max_depth=256)")]
fn decode<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, latin1: bool, max_depth: usize) -> PyResult<Bound<'py, PyAny>> {
    let v = with_bytes(data, |b| tether::decode_with(b, &options(latin1, max_depth)).py_err(py))?;
    from_value(py, &v)
}

/// `(uuid, receiver, selector, arguments)` -> bytes; a random UUID when None.
#[pyfunction]
#[pyo3(signature = (receiver, selector, arguments, uuid=None, latin1=false, max_depth=tether::DEFAULT_MAX_DEPTH), text_signature = "(receiver, selector, arguments, uuid=None, latin1=False, max_depth=256)")]
fn encode_message_send<'py>(
    py: Python<'py>,
    receiver: &Bound<'py, PyAny>,
    selector: &Bound<'py, PyAny>,
    arguments: &Bound<'py, PyAny>,
    uuid: Option<&Bound<'py, PyAny>>,
    latin1: bool,
    max_depth: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let receiver = match receiver.cast::<Proxy>() {
        Ok(p) => p.get().exposure_hash,
        Err(_) => exposure_hash_arg(py, "the receiver's", receiver)?,
    };
    let selector = match selector.cast::<Symbol>() {
        Ok(s) => s.get().name.clone(),
        Err(_) => selector.extract::<String>().map_err(|_| {
            to_pyerr(
                py,
                tether_error("TETHER_UNSUPPORTED_TYPE", format!("the selector must be a str or Symbol, not {}", crate::pyjson::type_name(selector))),
            )
        })?,
    };
    let send = tether::MessageSend {
        uuid: uuid_arg(py, uuid)?.unwrap_or_else(Uuid::new_v4),
        receiver,
        selector,
        arguments: arguments_arg(py, arguments, max_depth)?,
    };
    Ok(PyBytes::new(py, &tether::encode_message_send_with(&send, &options(latin1, max_depth)).py_err(py)?))
}

/// bytes -> `(uuid, receiver, selector, arguments)`.
#[pyfunction]
#[pyo3(signature = (data, latin1=false, max_depth=tether::DEFAULT_MAX_DEPTH), text_signature = "(data, latin1=False, max_depth=256)")]
fn decode_message_send<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, latin1: bool, max_depth: usize) -> PyResult<Bound<'py, PyTuple>> {
    let m = with_bytes(data, |b| tether::decode_message_send_with(b, &options(latin1, max_depth)).py_err(py))?;
    let args = PyList::empty(py);
    for a in &m.arguments {
        args.append(from_value(py, a)?)?;
    }
    PyTuple::new(py, [uuid_to_py(py, &m.uuid)?, m.receiver.into_pyobject(py)?.into_any(), PyString::new(py, &m.selector).into_any(), args.into_any()])
}

#[pyfunction]
#[pyo3(signature = (value, uuid=None, latin1=false, max_depth=tether::DEFAULT_MAX_DEPTH), text_signature = "(value, uuid=None, latin1=False, max_depth=256)")]
fn encode_answer<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    uuid: Option<&Bound<'py, PyAny>>,
    latin1: bool,
    max_depth: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let v = to_value(py, value, 0, max_depth)?;
    let u = uuid_arg(py, uuid)?;
    Ok(PyBytes::new(py, &tether::encode_answer_with(&v, u, &options(latin1, max_depth)).py_err(py)?))
}

/// bytes -> `(uuid or None, result)`.
#[pyfunction]
#[pyo3(signature = (data, latin1=false, max_depth=tether::DEFAULT_MAX_DEPTH), text_signature = "(data, latin1=False, max_depth=256)")]
fn decode_answer<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, latin1: bool, max_depth: usize) -> PyResult<Bound<'py, PyTuple>> {
    let a = with_bytes(data, |b| tether::decode_answer_with(b, &options(latin1, max_depth)).py_err(py))?;
    let uuid = match &a.uuid {
        Some(u) => uuid_to_py(py, u)?,
        None => py.None().into_bound(py),
    };
    PyTuple::new(py, [uuid, from_value(py, &a.result)?])
}

#[pyfunction]
fn encode_handshake<'py>(py: Python<'py>, exposure_hash: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let h = exposure_hash_arg(py, "the handshake's", exposure_hash)?;
    Ok(PyBytes::new(py, &tether::encode_handshake(h).py_err(py)?))
}

#[pyfunction]
fn decode_handshake(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u32> {
    with_bytes(data, |b| tether::decode_handshake(b).py_err(py))
}

#[pyfunction]
fn to_hex(data: &Bound<'_, PyAny>) -> PyResult<String> {
    with_bytes(data, |b| Ok(tether::to_hex(b)))
}

#[pyfunction]
#[pyo3(signature = (hex, words=true))]
fn from_hex<'py>(py: Python<'py>, hex: &str, words: bool) -> PyResult<Bound<'py, PyBytes>> {
    let b = if words { tether::from_hex(hex) } else { tether::from_hex_bytes(hex) }.py_err(py)?;
    Ok(PyBytes::new(py, &b))
}

/// `(receiver, selector, arguments)` -> the `send` tool's argument dict.
#[pyfunction]
#[pyo3(signature = (receiver, selector, arguments, latin1=false))]
fn tool_arguments<'py>(
    py: Python<'py>,
    receiver: &Bound<'py, PyAny>,
    selector: &str,
    arguments: &Bound<'py, PyAny>,
    latin1: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let max_depth = tether::DEFAULT_MAX_DEPTH;
    let r = to_value(py, receiver, 0, max_depth)?;
    let args = arguments_arg(py, arguments, max_depth)?;
    let t = tether::tool_arguments(&r, selector, &args, &options(latin1, max_depth)).py_err(py)?;
    let d = PyDict::new(py);
    d.set_item("receiver", t.receiver)?;
    d.set_item("selector", t.selector)?;
    d.set_item("arguments", t.arguments)?;
    Ok(d)
}

/// The hex result of the `send` tool -> its value (answer tag optional).
#[pyfunction]
#[pyo3(signature = (hex, latin1=false))]
fn decode_result_hex<'py>(py: Python<'py>, hex: &str, latin1: bool) -> PyResult<Bound<'py, PyAny>> {
    let v = tether::decode_result_hex(hex, &options(latin1, tether::DEFAULT_MAX_DEPTH)).py_err(py)?;
    from_value(py, &v)
}

/// The `send` tool's output, `{"result": "<hex>"}` as a dict or as JSON text
/// (str or bytes) -> the result value.
#[pyfunction]
#[pyo3(signature = (output, latin1=false))]
fn read_tool_result<'py>(py: Python<'py>, output: &Bound<'py, PyAny>, latin1: bool) -> PyResult<Bound<'py, PyAny>> {
    let opts = options(latin1, tether::DEFAULT_MAX_DEPTH);
    let v = if let Ok(d) = output.cast::<PyDict>() {
        match d.get_item("result")? {
            Some(h) if h.is_instance_of::<PyString>() => tether::decode_result_hex(h.cast::<PyString>()?.to_str()?, &opts),
            _ => Err(tether_error(
                "TETHER_BAD_TOOL_RESULT",
                "expected {\"result\": \"<hex>\"} with the Tether-encoded result as a hex string".into(),
            )),
        }
    } else if let Ok(s) = output.cast::<PyString>() {
        tether::read_tool_result(s.to_str()?.as_bytes(), &opts)
    } else {
        with_bytes(output, |b| Ok(tether::read_tool_result(b, &opts)))?
    }
    .py_err(py)?;
    from_value(py, &v)
}
