//! Seeing what the guards do (#45): `replay` over past sessions, `stats`
//! over the audit log, and `ui`, the live page for one person.

use std::io::{BufRead as _, Write as _};
use std::path::Path;

use assert_cmd::Command;
use serde_json::{Value, json};

/// `wasm-hooks args` with no settings of the machine's, in `home`, as a
/// process to start.
fn program(home: &Path, args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("wasm-hooks"));
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("WASM_HOOKS_DAEMON", "off")
        .env_remove("CLAUDE_PROJECT_DIR")
        .current_dir(home)
        .args(args);
    cmd
}

/// [`program`], to run to its end.
fn wasm_hooks(home: &Path, args: &[&str]) -> Command {
    Command::from_std(program(home, args))
}

/// A hook file of inline PreToolUse guards: `rm -rf` in a Bash command,
/// and with `env`, writes to `.env` too; and a command hook (which a
/// replay must not run).
fn guards(dir: &Path, name: &str, env: bool) -> String {
    let mut groups = vec![json!({"matcher": "Bash", "hooks": [
        {"type": "inline", "name": "no-rm-rf", "rules": [
            {"field": "tool_input.command", "operator": "contains", "value": "rm -rf",
             "action": "deny", "reason": "no rm -rf here"}]},
        {"type": "command", "name": "side-effect", "command": "touch ran-in-replay"}]})];
    if env {
        groups.push(json!({"matcher": "Write|Edit", "hooks": [
            {"type": "inline", "name": "no-env-writes", "rules": [
                {"field": "tool_input.file_path", "operator": "ends_with", "value": ".env",
                 "action": "deny", "reason": "no writes to .env"}]}]}));
    }
    let path = dir.join(name);
    std::fs::write(&path, json!({"hooks": {"PreToolUse": groups}}).to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Decide `tool` with `input` under `hooks`, recorded in `log`.
fn decide(home: &Path, hooks: &str, log: &str, tool: &str, input: Value) {
    let input = input.to_string();
    let out = wasm_hooks(
        home,
        &[
            "run",
            "--config",
            hooks,
            "--audit-log",
            log,
            "--event",
            "PreToolUse",
            "--tool",
            tool,
            "--input",
            &input,
        ],
    )
    .output()
    .unwrap();
    // `run` exits 2 on a deny.
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn replay(home: &Path, args: &[&str]) -> Value {
    let mut all = vec!["replay", "--json"];
    all.extend(args);
    let out = wasm_hooks(home, &all).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A week of sessions under a guard against `rm -rf` only, replayed
/// under one that also refuses writes to `.env`: the new guard would have
/// stopped the write that ran, the old one agrees with what was denied.
#[test]
fn replay_over_the_audit_log_says_what_a_new_guard_would_have_stopped() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let log = home.join("audit.jsonl");
    let log = log.to_str().unwrap();
    let before = guards(home, "before.json", false);
    decide(home, &before, log, "Bash", json!({"command": "ls"}));
    decide(
        home,
        &before,
        log,
        "Bash",
        json!({"command": "rm -rf build"}),
    );
    decide(
        home,
        &before,
        log,
        "Write",
        json!({"file_path": "/p/.env", "content": "T=1"}),
    );
    decide(
        home,
        &before,
        log,
        "Write",
        json!({"file_path": "/p/notes.txt", "content": "x"}),
    );
    std::fs::remove_file(home.join("ran-in-replay")).unwrap();
    let after = guards(home, "after.json", true);
    let found = replay(home, &["--config", &after, "--agent", "audit", log]);
    assert_eq!(found["events"], 4, "{found}");
    let rm = &found["hooks"]["no-rm-rf"];
    assert_eq!(rm["seen"], 2, "{rm}");
    assert_eq!(
        rm["against"]["deny"]["denied"], 1,
        "it agrees with what happened: {rm}"
    );
    let env = &found["hooks"]["no-env-writes"];
    assert_eq!(env["would"]["deny"], 1, "{env}");
    assert_eq!(
        env["against"]["deny"]["ran"], 1,
        "the write ran, and would not have: {env}"
    );
    assert_eq!(env["examples"][0]["about"], "/p/.env");
    assert_eq!(env["examples"][0]["reason"], "no writes to .env");
    assert_eq!(found["skipped"][0]["hook"], "side-effect");
    assert!(
        !home.join("ran-in-replay").exists(),
        "a replay runs no command hook"
    );
    // The table says the same.
    let out = wasm_hooks(
        home,
        &["replay", "--config", &after, "--agent", "audit", log],
    )
    .output()
    .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("no-env-writes would deny, and it ran: PreToolUse Write `/p/.env`"),
        "{table}"
    );
    assert!(table.contains("skipped: side-effect (command)"), "{table}");
}

/// A log cut off mid-line, with a line past the size cap and lines that
/// are not records, is read to its end: what is not an event is counted.
#[test]
fn a_truncated_huge_or_hostile_session_log_is_counted_not_fatal() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let log = home.join("audit.jsonl");
    let hooks = guards(home, "hooks.json", true);
    decide(
        home,
        &hooks,
        log.to_str().unwrap(),
        "Bash",
        json!({"command": "rm -rf /"}),
    );
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(b"not json at all\n{\"kind\": \"dispatch\", \"data\": {\"record\": 7}}\n")
        .unwrap();
    file.write_all(&vec![b'x'; 9 << 20]).unwrap();
    file.write_all(b"\n\x00\xff\xfe binary\n").unwrap();
    drop(file);
    decide(
        home,
        &hooks,
        log.to_str().unwrap(),
        "Bash",
        json!({"command": "rm -rf ~"}),
    );
    let mut tail = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    tail.write_all(b"{\"seq\": 99, \"kind\": \"dispa").unwrap();
    drop(tail);
    let found = replay(
        home,
        &[
            "--config",
            &hooks,
            "--agent",
            "audit",
            log.to_str().unwrap(),
        ],
    );
    assert_eq!(found["events"], 2, "{found}");
    assert_eq!(found["hooks"]["no-rm-rf"]["would"]["deny"], 2);
    assert_eq!(found["sources"][0]["unknown"], 5, "{}", found["sources"]);
}

/// `stats` counts a dry run's would-deny apart from denies, and names
/// the hook that never fired.
#[test]
fn stats_counts_would_denies_apart_and_shows_a_hook_that_never_fired() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let log = home.join("audit.jsonl");
    let log = log.to_str().unwrap();
    let hooks = home.join("hooks.json");
    std::fs::write(
        &hooks,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "inline", "name": "trial", "enforcement": "dryrun", "rules": [
                {"field": "tool_input.command", "operator": "contains", "value": "curl",
                 "action": "deny", "reason": "no curl"}]}]},
            {"matcher": "NeverUsedTool", "hooks": [
                {"type": "inline", "name": "dead", "rules": [
                    {"field": "tool_input.x", "operator": "exists", "action": "deny", "reason": "x"}]}]}]}})
        .to_string(),
    )
    .unwrap();
    let hooks = hooks.to_str().unwrap();
    decide(
        home,
        hooks,
        log,
        "Bash",
        json!({"command": "curl example.invalid"}),
    );
    decide(home, hooks, log, "Bash", json!({"command": "ls"}));
    let out = wasm_hooks(home, &["stats", "--config", hooks, "--audit-log", log])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trial = table
        .lines()
        .find(|l| l.starts_with("trial (dryrun)"))
        .unwrap_or_else(|| panic!("{table}"));
    let columns: Vec<&str> = trial.split_whitespace().collect();
    // hook, (dryrun), fired, deny, ask, rewrite, would-deny, failed
    assert_eq!(columns[2..8], ["2", "0", "0", "0", "1", "0"], "{table}");
    assert!(table.contains("never fired: dead"), "{table}");
}

