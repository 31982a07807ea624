//! `polywire.toon.StreamDecoder` and `decode_stream` (through
//! `polywire/toon.py`): the
//! core's resumable decoder (`StreamDecoder`), which keeps its state between
//! the pieces of text it is given, reads each line once and holds only the
//! open structure and the line being read.

use super::{targ, utf8, ARG};
use crate::errors::to_pyerr;
use crate::pyjson::{type_name, BuildError, PyBuilder};
use polywire::json::Builder;
use polywire::toon::decode::{DecodeOptions, Event, Primitive, StreamDecoder as Core, Utf8Decoder};
use polywire::{Error, Format};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

fn options(strict: Option<&Bound<'_, PyAny>>, indent_size: Option<&Bound<'_, PyAny>>) -> PyResult<DecodeOptions> {
    let strict = Python::attach(|py| strict.map_or(Ok(true), |b| crate::errors::bool_arg(py, ARG, "strict", b)))?;
    Ok(DecodeOptions { indent: super::indent_arg(indent_size, None, 1)?, strict, ..Default::default() })
}

/// The core error as `ToonDecodeError`, with `source` (the line it names,
/// when the decoder still has it).
fn stream_error(py: Python<'_>, d: &Core, e: Error) -> PyErr {
    let source = d.error_source(&e);
    let err = to_pyerr(py, e);
    let _ = err.value(py).setattr("source", source);
    err
}

/// `TOON_INVALID_UTF8` at byte `offset` of the bytes fed.
fn utf8_error(offset: usize) -> Error {
    Error::new(Format::Toon, "TOON_INVALID_UTF8", "ill-formed UTF-8 (expected UTF-8 text)").at(offset)
}

/// Resumable TOON decoder (see `toon.pyi`).
#[pyclass(module = "polywire.toon", name = "StreamDecoder")]
pub struct StreamDecoder {
    inner: Core,
    utf8: Utf8Decoder,
    text: String,
    /// The error to raise at the next call (events came before it), or
    /// raised already: the decoder stays failed.
    failed: Option<PyErr>,
}

#[pymethods]
impl StreamDecoder {
    #[new]
    #[pyo3(signature = (*, strict=None, indent_size=None), text_signature = "(*, strict=True, indent_size=2)")]
    fn new(strict: Option<&Bound<'_, PyAny>>, indent_size: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let opts = options(strict, indent_size)?;
        let inner = Python::attach(|py| Core::new(&opts).map_err(|e| to_pyerr(py, e)))?;
        Ok(StreamDecoder { inner, utf8: Utf8Decoder::new(false), text: String::new(), failed: None })
    }

    /// Text of the document as it comes: `str`, or UTF-8 bytes split anywhere.
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        self.check(py)?;
        let mut b = PyBuilder::new(py, Format::Toon);
        let out = PyList::empty(py);
        let mut failure: Option<PyErr> = None;
        let r = if let Ok(s) = data.cast::<PyString>() {
            let Some(text) = (unsafe { utf8(s.as_ptr()) }) else {
                return self.fail(
                    py,
                    out,
                    to_pyerr(
                        py,
                        Error::new(Format::Toon, "TOON_INVALID_UTF8", "the text holds an unpaired surrogate (expected valid Unicode text)"),
                    ),
                );
            };
            // (A character begun by bytes fed before is left incomplete.)
            let mut rest = String::new();
            match self.utf8.decode(&[], true, &mut rest) {
                Err(offset) => Err(utf8_error(offset)),
                Ok(()) => self.inner.feed(text, &mut |e| push(&mut b, &out, &e, &mut failure)),
            }
        } else if data.is_instance_of::<PyBytes>()
            || data.is_instance_of::<pyo3::types::PyByteArray>()
            || data.is_instance_of::<pyo3::types::PyMemoryView>()
        {
            let mut text = std::mem::take(&mut self.text);
            text.clear();
            let bad = crate::buffer::with_bytes_in(ARG, "data", data, |bytes| Ok(self.utf8.decode(bytes, false, &mut text)))?;
            let r = self.inner.feed(&text, &mut |e| push(&mut b, &out, &e, &mut failure));
            self.text = text;
            r.and(bad.map_err(utf8_error))
        } else {
            return Err(targ(format!("data must be str, bytes or bytearray (TOON text), not {}", type_name(data))));
        };
        self.done(py, out, r, failure)
    }

    /// One line of the document (a newline in it is part of it, as the
    /// reference's `decodeStream` takes a line).
    fn feed_line<'py>(&mut self, py: Python<'py>, line: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        self.check(py)?;
        let Ok(s) = line.cast::<PyString>() else {
            return Err(targ(format!("line must be str (one line of TOON text), not {}", type_name(line))));
        };
        let out = PyList::empty(py);
        let Some(text) = (unsafe { utf8(s.as_ptr()) }) else {
            return self.fail(
                py,
                out,
                to_pyerr(
                    py,
                    Error::new(Format::Toon, "TOON_INVALID_UTF8", "the line holds an unpaired surrogate (expected valid Unicode text)"),
                ),
            );
        };
        let mut b = PyBuilder::new(py, Format::Toon);
        let mut failure = None;
        let r = self.inner.push_line(text, &mut |e| push(&mut b, &out, &e, &mut failure));
        self.done(py, out, r, failure)
    }

    /// The end of the document: its last events; raises if it is not
    /// complete and valid.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check(py)?;
        let mut rest = String::new();
        let out = PyList::empty(py);
        if let Err(offset) = self.utf8.decode(&[], true, &mut rest) {
            return self.fail(py, out, to_pyerr(py, utf8_error(offset)));
        }
        let mut b = PyBuilder::new(py, Format::Toon);
        let mut failure = None;
        let r = self.inner.finish(&mut |e| push(&mut b, &out, &e, &mut failure));
        self.done(py, out, r, failure)
    }

    /// Bytes of text gone through so far (read, searched, moved): linear
    /// in the input.
    #[getter]
    fn scanned(&self) -> u64 {
        self.inner.scanned()
    }

    /// Bytes of text held (the line being read and a little more).
    #[getter]
    fn buffered(&self) -> usize {
        self.inner.buffered()
    }

    fn __repr__(&self) -> String {
        format!("StreamDecoder(buffered={}, scanned={})", self.inner.buffered(), self.inner.scanned())
    }
}

