//! `_polywire.axon`: AXON v2 envelopes, agent ids, negotiation, builders and
//! the sans-IO session. The public wrapper is `polywire/axon.py`.
//!
//! Envelopes cross the boundary as dicts. Python values are converted to JSON
//! values directly (a float stays a float: `1.0` is written `1.0`, as the Rust
//! upstream writes it), and back (ints stay ints, floats floats).

use crate::buffer::with_bytes_in;

/// The code of a wrong-type argument (`PolywireTypeError`).
const ARG: &str = "invalid_envelope";

/// A `str` parameter (a lone surrogate is an `AxonError`).
fn text_arg(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<String> {
    crate::errors::str_arg(py, Format::Axon, ARG, name, obj).map(str::to_owned)
}

fn opt_text_arg(py: Python<'_>, name: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    crate::errors::opt_str_arg(py, Format::Axon, ARG, name, obj)
}

/// An int parameter in 0..2**64 (out of range: an `AxonError`).
fn opt_u64_arg(py: Python<'_>, name: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    crate::errors::opt_int_arg(py, Format::Axon, ARG, name, obj, 0, i128::from(u64::MAX)).map(|v| v.map(|v| v as u64))
}

fn flag_arg(py: Python<'_>, name: &str, obj: Option<&Bound<'_, PyAny>>, default: bool) -> PyResult<bool> {
    crate::errors::opt_bool_arg(py, ARG, name, obj, default)
}
use crate::errors::{to_pyerr, IntoPyResult};
use polywire::axon::axon1;
use polywire::axon::{self, DecodeOptions, Envelope, ErrorCode, Inbound, Kind, Pending, StreamType};
use polywire::{Error, Format};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "axon", |m| {
        m.add_class::<Session>()?;
        m.add_function(wrap_pyfunction!(decode, m)?)?;
        m.add_function(wrap_pyfunction!(encode, m)?)?;
        m.add_function(wrap_pyfunction!(validate, m)?)?;
        m.add_function(wrap_pyfunction!(envelope, m)?)?;
        m.add_function(wrap_pyfunction!(reply, m)?)?;
        m.add_function(wrap_pyfunction!(error_envelope, m)?)?;
        m.add_function(wrap_pyfunction!(agent_id, m)?)?;
        m.add_function(wrap_pyfunction!(agent_id_from_seed, m)?)?;
        m.add_function(wrap_pyfunction!(public_key_from_seed, m)?)?;
        m.add_function(wrap_pyfunction!(is_agent_id, m)?)?;
        m.add_function(wrap_pyfunction!(same_agent, m)?)?;
        m.add_function(wrap_pyfunction!(negotiate, m)?)?;
        m.add_function(wrap_pyfunction!(kind_rules, m)?)?;
        m.add_function(wrap_pyfunction!(payload_defaults, m)?)?;
        m.add("PROTOCOL_VERSION", axon::PROTOCOL_VERSION)?;
        m.add("MAX_MESSAGE_SIZE", axon::MAX_MESSAGE_SIZE)?;
        m.add("REPLAY_WINDOW_MS", axon::REPLAY_WINDOW_MS)?;
        m.add("REPLAY_CACHE_CAPACITY", axon::REPLAY_CACHE_CAPACITY)?;
        m.add("DEFAULT_DEADLINE_MS", axon::DEFAULT_DEADLINE_MS)?;
        Ok(())
    })?;
    crate::submodule(parent, "axon1", |m| {
        m.add_function(wrap_pyfunction!(axon1_decode, m)?)?;
        m.add_function(wrap_pyfunction!(axon1_encode, m)?)?;
        m.add_function(wrap_pyfunction!(axon1_request, m)?)?;
        m.add_function(wrap_pyfunction!(axon1_message, m)?)?;
        m.add_function(wrap_pyfunction!(axon1_response, m)?)?;
        m.add_function(wrap_pyfunction!(axon1_error, m)?)?;
        m.add("MAX_MESSAGE_SIZE", axon1::MAX_MESSAGE_SIZE)?;
        Ok(())
    })
}

#[cold]
fn invalid(msg: String) -> Error {
    Error::new(Format::Axon, ErrorCode::InvalidEnvelope.as_str(), msg)
}

