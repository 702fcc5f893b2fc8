//! The engine behind an HTTP endpoint, for agents' HTTP hooks (Claude
//! Code's `type: "http"`): events are POSTed to `/hook` as the agent's
//! event JSON and answered with the JSON its command hook would print, so
//! the agent pays no process start per event and compiled plugins stay
//! warm. `GET /health` answers `{"status": "ok", "hooks": N}`.
//!
//! Requests are handled concurrently. **`/hook` never answers with a
//! refusal**: an agent reads a non-2xx status (as a dropped connection) as
//! "go on", so a request this server will not run hooks for — a body over
//! the size limit or not sent in time, a body that is not an event, no
//! token or the wrong one, a web page's `Origin`, a `Host` that is not this
//! server's, a `Content-Type` that is not JSON — gets a 200 with the
//! agent's block of its event (read from the body as far as it can be:
//! its `hook_event_name`), and a reason saying what to fix. A server for a
//! list of projects answers an event with the hooks of the project its
//! `cwd` lies in; an event from anywhere else with the person's and the
//! organisation's hooks alone ([`HookServer::outside_projects`]), or, when
//! the operator gave none, with the hooks' failure (a block on a guard
//! event): the event cannot choose which hooks run, or where.
//!
//! Connections are held as `server_conn` says: capped, idle and
//! slow ones closed, drained on shutdown.
//!
//! No web page can drive it, nor read it: a request that carries an
//! `Origin` (every browser sends one with a cross-site request) runs no
//! hook, and, when the server knows its own addresses, neither does one
//! whose `Host` is not one of them (DNS rebinding); `/health` and
//! `/metrics` refuse them (403, 421).

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

use crate::engine::{HookEngine, HookEngineBuilder};
use crate::observe::feed::{DecisionFeed, DecisionNote};
use crate::observe::page::PageState;
use crate::protocol::{Answer, Protocol};
use crate::server_access_log::{AccessLog, AccessRecord};
use crate::server_conn::{
    ConnectionLimits, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT,
};
use crate::server_metrics::ServerMetrics;
use crate::warm::{RebuildPolicy, WarmEngine};
use wasm_hooks_core::{AuditLog, Event, EventName};

/// The default request body limit: 1 MiB.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// How often the live page's stream says it is alive when no decision
/// comes.
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(15);

/// An HTTP front for a [`HookEngine`]. Build it, then serve it on a TCP
/// or Unix listener until a shutdown future completes.
#[derive(Debug, Clone)]
pub struct HookServer {
    served: Served,
    /// What answers an event from outside every served project.
    outside: Option<Arc<WarmEngine>>,
    protocol: Protocol,
    token: Option<String>,
    max_body: usize,
    hosts: Option<Vec<String>>,
    max_connections: usize,
    idle: Duration,
    request_timeout: Duration,
    reload: Option<Duration>,
    metrics: Arc<ServerMetrics>,
    access_log: Option<Arc<AccessLog>>,
    state: Option<Arc<dyn wasm_hooks_core::SessionStore>>,
    traces: bool,
    /// Every decision, for the live page (`/ui`).
    feed: Arc<DecisionFeed>,
    /// What the page shows of an event is redacted as the audit log is.
    redactor: Arc<wasm_hooks_core::Redactor>,
    /// How often the page's quiet stream says it is alive.
    heartbeat: Duration,
    /// The replay report the page shows, if any.
    replay: Option<Value>,
}

/// Whose hooks answer an event.
#[derive(Debug, Clone)]
enum Served {
    /// One engine answers every event.
    Any(Arc<WarmEngine>),
    /// Each project's engine answers the events from inside it.
    Projects(Vec<(PathBuf, Arc<WarmEngine>)>),
}

impl HookServer {
    /// Answer every event with `engine`'s hooks, in `protocol`, with no
    /// token and a 1 MiB body limit.
    pub fn new(engine: HookEngine, protocol: Protocol) -> Self {
        Self::serving(
            Served::Any(Arc::new(WarmEngine::fixed("-", engine))),
            protocol,
        )
    }

