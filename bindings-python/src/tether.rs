//! `_polywire.tether`: Tether values and frames. The public wrapper is
//! `polywire/tether.py`.
//!
//! Python values map to Tether as: `bool` -> true/false, `int` -> SmallInteger,
//! `None` -> nil, `str` -> String, `Symbol` -> Symbol, `bytes`/`bytearray`/
//! `memoryview` -> ByteArray, `list`/`tuple` -> Array, `uuid.UUID` -> UUID,
//! `Proxy` -> proxy; decoding gives `bytes` for ByteArray and `list` for Array.

use crate::buffer::with_bytes_in;

/// The code of a parameter of a type Tether cannot take (the one Node gives).
const WRONG_TYPE: &str = "TETHER_UNSUPPORTED_TYPE";

fn with_bytes<R>(name: &str, obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    with_bytes_in(WRONG_TYPE, name, obj, f)
}

/// `latin1` / `words`: `True` or `False` (None: the default); anything else
/// is a `PolywireTypeError` `TETHER_INVALID_OPTION`.
fn flag_arg(py: Python<'_>, name: &str, obj: Option<&Bound<'_, PyAny>>, default: bool) -> PyResult<bool> {
    crate::errors::opt_bool_arg(py, "TETHER_INVALID_OPTION", name, obj, default)
}
use crate::errors::{to_pyerr, type_error, IntoPyResult};
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
    /// The Symbol's name, e.g. `printString`.
    #[pyo3(get)]
    name: String,
}

#[pymethods]
impl Symbol {
    #[new]
    fn new(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Symbol { name: text_arg(py, "a Symbol's name", name)? })
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
    /// The remote object's exposure hash (0 to `MAX_EXPOSURE_HASH`).
    #[pyo3(get)]
    exposure_hash: u32,
}

#[pymethods]
impl Proxy {
    #[new]
    fn new(py: Python<'_>, exposure_hash: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Proxy { exposure_hash: exposure_hash_arg(py, "exposure_hash (a proxy's exposure hash)", exposure_hash)? })
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
    // A bool is no exposure hash (as in Node; `int` arguments take no bools).
    if v.is_instance_of::<PyBool>() {
        return Err(type_error(py, "TETHER_UNSUPPORTED_TYPE", format!("{what} must be an int, not bool")));
    }
    if let Ok(n) = v.extract::<i128>() {
        if (0..=tether::MAX_EXPOSURE_HASH as i128).contains(&n) {
            return Ok(n as u32);
        }
    } else if !v.is_instance_of::<PyInt>() {
        return Err(type_error(py, "TETHER_UNSUPPORTED_TYPE", format!("{what} must be an int, not {}", crate::pyjson::type_name(v))));
    }
    Err(to_pyerr(
        py,
        tether_error(
            "TETHER_EXPOSURE_HASH_RANGE",
            format!(
                "{what}: {} is out of range, an exposure hash is 0..={} (0x{:08x})",
                v.repr().map(|r| r.to_string()).unwrap_or_default(),
                tether::MAX_EXPOSURE_HASH,
                tether::MAX_EXPOSURE_HASH
            ),
        ),
    ))
}

fn max_depth_arg(py: Python<'_>, v: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    match v {
        None => Ok(tether::DEFAULT_MAX_DEPTH),
        Some(v) => depth_arg(py, v),
    }
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
                let arr: [u8; 16] =
                    b.try_into().map_err(|_| to_pyerr(py, tether_error("TETHER_UNSUPPORTED_TYPE", "a UUID must have 16 bytes".into())))?;
                Ok(Some(Uuid(arr)))
            } else if let Ok(s) = v.cast::<PyString>() {
                let s = &str_text(py, "a UUID string", s)?;
                Uuid::parse(s)
                    .map(Some)
                    .ok_or_else(|| to_pyerr(py, tether_error("TETHER_UNSUPPORTED_TYPE", format!("{s:?} is not a UUID"))))
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

#[cold]
fn unsupported(obj: &Bound<'_, PyAny>) -> Error {
    tether_error(
        "TETHER_UNSUPPORTED_TYPE",
        format!(
            "cannot encode {} as Tether: use int, bool, None, str, Symbol, bytes, list or tuple, uuid.UUID or Proxy",
            crate::pyjson::type_name(obj)
        ),
    )
}

/// A str (or subclass) as UTF-8, read at the C level (no `__str__` or other
/// dunder runs); a lone surrogate is `TETHER_UNENCODABLE_CHARACTER`, not a
/// `UnicodeEncodeError`.
fn str_text(py: Python<'_>, what: &str, s: &Bound<'_, PyString>) -> PyResult<String> {
    match s.to_str() {
        Ok(t) => Ok(t.to_owned()),
        Err(_) => Err(to_pyerr(
            py,
            tether_error(
                "TETHER_UNENCODABLE_CHARACTER",
                format!("{what} contains a lone surrogate (U+D800..U+DFFF), which has no UTF-8 or Latin-1 form"),
            ),
        )),
    }
}

/// A text parameter: a str (or subclass), read without running Python code.
fn text_arg(py: Python<'_>, what: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    match v.cast::<PyString>() {
        Ok(s) => str_text(py, what, s),
        Err(_) => Err(type_error(py, "TETHER_UNSUPPORTED_TYPE", format!("{what} must be a str, not {}", crate::pyjson::type_name(v)))),
    }
}

