//! `wasm-hooks serve`: the engine behind an HTTP endpoint (loopback TCP by
//! default, or a Unix socket) for agents' HTTP hooks, until SIGINT or
//! SIGTERM.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use std::sync::Arc;

use wasm_hooks::serve::DEFAULT_IDLE_TIMEOUT;
use wasm_hooks::serve::DEFAULT_MAX_BODY;
use wasm_hooks::serve::DEFAULT_MAX_CONNECTIONS;
use wasm_hooks::serve::DEFAULT_REQUEST_TIMEOUT;
use wasm_hooks::serve::HookServer;
use wasm_hooks::{HookEngineBuilder, RedisStore, SessionStore};

use super::Exit;
use super::audit::AuditLogArg;
use super::hook_files::HookFileArgs;
use super::install::Agent;

/// Arguments of `wasm-hooks serve`. Every setting may also come from a
/// file (`--serve-config`), so a fleet is configured the same way
/// everywhere; a flag given here wins over the file.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Read settings from this YAML (or JSON) file: its keys are these
    /// flags' long names with `_` (`listen`, `projects`, `token_env`,
    /// `reload_ms`…); relative paths in it are relative to it.
    #[arg(long, value_name = "FILE")]
    serve_config: Option<PathBuf>,

    /// Listen on this address; only loopback addresses unless a token is
    /// required [default: 127.0.0.1:8787].
    #[arg(long, value_name = "ADDR", conflicts_with = "socket")]
    listen: Option<SocketAddr>,

    /// Listen on this Unix socket instead.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,

    /// The agent whose protocol to speak [default: claude].
    #[arg(long, value_enum)]
    protocol: Option<Agent>,

    /// Require `Authorization: Bearer <token>`, the token being this
    /// environment variable's value (at least 16 characters: `openssl
    /// rand -hex 16`; on an address that is not loopback, at least 32 with
    /// 12 different: `openssl rand -hex 32`). Required unless --no-token.
    #[arg(long, value_name = "VAR", conflicts_with = "no_token")]
    token_env: Option<String>,

    /// Answer without a token (loopback or a Unix socket only): any local
    /// process or user can then drive the hooks.
    #[arg(long)]
    no_token: bool,

    /// Also answer requests addressed to this host name (`Host` header; the
    /// listening address, and `localhost` on loopback, always are).
    #[arg(long = "allow-host", value_name = "NAME[:PORT]")]
    allow_hosts: Vec<String>,

    /// Serve this project's hooks (repeatable) [default: the current
    /// directory]: an event is answered by the project its `cwd` is in;
    /// one in none as `--outside-projects` says.
    #[arg(long = "project", value_name = "DIR", conflicts_with = "project_dir")]
    projects: Vec<PathBuf>,

    /// What answers an event whose `cwd` is in no served project:
    /// `persons` (the default), the person's and the organisation's hooks,
    /// with no project layer; `block`, the hooks' failure (a guard event
    /// is blocked, others go on with a message). Never a refusal, which an
    /// agent takes for "go on".
    #[arg(long, value_enum)]
    outside_projects: Option<Outside>,

    /// Hold at most this many connections at once; for the next, the one
    /// quiet the longest is closed (or, when all are answering, it waits)
    /// [default: 256].
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,

    /// Give a client this long to send a request's head, and again its
    /// body (milliseconds) [default: 10000].
    #[arg(long, value_name = "MS")]
    request_timeout_ms: Option<u64>,

    /// Close a connection silent this long (milliseconds) [default:
    /// 30000].
    #[arg(long, value_name = "MS")]
    idle_timeout_ms: Option<u64>,

    /// Refuse request bodies larger than this many KiB [default: 1024].
    #[arg(long, value_name = "KIB")]
    max_body_kb: Option<usize>,

    /// Check plugin files, hook files, settings, trust and locks this
    /// often (milliseconds; changes are also watched, and SIGHUP rebuilds
    /// every engine) and swap in what changed; 0 turns reloading off
    /// [default: 1000].
    #[arg(long, value_name = "MS")]
    reload_ms: Option<u64>,

    /// Send OpenTelemetry spans (one per event, one per hook, continuing
    /// the agent's `traceparent`) to this OTLP/HTTP endpoint (JSON), e.g.
    /// `http://127.0.0.1:4318/v1/traces`.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,

    /// Show this replay report (`wasm-hooks replay --json` wrote it) on
    /// the live decisions page (`/ui`).
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,

    /// Keep session state (`once` marks, stop-loop counts) in this Redis
    /// (`redis://HOST:PORT/DB`, `redis+unix:///PATH`), shared by every
    /// replica that names it [default: this process's memory].
    #[arg(long, value_name = "URL")]
    state: Option<String>,

    /// Append a JSON line per answered event to this file (`-`: stderr):
    /// time, client address, project, session, event, tool, decision, the
    /// deciding hook, status and duration; never an input, prompt or
    /// reason.
    #[arg(long, value_name = "FILE")]
    access_log: Option<PathBuf>,

    #[command(flatten)]
    hook_files: HookFileArgs,

    #[command(flatten)]
    audit: AuditLogArg,
}

