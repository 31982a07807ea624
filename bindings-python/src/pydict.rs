//! Iterating a `dict`'s entries without a call per entry.
//!
//! `PyDict_Next` is an exported function that re-checks its arguments on
//! every call; in the TOON encoder's walks it took about a tenth of the time.
//! On CPython 3.11 to 3.13 (with the GIL) a dict whose keys and values live
//! in one table (every dict built by a literal, `dict()`, `json.loads`, ...;
//! not the split tables of instance `__dict__`s) keeps its entries in one
//! array after the hash index, in insertion order with holes for deleted
//! entries, which is exactly the order `PyDict_Next` yields. [`DictIter`]
//! reads that array directly when the running interpreter is one of those
//! versions, and calls `PyDict_Next` otherwise.
//!
//! The layouts below are CPython's `Include/internal/pycore_dict.h` of 3.11
//! to 3.13 (unchanged in that range for builds with the GIL; the versions
//! this was tested on). The interpreter is checked once at import
//! ([`init`]): any other version, a free-threaded build or another
//! implementation uses `PyDict_Next`.

use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// `PyDictObject` (3.11-3.13).
#[repr(C)]
struct DictObject {
    ob_base: ffi::PyObject,
    ma_used: ffi::Py_ssize_t,
    ma_version_tag: u64,
    ma_keys: *mut DictKeys,
    /// Non-null for a split table.
    ma_values: *mut c_void,
}

/// `PyDictKeysObject` (3.11-3.13, without `Py_GIL_DISABLED`).
#[repr(C)]
struct DictKeys {
    dk_refcnt: ffi::Py_ssize_t,
    dk_log2_size: u8,
    dk_log2_index_bytes: u8,
    dk_kind: u8,
    dk_version: u32,
    dk_usable: ffi::Py_ssize_t,
    dk_nentries: ffi::Py_ssize_t,
    dk_indices: [u8; 0],
}

/// `DICT_KEYS_GENERAL`: entries carry their hash (`PyDictKeyEntry`);
/// the other kinds use `PyDictUnicodeEntry` (key and value only).
const DICT_KEYS_GENERAL: u8 = 0;

static DIRECT: AtomicBool = AtomicBool::new(false);

/// Decide once, at import, whether the running interpreter has the layout
/// above.
pub fn init(py: Python<'_>) -> PyResult<()> {
    let sys = py.import("sys")?;
    let cpython = sys.getattr("implementation")?.getattr("name")?.extract::<String>()? == "cpython";
    let version = sys.getattr("version_info")?;
    let (major, minor): (u32, u32) = (version.get_item(0)?.extract()?, version.get_item(1)?.extract()?);
    // A free-threaded build has a `t` in its ABI flags (POSIX); Windows has
    // none, so it asks sysconfig (slower to import: about 2 ms).
    let free_threaded = match sys.getattr("abiflags") {
        Ok(flags) => flags.extract::<String>()?.contains('t'),
        Err(_) => py.import("sysconfig")?.call_method1("get_config_var", ("Py_GIL_DISABLED",))?.is_truthy()?,
    };
    DIRECT.store(cpython && major == 3 && (11..=13).contains(&minor) && !free_threaded, Ordering::Relaxed);
    Ok(())
}

/// Number of entries of a `dict` (or subclass): `PyDict_Size` without the
/// call (its `ma_used` field, public in every CPython 3; this package is for CPython).
///
/// # Safety
/// `dict` must be a live `dict` (or subclass) and the GIL held.
#[inline(always)]
pub unsafe fn len(dict: *mut ffi::PyObject) -> usize {
    (*(dict as *mut ffi::PyDictObject)).ma_used as usize
}

/// Iterator over `(key, value)` borrowed pointers of an exact or subclassed
/// `dict`. The dict must not change while it is iterated (callers run no
/// Python code meanwhile).
pub struct DictIter {
    dict: *mut ffi::PyObject,
    /// Direct mode: next entry, end, entry size in bytes. `entries` is null
    /// in `PyDict_Next` mode.
    entries: *const u8,
    end: *const u8,
    step: usize,
    pos: ffi::Py_ssize_t,
}

