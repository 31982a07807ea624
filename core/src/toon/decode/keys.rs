//! Sibling keys seen so far in each open object (strict mode), to reject a
//! duplicate: searched linearly in small objects, hashed in large ones.

use std::borrow::Cow;
use std::collections::HashSet;

/// The keys of the objects being decoded (strict mode), to reject duplicate
/// siblings. Small objects are searched linearly; an object that grows past
/// `LINEAR` keys also gets its keys in a hash set.
pub(super) struct SeenKeys<'a> {
    /// The keys of the open objects, innermost last: a [`key_tag`] (compared
    /// first, the text only when it is equal) and the key.
    pub(super) stack: Vec<(u64, SeenKey<'a>)>,
    /// Keys that are not slices of the text (unescaped ones).
    pub(super) owned: Vec<Box<str>>,
    pub(super) big: HashSet<(u64, Cow<'a, str>)>,
    pub(super) next_id: u64,
}

/// A key of [`SeenKeys`]: a slice of the text, or an index into its
/// `owned` keys. (`Copy`, so the stack is pushed and cut without drops.)
#[derive(Clone, Copy)]
pub(super) enum SeenKey<'a> {
    Text(&'a str),
    Owned(usize),
}

#[derive(Clone, Copy)]
pub(super) struct SeenFrame {
    base: usize,
    id: u64,
    /// `owned.len()` when the object opened.
    owned: usize,
}

const LINEAR: usize = 16;

impl<'a> SeenKeys<'a> {
    pub(super) fn begin(&mut self, strict: bool) -> Option<SeenFrame> {
        if !strict {
            return None;
        }
        self.next_id += 1;
        Some(SeenFrame { base: self.stack.len(), id: self.next_id, owned: self.owned.len() })
    }

    fn text(&self, k: SeenKey<'a>) -> &str {
        match k {
            SeenKey::Text(s) => s,
            SeenKey::Owned(i) => self.owned.get(i).map_or("", |s| s),
        }
    }

    fn cow(&self, k: SeenKey<'a>) -> Cow<'a, str> {
        match k {
            SeenKey::Text(s) => Cow::Borrowed(s),
            SeenKey::Owned(i) => Cow::Owned(self.owned.get(i).map_or_else(String::new, |s| s.to_string())),
        }
    }

    /// Record `key`; false when it is already there. (Takes the `Cow` to
    /// keep borrowed keys borrowed when storing them.)
    #[allow(clippy::ptr_arg)]
    pub(super) fn insert(&mut self, f: SeenFrame, key: &Cow<'a, str>) -> bool {
        let n = self.stack.len() - f.base;
        let tag = key_tag(key.as_bytes());
        if n < LINEAR {
            let open = self.stack.get(f.base..).unwrap_or_default();
            if open.iter().any(|&(t, k)| t == tag && self.text(k) == key.as_ref()) {
                return false;
            }
        } else if !self.big.insert((f.id, key.clone())) {
            return false;
        }
        let k = match key {
            Cow::Borrowed(s) => SeenKey::Text(s),
            Cow::Owned(s) => {
                self.owned.push(s.as_str().into());
                SeenKey::Owned(self.owned.len() - 1)
            }
        };
        self.stack.push((tag, k));
        if n + 1 == LINEAR {
            let keys: Vec<Cow<'a, str>> = self.stack.get(f.base..).unwrap_or_default().iter().map(|&(_, k)| self.cow(k)).collect();
            for k in keys {
                self.big.insert((f.id, k));
            }
        }
        true
    }

    pub(super) fn end(&mut self, f: Option<SeenFrame>) {
        let Some(f) = f else { return };
        if self.stack.len() - f.base >= LINEAR {
            let keys: Vec<Cow<'a, str>> = self.stack.get(f.base..).unwrap_or_default().iter().map(|&(_, k)| self.cow(k)).collect();
            for k in keys {
                self.big.remove(&(f.id, k));
            }
        }
        self.stack.truncate(f.base);
        self.owned.truncate(f.owned);
    }
}

/// A summary of a key (its length and first and last 8 bytes): different
/// tags mean different keys.
#[inline]
fn key_tag(b: &[u8]) -> u64 {
    let (x, y) = match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(f), Some(l)) => (u64::from_le_bytes(*f), u64::from_le_bytes(*l)),
        _ => (b.iter().fold(0u64, |v, &c| (v << 8) | u64::from(c)), 0),
    };
    x ^ y.rotate_left(23) ^ (b.len() as u64).rotate_left(55)
}