/// What answers an event from outside every served project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Outside {
    /// The person's and the organisation's hooks.
    #[default]
    Persons,
    /// The hooks' failure: a guard event is blocked.
    Block,
}

/// `serve`'s settings as a file gives them (see [`ServeArgs`]).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ServeFile {
    listen: Option<SocketAddr>,
    socket: Option<PathBuf>,
    protocol: Option<Agent>,
    token_env: Option<String>,
    #[serde(default)]
    no_token: bool,
    #[serde(default)]
    allow_hosts: Vec<String>,
    #[serde(default)]
    projects: Vec<PathBuf>,
    outside_projects: Option<Outside>,
    max_connections: Option<usize>,
    request_timeout_ms: Option<u64>,
    idle_timeout_ms: Option<u64>,
    max_body_kb: Option<usize>,
    reload_ms: Option<u64>,
    access_log: Option<PathBuf>,
    state: Option<String>,
    otlp_endpoint: Option<String>,
    replay: Option<PathBuf>,
}

/// What `serve` runs with: the flags, then the file, then the defaults.
#[derive(Debug)]
struct Settings {
    listen: SocketAddr,
    socket: Option<PathBuf>,
    protocol: Agent,
    token_env: Option<String>,
    no_token: bool,
    allow_hosts: Vec<String>,
    projects: Vec<PathBuf>,
    outside_projects: Outside,
    max_connections: usize,
    request_timeout_ms: u64,
    idle_timeout_ms: u64,
    max_body_kb: usize,
    reload_ms: u64,
    access_log: Option<PathBuf>,
    state: Option<String>,
    otlp_endpoint: Option<String>,
    replay: Option<PathBuf>,
}

