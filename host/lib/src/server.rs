//! The engine behind an HTTP endpoint, for agents' HTTP hooks (Claude
//! Code's `type: "http"`): events are POSTed to `/hook` as the agent's
//! event JSON and answered with the JSON its command hook would print, so
//! the agent pays no process start per event and compiled plugins stay
//! warm. `GET /health` answers `{"status": "ok", "hooks": N}`.
//!
//! Requests are handled concurrently; a body over the size limit gets 413,
//! a body that is not an event 400, a body not sent in time 408, and, when
//! a token is set, a request without `Authorization: Bearer <token>` 401.
//! A server for a list of projects answers an event with the hooks of the
//! project its `cwd` lies in, and refuses (403) an event from any other
//! place: the event cannot choose which hooks run, or where.
//!
//! Connections are held as `server_conn` says: capped, idle and
//! slow ones closed, drained on shutdown.
//!
//! No web page can drive it, nor read it: a request that carries an
//! `Origin` (every browser sends one with a cross-site request) gets 403,
//! and, when the server knows its own addresses, a `Host` that is not one
//! of them (DNS rebinding) 421, on `/hook` and `/health` alike; an event
//! whose body is not `Content-Type: application/json` (the only kind a
//! page can send without asking first) gets 415.

use std::future::Future;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::engine::{HookEngine, HookEngineBuilder, LoadError};
use crate::protocol::{Answer, Protocol};
use crate::server_conn::{
    ConnectionLimits, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT,
};
use wasm_hooks_core::Event;

/// The default request body limit: 1 MiB.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// An HTTP front for a [`HookEngine`]. Build it, then serve it on a TCP
/// or Unix listener until a shutdown future completes.
#[derive(Debug, Clone)]
pub struct HookServer {
    served: Served,
    protocol: Protocol,
    token: Option<String>,
    max_body: usize,
    hosts: Option<Vec<String>>,
    max_connections: usize,
    idle: Duration,
    request_timeout: Duration,
}

/// Whose hooks answer an event.
#[derive(Debug, Clone)]
enum Served {
    /// One engine answers every event.
    Any(Arc<ServedEngine>),
    /// Each project's engine answers the events from inside it.
    Projects(Vec<(PathBuf, Arc<ServedEngine>)>),
}

/// An engine as served: rebuilt from its builder, when it has one, once
/// the project's trust is no longer what it was built with (checked on
/// every request: a revoked trust, a new one, a changed script).
#[derive(Debug)]
struct ServedEngine {
    /// Shared by every request answering with it: never copied.
    engine: std::sync::RwLock<Arc<HookEngine>>,
    builder: Option<HookEngineBuilder>,
}

impl ServedEngine {
    fn new(engine: HookEngine, builder: Option<HookEngineBuilder>) -> Arc<Self> {
        Arc::new(Self {
            engine: std::sync::RwLock::new(Arc::new(engine)),
            builder,
        })
    }

