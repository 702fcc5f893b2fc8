//! `serve` as a fleet runs it (#33): engines built once and built again
//! when their files change (watched, or on SIGHUP), the last good engine
//! kept when a change does not load, one broken project beside working
//! ones, `/ready`, and `/metrics` checked by Prometheus's own `promtool`.

use crate::support;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A person's home, whose user-layer hook file `serve` reads.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let home = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(home.hooks().parent().unwrap()).unwrap();
        home
    }

    /// The user's hook file.
    fn hooks(&self) -> PathBuf {
        self.dir.path().join("config/wasm-hooks/hooks.json")
    }

    /// Write the user's hook file: one inline rule denying commands that
    /// contain `word`.
    fn deny(&self, word: &str) {
        let hook = json!({"type": "inline", "rules": [{"field": "tool_input.command",
            "operator": "contains", "value": word, "action": "deny", "reason": format!("no {word}")}]});
        write_whole(
            &self.hooks(),
            &json!({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}).to_string(),
        );
    }

    /// Write the user's hook file: the `rate-limit-tools` example, at most
    /// `max` Bash calls in ten minutes per session (counted in its `kv`).
    fn rate_limit_bash(&self, max: u32) {
        write_whole(
            &self.hooks(),
            &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "wasm",
                "plugin": support::plugin("rate-limit-tools"), "on_failure": "block",
                "config": {"max_calls": max, "per_seconds": 600, "tools": ["Bash"]}}]}]}})
            .to_string(),
        );
    }

    /// `wasm-hooks serve` of `projects`, as this person.
    fn serve(&self, projects: &[&Path]) -> support::Served {
        self.serve_with(projects, &[])
    }

    /// The same, with more arguments.
    fn serve_with(&self, projects: &[&Path], more: &[&str]) -> support::Served {
        let mut command = self.command();
        command.args([
            "serve",
            "--no-token",
            "--listen",
            "127.0.0.1:0",
            "--reload-ms",
            "200",
        ]);
        for project in projects {
            command.arg("--project").arg(project);
        }
        command.args(more);
        support::Served::start(command)
    }

    /// `wasm-hooks trust --yes` of `dir` as this person, under the
    /// organisation's layer `managed` if given; it must succeed.
    fn trust(&self, dir: &Path, managed: Option<&Path>) {
        let mut command = self.command();
        if let Some(managed) = managed {
            command.env("WASM_HOOKS_MANAGED_DIR", managed);
        }
        let out = command
            .current_dir(dir)
            .args(["trust", "--yes"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `wasm-hooks` as this person.
    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
        command
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"));
        command
    }
}

/// A server of one project, the person's hook file denying `rm -rf`.
fn guarded() -> (Home, tempfile::TempDir, support::Served) {
    let home = Home::new();
    home.deny("rm -rf");
    let project = tempfile::tempdir().unwrap();
    let served = home.serve(&[project.path()]);
    (home, project, served)
}

/// Replace `path` whole (as editors do), so no reader sees half of it.
fn write_whole(path: &Path, text: &str) {
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, text).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

/// `curl` of `path` on `served`, POSTing `body` if given: the status and
/// the body.
fn request(served: &support::Served, path: &str, body: Option<&Value>) -> (u16, String) {
    let mut curl = Command::new("curl");
    curl.args(["-s", "-w", "\n%{http_code}"])
        .arg(format!("{}{path}", served.address));
    if body.is_some() {
        curl.args([
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "--data-binary",
            "@-",
        ]);
    }
    let mut child = curl
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = body.map(Value::to_string).unwrap_or_default();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap();
    (status.parse().unwrap(), body.to_owned())
}

/// The decision the server gives a Bash `command` run in `dir`.
fn decision(served: &support::Served, dir: &Path, command: &str) -> String {
    decision_and_reason(served, dir, command).0
}

/// The decision, and its reason, the server gives a Bash `command` run in
/// `dir`.
fn decision_and_reason(served: &support::Served, dir: &Path, command: &str) -> (String, String) {
    let event = json!({"session_id": "s", "cwd": dir, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}});
    let (status, body) = request(served, "/hook", Some(&event));
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let output = &answer["hookSpecificOutput"];
    let word = output["permissionDecision"].as_str().unwrap_or("allow");
    let reason = output["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    (word.to_owned(), reason.to_owned())
}

/// Wait (up to a generous bound, so a slow machine does not fail the
/// test) until `done`; whether it came.
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn an_edit_to_a_hook_file_changes_the_answer_of_a_running_serve_without_a_restart() {
    let (home, project, served) = guarded();
    assert_eq!(decision(&served, project.path(), "rm -rf /"), "deny");
    assert_eq!(decision(&served, project.path(), "curl x"), "allow");
    home.deny("curl");
    assert!(
        eventually(|| decision(&served, project.path(), "curl x") == "deny"),
        "the edit took effect"
    );
    assert_eq!(decision(&served, project.path(), "rm -rf /"), "allow");
    let (_, metrics) = request(&served, "/metrics", None);
    assert!(
        metrics.contains(r#"wasm_hooks_reloads_total{project=""#)
            && metrics.contains(r#"result="ok"} "#),
        "{metrics}"
    );
}

#[test]
fn a_broken_edit_keeps_the_last_good_answer_and_shows_in_ready_and_metrics() {
    let (home, project, served) = guarded();
    assert_eq!(request(&served, "/ready", None).0, 200);
    write_whole(&home.hooks(), "{\"hooks\": {\"PreToolUse\": [ garbage");
    assert!(
        eventually(|| request(&served, "/ready", None).0 == 503),
        "the failed reload shows in /ready"
    );
    let (_, ready) = request(&served, "/ready", None);
    assert!(ready.contains("hooks.json"), "{ready}");
    let (status, health) = request(&served, "/health", None);
    assert_eq!(status, 200, "still alive");
    // The project's engine, and the one for events from outside it (the
    // person's layer is broken for both).
    assert!(health.contains("\"not_ready\":2"), "{health}");
    assert_eq!(
        decision(&served, project.path(), "rm -rf /"),
        "deny",
        "the last good engine answers"
    );
    let (_, metrics) = request(&served, "/metrics", None);
    assert!(metrics.contains(r#"result="failed"} 1"#), "{metrics}");
    assert!(
        metrics.contains("wasm_hooks_project_ready{project="),
        "{metrics}"
    );
    // Mended, it is ready again.
    home.deny("rm -rf");
    assert!(eventually(|| request(&served, "/ready", None).0 == 200));
}

#[test]
fn one_broken_project_does_not_stop_the_others_and_is_not_ready() {
    let home = Home::new();
    let broken = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(broken.path().join(".wasm-hooks")).unwrap();
    std::fs::write(broken.path().join(".wasm-hooks/hooks.json"), "{ not json").unwrap();
    let fine = tempfile::tempdir().unwrap();
    home.deny("rm -rf");
    let served = home.serve(&[broken.path(), fine.path()]);
    assert_eq!(decision(&served, fine.path(), "rm -rf /"), "deny");
    assert_eq!(decision(&served, fine.path(), "ls"), "allow");
    // The broken project's file is left out; the person's own guard
    // still answers its events.
    assert_eq!(decision(&served, broken.path(), "rm -rf /"), "deny");
    let (status, ready) = request(&served, "/ready", None);
    assert_eq!(status, 503);
    assert!(
        ready.contains(&broken.path().canonicalize().unwrap().display().to_string()),
        "{ready}"
    );
}

#[test]
fn sighup_builds_every_engine_again() {
    let (_home, project, served) = guarded();
    let reloads = || {
        let (_, metrics) = request(&served, "/metrics", None);
        metrics
            .lines()
            .find(|l| l.starts_with("wasm_hooks_reloads_total{") && l.contains(r#"result="ok""#))
            .and_then(|l| l.rsplit(' ').next())
            .map_or(0, |n| n.parse::<u64>().unwrap())
    };
    assert_eq!(reloads(), 0);
    // SAFETY-free: a signal to the child this test started.
    let status = Command::new("kill")
        .args(["-HUP", &served.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(eventually(|| reloads() == 1), "one reload for one SIGHUP");
    assert_eq!(decision(&served, project.path(), "rm -rf /"), "deny");
}

#[test]
fn promtool_accepts_the_metrics_after_every_kind_of_answer() {
    let (_home, project, served) = guarded();
    decision(&served, project.path(), "rm -rf /");
    decision(&served, project.path(), "ls");
    request(&served, "/hook", Some(&json!({"not": "an event"})));
    let (status, metrics) = request(&served, "/metrics", None);
    assert_eq!(status, 200);
    for expected in [
        r#"wasm_hooks_hook_decisions_total{event="PreToolUse",hook="#,
        r#"verdict="deny",enforcement="enforce"} 1"#,
        r#"wasm_hooks_events_total{event="PreToolUse",verdict="proceed"} 1"#,
        r#"wasm_hooks_hook_duration_seconds_count{kind="inline"} 2"#,
        r#"wasm_hooks_requests_total{status="200"} 3"#,
        "wasm_hooks_refusals_total 1",
        "wasm_hooks_requests_in_flight 0",
    ] {
        assert!(metrics.contains(expected), "{expected} in:\n{metrics}");
    }
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is installed (scripts/test installs the prometheus package)");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(metrics.as_bytes())
        .unwrap();
    let out = promtool.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_access_log_has_a_line_per_event_and_no_secret_of_it() {
    let home = Home::new();
    home.deny("rm -rf");
    let project = tempfile::tempdir().unwrap();
    let log = home.dir.path().join("access.jsonl");
    let served = home.serve_with(&[project.path()], &["--access-log", log.to_str().unwrap()]);
    decision(&served, project.path(), "rm -rf / # token=hunter2-secret");
    decision(&served, project.path(), "ls");
    request(&served, "/hook", Some(&json!({"not": "an event"})));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0]["decision"], "deny");
    assert_eq!(lines[0]["decided_by"], "inline");
    assert_eq!(lines[0]["event"], "PreToolUse");
    assert_eq!(lines[0]["tool"], "Bash");
    assert_eq!(lines[0]["session"], "s");
    assert!(
        lines[0]["client"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:"),
        "who asked: {text}"
    );
    assert_eq!(lines[0]["status"], 200);
    assert!(lines[0]["project"].as_str().unwrap().starts_with('/'));
    assert_eq!(lines[1]["decision"], "proceed");
    assert_eq!(
        (lines[2]["status"].as_u64(), lines[2]["decision"].as_str()),
        (Some(200), Some("refused"))
    );
    assert!(
        !text.contains("hunter2"),
        "no input reaches the log: {text}"
    );
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(
        std::fs::metadata(&log).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

/// A hook file rewritten again and again while events arrive: every
/// answer is one the file gave at some moment (never a half-read file),
/// and the server ends on the last version.
#[test]
fn a_flood_of_rewrites_never_gets_a_wrong_answer_and_ends_on_the_last_file() {
    let home = Home::new();
    home.deny("alpha");
    let project = tempfile::tempdir().unwrap();
    let served = home.serve(&[project.path()]);
    let writer = {
        let hooks = home.hooks();
        std::thread::spawn(move || {
            for i in 0..400 {
                let word = if i % 2 == 0 { "beta" } else { "alpha" };
                let hook = json!({"type": "inline", "rules": [{"field": "tool_input.command",
                    "operator": "contains", "value": word, "action": "deny", "reason": format!("no {word}")}]});
                write_whole(
                    &hooks,
                    &json!({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}).to_string(),
                );
            }
        })
    };
    let mut answers = 0;
    while !writer.is_finished() {
        // No version, nor a half-written file (which does not load: the
        // last good engine answers), denies this word.
        assert_eq!(decision(&served, project.path(), "gamma"), "allow");
        answers += 1;
    }
    writer.join().unwrap();
    assert!(answers > 0);
    // The last version written denies "alpha" (i = 399 is odd).
    assert!(eventually(|| decision(&served, project.path(), "alpha")
        == "deny"
        && decision(&served, project.path(), "beta") == "allow"));
    assert_eq!(request(&served, "/ready", None).0, 200);
}

/// Each kind of input an engine is built from, changed under a running
/// `serve`: the next answers follow it (hook files are the first test's).
#[test]
fn every_kind_of_input_an_engine_is_built_from_is_followed() {
    let home = Home::new();
    home.deny("rm -rf");
    // A project whose command hook (not sandboxed) runs only when trusted.
    let project = support::project_blocking_make();
    let managed = support::managed_dir();
    let mut command = home.command();
    command
        .env("WASM_HOOKS_MANAGED_DIR", managed.path())
        .args([
            "serve",
            "--no-token",
            "--listen",
            "127.0.0.1:0",
            "--reload-ms",
            "200",
            "--project",
        ])
        .arg(project.path());
    let served = support::Served::start(command);
    let dir = project.path();
    assert_eq!(
        decision(&served, dir, "make all"),
        "allow",
        "untrusted: its command hook is left out"
    );

    // The person's settings: trust every project.
    std::fs::write(
        home.dir.path().join("config/wasm-hooks/config.yaml"),
        "untrusted_projects: trust_all\n",
    )
    .unwrap();
    assert!(
        eventually(|| decision(&served, dir, "make all") == "deny"),
        "settings followed"
    );
    std::fs::remove_file(home.dir.path().join("config/wasm-hooks/config.yaml")).unwrap();
    assert!(
        eventually(|| decision(&served, dir, "make all") == "allow"),
        "settings removed"
    );

    // The trust store: trusting the project.
    home.trust(dir, Some(managed.path()));
    assert!(
        eventually(|| decision(&served, dir, "make all") == "deny"),
        "trust followed"
    );

    // The organisation's layer: a managed hook file appears.
    assert_eq!(decision(&served, dir, "shutdown now"), "allow");
    let hook = json!({"type": "inline", "rules": [{"field": "tool_input.command",
        "operator": "contains", "value": "shutdown", "action": "deny", "reason": "not here"}]});
    write_whole(
        &managed.path().join("hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}).to_string(),
    );
    assert!(
        eventually(|| decision(&served, dir, "shutdown now") == "deny"),
        "managed layer followed"
    );
}

/// A plugin file replaced under a running `serve` is an input like any
/// other: the next engine runs the new bytes (no restart, and no second
/// reloader of the runtime's own).
#[test]
fn a_plugin_replaced_on_disk_is_followed() {
    let home = Home::new();
    let plugin = home.dir.path().join("guard.wasm");
    std::fs::copy(support::plugin("deny-dangerous-commands"), &plugin).unwrap();
    write_whole(
        &home.hooks(),
        // Blocking on failure: only the new plugin answering gives "allow".
        &json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "wasm", "plugin": plugin, "on_failure": "block"}]}]}})
        .to_string(),
    );
    let project = tempfile::tempdir().unwrap();
    let served = home.serve(&[project.path()]);
    let dir = project.path();
    assert_eq!(decision(&served, dir, "rm -rf /"), "deny");
    let replacement = home.dir.path().join("guard.wasm.new");
    std::fs::copy(support::plugin("hostile-remember"), &replacement).unwrap();
    std::fs::rename(&replacement, &plugin).unwrap();
    assert!(
        eventually(|| decision(&served, dir, "rm -rf /") == "allow"),
        "the new plugin answers"
    );
}

/// `instance: reuse` in `serve`: one warm instance answers event after
/// event (the plugin counts its instance's calls), where the default gives
/// each a fresh one.
#[test]
fn serve_keeps_a_warm_instance_for_a_hook_that_asks_for_reuse() {
    let home = Home::new();
    let remember = support::plugin("hostile-remember");
    write_whole(
        &home.hooks(),
        &json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "wasm", "plugin": remember, "instance": "reuse"}]},
            {"matcher": "Read", "hooks": [{"type": "wasm", "plugin": remember}]}]}})
        .to_string(),
    );
    let project = tempfile::tempdir().unwrap();
    let served = home.serve(&[project.path()]);
    let context = |tool: &str| {
        let event = json!({"session_id": "s", "cwd": project.path(), "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": {"command": "ls", "file_path": "x"}});
        let (status, body) = request(&served, "/hook", Some(&event));
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        answer["hookSpecificOutput"]["additionalContext"].clone()
    };
    for n in 1..=3 {
        assert_eq!(context("Bash"), format!("call {n}"), "the warm instance");
        assert_eq!(context("Read"), "call 1", "a fresh one");
    }
}

