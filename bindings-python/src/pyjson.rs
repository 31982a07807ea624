//! Python objects <-> JSON text, without an intermediate tree (the orjson and
//! jiter way): the writer walks Python objects dispatching on the exact type
//! pointer, most frequent types first, and the builder creates Python objects
//! as the core parser reports values.
//!
//! The text written is what `JSON.stringify` writes for the same value (see
//! `polywire::json`): `1.0` is written `1`, NaN and infinities `null`, keys
//! that are array indices first. Python ints of any size are written exactly.

use polywire::json::{self, Builder, QuickNumber};
use polywire::Format;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat};
use std::os::raw::c_int;
use std::ptr::addr_of_mut;
use std::vec::Drain;

// ---------------------------------------------------------------- writing

/// Append the JSON text of `obj` to `out`.
pub fn write(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    let mut keys = KeyCache::new(obj.py());
    write_obj(out, obj.as_ptr(), &mut keys, 0)
}

/// Append the JSON text of `obj` to `out`, as [`write`], handing `part`
/// all of `out` each time it has grown by `every` bytes or more (checked
/// after each item of a list and entry of a dict), so that the caller can
/// start on the text written so far (`encode_for_llm` has its tokens
/// counted on the helper thread) while the rest is written. `part` runs no
/// Python code. False when a text handed to `part` was rewritten after
/// (an object redone in JavaScript's key order, see [`write_dict`]): the
/// caller is to forget what `part` saw; `part` is not called again then.
pub fn write_in_parts(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>, every: usize, part: &mut dyn FnMut(&[u8])) -> PyResult<bool> {
    let mut keys = KeyCache::new(obj.py());
    keys.parts = Some((every.max(1), part));
    keys.next_part = out.len().saturating_add(every);
    write_obj(out, obj.as_ptr(), &mut keys, 0)?;
    Ok(keys.parts.is_some())
}

/// The texts (`"key":`) of the dict keys written so far, found by the key
/// object's address: the rows of a list of dicts share their key objects
/// (literals, interned names, a parser's key cache), so a key's text is
/// made once per call, not once per row. Every key in it is held by a
/// strong reference until the call ends, so no other object can take its
/// address meanwhile; a `str`'s text never changes.
struct KeyCache<'py, 'p> {
    py: Python<'py>,
    /// [`write_in_parts`]'s `every` and `part`, and the length of `out` at
    /// which `part` is next called (`usize::MAX` without them).
    parts: Option<(usize, &'p mut dyn FnMut(&[u8]))>,
    next_part: usize,
    /// The length of `out` when it was last handed to `part`.
    handed: usize,
    /// How many lists (or tuples) the value being written is in: keys are
    /// remembered only inside one, where dicts are rows that repeat them (a
    /// config's keys are mostly written once, and remembering them cost
    /// its JSON 0.2-0.4 µs of 5).
    in_lists: u32,
    /// Direct-mapped by address: (key, where its text starts in `texts`,
    /// its length); a null key is an empty slot.
    slots: [(*mut ffi::PyObject, u32, u32); WRITE_KEY_SLOTS],
    texts: Vec<u8>,
    held: Vec<Bound<'py, PyAny>>,
}

const WRITE_KEY_SLOTS: usize = 64;
/// Cached key texts up to this long are copied with a fixed-size copy.
const KEY_COPY: usize = 32;
/// After this many keys, a value's keys are mostly distinct (a mapping, not
/// rows): the cache stops taking new ones.
const KEY_CACHE_LIMIT: usize = 512;

impl<'py, 'p> KeyCache<'py, 'p> {
    #[inline]
    fn new(py: Python<'py>) -> Self {
        KeyCache {
            py,
            parts: None,
            next_part: usize::MAX,
            handed: 0,
            in_lists: 0,
            slots: [(std::ptr::null_mut(), 0, 0); WRITE_KEY_SLOTS],
            texts: Vec::new(),
            held: Vec::new(),
        }
    }

    #[inline]
    fn slot(key: *mut ffi::PyObject) -> usize {
        // Objects are 16-byte aligned; mix in higher bits for spread.
        let a = key as usize;
        ((a >> 4) ^ (a >> 10)) & (WRITE_KEY_SLOTS - 1)
    }