/// `max_depth`: an int 0..=2**64-1 (a subclass's value is read at the C
/// level; `__index__` is not called). Anything else is
/// `TETHER_INVALID_OPTION`, never an `OverflowError`.
fn depth_arg(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<usize> {
    if v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
        if let Ok(n) = v.extract::<u64>() {
            return Ok(usize::try_from(n).unwrap_or(usize::MAX));
        }
        return Err(to_pyerr(py, tether_error("TETHER_INVALID_OPTION", format!("max_depth must be 0..=2**64-1, got {}", int_text(v)))));
    }
    Err(type_error(py, "TETHER_INVALID_OPTION", format!("max_depth must be an int, not {}", crate::pyjson::type_name(v))))
}

/// An int's decimal digits via `int.__repr__`, so a subclass's `__str__` or
/// `__repr__` never runs.
fn int_text(v: &Bound<'_, PyAny>) -> String {
    let py = v.py();
    py.get_type::<PyInt>()
        .getattr("__repr__")
        .and_then(|r| r.call1((v,)))
        .and_then(|r| r.extract::<String>())
        .unwrap_or_else(|_| "an out-of-range int".into())
}

/// A scalar (anything but a list or tuple) -> Tether value.
fn scalar_to_value(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return Ok(Value::String(str_text(py, "a str", s)?));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.is_truthy()?));
    }
    if obj.is_instance_of::<PyInt>() {
        // For int and its subclasses extract reads the digits at the C level
        // (PyNumber_Index returns an int as is: no `__index__`).
        return match obj.extract::<i128>() {
            Ok(n) => Value::integer(n).py_err(py),
            Err(_) => Err(to_pyerr(py, tether::integer_out_of_range(int_text(obj)))),
        };
    }
    if obj.is_none() {
        return Ok(Value::Nil);
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
        return with_bytes("a value", obj, |b| Ok(Value::ByteArray(b.to_vec())));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(str_text(py, "a str", s)?));
    }
    // Last: isinstance against uuid.UUID may run Python code (a `__class__`
    // property); everything walked is held by strong references.
    if obj.is_instance(uuid_class(py)?)? {
        return Ok(Value::Uuid(uuid_arg(py, Some(obj))?.unwrap_or(Uuid([0; 16]))));
    }
    Err(to_pyerr(py, unsupported(obj)))
}

/// A list or tuple being walked: `items` is a snapshot taken when the walk
/// reached it (a list's contents are copied by `PyList_GetSlice`, at the C
/// level; a tuple cannot change), so Python code that runs later in the
/// walk (a UUID subclass's `bytes`, a `__class__` property, a buffer's
/// `__buffer__`) cannot change what is walked or free what is held.
struct Walk<'py> {
    origin: Bound<'py, PyAny>,
    items: Bound<'py, PyAny>,
    next: usize,
    len: usize,
    values: Vec<Value>,
}

fn snapshot<'py>(obj: &Bound<'py, PyAny>) -> Option<(Bound<'py, PyAny>, usize)> {
    if let Ok(l) = obj.cast::<PyList>() {
        let copy = l.get_slice(0, l.len());
        let n = copy.len();
        return Some((copy.into_any(), n));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return Some((t.clone().into_any(), t.len()));
    }
    None
}

fn item<'py>(items: &Bound<'py, PyAny>, i: usize) -> PyResult<Bound<'py, PyAny>> {
    match items.cast::<PyList>() {
        Ok(l) => l.get_item(i),
        Err(_) => items.cast::<PyTuple>()?.get_item(i),
    }
}