/// `curl` with `args`: the status, the head (lower-case names) and the
/// body.
fn curl(args: &[&str]) -> (u16, String, String) {
    let out = std::process::Command::new("curl")
        .args(["-s", "-i", "-w", "\n%{http_code}"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (response, status) = text.rsplit_once('\n').unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((response, ""));
    (
        status.parse().unwrap(),
        head.to_lowercase(),
        body.to_owned(),
    )
}

/// `wasm-hooks ui` serves the page on 127.0.0.1 behind a token made for
/// the run, streams the audit log's decisions (those in it, then those
/// appended) and shows the last replay.
#[test]
fn ui_serves_the_page_and_streams_the_audit_logs_decisions_behind_its_token() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let log = home.join("audit.jsonl");
    let log_text = log.to_str().unwrap();
    let hooks = guards(home, "hooks.json", true);
    decide(
        home,
        &hooks,
        log_text,
        "Bash",
        json!({"command": "rm -rf build"}),
    );
    // A replay, for the page.
    replay(home, &["--config", &hooks, "--agent", "audit", log_text]);
    let mut ui = program(home, &["ui", "--config", &hooks, "--audit-log", log_text])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(ui.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("wasm-hooks ui: ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    let (base, token) = url.split_once("/ui?token=").unwrap();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    assert_eq!(curl(&[&format!("{base}/ui")]).0, 401);
    assert_eq!(curl(&[&format!("{base}/v1/decisions")]).0, 401);
    let (status, head, _) = curl(&[&url]);
    assert_eq!(status, 303);
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .unwrap_or_else(|| panic!("{head}"))
        .to_owned();
    assert!(
        cookie.contains("httponly") && cookie.contains("samesite=strict"),
        "{cookie}"
    );
    let jar = format!("cookie: {}", cookie.split(';').next().unwrap());
    let (status, head, page) = curl(&["-H", &jar, &format!("{base}/ui")]);
    assert_eq!(status, 200);
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(page.contains("what your guards decide"));
    let bearer = format!("authorization: Bearer {token}");
    let (_, _, replayed) = curl(&["-H", &bearer, &format!("{base}/v1/replay")]);
    let replayed: Value = serde_json::from_str(&replayed).unwrap();
    assert_eq!(
        replayed["hooks"]["no-rm-rf"]["would"]["deny"], 1,
        "{replayed}"
    );
    // Another site's page is refused, token or not.
    let other = curl(&[
        "-H",
        &bearer,
        "-H",
        "origin: http://evil.example",
        &format!("{base}/v1/decisions"),
    ]);
    assert_eq!(other.0, 403);
    let mut stream = std::process::Command::new("curl")
        .args(["-sN", "-H", &bearer, &format!("{base}/v1/decisions")])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut events = std::io::BufReader::new(stream.stdout.take().unwrap());
    let mut seen = String::new();
    let mut until = |text: &str, seen: &mut String| {
        while !seen.contains(text) {
            let mut line = String::new();
            assert!(
                events.read_line(&mut line).unwrap() > 0,
                "the stream ended: {seen}"
            );
            seen.push_str(&line);
        }
    };
    until("rm -rf build", &mut seen);
    // A decision appended while the page is open comes too.
    decide(
        home,
        &hooks,
        log_text,
        "Write",
        json!({"file_path": "/p/.env", "content": "x"}),
    );
    until("/p/.env", &mut seen);
    assert!(seen.contains("event: decision"), "{seen}");
    assert!(
        seen.contains("\"no-env-writes\""),
        "its hooks are in the note: {seen}"
    );
    stream.kill().unwrap();
    stream.wait().unwrap();
    ui.kill().unwrap();
    ui.wait().unwrap();
}

/// Under `serve`, a dry run's would-deny is a `deny` labelled
/// `enforcement="dryrun"` in `/metrics`, and the event goes through.
#[test]
fn a_dry_runs_would_deny_is_labelled_in_serves_metrics() {
    let home = tempfile::tempdir().unwrap();
    let hooks = home.path().join("hooks.json");
    std::fs::write(
        &hooks,
        json!({"enforcement": "dryrun", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "inline", "name": "trial", "rules": [
                {"field": "tool_input.command", "operator": "contains", "value": "rm -rf",
                 "action": "deny", "reason": "no"}]}]}]}})
        .to_string(),
    )
    .unwrap();
    let mut serve = program(
        home.path(),
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-token",
            "--config",
            hooks.to_str().unwrap(),
        ],
    );
    serve.stdin(std::process::Stdio::null());
    let served = crate::support::Served::start(serve);
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/p",
        "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
    .to_string();
    let (status, _, answer) = curl(&[
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "--data",
        &event,
        &format!("{}/v1/decide", served.address),
    ]);
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["decision"], "proceed", "{answer}");
    assert_eq!(answer["trace"][0]["enforcement"], "dryrun", "{answer}");
    let (_, _, metrics) = curl(&[&format!("{}/metrics", served.address)]);
    assert!(
        metrics.contains(
            r#"wasm_hooks_hook_decisions_total{event="PreToolUse",hook="trial",verdict="deny",enforcement="dryrun"} 1"#
        ),
        "{metrics}"
    );
}

