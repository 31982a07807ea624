//! `_polywire.kado`: Kado frames. The public wrapper is `polywire/kado.py`.

use crate::buffer::with_bytes_in;
use crate::errors::{bool_arg, int_arg, opt_int_arg, IntoPyResult};
use crate::pyjson::{self, PyBuilder};
use polywire::kado::{self, Header, MessageType, HEADER_SIZE};
use polywire::{Error, Format};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::borrow::Cow;

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "kado", |m| {
        m.add_function(wrap_pyfunction!(encode, m)?)?;
        m.add_function(wrap_pyfunction!(encode_payload, m)?)?;
        m.add_function(wrap_pyfunction!(decode, m)?)?;
        m.add_function(wrap_pyfunction!(decode_raw, m)?)?;
        m.add_function(wrap_pyfunction!(encode_header, m)?)?;
        m.add_function(wrap_pyfunction!(decode_header, m)?)?;
        m.add_function(wrap_pyfunction!(validate, m)?)?;
        m.add_function(wrap_pyfunction!(compress, m)?)?;
        m.add_function(wrap_pyfunction!(decompress, m)?)?;
        m.add_function(wrap_pyfunction!(is_compressed, m)?)?;
        m.add_class::<FrameDecoder>()?;
        Ok(())
    })
}

#[cold]
fn arg_error(msg: String) -> PyErr {
    Python::attach(|py| crate::errors::value_error(py, Format::Kado, ARG, msg))
}

const ARG: &str = "KADO_INVALID_ARGUMENT";

/// `max_size` of the one-shot decoders: a non-negative int (typed errors,
/// never `OverflowError`); past `usize`, no bound beyond memory.
fn max_size_arg(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<usize> {
    let n = int_arg(py, Format::Kado, ARG, "max_size", v, 0, i128::from(u64::MAX))?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

fn message_type(py: Python<'_>, msg_type: &Bound<'_, PyAny>) -> PyResult<MessageType> {
    // Any int (of any size) that is no message type is KADO_UNKNOWN_TYPE;
    // anything but an int is a PolywireTypeError KADO_INVALID_ARGUMENT, as in Node.
    let msg_type = match int_arg(py, Format::Kado, ARG, "msg_type", msg_type, 0, 255) {
        Ok(t) => t as i64,
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => return Err(e),
        Err(_) => -1,
    };
    u8::try_from(msg_type).ok().and_then(MessageType::from_u8).ok_or_else(|| {
        Python::attach(|py| {
            crate::errors::to_pyerr(
                py,
                Error::new(
                    Format::Kado,
                    "KADO_UNKNOWN_TYPE",
                    format!("unknown message type {msg_type} (expected 1..=8, INSTRUCTION to CONTEXT_RESPONSE)"),
                ),
            )
        })
    })
}

fn u32_arg(py: Python<'_>, name: &str, v: &Bound<'_, PyAny>) -> PyResult<u32> {
    Ok(int_arg(py, Format::Kado, ARG, name, v, 0, i128::from(u32::MAX))? as u32)
}

fn timestamp_arg(py: Python<'_>, ts: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    Ok(opt_int_arg(py, Format::Kado, ARG, "timestamp", ts, 0, i128::from(u64::MAX))?.map_or_else(kado::now_ms, |t| t as u64))
}

/// Encode a frame: JSON as `JSON.stringify` writes it, compressed when the
/// TypeScript encoder would compress.
#[pyfunction]
#[pyo3(signature = (msg_type, data, sequence_id, timestamp=None))]
fn encode<'py>(
    py: Python<'py>,
    msg_type: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    sequence_id: &Bound<'py, PyAny>,
    timestamp: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let t = message_type(py, msg_type)?;
    let seq = u32_arg(py, "sequence_id", sequence_id)?;
    let ts = timestamp_arg(py, timestamp)?;
    with_scratch(|buf, scratch| {
        buf.extend_from_slice(&[0u8; HEADER_SIZE]);
        pyjson::write(buf, data)?;
        let frame = kado::finish_frame_with(buf, scratch, t, seq, ts).py_err(py)?;
        Ok(PyBytes::new(py, frame))
    })
}

thread_local! {
    /// Buffers kept between `encode` calls: a large payload then costs no
    /// fresh allocation (and, past the allocator's mmap threshold, no page
    /// faults) on every call.
    static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Run `f` with the two cleared scratch buffers (fresh ones if a re-entrant
/// call holds them: serializing can run Python code).
fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>, &mut Vec<u8>) -> PyResult<R>) -> PyResult<R> {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut pair) => {
            let (buf, scratch) = &mut *pair;
            buf.clear();
            scratch.clear();
            let r = f(buf, scratch);
            // Do not keep more than 1 MiB around after a huge payload.
            if buf.capacity() > 1 << 20 {
                *buf = Vec::new();
            }
            if scratch.capacity() > 1 << 20 {
                *scratch = Vec::new();
            }
            r
        }
        Err(_) => f(&mut Vec::with_capacity(HEADER_SIZE + 120), &mut Vec::new()),
    })
}

