//! The analysis of a value before it is written: which form an array or an
//! object takes. Tabular arrays (the header fields of rows that share one
//! key set, nested field groups included, and the one-pass header of
//! [`flat_fields`]), keyed tables (objects whose values form a table),
//! the item shapes of other arrays, the JavaScript order of an object's
//! entries, and for key folding the sibling keys a folded key must not
//! equal and the dotted path of an object.

use std::collections::HashSet;

use super::{enter, value_changed, EncodeValue, Kind, MAX_DEPTH};
use crate::json::array_index;

/// Whether an object key is an array index (re-ordered first).
#[inline]
pub(super) fn is_index_key(k: &str) -> bool {
    k.as_bytes().first().is_some_and(u8::is_ascii_digit) && array_index(k).is_some()
}

// ---------------------------------------------------------------- tables

/// A column of a tabular header: a leaf, or a nested field group (never
/// empty) whose leaves are written in place of the object.
#[derive(Debug)]
pub(super) struct Field<'k> {
    pub(super) name: &'k str,
    pub(super) children: Vec<Field<'k>>,
}

/// Entries of an object in JavaScript enumeration order, handed to `f` with
/// their position.
pub(super) fn for_each_entry<'k, V: EncodeValue<'k>>(
    obj: &V,
    mut f: impl FnMut(usize, &str, V) -> Result<(), V::Error>,
) -> Result<(), V::Error> {
    if obj.object_has_index_key()? {
        let mut entries = obj.object_entries().collect::<Result<Vec<_>, _>>()?;
        // Stable: non-index keys keep their relative order after the indices.
        entries.sort_by_key(|(k, _)| array_index(k).map_or(u64::MAX, u64::from));
        for (i, (k, v)) in entries.into_iter().enumerate() {
            f(i, k, v)?;
        }
    } else {
        for (i, entry) in obj.object_entries().enumerate() {
            let (k, v) = entry?;
            f(i, k, v)?;
        }
    }
    Ok(())
}

/// One item of [`EncodeValue::object_entries`].
type Entry<'a, V> = Result<(&'a str, V), <V as EncodeValue<'a>>::Error>;

/// The value of field `name` in `row`: the row's next entry when its key
/// matches (rows usually share the first row's key order), else a lookup.
#[inline]
pub(super) fn field_value<'k, V: EncodeValue<'k>>(row: &V, next: Option<Entry<'k, V>>, name: &str) -> Result<Option<V>, V::Error> {
    if let Some(entry) = next {
        let (k, v) = entry?;
        // Rows built the same way usually share their key objects, so a
        // borrowed key often is the very text of the field name.
        if (k.as_ptr() == name.as_ptr() && k.len() == name.len()) || k == name {
            return Ok(Some(v));
        }
    }
    row.object_get(name)
}

#[derive(Clone, Copy, PartialEq)]
enum Column {
    Primitive,
    Object,
}

/// The reference's `extractTabularFields`: the header fields when `rows`
/// (all objects) share one non-empty key set (in any order) and every column
/// is all primitives or all non-empty objects that are themselves tabular.
pub(super) fn tabular_fields<'k, V: EncodeValue<'k>>(rows: &[V], nest: usize) -> Result<Option<Vec<Field<'k>>>, V::Error> {
    enter(nest)?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let mut fields: Vec<Field<'k>> = Vec::with_capacity(first.object_len());
    if first.object_has_index_key()? {
        let mut keys = first.object_entries().map(|e| e.map(|(k, _)| k)).collect::<Result<Vec<_>, _>>()?;
        keys.sort_by_key(|k| array_index(k).map_or(u64::MAX, u64::from));
        fields.extend(keys.into_iter().map(|name| Field { name, children: Vec::new() }));
    } else {
        for entry in first.object_entries() {
            fields.push(Field { name: entry?.0, children: Vec::new() });
        }
    }
    if fields.is_empty() {
        return Ok(None);
    }
    let mut columns: Vec<Option<Column>> = vec![None; fields.len()];
    for row in rows {
        if row.object_len() != fields.len() {
            return Ok(None);
        }
        let mut entries = row.object_entries();
        for (field, column) in fields.iter().zip(columns.iter_mut()) {
            let Some(v) = field_value(row, entries.next(), field.name)? else {
                return Ok(None);
            };
            let this = match v.kind()? {
                Kind::Object if v.object_len() > 0 => Column::Object,
                Kind::Array | Kind::Object => return Ok(None),
                _ => Column::Primitive,
            };
            match column {
                None => *column = Some(this),
                Some(c) if *c == this => {}
                Some(_) => return Ok(None),
            }
        }
    }
    for (field, column) in fields.iter_mut().zip(&columns) {
        if *column != Some(Column::Object) {
            continue;
        }
        let mut values = Vec::with_capacity(rows.len());
        for row in rows {
            values.push(row.object_get(field.name)?.ok_or_else(value_changed)?);
        }
        match tabular_fields(&values, nest + 1)? {
            Some(children) => field.children = children,
            None => return Ok(None),
        }
    }
    Ok(Some(fields))
}

