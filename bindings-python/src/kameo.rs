//! `_polywire.kameo`: the Kameo remote-actor codec. The public wrapper is
//! `polywire/kameo.py`.
//!
//! Python values and `polywire::kameo::Value` convert one to one: `None`,
//! `bool`, `int` (any value in -2**63..2**64 for MessagePack; the typed
//! messages check their own ranges), `float`, `str`, `bytes` (also
//! `bytearray`/`memoryview` on input), `list` (and `tuple` on input),
//! `dict`. A MessagePack map key that is an array becomes a tuple (dict keys
//! must be hashable).

use crate::buffer::with_bytes_in;

/// The code of an argument of the wrong type (a `PolywireTypeError`), as in
/// Node; a sequence id out of range is `KAMEO_INVALID_VALUE`, as the codec
/// reports it in both.
const ARG: &str = "KAMEO_INVALID_ARGUMENT";
use crate::errors::{to_pyerr, IntoPyResult};
use crate::pyjson::type_name;
use polywire::kameo::{self as pk, msgpack, ActorId, ActorRegistration, PeerId, Value, MAX_VALUE_DEPTH};
use polywire::{Error, Format};
use pyo3::buffer::PyBuffer;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "kameo", |m| {
        m.add("MESSAGING_PROTOCOL", pk::MESSAGING_PROTOCOL)?;
        m.add("REGISTRY_PROTOCOL", pk::REGISTRY_PROTOCOL)?;
        m.add("MAX_REQUEST_SIZE", pk::MAX_REQUEST_SIZE)?;
        m.add("MAX_RESPONSE_SIZE", pk::MAX_RESPONSE_SIZE)?;
        m.add("MAX_METADATA_SIZE", pk::MAX_METADATA_SIZE)?;
        m.add("MAX_DEPTH", pk::MAX_DEPTH)?;
        m.add("MAX_VALUE_DEPTH", MAX_VALUE_DEPTH)?;
        m.add_function(wrap_pyfunction!(encode_request, m)?)?;
        m.add_function(wrap_pyfunction!(decode_request, m)?)?;
        m.add_function(wrap_pyfunction!(encode_response, m)?)?;
        m.add_function(wrap_pyfunction!(decode_response, m)?)?;
        m.add_function(wrap_pyfunction!(encode_registration, m)?)?;
        m.add_function(wrap_pyfunction!(decode_registration, m)?)?;
        m.add_function(wrap_pyfunction!(metadata_key, m)?)?;
        m.add_function(wrap_pyfunction!(parse_metadata_key, m)?)?;
        m.add_function(wrap_pyfunction!(provider_key, m)?)?;
        m.add_function(wrap_pyfunction!(peer_id_from_public_key, m)?)?;
        m.add_function(wrap_pyfunction!(peer_id_to_bytes, m)?)?;
        m.add_function(wrap_pyfunction!(peer_id_from_bytes, m)?)?;
        m.add_function(wrap_pyfunction!(actor_id_to_bytes, m)?)?;
        m.add_function(wrap_pyfunction!(actor_id_from_bytes, m)?)?;
        m.add_function(wrap_pyfunction!(remote_message_id, m)?)?;
        m.add_function(wrap_pyfunction!(remote_actor_id, m)?)?;
        m.add_function(wrap_pyfunction!(pack, m)?)?;
        m.add_function(wrap_pyfunction!(unpack, m)?)?;
        Ok(())
    })
}

#[cold]
fn kameo_err(py: Python<'_>, code: &'static str, message: String) -> PyErr {
    to_pyerr(py, Error::new(Format::Kameo, code, message))
}

// ---------------------------------------------------------------- Python -> Value

fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    let py = obj.py();
    if depth > MAX_VALUE_DEPTH {
        return Err(kameo_err(py, "KAMEO_DEPTH_LIMIT", format!("expected at most {MAX_VALUE_DEPTH} levels of nesting")));
    }
    if obj.is_none() {
        Ok(Value::Nil)
    } else if let Ok(b) = obj.cast::<PyBool>() {
        Ok(Value::Bool(b.is_true()))
    } else if let Ok(s) = obj.cast::<PyString>() {
        // A subclass's text without calling its methods; a lone surrogate
        // is a KameoError, not a UnicodeEncodeError.
        match unsafe { crate::pyjson::pystr_utf8(s.as_ptr()) } {
            Some(t) => Ok(Value::Str(t.to_owned())),
            None => Err(kameo_err(py, "KAMEO_INVALID_VALUE", "a string holds an unpaired surrogate (expected valid Unicode text)".into())),
        }
    } else if let Ok(i) = obj.cast::<PyInt>() {
        // An int subclass is read as the int it is (no `__index__`).
        crate::errors::int_arg(py, Format::Kameo, "KAMEO_MSGPACK_INTEGER_RANGE", "integer", i, i128::from(i64::MIN), i128::from(u64::MAX))
            .map(Value::Int)
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        Ok(Value::F64(f.value()))
    } else if let Ok(b) = obj.cast::<PyBytes>() {
        Ok(Value::Bytes(b.as_bytes().to_vec()))
    } else if let Ok(d) = obj.cast::<PyDict>() {
        // Entries held while converted; a dict that changes size (Python
        // code run by a conversion, e.g. a `__buffer__`) is an error, never
        // a panic or a read of a freed entry.
        let mut entries = Vec::with_capacity(d.len());
        crate::pydict::for_each_entry(
            obj,
            |k, v| {
                entries.push((to_value(&k, depth + 1)?, to_value(&v, depth + 1)?));
                Ok(())
            },
            || {
                kameo_err(
                    py,
                    "KAMEO_VALUE_CHANGED",
                    "dictionary changed size during iteration (expected the value to stay unchanged while it is converted)".into(),
                )
            },
        )?;
        Ok(Value::Map(entries))
    } else if let Ok(l) = obj.cast::<PyList>() {
        l.iter().map(|x| to_value(&x, depth + 1)).collect::<PyResult<_>>().map(Value::Array)
    } else if let Ok(t) = obj.cast::<PyTuple>() {
        t.iter().map(|x| to_value(&x, depth + 1)).collect::<PyResult<_>>().map(Value::Array)
    } else if let Ok(buf) = PyBuffer::<u8>::get(obj) {
        Ok(Value::Bytes(buf.to_vec(py)?))
    } else {
        Err(crate::errors::type_error(
            py,
            "KAMEO_INVALID_VALUE",
            format!("cannot convert {} (expected None, bool, int, float, str, bytes, list, tuple or dict)", type_name(obj)),
        ))
    }
}

// ---------------------------------------------------------------- Value -> Python

fn from_value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Nil => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::F32(f) => PyFloat::new(py, f64::from(*f)).into_any(),
        Value::F64(f) => PyFloat::new(py, *f).into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(from_value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Map(entries) => {
            let d = PyDict::new(py);
            for (k, item) in entries {
                d.set_item(key_from_value(py, k)?, from_value(py, item)?)?;
            }
            d.into_any()
        }
    })
}

/// A dict key: arrays become tuples; a map cannot be a key.
fn key_from_value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Value::Array(items) => {
            let keys = items.iter().map(|x| key_from_value(py, x)).collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, keys)?.into_any())
        }
        Value::Map(_) => Err(kameo_err(py, "KAMEO_MSGPACK_UNHASHABLE_KEY", "a map used as a map key cannot be a dict key".into())),
        other => from_value(py, other),
    }
}

// ---------------------------------------------------------------- messaging

/// CBOR bytes of a `SwarmRequest` given in serde's externally tagged shape.
#[pyfunction]
fn encode_request<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let v = to_value(value, 0)?;
    Ok(PyBytes::new(py, &pk::encode_request_value(&v).py_err(py)?))
}

/// A `SwarmRequest` from CBOR bytes (kameo's rules; trailing bytes ignored).
#[pyfunction]
fn decode_request<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let v = with_bytes_in(ARG, "data", data, |b| pk::decode_request_value(b).py_err(py))?;
    from_value(py, &v)
}

/// CBOR bytes of a `SwarmResponse` given in serde's externally tagged shape
/// (`{"Ask": {"Ok": b"..."}}`, `{"Tell": {"Err": "MailboxFull"}}`, ...), as
/// kameo 0.22.2 writes it.
#[pyfunction]
fn encode_response<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let v = to_value(value, 0)?;
    Ok(PyBytes::new(py, &pk::encode_response_value(&v).py_err(py)?))
}

/// A `SwarmResponse` from CBOR bytes, in serde's externally tagged shape (kameo's
/// rules; trailing bytes ignored). Raises `KameoError`.
#[pyfunction]
fn decode_response<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let v = with_bytes_in(ARG, "data", data, |b| pk::decode_response_value(b).py_err(py))?;
    from_value(py, &v)
}

// ---------------------------------------------------------------- ids and registry

