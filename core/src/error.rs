//! The one error type every codec in this crate returns.
//!
//! Modelled on `serde_json::Error`: small (one pointer), opaque, with a
//! classified kind (`format` + stable `code`) and a position. The position is
//! a byte offset for binary formats and a line (and column) for text formats;
//! only the error path pays for computing it.

use std::fmt;

/// Which wire format an error belongs to. Bindings map each to its own
/// exception/error class (`KadoError`, `ToonDecodeError`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The JSON layer shared by several formats.
    Json,
    Kado,
    Toon,
    Tether,
    Axon,
    Kameo,
    /// Token counts and renderings for LLM context.
    Llm,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Kado => "kado",
            Format::Toon => "toon",
            Format::Tether => "tether",
            Format::Axon => "axon",
            Format::Kameo => "kameo",
            Format::Llm => "llm",
        }
    }
}

/// Where in the input an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Not tied to a place in the input (e.g. an encode-side error).
    None,
    /// Byte offset from the start of the input (or of the stream).
    Byte(usize),
    /// 1-based line, and 1-based column when it applies.
    Line { line: usize, column: Option<usize> },
}

#[derive(Clone, PartialEq, Eq)]
struct ErrorImpl {
    format: Format,
    code: &'static str,
    position: Position,
    message: String,
}

/// A decode or encode error: format, stable code, position and a message that
/// says what was expected.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorImpl>);

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error with no position yet.
    #[cold]
    pub fn new(format: Format, code: &'static str, message: impl Into<String>) -> Self {
        Error(Box::new(ErrorImpl { format, code, position: Position::None, message: message.into() }))
    }

    /// Attach a byte offset.
    #[cold]
    pub fn at(mut self, offset: usize) -> Self {
        self.0.position = Position::Byte(offset);
        self
    }

    /// Attach a 1-based line (and column).
    #[cold]
    pub fn at_line(mut self, line: usize, column: Option<usize>) -> Self {
        self.0.position = Position::Line { line, column };
        self
    }

    /// Shift a byte offset by `base` (an error found inside a payload is
    /// reported relative to the whole frame or stream).
    #[cold]
    pub fn shifted(mut self, base: usize) -> Self {
        if let Position::Byte(o) = self.0.position {
            self.0.position = Position::Byte(o + base);
        }
        self
    }

    /// Re-label the error as belonging to another format, keeping code,
    /// position and message (a JSON error inside a Kado frame is a Kado error).
    #[cold]
    pub fn in_format(mut self, format: Format) -> Self {
        self.0.format = format;
        self
    }

    pub fn format(&self) -> Format {
        self.0.format
    }

    /// Stable, machine-readable code such as `KADO_TRUNCATED_PAYLOAD`.
    pub fn code(&self) -> &'static str {
        self.0.code
    }

    pub fn position(&self) -> Position {
        self.0.position
    }

    /// The byte offset, when the error has one.
    pub fn offset(&self) -> Option<usize> {
        match self.0.position {
            Position::Byte(o) => Some(o),
            _ => None,
        }
    }

    /// The 1-based line, when the error has one.
    pub fn line(&self) -> Option<usize> {
        match self.0.position {
            Position::Line { line, .. } => Some(line),
            _ => None,
        }
    }

    /// The 1-based column, when the error has one.
    pub fn column(&self) -> Option<usize> {
        match self.0.position {
            Position::Line { column, .. } => column,
            _ => None,
        }
    }

    /// The message without the position suffix.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)?;
        match self.0.position {
            Position::None => Ok(()),
            Position::Byte(o) => write!(f, " at byte {o}"),
            Position::Line { line, column: None } => write!(f, " at line {line}"),
            Position::Line { line, column: Some(c) } => write!(f, " at line {line}, column {c}"),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({}, {}, {:?}, {:?})", self.0.format.as_str(), self.0.code, self.0.message, self.0.position)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_carries_position() {
        let e = Error::new(Format::Kado, "KADO_X", "expected 18 bytes").at(3);
        assert_eq!(e.to_string(), "expected 18 bytes at byte 3");
        assert_eq!(e.offset(), Some(3));
        assert_eq!(e.shifted(10).offset(), Some(13));
        let e = Error::new(Format::Toon, "T", "bad").at_line(2, Some(5));
        assert_eq!(e.to_string(), "bad at line 2, column 5");
        assert_eq!(e.line(), Some(2));
        assert_eq!(e.column(), Some(5));
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }
}
