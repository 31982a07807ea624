//! The JSON value the command holds between reading and writing: what
//! JavaScript's `JSON.parse` makes of a text (numbers are doubles, an
//! integer beyond 2^53 the nearest one; a key given twice keeps its first
//! place and its last value), kept small: object keys are shared (a table's
//! keys repeat on every row), objects are lists of entries. The TOON encoder
//! and its JSON writer walk it ([`EncodeValue`]).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::vec::Drain;

use polywire::json::Builder;
use polywire::toon::encode::{EncodeValue, Kind};

/// 2^53: integers up to this magnitude are exact doubles.
const SAFE: i64 = 1 << 53;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    /// An integer within ±2^53 (exactly a double).
    Int(i64),
    /// Any other number (NaN and the infinities are `null`).
    Float(f64),
    Str(Box<str>),
    Array(Vec<Value>),
    Object(Box<Object>),
}

/// An object's entries in their order (keys distinct), and an index of
/// them made when a large one is looked up by key.
#[derive(Debug, Clone, Default)]
pub(crate) struct Object {
    entries: Vec<(Rc<str>, Value)>,
    index: OnceCell<HashMap<Rc<str>, usize>>,
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.entries == other.entries
    }
}

/// Objects with more entries than this are indexed for lookups and checked
/// for repeated keys with a hash map.
const SMALL: usize = 16;

impl Object {
    fn get(&self, key: &str) -> Option<&Value> {
        if self.entries.len() <= SMALL {
            return self.entries.iter().find(|(k, _)| &**k == key).map(|(_, v)| v);
        }
        let index = self.index.get_or_init(|| self.entries.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)).collect());
        index.get(key).map(|&i| &self.entries[i].1)
    }
}

impl Drop for Value {
    /// Taken apart without recursion: a document nested as deep as the
    /// parser allows must not overflow the stack when it goes.
    fn drop(&mut self) {
        let mut stack: Vec<Value> = Vec::new();
        let take = |v: &mut Value, stack: &mut Vec<Value>| match v {
            Value::Array(items) if !items.is_empty() => stack.append(items),
            Value::Object(o) if !o.entries.is_empty() => stack.extend(o.entries.drain(..).map(|(_, v)| v)),
            _ => {}
        };
        take(self, &mut stack);
        while let Some(mut v) = stack.pop() {
            take(&mut v, &mut stack);
        }
    }
}

/// Builds [`Value`]s as JavaScript reads JSON and TOON (see the module).
#[derive(Default)]
pub(crate) struct JsBuilder {
    /// Keys made so far, shared by the objects that use them (at most
    /// [`KEYS`] distinct ones are kept).
    keys: HashMap<Box<str>, Rc<str>>,
}

const KEYS: usize = 4096;

impl Builder for JsBuilder {
    type Value = Value;
    type Key = Rc<str>;
    type Error = polywire::Error;

    fn null(&mut self) -> polywire::Result<Value> {
        Ok(Value::Null)
    }
    fn bool(&mut self, b: bool) -> polywire::Result<Value> {
        Ok(Value::Bool(b))
    }
    fn int(&mut self, i: i64) -> polywire::Result<Value> {
        if (-SAFE..=SAFE).contains(&i) {
            Ok(Value::Int(i))
        } else {
            self.float(i as f64)
        }
    }
    fn big_int(&mut self, digits: &str) -> polywire::Result<Value> {
        self.float(digits.parse::<f64>().unwrap_or(f64::NAN))
    }
    fn float(&mut self, f: f64) -> polywire::Result<Value> {
        Ok(if f.is_finite() { Value::Float(f) } else { Value::Null })
    }
    fn string(&mut self, s: &str) -> polywire::Result<Value> {
        Ok(Value::Str(s.into()))
    }
    fn key(&mut self, s: &str) -> polywire::Result<Rc<str>> {
        if let Some(k) = self.keys.get(s) {
            return Ok(k.clone());
        }
        let k: Rc<str> = s.into();
        if self.keys.len() < KEYS {
            self.keys.insert(s.into(), k.clone());
        }
        Ok(k)
    }
    fn key_again(&mut self, key: &Rc<str>, _: &str) -> polywire::Result<Rc<str>> {
        Ok(key.clone())
    }
    fn array(&mut self, items: Drain<'_, Value>) -> polywire::Result<Value> {
        Ok(Value::Array(items.collect()))
    }
    fn object(&mut self, entries: Drain<'_, (Rc<str>, Value)>) -> polywire::Result<Value> {
        let n = entries.len();
        let mut out: Vec<(Rc<str>, Value)> = Vec::with_capacity(n);
        if n <= SMALL {
            for (k, v) in entries {
                match out.iter_mut().find(|(o, _)| *o == k) {
                    Some(e) => e.1 = v,
                    None => out.push((k, v)),
                }
            }
        } else {
            let mut seen: HashMap<Rc<str>, usize> = HashMap::with_capacity(n);
            for (k, v) in entries {
                match seen.get(&k) {
                    Some(&i) => out[i].1 = v,
                    None => {
                        seen.insert(k.clone(), out.len());
                        out.push((k, v));
                    }
                }
            }
        }
        Ok(Value::Object(Box::new(Object { entries: out, index: OnceCell::new() })))
    }
}

