//! Where the process's diagnostics go: the real stderr, or, on a thread of
//! the `hook` daemon answering a request, a buffer that goes back to the
//! client to print as its own stderr. Log lines (tracing) and what `hook`
//! prints both go through [`Stderr`], so their order is kept either way.

use std::cell::RefCell;
use std::io::Write;

thread_local! {
    /// The buffer of the request this thread answers, if any.
    static CAPTURED: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// This thread's stderr: the captured buffer while [`capture`] runs, the
/// process's stderr otherwise.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stderr;

impl Write for Stderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let captured = CAPTURED.with_borrow_mut(|buffer| match buffer {
            Some(buffer) => {
                buffer.extend_from_slice(bytes);
                true
            }
            None => false,
        });
        if captured {
            Ok(bytes.len())
        } else {
            std::io::stderr().write(bytes)
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Run `work` with this thread's [`Stderr`] captured; its result and what
/// it wrote.
pub(crate) fn capture<R>(work: impl FnOnce() -> R) -> (R, Vec<u8>) {
    CAPTURED.set(Some(Vec::new()));
    let result = work();
    let written = CAPTURED.take().unwrap_or_default();
    (result, written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_while_captured_is_returned_in_order() {
        let ((), written) = capture(|| {
            write!(Stderr, "one ").unwrap();
            write!(Stderr, "two").unwrap();
        });
        assert_eq!(written, b"one two");
        // Nothing stays captured afterwards.
        assert!(CAPTURED.with_borrow(Option::is_none));
    }
}