    fn engine(&self) -> Arc<HookEngine> {
        Arc::clone(
            &self
                .engine
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The engine to answer with now; or why there is none.
    fn current(&self) -> Result<Arc<HookEngine>, String> {
        let engine = self.engine();
        if engine.trust_is_current() {
            return Ok(engine);
        }
        let Some(builder) = &self.builder else {
            return Err(
                "the project's trust changed since this server started; restart it".to_owned(),
            );
        };
        let mut slot = self
            .engine
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Another request may have rebuilt it while this one waited.
        if !Arc::ptr_eq(&slot, &engine) && slot.trust_is_current() {
            return Ok(Arc::clone(&slot));
        }
        tracing::info!("the project's trust changed: building its engine again");
        let fresh =
            Arc::new(builder.build().map_err(|e| {
                format!("the project's trust changed, and its hooks do not load: {e}")
            })?);
        *slot = Arc::clone(&fresh);
        Ok(fresh)
    }
}

impl HookServer {
    /// Answer every event with `engine`'s hooks, in `protocol`, with no
    /// token and a 1 MiB body limit.
    pub fn new(engine: HookEngine, protocol: Protocol) -> Self {
        Self::serving(Served::Any(ServedEngine::new(engine, None)), protocol)
    }

    /// Answer an event with the hooks of the project (directory, engine)
    /// its `cwd` lies in (the innermost), refusing events from anywhere
    /// else. (An event decoded without a `cwd` has this process's.)
    pub fn for_projects(projects: Vec<(PathBuf, HookEngine)>, protocol: Protocol) -> Self {
        let projects = projects
            .into_iter()
            .map(|(dir, engine)| (dir, ServedEngine::new(engine, None)))
            .collect();
        Self::serving(Served::Projects(projects), protocol)
    }

    /// As [`HookServer::for_projects`], each project's engine built from
    /// its builder now and again whenever the project's trust changes
    /// (see [`HookEngine::trust_is_current`]), so that a revoked trust or
    /// a changed script takes effect on the next request.
    ///
    /// # Errors
    /// The first project whose hooks do not load.
    pub fn for_project_builders(
        projects: Vec<(PathBuf, HookEngineBuilder)>,
        protocol: Protocol,
    ) -> Result<Self, LoadError> {
        let projects = projects
            .into_iter()
            .map(|(dir, builder)| {
                let engine = builder.build()?;
                Ok((dir, ServedEngine::new(engine, Some(builder))))
            })
            .collect::<Result<_, LoadError>>()?;
        Ok(Self::serving(Served::Projects(projects), protocol))
    }

    fn serving(served: Served, protocol: Protocol) -> Self {
        Self {
            served,
            protocol,
            token: None,
            max_body: DEFAULT_MAX_BODY,
            hosts: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle: DEFAULT_IDLE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }

    /// Give a client this long to send a request's head, and again its
    /// body (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Hold at most `max` connections at once (default
    /// [`DEFAULT_MAX_CONNECTIONS`]); for the next one, the connection quiet
    /// the longest is closed, or, when all are answering, it waits.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// Close a connection that neither sends nor takes a byte for this long
    /// (default [`DEFAULT_IDLE_TIMEOUT`]).
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle = idle;
        self
    }

    /// Answer only requests whose `Host` is one of these (`127.0.0.1:8787`,
    /// `localhost:8787`); by default any `Host` is accepted.
    pub fn allowed_hosts(mut self, hosts: Vec<String>) -> Self {
        self.hosts = Some(hosts);
        self
    }

    /// Require `Authorization: Bearer <token>` on `/hook`.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Refuse bodies larger than this (413).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    fn router(&self) -> axum::Router {
        axum::Router::new()
            .route("/hook", post(hook))
            .route("/health", get(health))
            .with_state(Arc::new(self.clone()))
    }

    /// Serve on a TCP listener until `shutdown` completes; requests in
    /// flight are finished first.
    ///
    /// # Errors
    /// When accepting connections fails for good.
    pub async fn serve_tcp(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        self.serve(listener, shutdown).await
    }

    /// Serve on a Unix socket until `shutdown` completes; requests in
    /// flight are finished first.
    ///
    /// # Errors
    /// When accepting connections fails for good.
    pub async fn serve_unix(
        self,
        listener: tokio::net::UnixListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        self.serve(listener, shutdown).await
    }

    async fn serve<L>(
        self,
        listener: L,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()>
    where
        L: axum::serve::Listener,
    {
        let limits = ConnectionLimits {
            max: self.max_connections,
            idle: self.idle,
            header_read: self.request_timeout,
        };
        crate::server_conn::serve(listener, self.router(), limits, shutdown).await
    }

    /// The engine whose hooks answer an event from `cwd`, and its project
    /// directory (none when one engine answers everything), or why none
    /// does.
    fn engine_for(&self, cwd: Option<&str>) -> Result<(&ServedEngine, Option<&Path>), String> {
        let projects = match &self.served {
            Served::Any(engine) => return Ok((engine, None)),
            Served::Projects(projects) => projects,
        };
        let Some(cwd) = cwd else {
            return Err("the event has no cwd, so no project it comes from".to_owned());
        };
        let place = resolved(Path::new(cwd));
        place
            .as_deref()
            .and_then(|place| {
                projects
                    .iter()
                    .filter(|(dir, _)| place.starts_with(dir))
                    .max_by_key(|(dir, _)| dir.components().count())
            })
            .map(|(dir, engine)| (&**engine, Some(dir.as_path())))
            .ok_or_else(|| {
                format!(
                    "the event's cwd `{cwd}` is in no project this server serves (start it with --project for that directory)"
                )
            })
    }

    fn hook_count(&self) -> usize {
        match &self.served {
            Served::Any(engine) => engine.engine().hooks().len(),
            Served::Projects(projects) => {
                projects.iter().map(|(_, e)| e.engine().hooks().len()).sum()
            }
        }
    }
}

/// `path` with its links resolved when it exists here; otherwise as given,
/// if it is absolute and has no `.` or `..` in it (which could step out of
/// a project while looking inside it); else none.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let plain = path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    plain.then(|| path.to_owned())
}

/// Whether two secrets are equal, in a time that does not depend on where
/// they differ.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

fn error(status: StatusCode, message: String) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// Why a request cannot have come from an agent, if it cannot: a web
/// page's `Origin`, a `Host` this server does not answer to. Every route
/// checks it.
fn from_elsewhere(server: &HookServer, headers: &HeaderMap) -> Option<Response> {
    if headers.contains_key(header::ORIGIN) {
        return Some(error(
            StatusCode::FORBIDDEN,
            "requests from web pages (with an Origin header) are refused".into(),
        ));
    }
    if let Some(hosts) = &server.hosts {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Some(error(
                StatusCode::MISDIRECTED_REQUEST,
                format!("Host `{host}` is not this server's address"),
            ));
        }
    }
    None
}

