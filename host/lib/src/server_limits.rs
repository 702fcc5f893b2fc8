//! What keeps idle or slow connections from starving `serve`: at most so
//! many connections at once (the next waits to be accepted), and a
//! connection that neither sends nor takes a byte for a while is closed.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// How many connections `serve` holds at once by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// How long a connection may stay silent by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A listener that holds at most so many connections, each closed after
/// a silence.
pub(crate) struct Guarded<L> {
    inner: L,
    slots: Arc<Semaphore>,
    idle: Duration,
}

impl<L> Guarded<L> {
    /// `inner`, holding at most `max` connections, each closed after
    /// `idle` without a byte either way.
    pub(crate) fn new(inner: L, max: usize, idle: Duration) -> Self {
        Self {
            inner,
            slots: Arc::new(Semaphore::new(max.max(1))),
            idle,
        }
    }
}

impl<L: Listener> Listener for Guarded<L> {
    type Io = GuardedIo<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let permit = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let (io, addr) = self.inner.accept().await;
        (GuardedIo::new(io, self.idle, permit), addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection that gives its slot back when dropped and fails once it
/// has been silent for its idle time.
pub(crate) struct GuardedIo<T> {
    io: T,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    _slot: OwnedSemaphorePermit,
}

impl<T> GuardedIo<T> {
    fn new(io: T, idle: Duration, slot: OwnedSemaphorePermit) -> Self {
        Self {
            io,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
            _slot: slot,
        }
    }

    fn touched(&mut self) {
        self.deadline.as_mut().reset(Instant::now() + self.idle);
    }

    /// `Pending`, or the idle error once the deadline passed.
    fn pending_or_idle<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the connection was idle too long",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for GuardedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    self.touched();
                }
                Poll::Ready(result)
            }
            Poll::Pending => self.pending_or_idle(cx),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for GuardedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.io).poll_write(cx, data) {
            Poll::Ready(result) => {
                self.touched();
                Poll::Ready(result)
            }
            Poll::Pending => self.pending_or_idle(cx),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