// ---------------------------------------------------------------- values

/// Python -> JSON value. Dict keys must be str; ints must fit 64 bits;
/// floats must be finite.
///
/// Runs no Python code of the value (no `__iter__`, `__len__`, `__str__`,
/// `__index__`, `encode`...): subclasses are read as their base type; dict
/// entries are held while they are converted and a dict that changes size
/// is an error. A `str` with a lone surrogate is an `AxonError`.
pub(crate) fn to_json(py: Python<'_>, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if unsafe { pyo3::ffi::PyUnicode_Check(obj.as_ptr()) } != 0 {
        return text(py, obj).map(Value::String);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.is_truthy()?));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(to_pyerr(
            py,
            invalid(format!("the integer {} does not fit 64 bits; send it as a string", crate::errors::int_text(obj))),
        ));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if obj.is_instance_of::<PyFloat>() {
        let f: f64 = obj.extract()?;
        return Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| to_pyerr(py, invalid(format!("{f} is not a JSON number; send null or a string instead"))));
    }
    if depth >= axon::MAX_DEPTH {
        return Err(to_pyerr(py, invalid(format!("the value nests deeper than {} levels (is it circular?)", axon::MAX_DEPTH))));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m = Map::with_capacity(d.len());
        crate::pydict::for_each_entry(
            obj,
            |k, v| {
                if unsafe { pyo3::ffi::PyUnicode_Check(k.as_ptr()) } == 0 {
                    return Err(to_pyerr(py, invalid(format!("object keys must be str, found {}", crate::pyjson::type_name(&k)))));
                }
                m.insert(text(py, &k)?, to_json(py, &v, depth + 1)?);
                Ok(())
            },
            || {
                to_pyerr(
                    py,
                    invalid("dictionary changed size during iteration (expected the value to stay unchanged while it is converted)".into()),
                )
            },
        )?;
        return Ok(Value::Object(m));
    }
    // The list's (tuple's) own items, by index: not a subclass's `__iter__`.
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|item| to_json(py, &item, depth + 1)).collect::<PyResult<_>>().map(Value::Array);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|item| to_json(py, &item, depth + 1)).collect::<PyResult<_>>().map(Value::Array);
    }
    Err(to_pyerr(
        py,
        invalid(format!(
            "cannot send {} in an AXON message: use dict, list, tuple, str, int, float, bool or None",
            crate::pyjson::type_name(obj)
        )),
    ))
}

/// The text of a `str` (or subclass, without calling its methods); a lone
/// surrogate is an `AxonError`.
fn text(py: Python<'_>, s: &Bound<'_, PyAny>) -> PyResult<String> {
    match unsafe { crate::pyjson::pystr_utf8(s.as_ptr()) } {
        Some(t) => Ok(t.to_owned()),
        None => Err(to_pyerr(py, invalid("a string holds an unpaired surrogate (expected valid Unicode text)".into()))),
    }
}

/// JSON value -> Python.
pub(crate) fn from_json<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for x in items {
                list.append(from_json(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, from_json(py, x)?)?;
            }
            d.into_any()
        }
    })
}

fn envelope_dict<'py>(py: Python<'py>, env: &Envelope) -> PyResult<Bound<'py, PyAny>> {
    from_json(py, &env.to_value())
}

fn envelope_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Envelope> {
    let v = to_json(py, obj, 0)?;
    Envelope::from_value(&v, &DecodeOptions { fill_defaults: false, max_size: usize::MAX }).py_err(py)
}

