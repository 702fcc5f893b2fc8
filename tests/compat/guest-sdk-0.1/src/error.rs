//! The error a hook returns when it cannot decide: the host reports it as a
//! hook failure (with this message) and applies the hook's `on_failure`.

use std::fmt;

/// A hook failure with a message for the trace and the log.
///
/// Any `std::error::Error` converts into it, so `?` works on serde and I/O
/// results; build one from text with [`Error::new`].
pub struct Error(String);

/// `Result` with [`Error`] as the error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(err: E) -> Self {
        Self(err.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({:?})", self.0)
    }
}