/// Sessions recorded from the real agents (Claude Code 2.1.332 with a
/// subagent, Codex 0.171, Gemini CLI 0.61, Copilot CLI 1.0.102; each
/// under a wasm-hooks guard against `rm -rf`, see
/// `tests/fixtures/sessions/README.md`), replayed under a file that also
/// refuses writes to `.env`: exactly the `rm -rf build` and the `.env`
/// write would be denied, each against what happened to it there.
#[test]
fn replay_over_each_agents_recorded_session_finds_exactly_the_rm_rf_and_the_env_write() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let hooks = guards(home, "hooks.json", true);
    let sessions = crate::support::workspace_root().join("tests/fixtures/sessions");
    for (agent, dir, env_write) in [
        ("claude", "claude-code-2.1.332", "ran"),
        ("codex", "codex-0.171", "ran"),
        // Gemini CLI refuses any path with a `.env` part itself.
        ("gemini", "gemini-cli-0.61", "denied"),
        ("copilot", "copilot-1.0.102", "ran"),
    ] {
        let logs = sessions.join(dir);
        let found = replay(
            home,
            &["--config", &hooks, "--agent", agent, logs.to_str().unwrap()],
        );
        let rm = &found["hooks"]["no-rm-rf"];
        assert_eq!(rm["would"]["deny"], 1, "{agent}: {rm}");
        assert_eq!(
            rm["against"]["deny"],
            json!({"denied": 1}),
            "{agent}: it was denied there: {rm}"
        );
        assert_eq!(rm["examples"][0]["about"], "rm -rf build", "{agent}: {rm}");
        assert!(
            rm["would"]["proceed"].as_u64().unwrap() >= 1,
            "{agent}: `ls` passes: {rm}"
        );
        let env = &found["hooks"]["no-env-writes"];
        assert_eq!(env["would"]["deny"], 1, "{agent}: {env}");
        assert_eq!(
            env["against"]["deny"],
            json!({env_write: 1}),
            "{agent}: {env}"
        );
        assert_eq!(
            env["examples"][0]["about"], "/home/dev/project/.env",
            "{agent}: {env}"
        );
        assert_eq!(
            env["would"]["proceed"], 1,
            "{agent}: notes.txt passes: {env}"
        );
        for source in found["sources"].as_array().unwrap() {
            assert!(source["error"].is_null(), "{agent}: {source}");
        }
        assert!(
            found["events"].as_u64().unwrap() >= 6,
            "{agent}: the session, the prompt, four calls: {found}"
        );
    }
}