    /// The text of `key`, when it is cached (followed in memory by at least
    /// `KEY_COPY` bytes of `texts`).
    #[inline]
    fn get(&self, key: *mut ffi::PyObject) -> Option<&[u8]> {
        let (k, start, len) = self.slots[Self::slot(key)];
        (k == key).then(|| &self.texts[start as usize..(start + len) as usize])
    }

    /// Hand `out` to [`write_in_parts`]'s `part` when it has grown enough.
    #[inline]
    fn maybe_part(&mut self, out: &[u8]) {
        if out.len() >= self.next_part {
            self.hand_part(out);
        }
    }

    #[cold]
    #[inline(never)]
    fn hand_part(&mut self, out: &[u8]) {
        if let Some((every, part)) = self.parts.as_mut() {
            part(out);
            self.handed = out.len();
            self.next_part = out.len().saturating_add(*every);
        }
    }

    /// `out` is cut back to `len`: what `part` saw past it no longer holds.
    #[cold]
    fn truncating_to(&mut self, len: usize) {
        if len < self.handed {
            self.parts = None;
            self.next_part = usize::MAX;
        }
    }

    /// Remember `text` (`"key":`) for `key`, an exact `str`.
    #[inline]
    fn put(&mut self, key: *mut ffi::PyObject, text: &[u8]) {
        if self.held.len() >= KEY_CACHE_LIMIT || self.texts.len() + text.len() > u32::MAX as usize {
            return;
        }
        // SAFETY: `key` is a live object (a key of the dict being walked).
        self.held.push(unsafe { Bound::from_borrowed_ptr(self.py, key) });
        // Each text is followed by `KEY_COPY` bytes of padding, for
        // `write_dict`'s fixed-size copy.
        let start = self.texts.len() as u32;
        self.texts.extend_from_slice(text);
        self.texts.extend_from_slice(&[0; KEY_COPY]);
        self.slots[Self::slot(key)] = (key, start, text.len() as u32);
    }
}

#[inline]
fn write_obj(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, keys: &mut KeyCache<'_, '_>, depth: usize) -> PyResult<()> {
    let py = keys.py;
    unsafe {
        let tp = ffi::Py_TYPE(ptr);
        if tp == addr_of_mut!(ffi::PyUnicode_Type) {
            write_pystr(out, ptr, py)
        } else if tp == addr_of_mut!(ffi::PyLong_Type) {
            write_int(out, ptr, py)
        } else if tp == addr_of_mut!(ffi::PyBool_Type) {
            out.extend_from_slice(if ptr == ffi::Py_True() { b"true" } else { b"false" });
            Ok(())
        } else if ptr == ffi::Py_None() {
            out.extend_from_slice(b"null");
            Ok(())
        } else if tp == addr_of_mut!(ffi::PyFloat_Type) {
            json::write_f64(out, ffi::PyFloat_AS_DOUBLE(ptr));
            Ok(())
        } else if tp == addr_of_mut!(ffi::PyList_Type) {
            write_list(out, ptr, keys, depth)
        } else if tp == addr_of_mut!(ffi::PyDict_Type) {
            write_dict(out, ptr, keys, depth)
        } else {
            write_other(out, ptr, keys, depth)
        }
    }
}

/// Subclasses (IntEnum, str enums, OrderedDict, ...), tuples and errors.
#[cold]
#[inline(never)]
fn write_other(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, keys: &mut KeyCache<'_, '_>, depth: usize) -> PyResult<()> {
    let py = keys.py;
    unsafe {
        if ffi::PyBool_Check(ptr) != 0 {
            out.extend_from_slice(if ptr == ffi::Py_True() { b"true" } else { b"false" });
            Ok(())
        } else if ffi::PyLong_Check(ptr) != 0 {
            write_int(out, ptr, py)
        } else if ffi::PyUnicode_Check(ptr) != 0 {
            write_pystr(out, ptr, py)
        } else if ffi::PyFloat_Check(ptr) != 0 {
            json::write_f64(out, ffi::PyFloat_AsDouble(ptr));
            Ok(())
        } else if ffi::PyList_Check(ptr) != 0 {
            write_list(out, ptr, keys, depth)
        } else if ffi::PyTuple_Check(ptr) != 0 {
            enter(depth)?;
            out.push(b'[');
            let n = ffi::PyTuple_GET_SIZE(ptr);
            keys.in_lists += 1;
            for i in 0..n {
                if i > 0 {
                    out.push(b',');
                }
                write_obj(out, ffi::PyTuple_GET_ITEM(ptr, i), keys, depth + 1)?;
            }
            keys.in_lists -= 1;
            out.push(b']');
            Ok(())
        } else if ffi::PyDict_Check(ptr) != 0 {
            write_dict(out, ptr, keys, depth)
        } else {
            let obj = Bound::from_borrowed_ptr(py, ptr);
            Err(crate::errors::type_error(
                py,
                "KADO_UNSUPPORTED_TYPE",
                format!("Object of type {} is not JSON serializable", type_name(&obj)),
            ))
        }
    }
}

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

#[inline]
fn enter(depth: usize) -> PyResult<()> {
    if depth >= json::MAX_DEPTH {
        Err(Python::attach(|py| {
            crate::errors::value_error(
                py,
                Format::Kado,
                "KADO_TOO_DEEP",
                format!("nesting deeper than {} levels (circular reference?)", json::MAX_DEPTH),
            )
        }))
    } else {
        Ok(())
    }
}

#[inline]
unsafe fn write_list(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, keys: &mut KeyCache<'_, '_>, depth: usize) -> PyResult<()> {
    enter(depth)?;
    out.push(b'[');
    // Re-read the size each time and hold the item: the list could shrink
    // if writing an item ran Python code (the writer runs none, but a
    // borrowed item must never outlive a call that could).
    let mut i = 0;
    keys.in_lists += 1;
    while i < ffi::PyList_GET_SIZE(ptr) {
        if i > 0 {
            out.push(b',');
        }
        let item = ffi::PyList_GET_ITEM(ptr, i);
        ffi::Py_INCREF(item);
        let r = write_obj(out, item, keys, depth + 1);
        ffi::Py_DECREF(item);
        r?;
        keys.maybe_part(out);
        i += 1;
    }
    keys.in_lists -= 1;
    out.push(b']');
    Ok(())
}

/// Borrow the UTF-8 form of a `str` (cached by CPython; free for compact
/// ASCII). `None` when it holds lone surrogates.
#[inline]
pub(crate) unsafe fn pystr_utf8<'a>(ptr: *mut ffi::PyObject) -> Option<&'a str> {
    // Compact ASCII (most strings): the characters are the UTF-8, read in
    // place without a call into CPython.
    if ffi::PyUnicode_IS_COMPACT_ASCII(ptr) != 0 {
        let data = ffi::PyUnicode_DATA(ptr) as *const u8;
        let len = ffi::PyUnicode_GET_LENGTH(ptr) as usize;
        return Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(data, len)));
    }
    let mut size: ffi::Py_ssize_t = 0;
    let data = ffi::PyUnicode_AsUTF8AndSize(ptr, &mut size);
    if data.is_null() {
        ffi::PyErr_Clear();
        return None;
    }
    Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(data as *const u8, size as usize)))
}

