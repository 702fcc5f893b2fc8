//! Capped capture of a plugin's stdout and stderr.
//!
//! wasmtime's own `MemoryOutputPipe` traps the guest when it writes past its
//! capacity; a hook that prints too much should lose the excess, not its
//! answer. [`CappedPipe`] keeps the first `cap` bytes, drops the rest and
//! remembers that it did. It is written to synchronously: wasmtime's
//! default adapter would hand every write to a background task, and a guest
//! waiting for that task could be charged, against its deadline, for the
//! time other tasks keep the scheduler busy.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// How much a guest may write at once; larger writes come in pieces.
const WRITE_PERMIT: usize = 64 * 1024;

/// An in-memory output stream that keeps at most `cap` bytes.
#[derive(Clone)]
pub(crate) struct CappedPipe {
    cap: usize,
    captured: Arc<Mutex<Captured>>,
}

#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    truncated: bool,
}

impl CappedPipe {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            captured: Arc::default(),
        }
    }

    /// What was kept (lossy UTF-8), and whether anything was dropped;
    /// the pipe is empty again after (for the next call of a warm
    /// instance).
    pub(crate) fn take(&self) -> (String, bool) {
        let mut c = self.captured.lock().unwrap_or_else(PoisonError::into_inner);
        let Captured { bytes, truncated } = std::mem::take(&mut *c);
        (String::from_utf8_lossy(&bytes).into_owned(), truncated)
    }

    fn push(&self, buf: &[u8]) {
        let mut c = self.captured.lock().unwrap_or_else(PoisonError::into_inner);
        let room = self.cap.saturating_sub(c.bytes.len());
        let keep = buf.len().min(room);
        c.bytes.extend_from_slice(&buf[..keep]);
        c.truncated |= keep < buf.len();
    }
}

impl AsyncWrite for CappedPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.push(buf);
        // Report everything as written: the guest must never block or fail on
        // output it is not allowed to keep.
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for CappedPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedPipe {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

impl OutputStream for CappedPipe {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

#[async_trait::async_trait]
impl Pollable for CappedPipe {
    /// Always ready: writes never wait.
    async fn ready(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn keeps_the_first_bytes_reports_truncation_and_empties_when_taken() {
        let pipe = CappedPipe::new(5);
        let mut w = pipe.clone();
        w.write_all(b"hello").await.unwrap();
        w.write_all(b" world").await.unwrap();
        assert_eq!(pipe.take(), ("hello".into(), true));
        w.write_all(b"again").await.unwrap();
        assert_eq!(pipe.take(), ("again".into(), false), "taking empties it");
    }
}
