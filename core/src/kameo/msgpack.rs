//! MessagePack for kameo payloads, replies and handler errors, written the
//! way `rmp_serde::to_vec_named` (rmp-serde 1.3 / rmp 0.8) writes the same
//! data: every integer in its smallest form by value (non-negative ones as
//! positive fixint/uint8..64, negative ones as negative fixint/int8..64),
//! floats as float 64 (or float 32 for [`Value::F32`]), strings as
//! fixstr/str8/str16/str32, bytes as bin8/16/32, arrays and maps with
//! fix/16/32 headers, nil for `None` and `()`.
//!
//! A Rust type's payload follows serde's data model, so a caller builds it
//! from values: a struct is a map of field names (to_vec_named), a unit
//! variant its name as a string, a newtype/tuple/struct variant the map
//! `{name: content}`, `None` and `()` nil, `Some(x)` just `x`, a tuple or
//! `Vec<T>` an array, a unit struct an empty array, `serde_bytes` data bytes
//! (but a plain `Vec<u8>` is an array of integers).
//!
//! [`unpack`] reads any MessagePack except extension types (which
//! `to_vec_named` only writes for `rmp_serde::MSGPACK_EXT_STRUCT_NAME`),
//! rejects the reserved byte `0xC1`, invalid UTF-8 in strings and trailing
//! bytes, and nests at most [`MAX_VALUE_DEPTH`] (256) arrays/maps deep (rmp_serde
//! allows 1024).

use super::err;
use super::value::{Value, MAX_VALUE_DEPTH};
use crate::error::{Error, Result};

fn too_long(what: &str, len: usize) -> Error {
    err("KAMEO_MSGPACK_TOO_LONG", format!("expected {what} of at most 2^32-1 entries/bytes, got {len}"))
}

fn len32(what: &str, len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| too_long(what, len))
}

pub fn write_nil(out: &mut Vec<u8>) {
    out.push(0xC0);
}

pub fn write_bool(out: &mut Vec<u8>, b: bool) {
    out.push(if b { 0xC3 } else { 0xC2 });
}

