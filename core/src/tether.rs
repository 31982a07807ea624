//! Tether: Caffeine's 32-bit big-endian tagged object encoding.
//!
//! Tether is the remote-messaging protocol between Caffeine object memories
//! (Smalltalk running in SqueakJS), its Deno bridge and the `smalltalk-mcp`
//! `send` tool. Upstream truth: ccrraaiigg/caffeine `deno/tether.js` and
//! `deno/bridge.js`, ccrraaiigg/smalltalk-mcp.
//!
//! Everything is a sequence of 32-bit big-endian words, with no padding after
//! byte data. The first word of a value says what it is:
//!
//! | word | value |
//! |---|---|
//! | `0x70000000..=0xFFFFFFFF` | an instruction (never a value: rejected) |
//! | `0x60000001..=0x6FFFFFFF` | a proxy: exposure hash `word - 0x60000001` |
//! | `0x40000000..=0x5FFFFFFF` | a SmallInteger `word - 0x40000000` (0..=0x1FFFFFFF) |
//! | `0x20000001` / `0x20000002` / `0x20000003` | true / false / nil |
//! | `0x20000004` / `0x20000005` / `0x2000001B` | Symbol / String / ByteArray: a length word (byte count), then the bytes |
//! | `0x20000008` | Array: a length word (element count), then the elements |
//! | `0x20000011` | UUID: the length word 16, then 16 bytes |
//!
//! Frames (see [`MessageSend`], [`Answer`], [`encode_handshake`]):
//!
//! - message send: `0x20000007`, a UUID, the receiver's exposure hash as a
//!   bare word, `0x20000021` (a Message), the selector as a Symbol, the
//!   arguments as an Array;
//! - answer on the wire: `0x2000001D`, the UUID of the send it answers, the
//!   result; the MCP `send` tool's answer is `0x2000001D` followed directly by
//!   the result (no UUID). [`decode_answer`] reads both;
//! - handshake: one word, the exposure hash plus `0x60000001`.
//!
//! The `tether-encoding.md` design document gives the answer tag's bytes as
//! `20 00 03 BD`; that is wrong: `0x2000001D` is `20 00 00 1D`.
//!
//! ## Text
//!
//! Strings and Symbols are UTF-8 by default ([`Text::Utf8`]): the length word
//! counts UTF-8 bytes. The Caffeine JS bridge (`tether.js`) instead writes one
//! byte per character — the code point's low 8 bits — with a length word that
//! counts UTF-16 code units, and reads bytes back with `String.fromCharCode`.
//! That is exactly ISO-8859-1 (Latin-1) for text whose characters are all
//! below U+0100, and silently corrupt for anything else (`"€"` is written as
//! the single byte `0xAC`). [`Text::Latin1`] speaks that form faithfully:
//! bytes map 1:1 to U+0000..=U+00FF when decoding, and encoding a character
//! above U+00FF is an error (`TETHER_UNENCODABLE_CHARACTER`) rather than a
//! silent truncation. ASCII text encodes the same either way.
//!
//! ## Strictness
//!
//! Decoding checks everything the upstream reader assumes: a length is checked
//! against the bytes present before anything is allocated, Arrays nest at most
//! [`Options::max_depth`] deep ([`DEFAULT_MAX_DEPTH`]), a UUID's length word
//! must be 16, text must be valid in the chosen [`Text`] form, and
//! [`decode`] rejects bytes left over after the value. The word `0x60000000`,
//! which lies between the SmallInteger range and the proxy range, is rejected
//! (upstream's reader would take it for the SmallInteger 0x20000000, which no
//! encoder can write). Integers outside 0..=0x1FFFFFFF have no encoding:
//! negative integers are not implemented upstream (`negativeNumberTag`), and
//! larger ones would run into the proxy range.

use crate::error::{Error, Format, Result};
use std::fmt;

/// Words at or above this are instructions.
pub const INSTRUCTIONS_BASE: u32 = 0x7000_0000;
/// Proxy words are `PROXY_BASE + exposure hash` (upstream `otherMarkerBase`).
pub const PROXY_BASE: u32 = 0x6000_0001;
/// SmallInteger words are `SMALL_INTEGER_BASE + n`.
pub const SMALL_INTEGER_BASE: u32 = 0x4000_0000;
/// Class tags and special values start here; words below are unsupported.
pub const CLASS_TAGS_BASE: u32 = 0x2000_0000;
/// The largest SmallInteger with an encoding (`0x5FFFFFFF` on the wire).
pub const MAX_SMALL_INTEGER: u32 = 0x1FFF_FFFF;
/// The largest exposure hash a proxy word can carry (`0x6FFFFFFF` on the wire).
pub const MAX_EXPOSURE_HASH: u32 = INSTRUCTIONS_BASE - 1 - PROXY_BASE;

pub const TRUE_TAG: u32 = 0x2000_0001;
pub const FALSE_TAG: u32 = 0x2000_0002;
pub const NIL_TAG: u32 = 0x2000_0003;
pub const SYMBOL_TAG: u32 = 0x2000_0004;
pub const STRING_TAG: u32 = 0x2000_0005;
/// Starts a message-send frame (upstream `tetherTag`).
pub const MESSAGE_SEND_TAG: u32 = 0x2000_0007;
pub const ARRAY_TAG: u32 = 0x2000_0008;
pub const UUID_TAG: u32 = 0x2000_0011;
pub const BYTE_ARRAY_TAG: u32 = 0x2000_001B;
/// Starts an answer frame.
pub const ANSWER_TAG: u32 = 0x2000_001D;
/// Precedes the selector in a message-send frame.
pub const MESSAGE_TAG: u32 = 0x2000_0021;

/// Default limit on Array nesting: `[[1]]` is two levels deep.
pub const DEFAULT_MAX_DEPTH: usize = 256;

/// A 16-byte UUID, written as 16 raw bytes in Tether.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// A random (version 4) UUID from the operating system's generator.
    pub fn new_v4() -> Uuid {
        let mut b = [0u8; 16];
        if getrandom::fill(&mut b).is_err() {
            fallback_random(&mut b);
        }
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        Uuid(b)
    }

    pub fn from_bytes(bytes: [u8; 16]) -> Uuid {
        Uuid(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// Parse the text forms the Rust `uuid` crate accepts: hyphenated
    /// `8-4-4-4-12`, 32 plain hex digits, `{hyphenated}` and
    /// `urn:uuid:hyphenated`; hex digits in either case.
    pub fn parse(s: &str) -> Option<Uuid> {
        // The forms the `uuid` crate's `parse_str` takes (what upstream AXON
        // deserializes with), no others: 32 hex digits, or hyphenated
        // 8-4-4-4-12 alone, in braces or after `urn:uuid:`. (Braces or the
        // URN prefix around the 32-digit form are not UUIDs there.)
        let b = match s.len() {
            38 => s.strip_prefix('{').and_then(|r| r.strip_suffix('}'))?,
            45 => s.strip_prefix("urn:uuid:")?,
            _ => s,
        }
        .as_bytes();
        let digits: [u8; 32] = match b.len() {
            32 if s.len() == 32 => b.try_into().ok()?,
            36 => {
                if b[8] != b'-' || b[13] != b'-' || b[18] != b'-' || b[23] != b'-' {
                    return None;
                }
                let mut d = [0u8; 32];
                let mut n = 0;
                for (i, &c) in b.iter().enumerate() {
                    if !matches!(i, 8 | 13 | 18 | 23) {
                        d[n] = c;
                        n += 1;
                    }
                }
                d
            }
            _ => return None,
        };
        let mut out = [0u8; 16];
        for (i, pair) in digits.chunks_exact(2).enumerate() {
            out[i] = (hex_val(pair[0])? << 4) | hex_val(pair[1])?;
        }
        Some(Uuid(out))
    }
}

impl fmt::Display for Uuid {
    /// Lowercase hyphenated `8-4-4-4-12`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uuid({self})")
    }
}

