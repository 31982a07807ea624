//! `_polywire.llm`: exact token counts (`polywire::tokens`) and the JSON
//! renderings `polywire.llm` weighs against TOON. The choice of rendering is
//! in the Python package; here are the parts that walk text or values.

use polywire::tokens::Tokenizer;
use polywire::Format;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use crate::errors::{type_error, value_error, IntoPyResult};

const ARG: &str = "LLM_INVALID_ARGUMENT";

/// Texts at least this long are counted with the GIL released.
const DETACH_FROM: usize = 16 * 1024;

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "llm", |m| {
        m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
        m.add_function(wrap_pyfunction!(count_many, m)?)?;
        m.add_function(wrap_pyfunction!(json_text, m)?)?;
        m.add_function(wrap_pyfunction!(check_encoding, m)?)?;
        m.add_function(wrap_pyfunction!(choose, m)?)?;
        m.add_class::<CountSession>()?;
        Ok(())
    })
}

fn tokenizer(py: Python<'_>, encoding: Option<&Bound<'_, PyAny>>) -> PyResult<Tokenizer> {
    let name = match encoding {
        None => "o200k_base",
        Some(e) => crate::errors::str_arg(py, Format::Llm, ARG, "encoding", e)?,
    };
    Tokenizer::from_name(name).py_err(py)
}

/// The text as UTF-8. A lone surrogate becomes U+FFFD, as tiktoken's
/// `encode_ordinary` replaces it (`encode("utf-16", "surrogatepass")` then
/// `decode("utf-16", "replace")`); the type is checked, never a method called.
fn text_arg<'a>(py: Python<'_>, obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<std::borrow::Cow<'a, str>> {
    unsafe {
        if pyo3::ffi::PyUnicode_Check(obj.as_ptr()) == 0 {
            return Err(type_error(py, ARG, format!("{name} must be a str, not {}", crate::pyjson::type_name(obj))));
        }
        if let Some(s) = crate::pyjson::pystr_utf8(obj.as_ptr()) {
            return Ok(std::borrow::Cow::Borrowed(s));
        }
    }
    let str_type = py.get_type::<PyString>();
    let utf16 = str_type.call_method1("encode", (obj, "utf-16-le", "surrogatepass"))?;
    let bytes = utf16.cast::<PyBytes>()?.as_bytes();
    let units: Vec<u16> = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    Ok(std::borrow::Cow::Owned(String::from_utf16_lossy(&units)))
}

fn count(py: Python<'_>, t: &Tokenizer, text: &str) -> PyResult<usize> {
    if text.len() >= DETACH_FROM {
        py.detach(|| t.count(text)).py_err(py)
    } else {
        t.count(text).py_err(py)
    }
}

/// The number of tokens of ``text``.
#[pyfunction]
#[pyo3(signature = (text, encoding=None))]
fn count_tokens(py: Python<'_>, text: &Bound<'_, PyAny>, encoding: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    let t = tokenizer(py, encoding)?;
    let text = text_arg(py, text, "text")?;
    count(py, &t, &text)
}

/// The numbers of tokens of several texts. Large ones are counted at once on
/// two threads, with the GIL released.
#[pyfunction]
#[pyo3(signature = (texts, encoding=None))]
fn count_many(py: Python<'_>, texts: &Bound<'_, PyAny>, encoding: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<usize>> {
    let t = tokenizer(py, encoding)?;
    let list = texts.cast::<PyList>().map_err(|_| type_error(py, ARG, format!("texts must be a list of str, not {}", crate::pyjson::type_name(texts))))?;
    // Copy the items out first: the list may change once the GIL is released.
    let items: Vec<Bound<'_, PyAny>> = list.iter().collect();
    let texts = items.iter().enumerate().map(|(i, o)| text_arg(py, o, &format!("texts[{i}]"))).collect::<PyResult<Vec<_>>>()?;
    let total: usize = texts.iter().map(|s| s.len()).sum();
    let texts: Vec<&str> = texts.iter().map(|s| s.as_ref()).collect();
    if total < DETACH_FROM {
        return t.count_many(&texts).py_err(py);
    }
    py.detach(|| t.count_many(&texts)).py_err(py)
}

/// ``JSON.stringify(value)`` (``indent`` 0) or ``JSON.stringify(value, null,
/// indent)``: the JSON renderings ``encode_for_llm`` weighs. JSON types and
/// tuples only (``PolywireTypeError`` otherwise).
#[pyfunction]
#[pyo3(signature = (value, indent=None))]
fn json_text<'py>(py: Python<'py>, value: &Bound<'py, PyAny>, indent: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyString>> {
    let indent = match indent {
        Some(i) => crate::errors::int_arg(py, Format::Llm, ARG, "indent", i, 0, 10)? as usize,
        None => 0,
    };
    let mut compact = Vec::with_capacity(256);
    crate::pyjson::write(&mut compact, value)?;
    let text = if indent == 0 {
        compact
    } else {
        let mut out = Vec::with_capacity(compact.len() * 2);
        polywire::json::indent_compact(&compact, indent, &mut out);
        out
    };
    match std::str::from_utf8(&text) {
        Ok(s) => Ok(PyString::new(py, s)),
        // A lone surrogate in a string is written as its `\udxxx` escape,
        // so the text is UTF-8; this is only a guard.
        Err(_) => Err(value_error(py, Format::Llm, ARG, "the JSON text is not UTF-8")),
    }
}

