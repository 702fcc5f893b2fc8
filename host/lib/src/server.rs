//! The engine behind an HTTP endpoint, for agents' HTTP hooks (Claude
//! Code's `type: "http"`): events are POSTed to `/hook` as the agent's
//! event JSON and answered with the JSON its command hook would print, so
//! the agent pays no process start per event and compiled plugins stay
//! warm. `GET /health` answers `{"status": "ok", "hooks": N}`.
//!
//! Requests are handled concurrently; a body over the size limit gets 413,
//! a body that is not an event 400, and, when a token is set, a request
//! without `Authorization: Bearer <token>` 401.
//!
//! No web page can drive it: a request that carries an `Origin` (every
//! browser sends one with a cross-site request) gets 403, a body that is
//! not `Content-Type: application/json` (the only kind a page can send
//! without asking first) 415, and, when the server knows its own
//! addresses, a `Host` that is not one of them (DNS rebinding) 421.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::engine::HookEngine;
use crate::server_limits::{DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, Guarded};

use crate::protocol::Protocol;

/// The default request body limit: 1 MiB.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// An HTTP front for a [`HookEngine`]. Build it, then serve it on a TCP
/// or Unix listener until a shutdown future completes.
#[derive(Debug, Clone)]
pub struct HookServer {
    engine: HookEngine,
    protocol: Protocol,
    token: Option<String>,
    max_body: usize,
    hosts: Option<Vec<String>>,
    max_connections: usize,
    idle: Duration,
}

impl HookServer {
    /// Answer in `protocol`, with no token and a 1 MiB body limit.
    pub fn new(engine: HookEngine, protocol: Protocol) -> Self {
        Self {
            engine,
            protocol,
            token: None,
            max_body: DEFAULT_MAX_BODY,
            hosts: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle: DEFAULT_IDLE_TIMEOUT,
        }
    }

    /// Hold at most `max` connections at once (default
    /// [`DEFAULT_MAX_CONNECTIONS`]); the next one waits to be accepted.
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
            .layer(DefaultBodyLimit::max(self.max_body))
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
        L::Addr: std::fmt::Debug,
    {
        let listener = Guarded::new(listener, self.max_connections, self.idle);
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown)
            .await
    }
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
/// page's `Origin`, a `Host` this server does not answer to, a body that is
/// not declared JSON.
fn refused(server: &HookServer, headers: &HeaderMap) -> Option<Response> {
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

async fn hook(State(server): State<Arc<HookServer>>, headers: HeaderMap, body: Bytes) -> Response {
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
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the body is not JSON: {e}"),
            );
        }
    };
    let event = match server.protocol.decode(value) {
        Ok(e) => e,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the body is not an event: {e}"),
            );
        }
    };
    let outcome = server.engine.dispatch(&event).await;
    let answer = server.protocol.encode(&event, &outcome);
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

async fn health(State(server): State<Arc<HookServer>>) -> Json<Value> {
    Json(json!({ "status": "ok", "hooks": server.engine.hooks().len() }))
}