    /// Answer an event with the hooks of the project (directory, engine)
    /// its `cwd` lies in (the innermost), refusing events from anywhere
    /// else. (An event decoded without a `cwd` has this process's.)
    pub fn for_projects(projects: Vec<(PathBuf, HookEngine)>, protocol: Protocol) -> Self {
        let projects = projects
            .into_iter()
            .map(|(dir, engine)| {
                let served = Arc::new(WarmEngine::fixed(&dir.display().to_string(), engine));
                (dir, served)
            })
            .collect();
        Self::serving(Served::Projects(projects), protocol)
    }

    /// As [`HookServer::for_projects`], each project's engine built from
    /// its builder now, and again whenever the project's trust changes
    /// (see [`HookEngine::trust_is_current`]; a revoked trust or a changed
    /// script takes effect on the next request) or, with
    /// [`HookServer::live_reload`], one of its inputs does. A project whose
    /// hooks do not load does not stop the others: its events are answered
    /// as a failure of its hooks (a guard blocks) until they load, and
    /// `/ready` says so.
    pub fn for_project_builders(
        projects: Vec<(PathBuf, HookEngineBuilder)>,
        protocol: Protocol,
    ) -> Self {
        let projects = projects
            .into_iter()
            .map(|(dir, builder)| {
                let served = Arc::new(WarmEngine::build(
                    &dir.display().to_string(),
                    builder,
                    RebuildPolicy::KeepLastGood,
                ));
                (dir, served)
            })
            .collect();
        Self::serving(Served::Projects(projects), protocol)
    }

    /// Answer an event from outside every served project with the engine
    /// `builder` builds (the person's and the organisation's layers: see
    /// [`HookEngineBuilder::without_project`]), built now and again as the
    /// projects' are. Without it, such an event gets the hooks' failure (a
    /// block on a guard event).
    pub fn outside_projects(mut self, builder: HookEngineBuilder) -> Self {
        self.outside = Some(Arc::new(WarmEngine::build(
            "(outside the served projects)",
            builder,
            RebuildPolicy::KeepLastGood,
        )));
        self
    }

    /// Every served engine, the one for events from outside the projects
    /// included.
    pub(crate) fn engines(&self) -> Vec<Arc<WarmEngine>> {
        let mut engines = self.project_engines();
        engines.extend(self.outside.clone());
        engines
    }

    /// The served projects' engines.
    fn project_engines(&self) -> Vec<Arc<WarmEngine>> {
        match &self.served {
            Served::Any(engine) => vec![Arc::clone(engine)],
            Served::Projects(projects) => projects.iter().map(|(_, e)| Arc::clone(e)).collect(),
        }
    }

    /// Build each engine again when its inputs change (watched, and
    /// checked every `every` too), or on SIGHUP; a build that fails keeps
    /// the last good engine answering.
    pub fn live_reload(mut self, every: Duration) -> Self {
        self.reload = Some(every);
        self
    }

    fn serving(served: Served, protocol: Protocol) -> Self {
        Self {
            served,
            outside: None,
            protocol,
            token: None,
            max_body: DEFAULT_MAX_BODY,
            hosts: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle: DEFAULT_IDLE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            reload: None,
            metrics: Arc::new(ServerMetrics::new()),
            access_log: None,
            state: None,
            traces: false,
            feed: Arc::new(DecisionFeed::new()),
            redactor: Arc::new(wasm_hooks_core::Redactor::from_env(&[])),
            heartbeat: DEFAULT_HEARTBEAT,
            replay: None,
        }
    }

    /// Show this replay report (`wasm-hooks replay --json`) on the live
    /// page.
    pub fn replay_report(mut self, report: Value) -> Self {
        self.replay = Some(report);
        self
    }

    /// How often the live page's stream sends a heartbeat when no
    /// decision comes (15 s by default).
    pub fn heartbeat(mut self, every: Duration) -> Self {
        self.heartbeat = every;
        self
    }

    /// Record an OpenTelemetry span per event and per hook (see
    /// `server_trace`) with the global tracer, which the host set up; off
    /// by default, so that a server without a collector pays nothing.
    pub fn traces(mut self) -> Self {
        self.traces = true;
        self
    }