/// Only used if the OS generator fails: time, a counter and a stack address
/// mixed with splitmix64. Unique enough for message ids, not for secrets.
#[cold]
fn fallback_random(out: &mut [u8; 16]) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(32) ^ (out.as_ptr() as u64);
    for chunk in out.chunks_mut(8) {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
}

/// A Tether value.
///
/// `Clone`, `PartialEq`, `Hash`, `Debug` and `Drop` are written by hand so
/// that none of them recurses on the native stack: a value a million Arrays
/// deep (which decoding with a raised `max_depth` can build) is cloned,
/// compared, hashed, printed and dropped with heap stacks.
pub enum Value {
    /// 0..=[`MAX_SMALL_INTEGER`]; see [`Value::integer`].
    SmallInteger(u32),
    Bool(bool),
    Nil,
    Symbol(String),
    String(String),
    ByteArray(Vec<u8>),
    Array(Vec<Value>),
    Uuid(Uuid),
    /// A reference to a remote object, by its exposure hash
    /// (0..=[`MAX_EXPOSURE_HASH`]).
    Proxy(u32),
}

/// Dropping a Value never recurses on the native stack: nested Arrays are
/// taken apart on a heap stack, so a value a million Arrays deep (which
/// decoding with a raised `max_depth` can build) drops safely. (A `Drop`
/// impl means an Array's elements are taken with [`Value::into_array`] or
/// `std::mem::take` rather than moved out by a pattern.)
impl Drop for Value {
    fn drop(&mut self) {
        let Value::Array(items) = self else { return };
        if !items.iter().any(|v| matches!(v, Value::Array(inner) if !inner.is_empty())) {
            return;
        }
        let mut pending = std::mem::take(items);
        while let Some(mut v) = pending.pop() {
            if let Value::Array(inner) = &mut v {
                pending.append(inner);
            }
            // `v` is now a scalar or an empty Array: dropping it is flat.
        }
    }
}

impl Value {
    /// A copy of a value that is not an Array (`None` for an Array).
    fn clone_leaf(&self) -> Option<Value> {
        Some(match self {
            Value::SmallInteger(n) => Value::SmallInteger(*n),
            Value::Bool(b) => Value::Bool(*b),
            Value::Nil => Value::Nil,
            Value::Symbol(s) => Value::Symbol(s.clone()),
            Value::String(s) => Value::String(s.clone()),
            Value::ByteArray(b) => Value::ByteArray(b.clone()),
            Value::Uuid(u) => Value::Uuid(*u),
            Value::Proxy(h) => Value::Proxy(*h),
            Value::Array(_) => return None,
        })
    }

    /// Leaves equal; Arrays are compared by the caller's walk.
    fn leaf_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::SmallInteger(a), Value::SmallInteger(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Nil, Value::Nil) => true,
            (Value::Symbol(a), Value::Symbol(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::ByteArray(a), Value::ByteArray(b)) => a == b,
            (Value::Uuid(a), Value::Uuid(b)) => a == b,
            (Value::Proxy(a), Value::Proxy(b)) => a == b,
            _ => false,
        }
    }

    /// The elements of an Array, or the value itself back if it is not one.
    pub fn into_array(mut self) -> std::result::Result<Vec<Value>, Value> {
        match &mut self {
            Value::Array(items) => Ok(std::mem::take(items)),
            _ => Err(self),
        }
    }

    /// A SmallInteger, or `TETHER_INTEGER_RANGE` when `n` has no encoding.
    pub fn integer(n: i128) -> Result<Value> {
        match u32::try_from(n) {
            Ok(u) if u <= MAX_SMALL_INTEGER => Ok(Value::SmallInteger(u)),
            _ => Err(integer_out_of_range(n)),
        }
    }

    /// The Tether name of the value's kind, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::SmallInteger(_) => "SmallInteger",
            Value::Bool(_) => "Boolean",
            Value::Nil => "nil",
            Value::Symbol(_) => "Symbol",
            Value::String(_) => "String",
            Value::ByteArray(_) => "ByteArray",
            Value::Array(_) => "Array",
            Value::Uuid(_) => "UUID",
            Value::Proxy(_) => "proxy",
        }
    }
}

impl Clone for Value {
    fn clone(&self) -> Value {
        if let Some(leaf) = self.clone_leaf() {
            return leaf;
        }
        // One frame per open Array: the elements still to copy and the copy
        // so far.
        let mut stack: Vec<(std::slice::Iter<'_, Value>, Vec<Value>)> = Vec::new();
        if let Value::Array(items) = self {
            stack.push((items.iter(), Vec::with_capacity(items.len())));
        }
        while let Some((iter, out)) = stack.last_mut() {
            match iter.next() {
                Some(v) => match v.clone_leaf() {
                    Some(leaf) => out.push(leaf),
                    None => {
                        if let Value::Array(inner) = v {
                            stack.push((inner.iter(), Vec::with_capacity(inner.len())));
                        }
                    }
                },
                None => {
                    let done = Value::Array(stack.pop().map(|(_, out)| out).unwrap_or_default());
                    match stack.last_mut() {
                        Some((_, parent)) => parent.push(done),
                        None => return done,
                    }
                }
            }
        }
        Value::Nil // unreachable: the loop returns when the outer Array closes
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        let mut stack: Vec<(std::slice::Iter<'_, Value>, std::slice::Iter<'_, Value>)> = Vec::new();
        match (self, other) {
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => stack.push((a.iter(), b.iter())),
            (Value::Array(_), _) | (_, Value::Array(_)) => return false,
            _ => return self.leaf_eq(other),
        }
        while let Some((a, b)) = stack.last_mut() {
            match (a.next(), b.next()) {
                (Some(Value::Array(x)), Some(Value::Array(y))) => {
                    if x.len() != y.len() {
                        return false;
                    }
                    stack.push((x.iter(), y.iter()));
                }
                (Some(x), Some(y)) => {
                    if !x.leaf_eq(y) {
                        return false;
                    }
                }
                // Lengths were equal, so both end together.
                _ => {
                    stack.pop();
                }
            }
        }
        true
    }
}

impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut stack: Vec<std::slice::Iter<'_, Value>> = Vec::new();
        let mut next = Some(self);
        loop {
            if let Some(v) = next.take() {
                std::mem::discriminant(v).hash(state);
                match v {
                    Value::SmallInteger(n) => n.hash(state),
                    Value::Bool(b) => b.hash(state),
                    Value::Nil => {}
                    Value::Symbol(s) | Value::String(s) => s.hash(state),
                    Value::ByteArray(b) => b.hash(state),
                    Value::Uuid(u) => u.hash(state),
                    Value::Proxy(h) => h.hash(state),
                    Value::Array(items) => {
                        items.len().hash(state);
                        stack.push(items.iter());
                    }
                }
            }
            match stack.last_mut() {
                None => return,
                Some(iter) => match iter.next() {
                    Some(v) => next = Some(v),
                    None => {
                        stack.pop();
                    }
                },
            }
        }
    }
}

