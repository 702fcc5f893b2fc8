//! `wasm-hooks ui`: the live decisions page `serve` has, on 127.0.0.1 for
//! one person, fed from their audit log (what is in it, then each record
//! as it is appended) and showing their last replay.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use wasm_hooks::cli_support::AuditLine;
use wasm_hooks::observe::AuditNotes;
use wasm_hooks::observe::DecisionFeed;
use wasm_hooks::observe::PageState;

use super::Exit;
use super::audit::AuditLogArg;
use super::hook_files::HookFileArgs;

/// Arguments of `wasm-hooks ui`.
#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    /// Listen on this port of 127.0.0.1 [default: any free one].
    #[arg(long, default_value_t = 0)]
    port: u16,

    /// The replay report to show [default: the last `wasm-hooks replay`
    /// wrote].
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,

    #[command(flatten)]
    audit: AuditLogArg,

    #[command(flatten)]
    hook_files: HookFileArgs,
}

/// How often the audit log is read again for what was appended.
const TAIL_EVERY: Duration = Duration::from_millis(250);

pub(crate) fn run(args: UiArgs) -> anyhow::Result<Exit> {
    let mut builder = args.hook_files.builder(&[])?;
    args.audit.apply(&mut builder);
    let engine = builder.build()?;
    let Some(log) = engine.audit_log().map(|log| log.path().to_owned()) else {
        bail!("no audit log to show: give --audit-log FILE, or set `audit_log` in the settings");
    };
    let replay = match args.replay.or_else(super::replay::last_report) {
        Some(path) if path.is_file() => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("reading {}", path.display()))?,
            )
        }
        _ => None,
    };
    let token = new_token()?;
    let feed = Arc::new(DecisionFeed::new());
    let state = Arc::new(PageState {
        feed: Arc::clone(&feed),
        token: Some(token.clone()),
        replay,
        heartbeat: Duration::from_secs(15),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .context("listening on 127.0.0.1")?;
        let address = listener.local_addr()?;
        println!("wasm-hooks ui: http://{address}/ui?token={token}");
        println!("(decisions from {}; Ctrl-C to stop)", log.display());
        tokio::spawn(tail(log, feed));
        axum::serve(listener, wasm_hooks::observe::page_routes(state))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .context("serving the page")
    })?;
    Ok(Exit::GoOn)
}

/// A token for this run's page: 32 hex digits from the system's random
/// source.
fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("reading /dev/urandom for the page's token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Publish what the audit log holds, then what is appended to it, as it
/// is; a line not yet whole waits for its end.
async fn tail(log: PathBuf, feed: Arc<DecisionFeed>) {
    let mut offset = 0u64;
    let mut partial = Vec::new();
    let mut notes = AuditNotes::default();
    loop {
        match read_from(&log, &mut offset) {
            Ok(bytes) => {
                partial.extend_from_slice(&bytes);
                let whole = partial
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |at| at + 1);
                for line in partial[..whole].split(|&b| b == b'\n') {
                    if let Ok(record) = serde_json::from_slice::<AuditLine>(line) {
                        notes.add(&record);
                    }
                }
                partial.drain(..whole);
                // The last decision's hook results may be on their way,
                // unless the log has gone quiet.
                let ready = if bytes.is_empty() {
                    notes.take()
                } else {
                    notes.take_settled()
                };
                for note in ready {
                    feed.publish(note);
                }
            }
            Err(e) => tracing::warn!("reading {}: {e}", log.display()),
        }
        tokio::time::sleep(TAIL_EVERY).await;
    }
}

/// What `log` holds past `offset` (moved to its end); from the start when
/// the file is shorter than that (a new log).
fn read_from(log: &Path, offset: &mut u64) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(log)?;
    let len = file.metadata()?.len();
    if len < *offset {
        *offset = 0;
    }
    file.seek(SeekFrom::Start(*offset))?;
    let mut bytes = Vec::new();
    file.take(len - *offset).read_to_end(&mut bytes)?;
    *offset += bytes.len() as u64;
    Ok(bytes)
}