/// A fleet configures `serve` from one file; a flag wins over it, and a
/// key it does not know is an error naming the file and line.
#[test]
fn serve_reads_its_settings_from_a_file_and_flags_win() {
    let home = Home::new();
    home.deny("rm -rf");
    let fleet = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(fleet.path().join("project")).unwrap();
    let config = fleet.path().join("serve.yaml");
    std::fs::write(
        &config,
        "listen: 127.0.0.1:1\nno_token: true\nprojects: [project]\nreload_ms: 100\naccess_log: access.jsonl\n",
    )
    .unwrap();
    let mut command = home.command();
    command.args(["serve", "--serve-config", config.to_str().unwrap()]);
    command.args(["--listen", "127.0.0.1:0"]);
    let served = support::Served::start(command);
    let project = fleet.path().join("project");
    assert_eq!(decision(&served, &project, "rm -rf /"), "deny");
    let log = std::fs::read_to_string(fleet.path().join("access.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");

    std::fs::write(&config, "listen: 127.0.0.1:0\nno_tokn: true\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .args(["serve", "--serve-config", config.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        said.contains("serve.yaml:2") && said.contains("no_tokn"),
        "{said}"
    );
}

/// `/metrics` scraped while requests pour in: every request is counted
/// once, and the scrapes never fail.
#[test]
fn metrics_scraped_under_load_count_every_request_once() {
    let (_home, project, served) = guarded();
    let served = std::sync::Arc::new(served);
    let clients: Vec<_> = (0..6)
        .map(|i| {
            let (served, dir) = (served.clone(), project.path().to_owned());
            std::thread::spawn(move || {
                for n in 0..40 {
                    let command = if (i + n) % 2 == 0 { "rm -rf /" } else { "ls" };
                    decision(&served, &dir, command);
                }
            })
        })
        .collect();
    let mut scrapes = 0;
    while clients.iter().any(|c| !c.is_finished()) {
        let (status, _) = request(&served, "/metrics", None);
        assert_eq!(status, 200);
        scrapes += 1;
    }
    for client in clients {
        client.join().unwrap();
    }
    assert!(scrapes > 0);
    let (_, metrics) = request(&served, "/metrics", None);
    let value = |prefix: &str| -> u64 {
        metrics
            .lines()
            .filter(|l| l.starts_with(prefix))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(value("wasm_hooks_events_total{"), 240, "{metrics}");
    assert_eq!(
        value("wasm_hooks_events_total{event=\"PreToolUse\",verdict=\"deny\"}"),
        120
    );
    assert_eq!(value("wasm_hooks_requests_total{status=\"200\"}"), 240);
    assert_eq!(value("wasm_hooks_requests_in_flight"), 0);
}

/// A trust record cut short (a full disk, a crash mid-write): the project
/// counts as untrusted (its hooks that run programs are left out), the
/// server goes on answering, and trusting it again mends it.
#[test]
fn a_truncated_trust_store_untrusts_the_project_and_serve_goes_on() {
    let home = Home::new();
    home.deny("rm -rf");
    let project = support::project_blocking_make();
    let trust = || home.trust(project.path(), None);
    trust();
    let served = home.serve(&[project.path()]);
    let dir = project.path();
    assert_eq!(decision(&served, dir, "make all"), "deny");
    let records = home.dir.path().join("state/wasm-hooks/trust");
    for record in std::fs::read_dir(&records).unwrap() {
        let path = record.unwrap().path();
        let text = std::fs::read(&path).unwrap();
        std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    }
    assert!(
        eventually(|| decision(&served, dir, "make all") == "allow"),
        "untrusted now"
    );
    assert_eq!(
        decision(&served, dir, "rm -rf /"),
        "deny",
        "the person's guard goes on"
    );
    trust();
    assert!(
        eventually(|| decision(&served, dir, "make all") == "deny"),
        "trusted again"
    );
}

/// Two replicas of `serve` sharing one real Redis (`--state`) agree on a
/// session's `once` marks and stop-loop count; a third without it does
/// not (the control); Redis stopped, the guards still hold (a `once` hook
/// runs again, stops are counted in memory) and, started again, it is used
/// again without a restart.
#[test]
fn replicas_sharing_redis_agree_on_once_marks_and_stop_loops_and_recover() {
    let mut redis = support::redis::Redis::start();
    let home = Home::new();
    let block = |word: &str| {
        format!(
            "grep -q {word} && echo '{{\"decision\": \"block\", \"reason\": \"once: {word}\"}}' || true"
        )
    };
    write_whole(
        &home.hooks(),
        &json!({"hooks": {
            "PreToolUse": [{"hooks": [{"type": "command", "name": "first-only", "once": true,
                "command": block("deploy")}]}],
            "Stop": [{"hooks": [{"type": "command", "name": "not-yet",
                "command": "echo '{\"decision\": \"block\", \"reason\": \"run the tests\"}'"}]}]}})
        .to_string(),
    );
    let project = tempfile::tempdir().unwrap();
    let state = redis.url();
    let a = home.serve_with(&[project.path()], &["--state", &state]);
    let b = home.serve_with(&[project.path()], &["--state", &state]);
    let alone = home.serve(&[project.path()]);
    let event = |session: &str, command: &str| {
        json!({"session_id": session, "cwd": project.path(), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}})
    };
    let verdict = |served: &support::Served, event: &Value| {
        let (_, body) = request(served, "/hook", Some(event));
        let answer: Value = serde_json::from_str(&body).unwrap();
        answer["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .or(answer["decision"].as_str())
            .unwrap_or("allow")
            .to_owned()
    };
    assert_eq!(
        verdict(&a, &event("s1", "deploy")),
        "deny",
        "the once hook's first run"
    );
    assert_eq!(
        verdict(&b, &event("s1", "deploy")),
        "allow",
        "b knows it ran"
    );
    assert_eq!(
        verdict(&alone, &event("s1", "deploy")),
        "deny",
        "the control keeps its own"
    );

    // Stops blocked in a row, alternating replicas: the ninth goes through.
    let stop = json!({"session_id": "s2", "cwd": project.path(), "hook_event_name": "Stop",
        "stop_hook_active": false});
    for n in 1..=8 {
        let served = if n % 2 == 0 { &b } else { &a };
        assert_eq!(verdict(served, &stop), "block", "stop {n} is blocked");
    }
    assert_eq!(
        verdict(&b, &stop),
        "allow",
        "the ninth, counted across replicas, goes through"
    );

    // Redis gone: the once hook runs again (a guard that runs twice beats
    // one that never does), the servers go on.
    redis.stop();
    assert_eq!(verdict(&a, &event("s3", "deploy")), "deny");
    assert_eq!(verdict(&b, &event("s3", "deploy")), "deny");
    let (_, metrics) = request(&a, "/metrics", None);
    let errors = metrics
        .lines()
        .find_map(|l| l.strip_prefix("wasm_hooks_state_errors_total "))
        .map_or(0, |n| n.parse::<u64>().unwrap());
    assert!(errors >= 1, "the store's failures are counted: {metrics}");
    // Back: shared again, without a restart. Each try is a session of its
    // own: one tried while a replica still waited out Redis's failure has
    // its mark in that replica only.
    redis.restart();
    let mut tries = 0;
    assert!(
        eventually(|| {
            tries += 1;
            let session = format!("s4-{tries}");
            verdict(&a, &event(&session, "deploy")) == "deny"
                && verdict(&b, &event(&session, "deploy")) == "allow"
        }),
        "recovered"
    );
}

/// Two replicas sharing a real Redis, the person's hook file the
/// rate-limit example (3 Bash calls per session).
struct Replicas {
    redis: support::redis::Redis,
    home: Home,
    project: tempfile::TempDir,
    a: support::Served,
    b: support::Served,
}

fn rate_limited_replicas() -> Replicas {
    let redis = support::redis::Redis::start();
    let home = Home::new();
    home.rate_limit_bash(3);
    let project = tempfile::tempdir().unwrap();
    let state = redis.url();
    let a = home.serve_with(&[project.path()], &["--state", &state]);
    let b = home.serve_with(&[project.path()], &["--state", &state]);
    Replicas {
        redis,
        home,
        project,
        a,
        b,
    }
}

/// A plugin's `kv` through `--state`: the rate-limit example's calls,
/// counted by two replicas in one Redis, hit the limit together (a
/// replica without it counts alone: the control).
#[test]
fn a_plugins_kv_is_shared_by_replicas_through_redis() {
    let Replicas {
        mut redis,
        home,
        project,
        a,
        b,
    } = rate_limited_replicas();
    let alone = home.serve(&[project.path()]);
    let dir = project.path();
    assert_eq!(decision(&a, dir, "ls"), "allow");
    assert_eq!(decision(&b, dir, "ls"), "allow");
    assert_eq!(decision(&a, dir, "ls"), "allow");
    assert_eq!(
        decision(&b, dir, "ls"),
        "deny",
        "the fourth call, counted across replicas"
    );
    assert_eq!(
        decision(&alone, dir, "ls"),
        "allow",
        "the control counts alone"
    );
    // Without Redis, a guard that needs its `kv` fails by its
    // `on_failure` (block), even on a session that has made no call yet.
    redis.stop();
    let event = json!({"session_id": "another", "cwd": dir, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let (status, body) = request(&a, "/hook", Some(&event));
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
    assert!(body.contains("state store"), "{body}");
}

/// Two replicas answering one session's events all at once: each call of
/// the rate-limit example reads its count and writes it back, and a call
/// whose count changed meanwhile runs again, so a limit of 10 allows
/// exactly 10 of 48 calls racing (without it, replicas count from the same
/// value and allow more).
#[test]
fn replicas_racing_one_session_hold_the_rate_limit_exactly() {
    let redis = support::redis::Redis::start();
    let home = Home::new();
    home.rate_limit_bash(10);
    let project = tempfile::tempdir().unwrap();
    let state = redis.url();
    let a = home.serve_with(&[project.path()], &["--state", &state]);
    let b = home.serve_with(&[project.path()], &["--state", &state]);
    let start = std::sync::Barrier::new(48);
    let answers: Vec<(String, String)> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..48)
            .map(|i| {
                let (served, start, dir) =
                    (if i % 2 == 0 { &a } else { &b }, &start, project.path());
                scope.spawn(move || {
                    start.wait();
                    decision_and_reason(served, dir, "ls")
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let allowed = answers.iter().filter(|(a, _)| a == "allow").count();
    let denied = answers.iter().filter(|(a, _)| a == "deny").count();
    assert_eq!((allowed, denied), (10, 38), "{answers:?}");
    // Each deny is the limit's, not a hook that gave up (its `on_failure`
    // blocks too).
    assert!(
        answers
            .iter()
            .all(|(a, why)| a == "allow" || why.contains("was called 10 times")),
        "{answers:?}"
    );
}

/// A replica killed mid-session: its events go to another replica (as a
/// client retrying elsewhere does), and the session's state carries on
/// there, counted exactly.
#[test]
fn a_replica_killed_mid_run_loses_no_session_state() {
    let Replicas {
        redis: _redis,
        home: _home,
        project,
        mut a,
        b,
    } = rate_limited_replicas();
    let dir = project.path();
    assert_eq!(decision(&a, dir, "ls"), "allow");
    assert_eq!(decision(&a, dir, "ls"), "allow");
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    assert_eq!(decision(&b, dir, "ls"), "allow", "the third call");
    assert_eq!(
        decision(&b, dir, "ls"),
        "deny",
        "the fourth: a's two were kept"
    );
}

/// A collector on loopback receives a span per event and one per hook,
/// continuing the agent's `traceparent` (OTLP/HTTP, JSON); SIGTERM sends
/// the last ones.
#[test]
fn spans_continue_the_agents_traceparent_to_a_loopback_collector() {
    use std::io::{BufRead as _, BufReader, Read as _};
    let received: std::sync::Arc<std::sync::Mutex<Vec<String>>> = std::sync::Arc::default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let collector = listener.local_addr().unwrap();
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = n.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            kept.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&body).into_owned());
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}");
        }
    });
    let home = Home::new();
    home.deny("rm -rf");
    let project = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{collector}/v1/traces");
    let mut served = home.serve_with(&[project.path()], &["--otlp-endpoint", &endpoint]);
    let event = json!({"session_id": "s", "cwd": project.path(), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}});
    let out = Command::new("curl")
        .args(["-s", "-X", "POST", "-H", "content-type: application/json"])
        .args([
            "-H",
            "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ])
        .args(["--data-binary", &event.to_string()])
        .arg(format!("{}/hook", served.address))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("deny"));
    let status = Command::new("kill")
        .args(["-TERM", &served.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        served.child.wait().unwrap().success(),
        "serve stopped cleanly"
    );
    let spans = received.lock().unwrap().join("\n");
    for expected in [
        "0af7651916cd43dd8448eb211c80319c",
        "b7ad6b7169203331",
        "dispatch PreToolUse",
        "hook inline",
        "wasm_hooks.verdict",
    ] {
        assert!(spans.contains(expected), "{expected} in:\n{spans}");
    }
}