/// The payload bytes `encode` would write before compression.
#[pyfunction]
fn encode_payload<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let mut buf = Vec::with_capacity(120);
    pyjson::write(&mut buf, data)?;
    Ok(PyBytes::new(py, &buf))
}

fn header_dict<'py>(py: Python<'py>, h: &Header) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "version"), h.version)?;
    d.set_item(intern!(py, "type"), h.msg_type)?;
    d.set_item(intern!(py, "payload_length"), h.payload_length)?;
    d.set_item(intern!(py, "timestamp"), h.timestamp)?;
    d.set_item(intern!(py, "sequence_id"), h.sequence_id)?;
    Ok(d)
}

fn message_dict<'py>(py: Python<'py>, h: &Header, payload: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "header"), header_dict(py, h)?)?;
    d.set_item(intern!(py, "payload"), payload)?;
    Ok(d.into_any())
}

fn parse_payload<'py>(py: Python<'py>, payload: &[u8], base: usize) -> PyResult<Bound<'py, PyAny>> {
    kado::parse_payload(payload, base, &mut PyBuilder::new(py, Format::Kado)).map_err(|e| e.into_pyerr(py))
}

/// Decode a frame into `{"header": {...}, "payload": value}`. Bytes after the
/// frame are ignored. A compressed payload expanding past `max_size` bytes
/// fails with `KADO_FRAME_TOO_LARGE` before it is allocated.
#[pyfunction]
#[pyo3(signature = (buffer, *, max_size=None), text_signature = "(buffer, *, max_size=16777216)")]
fn decode<'py>(py: Python<'py>, buffer: &Bound<'py, PyAny>, max_size: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let limit = max_size.map_or(Ok(kado::DEFAULT_MAX_FRAME_SIZE), |m| max_size_arg(py, m))?;
    with_bytes_in(ARG, "buffer", buffer, |b| {
        let (header, payload) = kado::decode_raw_limited(b, limit).py_err(py)?;
        let base = if matches!(payload, Cow::Borrowed(_)) { HEADER_SIZE } else { 0 };
        let value = parse_payload(py, &payload, base)?;
        message_dict(py, &header, value)
    })
}

/// Decode a frame without parsing its JSON: `{"header": {...}, "payload":
/// bytes}` with the payload decompressed.
#[pyfunction]
#[pyo3(signature = (buffer, *, max_size=None), text_signature = "(buffer, *, max_size=16777216)")]
fn decode_raw<'py>(py: Python<'py>, buffer: &Bound<'py, PyAny>, max_size: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let limit = max_size.map_or(Ok(kado::DEFAULT_MAX_FRAME_SIZE), |m| max_size_arg(py, m))?;
    with_bytes_in(ARG, "buffer", buffer, |b| {
        let (header, payload) = kado::decode_raw_limited(b, limit).py_err(py)?;
        message_dict(py, &header, PyBytes::new(py, &payload).into_any())
    })
}

