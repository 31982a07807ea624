//! Path expansion ([`ExpandPaths::Safe`](super::ExpandPaths::Safe)): the
//! value decoded into a private tree, its dotted keys expanded into nested
//! objects (merging objects that meet, resolving conflicts), then built
//! with the caller's builder.

use std::collections::{HashMap, HashSet};
use std::vec::Drain;

use super::errors::{internal, key_conflict, too_deep_expanded};
use super::sink::Sink;
use super::EXPAND_MAX_DEPTH;
use crate::error::{Error, Format, Result};
use crate::json::Builder;
use crate::toon::syntax::is_identifier;

/// A decoded value held for path expansion (only then is a tree built).
pub(super) enum Tree {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A number token kept as text for the caller's
    /// [`Builder::number_token`] (`true`: an integer literal).
    Num(String, bool),
    Str(String),
    Array(Vec<Tree>),
    Object(Obj),
}

/// An object as JavaScript holds one: keys in first-insertion order, a
/// repeated key overwriting the value in place.
#[derive(Default)]
pub(super) struct Obj {
    entries: Vec<(String, Tree)>,
    index: HashMap<String, usize>,
    /// Dotted keys that were written in quotes somewhere (left literal).
    quoted: HashSet<String>,
}

impl Obj {
    fn get(&self, k: &str) -> Option<&Tree> {
        self.index.get(k).and_then(|&i| self.entries.get(i)).map(|e| &e.1)
    }

    fn get_mut(&mut self, k: &str) -> Option<&mut Tree> {
        let i = *self.index.get(k)?;
        self.entries.get_mut(i).map(|e| &mut e.1)
    }

    fn set(&mut self, k: String, v: Tree) {
        if let Some(slot) = self.get_mut(&k) {
            *slot = v;
            return;
        }
        self.index.insert(k.clone(), self.entries.len());
        self.entries.push((k, v));
    }
}

impl Tree {
    /// JavaScript's `typeof`, for conflict messages.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Tree::Bool(_) => "boolean",
            Tree::Int(_) | Tree::Float(_) | Tree::Num(..) => "number",
            Tree::Str(_) => "string",
            Tree::Null | Tree::Array(_) | Tree::Object(_) => "object",
        }
    }
}

/// Builds a [`Tree`], remembering which dotted keys were quoted.
pub(super) struct TreeBuilder;

impl Builder for TreeBuilder {
    type Value = Tree;
    type Key = (String, bool);
    type Error = Error;
    fn null(&mut self) -> Result<Tree> {
        Ok(Tree::Null)
    }
    fn bool(&mut self, v: bool) -> Result<Tree> {
        Ok(Tree::Bool(v))
    }
    fn int(&mut self, i: i64) -> Result<Tree> {
        Ok(Tree::Int(i))
    }
    fn big_int(&mut self, digits: &str) -> Result<Tree> {
        Ok(Tree::Float(digits.parse().unwrap_or(f64::NAN)))
    }
    fn float(&mut self, f: f64) -> Result<Tree> {
        Ok(Tree::Float(f))
    }
    fn number_token(&mut self, text: &str, integer: bool) -> Result<Option<Tree>> {
        // Finite as a double, else the token is a string (as by default).
        if text.parse::<f64>().is_ok_and(f64::is_finite) {
            Ok(Some(Tree::Num(text.to_owned(), integer)))
        } else {
            Ok(None)
        }
    }
    fn string(&mut self, s: &str) -> Result<Tree> {
        Ok(Tree::Str(s.to_owned()))
    }
    fn key(&mut self, s: &str) -> Result<(String, bool)> {
        Ok((s.to_owned(), false))
    }
    fn key_again(&mut self, key: &(String, bool), _: &str) -> Result<(String, bool)> {
        // A copy keeps whether it was quoted.
        Ok(key.clone())
    }
    fn array(&mut self, items: Drain<'_, Tree>) -> Result<Tree> {
        Ok(Tree::Array(items.collect()))
    }
    fn object(&mut self, entries: Drain<'_, ((String, bool), Tree)>) -> Result<Tree> {
        let mut obj = Obj::default();
        for ((k, quoted), v) in entries {
            if quoted && k.contains('.') {
                obj.quoted.insert(k.clone());
            }
            obj.set(k, v);
        }
        Ok(Tree::Object(obj))
    }
}

impl Sink for TreeBuilder {
    fn quoted_key(&mut self, s: &str) -> Result<(String, bool)> {
        Ok((s.to_owned(), true))
    }
}

