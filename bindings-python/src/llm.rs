//! `_polywire.llm`: exact token counts (`polywire::tokens`) and the JSON
//! renderings `polywire.llm` weighs against TOON. The choice of rendering is
//! in the Python package; here are the parts that walk text or values.

use polywire::tokens::Tokenizer;
use polywire::toon::Delimiter;
use polywire::Format;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

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
        m.add_function(wrap_pyfunction!(encode_fast, m)?)?;
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
    let list = texts
        .cast::<PyList>()
        .map_err(|_| type_error(py, ARG, format!("texts must be a list of str, not {}", crate::pyjson::type_name(texts))))?;
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

/// A rendering `encode_for_llm` weighs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rendering {
    Toon(Delimiter),
    Json,
    JsonPretty,
}

impl Rendering {
    const ALL: [Rendering; 5] = [
        Rendering::Toon(Delimiter::Comma),
        Rendering::Toon(Delimiter::Tab),
        Rendering::Toon(Delimiter::Pipe),
        Rendering::Json,
        Rendering::JsonPretty,
    ];

    fn from_name(name: &str) -> Option<Rendering> {
        Rendering::ALL.into_iter().find(|r| r.as_ref() == name)
    }

    /// Its name as an interned `str`, made once.
    fn py_name<'py>(self, py: Python<'py>) -> &'py Bound<'py, PyString> {
        match self {
            Rendering::Toon(Delimiter::Comma) => pyo3::intern!(py, "toon"),
            Rendering::Toon(Delimiter::Tab) => pyo3::intern!(py, "toon-tab"),
            Rendering::Toon(Delimiter::Pipe) => pyo3::intern!(py, "toon-pipe"),
            Rendering::Json => pyo3::intern!(py, "json"),
            Rendering::JsonPretty => pyo3::intern!(py, "json-pretty"),
        }
    }
}

impl AsRef<str> for Rendering {
    fn as_ref(&self) -> &str {
        match self {
            Rendering::Toon(Delimiter::Comma) => "toon",
            Rendering::Toon(Delimiter::Tab) => "toon-tab",
            Rendering::Toon(Delimiter::Pipe) => "toon-pipe",
            Rendering::Json => "json",
            Rendering::JsonPretty => "json-pretty",
        }
    }
}

/// ``encode_for_llm``'s work for a value with no ``default`` and unsorted
/// keys, in one call: ``value`` rendered in each format of ``names`` (as
/// ``toon.dumps(value, indent_size=indent, delimiter=...)`` and
/// ``json_text`` write them), each counted from when it is made (on the
/// helper thread too) while the next is rendered, and compact JSON from
/// while it is written, in parts. Returns the index of the
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
    let renderings = names
        .iter()
        .map(|n| Rendering::from_name(n).ok_or_else(|| value_error(py, Format::Llm, ARG, format!("no format named {n:?}"))))
        .collect::<PyResult<Vec<_>>>()?;
    render_and_count(py, value, &renderings, indent, tokenizer(py, Some(encoding))?)
}