#[inline]
unsafe fn write_pystr(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, py: Python<'_>) -> PyResult<()> {
    match pystr_utf8(ptr) {
        Some(s) => {
            json::write_str(out, s);
            Ok(())
        }
        None => write_surrogates(out, ptr, py),
    }
}

/// A `str` with lone surrogates: written with `\udxxx` escapes for them, as
/// `JSON.stringify` writes a JavaScript string holding them.
#[cold]
unsafe fn write_surrogates(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, py: Python<'_>) -> PyResult<()> {
    // The C codec, not `s.encode(...)`: a `str` subclass's `encode` is
    // Python code, which could free what the walk holds.
    let encoded = ffi::PyUnicode_AsEncodedString(ptr, c"utf-16-le".as_ptr(), c"surrogatepass".as_ptr());
    if encoded.is_null() {
        return Err(PyErr::fetch(py));
    }
    let encoded = Bound::from_owned_ptr(py, encoded);
    let bytes = encoded.cast::<pyo3::types::PyBytes>()?.as_bytes();
    let units = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]));
    let mut text = String::new();
    let mut tmp = Vec::new();
    let mut flush = |text: &mut String, out: &mut Vec<u8>| {
        tmp.clear();
        json::write_str(&mut tmp, text);
        out.extend_from_slice(&tmp[1..tmp.len() - 1]);
        text.clear();
    };
    out.push(b'"');
    for r in char::decode_utf16(units) {
        match r {
            Ok(c) => text.push(c),
            Err(e) => {
                flush(&mut text, out);
                json::write_lone_surrogate(out, e.unpaired_surrogate());
            }
        }
    }
    flush(&mut text, out);
    out.push(b'"');
    Ok(())
}