fn payload_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Map<String, Value>> {
    match to_json(py, obj, 0)? {
        Value::Object(m) => Ok(m),
        other => Err(to_pyerr(py, invalid(format!("the payload must be a dict, not {}", json_type(&other))))),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "None",
        Value::Bool(_) => "bool",
        Value::Number(_) => "a number",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn kind_arg(py: Python<'_>, kind: &str) -> PyResult<Kind> {
    Kind::parse(kind).ok_or_else(|| {
        to_pyerr(
            py,
            Error::new(
                Format::Axon,
                ErrorCode::UnknownKind.as_str(),
                format!(
                    "unknown message kind {kind:?}; the kinds are {}",
                    Kind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
                ),
            ),
        )
    })
}

fn now(now_ms: Option<u64>) -> u64 {
    now_ms.unwrap_or_else(axon::now_ms)
}

fn id_arg(id: Option<String>) -> String {
    id.unwrap_or_else(axon::new_id)
}

// ---------------------------------------------------------------- functions

/// Decode and validate one message body -> envelope dict (`ref` None when
/// absent; payload defaults filled unless `fill_defaults=False`).
#[pyfunction]
#[pyo3(signature = (data, fill_defaults=None), text_signature = "(data, fill_defaults=True)")]
fn decode<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, fill_defaults: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let fill_defaults = flag_arg(py, "fill_defaults", fill_defaults, true)?;
    let opts = DecodeOptions { fill_defaults, ..DecodeOptions::default() };
    let env = if data.is_instance_of::<PyString>() {
        axon::decode_with(text(py, data)?.as_bytes(), &opts)
    } else {
        with_bytes_in(ARG, "data", data, |b| Ok(axon::decode_with(b, &opts)))?
    }
    .py_err(py)?;
    envelope_dict(py, &env)
}

/// Validate an envelope dict and encode it as upstream writes it.
#[pyfunction]
fn encode<'py>(py: Python<'py>, envelope: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let env = envelope_arg(py, envelope)?;
    Ok(PyBytes::new(py, &axon::encode(&env).py_err(py)?))
}

/// Validate an envelope dict -> its normalized form.
#[pyfunction]
#[pyo3(signature = (envelope, fill_defaults=None), text_signature = "(envelope, fill_defaults=True)")]
fn validate<'py>(py: Python<'py>, envelope: &Bound<'py, PyAny>, fill_defaults: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let fill_defaults = flag_arg(py, "fill_defaults", fill_defaults, true)?;
    let v = to_json(py, envelope, 0)?;
    let env = Envelope::from_value(&v, &DecodeOptions { fill_defaults, max_size: usize::MAX }).py_err(py)?;
    envelope_dict(py, &env)
}

/// A new message (v 1, fresh id and current time unless given).
#[pyfunction]
#[pyo3(signature = (from_, to, kind, payload, ref_=None, id=None, ts=None))]
#[allow(clippy::too_many_arguments)]
fn envelope<'py>(
    py: Python<'py>,
    from_: &Bound<'py, PyAny>,
    to: &Bound<'py, PyAny>,
    kind: &Bound<'py, PyAny>,
    payload: &Bound<'py, PyAny>,
    ref_: Option<&Bound<'py, PyAny>>,
    id: Option<&Bound<'py, PyAny>>,
    ts: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (from_, to, kind) = (text_arg(py, "from_", from_)?, text_arg(py, "to", to)?, text_arg(py, "kind", kind)?);
    let (from_, to, kind) = (&from_[..], &to[..], &kind[..]);
    let (ref_, id, ts) = (opt_text_arg(py, "ref_", ref_)?, opt_text_arg(py, "id", id)?, opt_u64_arg(py, "ts", ts)?);
    let kind = kind_arg(py, kind)?;
    let payload = payload_arg(py, payload)?;
    let mut env = Envelope::new_with(from_, to, kind, payload, id_arg(id), now(ts)).py_err(py)?;
    if ref_.is_some() {
        env.ref_id = ref_;
    }
    // Re-check: id and ref as given.
    let checked = Envelope::from_value(&env.to_value(), &DecodeOptions { fill_defaults: false, max_size: usize::MAX }).py_err(py)?;
    envelope_dict(py, &checked)
}

/// A reply to `request`: ref set, from/to swapped, fresh id and time.
#[pyfunction]
#[pyo3(signature = (request, kind, payload, id=None, ts=None))]
fn reply<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    kind: &Bound<'py, PyAny>,
    payload: &Bound<'py, PyAny>,
    id: Option<&Bound<'py, PyAny>>,
    ts: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let kind = text_arg(py, "kind", kind)?;
    let kind = &kind[..];
    let (id, ts) = (opt_text_arg(py, "id", id)?, opt_u64_arg(py, "ts", ts)?);
    let req = envelope_arg(py, request)?;
    let kind = kind_arg(py, kind)?;
    let env = axon::reply_with(&req, kind, payload_arg(py, payload)?, id_arg(id), now(ts)).py_err(py)?;
    envelope_dict(py, &env)
}