/// A `str` parameter (a lone surrogate is a `KameoError`).
fn text_arg(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<String> {
    crate::errors::str_arg(py, Format::Kameo, ARG, name, obj).map(str::to_owned)
}

/// A peer id: base58 `str` or its bytes (`bytes`, `bytearray`, `memoryview`).
fn peer_arg(py: Python<'_>, peer_id: &Bound<'_, PyAny>) -> PyResult<PeerId> {
    if !(peer_id.is_instance_of::<PyString>() || peer_id.is_instance_of::<PyBytes>() || PyBuffer::<u8>::get(peer_id).is_ok()) {
        return Err(crate::errors::type_error(
            py,
            ARG,
            format!("peer_id must be a base58 peer id (str) or its bytes, not {}", type_name(peer_id)),
        ));
    }
    // Parsed as Node parses it (KAMEO_INVALID_PEER_ID, KAMEO_INVALID_BASE58...).
    if peer_id.is_instance_of::<PyString>() {
        PeerId::from_base58(crate::errors::str_arg(py, Format::Kameo, ARG, "peer_id", peer_id)?).py_err(py)
    } else {
        with_bytes_in(ARG, "peer_id", peer_id, |b| PeerId::from_bytes(b).py_err(py))
    }
}

/// The optional peer id of an actor id: as a value inside one is read
/// (KAMEO_INVALID_VALUE naming `peer_id`, as Node reports it).
fn opt_peer_arg(py: Python<'_>, peer_id: Option<&Bound<'_, PyAny>>) -> PyResult<Option<PeerId>> {
    match peer_id {
        Some(p) if !p.is_none() => {
            if !(p.is_instance_of::<PyString>() || p.is_instance_of::<PyBytes>() || PyBuffer::<u8>::get(p).is_ok()) {
                return Err(crate::errors::type_error(
                    py,
                    ARG,
                    format!("peer_id must be a base58 peer id (str), its bytes or None, not {}", type_name(p)),
                ));
            }
            let v = to_value(p, 0)?;
            pk::peer_id_from_value(&v, "peer_id").py_err(py).map(Some)
        }
        _ => Ok(None),
    }
}

/// A u64 parameter (a sequence id, a crate's major version): not an int ->
/// `PolywireTypeError` `KAMEO_INVALID_ARGUMENT`; an int out of 0..2**64 ->
/// `KameoError` `KAMEO_INVALID_VALUE` (the codes Node gives).
fn u64_arg(py: Python<'_>, name: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    if !v.is_instance_of::<PyInt>() || v.is_instance_of::<PyBool>() {
        return Err(crate::errors::type_error(py, ARG, format!("{name} must be an int, not {}", type_name(v))));
    }
    crate::errors::int_arg(py, Format::Kameo, "KAMEO_INVALID_VALUE", name, v, 0, i128::from(u64::MAX)).map(|n| n as u64)
}

fn registration_dict<'py>(py: Python<'py>, id: &ActorId, remote_id: &str) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "sequence_id"), id.sequence_id)?;
    d.set_item(intern!(py, "peer_id"), id.peer_id.as_ref().map(|p| p.to_base58()))?;
    d.set_item(intern!(py, "remote_id"), remote_id)?;
    Ok(d)
}

/// The value of an actor's registry metadata record.
#[pyfunction]
#[pyo3(signature = (sequence_id, peer_id, remote_id))]
fn encode_registration<'py>(
    py: Python<'py>,
    sequence_id: &Bound<'py, PyAny>,
    peer_id: Option<&Bound<'py, PyAny>>,
    remote_id: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let remote_id = &text_arg(py, "remote_id", remote_id)?;
    let id = ActorId::new(u64_arg(py, "sequence_id", sequence_id)?, opt_peer_arg(py, peer_id)?);
    Ok(PyBytes::new(py, &ActorRegistration::new(id, remote_id).to_bytes()))
}

/// The `ActorRegistration` record kameo stores in the DHT, from its bytes: a dict
/// with the actor id's `sequence_id` and `peer_id`, and `remote_id`. Raises
/// `KameoError` (`KAMEO_REGISTRATION_EMPTY`, `KAMEO_REGISTRATION_TRUNCATED`, ...).
#[pyfunction]
fn decode_registration<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let reg = with_bytes_in(ARG, "data", data, |b| ActorRegistration::from_bytes(b).py_err(py))?;
    registration_dict(py, &reg.actor_id, &reg.remote_id)
}

/// The DHT record key kameo uses for an actor's registration:
/// `{actor_name}:meta:{base58 peer id}`.
#[pyfunction]
fn metadata_key(py: Python<'_>, actor_name: &Bound<'_, PyAny>, peer_id: &Bound<'_, PyAny>) -> PyResult<String> {
    let actor_name = text_arg(py, "actor_name", actor_name)?;
    Ok(pk::metadata_key(&actor_name, &peer_arg(py, peer_id)?))
}