/// Prints as `#[derive(Debug)]` would in its one-line form (`{:#?}` too):
/// `Array([SmallInteger(1), String("a")])`.
impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn leaf(v: &Value, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match v {
                Value::SmallInteger(n) => write!(f, "SmallInteger({n:?})"),
                Value::Bool(b) => write!(f, "Bool({b:?})"),
                Value::Nil => f.write_str("Nil"),
                Value::Symbol(s) => write!(f, "Symbol({s:?})"),
                Value::String(s) => write!(f, "String({s:?})"),
                Value::ByteArray(b) => write!(f, "ByteArray({b:?})"),
                Value::Uuid(u) => write!(f, "Uuid({u:?})"),
                Value::Proxy(h) => write!(f, "Proxy({h:?})"),
                Value::Array(_) => Ok(()),
            }
        }
        // One frame per open Array: its elements still to print, and
        // whether one was printed (a separator goes before every other).
        let mut stack: Vec<(std::slice::Iter<'_, Value>, bool)> = Vec::new();
        let mut next = Some(self);
        loop {
            if let Some(v) = next.take() {
                match v {
                    Value::Array(items) => {
                        f.write_str("Array([")?;
                        stack.push((items.iter(), false));
                    }
                    _ => leaf(v, f)?,
                }
            }
            let Some((iter, started)) = stack.last_mut() else { return Ok(()) };
            match iter.next() {
                Some(v) => {
                    if *started {
                        f.write_str(", ")?;
                    }
                    *started = true;
                    next = Some(v);
                }
                None => {
                    f.write_str("])")?;
                    stack.pop();
                }
            }
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Value {
        Value::ByteArray(b)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::Array(items)
    }
}

impl From<Uuid> for Value {
    fn from(u: Uuid) -> Value {
        Value::Uuid(u)
    }
}

/// How String and Symbol characters become bytes (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Text {
    /// UTF-8; the length word counts bytes.
    #[default]
    Utf8,
    /// One byte per character, U+0000..=U+00FF (what the Caffeine JS bridge
    /// writes for such text).
    Latin1,
}

/// Encoding and decoding options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub text: Text,
    /// Deepest Array nesting accepted (decoding) or written (encoding).
    pub max_depth: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { text: Text::Utf8, max_depth: DEFAULT_MAX_DEPTH }
    }
}

impl Options {
    /// The one-byte-per-character text form of the Caffeine JS bridge.
    pub fn latin1() -> Options {
        Options { text: Text::Latin1, ..Options::default() }
    }
}

#[cold]
fn err(code: &'static str, message: impl Into<String>) -> Error {
    Error::new(Format::Tether, code, message)
}

/// The `TETHER_INTEGER_RANGE` error for an integer with no encoding (public
/// so that bindings report big integers the same way).
#[cold]
pub fn integer_out_of_range(n: impl fmt::Display) -> Error {
    err(
        "TETHER_INTEGER_RANGE",
        format!(
            "no Tether encoding for {n}: a SmallInteger must be 0..={MAX_SMALL_INTEGER} (0x1FFFFFFF); \
             negative integers are not implemented (negativeNumberTag) and larger ones would collide \
             with proxy words — send such numbers as a String"
        ),
    )
}

#[cold]
fn exposure_hash_out_of_range(what: &str, hash: u32) -> Error {
    err(
        "TETHER_EXPOSURE_HASH_RANGE",
        format!(
            "{what} exposure hash {hash} (0x{hash:08x}) is too large: it must be 0..={MAX_EXPOSURE_HASH} \
             (0x{MAX_EXPOSURE_HASH:08x}) so that 0x60000001 + hash stays below the instruction range"
        ),
    )
}

/// A short name for a known tag, for messages.
fn tag_name(tag: u32) -> Option<&'static str> {
    Some(match tag {
        TRUE_TAG => "true",
        FALSE_TAG => "false",
        NIL_TAG => "nil",
        SYMBOL_TAG => "Symbol",
        STRING_TAG => "String",
        MESSAGE_SEND_TAG => "message send",
        ARRAY_TAG => "Array",
        UUID_TAG => "UUID",
        BYTE_ARRAY_TAG => "ByteArray",
        ANSWER_TAG => "answer",
        MESSAGE_TAG => "Message",
        _ => return None,
    })
}

// ---------------------------------------------------------------- encoding

fn put_word(out: &mut Vec<u8>, w: u32) {
    out.extend_from_slice(&w.to_be_bytes());
}

fn length_word(len: usize, what: &str) -> Result<u32> {
    u32::try_from(len).map_err(|_| err("TETHER_TOO_LONG", format!("{what} of {len} does not fit a 32-bit length word")))
}

fn put_text(out: &mut Vec<u8>, tag: u32, s: &str, text: Text) -> Result<()> {
    match text {
        Text::Utf8 => {
            put_word(out, tag);
            put_word(out, length_word(s.len(), "a text of bytes")?);
            out.extend_from_slice(s.as_bytes());
        }
        Text::Latin1 => {
            let count = s.chars().count();
            put_word(out, tag);
            put_word(out, length_word(count, "a text of characters")?);
            out.reserve(count);
            for (i, c) in s.chars().enumerate() {
                let b = u8::try_from(u32::from(c)).map_err(|_| {
                    err(
                        "TETHER_UNENCODABLE_CHARACTER",
                        format!(
                            "character {i} ({c:?}, U+{:04X}) has no one-byte form: the Latin-1 text option \
                             holds only U+0000..U+00FF; use the default UTF-8 text option instead",
                            u32::from(c)
                        ),
                    )
                })?;
                out.push(b);
            }
        }
    }
    Ok(())
}

/// Encode `v`, whose own depth is `depth`, without recursion: open Arrays
/// are an explicit stack of element iterators on the heap.
fn encode_value(out: &mut Vec<u8>, v: &Value, opts: &Options, depth: usize) -> Result<()> {
    let mut stack: Vec<std::slice::Iter<'_, Value>> = Vec::new();
    let mut cur = std::slice::from_ref(v).iter();
    loop {
        let Some(v) = cur.next() else {
            match stack.pop() {
                Some(outer) => {
                    cur = outer;
                    continue;
                }
                None => return Ok(()),
            }
        };
        if let Value::Array(items) = v {
            if depth + stack.len() >= opts.max_depth {
                return Err(too_deep(opts.max_depth));
            }
            put_word(out, ARRAY_TAG);
            put_word(out, length_word(items.len(), "an Array of elements")?);
            stack.push(std::mem::replace(&mut cur, items.iter()));
        } else {
            encode_scalar(out, v, opts)?;
        }
    }
}

/// Encode a value that is not an Array.
fn encode_scalar(out: &mut Vec<u8>, v: &Value, opts: &Options) -> Result<()> {
    match v {
        Value::SmallInteger(n) => {
            if *n > MAX_SMALL_INTEGER {
                return Err(integer_out_of_range(n));
            }
            put_word(out, SMALL_INTEGER_BASE + n);
        }
        Value::Bool(true) => put_word(out, TRUE_TAG),
        Value::Bool(false) => put_word(out, FALSE_TAG),
        Value::Nil => put_word(out, NIL_TAG),
        Value::Symbol(s) => put_text(out, SYMBOL_TAG, s, opts.text)?,
        Value::String(s) => put_text(out, STRING_TAG, s, opts.text)?,
        Value::ByteArray(b) => {
            put_word(out, BYTE_ARRAY_TAG);
            put_word(out, length_word(b.len(), "a ByteArray of bytes")?);
            out.extend_from_slice(b);
        }
        Value::Array(_) => unreachable_array(),
        Value::Uuid(u) => put_uuid(out, u),
        Value::Proxy(h) => {
            if *h > MAX_EXPOSURE_HASH {
                return Err(exposure_hash_out_of_range("a proxy's", *h));
            }
            put_word(out, PROXY_BASE + h);
        }
    }
    Ok(())
}