/// Python object -> Tether value, walking lists and tuples with an explicit
/// stack (never the native stack). `depth` is the object's own depth. A
/// list inside itself is `TETHER_CYCLE` (looked for when the depth limit is
/// reached, where every cycle ends up).
fn to_value(py: Python<'_>, obj: &Bound<'_, PyAny>, depth: usize, max_depth: usize) -> PyResult<Value> {
    let mut stack: Vec<Walk<'_>> = Vec::new();
    let mut cur = obj.clone();
    loop {
        let mut v = match snapshot(&cur) {
            Some((items, len)) => {
                if depth + stack.len() >= max_depth {
                    let mut seen = std::collections::HashSet::with_capacity(stack.len() + 1);
                    let cyclic = !stack.iter().all(|w| seen.insert(w.origin.as_ptr())) || seen.contains(&cur.as_ptr());
                    return Err(to_pyerr(
                        py,
                        if cyclic {
                            tether_error("TETHER_CYCLE", "a list contains itself: Tether has no references".into())
                        } else {
                            tether_error(
                                "TETHER_TOO_DEEP",
                                format!("lists nested deeper than {max_depth} levels (raise max_depth if this is intended)"),
                            )
                        },
                    ));
                }
                if len > 0 {
                    stack.push(Walk { origin: cur, items, next: 0, len, values: Vec::with_capacity(len.min(1 << 12)) });
                    let top = stack.len() - 1;
                    cur = item(&stack[top].items, 0)?;
                    stack[top].next = 1;
                    continue;
                }
                Value::Array(Vec::new())
            }
            None => scalar_to_value(py, &cur)?,
        };
        // `v` is complete: add it to the open lists, closing those it completes.
        loop {
            let Some(top) = stack.last_mut() else { return Ok(v) };
            top.values.push(v);
            if top.next < top.len {
                cur = item(&top.items, top.next)?;
                top.next += 1;
                break;
            }
            match stack.pop() {
                Some(done) => v = Value::Array(done.values),
                None => return Err(to_pyerr(py, tether_error("TETHER_INTERNAL", "walk stack emptied early".into()))),
            }
        }
    }
}

/// A Tether value that is not an Array -> Python object.
fn scalar_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::SmallInteger(n) => n.into_pyobject(py)?.into_any(),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Nil => py.None().into_bound(py),
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Symbol(s) => Bound::new(py, Symbol { name: s.clone() })?.into_any(),
        Value::ByteArray(b) => PyBytes::new(py, b).into_any(),
        Value::Array(_) => PyList::empty(py).into_any(),
        Value::Uuid(u) => uuid_to_py(py, u)?,
        Value::Proxy(h) => Bound::new(py, Proxy { exposure_hash: *h })?.into_any(),
    })
}

/// Tether value -> Python object, building lists with an explicit stack and
/// taking the value apart as it goes (so nothing recurses, building or
/// dropping).
fn from_value(py: Python<'_>, v: Value) -> PyResult<Bound<'_, PyAny>> {
    let items = match v.into_array() {
        Ok(items) => items,
        Err(v) => return scalar_to_py(py, &v),
    };
    let root = PyList::empty(py);
    let mut stack = vec![(root.clone(), items.into_iter())];
    while let Some((list, it)) = stack.last_mut() {
        let Some(next) = it.next() else {
            stack.pop();
            continue;
        };
        match next.into_array() {
            Ok(inner) => {
                let l = PyList::empty(py);
                list.append(&l)?;
                stack.push((l, inner.into_iter()));
            }
            Err(scalar) => list.append(scalar_to_py(py, &scalar)?)?,
        }
    }
    Ok(root.into_any())
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
    match to_value(py, arguments, 0, max_depth)?.into_array() {
        Ok(items) => Ok(items),
        Err(other) => Ok(vec![other]),
    }
}

// The text_signatures below spell out max_depth=256, which pyo3 would show as `...`;
// tests-py/test_stubs.py checks it equals DEFAULT_MAX_DEPTH.
/// Tether bytes of a value: int 0..0x1FFFFFFF, bool, None, str, `Symbol`, bytes,
/// list/tuple, `uuid.UUID`, `Proxy`. Strings are UTF-8 unless `latin1` (the JS bridge's
/// one byte per character); Arrays nest at most `max_depth` levels. Raises `TetherError`.
#[pyfunction]
#[pyo3(signature = (value, latin1=None, max_depth=None), text_signature = "(value, latin1=False, max_depth=256)")]
fn encode<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let max_depth = max_depth_arg(py, max_depth)?;
    let v = to_value(py, value, 0, max_depth)?;
    Ok(PyBytes::new(py, &tether::encode_with(&v, &options(flag_arg(py, "latin1", latin1, false)?, max_depth)).py_err(py)?))
}