impl Settings {
    /// `args` over the file `--serve-config` names (if any) over the
    /// defaults.
    fn of(args: &ServeArgs) -> anyhow::Result<Self> {
        let (file, base) = match &args.serve_config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let file: ServeFile = serde_norway::from_str(&text).map_err(|e| {
                    let at = e
                        .location()
                        .map(|l| format!(":{}:{}", l.line(), l.column()))
                        .unwrap_or_default();
                    anyhow::anyhow!("{}{at}: {e}", path.display())
                })?;
                let base = path
                    .parent()
                    .map(std::path::Path::to_owned)
                    .unwrap_or_default();
                (file, base)
            }
            None => (ServeFile::default(), PathBuf::new()),
        };
        let from_file = |p: PathBuf| base.join(p);
        let (socket, listen) = match (&args.socket, args.listen) {
            (Some(socket), _) => (Some(socket.clone()), None),
            (None, Some(listen)) => (None, Some(listen)),
            (None, None) => (file.socket.map(from_file), file.listen),
        };
        Ok(Self {
            listen: listen.unwrap_or_else(|| "127.0.0.1:8787".parse().expect("an address")),
            socket,
            protocol: args
                .protocol
                .or(file.protocol)
                .unwrap_or(Agent(wasm_hooks::Protocol::Claude)),
            token_env: args.token_env.clone().or(file.token_env),
            no_token: args.no_token || (args.token_env.is_none() && file.no_token),
            allow_hosts: args
                .allow_hosts
                .iter()
                .cloned()
                .chain(file.allow_hosts)
                .collect(),
            projects: if args.projects.is_empty() {
                file.projects.into_iter().map(from_file).collect()
            } else {
                args.projects.clone()
            },
            outside_projects: args
                .outside_projects
                .or(file.outside_projects)
                .unwrap_or_default(),
            max_connections: args
                .max_connections
                .or(file.max_connections)
                .unwrap_or(DEFAULT_MAX_CONNECTIONS),
            request_timeout_ms: args
                .request_timeout_ms
                .or(file.request_timeout_ms)
                .unwrap_or(DEFAULT_REQUEST_TIMEOUT.as_millis() as u64),
            idle_timeout_ms: args
                .idle_timeout_ms
                .or(file.idle_timeout_ms)
                .unwrap_or(DEFAULT_IDLE_TIMEOUT.as_millis() as u64),
            max_body_kb: args
                .max_body_kb
                .or(file.max_body_kb)
                .unwrap_or(DEFAULT_MAX_BODY / 1024),
            reload_ms: args.reload_ms.or(file.reload_ms).unwrap_or(1000),
            // `-` is stderr, wherever the file is.
            access_log: args.access_log.clone().or(file.access_log.map(|p| {
                if p.as_os_str() == "-" {
                    p
                } else {
                    from_file(p)
                }
            })),
            state: args.state.clone().or(file.state),
            otlp_endpoint: args.otlp_endpoint.clone().or(file.otlp_endpoint),
            replay: args.replay.clone().or(file.replay.map(from_file)),
        })
    }
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<Exit> {
    let settings = Settings::of(&args)?;
    let state: Option<Arc<dyn SessionStore>> = match &settings.state {
        Some(url) => Some(Arc::new(
            RedisStore::new(url).map_err(|e| anyhow::anyhow!("--state {e}"))?,
        )),
        None => None,
    };
    let (projects, outside) = builders(&args, &settings, state.as_ref())?;
    let server = HookServer::for_project_builders(projects, settings.protocol.protocol());
    let (mut server, spans) = configured(server, &settings, outside, state)?;
    match token(&settings)? {
        Some(token) => server = server.token(token),
        None => eprintln!(
            "wasm-hooks: warning: serving without a token (--no-token): any local process or user can drive these hooks"
        ),
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let served = runtime.block_on(async move {
        let shutdown = shutdown_signal().context("watching for SIGINT and SIGTERM")?;
        match &settings.socket {
            Some(path) => {
                replace_old_socket(path)?;
                let listener = tokio::net::UnixListener::bind(path)
                    .with_context(|| format!("binding {}", path.display()))?;
                announce(&format!("unix:{}", path.display()))?;
                server.serve_unix(listener, shutdown).await?;
            }
            None => {
                let listener = listen(settings.listen)
                    .with_context(|| format!("binding {}", settings.listen))?;
                let address = listener.local_addr()?;
                announce(&format!("http://{address}"))?;
                let server = server.allowed_hosts(hosts_of(address, &settings.allow_hosts));
                server.serve_tcp(listener, shutdown).await?;
            }
        }
        anyhow::Ok(())
    });
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    if let Some(provider) = spans
        && let Err(e) = provider.shutdown()
    {
        eprintln!("wasm-hooks: the last spans were not sent: {e}");
    }
    served?;
    Ok(Exit::GoOn)
}

/// Send spans to the OTLP/HTTP (JSON) endpoint `url`, and read the W3C
/// `traceparent` of requests; the provider, to flush at the end.
fn span_exporter(url: &str) -> anyhow::Result<opentelemetry_sdk::trace::SdkTracerProvider> {
    use opentelemetry_otlp::WithExportConfig as _;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpJson)
        .with_endpoint(url)
        .build()
        .with_context(|| format!("--otlp-endpoint {url}"))?;
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .build();
    opentelemetry::global::set_tracer_provider(provider.clone());
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    Ok(provider)
}