    /// The shared state store the engines use (`--state`), whose failures
    /// `/metrics` counts.
    pub fn state_store(mut self, state: Arc<dyn wasm_hooks_core::SessionStore>) -> Self {
        self.state = Some(state);
        self
    }

    /// Write a JSON line per answered event to `out` (see
    /// `server_access_log`: no input, prompt or reason, only who asked
    /// what and what was decided).
    pub fn access_log(mut self, out: Box<dyn std::io::Write + Send>) -> Self {
        self.access_log = Some(Arc::new(AccessLog::new(out)));
        self
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
            .route("/v1/decide", post(decide))
            .route("/v1/openapi.json", get(openapi))
            .route("/health", get(health))
            .route("/ready", get(ready))
            .route("/metrics", get(metrics))
            .with_state(Arc::new(self.clone()))
            .merge(crate::observe::page::routes(Arc::new(PageState {
                feed: Arc::clone(&self.feed),
                token: self.token.clone(),
                replay: self.replay.clone(),
                heartbeat: self.heartbeat,
            })))
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
        let limits = ConnectionLimits {
            max: self.max_connections,
            idle: self.idle,
            header_read: self.request_timeout,
        };
        let reloading = self.reload.map(|every| {
            tokio::spawn(crate::server_reload::reload_loop(
                self.engines(),
                Arc::clone(&self.metrics),
                every,
            ))
        });
        let served = crate::server_conn::serve(listener, self.router(), limits, shutdown).await;
        if let Some(task) = reloading {
            task.abort();
        }
        served
    }

    /// The engine whose hooks answer an event from `cwd`, and its project
    /// directory (none when one engine answers everything), or why none
    /// does.
    fn engine_for(&self, cwd: Option<&str>) -> Result<(&Arc<WarmEngine>, Option<&Path>), String> {
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
            .map(|(dir, engine)| (engine, Some(dir.as_path())))
            .or_else(|| self.outside.as_ref().map(|engine| (engine, None)))
            .ok_or_else(|| {
                format!(
                    "the event's cwd `{cwd}` is in no project this server serves (start it with --project for that directory)"
                )
            })
    }