#[inline]
unsafe fn write_int(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, py: Python<'_>) -> PyResult<()> {
    let mut overflow: c_int = 0;
    let v = ffi::PyLong_AsLongLongAndOverflow(ptr, &mut overflow);
    if overflow == 0 {
        if v == -1 && !ffi::PyErr_Occurred().is_null() {
            return Err(PyErr::fetch(py));
        }
        json::write_i64(out, v);
        Ok(())
    } else {
        // Any size, written exactly, by `int.__repr__` itself: not `int(obj)`
        // or `str(obj)`, which call a subclass's `__int__` / `__str__`
        // (Python code that could free what the walk holds).
        write_big_int(out, ptr, py, Format::Kado)
    }
}

/// The decimal digits of an int beyond 64 bits (exact or subclass).
/// CPython refuses more than `sys.get_int_max_str_digits()` digits (4,300
/// by default): that is the format's `<FORMAT>_INTEGER_TOO_LARGE`.
#[cold]
pub(crate) unsafe fn write_big_int(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, py: Python<'_>, format: Format) -> PyResult<()> {
    let repr = (*addr_of_mut!(ffi::PyLong_Type)).tp_repr.map_or(std::ptr::null_mut(), |f| f(ptr));
    if repr.is_null() {
        return Err(int_too_large(py, PyErr::fetch(py), format));
    }
    let digits = Bound::from_owned_ptr(py, repr);
    match pystr_utf8(digits.as_ptr()) {
        Some(d) => {
            out.extend_from_slice(d.as_bytes());
            Ok(())
        }
        None => Err(PyErr::fetch(py)),
    }
}

/// Map CPython's int/str digit-limit `ValueError` to the format's error.
#[cold]
pub(crate) fn int_too_large(py: Python<'_>, e: PyErr, format: Format) -> PyErr {
    if e.is_instance_of::<PyValueError>(py) {
        let code = match format {
            Format::Kado => "KADO_INTEGER_TOO_LARGE",
            Format::Toon => "TOON_INTEGER_TOO_LARGE",
            Format::Axon => "AXON_INTEGER_TOO_LARGE",
            Format::Kameo => "KAMEO_INTEGER_TOO_LARGE",
            Format::Tether => "TETHER_INTEGER_TOO_LARGE",
            Format::Json => "JSON_INTEGER_TOO_LARGE",
            Format::Llm => "LLM_INTEGER_TOO_LARGE",
        };
        crate::errors::value_error(py, format, code, format!("integer too large to convert: {}", e.value(py)))
    } else {
        e
    }
}

/// A dict changed (Python code ran during its walk and resized it): the
/// format's error with `<FORMAT>_VALUE_CHANGED`, never a panic.
#[cold]
pub(crate) fn dict_changed(py: Python<'_>, format: Format, code: &'static str) -> PyErr {
    crate::errors::value_error(
        py,
        format,
        code,
        "dictionary changed size during iteration (expected the value to stay unchanged while it is encoded)",
    )
}