/// Expand the dotted keys of `t` (at nesting `level`) as the spec v3
/// reference (`@toon-format/toon` 2.3.1, `expandPathsSafe`) does: an
/// unquoted key whose dot-separated segments are all identifiers becomes
/// nested objects; objects meeting at one path merge deeply; any other
/// meeting is a conflict, an error in strict mode and otherwise won by the
/// later value.
pub(super) fn expand(t: Tree, strict: bool, level: usize) -> Result<Tree> {
    match t {
        Tree::Array(items) => {
            if level >= EXPAND_MAX_DEPTH {
                return Err(too_deep_expanded());
            }
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(expand(item, strict, level + 1)?);
            }
            Ok(Tree::Array(out))
        }
        Tree::Object(obj) => {
            if level >= EXPAND_MAX_DEPTH {
                return Err(too_deep_expanded());
            }
            let Obj { entries, quoted, .. } = obj;
            let mut out = Obj::default();
            for (key, value) in entries {
                if key.contains('.') && !quoted.contains(&key) {
                    let segments: Vec<&str> = key.split('.').collect();
                    if segments.iter().all(|s| is_identifier(s)) {
                        if level + segments.len() >= EXPAND_MAX_DEPTH {
                            return Err(too_deep_expanded());
                        }
                        let value = expand(value, strict, level + segments.len())?;
                        insert_path(&mut out, &segments, value, strict)?;
                        continue;
                    }
                }
                let value = expand(value, strict, level + 1)?;
                put(&mut out, key, value, strict)?;
            }
            Ok(Tree::Object(out))
        }
        other => Ok(other),
    }
}

/// Set `key` in `obj`, merging two objects and resolving other conflicts.
fn put(obj: &mut Obj, key: String, value: Tree, strict: bool) -> Result<()> {
    match obj.get_mut(&key) {
        None => obj.set(key, value),
        Some(Tree::Object(existing)) if matches!(value, Tree::Object(_)) => {
            if let Tree::Object(source) = value {
                merge(existing, source, strict)?;
            }
        }
        Some(existing) => {
            if strict {
                return Err(key_conflict(&key, existing, &value));
            }
            *existing = value;
        }
    }
    Ok(())
}

fn merge(target: &mut Obj, source: Obj, strict: bool) -> Result<()> {
    for (key, value) in source.entries {
        put(target, key, value, strict)?;
    }
    Ok(())
}

/// Insert `value` at `segments` under `obj`, creating the objects on the
/// way (a non-object in the way is a conflict).
fn insert_path(obj: &mut Obj, segments: &[&str], value: Tree, strict: bool) -> Result<()> {
    let Some((last, path)) = segments.split_last() else { return Err(internal()) };
    let mut node = obj;
    for &seg in path {
        let fresh = match node.get(seg) {
            None => true,
            Some(Tree::Object(_)) => false,
            Some(other) => {
                if strict {
                    return Err(Error::new(
                        Format::Toon,
                        "TOON_EXPANSION_CONFLICT",
                        format!("Path expansion conflict at segment \"{seg}\": expected object but found {}", other.type_name()),
                    ));
                }
                true
            }
        };
        if fresh {
            node.set(seg.to_owned(), Tree::Object(Obj::default()));
        }
        node = match node.get_mut(seg) {
            Some(Tree::Object(o)) => o,
            _ => return Err(internal()),
        };
    }
    put(node, (*last).to_owned(), value, strict)
}

/// Build the expanded tree with the caller's builder.
pub(super) fn replay<B: Builder>(
    t: Tree,
    b: &mut B,
    values: &mut Vec<B::Value>,
    entries: &mut Vec<(B::Key, B::Value)>,
) -> Result<B::Value, B::Error> {
    match t {
        Tree::Null => b.null(),
        Tree::Bool(v) => b.bool(v),
        Tree::Int(i) => b.int(i),
        Tree::Float(f) => b.float(f),
        Tree::Num(text, integer) => match b.number_token(&text, integer)? {
            Some(v) => Ok(v),
            None => b.string(&text),
        },
        Tree::Str(s) => b.string(&s),
        Tree::Array(items) => {
            b.begin_array()?;
            let base = values.len();
            for item in items {
                let v = replay(item, b, values, entries)?;
                values.push(v);
            }
            b.array(values.drain(base..))
        }
        Tree::Object(obj) => {
            b.begin_object()?;
            let base = entries.len();
            for (k, v) in obj.entries {
                let key = b.key(&k)?;
                let v = replay(v, b, values, entries)?;
                entries.push((key, v));
            }
            b.object(entries.drain(base..))
        }
    }
}