    /// The hooks of the served projects (not of the engine for events
    /// from outside them, which holds the person's again).
    fn hook_count(&self) -> usize {
        self.project_engines()
            .iter()
            .filter_map(|e| e.engine())
            .map(|e| e.hooks().len())
            .sum()
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

fn error(status: StatusCode, message: String) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// Why a request is refused: the status a route other than `/hook`
/// answers with, and why (which `/hook` says in its block instead).
struct Refusal {
    status: StatusCode,
    why: String,
}

impl Refusal {
    fn new(status: StatusCode, why: impl Into<String>) -> Self {
        Self {
            status,
            why: why.into(),
        }
    }

    /// The refusal as `/health` and `/metrics` answer it.
    fn response(self) -> Response {
        error(self.status, self.why)
    }
}

/// Why a request cannot have come from an agent, if it cannot: a web
/// page's `Origin`, a `Host` this server does not answer to. Every route
/// checks it.
fn from_elsewhere(server: &HookServer, headers: &HeaderMap) -> Option<Refusal> {
    if headers.contains_key(header::ORIGIN) {
        return Some(Refusal::new(
            StatusCode::FORBIDDEN,
            "requests from web pages (with an Origin header) are refused",
        ));
    }
    if let Some(hosts) = &server.hosts {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Some(Refusal::new(
                StatusCode::MISDIRECTED_REQUEST,
                format!("Host `{host}` is not this server's address"),
            ));
        }
    }
    None
}

/// Why an event cannot have come from an agent, if it cannot: it comes
/// [`from_elsewhere`], or its body is not declared JSON.
fn refused(server: &HookServer, headers: &HeaderMap) -> Option<Refusal> {
    if let Some(refusal) = from_elsewhere(server, headers) {
        return Some(refusal);
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    (!json).then(|| {
        Refusal::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be sent as Content-Type: application/json",
        )
    })
}

async fn hook(
    State(server): State<Arc<HookServer>>,
    peer: Option<axum::Extension<crate::server_conn::Peer>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let protocol = server.protocol;
    request(&server, protocol, peer, &headers, body).await
}

/// `POST /v1/decide`: the neutral API, for a program that is none of the
/// agents: the canonical event in, the whole outcome out
/// ([`Protocol::Canonical`]), under the same rules as `/hook` (a token, no
/// web page, never a refusal: a request no hook runs for is answered
/// with a deny saying why).
async fn decide(
    State(server): State<Arc<HookServer>>,
    peer: Option<axum::Extension<crate::server_conn::Peer>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    request(&server, Protocol::Canonical, peer, &headers, body).await
}

/// `GET /v1/openapi.json`: the OpenAPI document of the endpoints, for a
/// program or a person on this machine (not a web page, as `/health`).
async fn openapi(State(server): State<Arc<HookServer>>, headers: HeaderMap) -> Response {
    if let Some(refusal) = from_elsewhere(&server, &headers) {
        return refusal.response();
    }
    Json(crate::openapi::document()).into_response()
}

/// A request to `/hook` or `/v1/decide` answered in `protocol`, counted
/// and written to the access log.
async fn request(
    server: &Arc<HookServer>,
    protocol: Protocol,
    peer: Option<axum::Extension<crate::server_conn::Peer>>,
    headers: &HeaderMap,
    body: Body,
) -> Response {
    let _in_flight = server.metrics.in_flight();
    let started = std::time::Instant::now();
    let mut record = AccessRecord {
        client: peer.map(|p| p.0.0.to_string()).unwrap_or_default(),
        ..AccessRecord::default()
    };
    let response = hook_answer(server, protocol, headers, body, &mut record).await;
    let status = response.status().as_u16();
    server.metrics.request(status);
    if let Some(log) = &server.access_log {
        record.time = wasm_hooks_core::now_rfc3339();
        record.status = status;
        record.duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        if record.decision.is_empty() {
            record.decision = "refused".to_owned();
        }
        log.write(&record);
    }
    response
}

/// A request body that does not hold an event: why, and what of it was
/// read (at most the size limit), to tell which event it was.
struct Unread {
    why: String,
    head: Vec<u8>,
}

/// The event a request's body holds, read within the time and size
/// limits, and the protocol of the agent that sent it
/// ([`Protocol::read`]); or why not, with what was read.
async fn read_event(
    server: &HookServer,
    protocol: Protocol,
    body: Body,
) -> Result<(Protocol, Event), Unread> {
    let body = read_body(server, body).await?;
    let value = std::str::from_utf8(&body)
        .map_err(|e| e.to_string())
        .and_then(|text| crate::event_json(text).map_err(|e| e.to_string()))
        .map_err(|e| Unread {
            why: format!("the body is not JSON: {e}"),
            head: body.clone(),
        })?;
    protocol.read(value).map_err(|e| Unread {
        why: format!("the body is not an event: {e}"),
        head: body,
    })
}

/// The body, whole, when it arrives within the request timeout and the
/// size limit; what arrived of it otherwise.
async fn read_body(server: &HookServer, body: Body) -> Result<Vec<u8>, Unread> {
    use futures_util::StreamExt as _;
    let deadline = tokio::time::Instant::now() + server.request_timeout;
    let mut stream = body.into_data_stream();
    let mut read = Vec::new();
    loop {
        let why = match tokio::time::timeout_at(deadline, stream.next()).await {
            Ok(None) => return Ok(read),
            Ok(Some(Ok(chunk))) if read.len() + chunk.len() <= server.max_body => {
                read.extend_from_slice(&chunk);
                continue;
            }
            Ok(Some(Ok(chunk))) => {
                // What fits is kept: it names the event.
                let room = server.max_body.saturating_sub(read.len());
                read.extend_from_slice(&chunk[..room.min(chunk.len())]);
                format!(
                    "the event is over {} bytes, this server's limit (`--max-body-kb`)",
                    server.max_body
                )
            }
            Ok(Some(Err(e))) => format!("the body could not be read: {e}"),
            Err(_) => format!(
                "the body did not arrive within {} ms",
                server.request_timeout.as_millis()
            ),
        };
        return Err(Unread { why, head: read });
    }
}

/// The event whose answer blocks a request that holds none: named by the
/// `hook_event_name` the body starts with, when it can be read there.
fn named_event(protocol: Protocol, head: &[u8]) -> Option<Event> {
    static NAME: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#""hook_event_name"\s*:\s*"([A-Za-z_:.-]{1,64})""#).ok()
    });
    let head = String::from_utf8_lossy(&head[..head.len().min(PEEK_BYTES)]);
    NAME.as_ref()?.captures(&head).and_then(|found| {
        let name = found.get(1)?.as_str();
        protocol
            .decode(json!({ "hook_event_name": name }))
            .ok()
            .or_else(|| EventName::parse(name).ok().map(Event::new))
    })
}