/// The header fields a table whose first row is `first` (at nesting level
/// `nest`) would have, when it can be one: see [`Writer::flat_table`](super::writer::Writer::flat_table).
/// `None` also for first rows the one-pass path leaves to
/// [`tabular_fields`]: objects with array-index keys (re-ordered) and
/// groups nested near [`MAX_DEPTH`] (which fail there).
pub(super) fn flat_fields<'k, V: EncodeValue<'k>>(first: &V, nest: usize) -> Result<Option<Vec<Field<'k>>>, V::Error> {
    if nest + 2 >= MAX_DEPTH || !matches!(first.kind()?, Kind::Object) {
        return Ok(None);
    }
    let mut fields: Vec<Field<'k>> = Vec::with_capacity(first.object_len());
    for entry in first.object_entries() {
        let (k, v) = entry?;
        if is_index_key(k) {
            return Ok(None);
        }
        let children = match v.kind()? {
            Kind::Object if v.object_len() > 0 => match flat_fields(&v, nest + 1)? {
                Some(children) => children,
                None => return Ok(None),
            },
            Kind::Array | Kind::Object => return Ok(None),
            _ => Vec::new(),
        };
        fields.push(Field { name: k, children });
    }
    Ok((!fields.is_empty()).then_some(fields))
}

/// The cells a row of a table with these header fields has.
pub(super) fn leaf_count(fields: &[Field<'_>]) -> usize {
    fields.iter().map(|f| if f.children.is_empty() { 1 } else { leaf_count(&f.children) }).sum()
}

/// An object in keyed tabular form: its values (the rows, in order) and the
/// header fields.
pub(super) struct Keyed<'k, V> {
    pub(super) rows: Vec<V>,
    pub(super) fields: Vec<Field<'k>>,
}

/// The reference's `extractKeyedTabularFields`: an object whose (at least
/// two) values are all non-empty objects forming a table.
pub(super) fn keyed_tabular<'k, V: EncodeValue<'k>>(obj: &V, nest: usize) -> Result<Option<Keyed<'k, V>>, V::Error> {
    let n = obj.object_len();
    if n < 2 {
        return Ok(None);
    }
    // Cheap order-free rejections first, without allocating: most objects
    // fail here. Every value must be a non-empty object, all of one size,
    // and (as `tabular_fields` requires of every row) no value of a row may
    // be an array or an empty object: checked on the first row met.
    let mut size = None;
    for entry in obj.object_entries() {
        let (_, v) = entry?;
        if !matches!(v.kind()?, Kind::Object) {
            return Ok(None);
        }
        let len = v.object_len();
        match size {
            None => {
                if len == 0 {
                    return Ok(None);
                }
                for cell in v.object_entries() {
                    let (_, c) = cell?;
                    match c.kind()? {
                        Kind::Array => return Ok(None),
                        Kind::Object if c.object_len() == 0 => return Ok(None),
                        _ => {}
                    }
                }
                size = Some(len);
            }
            Some(n) if n != len => return Ok(None),
            Some(_) => {}
        }
    }
    let mut rows = Vec::with_capacity(n);
    for_each_entry(obj, |_, _, v| {
        rows.push(v);
        Ok(())
    })?;
    let fields = match tabular_fields(&rows, nest + 1)? {
        Some(f) => f,
        None => return Ok(None),
    };
    Ok(Some(Keyed { rows, fields }))
}

// ---------------------------------------------------------------- arrays

/// What the items of a non-empty array are.
pub(super) struct ItemShape {
    pub(super) all_primitive: bool,
    pub(super) all_array: bool,
    pub(super) all_object: bool,
}

pub(super) fn item_shape<'k, V: EncodeValue<'k>>(arr: &V) -> Result<ItemShape, V::Error> {
    let mut s = ItemShape { all_primitive: true, all_array: true, all_object: true };
    for item in arr.array_items() {
        let item = item?;
        match item.kind()? {
            Kind::Array => {
                s.all_primitive = false;
                s.all_object = false;
            }
            Kind::Object => {
                s.all_primitive = false;
                s.all_array = false;
            }
            _ => {
                s.all_array = false;
                s.all_object = false;
            }
        }
        if !(s.all_primitive || s.all_array || s.all_object) {
            break;
        }
    }
    Ok(s)
}

pub(super) fn all_primitive<'k, V: EncodeValue<'k>>(arr: &V) -> Result<bool, V::Error> {
    for item in arr.array_items() {
        if !item?.kind()?.is_primitive() {
            return Ok(false);
        }
    }
    Ok(true)
}

// ---------------------------------------------------------------- key folding

/// Where an object's entries sit, for key folding (the reference 2.3.1's
/// `remainingDepth`, `pathPrefix` and `rootLiteralKeys` arguments).
#[derive(Clone, Copy)]
pub(super) struct FoldCtx<'p> {
    /// Segments a folded key may still take.
    pub(super) remaining: usize,
    /// Whether folded paths are checked against the root's dotted keys (in
    /// the root object's nesting, not inside arrays).
    pub(super) root_chain: bool,
    /// Dotted path of the object from the root; empty means none (the
    /// reference tests it for truthiness).
    pub(super) prefix: &'p str,
}

/// Dotted path of `key` under `prefix` (the reference's `currentPath`).
pub(super) fn join_path(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

/// With folding: the object's keys that contain a dot (a folded key always
/// does, so only these can collide with one).
pub(super) fn dotted_keys<'k, V: EncodeValue<'k>>(obj: &V) -> Result<Option<HashSet<String>>, V::Error> {
    let mut set: Option<HashSet<String>> = None;
    for entry in obj.object_entries() {
        let (k, _) = entry?;
        if k.contains('.') {
            set.get_or_insert_with(HashSet::new).insert(k.to_owned());
        }
    }
    Ok(set)
}