impl DictIter {
    /// # Safety
    /// `dict` must be a live `dict` (or subclass) and the GIL held.
    #[inline]
    pub unsafe fn new(dict: *mut ffi::PyObject) -> Self {
        let mut it = DictIter { dict, entries: std::ptr::null(), end: std::ptr::null(), step: 0, pos: 0 };
        if DIRECT.load(Ordering::Relaxed) {
            let d = dict as *const DictObject;
            if (*d).ma_values.is_null() {
                let keys = (*d).ma_keys;
                let indices = std::ptr::addr_of!((*keys).dk_indices) as *const u8;
                let entries = indices.add(1usize << (*keys).dk_log2_index_bytes);
                let step = if (*keys).dk_kind == DICT_KEYS_GENERAL { 24 } else { 16 };
                it.entries = entries;
                it.end = entries.add((*keys).dk_nentries as usize * step);
                it.step = step;
            }
        }
        it
    }
}

impl Iterator for DictIter {
    type Item = (*mut ffi::PyObject, *mut ffi::PyObject);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        unsafe {
            if !self.entries.is_null() {
                // Key and value are the entry's last two pointers.
                let off = self.step - 16;
                while self.entries < self.end {
                    let e = self.entries.add(off) as *const *mut ffi::PyObject;
                    self.entries = self.entries.add(self.step);
                    let value = *e.add(1);
                    if !value.is_null() {
                        return Some((*e, value));
                    }
                }
                return None;
            }
            self.next_slow()
        }
    }
}

impl DictIter {
    #[inline(never)]
    unsafe fn next_slow(&mut self) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        if ffi::PyDict_Next(self.dict, &mut self.pos, &mut key, &mut value) != 0 {
            Some((key, value))
        } else {
            None
        }
    }
}

/// Call `f` with strong references to each `(key, value)` of a `dict` (or
/// subclass), in table order, even when `f` runs Python code: the entries
/// are held while `f` runs, and a dict that changes size meanwhile ends the
/// walk with `changed()` (a typed error; pyo3's own iterator panics there).
pub fn for_each_entry<'py>(
    dict: &Bound<'py, PyAny>,
    mut f: impl FnMut(Bound<'py, PyAny>, Bound<'py, PyAny>) -> PyResult<()>,
    changed: impl Fn() -> PyErr,
) -> PyResult<()> {
    let py = dict.py();
    let ptr = dict.as_ptr();
    // SAFETY: `dict` is a live dict (callers checked) and the GIL is held;
    // `PyDict_Next` bounds-checks `pos` against the current table.
    unsafe {
        let size = len(ptr);
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        loop {
            if len(ptr) != size {
                return Err(changed());
            }
            if ffi::PyDict_Next(ptr, &mut pos, &mut key, &mut value) == 0 {
                return Ok(());
            }
            f(Bound::from_borrowed_ptr(py, key), Bound::from_borrowed_ptr(py, value))?;
        }
    }
}

/// Whether a dict's key table holds only exact `str` keys, known from its
/// kind without looking at the keys (CPython keeps a "unicode" table, whose
/// lookups compare `str`s in C, until a key of any other type, a `str`
/// subclass included, is inserted). `false` when unknown (another layout,
/// or a general table): callers then must not look keys up by hash, since
/// a lookup in a general table calls the keys' `__eq__` (Python code).
///
/// # Safety
/// `dict` must be a live exact `dict` and the GIL held.
#[inline]
pub unsafe fn unicode_keys(dict: *mut ffi::PyObject) -> bool {
    if !DIRECT.load(Ordering::Relaxed) {
        return false;
    }
    let d = dict as *const DictObject;
    // Split tables (instance `__dict__`s) always have unicode keys.
    !(*d).ma_values.is_null() || (*(*d).ma_keys).dk_kind != DICT_KEYS_GENERAL
}