/// Where the access log goes: stderr for `-`, else the file, appended to,
/// readable by its owner only when created.
fn access_log(path: &std::path::Path) -> anyhow::Result<Box<dyn Write + Send>> {
    if path == std::path::Path::new("-") {
        return Ok(Box::new(std::io::stderr()));
    }
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("opening the access log {}", path.display()))?;
    Ok(Box::new(file))
}

/// How long the runtime's blocking threads get to finish once the server
/// has: dropping the runtime would wait for them without end, and one stuck
/// in a system call would keep SIGTERM from ever ending `serve`.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Each served project's directory (resolved) and engine builder, and
/// the builder of the engine for events from outside them (the person's
/// and the organisation's layers only); all share one wasm runtime, so a
/// plugin is compiled once.
fn builders(
    args: &ServeArgs,
    settings: &Settings,
    state: Option<&Arc<dyn SessionStore>>,
) -> anyhow::Result<(Vec<(PathBuf, HookEngineBuilder)>, HookEngineBuilder)> {
    // No plugin hot reload of the runtime's own: every plugin is an input
    // of its engine, which live reload builds again when one changes (two
    // reloaders would hash each change twice and rebuild after swapping).
    let mut options = args.hook_files.runtime_options();
    options
        .pooling(true)
        .tiering(wasm_hooks::Tiering::Background);
    if let Some(state) = state {
        options.session_store(Arc::clone(state));
    }
    let runtime = options.build().context("starting the wasm runtime")?;
    let here = std::env::current_dir().context("finding the current directory")?;
    let dirs = if settings.projects.is_empty() {
        vec![match args.hook_files.project_dir() {
            Some(dir) => dir.to_owned(),
            None => here.clone(),
        }]
    } else {
        settings.projects.clone()
    };
    let builder = |dir: PathBuf| -> anyhow::Result<HookEngineBuilder> {
        let mut builder = args.hook_files.builder_in(&[], Some(dir))?;
        args.audit.apply(&mut builder);
        builder.runtime(runtime.clone()).lints(false);
        if let Some(state) = state {
            builder.session_store(Arc::clone(state));
        }
        Ok(builder)
    };
    let projects = dirs
        .iter()
        .map(|dir| {
            let dir = dir
                .canonicalize()
                .with_context(|| format!("--project {}: no such directory", dir.display()))?;
            Ok((dir.clone(), builder(dir)?))
        })
        .collect::<anyhow::Result<_>>()?;
    let mut outside = builder(here)?;
    outside.without_project();
    Ok((projects, outside))
}

/// How many connections the kernel may hold for `serve` before it takes
/// them (capped by `net.core.somaxconn`): room for a flood of connections
/// that are taken and closed again, so that an agent's new connection is
/// not dropped and retried a second later.
const LISTEN_BACKLOG: u32 = 4096;

