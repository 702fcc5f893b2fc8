//! `wasm-hooks serve`: the engine behind an HTTP endpoint (loopback TCP by
//! default, or a Unix socket) for agents' HTTP hooks, until SIGINT or
//! SIGTERM.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use wasm_hooks::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT,
    HookEngineBuilder, HookServer,
};

use super::Exit;
use super::audit::AuditLogArg;
use super::hook_files::HookFileArgs;
use super::install::Agent;

/// Arguments of `wasm-hooks serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Listen on this address; only loopback addresses unless a token is
    /// required.
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:8787",
        conflicts_with = "socket"
    )]
    listen: SocketAddr,

    /// Listen on this Unix socket instead.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,

    /// The agent whose protocol to speak.
    #[arg(long, value_enum, default_value_t = Agent::Claude)]
    protocol: Agent,

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
    /// directory]: an event is answered by the project its `cwd` is in,
    /// and refused (403) when it is in none.
    #[arg(long = "project", value_name = "DIR", conflicts_with = "project_dir")]
    projects: Vec<PathBuf>,

    /// Hold at most this many connections at once; for the next, the one
    /// quiet the longest is closed (or, when all are answering, it waits).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,

    /// Give a client this long to send a request's head, and again its
    /// body (milliseconds).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_REQUEST_TIMEOUT.as_millis() as u64)]
    request_timeout_ms: u64,

    /// Close a connection silent this long (milliseconds).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_IDLE_TIMEOUT.as_millis() as u64)]
    idle_timeout_ms: u64,

    /// Refuse request bodies larger than this many KiB.
    #[arg(long, value_name = "KIB", default_value_t = DEFAULT_MAX_BODY / 1024)]
    max_body_kb: usize,

    /// Check plugin files, hook files, settings, trust and locks this
    /// often (milliseconds; changes are also watched, and SIGHUP rebuilds
    /// every engine) and swap in what changed; 0 turns reloading off.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    reload_ms: u64,

    /// Append a JSON line per answered event to this file (`-`: stderr):
    /// time, project, session, event, tool, decision, the deciding hook,
    /// status and duration; never an input, prompt or reason.
    #[arg(long, value_name = "FILE")]
    access_log: Option<PathBuf>,

    #[command(flatten)]
    hook_files: HookFileArgs,

    #[command(flatten)]
    audit: AuditLogArg,
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<Exit> {
    let projects = builders(&args)?;
    let mut server = HookServer::for_project_builders(projects, args.protocol.protocol())
        .max_body(args.max_body_kb * 1024)
        .max_connections(args.max_connections)
        .idle_timeout(std::time::Duration::from_millis(args.idle_timeout_ms))
        .request_timeout(std::time::Duration::from_millis(args.request_timeout_ms));
    if args.reload_ms > 0 {
        server = server.live_reload(std::time::Duration::from_millis(args.reload_ms));
    }
    if let Some(path) = &args.access_log {
        server = server.access_log(access_log(path)?);
    }
    match token(&args)? {
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
        match &args.socket {
            Some(path) => {
                replace_old_socket(path)?;
                let listener = tokio::net::UnixListener::bind(path)
                    .with_context(|| format!("binding {}", path.display()))?;
                announce(&format!("unix:{}", path.display()))?;
                server.serve_unix(listener, shutdown).await?;
            }
            None => {
                let listener =
                    listen(args.listen).with_context(|| format!("binding {}", args.listen))?;
                let address = listener.local_addr()?;
                announce(&format!("http://{address}"))?;
                let server = server.allowed_hosts(hosts_of(address, &args.allow_hosts));
                server.serve_tcp(listener, shutdown).await?;
            }
        }
        anyhow::Ok(())
    });
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    served?;
    Ok(Exit::GoOn)
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

/// Each served project's directory (resolved) and engine builder; the
/// projects share one wasm runtime, so a plugin is compiled once.
fn builders(args: &ServeArgs) -> anyhow::Result<Vec<(PathBuf, HookEngineBuilder)>> {
    let mut options = args.hook_files.runtime_options();
    options.pooling(true);
    if args.reload_ms > 0 {
        options.hot_reload(std::time::Duration::from_millis(args.reload_ms));
    }
    let runtime = options.build().context("starting the wasm runtime")?;
    let dirs = if args.projects.is_empty() {
        vec![match args.hook_files.project_dir() {
            Some(dir) => dir.to_owned(),
            None => std::env::current_dir().context("finding the current directory")?,
        }]
    } else {
        args.projects.clone()
    };
    dirs.iter()
        .map(|dir| {
            let dir = dir
                .canonicalize()
                .with_context(|| format!("--project {}: no such directory", dir.display()))?;
            let mut builder = args.hook_files.builder_in(&[], Some(dir.clone()))?;
            args.audit.apply(&mut builder);
            builder.runtime(runtime.clone()).lints(false);
            Ok((dir, builder))
        })
        .collect()
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
fn token(args: &ServeArgs) -> anyhow::Result<Option<String>> {
    let public = args.socket.is_none() && !args.listen.ip().is_loopback();
    let Some(var) = &args.token_env else {
        if !args.no_token {
            bail!(
                "serve needs a token: set one in a variable and name it, e.g. `WASM_HOOKS_TOKEN=$(openssl rand -hex 16) wasm-hooks serve --token-env WASM_HOOKS_TOKEN` (or --no-token, on loopback only)"
            );
        }
        if public {
            bail!(
                "refusing to listen on {} without a token: add --token-env VAR, or listen on a loopback address",
                args.listen
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
            args.listen
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