/// `(actor_name, peer_id)` of a metadata record key, as kameo validates it.
#[pyfunction]
fn parse_metadata_key(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<(String, String)> {
    let parsed = if key.is_instance_of::<PyString>() {
        pk::parse_metadata_key(crate::errors::str_arg(py, Format::Kameo, ARG, "key", key)?.as_bytes())
    } else {
        with_bytes_in(ARG, "key", key, |b| Ok(pk::parse_metadata_key(b)))?
    };
    let (name, peer) = parsed.py_err(py)?;
    Ok((name, peer.to_base58()))
}

/// The DHT provider key under which kameo announces `actor_name` (its UTF-8 bytes).
#[pyfunction]
fn provider_key<'py>(py: Python<'py>, actor_name: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &pk::provider_key(&text_arg(py, "actor_name", actor_name)?)))
}

/// Base58 peer id of a public key: 32 raw Ed25519 bytes, or a
/// protobuf-encoded libp2p public key.
#[pyfunction]
fn peer_id_from_public_key(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<String> {
    with_bytes_in(ARG, "key", key, |b| PeerId::from_public_key(b).py_err(py)).map(|p| p.to_base58())
}

/// The multihash bytes of a base58 libp2p peer id.
#[pyfunction]
fn peer_id_to_bytes<'py>(py: Python<'py>, peer_id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, peer_arg(py, peer_id)?.as_bytes()))
}

/// The base58 libp2p peer id of multihash bytes.
#[pyfunction]
fn peer_id_from_bytes(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<String> {
    with_bytes_in(ARG, "data", data, |b| PeerId::from_bytes(b).py_err(py)).map(|p| p.to_base58())
}

/// `ActorId::to_bytes`: the sequence id (u64, little-endian) then the peer id's bytes
/// (when given).
#[pyfunction]
#[pyo3(signature = (sequence_id, peer_id=None))]
fn actor_id_to_bytes<'py>(
    py: Python<'py>,
    sequence_id: &Bound<'py, PyAny>,
    peer_id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let id = ActorId::new(u64_arg(py, "sequence_id", sequence_id)?, opt_peer_arg(py, peer_id)?);
    Ok(PyBytes::new(py, &id.to_bytes()))
}

/// `ActorId::from_bytes`: a dict with `sequence_id` and `peer_id` (None when the
/// bytes hold no peer id).
#[pyfunction]
fn actor_id_from_bytes<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let id = with_bytes_in(ARG, "data", data, |b| ActorId::from_bytes(b).py_err(py))?;
    from_value(py, &pk::actor_id_to_value(&id))
}

/// The remote id kameo's `#[remote_message]` gives `impl Message<message_type> for
/// actor_type` in `module_path` of crate `crate_name` at major version `crate_major`.
#[pyfunction]
#[pyo3(signature = (crate_name, crate_major, module_path, message_type, actor_type, impl_generics=None),
       text_signature = "(crate_name, crate_major, module_path, message_type, actor_type, impl_generics='')")]
fn remote_message_id(
    py: Python<'_>,
    crate_name: &Bound<'_, PyAny>,
    crate_major: &Bound<'_, PyAny>,
    module_path: &Bound<'_, PyAny>,
    message_type: &Bound<'_, PyAny>,
    actor_type: &Bound<'_, PyAny>,
    impl_generics: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let crate_name = text_arg(py, "crate_name", crate_name)?;
    let module_path = text_arg(py, "module_path", module_path)?;
    let message_type = text_arg(py, "message_type", message_type)?;
    let actor_type = text_arg(py, "actor_type", actor_type)?;
    let impl_generics = crate::errors::opt_str_arg(py, Format::Kameo, ARG, "impl_generics", impl_generics)?.unwrap_or_default();
    let (crate_name, module_path, message_type, actor_type, impl_generics) =
        (&crate_name[..], &module_path[..], &message_type[..], &actor_type[..], &impl_generics[..]);
    let major = u64_arg(py, "crate_major", crate_major)?;
    Ok(pk::remote_message_id(crate_name, major, module_path, message_type, actor_type, impl_generics))
}

/// The remote id kameo's `#[derive(RemoteActor)]` gives the actor `ident` in
/// `module_path`: `module_path::ident`.
#[pyfunction]
fn remote_actor_id(py: Python<'_>, module_path: &Bound<'_, PyAny>, ident: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(pk::remote_actor_id(&text_arg(py, "module_path", module_path)?, &text_arg(py, "ident", ident)?))
}

// ---------------------------------------------------------------- MessagePack

/// MessagePack bytes of a value, as `rmp_serde::to_vec_named` writes the
/// same data.
#[pyfunction]
fn pack<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let v = to_value(value, 0)?;
    Ok(PyBytes::new(py, &msgpack::pack(&v).py_err(py)?))
}

/// The value of MessagePack bytes as `rmp_serde` reads them (maps to dicts, arrays
/// to lists, bin to bytes). Raises `KameoError`.
#[pyfunction]
fn unpack<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let v = with_bytes_in(ARG, "data", data, |b| msgpack::unpack(b).py_err(py))?;
    from_value(py, &v)
}
