//! The `serve` cases: `wasm-hooks serve` as a child process, a well-formed
//! client's round trips over one keep-alive connection, first on a quiet
//! server, then while it is abused (bounded, loopback only): connections
//! that open and say nothing (reopened as soon as the server closes them),
//! clients that send a request head a byte at a time, and floods of events
//! each from a new session.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::harness::measure;
use super::stats::Summary;

/// Connections that open and stay silent.
const IDLE: usize = 1000;
/// Clients that never finish a request head.
const SLOW: usize = 50;
/// Clients sending events from new sessions as fast as they are answered.
const FLOODS: usize = 4;

/// A token, as a real setup has: its check is part of the round trip.
pub(super) const TOKEN: &str = "bench-token-0123456789abcdef";

/// `wasm-hooks serve` on a hook file for a project, and `n` round trips on
/// it quiet, then `n / 5` while it is abused, then `n / 20` more each on a
/// new connection.
pub(super) fn round_trips(
    rt: &tokio::runtime::Runtime,
    exe: &Path,
    (file, project): (&Path, &Path),
    cache: &Path,
    n: usize,
    body: &str,
) -> anyhow::Result<Vec<Summary>> {
    let mut child = start_serve(exe, (file, project), cache)?;
    let result = (|| {
        let url = listening_url(&mut child)?;
        let client = reqwest::Client::new();
        let post = || answered(&client, &url, body.to_owned());
        let quiet = measure(rt, "serve: HTTP round trip, keep-alive", n, post).run_elsewhere();
        let rss_before = rss_mib(child.id());
        let counts = Arc::new(Counts::default());
        let abusers = abuse(&url, body, &counts)?;
        // Let every abuser take its place first (the client's runtime
        // running meanwhile, as an agent's would).
        rt.block_on(async { tokio::time::sleep(Duration::from_secs(1)).await });
        let name =
            format!("serve under abuse: {IDLE} idle + {SLOW} slow conns, {FLOODS} session floods");
        let abused = measure(rt, &name, n / 5, post).run_elsewhere();
        let fresh = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()?;
        let name = "serve under abuse: a new connection per request";
        let connecting =
            measure(rt, name, n / 20, || answered(&fresh, &url, body.to_owned())).run_elsewhere();
        abusers.shutdown_background();
        eprintln!(
            "abuse, while measured and before: {} flood events answered, {} silent connections closed by the server, {} slow heads cut off; serve's RSS {} MiB before, {} MiB after",
            counts.flood_answers.load(Ordering::Relaxed),
            counts.silent_closed.load(Ordering::Relaxed),
            counts.slow_cut.load(Ordering::Relaxed),
            rss_before,
            rss_mib(child.id()),
        );
        Ok(vec![quiet, abused, connecting])
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// `wasm-hooks serve` on a hook file for a project, with a token, on a
/// free loopback port.
pub(super) fn start_serve(
    exe: &Path,
    (file, project): (&Path, &Path),
    cache: &Path,
) -> anyhow::Result<Child> {
    Command::new(exe)
        .args(["serve", "--listen", "127.0.0.1:0", "--reload-ms", "0"])
        .args(["--token-env", "WASM_HOOKS_BENCH_TOKEN", "-c"])
        .env("WASM_HOOKS_BENCH_TOKEN", TOKEN)
        .arg(file)
        .arg("--project")
        .arg(project)
        .arg("--cache-dir")
        .arg(cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting wasm-hooks serve")
}

/// One well-formed request, answered with success.
async fn answered(client: &reqwest::Client, url: &str, body: String) {
    post(client, url, &body).await.expect("serve answers");
}

/// One request with the token; its answer's body when it succeeds.
pub(super) async fn post(http: &reqwest::Client, url: &str, body: &str) -> anyhow::Result<Vec<u8>> {
    let response = http
        .post(format!("{url}/hook"))
        .header("content-type", "application/json")
        .bearer_auth(TOKEN)
        .body(body.to_owned())
        .send()
        .await
        .context("sending")?;
    if !response.status().is_success() {
        anyhow::bail!("status {}", response.status());
    }
    Ok(response
        .bytes()
        .await
        .context("reading the answer")?
        .to_vec())
}

/// What the abusers got from the server.
#[derive(Default)]
struct Counts {
    flood_answers: AtomicUsize,
    silent_closed: AtomicUsize,
    slow_cut: AtomicUsize,
}

/// The abusers, on a runtime of their own (dropping it stops them).
fn abuse(url: &str, body: &str, counts: &Arc<Counts>) -> anyhow::Result<tokio::runtime::Runtime> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let address = url.strip_prefix("http://").unwrap_or(url).to_owned();
    for _ in 0..IDLE {
        runtime.spawn(silent(address.clone(), Arc::clone(counts)));
    }
    for _ in 0..SLOW {
        runtime.spawn(slow_head(address.clone(), Arc::clone(counts)));
    }
    let event: Value = serde_json::from_str(body)?;
    for flood in 0..FLOODS {
        runtime.spawn(session_flood(
            url.to_owned(),
            event.clone(),
            flood,
            Arc::clone(counts),
        ));
    }
    Ok(runtime)
}

/// Open a connection, say nothing, and open another once it is closed.
async fn silent(address: String, counts: Arc<Counts>) {
    loop {
        let Ok(mut stream) = tokio::net::TcpStream::connect(&address).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let mut byte = [0u8; 1];
        let _ = stream.read(&mut byte).await;
        counts.silent_closed.fetch_add(1, Ordering::Relaxed);
    }
}

/// Send a request head that never ends, a line every 100 ms; start again
/// once cut off.
async fn slow_head(address: String, counts: Arc<Counts>) {
    loop {
        let Ok(mut stream) = tokio::net::TcpStream::connect(&address).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let head = format!("POST /hook HTTP/1.1\r\nHost: {address}\r\n");
        let mut sent = stream.write_all(head.as_bytes()).await;
        while sent.is_ok() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            sent = stream.write_all(b"X-Slow: yes\r\n").await;
        }
        counts.slow_cut.fetch_add(1, Ordering::Relaxed);
    }
}

/// Post `event` again and again, each time from a new session.
async fn session_flood(url: String, mut event: Value, flood: usize, counts: Arc<Counts>) {
    let client = reqwest::Client::new();
    for n in 0.. {
        event["session_id"] = json!(format!("flood-{flood}-{n}"));
        let sent = client
            .post(format!("{url}/hook"))
            .header("content-type", "application/json")
            .bearer_auth(TOKEN)
            .body(event.to_string())
            .send()
            .await;
        if sent.is_ok_and(|r| r.status().is_success()) {
            counts.flood_answers.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The resident memory of process `pid`, in MiB (0 when unknown).
pub(super) fn rss_mib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib / 1024)
}

/// The URL `serve` announces on its first stdout line.
pub(super) fn listening_url(child: &mut Child) -> anyhow::Result<String> {
    let stdout = child.stdout.take().context("serve's stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    line.trim()
        .strip_prefix("listening on ")
        .map(str::to_owned)
        .with_context(|| format!("serve said {line:?}"))
}