impl<'a> EncodeValue<'a> for &'a Value {
    type Error = polywire::Error;

    #[inline]
    fn kind(&self) -> polywire::Result<Kind<'_>> {
        Ok(match self {
            Value::Null => Kind::Null,
            Value::Bool(b) => Kind::Bool(*b),
            Value::Int(i) => Kind::Int(*i),
            Value::Float(f) => Kind::Float(*f),
            Value::Str(s) => Kind::Str(s),
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        })
    }

    #[inline]
    fn array_len(&self) -> usize {
        match self {
            Value::Array(a) => a.len(),
            _ => 0,
        }
    }

    fn array_items(&self) -> impl Iterator<Item = polywire::Result<Self>> + '_ {
        let items: &'a [Value] = match *self {
            Value::Array(a) => a,
            _ => &[],
        };
        items.iter().map(Ok)
    }

    #[inline]
    fn object_len(&self) -> usize {
        match self {
            Value::Object(o) => o.entries.len(),
            _ => 0,
        }
    }

    fn object_entries(&self) -> impl Iterator<Item = polywire::Result<(&'a str, Self)>> + '_ {
        let entries: &'a [(Rc<str>, Value)] = match *self {
            Value::Object(o) => &o.entries,
            _ => &[],
        };
        entries.iter().map(|(k, v)| Ok((&**k, v)))
    }

    fn object_get(&self, key: &str) -> polywire::Result<Option<Self>> {
        Ok(match *self {
            Value::Object(o) => o.get(key),
            _ => None,
        })
    }
}

impl Value {
    /// `JSON.stringify(value)`: compact, keys in JavaScript's order.
    pub(crate) fn to_json(&self) -> polywire::Result<Vec<u8>> {
        let mut out = Vec::new();
        polywire::toon::encode::json_into(&self, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        let opts = polywire::json::ParseOptions { utf8_checked: true, ..Default::default() };
        polywire::json::parse_with(text.as_bytes(), opts, &mut JsBuilder::default()).unwrap()
    }

    #[test]
    fn reads_as_json_parse() {
        let text = |v: &Value| String::from_utf8(v.to_json().unwrap()).unwrap();
        assert_eq!(text(&parse(r#"{"a": 1, "b": 2, "a": 3, "10": 4, "2": 5}"#)), r#"{"2":5,"10":4,"a":3,"b":2}"#);
        assert_eq!(
            text(&parse("[12345678901234567890, 9007199254740993, -0, 1.0, 1e400]")),
            "[12345678901234567000,9007199254740992,0,1,null]"
        );
        // A large object: repeated keys found by hash, lookups indexed.
        let big = format!("{{{}, \"k7\": \"again\"}}", (0..100).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>().join(", "));
        let v = parse(&big);
        assert_eq!((&v).object_len(), 100);
        assert_eq!((&v).object_get("k7").unwrap(), Some(&Value::Str("again".into())));
        assert_eq!((&v).object_get("k99").unwrap(), Some(&Value::Int(99)));
        assert_eq!((&v).object_get("nope").unwrap(), None);
    }

    #[test]
    fn deep_values_drop_without_recursion() {
        let mut v = Value::Null;
        for _ in 0..1_000_000 {
            v = Value::Array(vec![v]);
        }
        drop(v);
    }
}
