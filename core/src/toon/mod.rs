//! TOON text (Token-Oriented Object Notation), spec v4 as the reference
//! `@toon-format/toon` 4.4.0 implements it.
//!
//! [`decode`] and [`encode`] are the two directions, each split by concern
//! (their module documentation has the layout); the rules of the text that
//! both follow (quoting, bare keys, identifier segments) are in `syntax.rs`.

pub mod decode;
pub mod encode;
mod syntax;

/// The three delimiters TOON allows inside array headers and rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Delimiter {
    #[default]
    Comma,
    Tab,
    Pipe,
}

impl Delimiter {
    pub fn as_char(self) -> char {
        match self {
            Delimiter::Comma => ',',
            Delimiter::Tab => '\t',
            Delimiter::Pipe => '|',
        }
    }

    pub fn from_char(c: char) -> Option<Delimiter> {
        match c {
            ',' => Some(Delimiter::Comma),
            '\t' => Some(Delimiter::Tab),
            '|' => Some(Delimiter::Pipe),
            _ => None,
        }
    }
}