impl StreamDecoder {
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        match &self.failed {
            Some(e) => {
                let _ = e.value(py).setattr("events", PyList::empty(py));
                Err(e.clone_ref(py))
            }
            None => Ok(()),
        }
    }

    /// Fail with `e`, raised now with the events found before it in this
    /// call (`e.events`); the decoder stays failed.
    fn fail<'py>(&mut self, py: Python<'py>, out: Bound<'py, PyList>, e: PyErr) -> PyResult<Bound<'py, PyList>> {
        let _ = e.value(py).setattr("events", out);
        self.failed = Some(e.clone_ref(py));
        Err(e)
    }

    fn done<'py>(
        &mut self,
        py: Python<'py>,
        out: Bound<'py, PyList>,
        r: polywire::Result<()>,
        failure: Option<PyErr>,
    ) -> PyResult<Bound<'py, PyList>> {
        if let Some(e) = failure {
            // (Making an event's object failed: out of memory.)
            return Err(e);
        }
        match r {
            Ok(()) => Ok(out),
            Err(e) => {
                let e = stream_error(py, &self.inner, e);
                self.fail(py, out, e)
            }
        }
    }
}

/// Append the event's dict to `out` (the reference's event object:
/// `{"type": "key", "key": "a"}`, ...). A number is an `int` when its
/// token is an integer (exact, as `loads` reads it), else a `float`.
fn push<'py>(b: &mut PyBuilder<'py>, out: &Bound<'py, PyList>, e: &Event<'_>, failure: &mut Option<PyErr>) {
    if failure.is_some() {
        return;
    }
    if let Err(err) = event(b, e).and_then(|d| out.append(d)) {
        *failure = Some(err);
    }
}

fn event<'py>(b: &mut PyBuilder<'py>, e: &Event<'_>) -> PyResult<Bound<'py, PyDict>> {
    let py = b.py();
    let d = PyDict::new(py);
    let ty = intern!(py, "type");
    let built = |r: Result<Bound<'py, PyAny>, BuildError>| r.map_err(|e| e.into_pyerr(py));
    match e {
        Event::StartObject => d.set_item(ty, intern!(py, "startObject"))?,
        Event::EndObject => d.set_item(ty, intern!(py, "endObject"))?,
        Event::EndArray => d.set_item(ty, intern!(py, "endArray"))?,
        Event::StartArray { length } => {
            d.set_item(ty, intern!(py, "startArray"))?;
            // A declared length is a whole number (an int here); one beyond
            // the doubles is infinite, as in the reference.
            let n = if length.is_finite() && length.abs() < 9.0e18 {
                built(b.int(*length as i64))?
            } else if length.is_finite() {
                number(b, &format!("{length:.0}"), true, *length)?
            } else {
                built(b.float(*length))?
            };
            d.set_item(intern!(py, "length"), n)?;
        }
        Event::Key(k) => {
            d.set_item(ty, intern!(py, "key"))?;
            d.set_item(intern!(py, "key"), built(b.key(k))?)?;
        }
        Event::Primitive(p) => {
            d.set_item(ty, intern!(py, "primitive"))?;
            let v = match p {
                Primitive::Null => built(b.null())?,
                Primitive::Bool(v) => built(b.bool(*v))?,
                Primitive::Number { value, text } => number(b, text, !text.contains(['.', 'e', 'E']), *value)?,
                Primitive::String(s) => built(b.string(s))?,
            };
            d.set_item(intern!(py, "value"), v)?;
        }
    }
    Ok(d)
}

/// A number token as `loads` reads it: an exact `int` for an integer,
/// else the `float` (`value`).
fn number<'py>(b: &mut PyBuilder<'py>, text: &str, integer: bool, value: f64) -> PyResult<Bound<'py, PyAny>> {
    let py = b.py();
    match b.number_token(text, integer) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => b.float(value).map_err(|e| e.into_pyerr(py)),
        Err(e) => Err(e.into_pyerr(py)),
    }
}