/// `encode_scalar` is never given an Array (its callers handle them); doing
/// nothing keeps this free of panics.
#[cold]
fn unreachable_array() {
    debug_assert!(false, "encode_scalar given an Array");
}

fn put_uuid(out: &mut Vec<u8>, u: &Uuid) {
    put_word(out, UUID_TAG);
    put_word(out, 16);
    out.extend_from_slice(&u.0);
}

#[cold]
fn too_deep(max: usize) -> Error {
    err(
        "TETHER_TOO_DEEP",
        format!("Arrays nested deeper than {max} levels (the limit guards the stack; raise Options::max_depth if this is intended)"),
    )
}

/// Encode one value (default options: UTF-8 text).
pub fn encode(value: &Value) -> Result<Vec<u8>> {
    encode_with(value, &Options::default())
}

/// Encode one value.
pub fn encode_with(value: &Value, opts: &Options) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(16);
    encode_into(value, opts, &mut out)?;
    Ok(out)
}

/// Append one encoded value to `out` (on error `out` may hold a partial value).
pub fn encode_into(value: &Value, opts: &Options, out: &mut Vec<u8>) -> Result<()> {
    encode_value(out, value, opts, 0)
}

// ---------------------------------------------------------------- decoding

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    opts: &'a Options,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn word(&mut self, what: &str) -> Result<u32> {
        match self.buf.get(self.pos..self.pos + 4) {
            Some(&[a, b, c, d]) => {
                self.pos += 4;
                Ok(u32::from_be_bytes([a, b, c, d]))
            }
            _ => Err(err(
                "TETHER_TRUNCATED",
                format!(
                    "expected 4 bytes for {what}, found {}{}",
                    self.remaining(),
                    if self.remaining() == 0 { " (the input ends here)" } else { " (the input ends inside a word)" }
                ),
            )
            .at(self.pos)),
        }
    }

    /// Read a length word and then that many bytes, checking the length
    /// against what is present before touching anything.
    fn byte_run(&mut self, what: &str) -> Result<&'a [u8]> {
        let at = self.pos;
        let len = self.word(&format!("the length of {what}"))? as usize;
        if len > self.remaining() {
            return Err(err(
                "TETHER_LENGTH_PAST_END",
                format!("{what} claims {len} bytes but only {} remain in the input", self.remaining()),
            )
            .at(at));
        }
        let s = &self.buf[self.pos..self.pos + len];
        self.pos += len;
        Ok(s)
    }

    fn text(&mut self, what: &str) -> Result<String> {
        let start = self.pos + 4;
        let bytes = self.byte_run(what)?;
        match self.opts.text {
            Text::Utf8 => match std::str::from_utf8(bytes) {
                Ok(s) => Ok(s.to_owned()),
                Err(e) => Err(err(
                    "TETHER_INVALID_UTF8",
                    format!(
                        "{what} is not valid UTF-8 (byte {} of the text); if the sender writes one byte per \
                         character (the Caffeine JS bridge does), decode with the Latin-1 text option",
                        e.valid_up_to()
                    ),
                )
                .at(start + e.valid_up_to())),
            },
            Text::Latin1 => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
        }
    }

    fn uuid_body(&mut self, tag_at: usize) -> Result<Uuid> {
        let at = self.pos;
        let len = self.word("the length of a UUID")?;
        if len != 16 {
            return Err(err("TETHER_BAD_UUID_LENGTH", format!("a UUID's length word must be 16, found {len}")).at(at));
        }
        match self.buf.get(self.pos..self.pos + 16) {
            Some(b) => {
                let mut u = [0u8; 16];
                u.copy_from_slice(b);
                self.pos += 16;
                Ok(Uuid(u))
            }
            None => Err(err(
                "TETHER_LENGTH_PAST_END",
                format!("the UUID starting at byte {tag_at} needs 16 bytes but only {} remain", self.remaining()),
            )
            .at(at)),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        let at = self.pos;
        let w = self.word("a value")?;
        self.value_from(w, at, depth)
    }

    /// Decode the value whose first word `w` was read at `at`, at nesting
    /// `depth`, without recursion: open Arrays are an explicit stack on the
    /// heap, so nesting is bounded by `max_depth` and memory, not by the
    /// native stack.
    fn value_from(&mut self, w: u32, at: usize, depth: usize) -> Result<Value> {
        struct Open {
            items: Vec<Value>,
            left: usize,
        }
        let mut stack: Vec<Open> = Vec::new();
        let (mut w, mut at) = (w, at);
        loop {
            let mut v = if w == ARRAY_TAG {
                if depth + stack.len() >= self.opts.max_depth {
                    return Err(too_deep(self.opts.max_depth).at(at));
                }
                let count = self.array_count()?;
                if count > 0 {
                    // Reserve no more than a bounded amount up front: every
                    // open level may claim up to the rest of the input.
                    stack.push(Open { items: Vec::with_capacity(count.min(1 << 12)), left: count });
                    at = self.pos;
                    w = self.word("a value")?;
                    continue;
                }
                Value::Array(Vec::new())
            } else {
                self.scalar_from(w, at)?
            };
            // A value is complete: add it to the open Arrays, closing those
            // it completes.
            loop {
                let Some(top) = stack.last_mut() else { return Ok(v) };
                top.items.push(v);
                top.left -= 1;
                if top.left > 0 {
                    break;
                }
                match stack.pop() {
                    Some(done) => v = Value::Array(done.items),
                    None => return Err(err("TETHER_INTERNAL", "the open-Array stack emptied early")),
                }
            }
            at = self.pos;
            w = self.word("a value")?;
        }
    }

    /// An Array's length word, checked against the bytes that remain.
    fn array_count(&mut self) -> Result<usize> {
        let len_at = self.pos;
        let count = self.word("the length of an Array")? as usize;
        // Every element takes at least one word.
        if count > self.remaining() / 4 {
            return Err(err(
                "TETHER_LENGTH_PAST_END",
                format!("an Array claims {count} elements but only {} bytes remain (at least 4 per element)", self.remaining()),
            )
            .at(len_at));
        }
        Ok(count)
    }

    /// Decode a value that is not an Array (`w` is not `ARRAY_TAG`).
    fn scalar_from(&mut self, w: u32, at: usize) -> Result<Value> {
        if w >= INSTRUCTIONS_BASE {
            return Err(err(
                "TETHER_INSTRUCTION",
                format!("found the instruction word 0x{w:08x} where a value was expected (instructions are 0x70000000 and up)"),
            )
            .at(at));
        }
        if w >= PROXY_BASE {
            return Ok(Value::Proxy(w - PROXY_BASE));
        }
        if w >= SMALL_INTEGER_BASE {
            let n = w - SMALL_INTEGER_BASE;
            if n > MAX_SMALL_INTEGER {
                return Err(err(
                    "TETHER_UNSUPPORTED_WORD",
                    "the word 0x60000000 lies between the SmallInteger range (up to 0x5fffffff) and the proxy \
                     range (from 0x60000001) and encodes nothing",
                )
                .at(at));
            }
            return Ok(Value::SmallInteger(n));
        }
        if w < CLASS_TAGS_BASE {
            return Err(err(
                "TETHER_UNSUPPORTED_WORD",
                format!(
                    "the word 0x{w:08x} is below 0x20000000 and encodes nothing (is this a length word or a \
                     bare exposure hash out of place?)"
                ),
            )
            .at(at));
        }
        match w {
            TRUE_TAG => Ok(Value::Bool(true)),
            FALSE_TAG => Ok(Value::Bool(false)),
            NIL_TAG => Ok(Value::Nil),
            SYMBOL_TAG => Ok(Value::Symbol(self.text("a Symbol")?)),
            STRING_TAG => Ok(Value::String(self.text("a String")?)),
            BYTE_ARRAY_TAG => Ok(Value::ByteArray(self.byte_run("a ByteArray")?.to_vec())),
            UUID_TAG => Ok(Value::Uuid(self.uuid_body(at)?)),
            ARRAY_TAG => Err(err("TETHER_INTERNAL", "an Array reached the scalar decoder").at(at)),
            MESSAGE_SEND_TAG | ANSWER_TAG | MESSAGE_TAG => Err(err(
                "TETHER_UNEXPECTED_TAG",
                format!(
                    "found the {} tag 0x{w:08x} where a value was expected ({})",
                    tag_name(w).unwrap_or("frame"),
                    match w {
                        MESSAGE_SEND_TAG => "decode a message send with decode_message_send",
                        ANSWER_TAG => "decode an answer with decode_answer",
                        _ => "a Message tag belongs only inside a message send",
                    }
                ),
            )
            .at(at)),
            _ => Err(err(
                "TETHER_UNKNOWN_TAG",
                format!(
                    "unknown class tag 0x{w:08x}; known value tags are 0x20000001-0x20000005 (true, false, nil, \
                     Symbol, String), 0x20000008 (Array), 0x20000011 (UUID) and 0x2000001b (ByteArray)"
                ),
            )
            .at(at)),
        }
    }

    fn finish(&self, what: &str) -> Result<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(err("TETHER_TRAILING_BYTES", format!("{} bytes remain after {what}; one input holds exactly one", self.remaining()))
                .at(self.pos))
        }
    }

    fn expect_tag(&mut self, tag: u32, what: &str) -> Result<()> {
        let at = self.pos;
        let w = self.word(what)?;
        if w == tag {
            Ok(())
        } else {
            Err(err(
                "TETHER_UNEXPECTED_TAG",
                format!("expected {what} (0x{tag:08x}), found 0x{w:08x}{}", tag_name(w).map(|n| format!(" ({n})")).unwrap_or_default()),
            )
            .at(at))
        }
    }
}