unsafe fn write_dict(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, keys: &mut KeyCache<'_, '_>, depth: usize) -> PyResult<()> {
    let py = keys.py;
    enter(depth)?;
    let start = out.len();
    out.push(b'{');
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    let mut first = true;
    let size = crate::pydict::len(ptr);
    while ffi::PyDict_Next(ptr, &mut pos, &mut key, &mut value) != 0 {
        if !first {
            out.push(b',');
        }
        first = false;
        let key_start = out.len();
        // Strong references to key and value while the key is written: no
        // borrowed reference is held across anything that could run Python
        // code (the writer runs none today; this keeps it so if it ever does).
        let (key, value) = (Bound::from_borrowed_ptr(py, key), Bound::from_borrowed_ptr(py, value));
        if let Some(text) = keys.get(key.as_ptr()) {
            if text.len() <= KEY_COPY {
                // A fixed-size copy (two 16-byte moves), not a call to
                // `memcpy` for a few bytes: `texts` has `KEY_COPY` bytes
                // of slack after every text, and `out` room for them.
                out.reserve(KEY_COPY);
                let len = out.len();
                // SAFETY: `text` is followed by at least `KEY_COPY - text.len()`
                // bytes of `texts` (see `KeyCache::put`), `out` has room for
                // `KEY_COPY` more bytes, and only `text.len()` are kept.
                std::ptr::copy_nonoverlapping(text.as_ptr(), out.as_mut_ptr().add(len), KEY_COPY);
                out.set_len(len + text.len());
            } else {
                out.extend_from_slice(text);
            }
        } else {
            write_key(out, key.as_ptr(), py)?;
            if crate::pydict::len(ptr) != size {
                return Err(dict_changed(py, Format::Kado, "KADO_VALUE_CHANGED"));
            }
            // A key that JavaScript would enumerate first: redo this object
            // in JavaScript's order (rare; costs a second pass).
            if matches!(out.get(key_start + 1), Some(b'0'..=b'9'))
                && json::array_index(std::str::from_utf8_unchecked(&out[key_start + 1..out.len() - 1])).is_some()
            {
                keys.truncating_to(start);
                out.truncate(start);
                return write_dict_js_order(out, ptr, keys, depth);
            }
            out.push(b':');
            // Exact `str` keys only (a subclass could be anything else as
            // well); a key that starts with a digit is never cached, so a
            // cached key never needs JavaScript's order.
            if keys.in_lists > 0 && ffi::PyUnicode_CheckExact(key.as_ptr()) != 0 && !matches!(out.get(key_start + 1), Some(b'0'..=b'9')) {
                keys.put(key.as_ptr(), &out[key_start..]);
            }
        }
        write_obj(out, value.as_ptr(), keys, depth + 1)?;
        if crate::pydict::len(ptr) != size {
            return Err(dict_changed(py, Format::Kado, "KADO_VALUE_CHANGED"));
        }
        keys.maybe_part(out);
    }
    out.push(b'}');
    Ok(())
}