/// An `error` reply to `request`.
#[pyfunction]
#[pyo3(signature = (request, code, message, retryable=None, id=None, ts=None),
       text_signature = "(request, code, message, retryable=False, id=None, ts=None)")]
fn error_envelope<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    code: &Bound<'py, PyAny>,
    message: &Bound<'py, PyAny>,
    retryable: Option<&Bound<'py, PyAny>>,
    id: Option<&Bound<'py, PyAny>>,
    ts: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (code, message) = (text_arg(py, "code", code)?, text_arg(py, "message", message)?);
    let (code, message, retryable) = (&code[..], &message[..], flag_arg(py, "retryable", retryable, false)?);
    let (id, ts) = (opt_text_arg(py, "id", id)?, opt_u64_arg(py, "ts", ts)?);
    let req = envelope_arg(py, request)?;
    let code = ErrorCode::parse(code).ok_or_else(|| {
        to_pyerr(
            py,
            invalid(format!(
                "unknown error code {code:?}; the codes are {}",
                ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
            )),
        )
    })?;
    let env = axon::error_reply_with(&req, code, message, retryable, id_arg(id), now(ts));
    env.validate().py_err(py)?;
    envelope_dict(py, &env)
}

/// The agent id of an Ed25519 public key (32 bytes): `"ed25519."` followed by the
/// first 16 bytes of its SHA-256 in lowercase hex.
#[pyfunction]
fn agent_id(py: Python<'_>, public_key: &Bound<'_, PyAny>) -> PyResult<String> {
    with_bytes_in(ARG, "public_key", public_key, |b| axon::agent_id(b).py_err(py))
}

/// The agent id of the Ed25519 key pair whose 32-byte private seed is `seed`.
#[pyfunction]
fn agent_id_from_seed(py: Python<'_>, seed: &Bound<'_, PyAny>) -> PyResult<String> {
    with_bytes_in(ARG, "seed", seed, |b| axon::agent_id_from_seed(b).py_err(py))
}

/// The 32-byte Ed25519 public key of the key pair whose private seed is `seed`.
#[pyfunction]
fn public_key_from_seed<'py>(py: Python<'py>, seed: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let k = with_bytes_in(ARG, "seed", seed, |b| axon::public_key_from_seed(b).py_err(py))?;
    Ok(PyBytes::new(py, &k))
}

/// Whether `s` is an agent id: `"ed25519."` and 32 hex digits (either case).
#[pyfunction]
fn is_agent_id(py: Python<'_>, s: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(axon::is_agent_id(&text_arg(py, "s", s)?))
}

/// Whether two agent ids name the same agent, compared as the protocol does (hex
/// digits case-insensitively).
#[pyfunction]
fn same_agent(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(axon::same_agent(&text_arg(py, "a", a)?, &text_arg(py, "b", b)?))
}

fn versions_arg(py: Python<'_>, name: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let mut out = Vec::new();
    let items = v.try_iter().map_err(|_| {
        crate::errors::type_error(py, ARG, format!("{name} must be an iterable of ints (versions), not {}", crate::pyjson::type_name(v)))
    })?;
    for x in items {
        let x = x?;
        match x.extract::<u8>() {
            Ok(n) if !x.is_instance_of::<PyBool>() && x.is_instance_of::<PyInt>() => out.push(n),
            _ => {
                // The value's repr without running its code (an int past
                // CPython's str() digit limit has none).
                let shown = if x.is_instance_of::<PyInt>() && !x.is_instance_of::<PyBool>() {
                    crate::errors::int_text(&x)
                } else {
                    crate::pyjson::type_name(&x).to_string()
                };
                return Err(to_pyerr(py, invalid(format!("{name} must hold ints from 0 to 255 (versions), found {shown}"))));
            }
        }
    }
    Ok(out)
}

/// The highest version both sides speak; AxonError `incompatible_version` if none.
#[pyfunction]
fn negotiate(py: Python<'_>, local_versions: &Bound<'_, PyAny>, remote_versions: &Bound<'_, PyAny>) -> PyResult<u8> {
    let l = versions_arg(py, "local_versions", local_versions)?;
    let r = versions_arg(py, "remote_versions", remote_versions)?;
    axon::negotiate(&l, &r).py_err(py)
}