/// Decode exactly one value (default options: UTF-8 text).
pub fn decode(bytes: &[u8]) -> Result<Value> {
    decode_with(bytes, &Options::default())
}

/// Decode exactly one value; bytes left over are an error.
pub fn decode_with(bytes: &[u8], opts: &Options) -> Result<Value> {
    let mut r = Reader { buf: bytes, pos: 0, opts };
    let v = r.value(0)?;
    r.finish("the value")?;
    Ok(v)
}

/// Decode one value from the front of `bytes`, returning it and the number
/// of bytes it took (for streams holding several values back to back).
pub fn decode_prefix(bytes: &[u8], opts: &Options) -> Result<(Value, usize)> {
    let mut r = Reader { buf: bytes, pos: 0, opts };
    let v = r.value(0)?;
    Ok((v, r.pos))
}

// ---------------------------------------------------------------- frames

/// A message send: ask the object with exposure hash `receiver` to perform
/// `selector` with `arguments`; the answer carries the same `uuid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageSend {
    pub uuid: Uuid,
    /// The receiver's exposure hash (0..=[`MAX_EXPOSURE_HASH`]).
    pub receiver: u32,
    pub selector: String,
    pub arguments: Vec<Value>,
}

impl MessageSend {
    /// A message send with a fresh random UUID.
    pub fn new(receiver: u32, selector: impl Into<String>, arguments: Vec<Value>) -> MessageSend {
        MessageSend { uuid: Uuid::new_v4(), receiver, selector: selector.into(), arguments }
    }
}

#[cold]
fn empty_selector() -> Error {
    err("TETHER_BAD_SELECTOR", "the selector is empty; give a Smalltalk selector such as 'printString', '+' or 'at:put:'")
}

fn check_selector(selector: &str) -> Result<()> {
    if selector.is_empty() {
        return Err(empty_selector());
    }
    Ok(())
}

/// Encode a message-send frame (default options).
pub fn encode_message_send(send: &MessageSend) -> Result<Vec<u8>> {
    encode_message_send_with(send, &Options::default())
}

/// Encode a message-send frame: `0x20000007`, the UUID, the receiver's
/// exposure hash as a bare word, `0x20000021`, the selector as a Symbol and
/// the arguments as an Array.
pub fn encode_message_send_with(send: &MessageSend, opts: &Options) -> Result<Vec<u8>> {
    if send.receiver > MAX_EXPOSURE_HASH {
        return Err(exposure_hash_out_of_range("the receiver's", send.receiver));
    }
    check_selector(&send.selector)?;
    let mut out = Vec::with_capacity(48 + send.selector.len());
    put_word(&mut out, MESSAGE_SEND_TAG);
    put_uuid(&mut out, &send.uuid);
    put_word(&mut out, send.receiver);
    put_word(&mut out, MESSAGE_TAG);
    put_text(&mut out, SYMBOL_TAG, &send.selector, opts.text)?;
    if opts.max_depth == 0 {
        return Err(too_deep(0));
    }
    put_word(&mut out, ARRAY_TAG);
    put_word(&mut out, length_word(send.arguments.len(), "an argument list of elements")?);
    for a in &send.arguments {
        encode_value(&mut out, a, opts, 1)?;
    }
    Ok(out)
}

/// Decode a message-send frame (default options).
pub fn decode_message_send(bytes: &[u8]) -> Result<MessageSend> {
    decode_message_send_with(bytes, &Options::default())
}

/// Decode a message-send frame. The receiver word is read as a bare exposure
/// hash; the proxy form `0x60000001 + hash`, which the Caffeine JS bridge
/// writes when the receiver is not the sending tether itself, is accepted
/// too (and re-encoded bare).
pub fn decode_message_send_with(bytes: &[u8], opts: &Options) -> Result<MessageSend> {
    let mut r = Reader { buf: bytes, pos: 0, opts };
    r.expect_tag(MESSAGE_SEND_TAG, "the message-send tag")?;
    let uuid_at = r.pos;
    r.expect_tag(UUID_TAG, "the message send's UUID tag")?;
    let uuid = r.uuid_body(uuid_at)?;
    let recv_at = r.pos;
    let w = r.word("the receiver's exposure hash")?;
    let receiver = if w <= MAX_EXPOSURE_HASH {
        w
    } else if (PROXY_BASE..INSTRUCTIONS_BASE).contains(&w) {
        w - PROXY_BASE
    } else {
        return Err(err(
            "TETHER_BAD_RECEIVER",
            format!(
                "the receiver word 0x{w:08x} is neither a bare exposure hash (0..=0x{MAX_EXPOSURE_HASH:08x}) nor a \
                 proxy word (0x60000001..=0x6fffffff)"
            ),
        )
        .at(recv_at));
    };
    r.expect_tag(MESSAGE_TAG, "the Message tag")?;
    let sel_at = r.pos;
    r.expect_tag(SYMBOL_TAG, "the selector's Symbol tag")?;
    let selector = r.text("the selector")?;
    if selector.is_empty() {
        return Err(empty_selector().at(sel_at));
    }
    let args_at = r.pos;
    let arguments = match r.value(0)?.into_array() {
        Ok(items) => items,
        Err(other) => {
            return Err(err("TETHER_UNEXPECTED_TAG", format!("the arguments must be an Array, found a {}", other.kind_name())).at(args_at))
        }
    };
    r.finish("the message send")?;
    Ok(MessageSend { uuid, receiver, selector, arguments })
}

