//! Where decoded values go: [`Sink`], a [`Builder`] that is also told which
//! keys were written in quotes, and [`Plain`], the caller's builder as a
//! sink (path expansion has its own, `expand.rs`).

use std::vec::Drain;

use crate::json::{Builder, QuickNumber};

/// A [`Builder`] that is also told which keys were written in quotes (only
/// path expansion cares).
pub(super) trait Sink: Builder {
    fn quoted_key(&mut self, s: &str) -> Result<Self::Key, Self::Error>;
    /// [`Sink::quoted_key`] made ahead ([`Builder::key_ahead`]).
    #[inline]
    fn quoted_key_ahead(&mut self, s: &str) -> Result<Self::Key, Self::Error> {
        self.quoted_key(s)
    }
}

pub(super) fn key_of<B: Sink>(b: &mut B, s: &str, quoted: bool) -> Result<B::Key, B::Error> {
    if quoted {
        b.quoted_key(s)
    } else {
        b.key(s)
    }
}

/// A caller's builder, for which quoted keys are plain keys.
pub(super) struct Plain<'b, B>(pub(super) &'b mut B);

impl<B: Builder> Builder for Plain<'_, B> {
    type Value = B::Value;
    type Key = B::Key;
    type Error = B::Error;
    #[inline]
    fn null(&mut self) -> Result<B::Value, B::Error> {
        self.0.null()
    }
    #[inline]
    fn bool(&mut self, v: bool) -> Result<B::Value, B::Error> {
        self.0.bool(v)
    }
    #[inline]
    fn int(&mut self, i: i64) -> Result<B::Value, B::Error> {
        self.0.int(i)
    }
    #[inline]
    fn big_int(&mut self, digits: &str) -> Result<B::Value, B::Error> {
        self.0.big_int(digits)
    }
    #[inline]
    fn float(&mut self, f: f64) -> Result<B::Value, B::Error> {
        self.0.float(f)
    }
    #[inline]
    fn string(&mut self, s: &str) -> Result<B::Value, B::Error> {
        self.0.string(s)
    }
    #[inline]
    fn key(&mut self, s: &str) -> Result<B::Key, B::Error> {
        self.0.key(s)
    }
    #[inline]
    fn key_again(&mut self, key: &B::Key, s: &str) -> Result<B::Key, B::Error> {
        self.0.key_again(key, s)
    }
    #[inline]
    fn array(&mut self, items: Drain<'_, B::Value>) -> Result<B::Value, B::Error> {
        self.0.array(items)
    }
    #[inline]
    fn object(&mut self, entries: Drain<'_, (B::Key, B::Value)>) -> Result<B::Value, B::Error> {
        self.0.object(entries)
    }
    #[inline]
    fn number_token(&mut self, text: &str, integer: bool) -> Result<Option<B::Value>, B::Error> {
        self.0.number_token(text, integer)
    }
    #[inline]
    fn number_value(&mut self, text: &str, integer: bool, quick: Option<QuickNumber>) -> Result<Option<B::Value>, B::Error> {
        self.0.number_value(text, integer, quick)
    }
    #[inline]
    fn begin_array(&mut self) -> Result<(), B::Error> {
        self.0.begin_array()
    }
    #[inline]
    fn begin_object(&mut self) -> Result<(), B::Error> {
        self.0.begin_object()
    }
    #[inline]
    fn key_ahead(&mut self, s: &str) -> Result<B::Key, B::Error> {
        self.0.key_ahead(s)
    }
}

impl<B: Builder> Sink for Plain<'_, B> {
    #[inline]
    fn quoted_key(&mut self, s: &str) -> Result<B::Key, B::Error> {
        self.0.key(s)
    }
    #[inline]
    fn quoted_key_ahead(&mut self, s: &str) -> Result<B::Key, B::Error> {
        self.0.key_ahead(s)
    }
}