/// ``encode_for_llm``'s work for a value with no ``default`` and unsorted
/// keys, in one call: ``value`` rendered in each format of ``names`` (as
/// ``toon.dumps(value, indent_size=indent, delimiter=...)`` and
/// ``json_text`` write them), each counted from when it is made (on the
/// helper thread too) while the next is rendered. Returns the index of the
/// fewest tokens (the first of equals), that text, and every count. The
/// renderings stay UTF-8: only the chosen one becomes a ``str``, and none
/// is encoded back to UTF-8 to be counted.
#[pyfunction]
fn choose<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    names: Vec<String>,
    indent: &Bound<'py, PyAny>,
    encoding: &Bound<'py, PyAny>,
) -> PyResult<(usize, Bound<'py, PyAny>, Vec<usize>)> {
    use polywire::toon::Delimiter;
    let mut session = tokenizer(py, Some(encoding))?.session();
    let order = polywire::tokens::render_order(&names);
    let mut compact: Option<Vec<u8>> = None;
    for (k, &i) in order.iter().enumerate() {
        let name = &names[i];
        let text = match name.as_str() {
            "toon" => crate::toon::encode_text(py, value, indent, Delimiter::Comma)?,
            "toon-tab" => crate::toon::encode_text(py, value, indent, Delimiter::Tab)?,
            "toon-pipe" => crate::toon::encode_text(py, value, indent, Delimiter::Pipe)?,
            "json" | "json-pretty" => {
                if compact.is_none() {
                    let mut out = Vec::with_capacity(256);
                    crate::pyjson::write(&mut out, value)?;
                    compact = Some(out);
                }
                let bytes = if name == "json" {
                    // Moved into the session, not copied, unless
                    // "json-pretty" still needs it.
                    if order[k + 1..].iter().any(|&j| names[j] == "json-pretty") {
                        compact.clone().unwrap_or_default()
                    } else {
                        compact.take().unwrap_or_default()
                    }
                } else {
                    let compact = compact.as_deref().unwrap_or_default();
                    let mut out = Vec::with_capacity(compact.len() * 2);
                    polywire::json::indent_compact(compact, 2, &mut out);
                    out
                };
                // Lone surrogates are written as `\udxxx` escapes, so the
                // text is UTF-8; this is only a guard.
                String::from_utf8(bytes).map_err(|_| value_error(py, Format::Llm, ARG, "the JSON text is not UTF-8"))?
            }
            other => return Err(value_error(py, Format::Llm, ARG, format!("no format named {other:?}"))),
        };
        session.add_as(i, text);
    }
    let counts = py.detach(|| session.finish()).py_err(py)?;
    let best = (0..counts.len()).min_by_key(|&i| (counts[i], i)).unwrap_or(0);
    let text = crate::pyjson::new_str(py, session.text(best).unwrap_or_default())?;
    Ok((best, text, counts))
}

/// Raise unless ``encoding`` names a built-in encoding or a readable
/// ``tokenizer.json`` (which is then loaded and kept).
#[pyfunction]
fn check_encoding(py: Python<'_>, encoding: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(tokenizer(py, Some(encoding))?.name().into_owned())
}

/// Texts counted as they are added, on the helper thread too
/// ([`polywire::tokens::CountSession`]): `encode_for_llm` adds each
/// candidate as soon as it is rendered, so counting overlaps rendering the
/// next, and takes the counts at the end (with the GIL released).
#[pyclass(module = "polywire._polywire.llm", name = "CountSession")]
struct CountSession {
    session: Option<polywire::tokens::CountSession>,
}

#[pymethods]
impl CountSession {
    #[new]
    #[pyo3(signature = (encoding=None))]
    fn new(py: Python<'_>, encoding: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(CountSession { session: Some(tokenizer(py, encoding)?.session()) })
    }

    /// Count ``text`` too (copied: counting may go on after this returns).
    fn add(&mut self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<()> {
        let text = text_arg(py, text, "text")?.into_owned();
        match self.session.as_mut() {
            Some(s) => {
                s.add(text);
                Ok(())
            }
            None => Err(value_error(py, Format::Llm, ARG, "the session is finished")),
        }
    }

    /// The counts of the texts added, in order; the session is then over.
    fn finish(&mut self, py: Python<'_>) -> PyResult<Vec<usize>> {
        let Some(session) = self.session.take() else {
            return Err(value_error(py, Format::Llm, ARG, "the session is finished"));
        };
        py.detach(|| session.finish()).py_err(py)
    }
}
