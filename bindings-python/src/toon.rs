//! `_polywire.toon`: TOON text. The public wrapper is `polywire/toon.py`.
//!
//! Encoding walks Python objects directly through the core's
//! [`EncodeValue`] trait (no intermediate tree). It runs in two passes:
//!
//! 1. a check pass over the whole value, which is the only place Python code
//!    may run: values that are not JSON-model objects (dataclasses, `Decimal`,
//!    sets, `default`, dicts with non-`str` keys, every dict with
//!    `sort_keys`) are converted once by `polywire._toon_host.convert` and
//!    remembered by identity; strings are checked for lone surrogates;
//! 2. the core encoder's walk, over borrowed pointers: since no Python code
//!    runs during it, nothing can be freed or mutated under it.
//!
//! Errors of the check pass name the path of the value (`$.users[0].tags`).
//!
//! Decoding builds Python objects as the core decoder reports values
//! ([`PyBuilder`]); a second builder, used only when a `parse_*` or
//! `object_*` hook is given, calls the hooks.

use crate::errors::{to_pyerr, to_pyerr_as, ToonEncodeError};
use crate::pydict::DictIter;
use crate::pyjson::{new_str, type_name, BuildError, PyBuilder};
use polywire::json::{array_index, Builder};
use polywire::toon::decode::{decode_bytes_with, decode_with, decode_with_builder_checked_keys, DecodeOptions, ExpandPaths};
use polywire::toon::encode::{encode_into, EncodeOptions, EncodeValue, KeyFolding, Kind, MAX_DEPTH, MAX_INDENT};
use polywire::toon::Delimiter;
use polywire::{Error, Format};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::os::raw::c_int;
use std::ptr::addr_of_mut;
use std::vec::Drain;

mod stream;

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::submodule(parent, "toon", |m| {
        m.add_function(wrap_pyfunction!(dumps, m)?)?;
        m.add_function(wrap_pyfunction!(loads, m)?)?;
        m.add_function(wrap_pyfunction!(format_number, m)?)?;
        m.add_class::<stream::StreamDecoder>()?;
        m.add("MAX_DEPTH", MAX_DEPTH)?;
        m.add("MAX_INDENT", MAX_INDENT)?;
        Ok(())
    })
}

// ---------------------------------------------------------------- options

const ARG: &str = "TOON_INVALID_ARGUMENT";

/// A wrong-type option: `PolywireTypeError` with `TOON_INVALID_ARGUMENT`.
#[cold]
fn targ(msg: impl Into<String>) -> PyErr {
    Python::attach(|py| crate::errors::type_error(py, ARG, msg))
}

/// A bad option value: `ToonEncodeError` (for `dumps`) or
/// `ToonDecodeError` (for `loads`) with `TOON_INVALID_ARGUMENT`.
#[cold]
fn varg(encode: bool, msg: impl Into<String>) -> PyErr {
    Python::attach(|py| {
        let e = Error::new(Format::Toon, ARG, msg.into());
        if encode {
            to_pyerr_as(py, py.get_type::<ToonEncodeError>(), e)
        } else {
            to_pyerr(py, e)
        }
    })
}

/// `indent_size` (or its older spelling `indent`): an int, not a bool.
/// (`min` is 0 for `dumps`, 1 for `loads`.)
pub(crate) fn indent_arg(indent_size: Option<&Bound<'_, PyAny>>, indent: Option<&Bound<'_, PyAny>>, min: usize) -> PyResult<usize> {
    let encode = min == 0;
    let v = match (indent_size, indent) {
        // Compared as ints only (`==` on other objects could run Python code).
        (Some(a), Some(b))
            if !(a.is_exact_instance_of::<pyo3::types::PyInt>() && b.is_exact_instance_of::<pyo3::types::PyInt>() && a.eq(b)?) =>
        {
            return Err(targ("indent_size and indent (its older name) were both given, with different values"))
        }
        (Some(a), _) => a,
        (None, Some(b)) => b,
        (None, None) => return Ok(2),
    };
    if v.is_instance_of::<pyo3::types::PyBool>() || !v.is_instance_of::<pyo3::types::PyInt>() {
        return Err(targ(format!("indent_size must be an int, not {}", type_name(v))));
    }
    let n: i64 = v.extract().unwrap_or(i64::MAX);
    if n < min as i64 {
        return Err(varg(encode, format!("indent_size must be at least {min}, got {n}")));
    }
    if n > MAX_INDENT as i64 {
        return Err(varg(encode, format!("indent_size must be at most {MAX_INDENT}, got {n}")));
    }
    Ok(n as usize)
}

fn delimiter_arg(d: &Bound<'_, PyAny>) -> PyResult<Delimiter> {
    // `Delimiter` members are `str` subclasses holding the character.
    if let Some(s) = d.cast::<PyString>().ok().and_then(|s| unsafe { crate::pyjson::pystr_utf8(s.as_ptr()) }) {
        let mut chars = s.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if let Some(delim) = Delimiter::from_char(c) {
                return Ok(delim);
            }
        }
    }
    let msg = format!("delimiter must be ',', '\\t', or '|', got {}", crate::errors::repr(d));
    Err(if d.is_instance_of::<PyString>() { varg(true, msg) } else { targ(msg) })
}

/// A hook (`default`, `parse_float`, ...): callable, or None (left out).
fn hook_arg(name: &str, hook: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match hook {
        Some(h) if !h.is_callable() => Err(targ(format!("{name} must be callable (or None), not {}", type_name(h)))),
        _ => Ok(()),
    }
}

/// `"off"` / `"safe"` (or None for off), for key_folding and expand_paths.
fn safe_arg(name: &str, v: Option<&Bound<'_, PyAny>>, encode: bool) -> PyResult<bool> {
    let Some(v) = v else { return Ok(false) };
    if v.is_none() {
        return Ok(false);
    }
    match v.extract::<String>().ok().as_deref() {
        Some("off") => Ok(false),
        Some("safe") => Ok(true),
        _ => {
            let msg = format!("{name} must be 'off' or 'safe', got {}", crate::errors::repr(v));
            Err(if v.is_instance_of::<PyString>() { varg(encode, msg) } else { targ(msg) })
        }
    }
}

