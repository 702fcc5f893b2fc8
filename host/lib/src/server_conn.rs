//! How `serve` holds its connections, so that idle, slow or piled-up
//! clients cannot keep a well-formed request from being answered:
//!
//! - at most so many connections at once; when all are taken, one between
//!   requests is closed for the newcomer: the one quiet the longest among
//!   those that never had a request answered with success, else the one
//!   quiet the longest (for at least [`EVICT_AFTER`]) among the others, so
//!   a flood of silent connections cannot push out an agent's kept-alive
//!   one; when every one is answering a request, the newcomer waits;
//! - a connection silent for its idle time is closed, and one that has not
//!   sent a whole request head within the header-read time too;
//! - on shutdown no new connection is taken; for [`DRAIN_GRACE`] every
//!   answer says `Connection: close`, so a client that sent its next
//!   request on a kept-alive connection gets an answer instead of a reset;
//!   then the connections between requests are closed and those answering
//!   one finish it.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, header};
use axum::serve::Listener;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};
use tower_service::Service;

/// How many connections `serve` holds at once by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// How long a connection may stay silent by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client has by default to send a request's head, and again
/// its body.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection that has had a request answered must have been between
/// requests this long before it is closed to make room: long enough that
/// its last answer has left.
pub const EVICT_AFTER: Duration = Duration::from_millis(250);

/// How long connections stay open after shutdown begins, each answer
/// saying `Connection: close`.
pub const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// The limits a server puts on its connections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// Connections held at once.
    pub(crate) max: usize,
    /// Silence after which a connection is closed.
    pub(crate) idle: Duration,
    /// Time to send a request's head.
    pub(crate) header_read: Duration,
}

/// Serve `router` on `listener` under `limits` until `shutdown`
/// completes, then drain the connections.
pub(crate) async fn serve<L>(
    mut listener: L,
    router: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()>
where
    L: Listener,
    L::Addr: std::fmt::Debug,
{
    let pool = Arc::new(Pool::new(limits.max));
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (io, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = async {
                pool.room().await;
                listener.accept().await
            } => accepted,
        };
        let slot = pool.open();
        connections.spawn(connection(
            io,
            Peer(Arc::from(format!("{peer:?}"))),
            slot,
            Arc::clone(&pool),
            router.clone(),
            limits,
        ));
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    pool.drain();
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// The connections open, and whether the server is shutting down.
struct Pool {
    max: usize,
    open: Mutex<Vec<Arc<Slot>>>,
    /// Woken when a connection closes or finishes a request.
    changed: Notify,
    draining: AtomicBool,
    drain: watch::Sender<bool>,
}

/// One open connection, as the pool sees it.
struct Slot {
    /// Requests it is answering now (their answers not yet all sent).
    busy: AtomicUsize,
    /// When it last finished answering (or opened).
    quiet_since: Mutex<Instant>,
    /// Whether a request on it was answered with success.
    proven: AtomicBool,
    /// Told to close to make room.
    evict: Notify,
}

impl Slot {
    fn quiet_since(&self) -> Instant {
        *self
            .quiet_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Pool {
    fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            open: Mutex::new(Vec::new()),
            changed: Notify::new(),
            draining: AtomicBool::new(false),
            drain: watch::Sender::new(false),
        }
    }

    fn open_slots(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Slot>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Resolves once a new connection may be taken: there is a free place,
    /// or one was made by closing the connection quiet the longest.
    async fn room(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let wait = {
                let open = self.open_slots();
                if open.len() < self.max {
                    return;
                }
                let quietest = open
                    .iter()
                    .filter(|slot| slot.busy.load(Ordering::Acquire) == 0)
                    .min_by_key(|slot| (slot.proven.load(Ordering::Acquire), slot.quiet_since()));
                match quietest {
                    Some(slot) => {
                        // A connection never answered with success has no
                        // answer in flight to protect.
                        let proven = slot.proven.load(Ordering::Acquire);
                        let quiet = slot.quiet_since().elapsed();
                        if !proven || quiet >= EVICT_AFTER {
                            slot.evict.notify_one();
                            None
                        } else {
                            Some(EVICT_AFTER - quiet)
                        }
                    }
                    None => None,
                }
            };
            match wait {
                Some(delay) => {
                    tokio::select! {
                        () = changed => {}
                        () = tokio::time::sleep(delay) => {}
                    }
                }
                None => changed.await,
            }
        }
    }

    fn open(&self) -> Arc<Slot> {
        let slot = Arc::new(Slot {
            busy: AtomicUsize::new(0),
            quiet_since: Mutex::new(Instant::now()),
            proven: AtomicBool::new(false),
            evict: Notify::new(),
        });
        self.open_slots().push(Arc::clone(&slot));
        slot
    }

    fn close(&self, slot: &Arc<Slot>) {
        self.open_slots().retain(|open| !Arc::ptr_eq(open, slot));
        self.changed.notify_waiters();
    }

    fn drain(&self) {
        self.draining.store(true, Ordering::Release);
        self.drain.send_replace(true);
    }

    fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }
}

/// Keeps a connection's slot in the pool while it lives.
struct Opened {
    slot: Arc<Slot>,
    pool: Arc<Pool>,
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.pool.close(&self.slot);
    }
}