/// The value of Tether bytes (the inverse of `encode`; bytes left after the value are
/// an error). Raises `TetherError` with the byte offset.
#[pyfunction]
#[pyo3(signature = (data, latin1=None, max_depth=None), text_signature = "(data, latin1=False, max_depth=256)")]
fn decode<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let max_depth = max_depth_arg(py, max_depth)?;
    let v = with_bytes("data", data, |b| tether::decode_with(b, &options(flag_arg(py, "latin1", latin1, false)?, max_depth)).py_err(py))?;
    from_value(py, v)
}

/// `(uuid, receiver, selector, arguments)` -> bytes; a random UUID when None.
#[pyfunction]
#[pyo3(signature = (receiver, selector, arguments, uuid=None, latin1=None, max_depth=None), text_signature = "(receiver, selector, arguments, uuid=None, latin1=False, max_depth=256)")]
fn encode_message_send<'py>(
    py: Python<'py>,
    receiver: &Bound<'py, PyAny>,
    selector: &Bound<'py, PyAny>,
    arguments: &Bound<'py, PyAny>,
    uuid: Option<&Bound<'py, PyAny>>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let max_depth = max_depth_arg(py, max_depth)?;
    let receiver = match receiver.cast::<Proxy>() {
        Ok(p) => p.get().exposure_hash,
        Err(_) => exposure_hash_arg(py, "receiver (an exposure hash or a Proxy)", receiver)?,
    };
    let selector = match selector.cast::<Symbol>() {
        Ok(s) => s.get().name.clone(),
        Err(_) => text_arg(py, "the selector (a str or Symbol)", selector)?,
    };
    let send = tether::MessageSend {
        uuid: uuid_arg(py, uuid)?.unwrap_or_else(Uuid::new_v4),
        receiver,
        selector,
        arguments: arguments_arg(py, arguments, max_depth)?,
    };
    Ok(PyBytes::new(py, &tether::encode_message_send_with(&send, &options(flag_arg(py, "latin1", latin1, false)?, max_depth)).py_err(py)?))
}

/// bytes -> `(uuid, receiver, selector, arguments)`.
#[pyfunction]
#[pyo3(signature = (data, latin1=None, max_depth=None), text_signature = "(data, latin1=False, max_depth=256)")]
fn decode_message_send<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let max_depth = max_depth_arg(py, max_depth)?;
    let m = with_bytes("data", data, |b| {
        tether::decode_message_send_with(b, &options(flag_arg(py, "latin1", latin1, false)?, max_depth)).py_err(py)
    })?;
    let uuid = uuid_to_py(py, &m.uuid)?;
    let selector = PyString::new(py, &m.selector).into_any();
    let args = from_value(py, Value::Array(m.arguments))?;
    PyTuple::new(py, [uuid, m.receiver.into_pyobject(py)?.into_any(), selector, args])
}

/// An answer frame: the answer tag, then with `uuid` the UUID (the wire form),
/// without it none (the MCP tool's form), then the value.
#[pyfunction]
#[pyo3(signature = (value, uuid=None, latin1=None, max_depth=None), text_signature = "(value, uuid=None, latin1=False, max_depth=256)")]
fn encode_answer<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    uuid: Option<&Bound<'py, PyAny>>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let max_depth = max_depth_arg(py, max_depth)?;
    let v = to_value(py, value, 0, max_depth)?;
    let u = uuid_arg(py, uuid)?;
    Ok(PyBytes::new(py, &tether::encode_answer_with(&v, u, &options(flag_arg(py, "latin1", latin1, false)?, max_depth)).py_err(py)?))
}

/// bytes -> `(uuid or None, result)`.
#[pyfunction]
#[pyo3(signature = (data, latin1=None, max_depth=None), text_signature = "(data, latin1=False, max_depth=256)")]
fn decode_answer<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let max_depth = max_depth_arg(py, max_depth)?;
    let a = with_bytes("data", data, |b| {
        tether::decode_answer_with(b, &options(flag_arg(py, "latin1", latin1, false)?, max_depth)).py_err(py)
    })?;
    let uuid = match &a.uuid {
        Some(u) => uuid_to_py(py, u)?,
        None => py.None().into_bound(py),
    };
    PyTuple::new(py, [uuid, from_value(py, a.result)?])
}

/// The handshake word for an exposure hash (0 to `MAX_EXPOSURE_HASH`).
#[pyfunction]
fn encode_handshake<'py>(py: Python<'py>, exposure_hash: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let h = exposure_hash_arg(py, "exposure_hash (the handshake's)", exposure_hash)?;
    Ok(PyBytes::new(py, &tether::encode_handshake(h).py_err(py)?))
}