/// Number-to-string as the encoder writes numbers (ECMAScript form); used by
/// the host module for float mapping keys.
#[pyfunction]
fn format_number(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let mut out = Vec::new();
    polywire::json::write_f64(&mut out, f);
    String::from_utf8(out).unwrap_or_default()
}

// ---------------------------------------------------------------- encoding

/// An error of the walk: a Python exception or a core error; or, in the
/// first walk before any check, a value that needs the check pass.
enum EncErr {
    /// Boxed: the walk's results stay small (a `PyErr` is several words).
    Py(Box<PyErr>),
    Codec(Error),
    NeedsCheck,
}

impl From<Error> for EncErr {
    fn from(e: Error) -> Self {
        EncErr::Codec(e)
    }
}

impl From<PyErr> for EncErr {
    #[cold]
    fn from(e: PyErr) -> Self {
        EncErr::Py(Box::new(e))
    }
}

impl EncErr {
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            EncErr::Py(e) => *e,
            EncErr::Codec(e) => to_pyerr_as(py, py.get_type::<ToonEncodeError>(), e),
            EncErr::NeedsCheck => value_changed_error(),
        }
    }
}

/// A value converted by the host module, kept with its original (so the
/// original's address cannot be reused during the call).
struct Converted<'py> {
    _original: Bound<'py, PyAny>,
    value: Bound<'py, PyAny>,
    /// `value` is a `str` to write verbatim as a number (a Decimal).
    number: bool,
}

struct Ctx<'py> {
    py: Python<'py>,
    default: Option<Bound<'py, PyAny>>,
    sort_keys: bool,
    /// Conversions by the address of the original object.
    converted: HashMap<usize, Converted<'py>>,
    /// Whether some dict was converted (then dicts are looked up too).
    dicts_converted: bool,
    /// Whether the check pass ran. Before, the walk stops at the first value
    /// that needs it (a conversion, a non-`str` key, a lone surrogate).
    checked: bool,
    /// The decimal `str`s of ints beyond 64 bits met by the walk, kept
    /// for the call: the encoder borrows their text.
    big_digits: std::cell::RefCell<Vec<Bound<'py, PyAny>>>,
}

// Tags of `polywire._toon_host.convert` results.
const HOST_VALUE: u8 = 0;
const HOST_NUMBER: u8 = 1;
const HOST_UNSUPPORTED: u8 = 2;
const HOST_BAD_KEY: u8 = 3;
const HOST_DUPLICATE_KEY: u8 = 4;

static HOST: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn host_convert<'py>(py: Python<'py>) -> PyResult<&'py Bound<'py, PyAny>> {
    let f = HOST.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let m = py.import("polywire._toon_host")?;
        // The host formats float keys with the encoder's number form.
        let native = py.import("polywire._polywire")?.getattr("toon")?;
        m.setattr("_format_number", native.getattr("format_number")?)?;
        Ok(m.getattr("convert")?.unbind())
    })?;
    Ok(f.bind(py))
}

/// One step of a path, for error messages.
enum Seg {
    Index(usize),
    Key(String),
}

/// An error found by the check pass, located by the path built while the
/// recursion unwinds.
enum Located {
    Unsupported(String),
    BadKey(String),
    DuplicateKey(String),
    Surrogate(String),
}

enum CheckErr {
    Plain(EncErr),
    At(Located, Vec<Seg>),
}

impl From<PyErr> for CheckErr {
    fn from(e: PyErr) -> Self {
        CheckErr::Plain(EncErr::Py(Box::new(e)))
    }
}

impl From<Error> for CheckErr {
    fn from(e: Error) -> Self {
        CheckErr::Plain(EncErr::Codec(e))
    }
}

fn path_text(mut segs: Vec<Seg>) -> String {
    segs.reverse();
    let mut s = String::from("$");
    for seg in segs {
        match seg {
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
            Seg::Key(k) => {
                let ident = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if ident {
                    s.push('.');
                    s.push_str(&k);
                } else {
                    let mut q = Vec::new();
                    polywire::json::write_str(&mut q, &k);
                    s.push('[');
                    s.push_str(&String::from_utf8_lossy(&q));
                    s.push(']');
                }
            }
        }
    }
    s
}

impl CheckErr {
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            CheckErr::Plain(e) => e.into_pyerr(py),
            CheckErr::At(what, segs) => {
                let at = path_text(segs);
                match what {
                    Located::Unsupported(t) => crate::errors::type_error(
                        py,
                        "TOON_UNSUPPORTED_TYPE",
                        format!("Object of type {t} is not TOON serializable (at {at})"),
                    ),
                    Located::BadKey(t) => crate::errors::type_error(
                        py,
                        "TOON_UNSUPPORTED_KEY",
                        format!("Keys must be str, int, float, bool or None, not {t} (at {at})"),
                    ),
                    Located::DuplicateKey(k) => {
                        enc_err(py, "TOON_DUPLICATE_KEY", format!("Duplicate key after conversion: {k:?} (at {at})"))
                    }
                    Located::Surrogate(m) => enc_err(py, "TOON_UNPAIRED_SURROGATE", format!("{m} (at {at})")),
                }
            }
        }
    }

    #[inline]
    fn at(mut self, seg: impl FnOnce() -> Seg) -> Self {
        if let CheckErr::At(_, segs) = &mut self {
            segs.push(seg());
        }
        self
    }
}

/// Borrow the UTF-8 form of a `str` (cached by CPython; free for compact
/// ASCII). `None` when it holds lone surrogates.
#[inline]
unsafe fn utf8<'a>(ptr: *mut ffi::PyObject) -> Option<&'a str> {
    // Compact ASCII (most keys and values): the characters are the bytes,
    // right after the object header.
    if ffi::PyUnicode_IS_COMPACT_ASCII(ptr) != 0 {
        let data = ffi::_PyUnicode_COMPACT_DATA(ptr) as *const u8;
        let len = ffi::PyUnicode_GET_LENGTH(ptr) as usize;
        return Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(data, len)));
    }
    crate::pyjson::pystr_utf8(ptr)
}