/// An answer: the result of a message send, with the send's UUID on the wire
/// (`uuid: Some`) or without it as the MCP `send` tool returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub uuid: Option<Uuid>,
    pub result: Value,
}

/// Encode an answer frame (default options): with `uuid` the wire form
/// `0x2000001D, UUID, result`; without, the MCP tool's `0x2000001D, result`.
pub fn encode_answer(result: &Value, uuid: Option<Uuid>) -> Result<Vec<u8>> {
    encode_answer_with(result, uuid, &Options::default())
}

pub fn encode_answer_with(result: &Value, uuid: Option<Uuid>, opts: &Options) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(32);
    put_word(&mut out, ANSWER_TAG);
    if let Some(u) = uuid {
        put_uuid(&mut out, &u);
    }
    encode_value(&mut out, result, opts, 0)?;
    Ok(out)
}

/// Decode an answer frame of either form (default options).
pub fn decode_answer(bytes: &[u8]) -> Result<Answer> {
    decode_answer_with(bytes, &Options::default())
}

/// Decode an answer frame of either form. After the answer tag, a UUID
/// followed by more bytes is the wire form's exchange id; a UUID that ends
/// the input is the result itself (the MCP form answering a UUID).
pub fn decode_answer_with(bytes: &[u8], opts: &Options) -> Result<Answer> {
    let mut r = Reader { buf: bytes, pos: 0, opts };
    r.expect_tag(ANSWER_TAG, "the answer tag")?;
    let at = r.pos;
    let w = r.word("the answer's result")?;
    if w == UUID_TAG {
        let u = r.uuid_body(at)?;
        if r.at_end() {
            return Ok(Answer { uuid: None, result: Value::Uuid(u) });
        }
        let result = r.value(0)?;
        r.finish("the answer")?;
        return Ok(Answer { uuid: Some(u), result });
    }
    let result = r.value_from(w, at, 0)?;
    r.finish("the answer")?;
    Ok(Answer { uuid: None, result })
}

/// The handshake word a tether sends to announce its exposure hash.
pub fn encode_handshake(exposure_hash: u32) -> Result<[u8; 4]> {
    if exposure_hash > MAX_EXPOSURE_HASH {
        return Err(exposure_hash_out_of_range("the handshake's", exposure_hash));
    }
    Ok((PROXY_BASE + exposure_hash).to_be_bytes())
}

/// Read a handshake (exactly one proxy word) and return the exposure hash.
pub fn decode_handshake(bytes: &[u8]) -> Result<u32> {
    let mut r = Reader { buf: bytes, pos: 0, opts: &Options::default() };
    let w = r.word("the handshake word")?;
    if !(PROXY_BASE..INSTRUCTIONS_BASE).contains(&w) {
        return Err(err("TETHER_UNEXPECTED_TAG", format!("a handshake is one word 0x60000001 + exposure hash, found 0x{w:08x}")).at(0));
    }
    r.finish("the handshake word")?;
    Ok(w - PROXY_BASE)
}

/// Any complete Tether message, classified by its first word as the Deno
/// bridge does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    MessageSend(MessageSend),
    Answer(Answer),
    /// A tether announcing its exposure hash.
    Handshake(u32),
    /// A pushed value (the bridge pushes JSON text as a String).
    Value(Value),
}

/// Decode any complete message: a message send, an answer, a handshake (a
/// lone proxy word) or a pushed value.
pub fn decode_frame(bytes: &[u8], opts: &Options) -> Result<Frame> {
    let first = Reader { buf: bytes, pos: 0, opts }.word("the first word")?;
    Ok(match first {
        MESSAGE_SEND_TAG => Frame::MessageSend(decode_message_send_with(bytes, opts)?),
        ANSWER_TAG => Frame::Answer(decode_answer_with(bytes, opts)?),
        w if bytes.len() == 4 && (PROXY_BASE..INSTRUCTIONS_BASE).contains(&w) => Frame::Handshake(w - PROXY_BASE),
        _ => Frame::Value(decode_with(bytes, opts)?),
    })
}

// ---------------------------------------------------------------- hex

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Lowercase hex, two characters per byte — so 8 per 32-bit word, as the
/// MCP `send` tool expects.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// The word (8 characters) around character `pos`, for messages.
fn word_around(hex: &str, pos: usize) -> (usize, &str) {
    let start = pos / 8 * 8;
    let end = (start + 8).min(hex.len());
    let text = hex.get(start..end).unwrap_or("");
    (start / 8 + 1, text)
}

fn decode_hex_digits(hex: &str) -> Result<Vec<u8>> {
    if let Some((pos, c)) = hex.char_indices().find(|&(_, c)| !c.is_ascii_hexdigit()) {
        let (n, word) = word_around(hex, pos);
        return Err(err(
            "TETHER_HEX_DIGIT",
            format!(
                "word {n} ('{word}') contains {c:?} at character {}, which is not a hex digit; \
                 use only 0-9 and a-f, with no spaces, separators or '0x' prefix",
                pos + 1
            ),
        )
        .at(pos));
    }
    let b = hex.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 2);
    for pair in b.chunks_exact(2) {
        // Both are hex digits: checked above.
        out.push((hex_val(pair[0]).unwrap_or(0) << 4) | hex_val(pair[1]).unwrap_or(0));
    }
    Ok(out)
}

/// Parse hex under the `send` tool's validation checklist: hex digits only
/// (either case) and a length that is a multiple of 8 (whole 32-bit words).
/// Errors name the offending word. For Tether data that ends in String or
/// ByteArray bytes not filling a word, use [`from_hex_bytes`].
pub fn from_hex(hex: &str) -> Result<Vec<u8>> {
    let bytes = decode_hex_digits(hex)?;
    if hex.len() % 8 != 0 {
        let start = hex.len() / 8 * 8;
        let n = start / 8 + 1;
        let partial = &hex[start..];
        return Err(err(
            "TETHER_HEX_LENGTH",
            format!(
                "{} hex characters is not a multiple of 8: word {n} ('{partial}') has only {} — every 32-bit word \
                 is exactly 8 hex characters; check each word for a missing or an extra zero (e.g. '400000004' \
                 has 9 where '40000004' was meant)",
                hex.len(),
                partial.len()
            ),
        )
        .at(start));
    }
    Ok(bytes)
}

/// Parse hex of any whole number of bytes (even length, hex digits only):
/// Tether Strings and ByteArrays are not padded to a word.
pub fn from_hex_bytes(hex: &str) -> Result<Vec<u8>> {
    let bytes = decode_hex_digits(hex)?;
    if hex.len() % 2 != 0 {
        let (n, word) = word_around(hex, hex.len() - 1);
        return Err(err(
            "TETHER_HEX_LENGTH",
            format!("{} hex characters is odd: word {n} ('{word}') ends in half a byte; every byte is 2 hex characters", hex.len()),
        )
        .at(hex.len() - 1));
    }
    Ok(bytes)
}

// ---------------------------------------------------------------- MCP tool

/// The arguments of the smalltalk-mcp `send` tool: the receiver and the
/// arguments Array as Tether hex, the selector as plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolArguments {
    pub receiver: String,
    pub selector: String,
    pub arguments: String,
}