/// A TCP listener on `address` with [`LISTEN_BACKLOG`].
fn listen(address: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The shortest token accepted.
const MIN_TOKEN_LEN: usize = 16;

/// The shortest token accepted on an address other machines can reach.
const MIN_PUBLIC_TOKEN_LEN: usize = 32;

/// How many different characters a token must have on an address other
/// machines can reach.
const MIN_PUBLIC_TOKEN_CHARS: usize = 12;

/// The token requests must carry: required unless `--no-token`, which
/// only a loopback address or a Unix socket allows; at least
/// [`MIN_TOKEN_LEN`] characters, not one repeated; on any other address,
/// at least [`MIN_PUBLIC_TOKEN_LEN`], [`MIN_PUBLIC_TOKEN_CHARS`] of them
/// different (anyone on the network may guess it).
fn token(settings: &Settings) -> anyhow::Result<Option<String>> {
    let public = settings.socket.is_none() && !settings.listen.ip().is_loopback();
    let Some(var) = &settings.token_env else {
        if !settings.no_token {
            bail!(
                "serve needs a token: set one in a variable and name it, e.g. `WASM_HOOKS_TOKEN=$(openssl rand -hex 16) wasm-hooks serve --token-env WASM_HOOKS_TOKEN` (or --no-token, on loopback only)"
            );
        }
        if public {
            bail!(
                "refusing to listen on {} without a token: add --token-env VAR, or listen on a loopback address",
                settings.listen
            );
        }
        return Ok(None);
    };
    let token = std::env::var(var)
        .ok()
        .filter(|t| !t.is_empty())
        .with_context(|| format!("--token-env: the variable {var} is not set"))?;
    let length = token.chars().count();
    let one_char = token.chars().all(|c| token.starts_with(c));
    if length < MIN_TOKEN_LEN || one_char {
        bail!(
            "--token-env {var}: the token is too weak: use at least {MIN_TOKEN_LEN} random characters (`openssl rand -hex 16`)"
        );
    }
    let different = token
        .chars()
        .collect::<std::collections::HashSet<char>>()
        .len();
    if public && (length < MIN_PUBLIC_TOKEN_LEN || different < MIN_PUBLIC_TOKEN_CHARS) {
        bail!(
            "--token-env {var}: the token is too weak for {}, an address other machines can reach: use at least {MIN_PUBLIC_TOKEN_LEN} characters, at least {MIN_PUBLIC_TOKEN_CHARS} of them different (`openssl rand -hex 32`)",
            settings.listen
        );
    }
    Ok(Some(token))
}

/// Remove what is left of an earlier server's socket at `path`; anything
/// else there is refused, never deleted.
fn replace_old_socket(path: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path)
            .with_context(|| format!("removing the old socket {}", path.display())),
        Ok(_) => bail!(
            "--socket {}: something that is not a socket is there; refusing to replace it",
            path.display()
        ),
        Err(_) => Ok(()),
    }
}

/// The `Host` values a client may send to `address`: the address itself,
/// and for a loopback address `localhost` and the other loopback form, each
/// with the port; then the `--allow-host` names.
fn hosts_of(address: std::net::SocketAddr, allowed: &[String]) -> Vec<String> {
    let port = address.port();
    let mut hosts = vec![address.to_string()];
    if address.ip().is_loopback() {
        hosts.extend([
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ]);
    }
    for name in allowed {
        hosts.push(name.clone());
        if !name.contains(':') {
            hosts.push(format!("{name}:{port}"));
        }
    }
    hosts
}

/// The first line on stdout says where to connect (so a port 0 can be
/// found).
fn announce(address: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on {address}")?;
    out.flush()
}

/// Resolves on SIGINT or SIGTERM; the handlers are in place once this
/// returns, before anyone is told where to connect.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        tracing::info!("shutting down: finishing requests in flight");
    })
}

/// `server` as `settings` have it: its limits, reloads, access log,
/// shared state, traces (the exporter, made before the async runtime:
/// its blocking client has a runtime of its own) and the replay its page
/// shows.
fn configured(
    server: HookServer,
    settings: &Settings,
    outside: HookEngineBuilder,
    state: Option<Arc<dyn SessionStore>>,
) -> anyhow::Result<(
    HookServer,
    Option<opentelemetry_sdk::trace::SdkTracerProvider>,
)> {
    let mut server = server
        .max_body(settings.max_body_kb * 1024)
        .max_connections(settings.max_connections)
        .idle_timeout(std::time::Duration::from_millis(settings.idle_timeout_ms))
        .request_timeout(std::time::Duration::from_millis(
            settings.request_timeout_ms,
        ));
    if settings.outside_projects == Outside::Persons {
        server = server.outside_projects(outside);
    }
    if settings.reload_ms > 0 {
        server = server.live_reload(std::time::Duration::from_millis(settings.reload_ms));
    }
    if let Some(path) = &settings.access_log {
        server = server.access_log(access_log(path)?);
    }
    if let Some(state) = state {
        server = server.state_store(state);
    }
    // Made before the async runtime: the exporter's blocking client has
    // a runtime of its own.
    let spans = settings
        .otlp_endpoint
        .as_deref()
        .map(span_exporter)
        .transpose()?;
    if spans.is_some() {
        server = server.traces();
    }
    if let Some(path) = &settings.replay {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let report = serde_json::from_str(&text).with_context(|| {
            format!(
                "{}: not a replay report (`wasm-hooks replay --json`)",
                path.display()
            )
        })?;
        server = server.replay_report(report);
    }
    Ok((server, spans))
}
