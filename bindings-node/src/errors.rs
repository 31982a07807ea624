//! Native errors reach JavaScript as `Error`s whose `code` is the core
//! error's stable code and whose message ends with the position (`at byte N`
//! or `at line L, column C`); the JS wrappers parse that suffix into
//! `offset`/`line`/`column` and rethrow the format's error class.

/// The error `code` string seen by JavaScript.
pub struct Code(pub &'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

pub type Result<T> = napi::Result<T, Code>;

#[cold]
pub fn to_napi(e: polywire::Error) -> napi::Error<Code> {
    napi::Error::new(Code(e.code()), e.to_string())
}

#[cold]
pub fn invalid_arg(code: &'static str, msg: String) -> napi::Error<Code> {
    napi::Error::new(Code(code), msg)
}

pub trait IntoNapi<T> {
    fn napi(self) -> Result<T>;
}

impl<T> IntoNapi<T> for std::result::Result<T, polywire::Error> {
    #[inline]
    fn napi(self) -> Result<T> {
        self.map_err(to_napi)
    }
}