impl ToolArguments {
    /// `{"receiver":"…","selector":"…","arguments":"…"}`.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.receiver.len() + self.selector.len() + self.arguments.len());
        out.extend_from_slice(b"{\"receiver\":");
        crate::json::write_str(&mut out, &self.receiver);
        out.extend_from_slice(b",\"selector\":");
        crate::json::write_str(&mut out, &self.selector);
        out.extend_from_slice(b",\"arguments\":");
        crate::json::write_str(&mut out, &self.arguments);
        out.push(b'}');
        out
    }
}

/// Build the `send` tool's arguments: `tool_arguments(&Value::SmallInteger(3),
/// "+", &[Value::SmallInteger(4)])` gives receiver `40000003`, selector `+`
/// and arguments `200000080000000140000004`.
pub fn tool_arguments(receiver: &Value, selector: &str, arguments: &[Value], opts: &Options) -> Result<ToolArguments> {
    check_selector(selector)?;
    let receiver = to_hex(&encode_with(receiver, opts)?);
    let mut args = Vec::with_capacity(8 + 4 * arguments.len());
    put_word(&mut args, ARRAY_TAG);
    put_word(&mut args, length_word(arguments.len(), "an argument list of elements")?);
    for a in arguments {
        encode_value(&mut args, a, opts, 1)?;
    }
    Ok(ToolArguments { receiver, selector: selector.to_owned(), arguments: to_hex(&args) })
}

/// Decode the hex result of the `send` tool: the MCP answer form
/// (`2000001d` + result), the wire form with a UUID, or a bare value
/// (`40000007`) are all accepted.
pub fn decode_result_hex(hex: &str, opts: &Options) -> Result<Value> {
    let bytes = from_hex_bytes(hex.trim())?;
    if bytes.starts_with(&ANSWER_TAG.to_be_bytes()) {
        Ok(decode_answer_with(&bytes, opts)?.result)
    } else {
        decode_with(&bytes, opts)
    }
}