/// The exposure hash of a handshake word (4 bytes).
#[pyfunction]
fn decode_handshake(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u32> {
    with_bytes("data", data, |b| tether::decode_handshake(b).py_err(py))
}

/// Lowercase hex of bytes, as the MCP `send` tool carries them.
#[pyfunction]
fn to_hex(data: &Bound<'_, PyAny>) -> PyResult<String> {
    with_bytes("data", data, |b| Ok(tether::to_hex(b)))
}

/// Bytes of hex text under the `send` tool's checklist: hex digits only (either
/// case); with `words` (the default) a whole number of 32-bit words, else any whole
/// number of bytes. Raises `TetherError` (`TETHER_HEX_*`) naming the offending word.
#[pyfunction]
#[pyo3(signature = (hex, words=None), text_signature = "(hex, words=True)")]
fn from_hex<'py>(py: Python<'py>, hex: &Bound<'py, PyAny>, words: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyBytes>> {
    let hex = text_arg(py, "hex", hex)?;
    let words = flag_arg(py, "words", words, true)?;
    let b = if words { tether::from_hex(&hex) } else { tether::from_hex_bytes(&hex) }.py_err(py)?;
    Ok(PyBytes::new(py, &b))
}

/// `(receiver, selector, arguments)` -> the `send` tool's argument dict.
#[pyfunction]
#[pyo3(signature = (receiver, selector, arguments, latin1=None, max_depth=None), text_signature = "(receiver, selector, arguments, latin1=False, max_depth=256)")]
fn tool_arguments<'py>(
    py: Python<'py>,
    receiver: &Bound<'py, PyAny>,
    selector: &Bound<'py, PyAny>,
    arguments: &Bound<'py, PyAny>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let max_depth = max_depth_arg(py, max_depth)?;
    let selector = match selector.cast::<Symbol>() {
        Ok(s) => s.get().name.clone(),
        Err(_) => text_arg(py, "the selector (a str or Symbol)", selector)?,
    };
    let r = to_value(py, receiver, 0, max_depth)?;
    let args = arguments_arg(py, arguments, max_depth)?;
    let t = tether::tool_arguments(&r, &selector, &args, &options(flag_arg(py, "latin1", latin1, false)?, max_depth)).py_err(py)?;
    let d = PyDict::new(py);
    d.set_item("receiver", t.receiver)?;
    d.set_item("selector", t.selector)?;
    d.set_item("arguments", t.arguments)?;
    Ok(d)
}

/// The hex result of the `send` tool -> its value (answer tag optional).
#[pyfunction]
#[pyo3(signature = (hex, latin1=None, max_depth=None), text_signature = "(hex, latin1=False, max_depth=256)")]
fn decode_result_hex<'py>(
    py: Python<'py>,
    hex: &Bound<'py, PyAny>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let max_depth = max_depth_arg(py, max_depth)?;
    let hex = text_arg(py, "hex", hex)?;
    let v = tether::decode_result_hex(&hex, &options(flag_arg(py, "latin1", latin1, false)?, max_depth)).py_err(py)?;
    from_value(py, v)
}

/// The `send` tool's output, `{"result": "<hex>"}` as a dict or as JSON text
/// (str or bytes) -> the result value.
#[pyfunction]
#[pyo3(signature = (output, latin1=None, max_depth=None), text_signature = "(output, latin1=False, max_depth=256)")]
fn read_tool_result<'py>(
    py: Python<'py>,
    output: &Bound<'py, PyAny>,
    latin1: Option<&Bound<'py, PyAny>>,
    max_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let opts = options(flag_arg(py, "latin1", latin1, false)?, max_depth_arg(py, max_depth)?);
    let v = if let Ok(d) = output.cast::<PyDict>() {
        // A dict subclass's __getitem__ may run; the result is held strongly.
        match d.get_item("result")? {
            Some(h) if h.is_instance_of::<PyString>() => tether::decode_result_hex(&text_arg(py, "the result", &h)?, &opts),
            _ => Err(tether_error(
                "TETHER_BAD_TOOL_RESULT",
                "expected {\"result\": \"<hex>\"} with the Tether-encoded result as a hex string".into(),
            )),
        }
    } else if let Ok(s) = output.cast::<PyString>() {
        tether::read_tool_result(str_text(py, "the output", s)?.as_bytes(), &opts)
    } else {
        with_bytes("output", output, |b| Ok(tether::read_tool_result(b, &opts)))?
    }
    .py_err(py)?;
    from_value(py, v)
}