#[cold]
unsafe fn write_dict_js_order(out: &mut Vec<u8>, ptr: *mut ffi::PyObject, keys: &mut KeyCache<'_, '_>, depth: usize) -> PyResult<()> {
    let py = keys.py;
    // `PyDict_Next` with strong references and a size check, not pyo3's
    // iterator (which panics when the dict changes size).
    let size = crate::pydict::len(ptr);
    let mut entries: Vec<(Vec<u8>, Bound<'_, PyAny>)> = Vec::with_capacity(size);
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    while ffi::PyDict_Next(ptr, &mut pos, &mut key, &mut value) != 0 {
        let (k, v) = (Bound::from_borrowed_ptr(py, key), Bound::from_borrowed_ptr(py, value));
        let mut kb = Vec::new();
        write_key(&mut kb, k.as_ptr(), py)?;
        if crate::pydict::len(ptr) != size {
            return Err(dict_changed(py, Format::Kado, "KADO_VALUE_CHANGED"));
        }
        entries.push((kb, v));
    }
    let order = json::js_key_order(entries.iter().map(|(k, _)| std::str::from_utf8_unchecked(&k[1..k.len() - 1])));
    out.push(b'{');
    for n in 0..entries.len() {
        let (k, v) = &entries[order.as_ref().map_or(n, |o| o[n])];
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(k);
        out.push(b':');
        write_obj(out, v.as_ptr(), keys, depth + 1)?;
    }
    out.push(b'}');
    Ok(())
}

/// Keys as `json.dumps` accepts them (str, int, float, bool, None), written
/// as the string JavaScript would use for the property.
#[inline]
unsafe fn write_key(out: &mut Vec<u8>, key: *mut ffi::PyObject, py: Python<'_>) -> PyResult<()> {
    if ffi::PyUnicode_Check(key) != 0 {
        return write_pystr(out, key, py);
    }
    let mut tmp = Vec::new();
    if ffi::PyBool_Check(key) != 0 {
        tmp.extend_from_slice(if key == ffi::Py_True() { b"true" } else { b"false" });
    } else if ffi::PyLong_Check(key) != 0 {
        write_int(&mut tmp, key, py)?;
    } else if ffi::PyFloat_Check(key) != 0 {
        let f = ffi::PyFloat_AsDouble(key);
        // JavaScript's property name for the number (NaN -> "NaN").
        if f.is_nan() {
            tmp.extend_from_slice(b"NaN");
        } else if f.is_infinite() {
            tmp.extend_from_slice(if f > 0.0 { b"Infinity" } else { b"-Infinity" });
        } else {
            json::write_f64(&mut tmp, f);
        }
    } else if key == ffi::Py_None() {
        tmp.extend_from_slice(b"null");
    } else {
        let obj = Bound::from_borrowed_ptr(py, key);
        return Err(crate::errors::type_error(
            py,
            "KADO_UNSUPPORTED_TYPE",
            format!("keys must be str, int, float, bool or None, not {}", type_name(&obj)),
        ));
    }
    json::write_str(out, std::str::from_utf8_unchecked(&tmp));
    Ok(())
}

// ---------------------------------------------------------------- reading

/// Error type for building: a Python exception raised while creating an
/// object, or a codec error from the parser.
pub enum BuildError {
    /// Boxed: every builder call returns a `Result` of this, which then
    /// fits in registers (a `PyErr` is several words).
    Py(Box<PyErr>),
    Codec(polywire::Error),
}

impl From<polywire::Error> for BuildError {
    fn from(e: polywire::Error) -> Self {
        BuildError::Codec(e)
    }
}

impl From<PyErr> for BuildError {
    #[cold]
    fn from(e: PyErr) -> Self {
        BuildError::Py(Box::new(e))
    }
}

#[cold]
fn duplicate_key() -> BuildError {
    BuildError::Codec(polywire::Error::new(
        polywire::Format::Toon,
        "TOON_DUPLICATE_KEY",
        "Duplicate sibling key (expected unique keys in strict mode)",
    ))
}

impl BuildError {
    pub fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            BuildError::Py(e) => *e,
            BuildError::Codec(e) => crate::errors::to_pyerr(py, e),
        }
    }
}

/// Builds Python objects directly from parser events.
pub struct PyBuilder<'py> {
    py: Python<'py>,
    /// Recently made keys (a direct-mapped cache): rows of tables and
    /// arrays of objects repeat the same keys, which then cost no new
    /// string, no hashing and no intern-table lookup.
    /// Taken from [`KEY_CACHE`] at the first key and given back on drop,
    /// so documents decoded one after the other share their keys.
    keys: Vec<Option<CachedKey>>,
    /// Fail an object that received the same key twice (its dict ends up
    /// smaller than its entries): for `decode_with_builder_checked_keys`.
    pub reject_duplicate_keys: bool,
    /// The format whose error a too-long integer is.
    format: Format,
}

thread_local! {
    /// The key cache between calls on this thread (interned `str`s, at
    /// most `KEY_SLOTS` keys of at most 64 bytes). A nested call (from a
    /// hook) starts with an empty cache.
    static KEY_CACHE: std::cell::Cell<Vec<Option<CachedKey>>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Drop for PyBuilder<'_> {
    fn drop(&mut self) {
        if !self.keys.is_empty() {
            let keys = std::mem::take(&mut self.keys);
            // `try_with`: nothing to keep when the thread is exiting.
            let _ = KEY_CACHE.try_with(|c| c.set(keys));
        }
    }
}

