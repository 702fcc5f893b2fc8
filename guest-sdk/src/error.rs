//! The error a hook returns when it cannot decide: the host reports it as a
//! hook failure (with this message) and applies the hook's `on_failure`.

use std::fmt;

/// A hook failure with a message for the trace and the log.
///
/// Any `std::error::Error` (that is `Send + Sync`) converts into it, so `?`
/// works on serde and I/O results; so does text: `Err("no".into())`,
/// `Err(format!("bad {x}").into())`, or [`Error::new`].
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

/// Whatever std can box as an error: every `Error + Send + Sync`, `String`,
/// `&str` and `Cow<str>`.
impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<E> for Error {
    fn from(err: E) -> Self {
        Self(err.into().to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fails(text: bool) -> Result<()> {
        if text {
            return Err(format!("bad {}", 42).into());
        }
        let _: serde_json::Value = serde_json::from_str("{")?;
        Ok(())
    }

    #[test]
    fn text_and_errors_both_convert() {
        assert_eq!(fails(true).unwrap_err().message(), "bad 42");
        assert!(fails(false).unwrap_err().message().contains("EOF"));
        let from_str: Error = "plain".into();
        assert_eq!(from_str.message(), "plain");
    }
}
