//! The fleet soak (issue 33): three `serve` replicas sharing one real
//! Redis, 64 keep-alive clients sending 200,000 events round-robin; one
//! replica is killed a third of the way in and Redis restarted two thirds
//! of the way in (clients retry on the next replica). Every answer is
//! checked: a dangerous command is never let through; each session's
//! rate-limited calls let through are exactly those Redis counted (no
//! call lost, none counted twice, never more than the limit); no request
//! fails for good; the replicas' memory stays flat.
//!
//! Long: run by `scripts/soak-fleet` (`WASM_HOOKS_SOAK_EXE` names the
//! `wasm-hooks` to serve with, the dist build there), not by
//! `scripts/test`.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

const EVENTS: usize = 200_000;
const CLIENTS: usize = 64;
const SESSIONS: usize = 2_000;
/// Rate-limited (`Read`) calls let through per session.
const LIMIT: usize = 20;
/// Resident memory a surviving replica may gain between a tenth of the
/// way in and the end.
const GROWTH_BOUND_MB: u64 = 64;

/// What one event was, and what it got.
struct Answered {
    session: usize,
    id: String,
    dangerous: bool,
    allowed: bool,
}

#[test]
#[ignore = "a long soak: scripts/soak-fleet"]
fn three_replicas_one_redis_lose_no_decision_when_a_replica_dies_and_redis_restarts() {
    let mut redis = support::redis::Redis::start_persistent();
    let home = tempfile::tempdir().unwrap();
    let hooks = home.path().join("config/wasm-hooks/hooks.json");
    std::fs::create_dir_all(hooks.parent().unwrap()).unwrap();
    std::fs::write(
        &hooks,
        json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "wasm", "on_failure": "block",
                "plugin": support::plugin("deny-dangerous-commands")}]},
            {"matcher": "Read", "hooks": [{"type": "wasm", "on_failure": "block",
                "plugin": support::plugin("rate-limit-tools"),
                "config": {"max_calls": LIMIT, "per_seconds": 3600, "tools": ["Read"]}}]}
        ]}})
        .to_string(),
    )
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    let exe = std::env::var_os("WASM_HOOKS_SOAK_EXE")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_wasm-hooks").into());
    let replica = || {
        let mut command = Command::new(&exe);
        command
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .args(["serve", "--no-token", "--listen", "127.0.0.1:0", "--state"])
            .arg(redis.url())
            .arg("--project")
            .arg(project.path());
        support::Served::start(command)
    };
    let mut replicas = [replica(), replica(), replica()];
    let urls: Vec<String> = replicas
        .iter()
        .map(|r| format!("{}/hook", r.address))
        .collect();
    let pids: Vec<u32> = replicas.iter().map(|r| r.child.id()).collect();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let retried = Arc::new(AtomicUsize::new(0));
    let urls = Arc::new(urls);
    let cwd = project.path().to_owned();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (next, retried, urls, cwd) =
                (next.clone(), retried.clone(), urls.clone(), cwd.clone());
            runtime.spawn(async move {
                let client = reqwest::Client::new();
                let mut answered = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= EVENTS {
                        return answered;
                    }
                    answered.push(send(&client, &urls, i, &cwd, &retried).await);
                }
            })
        })
        .collect();

    // A third of the way in, a replica dies; two thirds in, Redis
    // restarts. Memory is sampled a tenth of the way in and at the end.
    let wait_for = |fraction: usize| {
        while next.load(Ordering::Relaxed) < EVENTS * fraction / 30 {
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for(3);
    let early = [rss_mib(pids[1]), rss_mib(pids[2])];
    wait_for(10);
    replicas[0].child.kill().unwrap();
    replicas[0].child.wait().unwrap();
    wait_for(20);
    redis.restart_gracefully();

    let answered: Vec<Answered> = runtime.block_on(async {
        let mut all = Vec::new();
        for client in clients {
            all.extend(client.await.unwrap());
        }
        all
    });
    let late = [rss_mib(pids[1]), rss_mib(pids[2])];
    assert_eq!(answered.len(), EVENTS);

    // No dangerous command through.
    let through: Vec<&Answered> = answered
        .iter()
        .filter(|a| a.dangerous && a.allowed)
        .collect();
    assert!(
        through.is_empty(),
        "{} dangerous commands let through",
        through.len()
    );

    // Each session's calls let through are exactly those Redis counted.
    let mut allowed: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for a in answered
        .iter()
        .filter(|a| !a.dangerous && a.session != usize::MAX)
    {
        if a.allowed {
            allowed.entry(a.session).or_default().insert(a.id.clone());
        }
    }
    let counted = counted_calls(&redis);
    let mut wrong = Vec::new();
    for session in 0..SESSIONS {
        let let_through = allowed.remove(&session).unwrap_or_default();
        let in_redis = counted
            .get(&session.to_string())
            .cloned()
            .unwrap_or_default();
        if let_through != in_redis || let_through.len() > LIMIT {
            wrong.push(format!(
                "session {session}: {} let through, {} counted",
                let_through.len(),
                in_redis.len()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} sessions wrong: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
    let limited: BTreeSet<usize> = answered
        .iter()
        .filter(|a| a.session != usize::MAX)
        .map(|a| a.session)
        .collect();
    let full = counted.values().filter(|ids| ids.len() == LIMIT).count();
    assert!(
        full > limited.len() * 9 / 10,
        "most sessions reach their limit: {full} of {}",
        limited.len()
    );
    for (before, after) in early.iter().zip(late) {
        assert!(
            after <= before + GROWTH_BOUND_MB,
            "replica memory {before} MiB -> {after} MiB"
        );
    }
    eprintln!(
        "fleet soak: {EVENTS} events, {CLIENTS} clients, 3 replicas (one killed), Redis restarted; \
         {} retried; {full} of {} sessions at their limit; {} s; replica RSS {early:?} -> {late:?} MiB",
        retried.load(Ordering::Relaxed),
        limited.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Event `i`: even ones a Bash command (every fifth of them dangerous),
/// odd ones a rate-limited Read; sent to replica `i % 3`, and on a failure
/// to the next (for as long as it takes: a guard's answer is never given
/// up on).
async fn send(
    client: &reqwest::Client,
    urls: &[String],
    i: usize,
    cwd: &std::path::Path,
    retried: &AtomicUsize,
) -> Answered {
    let session = i % SESSIONS;
    let id = format!("toolu_{i}");
    let dangerous = i.is_multiple_of(10);
    let (tool, input) = if i.is_multiple_of(2) {
        let command = if dangerous { "rm -rf /" } else { "ls -la" };
        ("Bash", json!({"command": command}))
    } else {
        ("Read", json!({"file_path": "README.md"}))
    };
    let event = json!({"session_id": format!("s{session}"), "cwd": cwd,
        "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
        "tool_use_id": id});
    for attempt in 0.. {
        let url = &urls[(i + attempt) % urls.len()];
        let answer = client.post(url).json(&event).send().await;
        let body = match answer {
            Ok(response) if response.status().is_success() => response.json::<Value>().await.ok(),
            _ => None,
        };
        if let Some(body) = body {
            let allowed = body["hookSpecificOutput"]["permissionDecision"] != "deny";
            return Answered {
                session: if tool == "Read" { session } else { usize::MAX },
                id,
                dangerous,
                allowed,
            };
        }
        retried.fetch_add(1, Ordering::Relaxed);
        assert!(attempt < 1_000, "event {i} never answered");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    unreachable!()
}

/// The ids of the Read calls Redis holds for each session (by number).
fn counted_calls(redis: &support::redis::Redis) -> BTreeMap<String, BTreeSet<String>> {
    let port = redis.port.to_string();
    let keys = Command::new("redis-cli")
        .args(["-p", &port, "--scan", "--pattern", "wasm-hooks:kv:*"])
        .output()
        .unwrap();
    let mut counted = BTreeMap::new();
    for key in String::from_utf8_lossy(&keys.stdout).lines() {
        let session = key.rsplit(':').next().unwrap().trim_start_matches('s');
        let value = Command::new("redis-cli")
            .args(["-p", &port, "--raw", "HGET", key, "calls:Read"])
            .output()
            .unwrap();
        let calls: Vec<Value> = serde_json::from_slice(&value.stdout).unwrap_or_default();
        let ids = calls
            .iter()
            .filter_map(|call| call["id"].as_str().map(str::to_owned))
            .collect();
        counted.insert(session.to_owned(), ids);
    }
    counted
}

/// Resident memory of process `pid`, in MiB.
fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap()
        / 1024
}