const KEY_SLOTS: usize = 1024;

impl<'py> PyBuilder<'py> {
    pub fn new(py: Python<'py>, format: Format) -> Self {
        PyBuilder { py, keys: Vec::new(), reject_duplicate_keys: false, format }
    }

    pub fn py(&self) -> Python<'py> {
        self.py
    }
}

/// A key of the cache: its length and [`key_words`], compared first (they
/// are the whole text up to 16 bytes), its text and its `str`.
struct CachedKey {
    len: usize,
    words: (u64, u64),
    text: Box<str>,
    key: Py<PyAny>,
}

/// Two words covering the first and last bytes of `b` (all of it up to 16
/// bytes), read without a loop.
#[inline]
fn key_words(b: &[u8]) -> (u64, u64) {
    if let (Some(f), Some(l)) = (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (u64::from_le_bytes(*f), u64::from_le_bytes(*l))
    } else if let (Some(f), Some(l)) = (b.first_chunk::<4>(), b.last_chunk::<4>()) {
        (u64::from(u32::from_le_bytes(*f)), u64::from(u32::from_le_bytes(*l)))
    } else {
        let byte = |i: usize| u64::from(b.get(i).copied().unwrap_or(0));
        (byte(0) | byte(1) << 8 | byte(2) << 16, 0)
    }
}