/// How much of an unreadable body is searched for its event's name: an
/// agent names it before the tool's input.
const PEEK_BYTES: usize = 64 * 1024;

/// A 200 with the agent's block of `event` (a visible message on an event
/// that guards nothing), for `why`: what `/hook` answers in place of a
/// refusal. For an event that cannot be named, a block every event of
/// the agent takes (`decision: "block"`: a deny on a tool call, a blocked
/// prompt), never an answer under another event's name (which Claude Code
/// refuses, and so goes on).
fn blocked(
    server: &HookServer,
    protocol: Protocol,
    event: Option<&Event>,
    why: &str,
    record: &mut AccessRecord,
) -> Response {
    record.decision = "refused".to_owned();
    server.metrics.refused();
    let Some(event) = event else {
        return Json(protocol.unnamed_block(why)).into_response();
    };
    record.event = event.name().to_string();
    let answer = protocol.failure_over_http(event, why);
    let body = match answer.body {
        Value::Null => json!({}),
        body => body,
    };
    Json(body).into_response()
}

async fn hook_answer(
    server: &Arc<HookServer>,
    protocol: Protocol,
    headers: &HeaderMap,
    body: Body,
    record: &mut AccessRecord,
) -> Response {
    let refusal = refused(server, headers).or_else(|| unauthorized(server, headers));
    // From here on, the protocol of the agent that sent it.
    let (protocol, mut event) = match (refusal, read_event(server, protocol, body).await) {
        (None, Ok(read)) => read,
        (Some(refusal), read) => {
            let event = read
                .map(|(_, event)| Some(event))
                .unwrap_or_else(|unread| named_event(protocol, &unread.head));
            return blocked(server, protocol, event.as_ref(), &refusal.why, record);
        }
        (None, Err(unread)) => {
            let event = named_event(protocol, &unread.head);
            return blocked(server, protocol, event.as_ref(), &unread.why, record);
        }
    };
    record.session = event.session_id().to_owned();
    record.event = event.name().to_string();
    record.tool = event.tool_name().map(str::to_owned);
    let served = match server.engine_for(event.cwd()) {
        Ok((served, project)) => {
            if let Some(dir) = project {
                event.set_project_dir(dir);
            }
            served
        }
        Err(why) => return blocked(server, protocol, Some(&event), &why, record),
    };
    record.project = served.name().to_owned();
    let answer = match served.refreshed().await {
        Ok((engine, rebuilt)) => {
            if rebuilt != crate::warm::Reloaded::Unchanged {
                server
                    .metrics
                    .reloaded(served.name(), served.not_ready().is_none());
            }
            let traced = server.traces.then(|| {
                headers
                    .get("traceparent")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            });
            let (answer, decided) =
                answer(engine, event, protocol, server, (served.name(), traced)).await;
            (record.decision, record.decided_by) = decided;
            answer
        }
        Err(why) => {
            record.decision = "failed".to_owned();
            protocol.failure_over_http(&event, &why)
        }
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
async fn answer(
    engine: Arc<HookEngine>,
    event: Event,
    protocol: Protocol,
    server: &HookServer,
    (project, traced): (&str, Option<Option<String>>),
) -> (Answer, (String, Option<String>)) {
    // Only the name is kept for a failure: the event itself goes with the
    // task, uncopied.
    let name = event.name();
    let metrics = Arc::clone(&server.metrics);
    let (feed, redactor) = (Arc::clone(&server.feed), Arc::clone(&server.redactor));
    let project = project.to_owned();
    let answered = tokio::spawn(async move {
        let started = std::time::SystemTime::now();
        let outcome = engine.dispatch(&event).await;
        metrics.answered(&engine, event.name().as_str(), &outcome);
        let redactor = engine.audit_log().map_or(&*redactor, AuditLog::redactor);
        feed.publish(DecisionNote::of(&project, &event, &outcome, redactor));
        // `traced`: whether spans are recorded, and the header's
        // traceparent if the request had one.
        if let Some(header) = traced {
            let from_event = event.record().get("traceparent").and_then(|v| v.as_str());
            crate::server_trace::record(
                &engine,
                &crate::server_trace::Answered {
                    event: event.name().as_str(),
                    session: event.session_id(),
                    traceparent: header.as_deref().or(from_event),
                    started,
                    outcome: &outcome,
                },
            );
        }
        let decided = (
            crate::server_metrics::verdict_word(&outcome.verdict).to_owned(),
            outcome.decided_by.as_ref().map(ToString::to_string),
        );
        (protocol.encode(&event, &outcome), decided)
    });
    match answered.await {
        Ok(answered) => answered,
        Err(failed) => {
            let why = format!("wasm-hooks failed answering: {failed}");
            tracing::error!("{why}");
            (
                protocol.failure_over_http(&Event::new(name), &why),
                ("failed".to_owned(), None),
            )
        }
    }
}

/// `GET /health`: the status, the number of hooks and of projects not
/// ready, for an agent or a person on this machine, never for a web page
/// (see [`from_elsewhere`]).
async fn health(State(server): State<Arc<HookServer>>, headers: HeaderMap) -> Response {
    if let Some(refusal) = from_elsewhere(&server, &headers) {
        return refusal.response();
    }
    // Alive whatever the projects' files say; how many are not built
    // from their files as they are (`/ready` says which and why).
    let not_ready = server
        .engines()
        .iter()
        .filter(|e| e.not_ready().is_some())
        .count();
    Json(json!({ "status": "ok", "hooks": server.hook_count(), "not_ready": not_ready }))
        .into_response()
}

/// `GET /ready`: 200 when every project's engine is built from its files
/// as they are, else 503 naming each that is not and why (its last good
/// engine, if it has one, still answers).
async fn ready(State(server): State<Arc<HookServer>>, headers: HeaderMap) -> Response {
    if let Some(refusal) = from_elsewhere(&server, &headers) {
        return refusal.response();
    }
    let not_ready: serde_json::Map<String, Value> = server
        .engines()
        .iter()
        .filter_map(|e| {
            e.not_ready()
                .map(|why| (e.name().to_owned(), Value::String(why)))
        })
        .collect();
    if not_ready.is_empty() {
        Json(json!({"status": "ready"})).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "not ready", "projects": not_ready})),
        )
            .into_response()
    }
}