/// `{kind: {"required", "expects_response", "response_kinds", "later_responses", "stream"}}`.
#[pyfunction]
fn kind_rules(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    let names = |ks: &[Kind]| ks.iter().map(|k| k.as_str()).collect::<Vec<_>>();
    for k in Kind::ALL {
        let r = PyDict::new(py);
        r.set_item("required", k.is_required())?;
        r.set_item("expects_response", k.expects_response())?;
        r.set_item("response_kinds", names(k.response_kinds()))?;
        r.set_item("later_responses", names(k.later_responses()))?;
        r.set_item("stream", k.stream().as_str())?;
        r.set_item("fields", axon::payload_fields(k))?;
        d.set_item(k.as_str(), r)?;
    }
    Ok(d)
}

/// `{kind: {field: default}}` for the payload fields `decode` fills in.
#[pyfunction]
fn payload_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for k in Kind::ALL {
        let f = PyDict::new(py);
        for (name, _) in axon::payload_fields(k) {
            if let Some(v) = axon::payload_default(k, name) {
                f.set_item(name, from_json(py, &v)?)?;
            }
        }
        if !f.is_empty() {
            d.set_item(k.as_str(), f)?;
        }
    }
    Ok(d)
}

// ---------------------------------------------------------------- axon/1

fn axon1_dict<'py>(py: Python<'py>, env: &axon1::Envelope) -> PyResult<Bound<'py, PyAny>> {
    let payload: Value = serde_json::from_str(&env.payload).map_err(|e| to_pyerr(py, invalid(format!("the payload: {e}"))))?;
    let d = PyDict::new(py);
    d.set_item("id", &env.id)?;
    d.set_item("kind", &env.kind)?;
    d.set_item("ref", env.ref_id.as_deref())?;
    d.set_item("payload", from_json(py, &payload)?)?;
    Ok(d.into_any())
}

/// An axon/1 envelope dict (`id`, `kind`, `ref`, `payload`; `from`, `to`
/// and other keys ignored, as the wire ignores them).
fn axon1_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<axon1::Envelope> {
    if !obj.is_instance_of::<PyDict>() {
        return Err(crate::errors::type_error(py, ARG, format!("envelope must be a dict, not {}", crate::pyjson::type_name(obj))));
    }
    let m = match to_json(py, obj, 0)? {
        Value::Object(m) => m,
        _ => return Err(to_pyerr(py, invalid("envelope must be a dict".into()))),
    };
    let text = |key: &str| -> PyResult<String> {
        match m.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            other => {
                Err(to_pyerr(py, invalid(format!("the envelope's {key:?} must be a str, found {}", other.map_or("nothing", json_type)))))
            }
        }
    };
    let ref_id = match m.get("ref") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(to_pyerr(py, invalid(format!("the envelope's \"ref\" must be a str or None, found {}", json_type(other)))))
        }
    };
    let payload = match m.get("payload") {
        Some(Value::Object(p)) => axon1::payload_text(p),
        other => {
            return Err(to_pyerr(
                py,
                invalid(format!("the envelope's \"payload\" must be a dict, found {}", other.map_or("nothing", json_type))),
            ))
        }
    };
    Ok(axon1::Envelope { id: text("id")?, kind: text("kind")?, ref_id, payload })
}

/// A new envelope checked as `encode` checks it.
fn axon1_built<'py>(py: Python<'py>, env: axon1::Envelope) -> PyResult<Bound<'py, PyAny>> {
    axon1::encode(&env).py_err(py)?;
    axon1_dict(py, &env)
}

fn axon1_payload(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Map<String, Value>> {
    if !obj.is_instance_of::<PyDict>() {
        return Err(crate::errors::type_error(py, ARG, format!("payload must be a dict, not {}", crate::pyjson::type_name(obj))));
    }
    payload_arg(py, obj)
}

/// Decode and validate one axon/1 message (upstream HEAD's rules) -> `{"id", "kind", "ref", "payload"}`.
#[pyfunction(name = "decode")]
fn axon1_decode<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let env = if data.is_instance_of::<PyString>() {
        axon1::decode(text(py, data)?.as_bytes())
    } else {
        with_bytes_in(ARG, "data", data, |b| Ok(axon1::decode(b)))?
    }
    .py_err(py)?;
    axon1_dict(py, &env)
}