/// A dict key as text: `None` unless it is an exact `str` without lone
/// surrogates (a dict with other keys is converted first; see [`str_keys`]).
#[inline]
unsafe fn key_str<'a>(key: *mut ffi::PyObject) -> Option<&'a str> {
    if ffi::Py_TYPE(key) != addr_of_mut!(ffi::PyUnicode_Type) {
        return None;
    }
    utf8(key)
}

/// The host's walk of a mapping (Python code) saw it change: CPython's
/// plain `RuntimeError` becomes `ToonEncodeError` `TOON_VALUE_CHANGED` (with
/// the original as its cause). Other errors (a `default` raising) pass.
#[cold]
fn changed_in_host(py: Python<'_>, e: PyErr) -> PyErr {
    let is_change = e.get_type(py).is(py.get_type::<pyo3::exceptions::PyRuntimeError>())
        && e.value(py).str().is_ok_and(|m| m.to_string_lossy().contains("changed"));
    if !is_change {
        return e;
    }
    let typed = enc_err(py, "TOON_VALUE_CHANGED", format!("expected the value to stay unchanged while it is encoded ({})", e.value(py)));
    typed.set_cause(py, Some(e));
    typed
}

#[cold]
fn enc_err(py: Python<'_>, code: &'static str, msg: String) -> PyErr {
    to_pyerr_as(py, py.get_type::<ToonEncodeError>(), Error::new(Format::Toon, code, msg))
}

#[cold]
fn surrogate(py: Python<'_>, s: *mut ffi::PyObject) -> CheckErr {
    let msg = (|| -> PyResult<String> {
        let m = py.import("polywire._toon_host")?;
        let s = unsafe { Bound::from_borrowed_ptr(py, s) };
        m.getattr("surrogate_message")?.call1((s,))?.extract()
    })()
    .unwrap_or_else(|_| "String contains an unpaired surrogate".into());
    CheckErr::At(Located::Surrogate(msg), Vec::new())
}

/// Kinds the encoder walks without conversion.
#[derive(Clone, Copy, PartialEq)]
enum Model {
    Scalar,
    Str,
    Seq,
    Dict,
    Other,
}

#[inline]
fn model_of(ptr: *mut ffi::PyObject) -> Model {
    unsafe {
        let tp = ffi::Py_TYPE(ptr);
        if tp == addr_of_mut!(ffi::PyUnicode_Type) {
            Model::Str
        } else if tp == addr_of_mut!(ffi::PyLong_Type)
            || tp == addr_of_mut!(ffi::PyFloat_Type)
            || tp == addr_of_mut!(ffi::PyBool_Type)
            || ptr == ffi::Py_None()
        {
            Model::Scalar
        } else if tp == addr_of_mut!(ffi::PyList_Type) || tp == addr_of_mut!(ffi::PyTuple_Type) {
            Model::Seq
        } else if tp == addr_of_mut!(ffi::PyDict_Type) {
            Model::Dict
        } else {
            model_of_subclass(ptr)
        }
    }
}

#[cold]
#[inline(never)]
fn model_of_subclass(ptr: *mut ffi::PyObject) -> Model {
    unsafe {
        if ffi::PyUnicode_Check(ptr) != 0 {
            Model::Str
        } else if ffi::PyLong_Check(ptr) != 0 {
            // An int subclass is walked as is unless it needs more than 64
            // bits (its digits then come from a conversion to int).
            let mut overflow: c_int = 0;
            ffi::PyLong_AsLongLongAndOverflow(ptr, &mut overflow);
            if overflow == 0 {
                Model::Scalar
            } else {
                Model::Other
            }
        } else if ffi::PyFloat_Check(ptr) != 0 {
            Model::Scalar
        } else if ffi::PyList_Check(ptr) != 0 || ffi::PyTuple_Check(ptr) != 0 {
            Model::Seq
        } else {
            // A dict subclass is converted through its `items()`: an
            // `OrderedDict`'s order (after `move_to_end`) is not its
            // table's order, and a subclass may define its own items.
            Model::Other
        }
    }
}

/// Whether a dict's keys are all exact `str`s (else it is converted). Not
/// subclasses: the walk looks keys up (`PyDict_GetItemWithError`), which
/// calls a `str` subclass's `__eq__` (Python code, which could free what the
/// walk borrows); a converted dict has exact `str` keys.
#[inline]
unsafe fn str_keys(dict: *mut ffi::PyObject) -> bool {
    DictIter::new(dict).all(|(key, _)| ffi::Py_TYPE(key) == addr_of_mut!(ffi::PyUnicode_Type))
}