fn render_and_count<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    renderings: &[Rendering],
    indent: &Bound<'py, PyAny>,
    tokenizer: Tokenizer,
) -> PyResult<(usize, Bound<'py, PyAny>, Vec<usize>)> {
    let mut session = tokenizer.session();
    let order = polywire::tokens::render_order(renderings);
    let mut compact: Option<Vec<u8>> = None;
    for (k, &i) in order.iter().enumerate() {
        // The bytes of the text counted already, in parts.
        let mut counted = 0;
        let text = match renderings[i] {
            Rendering::Toon(delimiter) => crate::toon::encode_text(py, value, indent, delimiter, RenderBuffers::take())?,
            r @ (Rendering::Json | Rendering::JsonPretty) => {
                if compact.is_none() {
                    let mut out = RenderBuffers::take().into_bytes();
                    if r == Rendering::Json && session.takes_parts() {
                        // Compact JSON comes first (see `render_order`) and
                        // is often the longest text: the helper counts it
                        // while it is written, not after (`write_in_parts`).
                        let mut hand = |written: &[u8]| {
                            if let Some(cut) = polywire::tokens::last_cut(written, counted, PART_CUT_WITHIN) {
                                if let Ok(part) = std::str::from_utf8(&written[counted..cut]) {
                                    session.add_part(i, part.to_owned());
                                    counted = cut;
                                }
                            }
                        };
                        if !crate::pyjson::write_in_parts(&mut out, value, PART, &mut hand)? {
                            session.forget_parts(i);
                            counted = 0;
                        }
                    } else {
                        crate::pyjson::write(&mut out, value)?;
                    }
                    compact = Some(out);
                }
                let bytes = if r == Rendering::Json {
                    // Moved into the session, not copied, unless
                    // "json-pretty" still needs it.
                    if order[k + 1..].iter().any(|&j| renderings[j] == Rendering::JsonPretty) {
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
        };
        session.add_counted(i, text, counted);
    }
    let counts = py.detach(|| session.finish()).py_err(py)?;
    let best = (0..counts.len()).min_by_key(|&i| (counts[i], i)).unwrap_or(0);
    let text = crate::pyjson::new_str(py, session.text(best).unwrap_or_default())?;
    session.into_texts().for_each(RenderBuffers::give);
    Ok((best, text, counts))
}

/// Compact JSON is handed to the helper thread in parts of about this many
/// bytes as it is written...
const PART: usize = 8 * 1024;
/// ...each ending at the last cut point of its last this many bytes.
const PART_CUT_WITHIN: usize = 1024;

/// Buffers for the renderings, kept per thread from call to call, as
/// `toon.dumps` keeps its own: writing into a buffer that is already large
/// enough saves the reallocations (and copies) of one that grows, about
/// 1 µs of the 19 µs call for a 3 KB value (the benchmarks' config).
struct RenderBuffers;

thread_local! {
    static RENDER_BUFFERS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl RenderBuffers {
    /// At most this many are kept (the default call renders two texts)...
    const KEEP: usize = 2;
    /// ...of at most this capacity each (as `toon.dumps`'s).
    const KEEP_UP_TO: usize = 1 << 20;

    /// An empty buffer.
    fn take() -> String {
        RENDER_BUFFERS.with(|b| b.try_borrow_mut().ok().and_then(|mut b| b.pop())).unwrap_or_default()
    }

    /// Keep `text`'s buffer for a next call.
    fn give(mut text: String) {
        if text.capacity() > Self::KEEP_UP_TO {
            return;
        }
        text.clear();
        RENDER_BUFFERS.with(|b| {
            if let Ok(mut b) = b.try_borrow_mut() {
                if b.len() < Self::KEEP {
                    b.push(text);
                }
            }
        });
    }
}

/// The renderings ``formats`` and ``delimiter`` name, as
/// ``polywire.llm._candidates`` expands them (``"toon"``: each delimiter,
/// or ``delimiter``'s; each once, in order), for an exact tuple or list
/// of exact ``str`` and a delimiter that is ``None`` or an exact ``str``;
/// ``None`` for anything else, which that function checks (and reports).
fn expand_formats(formats: &Bound<'_, PyAny>, delimiter: &Bound<'_, PyAny>) -> Option<Vec<Rendering>> {
    let delimiter = if delimiter.is_none() {
        None
    } else {
        let d = delimiter.cast_exact::<PyString>().ok()?;
        Some(match d.to_str().ok()? {
            "," => Delimiter::Comma,
            "\t" => Delimiter::Tab,
            "|" => Delimiter::Pipe,
            _ => return None,
        })
    };
    let mut out: Vec<Rendering> = Vec::with_capacity(4);
    let mut push = |r: Rendering| {
        if !out.contains(&r) {
            out.push(r);
        }
    };
    let mut take = |f: Bound<'_, PyAny>| -> Option<()> {
        let name = f.cast_exact::<PyString>().ok()?;
        match Rendering::from_name(name.to_str().ok()?)? {
            Rendering::Toon(Delimiter::Comma) => match delimiter {
                Some(d) => push(Rendering::Toon(d)),
                None => [Delimiter::Comma, Delimiter::Tab, Delimiter::Pipe].into_iter().for_each(|d| push(Rendering::Toon(d))),
            },
            r => push(r),
        }
        Some(())
    };
    // Items are read one at a time (a list could change meanwhile only if
    // Python code ran, and none does here).
    if let Ok(t) = formats.cast_exact::<PyTuple>() {
        for f in t.iter() {
            take(f)?;
        }
    } else if let Ok(l) = formats.cast_exact::<PyList>() {
        for f in l.iter() {
            take(f)?;
        }
    } else {
        return None;
    }
    (!out.is_empty()).then_some(out)
}

/// ``encode_for_llm(value, formats=..., delimiter=..., indent=...,
/// encoding=...)`` with no ``default``, unsorted keys and ``strategy``
/// ``"tokens"``, in one call: the ``LlmText`` (an instance of ``cls``,
/// made without its ``__init__``), or ``None`` when any
/// argument is not what the common case takes or the value is not plain
/// JSON. The caller then goes the general way, which checks the arguments
/// and reports errors as ``dumps`` and ``json_text`` do. This saves the
/// general way's Python-level work (its `formats` checks, its result's
/// frozen-dataclass ``__init__``), about 1.2 µs a call: half of a tiny
/// value's, a sixteenth of a 3 KB one's.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn encode_fast<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    formats: &Bound<'py, PyAny>,
    delimiter: &Bound<'py, PyAny>,
    indent: &Bound<'py, PyAny>,
    encoding: &Bound<'py, PyAny>,
    cls: &Bound<'py, PyType>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(renderings) = expand_formats(formats, delimiter) else { return Ok(None) };
    if !encoding.is_exact_instance_of::<PyString>() {
        return Ok(None);
    }
    let Ok(tokenizer) = tokenizer(py, Some(encoding)) else { return Ok(None) };
    // The encoding's canonical name, or the path of a `tokenizer.json` as given.
    let reported = match &tokenizer {
        Tokenizer::Bpe(b) => match b.encoding() {
            polywire::tokens::Encoding::O200kBase => pyo3::intern!(py, "o200k_base").clone().into_any(),
            polywire::tokens::Encoding::Cl100kBase => pyo3::intern!(py, "cl100k_base").clone().into_any(),
        },
        Tokenizer::Hf(_) => encoding.clone(),
    };
    let Ok((best, text, counts)) = render_and_count(py, value, &renderings, indent, tokenizer) else {
        return Ok(None);
    };
    let candidates = PyDict::new(py);
    for (r, n) in renderings.iter().zip(&counts) {
        candidates.set_item(r.py_name(py), n)?;
    }
    // `object.__new__(cls)`, then the fields straight into its `__dict__`
    // (a frozen dataclass's `__init__` sets each through
    // `object.__setattr__`).
    // SAFETY: `object.__new__` with an empty argument tuple, as Python
    // calls it; a null result is an error set, fetched here.
    let obj = unsafe {
        let args = PyTuple::empty(py);
        let new = (*std::ptr::addr_of!(pyo3::ffi::PyBaseObject_Type)).tp_new;
        let ptr = match new {
            Some(new) => new(cls.as_type_ptr(), args.as_ptr(), std::ptr::null_mut()),
            None => std::ptr::null_mut(),
        };
        if ptr.is_null() {
            return Err(PyErr::take(py).unwrap_or_else(|| value_error(py, Format::Llm, ARG, "could not make the result")));
        }
        Bound::from_owned_ptr(py, ptr)
    };
    let fields = obj.getattr(pyo3::intern!(py, "__dict__"))?;
    let fields = fields.cast::<PyDict>()?;
    fields.set_item(pyo3::intern!(py, "text"), text)?;
    fields.set_item(pyo3::intern!(py, "format"), renderings[best].py_name(py))?;
    fields.set_item(pyo3::intern!(py, "tokens"), counts[best])?;
    fields.set_item(pyo3::intern!(py, "candidates"), candidates)?;
    fields.set_item(pyo3::intern!(py, "encoding"), reported)?;
    fields.set_item(pyo3::intern!(py, "rule"), py.None())?;
    Ok(Some(obj))
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