/// An agent's transcript cut off mid-record, with a line past the size
/// cap, records of unknown types, and more tool calls waiting for their
/// results than are kept: every call is still replayed (those with no
/// result as `unknown`), what is not an event counted, nothing fatal.
#[test]
fn a_hostile_agent_transcript_is_counted_not_fatal_and_its_waiting_calls_are_bounded() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let hooks = guards(home, "hooks.json", true);
    let transcript = home.join("session.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&transcript).unwrap());
    let call = |n: usize, command: &str| {
        json!({"type": "assistant", "sessionId": "s", "cwd": "/p", "isSidechain": false,
            "message": {"content": [{"type": "tool_use", "id": format!("t{n}"), "name": "Bash",
                "input": {"command": command}}]}})
    };
    // 5,000 calls never answered: more than the 4,096 kept waiting.
    for n in 0..5000 {
        writeln!(file, "{}", call(n, if n == 0 { "rm -rf /" } else { "ls" })).unwrap();
    }
    writeln!(file, "{{\"type\": \"a-record-of-a-future-version\"}}").unwrap();
    file.write_all(&vec![b'{'; 9 << 20]).unwrap();
    writeln!(file).unwrap();
    writeln!(file, "{}", call(5000, "rm -rf ~")).unwrap();
    let result = json!({"type": "user", "sessionId": "s", "cwd": "/p",
        "permissionDecision": {"decision": "reject", "source": "hook"},
        "message": {"content": [{"type": "tool_result", "tool_use_id": "t5000", "is_error": true}]}});
    writeln!(file, "{result}").unwrap();
    file.write_all(br#"{"type": "assistant", "message": {"content": [{"type": "tool_u"#)
        .unwrap();
    drop(file);
    let found = replay(
        home,
        &[
            "--config",
            &hooks,
            "--agent",
            "claude",
            transcript.to_str().unwrap(),
        ],
    );
    let rm = &found["hooks"]["no-rm-rf"];
    assert_eq!(rm["seen"], 5001, "{}", found["sources"]);
    assert_eq!(rm["would"]["deny"], 2, "{rm}");
    assert_eq!(
        rm["against"]["deny"],
        json!({"unknown": 1, "denied": 1}),
        "{rm}"
    );
    assert_eq!(found["sources"][0]["unknown"], 3, "{}", found["sources"]);
}