impl<'py> Ctx<'py> {
    /// The check pass over `obj` (nesting level `depth`).
    fn check(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> Result<(), CheckErr> {
        let ptr = obj.as_ptr();
        match model_of(ptr) {
            Model::Scalar => Ok(()),
            Model::Str => match unsafe { utf8(ptr) } {
                Some(_) => Ok(()),
                None => Err(surrogate(self.py, ptr)),
            },
            Model::Seq => self.check_seq(obj, depth),
            Model::Dict if !self.sort_keys && unsafe { str_keys(ptr) } => self.check_dict(obj, depth),
            Model::Dict | Model::Other => self.check_converted(obj, depth),
        }
    }

    fn enter(depth: usize) -> Result<(), CheckErr> {
        if depth >= MAX_DEPTH {
            return Err(Error::new(
                Format::Toon,
                "TOON_TOO_DEEP",
                format!("expected values nested at most {MAX_DEPTH} levels deep (is the value circular?)"),
            )
            .into());
        }
        Ok(())
    }

    fn check_seq(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> Result<(), CheckErr> {
        Self::enter(depth)?;
        let ptr = obj.as_ptr();
        let mut i = 0;
        loop {
            // Re-read the length: a conversion may run Python code.
            let item = unsafe {
                if ffi::PyList_Check(ptr) != 0 {
                    if i >= ffi::PyList_GET_SIZE(ptr) as usize {
                        break;
                    }
                    ffi::PyList_GET_ITEM(ptr, i as ffi::Py_ssize_t)
                } else {
                    if i >= ffi::PyTuple_GET_SIZE(ptr) as usize {
                        break;
                    }
                    ffi::PyTuple_GET_ITEM(ptr, i as ffi::Py_ssize_t)
                }
            };
            if model_of(item) != Model::Scalar {
                let item = unsafe { Bound::from_borrowed_ptr(self.py, item) };
                self.check(&item, depth + 1).map_err(|e| e.at(|| Seg::Index(i)))?;
            }
            i += 1;
        }
        Ok(())
    }

    fn check_dict(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> Result<(), CheckErr> {
        Self::enter(depth)?;
        let ptr = obj.as_ptr();
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // Strong references while a value is checked: a conversion may run
        // Python code that changes the dict (the walk then fails cleanly).
        while unsafe { ffi::PyDict_Next(ptr, &mut pos, &mut key, &mut value) } != 0 {
            let (k, v) = unsafe { (Bound::from_borrowed_ptr(self.py, key), Bound::from_borrowed_ptr(self.py, value)) };
            let Some(ks) = (unsafe { utf8(k.as_ptr()) }) else {
                return Err(surrogate(self.py, k.as_ptr()));
            };
            if !matches!(model_of(v.as_ptr()), Model::Scalar) {
                self.check(&v, depth + 1).map_err(|e| e.at(|| Seg::Key(ks.to_owned())))?;
            }
        }
        Ok(())
    }

    /// Convert `obj` (repeatedly, while the result still needs it), remember
    /// the result, and check it.
    #[cold]
    fn check_converted(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> Result<(), CheckErr> {
        let key = obj.as_ptr() as usize;
        if let Some(c) = self.converted.get(&key) {
            if c.number {
                return Ok(());
            }
            let v = c.value.clone();
            return self.check_model(&v, depth);
        }
        let convert = host_convert(self.py)?;
        let mut cur = obj.clone();
        for _ in 0..MAX_DEPTH {
            let (tag, payload): (u8, Bound<'py, PyAny>) =
                convert.call1((&cur, self.default.as_ref(), self.sort_keys)).map_err(|e| changed_in_host(self.py, e))?.extract()?;
            let located = |what| Err(CheckErr::At(what, Vec::new()));
            let done = match tag {
                HOST_VALUE => match model_of(payload.as_ptr()) {
                    Model::Scalar | Model::Str | Model::Seq => true,
                    Model::Dict => !self.sort_keys && unsafe { str_keys(payload.as_ptr()) },
                    Model::Other => false,
                },
                HOST_NUMBER => {
                    self.converted.insert(key, Converted { _original: obj.clone(), value: payload, number: true });
                    return Ok(());
                }
                HOST_UNSUPPORTED => return located(Located::Unsupported(payload.extract()?)),
                HOST_BAD_KEY => return located(Located::BadKey(payload.extract()?)),
                HOST_DUPLICATE_KEY => return located(Located::DuplicateKey(payload.extract()?)),
                // A dict the host built from a mapping: final.
                _ => true,
            };
            cur = payload;
            if done {
                if model_of(cur.as_ptr()) == Model::Dict {
                    self.dicts_converted = true;
                }
                self.converted.insert(key, Converted { _original: obj.clone(), value: cur.clone(), number: false });
                return self.check_model(&cur, depth);
            }
        }
        Err(CheckErr::Plain(EncErr::Codec(Error::new(
            Format::Toon,
            "TOON_CONVERSION_LOOP",
            "conversions of a value did not end (does default() return values it cannot encode?)",
        ))))
    }

    /// Check a value already in model form (a conversion result).
    fn check_model(&mut self, v: &Bound<'py, PyAny>, depth: usize) -> Result<(), CheckErr> {
        match model_of(v.as_ptr()) {
            Model::Seq => self.check_seq(v, depth),
            Model::Dict => self.check_dict(v, depth),
            _ => self.check(v, depth),
        }
    }
}

/// A borrowed pointer into the checked value, walked by the core encoder.
/// (Two words, so that handles and the walk's results built from them move
/// in registers.) A value converted to a number (a `Decimal`) keeps the
/// original's pointer: [`PyVal::kind`] finds its text among the conversions.
#[derive(Clone, Copy)]
struct PyVal<'a, 'py> {
    ptr: *mut ffi::PyObject,
    ctx: &'a Ctx<'py>,
}

#[cold]
fn value_changed_error() -> PyErr {
    Python::attach(|py| {
        to_pyerr_as(
            py,
            py.get_type::<ToonEncodeError>(),
            Error::new(Format::Toon, "TOON_VALUE_CHANGED", "expected the value to stay unchanged while it is encoded"),
        )
    })
}

impl<'a, 'py> PyVal<'a, 'py> {
    /// The handle of a child object: itself, or its conversion.
    #[inline(always)]
    fn child(&self, p: *mut ffi::PyObject) -> Result<Self, EncErr> {
        let ctx = self.ctx;
        match model_of(p) {
            Model::Scalar | Model::Str | Model::Seq => Ok(PyVal { ptr: p, ctx }),
            Model::Dict if !ctx.dicts_converted => Ok(PyVal { ptr: p, ctx }),
            _ => self.converted(p),
        }
    }

    #[cold]
    fn converted(&self, p: *mut ffi::PyObject) -> Result<Self, EncErr> {
        if !self.ctx.checked {
            return Err(EncErr::NeedsCheck);
        }
        match self.ctx.converted.get(&(p as usize)) {
            Some(c) if c.number => Ok(PyVal { ptr: p, ctx: self.ctx }),
            Some(c) => Ok(PyVal { ptr: c.value.as_ptr(), ctx: self.ctx }),
            None if model_of(p) == Model::Dict => Ok(PyVal { ptr: p, ctx: self.ctx }),
            None => Err(self.unexpected()),
        }
    }

    /// A value the walk cannot take as it is: before the check pass, the
    /// check pass is needed; after it, the value changed (impossible: no
    /// Python code runs during the walk).
    #[cold]
    fn unexpected(&self) -> EncErr {
        if self.ctx.checked {
            EncErr::Codec(Error::new(Format::Toon, "TOON_VALUE_CHANGED", "expected the value to stay unchanged while it is encoded"))
        } else {
            EncErr::NeedsCheck
        }
    }

    #[cold]
    fn big_int(&self) -> Result<Kind<'_>, EncErr> {
        // Exact ints only reach here (big subclasses were converted); their
        // str() runs no Python code.
        unsafe {
            let s = ffi::PyObject_Str(self.ptr);
            if s.is_null() {
                // More digits than CPython converts (4,300 by default).
                let e = PyErr::fetch(self.ctx.py);
                if e.is_instance_of::<pyo3::exceptions::PyValueError>(self.ctx.py) {
                    return Err(EncErr::Codec(Error::new(
                        Format::Toon,
                        "TOON_INTEGER_TOO_LARGE",
                        format!("integer too large to convert: {}", e.value(self.ctx.py)),
                    )));
                }
                return Err(e.into());
            }
            let s = Bound::from_owned_ptr(self.ctx.py, s);
            // The text lives in the `str`, which the context holds until
            // the call ends; `str`s do not change.
            let digits = utf8(s.as_ptr()).unwrap_or("0");
            self.ctx.big_digits.borrow_mut().push(s);
            Ok(Kind::BigInt(digits))
        }
    }

    /// The kind of a value that is no exact built-in: a number conversion
    /// (its text), or a subclass walked as its base type.
    #[cold]
    #[inline(never)]
    fn kind_other(&self) -> Result<Kind<'_>, EncErr> {
        let p = self.ptr;
        if self.ctx.checked {
            if let Some(c) = self.ctx.converted.get(&(p as usize)).filter(|c| c.number) {
                return Ok(Kind::BigInt(unsafe { utf8(c.value.as_ptr()) }.unwrap_or("0")));
            }
        }
        unsafe {
            if ffi::PyUnicode_Check(p) != 0 {
                return utf8(p).map(Kind::Str).ok_or_else(|| self.unexpected());
            }
            if ffi::PyLong_Check(p) != 0 {
                let mut overflow: c_int = 0;
                let v = ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow);
                return if overflow == 0 { Ok(Kind::Int(v)) } else { Err(self.unexpected()) };
            }
            if ffi::PyFloat_Check(p) != 0 {
                return Ok(Kind::Float(ffi::PyFloat_AsDouble(p)));
            }
            if ffi::PyList_Check(p) != 0 || ffi::PyTuple_Check(p) != 0 {
                return Ok(Kind::Array);
            }
        }
        Err(self.unexpected())
    }

    #[inline]
    fn seq_len(&self) -> usize {
        unsafe {
            let tp = ffi::Py_TYPE(self.ptr);
            if tp == addr_of_mut!(ffi::PyList_Type) {
                ffi::PyList_GET_SIZE(self.ptr) as usize
            } else if tp == addr_of_mut!(ffi::PyTuple_Type) {
                ffi::PyTuple_GET_SIZE(self.ptr) as usize
            } else {
                self.seq_len_other()
            }
        }
    }

    #[cold]
    fn seq_len_other(&self) -> usize {
        unsafe {
            if ffi::PyList_Check(self.ptr) != 0 {
                ffi::PyList_GET_SIZE(self.ptr) as usize
            } else if ffi::PyTuple_Check(self.ptr) != 0 {
                ffi::PyTuple_GET_SIZE(self.ptr) as usize
            } else {
                0
            }
        }
    }

    /// Only exact dicts are walked as objects (subclasses are converted).
    #[inline]
    fn is_dict(&self) -> bool {
        unsafe { ffi::Py_TYPE(self.ptr) == addr_of_mut!(ffi::PyDict_Type) }
    }
}

impl<'a, 'py> EncodeValue<'a> for PyVal<'a, 'py> {
    type Error = EncErr;

    #[inline(always)]
    fn kind(&self) -> Result<Kind<'_>, EncErr> {
        let p = self.ptr;
        unsafe {
            let tp = ffi::Py_TYPE(p);
            if tp == addr_of_mut!(ffi::PyUnicode_Type) {
                match utf8(p) {
                    Some(s) => Ok(Kind::Str(s)),
                    None => Err(self.unexpected()),
                }
            } else if tp == addr_of_mut!(ffi::PyLong_Type) {
                let mut overflow: c_int = 0;
                let v = ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow);
                if overflow == 0 {
                    Ok(Kind::Int(v))
                } else {
                    self.big_int()
                }
            } else if tp == addr_of_mut!(ffi::PyDict_Type) {
                Ok(Kind::Object)
            } else if tp == addr_of_mut!(ffi::PyList_Type) || tp == addr_of_mut!(ffi::PyTuple_Type) {
                Ok(Kind::Array)
            } else if tp == addr_of_mut!(ffi::PyFloat_Type) {
                Ok(Kind::Float(ffi::PyFloat_AS_DOUBLE(p)))
            } else if tp == addr_of_mut!(ffi::PyBool_Type) {
                Ok(Kind::Bool(p == ffi::Py_True()))
            } else if p == ffi::Py_None() {
                Ok(Kind::Null)
            } else {
                self.kind_other()
            }
        }
    }

    #[inline]
    fn array_len(&self) -> usize {
        self.seq_len()
    }

    fn array_items(&self) -> impl Iterator<Item = Result<Self, EncErr>> + '_ {
        let n = self.array_len();
        let list = unsafe { ffi::PyList_Check(self.ptr) != 0 };
        (0..n).map(move |i| {
            // The walk runs no Python code, so the length cannot change.
            let item = unsafe {
                if list {
                    ffi::PyList_GET_ITEM(self.ptr, i as ffi::Py_ssize_t)
                } else {
                    ffi::PyTuple_GET_ITEM(self.ptr, i as ffi::Py_ssize_t)
                }
            };
            self.child(item)
        })
    }

    #[inline]
    fn object_len(&self) -> usize {
        if self.is_dict() {
            unsafe { crate::pydict::len(self.ptr) }
        } else {
            0
        }
    }

    fn object_entries(&self) -> impl Iterator<Item = Result<(&'a str, Self), EncErr>> + '_ {
        // No Python code runs during the walk, so the dict cannot change.
        let dict = if self.is_dict() { Some(unsafe { DictIter::new(self.ptr) }) } else { None };
        Entries { dict, of: self }
    }

    fn object_get(&self, key: &str) -> Result<Option<Self>, EncErr> {
        if !self.is_dict() {
            return Ok(None);
        }
        // A row of a small table: comparing the keys' text costs less than
        // making a `str` to look up. A dict whose table may hold keys other
        // than exact `str`s is scanned too: looking a key up in it would call
        // a `str` subclass key's `__eq__`, Python code that could free what
        // the walk borrows.
        if unsafe { crate::pydict::len(self.ptr) <= 16 || !crate::pydict::unicode_keys(self.ptr) } {
            for (k, v) in unsafe { DictIter::new(self.ptr) } {
                match unsafe { key_str(k) } {
                    Some(k) if k == key => return self.child(v).map(Some),
                    Some(_) => {}
                    None => return Err(self.unexpected()),
                }
            }
            return Ok(None);
        }
        let k = new_str(self.ctx.py, key)?;
        unsafe {
            let v = ffi::PyDict_GetItemWithError(self.ptr, k.as_ptr());
            if v.is_null() {
                if !ffi::PyErr_Occurred().is_null() {
                    return Err(PyErr::fetch(self.ctx.py).into());
                }
                return Ok(None);
            }
            self.child(v).map(Some)
        }
    }

    fn object_has_index_key(&self) -> Result<bool, EncErr> {
        if !self.is_dict() {
            return Ok(false);
        }
        for (key, _) in unsafe { DictIter::new(self.ptr) } {
            // Compact ASCII keys: look at the first character in place.
            let Some(k) = (unsafe { key_str(key) }) else { return Err(self.unexpected()) };
            if matches!(k.as_bytes().first(), Some(b'0'..=b'9')) && array_index(k).is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The entries of a dict as the encoder walks them (a named type, so that
/// its `next` is inlined into the walk).
struct Entries<'v, 'a, 'py> {
    dict: Option<DictIter>,
    of: &'v PyVal<'a, 'py>,
}

impl<'v, 'a, 'py> Iterator for Entries<'v, 'a, 'py> {
    type Item = Result<(&'a str, PyVal<'a, 'py>), EncErr>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let (key, value) = self.dict.as_mut()?.next()?;
        let Some(k) = (unsafe { key_str(key) }) else {
            return Some(Err(self.of.unexpected()));
        };
        Some(self.of.child(value).map(|v| (k, v)))
    }
}

thread_local! {
    /// Output buffer kept between calls (fresh when a call is re-entered).
    static OUT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Serialize ``obj`` to a TOON document (no trailing newline), byte for byte
/// as the reference ``@toon-format/toon`` 4.4.0 encodes the same JSON value.
///
/// ``indent_size``: spaces per level (``indent`` is its older name).
/// ``delimiter``: ``","``, ``"\t"`` or ``"|"`` (or a ``Delimiter``).
/// ``default``: called with a value that has no TOON form; returns a
/// replacement or raises ``TypeError``. ``sort_keys``: sort every object's
/// keys. ``key_folding="safe"`` / ``flatten_depth``: fold chains of
/// single-key objects into dotted keys (spec v3, off by default).
#[pyfunction]
#[pyo3(
    signature = (obj, *, indent_size=None, delimiter=None, default=None, sort_keys=None, indent=None, key_folding=None, flatten_depth=None),
    text_signature = "(obj, *, indent_size=2, delimiter=',', default=None, sort_keys=False, indent=None, key_folding='off', flatten_depth=None)"
)]
#[allow(clippy::too_many_arguments)]
fn dumps<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    indent_size: Option<&Bound<'py, PyAny>>,
    delimiter: Option<&Bound<'py, PyAny>>,
    default: Option<Bound<'py, PyAny>>,
    sort_keys: Option<&Bound<'py, PyAny>>,
    indent: Option<&Bound<'py, PyAny>>,
    key_folding: Option<&Bound<'py, PyAny>>,
    flatten_depth: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyString>> {
    let sort_keys = sort_keys.map_or(Ok(false), |b| crate::errors::bool_arg(py, ARG, "sort_keys", b))?;
    let mut opts = EncodeOptions { indent: indent_arg(indent_size, indent, 0)?, ..EncodeOptions::default() };
    if let Some(d) = delimiter {
        opts.delimiter = delimiter_arg(d)?;
    }
    if safe_arg("key_folding", key_folding, true)? {
        opts.key_folding = KeyFolding::Safe;
    }
    if let Some(f) = flatten_depth.filter(|f| !f.is_none()) {
        if f.is_instance_of::<pyo3::types::PyFloat>() && f.extract::<f64>()? == f64::INFINITY {
            opts.flatten_depth = usize::MAX;
        } else {
            if f.is_instance_of::<pyo3::types::PyBool>() || !f.is_instance_of::<pyo3::types::PyInt>() {
                return Err(targ(format!("flatten_depth must be an int (or math.inf), not {}", type_name(f))));
            }
            // Any int >= 0 (one past usize is as good as infinite).
            let n = crate::errors::int_arg(py, Format::Toon, ARG, "flatten_depth", f, 0, i128::MAX)
                .map_err(|_| varg(true, "flatten_depth must not be negative"))?;
            opts.flatten_depth = usize::try_from(n).unwrap_or(usize::MAX);
        }
    }
    let default = default.filter(|d| !d.is_none());
    hook_arg("default", default.as_ref())?;
    let mut ctx =
        Ctx { py, default, sort_keys, converted: HashMap::new(), dicts_converted: false, checked: false, big_digits: Default::default() };
    if sort_keys {
        ctx.check(obj, 0).map_err(|e| e.into_pyerr(py))?;
        ctx.checked = true;
    }
    OUT.with(|cell| {
        let mut fresh = String::new();
        let mut held = cell.try_borrow_mut().ok();
        let out: &mut String = match held.as_deref_mut() {
            Some(o) => o,
            None => &mut fresh,
        };
        let r = encode_walk(obj, &mut ctx, &opts, out).and_then(|()| Ok(new_str(py, out)?.cast_into::<PyString>()?));
        if out.capacity() > 1 << 20 {
            *out = String::new();
        }
        r
    })
}

/// `obj` encoded into `out` (cleared first). First a walk with no check
/// pass: it stops at the first value that needs one (rare), and the check
/// pass runs before the second walk.
fn encode_walk<'py>(obj: &Bound<'py, PyAny>, ctx: &mut Ctx<'py>, opts: &EncodeOptions, out: &mut String) -> PyResult<()> {
    let (py, ptr) = (ctx.py, obj.as_ptr());
    loop {
        out.clear();
        let walked = {
            let ctx = &*ctx;
            PyVal { ptr, ctx }.child(ptr).and_then(|root| encode_into(&root, opts, out))
        };
        match walked {
            Err(EncErr::NeedsCheck) if !ctx.checked => {
                ctx.check(obj, 0).map_err(|e| e.into_pyerr(py))?;
                ctx.checked = true;
            }
            Err(e) => return Err(e.into_pyerr(py)),
            Ok(()) => return Ok(()),
        }
    }
}

/// `dumps(obj, indent_size=indent, delimiter=delimiter)` as UTF-8 (no
/// `default`, keys unsorted), written into `out` (cleared first): a
/// rendering `polywire.llm` counts, which becomes a `str` only if it is the
/// one chosen.
pub(crate) fn encode_text(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    indent: &Bound<'_, PyAny>,
    delimiter: Delimiter,
    mut out: String,
) -> PyResult<String> {
    let opts = EncodeOptions { indent: indent_arg(Some(indent), None, 0)?, delimiter, ..EncodeOptions::default() };
    let mut ctx = Ctx {
        py,
        default: None,
        sort_keys: false,
        converted: HashMap::new(),
        dicts_converted: false,
        checked: false,
        big_digits: Default::default(),
    };
    encode_walk(obj, &mut ctx, &opts, &mut out)?;
    Ok(out)
}

// ---------------------------------------------------------------- decoding

/// Decode without hooks. In strict mode the dicts themselves tell a
/// duplicate key (they end up smaller than their entries), so the decoder
/// does not track keys; on any error the text is decoded again with
/// tracking, for the error (and its line) that the reference reports.
fn decode_plain<'py>(py: Python<'py>, text: &str, opts: &DecodeOptions, b: &mut PyBuilder<'py>) -> Result<Bound<'py, PyAny>, BuildError> {
    if !opts.strict {
        return decode_with(text, opts, b);
    }
    b.reject_duplicate_keys = true;
    match decode_with_builder_checked_keys(text, opts, b) {
        Ok(v) => Ok(v),
        Err(_) => decode_with(text, opts, &mut PyBuilder::new(py, Format::Toon)),
    }
}

/// Builder used when a hook is given: numbers go through `parse_int` /
/// `parse_float` with their text, objects through `object_pairs_hook` or
/// `object_hook`.
struct HookBuilder<'py> {
    inner: PyBuilder<'py>,
    parse_float: Option<Bound<'py, PyAny>>,
    parse_int: Option<Bound<'py, PyAny>>,
    object_hook: Option<Bound<'py, PyAny>>,
    object_pairs_hook: Option<Bound<'py, PyAny>>,
}

