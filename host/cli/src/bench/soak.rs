//! `wasm-hooks bench --soak N`: `serve` under a long, steady load, N events
//! from many concurrent keep-alive clients (loopback only), every answer
//! checked against the first, and serve's resident memory sampled along
//! the way: does it stay up, answer right, and keep its size?

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::serve::{listening_url, post, rss_mib, start_serve};
use super::stats::Summary;

/// What the clients share.
struct Load {
    url: String,
    body: String,
    /// The answer every request must get.
    expected: Vec<u8>,
    events: usize,
    next: AtomicUsize,
    errors: AtomicUsize,
    first_error: Mutex<Option<String>>,
}

/// Soak `serve` (on `file`, for `project`) with `events` requests of
/// `body` from `clients` concurrent clients; one summary of the request
/// times, named with the errors and the memory before and after.
pub(super) fn soak(
    exe: &Path,
    (file, project): (&Path, &Path),
    cache: &Path,
    (events, clients): (usize, usize),
    body: &str,
) -> anyhow::Result<Summary> {
    let mut child = start_serve(exe, (file, project), cache)?;
    let result = (|| {
        let url = listening_url(&mut child)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let expected = runtime.block_on(post(&reqwest::Client::new(), &url, body))?;
        let load = Arc::new(Load {
            url,
            body: body.to_owned(),
            expected,
            events,
            next: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            first_error: Mutex::default(),
        });
        let pid = child.id();
        let (samples, memory) = runtime.block_on(async {
            let sampler = tokio::spawn(sample_memory(pid, Arc::clone(&load)));
            let tasks: Vec<_> = (0..clients)
                .map(|_| tokio::spawn(client(Arc::clone(&load))))
                .collect();
            let mut samples = Vec::with_capacity(events);
            for task in tasks {
                samples.extend(task.await?);
            }
            let memory = sampler.await.unwrap_or_default();
            anyhow::Ok((samples, memory))
        })?;
        let errors = load.errors.load(Ordering::Relaxed);
        let first_error = load
            .first_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let warm = memory.warm.unwrap_or(memory.start);
        let end = rss_mib(pid);
        eprintln!(
            "soak: {events} events, {errors} errors{}; serve's RSS {} MiB at the start, {warm} MiB warm (a tenth in), {end} MiB at the end, {} MiB at most",
            first_error
                .map(|e| format!(" (the first: {e})"))
                .unwrap_or_default(),
            memory.start,
            memory.most.max(end),
        );
        Ok(Summary::of(
            format!("serve soak: {clients} clients, {errors} errors, RSS {warm} → {end} MiB"),
            samples,
        ))
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// One client: a keep-alive connection of its own, posting until the
/// events run out; its request times.
async fn client(load: Arc<Load>) -> Vec<Duration> {
    let http = reqwest::Client::new();
    let mut samples = Vec::new();
    while load.next.fetch_add(1, Ordering::Relaxed) < load.events {
        let started = Instant::now();
        let answered = post(&http, &load.url, &load.body).await;
        samples.push(started.elapsed());
        let wrong = match answered {
            Ok(answer) if answer == load.expected => continue,
            Ok(answer) => format!("another answer: {}", String::from_utf8_lossy(&answer)),
            Err(e) => format!("{e:#}"),
        };
        load.errors.fetch_add(1, Ordering::Relaxed);
        load.first_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(wrong);
    }
    samples
}

/// Serve's resident memory over the run.
#[derive(Debug, Default)]
struct Memory {
    start: u64,
    /// Once a tenth of the events are answered.
    warm: Option<u64>,
    most: u64,
}

/// Sample `pid`'s memory every half second until the events run out.
async fn sample_memory(pid: u32, load: Arc<Load>) -> Memory {
    let mut memory = Memory {
        start: rss_mib(pid),
        ..Memory::default()
    };
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = rss_mib(pid);
        memory.most = memory.most.max(now);
        if memory.warm.is_none() && load.next.load(Ordering::Relaxed) >= load.events / 10 {
            memory.warm = Some(now);
        }
        if load.next.load(Ordering::Relaxed) >= load.events {
            return memory;
        }
    }
}