/// Read the `send` tool's JSON output `{"result": "<hex>"}` and decode the
/// result.
pub fn read_tool_result(json: &[u8], opts: &Options) -> Result<Value> {
    let doc = crate::json::parse(json, crate::json::ParseOptions::default()).map_err(|e| {
        err("TETHER_BAD_TOOL_RESULT", format!("the tool result is not JSON ({}); expected {{\"result\": \"<hex>\"}}", e.message()))
            .at(e.offset().unwrap_or(0))
    })?;
    match doc.get("result") {
        Some(serde_json::Value::String(hex)) => decode_result_hex(hex, opts),
        _ => Err(err(
            "TETHER_BAD_TOOL_RESULT",
            "expected a JSON object {\"result\": \"<hex>\"} with the Tether-encoded result as a hex string",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Vec<u8> {
        from_hex_bytes(s).unwrap()
    }

    #[test]
    fn document_examples() {
        assert_eq!(to_hex(&encode(&Value::SmallInteger(3)).unwrap()), "40000003");
        let args = Value::Array(vec![Value::SmallInteger(4)]);
        assert_eq!(to_hex(&encode(&args).unwrap()), "200000080000000140000004");
        let a = decode_answer(&h("2000001d40000007")).unwrap();
        assert_eq!(a, Answer { uuid: None, result: Value::SmallInteger(7) });
        let a = decode_answer(&h("2000001d200000050000000568656c6c6f")).unwrap();
        assert_eq!(a.result, Value::String("hello".into()));
        assert_eq!(ANSWER_TAG.to_be_bytes(), [0x20, 0x00, 0x00, 0x1d]);
    }

    fn chain(depth: usize, leaf: Value) -> Value {
        let mut v = leaf;
        for _ in 0..depth {
            v = Value::Array(vec![Value::Nil, v]);
        }
        v
    }

    #[test]
    fn value_traits_match_the_derived_ones() {
        use std::hash::{BuildHasher, RandomState};
        let v = Value::Array(vec![
            Value::SmallInteger(1),
            Value::Array(vec![]),
            Value::Array(vec![Value::String("a\"b".into()), Value::Bool(true)]),
            Value::Nil,
            Value::ByteArray(vec![1, 2]),
            Value::Proxy(7),
        ]);
        assert_eq!(
            format!("{v:?}"),
            r#"Array([SmallInteger(1), Array([]), Array([String("a\"b"), Bool(true)]), Nil, ByteArray([1, 2]), Proxy(7)])"#
        );
        assert_eq!(format!("{:?}", Value::Symbol("x".into())), r#"Symbol("x")"#);
        let c = v.clone();
        assert_eq!(c, v);
        let rs = RandomState::new();
        assert_eq!(rs.hash_one(&c), rs.hash_one(&v));
        // Differences at each position and in shape are seen.
        let Value::Array(items) = &v else { unreachable!() };
        for i in 0..items.len() {
            let mut other = items.clone();
            other[i] = Value::SmallInteger(99);
            assert_ne!(Value::Array(other), v, "element {i}");
        }
        assert_ne!(Value::Array(vec![Value::Array(vec![])]), Value::Array(vec![Value::Array(vec![Value::Nil])]));
        assert_ne!(Value::Array(vec![]), Value::Nil);
        assert_ne!(Value::String("a".into()), Value::Symbol("a".into()));
        assert_ne!(rs.hash_one(Value::String("a".into())), rs.hash_one(Value::Symbol("a".into())));
        assert_ne!(
            rs.hash_one(Value::Array(vec![Value::Array(vec![]), Value::Nil])),
            rs.hash_one(Value::Array(vec![Value::Array(vec![Value::Nil])]))
        );
    }

    #[test]
    fn value_traits_do_not_recurse() {
        // A million levels: any recursion would overflow the test thread's
        // 2 MiB stack many times over.
        const DEPTH: usize = 1_000_000;
        let v = chain(DEPTH, Value::SmallInteger(5));
        let c = v.clone();
        assert!(c == v);
        assert!(c != chain(DEPTH, Value::SmallInteger(6)));
        let rs = std::hash::RandomState::new();
        assert_eq!(std::hash::BuildHasher::hash_one(&rs, &c), std::hash::BuildHasher::hash_one(&rs, &v));
        let text = format!("{v:?}");
        assert_eq!(text.len(), DEPTH * "Array([Nil, ])".len() + "SmallInteger(5)".len());
        assert!(text.starts_with("Array([Nil, Array([Nil, ") && text.ends_with(&format!("Nil, SmallInteger(5){}", "])".repeat(DEPTH))));
    }

    #[test]
    fn integer_range() {
        let e = Value::integer(-1).unwrap_err();
        assert_eq!(e.code(), "TETHER_INTEGER_RANGE");
        assert!(e.message().starts_with("no Tether encoding for -1: "), "{}", e.message());
        assert!(Value::integer(0x2000_0000).is_err());
        assert_eq!(Value::integer(0x1FFF_FFFF).unwrap(), Value::SmallInteger(MAX_SMALL_INTEGER));
        assert_eq!(encode(&Value::SmallInteger(0x2000_0000)).unwrap_err().code(), "TETHER_INTEGER_RANGE");
    }

    #[test]
    fn word_classes() {
        assert_eq!(decode(&h("5fffffff")).unwrap(), Value::SmallInteger(MAX_SMALL_INTEGER));
        assert_eq!(decode(&h("60000000")).unwrap_err().code(), "TETHER_UNSUPPORTED_WORD");
        assert_eq!(decode(&h("60000001")).unwrap(), Value::Proxy(0));
        assert_eq!(decode(&h("6fffffff")).unwrap(), Value::Proxy(MAX_EXPOSURE_HASH));
        assert_eq!(decode(&h("70000000")).unwrap_err().code(), "TETHER_INSTRUCTION");
        assert_eq!(decode(&h("1fffffff")).unwrap_err().code(), "TETHER_UNSUPPORTED_WORD");
        assert_eq!(decode(&h("2000000a")).unwrap_err().code(), "TETHER_UNKNOWN_TAG");
        assert_eq!(decode(&h("2000001d40000007")).unwrap_err().code(), "TETHER_UNEXPECTED_TAG");
        assert_eq!(encode(&Value::Proxy(MAX_EXPOSURE_HASH + 1)).unwrap_err().code(), "TETHER_EXPOSURE_HASH_RANGE");
    }

    #[test]
    fn lengths_checked_before_allocation() {
        let e = decode(&h("20000005ffffffff68")).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("TETHER_LENGTH_PAST_END", Some(4)));
        let e = decode(&h("20000008ffffffff")).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("TETHER_LENGTH_PAST_END", Some(4)));
        let e = decode(&h("200000")).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("TETHER_TRUNCATED", Some(0)));
        let e = decode(&h("2000000800000002400000014000")).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("TETHER_LENGTH_PAST_END", Some(4)));
        let e = decode(&h("20000008000000022000000500000001414000")).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("TETHER_TRUNCATED", Some(17)));
    }

    #[test]
    fn depth_limit() {
        let mut v = Value::Nil;
        for _ in 0..3 {
            v = Value::Array(vec![v]);
        }
        let opts = Options { max_depth: 2, ..Options::default() };
        assert_eq!(encode_with(&v, &opts).unwrap_err().code(), "TETHER_TOO_DEEP");
        let bytes = encode(&v).unwrap();
        assert_eq!(decode_with(&bytes, &opts).unwrap_err().code(), "TETHER_TOO_DEEP");
        let opts = Options { max_depth: 3, ..Options::default() };
        assert_eq!(decode_with(&bytes, &opts).unwrap(), v);
    }

    #[test]
    fn latin1_and_utf8() {
        let s = Value::String("café".into());
        assert_eq!(to_hex(&encode(&s).unwrap()), "2000000500000005636166c3a9");
        assert_eq!(to_hex(&encode_with(&s, &Options::latin1()).unwrap()), "2000000500000004636166e9");
        let e = encode_with(&Value::String("€".into()), &Options::latin1()).unwrap_err();
        assert_eq!(e.code(), "TETHER_UNENCODABLE_CHARACTER");
        let e = decode(&h("2000000500000004636166e9")).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("TETHER_INVALID_UTF8", Some(11)));
        assert_eq!(decode_with(&h("2000000500000004636166e9"), &Options::latin1()).unwrap(), s);
    }

    #[test]
    fn answer_forms() {
        let u = Uuid([7; 16]);
        let wire = encode_answer(&Value::Nil, Some(u)).unwrap();
        assert_eq!(decode_answer(&wire).unwrap(), Answer { uuid: Some(u), result: Value::Nil });
        // The MCP form answering a UUID is not mistaken for the wire form.
        let mcp = encode_answer(&Value::Uuid(u), None).unwrap();
        assert_eq!(decode_answer(&mcp).unwrap(), Answer { uuid: None, result: Value::Uuid(u) });
        let both = encode_answer(&Value::Uuid(u), Some(u)).unwrap();
        assert_eq!(decode_answer(&both).unwrap(), Answer { uuid: Some(u), result: Value::Uuid(u) });
    }

    #[test]
    fn message_send_roundtrip_and_proxy_receiver() {
        let m = MessageSend {
            uuid: Uuid([1; 16]),
            receiver: 0x2a,
            selector: "at:put:".into(),
            arguments: vec![Value::SmallInteger(1), Value::Symbol("x".into())],
        };
        let b = encode_message_send(&m).unwrap();
        assert_eq!(&b[28..32], &[0, 0, 0, 0x2a]);
        assert_eq!(decode_message_send(&b).unwrap(), m);
        let mut p = b.clone();
        p[28..32].copy_from_slice(&0x6000_002bu32.to_be_bytes());
        assert_eq!(decode_message_send(&p).unwrap(), m);
        p[28..32].copy_from_slice(&0x4000_0003u32.to_be_bytes());
        assert_eq!(decode_message_send(&p).unwrap_err().code(), "TETHER_BAD_RECEIVER");
    }

    #[test]
    fn hex_checklist() {
        assert_eq!(from_hex("40000003").unwrap(), vec![0x40, 0, 0, 3]);
        assert_eq!(from_hex("4000000A").unwrap(), vec![0x40, 0, 0, 10]);
        let e = from_hex("40000003400000004").unwrap_err();
        assert_eq!((e.code(), e.offset()), ("TETHER_HEX_LENGTH", Some(16)));
        assert!(e.message().contains("word 3 ('4')"), "{}", e.message());
        let e = from_hex("400000034000000g").unwrap_err();
        assert_eq!((e.code(), e.offset()), ("TETHER_HEX_DIGIT", Some(15)));
        assert!(e.message().contains("word 2 ('4000000g')"), "{}", e.message());
        assert_eq!(from_hex_bytes("2000000500000001ac").unwrap().len(), 9);
        assert_eq!(from_hex_bytes("abc").unwrap_err().code(), "TETHER_HEX_LENGTH");
    }

    #[test]
    fn tool_helpers() {
        let t = tool_arguments(&Value::SmallInteger(3), "+", &[Value::SmallInteger(4)], &Options::default()).unwrap();
        assert_eq!(
            String::from_utf8(t.to_json()).unwrap(),
            r#"{"receiver":"40000003","selector":"+","arguments":"200000080000000140000004"}"#
        );
        let o = Options::default();
        assert_eq!(read_tool_result(br#"{"result": "40000007"}"#, &o).unwrap(), Value::SmallInteger(7));
        assert_eq!(read_tool_result(br#"{"result": "2000001d40000007"}"#, &o).unwrap(), Value::SmallInteger(7));
        assert_eq!(read_tool_result(br#"{"x": 1}"#, &o).unwrap_err().code(), "TETHER_BAD_TOOL_RESULT");
    }

    #[test]
    fn uuid_text() {
        let u = Uuid::parse("6FC0EC4F-E59F-4BEA-9D57-0D9FDD1108F1").unwrap();
        assert_eq!(u.to_string(), "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1");
        assert_eq!(Uuid::parse("6fc0ec4fe59f4bea9d570d9fdd1108f1"), Some(u));
        assert_eq!(Uuid::parse("{6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1}"), Some(u));
        assert_eq!(Uuid::parse("urn:uuid:6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1"), Some(u));
        assert_eq!(Uuid::parse("6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f"), None);
        // Not UUIDs for the `uuid` crate: braces or the URN prefix around the
        // 32-digit form, a URN with braces, and 38/45 characters of anything else.
        assert_eq!(Uuid::parse("{6fc0ec4fe59f4bea9d570d9fdd1108f1}"), None);
        assert_eq!(Uuid::parse("urn:uuid:6fc0ec4fe59f4bea9d570d9fdd1108f1"), None);
        assert_eq!(Uuid::parse("urn:uuid:{6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1}"), None);
        assert_eq!(Uuid::parse("[6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1]"), None);
        assert_eq!(Uuid::parse("urn:uid::6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1"), None);
        assert_eq!(Uuid::parse("6fc0ec4f+e59f-4bea-9d57-0d9fdd1108f1"), None);
        let v = Uuid::new_v4();
        assert_eq!(v.0[6] >> 4, 4);
        assert_eq!(v.0[8] >> 6, 2);
        assert_ne!(v, Uuid::new_v4());
    }
}