/// `GET /metrics`: OpenMetrics when the scraper asks for it (`Accept`),
/// else the Prometheus text format (see `server_metrics`); with a token
/// set, only for a request that carries it.
async fn metrics(State(server): State<Arc<HookServer>>, headers: HeaderMap) -> Response {
    if let Some(refusal) = from_elsewhere(&server, &headers) {
        return refusal.response();
    }
    if let Some(refusal) = unauthorized(&server, &headers) {
        return refusal.response();
    }
    if let Some(state) = &server.state {
        server.metrics.state_failures(state.failures());
    }
    let openmetrics = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/openmetrics-text"));
    if openmetrics {
        (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            server.metrics.encode(),
        )
            .into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            server.metrics.encode_prometheus(),
        )
            .into_response()
    }
}

/// A 401 when a token is set and `headers` do not carry it.
fn unauthorized(server: &HookServer, headers: &HeaderMap) -> Option<Refusal> {
    let token = server.token.as_ref()?;
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    (!given.is_some_and(|given| crate::observe::page::same_secret(given.as_bytes(), token.as_bytes()))).then(|| {
        Refusal::new(
            StatusCode::UNAUTHORIZED,
            "the request carries no bearer token, or the wrong one: set the server's token (WASM_HOOKS_TOKEN) where the agent runs",
        )
    })
}