impl<'py> Builder for HookBuilder<'py> {
    type Value = Bound<'py, PyAny>;
    type Key = Bound<'py, PyAny>;
    type Error = BuildError;

    fn null(&mut self) -> Result<Self::Value, BuildError> {
        self.inner.null()
    }
    fn bool(&mut self, b: bool) -> Result<Self::Value, BuildError> {
        self.inner.bool(b)
    }
    fn int(&mut self, i: i64) -> Result<Self::Value, BuildError> {
        self.inner.int(i)
    }
    fn big_int(&mut self, digits: &str) -> Result<Self::Value, BuildError> {
        self.inner.big_int(digits)
    }
    fn float(&mut self, f: f64) -> Result<Self::Value, BuildError> {
        self.inner.float(f)
    }
    fn string(&mut self, s: &str) -> Result<Self::Value, BuildError> {
        self.inner.string(s)
    }
    fn key(&mut self, s: &str) -> Result<Self::Key, BuildError> {
        self.inner.key(s)
    }
    fn key_again(&mut self, key: &Self::Key, s: &str) -> Result<Self::Key, BuildError> {
        self.inner.key_again(key, s)
    }
    fn array(&mut self, items: Drain<'_, Self::Value>) -> Result<Self::Value, BuildError> {
        self.inner.array(items)
    }
    fn object(&mut self, entries: Drain<'_, (Self::Key, Self::Value)>) -> Result<Self::Value, BuildError> {
        let py = self.inner.py();
        if let Some(hook) = &self.object_pairs_hook {
            let pairs: Vec<Bound<'py, PyTuple>> = entries.map(|(k, v)| PyTuple::new(py, [k, v])).collect::<PyResult<_>>()?;
            return Ok(hook.call1((PyList::new(py, pairs)?,))?);
        }
        let dict = self.inner.object(entries)?;
        match &self.object_hook {
            Some(hook) => Ok(hook.call1((dict,))?),
            None => Ok(dict),
        }
    }
    fn number_token(&mut self, text: &str, integer: bool) -> Result<Option<Self::Value>, BuildError> {
        let hook = if integer { &self.parse_int } else { &self.parse_float };
        match hook {
            // A token whose double is infinite is a string, as for the
            // reference, whatever the hooks.
            Some(h) if text.parse::<f64>().is_ok_and(f64::is_finite) => Ok(Some(h.call1((new_str(self.inner.py(), text)?,))?)),
            _ => self.inner.number_token(text, integer),
        }
    }
}