/// The 18-byte header for a payload of `payload_length` bytes (on the wire, after
/// compression): little-endian version, type, payload length, timestamp (ms; now when
/// None) and sequence id.
#[pyfunction]
#[pyo3(signature = (msg_type, payload_length, sequence_id, timestamp=None))]
fn encode_header<'py>(
    py: Python<'py>,
    msg_type: &Bound<'py, PyAny>,
    payload_length: &Bound<'py, PyAny>,
    sequence_id: &Bound<'py, PyAny>,
    timestamp: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let t = message_type(py, msg_type)?;
    let len = u32_arg(py, "payload_length", payload_length)?;
    let seq = u32_arg(py, "sequence_id", sequence_id)?;
    let ts = timestamp_arg(py, timestamp)?;
    Ok(PyBytes::new(py, &Header::new(t, len, ts, seq).to_bytes()))
}

/// Read and validate (length, version, type) the 18-byte header of `buffer`: a dict
/// with `version`, `type`, `payload_length`, `timestamp`, `sequence_id`. Raises
/// `KadoError` (`KADO_TRUNCATED_HEADER`, `KADO_UNSUPPORTED_VERSION`, `KADO_UNKNOWN_TYPE`).
#[pyfunction]
fn decode_header<'py>(py: Python<'py>, buffer: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    with_bytes_in(ARG, "buffer", buffer, |b| header_dict(py, &kado::decode_header(b).py_err(py)?))
}

/// Whether `buffer` starts with a whole frame of a known version and type (the
/// payload itself is not parsed). Never raises for bad bytes.
#[pyfunction]
fn validate(buffer: &Bound<'_, PyAny>) -> PyResult<bool> {
    with_bytes_in(ARG, "buffer", buffer, |b| Ok(kado::validate(b)))
}

/// RLE-compress as the Kado orchestrator does: the magic byte `0x5A` then
/// `FF <byte> <count>` runs. Data shorter than 1024 bytes, or that would not shrink,
/// is returned unchanged.
#[pyfunction]
fn compress<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    with_bytes_in(ARG, "data", data, |b| match kado::compress(b) {
        Cow::Borrowed(_) if data.is_exact_instance_of::<PyBytes>() => Ok(data.clone()),
        c => Ok(PyBytes::new(py, &c).into_any()),
    })
}

/// Undo `compress`: data without the magic byte is returned unchanged. The output
/// is bounded by `max_size` (default 16 MiB): past it, `KadoError`
/// (`KADO_FRAME_TOO_LARGE`) before anything beyond it is allocated; a truncated escape
/// or a zero count is `KADO_INVALID_RLE`.
#[pyfunction]
#[pyo3(signature = (data, *, max_size=None), text_signature = "(data, *, max_size=16777216)")]
fn decompress<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, max_size: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let limit = max_size.map_or(Ok(kado::DEFAULT_MAX_FRAME_SIZE), |m| max_size_arg(py, m))?;
    with_bytes_in(ARG, "data", data, |b| match kado::decompress_limited(b, limit).py_err(py)? {
        Cow::Borrowed(_) if data.is_exact_instance_of::<PyBytes>() => Ok(data.clone()),
        c => Ok(PyBytes::new(py, &c).into_any()),
    })
}

/// Whether `data` starts with the compression magic byte `0x5A`.
#[pyfunction]
fn is_compressed(data: &Bound<'_, PyAny>) -> PyResult<bool> {
    with_bytes_in(ARG, "data", data, |b| Ok(kado::is_compressed(b)))
}