/// Validate an axon/1 envelope dict and encode it for the wire.
#[pyfunction(name = "encode")]
fn axon1_encode<'py>(py: Python<'py>, envelope: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let env = axon1_arg(py, envelope)?;
    Ok(PyBytes::new(py, &axon1::encode(&env).py_err(py)?))
}

/// A `request` with a fresh UUID v4 id (or `id`).
#[pyfunction(name = "request")]
#[pyo3(signature = (payload, *, id=None))]
fn axon1_request<'py>(py: Python<'py>, payload: &Bound<'py, PyAny>, id: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let id = opt_text_arg(py, "id", id)?;
    let mut env = axon1::request(&axon1_payload(py, payload)?);
    if let Some(id) = id {
        env.id = id;
    }
    axon1_built(py, env)
}

/// A message (any kind but `request`; `message` by default) with a fresh id.
#[pyfunction(name = "message")]
#[pyo3(signature = (payload, *, kind=None, ref_=None, id=None), text_signature = "(payload, *, kind='message', ref_=None, id=None)")]
fn axon1_message<'py>(
    py: Python<'py>,
    payload: &Bound<'py, PyAny>,
    kind: Option<&Bound<'py, PyAny>>,
    ref_: Option<&Bound<'py, PyAny>>,
    id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let kind = opt_text_arg(py, "kind", kind)?.unwrap_or_else(|| "message".into());
    let (ref_, id) = (opt_text_arg(py, "ref_", ref_)?, opt_text_arg(py, "id", id)?);
    let mut env = axon1::Envelope::new(&kind, &axon1_payload(py, payload)?);
    env.ref_id = ref_;
    if let Some(id) = id {
        env.id = id;
    }
    axon1_built(py, env)
}

/// A `response` to `request` (`ref` = its id, a fresh id).
#[pyfunction(name = "response")]
#[pyo3(signature = (request, payload, *, id=None))]
fn axon1_response<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    payload: &Bound<'py, PyAny>,
    id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let id = opt_text_arg(py, "id", id)?;
    let req = axon1_arg(py, request)?;
    let mut env = axon1::response_to(&req, &axon1_payload(py, payload)?);
    if let Some(id) = id {
        env.id = id;
    }
    axon1_built(py, env)
}

/// An `error` reply to `request`: payload `{"code", "message", "retryable"}`.
#[pyfunction(name = "error")]
#[pyo3(signature = (request, code, message, *, retryable=None, id=None), text_signature = "(request, code, message, *, retryable=False, id=None)")]
fn axon1_error<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    code: &Bound<'py, PyAny>,
    message: &Bound<'py, PyAny>,
    retryable: Option<&Bound<'py, PyAny>>,
    id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (code, message) = (text_arg(py, "code", code)?, text_arg(py, "message", message)?);
    let retryable = flag_arg(py, "retryable", retryable, false)?;
    let id = opt_text_arg(py, "id", id)?;
    let req = axon1_arg(py, request)?;
    let mut env = axon1::error_to(&req, &code, &message, retryable);
    if let Some(id) = id {
        env.id = id;
    }
    axon1_built(py, env)
}

// ---------------------------------------------------------------- session

fn pending_dict<'py>(py: Python<'py>, p: &Pending) -> PyResult<Bound<'py, PyAny>> {
    let d = PyDict::new(py);
    d.set_item("id", &p.id)?;
    d.set_item("kind", p.kind.as_str())?;
    d.set_item("to", &p.to)?;
    d.set_item("sent_ms", p.sent_ms)?;
    d.set_item("deadline_ms", p.deadline_ms)?;
    d.set_item("report_back", p.report_back)?;
    d.set_item("awaiting_result", p.awaiting_result)?;
    Ok(d.into_any())
}

fn outbound_dict<'py>(py: Python<'py>, out: &axon::Outbound, env: &Envelope) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("bytes", PyBytes::new(py, &out.bytes))?;
    d.set_item("route", out.route.as_str())?;
    d.set_item("envelope", envelope_dict(py, env)?)?;
    Ok(d)
}