/// The text of line `line` (1-based) as the reference reports it: without
/// its `\r`, and without the BOM on line 1.
fn source_line(text: &str, line: usize) -> Option<&str> {
    let l = text.split('\n').nth(line.checked_sub(1)?)?;
    let l = l.strip_suffix('\r').unwrap_or(l);
    Some(if line == 1 { l.strip_prefix('\u{feff}').unwrap_or(l) } else { l })
}

#[cold]
fn decode_error(py: Python<'_>, e: BuildError, text: Option<&str>, bytes: &[u8]) -> PyErr {
    match e {
        BuildError::Py(e) => *e,
        BuildError::Codec(e) => {
            let line = e.line();
            let err = to_pyerr(py, e);
            let source = line.and_then(|l| match text {
                Some(t) => source_line(t, l).map(str::to_owned),
                None => source_line(&String::from_utf8_lossy(bytes), l).map(str::to_owned),
            });
            let _ = err.value(py).setattr("source", source);
            err
        }
    }
}

/// Deserialize a TOON document (``str``, or UTF-8 ``bytes``/``bytearray``).
///
/// ``strict``: the reference's strict mode (default). ``indent_size``: spaces
/// per level (``indent`` is its older name). ``parse_float`` / ``parse_int``:
/// called with the text of each number with / without a fraction or
/// exponent. ``object_hook`` / ``object_pairs_hook``: called with each
/// object, as ``json.loads`` does. ``expand_paths="safe"``: expand dotted
/// keys into nested objects (spec v3, off by default).
///
/// Raises ``ToonDecodeError`` (a ``ValueError``) with ``code``, ``line``,
/// ``column``, ``source`` and ``msg``.
#[pyfunction]
#[pyo3(
    signature = (s, *, strict=None, indent_size=None, parse_float=None, parse_int=None, object_hook=None, object_pairs_hook=None, indent=None, expand_paths=None),
    text_signature = "(s, *, strict=True, indent_size=2, parse_float=None, parse_int=None, object_hook=None, object_pairs_hook=None, indent=None, expand_paths='off')"
)]
#[allow(clippy::too_many_arguments)]
fn loads<'py>(
    py: Python<'py>,
    s: &Bound<'py, PyAny>,
    strict: Option<&Bound<'py, PyAny>>,
    indent_size: Option<&Bound<'py, PyAny>>,
    parse_float: Option<Bound<'py, PyAny>>,
    parse_int: Option<Bound<'py, PyAny>>,
    object_hook: Option<Bound<'py, PyAny>>,
    object_pairs_hook: Option<Bound<'py, PyAny>>,
    indent: Option<&Bound<'py, PyAny>>,
    expand_paths: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let strict = strict.map_or(Ok(true), |b| crate::errors::bool_arg(py, ARG, "strict", b))?;
    let opts = DecodeOptions {
        indent: indent_arg(indent_size, indent, 1)?,
        strict,
        expand_paths: if safe_arg("expand_paths", expand_paths, false)? { ExpandPaths::Safe } else { ExpandPaths::Off },
    };
    let some = |h: Option<Bound<'py, PyAny>>| h.filter(|h| !h.is_none());
    let (parse_float, parse_int, object_hook, object_pairs_hook) =
        (some(parse_float), some(parse_int), some(object_hook), some(object_pairs_hook));
    hook_arg("parse_float", parse_float.as_ref())?;
    hook_arg("parse_int", parse_int.as_ref())?;
    hook_arg("object_hook", object_hook.as_ref())?;
    hook_arg("object_pairs_hook", object_pairs_hook.as_ref())?;
    let hooks = parse_float.is_some() || parse_int.is_some() || object_hook.is_some() || object_pairs_hook.is_some();
    let mut hb = HookBuilder { inner: PyBuilder::new(py, Format::Toon), parse_float, parse_int, object_hook, object_pairs_hook };
    let mut fast = PyBuilder::new(py, Format::Toon);

    if let Ok(text) = s.cast::<PyString>() {
        let Some(text) = (unsafe { utf8(text.as_ptr()) }) else {
            let e = Error::new(Format::Toon, "TOON_INVALID_UTF8", "the document holds an unpaired surrogate (expected valid Unicode text)");
            return Err(to_pyerr(py, e));
        };
        let r = if hooks { decode_with(text, &opts, &mut hb) } else { decode_plain(py, text, &opts, &mut fast) };
        return r.map_err(|e| decode_error(py, e, Some(text), &[]));
    }
    let mut run = |bytes: &[u8]| -> PyResult<Bound<'py, PyAny>> {
        let r = match (hooks, std::str::from_utf8(bytes)) {
            (false, Ok(text)) => decode_plain(py, text, &opts, &mut fast),
            (false, Err(_)) => decode_bytes_with(bytes, &opts, &mut fast),
            (true, _) => decode_bytes_with(bytes, &opts, &mut hb),
        };
        r.map_err(|e| decode_error(py, e, None, bytes))
    };
    if let Ok(b) = s.cast_exact::<pyo3::types::PyBytes>() {
        return run(b.as_bytes());
    }
    if s.is_instance_of::<pyo3::types::PyByteArray>() || s.is_instance_of::<pyo3::types::PyMemoryView>() {
        return crate::buffer::with_bytes_in(ARG, "s", s, run);
    }
    Err(targ(format!("s (the TOON document) must be str, bytes or bytearray, not {}", type_name(s))))
}