/// Streaming decoder over the core `FrameDecoder`.
#[pyclass(module = "polywire.kado", name = "FrameDecoder")]
struct FrameDecoder {
    inner: kado::FrameDecoder,
    raw: bool,
    /// An error found after some frames of a `feed` call were complete: those
    /// frames are returned and the error is raised by the next call.
    pending_error: Option<Error>,
}

#[pymethods]
impl FrameDecoder {
    // text_signature spells out the default pyo3 would show as `...`; tests-py/test_stubs.py checks it equals the constant.
    #[new]
    #[pyo3(signature = (max_frame_size=None, *, raw=None),
           text_signature = "(max_frame_size=16777216, *, raw=False)")]
    fn new(py: Python<'_>, max_frame_size: Option<&Bound<'_, PyAny>>, raw: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let raw = raw.map_or(Ok(false), |r| bool_arg(py, ARG, "raw", r))?;
        let max_frame_size = match max_frame_size {
            Some(m) => usize::try_from(int_arg(py, Format::Kado, ARG, "max_frame_size", m, 0, i128::from(u64::MAX))?).unwrap_or(usize::MAX),
            None => kado::DEFAULT_MAX_FRAME_SIZE,
        };
        if max_frame_size < HEADER_SIZE {
            return Err(arg_error(format!("max_frame_size must be at least {HEADER_SIZE}, got {max_frame_size}")));
        }
        Ok(FrameDecoder { inner: kado::FrameDecoder::with_max_frame_size(max_frame_size), raw, pending_error: None })
    }

    /// Feed bytes; returns the frames completed by them, in order.
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        if let Some(e) = self.pending_error.take() {
            self.inner.fail(e.clone());
            return Err(crate::errors::to_pyerr(py, e));
        }
        with_bytes_in(ARG, "data", data, |b| {
            self.inner.push(b);
            Ok(())
        })?;
        let out = PyList::empty(py);
        loop {
            let frame = match self.inner.next_frame() {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(e) => return self.fail_after(py, out, e),
            };
            let payload = if self.raw {
                PyBytes::new(py, &frame.payload).into_any()
            } else {
                let base = if frame.compressed { 0 } else { frame.offset as usize + HEADER_SIZE };
                match kado::parse_payload(&frame.payload, base, &mut PyBuilder::new(py, Format::Kado)) {
                    Ok(v) => v,
                    Err(pyjson::BuildError::Codec(e)) => return self.fail_after(py, out, e),
                    Err(pyjson::BuildError::Py(e)) => return Err(*e),
                }
            };
            out.append(message_dict(py, &frame.header, payload)?)?;
        }
        Ok(out)
    }

    /// Call at end of stream: raises if a partial frame is left over.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(e) = &self.pending_error {
            return Err(crate::errors::to_pyerr(py, e.clone()));
        }
        self.inner.finish().py_err(py)
    }

    /// Bytes buffered towards the next frame.
    #[getter]
    fn buffered(&self) -> usize {
        self.inner.buffered()
    }

    /// Stream offset just after the last complete frame.
    #[getter]
    fn position(&self) -> u64 {
        self.inner.position()
    }

    /// The largest frame (header and payload, and the largest decompressed payload)
    /// this decoder accepts, in bytes.
    #[getter]
    fn max_frame_size(&self) -> usize {
        self.inner.max_frame_size()
    }

    fn __repr__(&self) -> String {
        format!(
            "FrameDecoder(max_frame_size={}, raw={}, buffered={})",
            self.inner.max_frame_size(),
            if self.raw { "True" } else { "False" },
            self.inner.buffered()
        )
    }
}

impl FrameDecoder {
    fn fail_after<'py>(&mut self, py: Python<'py>, done: Bound<'py, PyList>, e: Error) -> PyResult<Bound<'py, PyList>> {
        self.inner.fail(e.clone());
        if done.is_empty() {
            Err(crate::errors::to_pyerr(py, e))
        } else {
            self.pending_error = Some(e);
            Ok(done)
        }
    }
}