/// Marks a connection busy from a request's arrival until its answer's
/// body is dropped (all of it handed to the connection).
struct Busy {
    slot: Arc<Slot>,
    pool: Arc<Pool>,
}

impl Busy {
    fn new(slot: &Arc<Slot>, pool: &Arc<Pool>) -> Self {
        slot.busy.fetch_add(1, Ordering::AcqRel);
        Self {
            slot: Arc::clone(slot),
            pool: Arc::clone(pool),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self
            .slot
            .quiet_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.slot.busy.fetch_sub(1, Ordering::AcqRel);
        self.pool.changed.notify_waiters();
    }
}

/// An answer's body that keeps its connection marked busy until dropped.
struct TrackedBody {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for TrackedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The address a request's connection came from, as its listener gives
/// it (`127.0.0.1:52514`; a Unix socket's peer is usually unnamed), in
/// each request's extensions.
#[derive(Debug, Clone)]
pub(crate) struct Peer(pub(crate) Arc<str>);

/// Serve one connection until it ends, is evicted, or the drain closes it.
async fn connection<I>(
    io: I,
    peer: Peer,
    slot: Arc<Slot>,
    pool: Arc<Pool>,
    router: axum::Router,
    limits: ConnectionLimits,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let opened = Opened {
        slot: Arc::clone(&slot),
        pool: Arc::clone(&pool),
    };
    let service = hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(peer.clone());
        let busy = Busy::new(&opened.slot, &opened.pool);
        let mut router = router.clone();
        let pool = Arc::clone(&opened.pool);
        async move {
            let response = router.call(request).await?;
            if response.status().is_success() {
                busy.slot.proven.store(true, Ordering::Release);
            }
            let (mut parts, body) = response.into_parts();
            if pool.is_draining() {
                parts
                    .headers
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            let body = Body::new(TrackedBody { body, _busy: busy });
            Ok::<_, Infallible>(Response::from_parts(parts, body))
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read)
        .keep_alive(true);
    let conn = http.serve_connection(
        TokioIo::new(IdleIo::new(io, limits.idle, Arc::clone(&slot))),
        service,
    );
    tokio::pin!(conn);
    let mut drain = pool.drain.subscribe();
    tokio::select! {
        _ = conn.as_mut() => return,
        () = slot.evict.notified() => return,
        _ = drain.wait_for(|draining| *draining) => {}
    }
    tokio::select! {
        _ = conn.as_mut() => return,
        () = tokio::time::sleep(DRAIN_GRACE) => {}
    }
    if slot.busy.load(Ordering::Acquire) == 0 {
        return;
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// A connection that fails once it has been silent for its idle time
/// while not answering a request (a hook may take longer than that).
struct IdleIo<T> {
    io: T,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    slot: Arc<Slot>,
}

impl<T> IdleIo<T> {
    fn new(io: T, idle: Duration, slot: Arc<Slot>) -> Self {
        Self {
            io,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
            slot,
        }
    }

    fn touched(&mut self) {
        self.deadline.as_mut().reset(Instant::now() + self.idle);
    }

    /// `Pending`, or the idle error once the deadline passed.
    fn pending_or_idle<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        if self.slot.busy.load(Ordering::Acquire) > 0 {
            self.touched();
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the connection was idle too long",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for IdleIo<T> {
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

impl<T: AsyncWrite + Unpin> AsyncWrite for IdleIo<T> {
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