/// Why an event cannot have come from an agent, if it cannot: it comes
/// [`from_elsewhere`], or its body is not declared JSON.
fn refused(server: &HookServer, headers: &HeaderMap) -> Option<Response> {
    if let Some(refusal) = from_elsewhere(server, headers) {
        return Some(refusal);
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    (!json).then(|| {
        error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be sent as Content-Type: application/json".into(),
        )
    })
}

async fn hook(State(server): State<Arc<HookServer>>, headers: HeaderMap, body: Body) -> Response {
    if let Some(refusal) = refused(&server, &headers) {
        return refusal;
    }
    if let Some(token) = &server.token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !given.is_some_and(|given| same_secret(given.as_bytes(), token.as_bytes())) {
            return error(
                StatusCode::UNAUTHORIZED,
                "missing or wrong bearer token".into(),
            );
        }
    }
    let body = match tokio::time::timeout(
        server.request_timeout,
        axum::body::to_bytes(body, server.max_body),
    )
    .await
    {
        Ok(Ok(body)) => body,
        Ok(Err(_)) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is over {} bytes", server.max_body),
            );
        }
        Err(_) => {
            return error(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the body did not arrive within {} ms",
                    server.request_timeout.as_millis()
                ),
            );
        }
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the body is not JSON: {e}"),
            );
        }
    };
    let mut event = match server.protocol.decode(value) {
        Ok(e) => e,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the body is not an event: {e}"),
            );
        }
    };
    let served = match server.engine_for(event.cwd()) {
        Ok((served, project)) => {
            if let Some(dir) = project {
                event.set_project_dir(dir);
            }
            served
        }
        Err(why) => return error(StatusCode::FORBIDDEN, why),
    };
    let answer = match served.current() {
        Ok(engine) => answer(engine, event, server.protocol).await,
        Err(why) => server.protocol.failure_over_http(&event, &why),
    };
    for line in &answer.stderr {
        tracing::warn!("{line}");
    }
    // No opinion is an empty object over HTTP (a command hook prints nothing).
    let body = match answer.body {
        Value::Null => json!({}),
        body => body,
    };
    Json(body).into_response()
}

/// The hooks' answer to `event`; a panic while answering is their
/// failure (a block on an event that guards an action), never a dropped
/// connection, which an agent takes for "go on".
async fn answer(engine: Arc<HookEngine>, event: Event, protocol: Protocol) -> Answer {
    // Only the name is kept for a failure: the event itself goes with the
    // task, uncopied.
    let name = event.name();
    let answered = tokio::spawn(async move {
        let outcome = engine.dispatch(&event).await;
        protocol.encode(&event, &outcome)
    });
    match answered.await {
        Ok(answer) => answer,
        Err(failed) => {
            let why = format!("wasm-hooks failed answering: {failed}");
            tracing::error!("{why}");
            protocol.failure_over_http(&Event::new(name), &why)
        }
    }
}

/// `GET /health`: the status and the number of hooks, for an agent or a
/// person on this machine, never for a web page (see [`from_elsewhere`]).
async fn health(State(server): State<Arc<HookServer>>, headers: HeaderMap) -> Response {
    if let Some(refusal) = from_elsewhere(&server, &headers) {
        return refusal;
    }
    Json(json!({ "status": "ok", "hooks": server.hook_count() })).into_response()
}