/// The two cache slots of a key of at most 64 bytes (looked up in turn),
/// from a multiplicative hash of its length and [`key_words`], which tells
/// apart the few dozen distinct keys of a document about as well as
/// hashing every byte.
#[inline]
fn key_slots((x, y): (u64, u64), len: usize) -> (usize, usize) {
    let h = (x ^ y.rotate_left(29) ^ (len as u64).rotate_left(50)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    ((h >> 54) as usize % KEY_SLOTS, (h >> 44) as usize % KEY_SLOTS)
}

pub use crate::pystr::new_str;

impl<'py> Builder for PyBuilder<'py> {
    type Value = Bound<'py, PyAny>;
    type Key = Bound<'py, PyAny>;
    type Error = BuildError;

    #[inline]
    fn null(&mut self) -> Result<Self::Value, BuildError> {
        Ok(self.py.None().into_bound(self.py))
    }
    #[inline]
    fn bool(&mut self, b: bool) -> Result<Self::Value, BuildError> {
        Ok(PyBool::new(self.py, b).to_owned().into_any())
    }
    #[inline]
    fn int(&mut self, i: i64) -> Result<Self::Value, BuildError> {
        Ok(i.into_pyobject(self.py).map_err(|e| BuildError::from(PyErr::from(e)))?.into_any())
    }
    fn big_int(&mut self, digits: &str) -> Result<Self::Value, BuildError> {
        // `int(digits)` refuses more than 4,300 digits (CPython's limit):
        // the format's error, not a bare ValueError.
        self.py.get_type::<pyo3::types::PyInt>().call1((digits,)).map_err(|e| int_too_large(self.py, e, self.format).into())
    }
    #[inline]
    fn float(&mut self, f: f64) -> Result<Self::Value, BuildError> {
        Ok(PyFloat::new(self.py, f).into_any())
    }
    #[inline]
    fn string(&mut self, s: &str) -> Result<Self::Value, BuildError> {
        Ok(new_str(self.py, s)?)
    }
    #[inline]
    fn key(&mut self, s: &str) -> Result<Self::Key, BuildError> {
        // Keys repeat across objects: intern short ones so equal keys share
        // one object (cheaper dict hashing and less memory), and keep the
        // last ones at hand.
        if s.len() > 64 {
            return Ok(new_str(self.py, s)?);
        }
        let words = key_words(s.as_bytes());
        let (slot, other) = key_slots(words, s.len());
        if self.keys.is_empty() {
            self.keys = KEY_CACHE.try_with(|c| c.take()).unwrap_or_default();
            if self.keys.len() != KEY_SLOTS {
                self.keys.clear();
                self.keys.resize_with(KEY_SLOTS, || None);
            }
        }
        for i in [slot, other] {
            if let Some(Some(c)) = self.keys.get(i) {
                // Up to 16 bytes the words are the whole text.
                if c.len == s.len() && c.words == words && (s.len() <= 16 || *c.text == *s) {
                    return Ok(c.key.bind(self.py).clone());
                }
            }
        }
        let key = pyo3::types::PyString::intern(self.py, s).into_any();
        // The key goes to a free one of its two slots, else to its first,
        // and what was there moves to that key's own other slot if it is
        // free (so keys meeting at a slot all stay where their lookups see
        // them).
        let entry = CachedKey { len: s.len(), words, text: s.into(), key: key.clone().unbind() };
        let free = |keys: &[Option<CachedKey>], i: usize| keys.get(i).is_some_and(Option::is_none);
        let at = if free(&self.keys, slot) || !free(&self.keys, other) { slot } else { other };
        let moved = self.keys.get_mut(at).and_then(|e| e.replace(entry));
        if let Some(m) = moved {
            let (a, b) = key_slots(m.words, m.len);
            let alt = if a == at { b } else { a };
            if free(&self.keys, alt) {
                if let Some(e) = self.keys.get_mut(alt) {
                    *e = Some(m);
                }
            }
        }
        Ok(key)
    }
    #[inline]
    fn key_again(&mut self, key: &Self::Key, _: &str) -> Result<Self::Key, BuildError> {
        // A new reference to the same `str` (its hash is cached on it).
        Ok(key.clone())
    }
    fn array(&mut self, items: Drain<'_, Self::Value>) -> Result<Self::Value, BuildError> {
        unsafe {
            let list = ffi::PyList_New(items.len() as ffi::Py_ssize_t);
            if list.is_null() {
                return Err(PyErr::fetch(self.py).into());
            }
            for (i, item) in items.enumerate() {
                ffi::PyList_SET_ITEM(list, i as ffi::Py_ssize_t, item.into_ptr());
            }
            Ok(Bound::from_owned_ptr(self.py, list))
        }
    }
    fn object(&mut self, entries: Drain<'_, (Self::Key, Self::Value)>) -> Result<Self::Value, BuildError> {
        unsafe {
            // Sized for its entries up front: a dict made empty has room
            // for 5 and would be resized while it is filled.
            let dict = ffi::_PyDict_NewPresized(entries.len() as ffi::Py_ssize_t);
            if dict.is_null() {
                return Err(PyErr::fetch(self.py).into());
            }
            let dict = Bound::from_owned_ptr(self.py, dict);
            let n = entries.len();
            for (k, v) in entries {
                if ffi::PyDict_SetItem(dict.as_ptr(), k.as_ptr(), v.as_ptr()) != 0 {
                    return Err(PyErr::fetch(self.py).into());
                }
            }
            if self.reject_duplicate_keys && crate::pydict::len(dict.as_ptr()) != n {
                return Err(duplicate_key());
            }
            Ok(dict)
        }
    }
    /// Number tokens of text formats (TOON): integers of any size exact, as
    /// Python ints; other numbers as the reference's double.
    /// Short tokens (most) as the decoder read them (`int` and `float`
    /// give what `number_token` gives for them).
    #[inline]
    fn number_value(&mut self, text: &str, integer: bool, quick: Option<QuickNumber>) -> Result<Option<Self::Value>, BuildError> {
        match quick {
            Some(QuickNumber::Int(i)) => self.int(i).map(Some),
            Some(QuickNumber::Float(f)) => self.float(f).map(Some),
            None => self.number_token(text, integer),
        }
    }
    fn number_token(&mut self, text: &str, integer: bool) -> Result<Option<Self::Value>, BuildError> {
        if integer {
            if let Ok(i) = text.parse::<i64>() {
                return self.int(i).map(Some);
            }
        }
        match text.parse::<f64>() {
            // A number at all only when finite as a double (as for the
            // reference); integers then exact.
            Ok(f) if f.is_finite() && integer => self.big_int(text).map(Some),
            Ok(f) if f.is_finite() => self.float(if f == 0.0 { 0.0 } else { f }).map(Some),
            _ => Ok(None),
        }
    }
}