/// `rmp::encode::write_uint`.
pub fn write_uint(out: &mut Vec<u8>, v: u64) {
    if v < 128 {
        out.push(v as u8);
    } else if v < 256 {
        out.extend_from_slice(&[0xCC, v as u8]);
    } else if v < 65536 {
        out.push(0xCD);
        out.extend_from_slice(&(v as u16).to_be_bytes());
    } else if v < 1 << 32 {
        out.push(0xCE);
        out.extend_from_slice(&(v as u32).to_be_bytes());
    } else {
        out.push(0xCF);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// `rmp::encode::write_sint` (non-negative values as `write_uint`).
pub fn write_sint(out: &mut Vec<u8>, v: i64) {
    if v >= 0 {
        write_uint(out, v as u64);
    } else if v >= -32 {
        out.push(v as u8);
    } else if v >= -128 {
        out.extend_from_slice(&[0xD0, v as u8]);
    } else if v >= -32768 {
        out.push(0xD1);
        out.extend_from_slice(&(v as i16).to_be_bytes());
    } else if v >= -2147483648 {
        out.push(0xD2);
        out.extend_from_slice(&(v as i32).to_be_bytes());
    } else {
        out.push(0xD3);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// An integer in -2^63 ..= 2^64-1.
pub fn write_int(out: &mut Vec<u8>, v: i128) -> Result<()> {
    if let Ok(u) = u64::try_from(v) {
        write_uint(out, u);
    } else if let Ok(i) = i64::try_from(v) {
        write_sint(out, i);
    } else {
        return Err(err("KAMEO_MSGPACK_INTEGER_RANGE", format!("expected an integer in -2^63..=2^64-1, got {v}")));
    }
    Ok(())
}

pub fn write_f64(out: &mut Vec<u8>, f: f64) {
    out.push(0xCB);
    out.extend_from_slice(&f.to_be_bytes());
}

pub fn write_f32(out: &mut Vec<u8>, f: f32) {
    out.push(0xCA);
    out.extend_from_slice(&f.to_be_bytes());
}

pub fn write_str(out: &mut Vec<u8>, s: &str) -> Result<()> {
    let n = len32("a string", s.len())?;
    if n < 32 {
        out.push(0xA0 | n as u8);
    } else if n < 256 {
        out.extend_from_slice(&[0xD9, n as u8]);
    } else if n < 65536 {
        out.push(0xDA);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0xDB);
        out.extend_from_slice(&n.to_be_bytes());
    }
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

pub fn write_bin(out: &mut Vec<u8>, b: &[u8]) -> Result<()> {
    let n = len32("bytes", b.len())?;
    if n < 256 {
        out.extend_from_slice(&[0xC4, n as u8]);
    } else if n < 65536 {
        out.push(0xC5);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0xC6);
        out.extend_from_slice(&n.to_be_bytes());
    }
    out.extend_from_slice(b);
    Ok(())
}

fn write_container_len(out: &mut Vec<u8>, len: usize, what: &str, fix: u8, m16: u8) -> Result<()> {
    let n = len32(what, len)?;
    if n < 16 {
        out.push(fix | n as u8);
    } else if n < 65536 {
        out.push(m16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(m16 + 1);
        out.extend_from_slice(&n.to_be_bytes());
    }
    Ok(())
}

pub fn write_array_len(out: &mut Vec<u8>, len: usize) -> Result<()> {
    write_container_len(out, len, "an array", 0x90, 0xDC)
}

pub fn write_map_len(out: &mut Vec<u8>, len: usize) -> Result<()> {
    write_container_len(out, len, "a map", 0x80, 0xDE)
}

/// MessagePack bytes of `value`, as `rmp_serde::to_vec_named` writes the
/// same serde data.
pub fn pack(value: &Value) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(64);
    pack_into(&mut out, value, 0)?;
    Ok(out)
}

fn pack_into(out: &mut Vec<u8>, v: &Value, depth: usize) -> Result<()> {
    match v {
        Value::Nil => write_nil(out),
        Value::Bool(b) => write_bool(out, *b),
        Value::Int(i) => write_int(out, *i)?,
        Value::F32(f) => write_f32(out, *f),
        Value::F64(f) => write_f64(out, *f),
        Value::Str(s) => write_str(out, s)?,
        Value::Bytes(b) => write_bin(out, b)?,
        Value::Array(items) => {
            check_depth(depth)?;
            write_array_len(out, items.len())?;
            for item in items {
                pack_into(out, item, depth + 1)?;
            }
        }
        Value::Map(entries) => {
            check_depth(depth)?;
            write_map_len(out, entries.len())?;
            for (k, item) in entries {
                pack_into(out, k, depth + 1)?;
                pack_into(out, item, depth + 1)?;
            }
        }
    }
    Ok(())
}

fn check_depth(depth: usize) -> Result<()> {
    if depth >= MAX_VALUE_DEPTH {
        return Err(err("KAMEO_DEPTH_LIMIT", format!("expected at most {MAX_VALUE_DEPTH} nested arrays/maps")));
    }
    Ok(())
}

// ---------------------------------------------------------------- unpack

struct Unpacker<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> Unpacker<'a> {
    fn eof(&self, what: &str, want: usize) -> Error {
        err("KAMEO_MSGPACK_EOF", format!("expected {what}: {want} byte(s) needed, {} left", self.input.len() - self.pos)).at(self.pos)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let rest = &self.input[self.pos..];
        if n > rest.len() {
            return Err(self.eof(what, n));
        }
        self.pos += n;
        Ok(&rest[..n])
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    fn len(&mut self, bytes: usize, what: &str) -> Result<usize> {
        Ok(match bytes {
            1 => usize::from(self.array::<1>(what)?[0]),
            2 => usize::from(u16::from_be_bytes(self.array(what)?)),
            _ => u32::from_be_bytes(self.array(what)?) as usize,
        })
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        let at = self.pos;
        let marker = self.array::<1>("a MessagePack value")?[0];
        Ok(match marker {
            0x00..=0x7F => Value::Int(i128::from(marker)),
            0x80..=0x8F => self.map(usize::from(marker & 0x0F), depth, at)?,
            0x90..=0x9F => self.seq(usize::from(marker & 0x0F), depth, at)?,
            0xA0..=0xBF => self.string(usize::from(marker & 0x1F), at)?,
            0xC0 => Value::Nil,
            0xC1 => return Err(err("KAMEO_MSGPACK_RESERVED", "expected a MessagePack value, found the reserved byte 0xc1").at(at)),
            0xC2 => Value::Bool(false),
            0xC3 => Value::Bool(true),
            0xC4..=0xC6 => {
                let n = self.len(1 << (marker - 0xC4), "a bin length")?;
                Value::Bytes(self.take(n, "bin data")?.to_vec())
            }
            0xC7..=0xC9 | 0xD4..=0xD8 => {
                return Err(err("KAMEO_MSGPACK_EXT", format!("MessagePack extension type (marker {marker:#04x}) is not supported")).at(at))
            }
            0xCA => Value::F32(f32::from_be_bytes(self.array("a float 32")?)),
            0xCB => Value::F64(f64::from_be_bytes(self.array("a float 64")?)),
            0xCC => Value::Int(i128::from(self.array::<1>("a uint 8")?[0])),
            0xCD => Value::Int(i128::from(u16::from_be_bytes(self.array("a uint 16")?))),
            0xCE => Value::Int(i128::from(u32::from_be_bytes(self.array("a uint 32")?))),
            0xCF => Value::Int(i128::from(u64::from_be_bytes(self.array("a uint 64")?))),
            0xD0 => Value::Int(i128::from(i8::from_be_bytes(self.array("an int 8")?))),
            0xD1 => Value::Int(i128::from(i16::from_be_bytes(self.array("an int 16")?))),
            0xD2 => Value::Int(i128::from(i32::from_be_bytes(self.array("an int 32")?))),
            0xD3 => Value::Int(i128::from(i64::from_be_bytes(self.array("an int 64")?))),
            0xD9..=0xDB => {
                let n = self.len(1 << (marker - 0xD9), "a str length")?;
                self.string(n, at)?
            }
            0xDC | 0xDD => {
                let n = self.len(if marker == 0xDC { 2 } else { 4 }, "an array length")?;
                self.seq(n, depth, at)?
            }
            0xDE | 0xDF => {
                let n = self.len(if marker == 0xDE { 2 } else { 4 }, "a map length")?;
                self.map(n, depth, at)?
            }
            0xE0..=0xFF => Value::Int(i128::from(marker as i8)),
        })
    }

    fn string(&mut self, n: usize, at: usize) -> Result<Value> {
        let b = self.take(n, "str data")?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(Value::Str(s.to_owned())),
            Err(_) => Err(err("KAMEO_MSGPACK_INVALID_UTF8", "expected a str in valid UTF-8").at(at)),
        }
    }

    fn nested(&self, depth: usize, at: usize) -> Result<()> {
        check_depth(depth).map_err(|e| e.at(at))
    }

    fn seq(&mut self, n: usize, depth: usize, at: usize) -> Result<Value> {
        self.nested(depth, at)?;
        // every item takes at least one byte
        if n > self.input.len() - self.pos {
            return Err(self.eof("array items", n));
        }
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(items))
    }

    fn map(&mut self, n: usize, depth: usize, at: usize) -> Result<Value> {
        self.nested(depth, at)?;
        if n.saturating_mul(2) > self.input.len() - self.pos {
            return Err(self.eof("map entries", n.saturating_mul(2)));
        }
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }
}

/// Read one MessagePack value that fills `data` exactly.
pub fn unpack(data: &[u8]) -> Result<Value> {
    let mut u = Unpacker { input: data, pos: 0 };
    let v = u.value(0)?;
    if u.pos != data.len() {
        return Err(err(
            "KAMEO_MSGPACK_TRAILING",
            format!("expected the end of the MessagePack data, {} byte(s) follow", data.len() - u.pos),
        )
        .at(u.pos));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn integers_by_value() {
        let cases: &[(i128, &str)] = &[
            (0, "00"),
            (127, "7f"),
            (128, "cc80"),
            (255, "ccff"),
            (256, "cd0100"),
            (65536, "ce00010000"),
            (1 << 32, "cf0000000100000000"),
            (u64::MAX as i128, "cfffffffffffffffff"),
            (-1, "ff"),
            (-32, "e0"),
            (-33, "d0df"),
            (-129, "d1ff7f"),
            (-32769, "d2ffff7fff"),
            (i64::MIN as i128, "d38000000000000000"),
        ];
        for &(v, h) in cases {
            let b = pack(&Value::Int(v)).unwrap();
            assert_eq!(hex(&b), h, "{v}");
            assert_eq!(unpack(&b).unwrap(), Value::Int(v));
        }
        assert_eq!(pack(&Value::Int(1 << 64)).unwrap_err().code(), "KAMEO_MSGPACK_INTEGER_RANGE");
        assert_eq!(pack(&Value::Int(i64::MIN as i128 - 1)).unwrap_err().code(), "KAMEO_MSGPACK_INTEGER_RANGE");
    }

    #[test]
    fn strings_bins_containers() {
        assert_eq!(hex(&pack(&Value::str("")).unwrap()), "a0");
        assert_eq!(&pack(&Value::Str("x".repeat(32))).unwrap()[..2], &[0xD9, 32]);
        assert_eq!(&pack(&Value::Str("x".repeat(256))).unwrap()[..3], &[0xDA, 1, 0]);
        assert_eq!(hex(&pack(&Value::Bytes(vec![])).unwrap()), "c400");
        assert_eq!(&pack(&Value::Bytes(vec![0; 256])).unwrap()[..3], &[0xC5, 1, 0]);
        assert_eq!(hex(&pack(&Value::Array(vec![Value::Nil; 15])).unwrap())[..2], *"9f");
        assert_eq!(&pack(&Value::Array(vec![Value::Nil; 16])).unwrap()[..3], &[0xDC, 0, 16]);
        let m = Value::map([("a", Value::Bool(true)), ("b", Value::F64(1.5))]);
        let b = pack(&m).unwrap();
        assert_eq!(hex(&b), "82a161c3a162cb3ff8000000000000");
        assert_eq!(unpack(&b).unwrap(), m);
    }

    #[test]
    fn unpack_rejections() {
        assert_eq!(unpack(&[0xC1]).unwrap_err().code(), "KAMEO_MSGPACK_RESERVED");
        assert_eq!(unpack(&[0xD4, 1, 2]).unwrap_err().code(), "KAMEO_MSGPACK_EXT");
        assert_eq!(unpack(&[0xA1, 0xFF]).unwrap_err().code(), "KAMEO_MSGPACK_INVALID_UTF8");
        assert_eq!(unpack(&[0xC0, 0xC0]).unwrap_err().code(), "KAMEO_MSGPACK_TRAILING");
        assert_eq!(unpack(&[0xDD, 0xFF, 0xFF, 0xFF, 0xFF]).unwrap_err().code(), "KAMEO_MSGPACK_EOF");
        assert_eq!(unpack(&[]).unwrap_err().code(), "KAMEO_MSGPACK_EOF");
        let deep = vec![0x91; MAX_VALUE_DEPTH + 1];
        assert_eq!(unpack(&deep).unwrap_err().code(), "KAMEO_DEPTH_LIMIT");
        let mut ok = vec![0x91; MAX_VALUE_DEPTH];
        ok.push(0xC0);
        assert!(unpack(&ok).is_ok());
    }
}