/// The sans-IO session over the core `axon::Session`.
#[pyclass(module = "polywire.axon", name = "Session")]
struct Session {
    inner: axon::Session,
}

#[pymethods]
impl Session {
    // text_signature spells out the default pyo3 would show as `...`; tests-py/test_stubs.py checks it equals the constant.
    #[new]
    #[pyo3(signature = (local_id, *, protocol_versions=None, features=None, agent_name=None, expected_peer=None,
                        replay_window_ms=None, replay_capacity=None),
           text_signature = "(local_id, *, protocol_versions=None, features=None, agent_name=None, expected_peer=None, replay_window_ms=300000, replay_capacity=100000)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        local_id: &Bound<'_, PyAny>,
        protocol_versions: Option<&Bound<'_, PyAny>>,
        features: Option<&Bound<'_, PyAny>>,
        agent_name: Option<&Bound<'_, PyAny>>,
        expected_peer: Option<&Bound<'_, PyAny>>,
        replay_window_ms: Option<&Bound<'_, PyAny>>,
        replay_capacity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let local_id = text_arg(py, "local_id", local_id)?;
        let local_id = &local_id[..];
        let features = match features.filter(|f| !f.is_none()) {
            // A list or tuple of str (a str itself is not a list of features).
            Some(f) if f.is_instance_of::<PyList>() || f.is_instance_of::<PyTuple>() => {
                let items: Vec<Bound<'_, PyAny>> = match f.cast::<PyList>() {
                    Ok(l) => l.iter().collect(),
                    Err(_) => f.cast::<PyTuple>()?.iter().collect(),
                };
                Some(items.iter().map(|x| text_arg(py, "each of features", x)).collect::<PyResult<Vec<_>>>()?)
            }
            Some(f) => {
                return Err(crate::errors::type_error(
                    py,
                    ARG,
                    format!("features must be a list of str, not {}", crate::pyjson::type_name(f)),
                ))
            }
            None => None,
        };
        let (agent_name, expected_peer) = (opt_text_arg(py, "agent_name", agent_name)?, opt_text_arg(py, "expected_peer", expected_peer)?);
        let replay_window_ms = opt_u64_arg(py, "replay_window_ms", replay_window_ms)?.unwrap_or(axon::REPLAY_WINDOW_MS);
        let replay_capacity = opt_u64_arg(py, "replay_capacity", replay_capacity)?.unwrap_or(axon::REPLAY_CACHE_CAPACITY as u64);
        let replay_capacity = usize::try_from(replay_capacity).unwrap_or(usize::MAX);
        let mut config = axon::SessionConfig::new(local_id);
        if let Some(v) = protocol_versions {
            config.protocol_versions = versions_arg(py, "protocol_versions", v)?;
        }
        if let Some(f) = features {
            config.features = f;
        }
        config.agent_name = agent_name;
        config.expected_peer = expected_peer;
        config.replay_window_ms = replay_window_ms;
        config.replay_capacity = replay_capacity;
        Ok(Session { inner: axon::Session::new(config).py_err(py)? })
    }

    /// Start the handshake: `{"bytes", "route", "envelope"}` of the hello to send.
    #[pyo3(signature = (to, now_ms=None))]
    fn hello<'py>(&mut self, py: Python<'py>, to: &Bound<'py, PyAny>, now_ms: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyDict>> {
        let (to, now_ms) = (text_arg(py, "to", to)?, opt_u64_arg(py, "now_ms", now_ms)?);
        let to = &to[..];
        let out = self.inner.hello(to, now(now_ms)).py_err(py)?;
        let env = axon::decode_with(&out.bytes, &DecodeOptions { fill_defaults: false, ..DecodeOptions::default() }).py_err(py)?;
        outbound_dict(py, &out, &env)
    }

    /// Check and encode a message to send: `{"bytes", "route", "envelope"}`.
    #[pyo3(signature = (envelope, now_ms=None))]
    fn send<'py>(
        &mut self,
        py: Python<'py>,
        envelope: &Bound<'py, PyAny>,
        now_ms: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let now_ms = opt_u64_arg(py, "now_ms", now_ms)?;
        let env = envelope_arg(py, envelope)?;
        let out = self.inner.send(&env, now(now_ms)).py_err(py)?;
        outbound_dict(py, &out, &env)
    }

    /// Process a received body; `stream` is "bidirectional" or "unidirectional".
    #[pyo3(signature = (data, stream, now_ms=None))]
    fn receive<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        stream: &Bound<'py, PyAny>,
        now_ms: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let stream = text_arg(py, "stream", stream)?;
        let now_ms = opt_u64_arg(py, "now_ms", now_ms)?;
        let stream = match &stream[..] {
            "bidirectional" | "bidi" => StreamType::Bidirectional,
            "unidirectional" | "uni" => StreamType::Unidirectional,
            other => return Err(to_pyerr(py, invalid(format!("stream must be \"bidirectional\" or \"unidirectional\", not {other:?}")))),
        };
        let now = now(now_ms);
        let got = with_bytes_in(ARG, "data", data, |b| Ok(self.inner.receive(b, stream, now)))?;
        let d = PyDict::new(py);
        match got {
            Inbound::Deliver { envelope, in_reply_to } => {
                d.set_item("action", "deliver")?;
                d.set_item("envelope", envelope_dict(py, &envelope)?)?;
                match in_reply_to {
                    Some(p) => d.set_item("in_reply_to", pending_dict(py, &p)?)?,
                    None => d.set_item("in_reply_to", py.None())?,
                }
            }
            Inbound::Respond { reply, delivered } => {
                d.set_item("action", "respond")?;
                d.set_item("bytes", PyBytes::new(py, &axon::encode(&reply).py_err(py)?))?;
                d.set_item("reply", envelope_dict(py, &reply)?)?;
                match delivered {
                    Some(e) => d.set_item("delivered", envelope_dict(py, &e)?)?,
                    None => d.set_item("delivered", py.None())?,
                }
            }
            Inbound::Dropped { reason, message } => {
                d.set_item("action", "dropped")?;
                d.set_item("reason", reason.as_str())?;
                d.set_item("message", message)?;
            }
        }
        Ok(d)
    }

    /// Forget and return the requests whose deadline has passed.
    #[pyo3(signature = (now_ms=None))]
    fn expire<'py>(&mut self, py: Python<'py>, now_ms: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyList>> {
        let now_ms = opt_u64_arg(py, "now_ms", now_ms)?;
        let list = PyList::empty(py);
        for p in self.inner.expire(now(now_ms)) {
            list.append(pending_dict(py, &p)?)?;
        }
        Ok(list)
    }

    /// Stop waiting for the answer to a request; returns it, or None.
    fn forget<'py>(&mut self, py: Python<'py>, id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.forget(&text_arg(py, "id", id)?) {
            Some(p) => pending_dict(py, &p),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// This side's agent id.
    #[getter]
    fn local_id(&self) -> &str {
        self.inner.local_id()
    }

    /// Whether the hello exchange has completed (messages other than hello may flow).
    #[getter]
    fn ready(&self) -> bool {
        self.inner.is_ready()
    }

    /// The peer's agent id, once known (else None).
    #[getter]
    fn peer(&self) -> Option<&str> {
        self.inner.peer()
    }

    /// The protocol version negotiated in the hello exchange, or None before it.
    #[getter]
    fn version(&self) -> Option<u8> {
        self.inner.version()
    }

    /// The features the peer announced in its hello, or None before it.
    #[getter]
    fn peer_features(&self) -> Option<Vec<String>> {
        self.inner.peer_features().map(<[String]>::to_vec)
    }

    /// Requests sent and not yet answered, oldest first.
    #[getter]
    fn pending<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut ps: Vec<&Pending> = self.inner.pending().collect();
        ps.sort_by(|a, b| a.sent_ms.cmp(&b.sent_ms).then_with(|| a.id.cmp(&b.id)));
        let list = PyList::empty(py);
        for p in ps {
            list.append(pending_dict(py, p)?)?;
        }
        Ok(list)
    }

    fn __repr__(&self) -> String {
        match self.inner.peer() {
            Some(p) => format!("Session(local_id={:?}, peer={p:?}, version={})", self.inner.local_id(), self.inner.version().unwrap_or(0)),
            None => format!("Session(local_id={:?}, ready=False)", self.inner.local_id()),
        }
    }
}
