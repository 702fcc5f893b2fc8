//! The warm daemon behind `wasm-hooks hook`: it answers byte for byte as
//! the process itself would, is started by `hook` for the next event, sees
//! changed hook files at once, gives each event an empty `kv`, and is used
//! only by processes of the same build, user, environment and directory.
//! (`scripts/test` also runs all of `agent_hook::` through it.)

use crate::support;

use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{Value, json};

/// The private directories one set of `hook` processes shares: the same
/// environment, so the same daemon.
struct Place {
    runtime: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Place {
    fn new() -> Self {
        Self {
            runtime: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }

    /// `wasm-hooks` with this place's environment and `WASM_HOOKS_DAEMON`
    /// set to `way`.
    fn wasm_hooks(&self, way: &str) -> Command {
        let mut cmd = self.program("wasm-hooks");
        cmd.env("WASM_HOOKS_DAEMON", way);
        cmd
    }

    /// `wasm-hooks` as a `std::process::Command`, with this place's
    /// environment.
    fn std_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
        cmd.env_remove("WASM_HOOKS_DAEMON")
            .env_remove("RUST_LOG")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env("XDG_RUNTIME_DIR", self.runtime.path())
            .env("XDG_STATE_HOME", self.state.path())
            .env("XDG_CONFIG_HOME", "/nonexistent");
        cmd
    }

    /// One of the package's programs with this place's environment.
    fn program(&self, name: &str) -> Command {
        let mut cmd = Command::cargo_bin(name).unwrap();
        cmd.env_remove("WASM_HOOKS_DAEMON")
            .env("XDG_RUNTIME_DIR", self.runtime.path())
            .env("XDG_STATE_HOME", self.state.path())
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("RUST_LOG");
        cmd
    }

    /// `hook` with `args`, fed `event`, answered `way`.
    fn hook(&self, way: &str, args: &[&str], event: &Value) -> Output {
        self.hook_fed(way, args, &event.to_string())
    }

    /// `hook` with `args`, fed `stdin`, answered `way`; or, for the way
    /// `small`, `wasm-hooks-hook` with `args`.
    fn hook_fed(&self, way: &str, args: &[&str], stdin: &str) -> Output {
        let mut cmd = if way == "small" {
            self.program("wasm-hooks-hook")
        } else {
            let mut cmd = self.wasm_hooks(way);
            cmd.arg("hook");
            cmd
        };
        cmd.args(args).write_stdin(stdin).output().unwrap()
    }

    /// The sockets of running daemons.
    fn sockets(&self) -> Vec<PathBuf> {
        let dir = self.runtime.path().join("wasm-hooks");
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "sock"))
            .collect()
    }

    /// The pid in the lock file beside `socket`.
    fn daemon_pid(socket: &Path) -> u32 {
        let text = std::fs::read_to_string(socket.with_extension("lock")).unwrap();
        text.trim().parse().unwrap()
    }

    /// Wait (up to a minute: a bound, not a measure) until `done`.
    fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < Duration::from_secs(60), "never: {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The `$PPID` of a command hook: the process that ran the hooks.
fn runner_pid(answer: &Output) -> u32 {
    let body: Value = serde_json::from_slice(&answer.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&answer.stdout),
            String::from_utf8_lossy(&answer.stderr)
        )
    });
    let message = body["systemMessage"].as_str().unwrap_or_default();
    let (_, pid) = message
        .split_once("ran by ")
        .unwrap_or_else(|| panic!("{body}"));
    pid.parse().unwrap()
}

/// A command hook on every event saying which process ran it.
fn runner_hook() -> support::HookFile {
    support::write_hook_file(&json!({"hooks": {"*": [{"hooks": [{
        "type": "command",
        "name": "who",
        "command": r#"echo "{\"systemMessage\": \"ran by $PPID\"}""#,
    }]}]}}))
}

/// A fresh place, [`runner_hook`], and a Stop event to feed it.
fn runner_on_stop() -> (Place, support::HookFile, Value) {
    (Place::new(), runner_hook(), support::fixture("Stop"))
}

/// `stderr` without times (of log lines, and of hooks in `--explain`),
/// which two runs in-process do not share either.
fn without_times(stderr: &str) -> String {
    let log_time = regex::Regex::new(r"(?m)^\d{4}-\d\d-\d\dT[\d:.]+Z").unwrap();
    let took = regex::Regex::new(r" in [\d.]+ (ms|µs|ns|s)$").unwrap();
    let stderr = log_time.replace_all(stderr, "<time>");
    stderr
        .lines()
        .map(|line| format!("{}\n", took.replace(line, " in <time>")))
        .collect()
}

#[test]
fn the_daemon_answers_every_fixture_byte_for_byte_as_the_process_does() {
    // One hook of each in-process kind and a command hook, with `if`,
    // matchers and every way of answering.
    let file = support::write_hook_file(&json!({"hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "wasm", "name": "deny-dangerous", "plugin": support::plugin("deny-dangerous-commands")},
                {"type": "inline", "name": "no-curl", "rules": [
                    {"field": "tool_input.command", "operator": "contains", "value": "curl", "action": "deny", "reason": "no curl"},
                ]},
            ]},
            {"matcher": "Write|Edit", "hooks": [
                {"type": "wasm", "name": "protect", "plugin": support::plugin("protect-paths")},
            ]},
        ],
        "*": [{"hooks": [
            {"type": "command", "name": "context", "if": "Bash(git *)",
             "command": "echo \"seen $WASM_HOOKS_EVENT\""},
            {"type": "command", "name": "warn", "command": "echo \"warned on $WASM_HOOKS_EVENT\" >&2; exit 1"},
        ]}],
        "Stop": [{"hooks": [{"type": "command", "name": "block", "command": "echo 'not yet' >&2; exit 2"}]}],
    }}));
    let config = file.path.to_str().unwrap();
    let place = Place::new();
    let mut events = support::fixtures_of("2.1.197");
    events.extend(support::fixtures_of("2.1.330"));
    let mut dangerous = support::fixture("PreToolUse");
    dangerous["tool_input"]["command"] = json!("rm -rf /");
    events.push(("dangerous".into(), dangerous));
    let mut events: Vec<(String, String)> = events
        .into_iter()
        .map(|(name, event)| (name, event.to_string()))
        .collect();
    events.push(("not JSON".into(), "{".into()));
    assert!(events.len() >= 22);
    for (name, event) in &events {
        // Each Stop is blocked once per way: no stop-loop limit reached.
        let unlimited = ["--stop-loop-limit", "1000"];
        for args in [
            &["--config", config, unlimited[0], unlimited[1]][..],
            &["--config", config, unlimited[0], unlimited[1], "--explain"],
            &[
                "--config",
                config,
                unlimited[0],
                unlimited[1],
                "--protocol",
                "gemini",
            ],
        ] {
            let in_process = place.hook_fed("off", args, event);
            let through_daemon = place.hook_fed("only", args, event);
            let small_client = place.hook_fed("small", args, event);
            let shown = |o: &Output| {
                format!(
                    "{:?}\n{}{}",
                    o.status,
                    String::from_utf8_lossy(&o.stdout),
                    without_times(&String::from_utf8_lossy(&o.stderr))
                )
            };
            assert_eq!(
                shown(&in_process),
                shown(&through_daemon),
                "{name} {args:?}"
            );
            assert_eq!(
                shown(&in_process),
                shown(&small_client),
                "{name} {args:?}, wasm-hooks-hook"
            );
        }
    }
    // All of it through one daemon.
    assert_eq!(place.sockets().len(), 1);
}

#[test]
fn hook_starts_a_daemon_for_the_next_event_which_reads_changed_hook_files_at_once() {
    let (place, file, event) = runner_on_stop();
    let config = file.path.to_str().unwrap();
    // No daemon yet: the first event is answered in-process, and one is
    // started for the next.
    let first = place.hook("auto", &["--config", config], &event);
    assert!(first.status.success());
    Place::wait_for("a daemon's socket", || place.sockets().len() == 1);
    let socket = &place.sockets()[0];
    let daemon = Place::daemon_pid(socket);
    assert_ne!(runner_pid(&first), daemon);
    assert_eq!(
        std::fs::metadata(socket).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(socket.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    let second = place.hook("auto", &["--config", config], &event);
    assert_eq!(runner_pid(&second), daemon, "answered by the daemon");
    // A changed hook file is read for the very next event.
    std::fs::write(
        &file.path,
        json!({"hooks": {"Stop": [{"hooks": [{
            "type": "command",
            "command": "echo 'changed' >&2; exit 2",
        }]}]}})
        .to_string(),
    )
    .unwrap();
    let third = place.hook("auto", &["--config", config], &event);
    assert_eq!(
        serde_json::from_slice::<Value>(&third.stdout).unwrap(),
        json!({"decision": "block", "reason": "changed"})
    );
    // `-v` is answered in-process: its log lines are this process's.
    let verbose = place.hook("auto", &["--config", config, "-v"], &event);
    assert!(String::from_utf8_lossy(&verbose.stderr).contains("project"));
}

#[test]
fn the_small_client_goes_through_the_daemon_or_else_through_wasm_hooks_hook() {
    let (place, file, event) = runner_on_stop();
    let config = file.path.to_str().unwrap();
    // No daemon: `wasm-hooks hook` answers (it runs the command hook
    // itself) and starts one.
    let first = place.hook("small", &["--config", config], &event);
    assert!(first.status.success(), "{first:?}");
    Place::wait_for("a daemon's socket", || place.sockets().len() == 1);
    let daemon = Place::daemon_pid(&place.sockets()[0]);
    assert_ne!(runner_pid(&first), daemon);
    let second = place.hook("small", &["--config", config], &event);
    assert_eq!(runner_pid(&second), daemon, "answered by the daemon");
    // What the daemon does not take is `wasm-hooks hook`'s: its help, and
    // its refusal of a bad argument, with the exit code.
    let help = place.hook("small", &["--help"], &event);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--protocol"));
    let wrong = place.hook("small", &["--protocol", "clippy"], &event);
    assert_eq!(wrong.status.code(), Some(2), "{wrong:?}");
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("invalid value 'clippy'"));
}

#[test]
fn one_daemon_serves_every_project_and_runs_a_plugin_replaced_on_disk() {
    let place = Place::new();
    let mut event = support::fixture("PreToolUse");
    event["tool_input"]["command"] = json!("rm -rf /");
    let reason = |answer: &Output| {
        let body: Value =
            serde_json::from_slice(&answer.stdout).unwrap_or_else(|e| panic!("{e}: {answer:?}"));
        body["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    // Two projects, each with a hook file of its own, chosen by the
    // event's `cwd`: both answered by the one daemon.
    let projects = ["first", "second"].map(|name| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".wasm-hooks")).unwrap();
        let rule = json!({"field": "tool_input.command", "operator": "contains",
                          "value": "rm", "action": "deny", "reason": format!("{name} says no")});
        let file =
            json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "inline", "rules": [rule]}]}]}});
        std::fs::write(dir.path().join(".wasm-hooks/hooks.json"), file.to_string()).unwrap();
        (name, dir)
    });
    for (name, dir) in &projects {
        event["cwd"] = json!(dir.path());
        let answer = place.hook("only", &[], &event);
        // The projects are not trusted: their sandboxed rules' reasons are
        // marked as theirs (#30).
        assert_eq!(
            reason(&answer),
            format!("[from the untrusted project's hook `inline`] {name} says no")
        );
    }
    assert_eq!(place.sockets().len(), 1);
    // A plugin file replaced by another build: the next event runs the
    // new one (a daemon keeps linked plugins by their sha256, not their
    // path).
    let plugins = tempfile::tempdir().unwrap();
    let plugin = plugins.path().join("guard.wasm");
    std::fs::copy(support::plugin("deny-dangerous-commands"), &plugin).unwrap();
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "wasm", "plugin": plugin},
    ]}]}}));
    let config = file.path.to_str().unwrap();
    let guarded = place.hook("only", &["--config", config], &event);
    assert!(reason(&guarded).contains("rm -rf /"), "{guarded:?}");
    std::fs::copy(support::plugin("protect-paths"), &plugin).unwrap();
    let replaced = place.hook("only", &["--config", config], &event);
    assert_eq!(replaced.stdout, b"{}\n", "{replaced:?}");
    assert_eq!(place.sockets().len(), 1);
}

#[test]
fn each_event_gets_an_empty_kv_through_the_daemon_as_in_a_process_of_its_own() {
    // rate-limit-tools counts calls in `kv`: one call allowed per session.
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [{
        "type": "wasm",
        "plugin": support::plugin("rate-limit-tools"),
        "config": {"max_calls": 1, "per_seconds": 3600},
    }]}]}}));
    let config = file.path.to_str().unwrap();
    let place = Place::new();
    let event = support::fixture("PreToolUse");
    // Each process starts with an empty store, so the limit never bites;
    // a daemon that kept the store would deny from the second event on.
    for way in ["off", "off", "only", "only", "only"] {
        let answer = place.hook(way, &["--config", config], &event);
        assert_eq!(answer.stdout, b"{}\n", "{way}: {answer:?}");
        assert!(answer.status.success(), "{way}: {answer:?}");
    }
}

#[test]
fn a_daemon_of_another_build_is_never_used() {
    // Another build: the same binary as another file (a hard link beside
    // it has its own path), as after an upgrade.
    let target = Path::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .parent()
        .unwrap()
        .to_owned();
    let dir = tempfile::tempdir_in(&target).unwrap();
    let other = dir.path().join("wasm-hooks");
    std::fs::hard_link(env!("CARGO_BIN_EXE_wasm-hooks"), &other).unwrap();
    let (place, file, event) = runner_on_stop();
    let config = file.path.to_str().unwrap();
    let ours = place.hook("only", &["--config", config], &event);
    let ours_daemon = Place::daemon_pid(&place.sockets()[0]);
    assert_eq!(runner_pid(&ours), ours_daemon);
    let theirs = std::process::Command::new(&other)
        .env("WASM_HOOKS_DAEMON", "only")
        .env("XDG_RUNTIME_DIR", place.runtime.path())
        .env("XDG_STATE_HOME", place.state.path())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("RUST_LOG")
        .args(["hook", "--config", config])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut theirs = theirs;
    theirs
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let theirs = theirs.wait_with_output().unwrap();
    assert_ne!(runner_pid(&theirs), ours_daemon, "{theirs:?}");
    assert_eq!(place.sockets().len(), 2, "each build has its own daemon");
}

#[test]
fn a_request_for_another_environment_is_declined_and_garbage_is_survived() {
    let (place, file, event) = runner_on_stop();
    let config = file.path.to_str().unwrap();
    place.hook("only", &["--config", config], &event);
    let socket = place.sockets().remove(0);
    let ask = |request: &[u8]| {
        let mut stream = UnixStream::connect(&socket).unwrap();
        stream.write_all(request).unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        reply
    };
    let borrowed = json!({
        "key": "0".repeat(64),
        "argv": ["wasm-hooks", "hook", "--config", config],
        "stdin": event.to_string(),
    });
    let reply: Value = serde_json::from_str(&ask(borrowed.to_string().as_bytes())).unwrap();
    assert_eq!(reply["reply"], "declined", "{reply}");
    assert!(
        reply["why"].as_str().unwrap().contains("another build"),
        "{reply}"
    );
    let garbage: Value = serde_json::from_str(&ask(b"\x00\xffnot json")).unwrap();
    assert_eq!(garbage["reply"], "declined", "{garbage}");
    // Still answering.
    let after = place.hook("only", &["--config", config], &event);
    assert_eq!(runner_pid(&after), Place::daemon_pid(&socket));
    // The same daemon throughout (a hard link to the binary, made by
    // another test meanwhile, once changed the key: its change time).
    assert_eq!(place.sockets(), [socket]);
}

#[test]
fn a_socket_directory_other_users_may_enter_is_not_used() {
    let place = Place::new();
    let dir = place.runtime.path().join("wasm-hooks");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = runner_hook();
    let config = file.path.to_str().unwrap();
    let event = support::fixture("Stop");
    // auto: answered in-process, and no daemon started there.
    let answer = place.hook("auto", &["--config", config], &event);
    assert!(answer.status.success(), "{answer:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(place.sockets().is_empty());
    // only: the hooks' failure, saying why.
    let refused = place.hook("only", &["--config", config], &event);
    let body: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert!(
        body.to_string().contains("may be entered by other users"),
        "{body}"
    );
}

/// `instance: reuse` is for long-lived hosts: through the daemon, as in a
/// process of its own, every event gets a fresh instance (the plugin
/// counts its instance's calls: always the first), the ones the daemon
/// makes ahead after each reply included.
#[test]
fn the_daemon_gives_every_event_a_fresh_instance_even_when_a_hook_asks_for_reuse() {
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [{
        "type": "wasm",
        "plugin": support::plugin("hostile-remember"),
        "instance": "reuse",
    }]}]}}));
    let config = file.path.to_str().unwrap();
    let place = Place::new();
    let event = support::fixture("PreToolUse");
    for way in ["off", "only", "only", "only"] {
        let answer = place.hook(way, &["--config", config], &event);
        let body: Value = serde_json::from_slice(&answer.stdout).unwrap();
        assert_eq!(
            body["hookSpecificOutput"]["additionalContext"], "call 1",
            "{way}: {answer:?}"
        );
    }
}

#[test]
fn the_daemon_exits_when_idle_or_when_its_socket_is_removed() {
    let place = Place::new();
    let mut idle = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .args(["daemon", "--idle-secs", "1"])
        .env("XDG_RUNTIME_DIR", place.runtime.path())
        .spawn()
        .unwrap();
    Place::wait_for("the idle daemon exits", || {
        idle.try_wait().unwrap().is_some()
    });
    assert!(idle.wait().unwrap().success());
    assert!(place.sockets().is_empty(), "it removed its socket");

    let mut daemon = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .arg("daemon")
        .env("XDG_RUNTIME_DIR", place.runtime.path())
        .spawn()
        .unwrap();
    Place::wait_for("a socket", || place.sockets().len() == 1);
    std::fs::remove_file(&place.sockets()[0]).unwrap();
    Place::wait_for("the daemon exits", || daemon.try_wait().unwrap().is_some());
}

#[test]
fn two_claude_code_sessions_share_one_daemon_and_each_hook_sees_its_own_session() {
    let place = Place::new();
    // A command hook saying which process ran it and what session it saw.
    let file = support::write_hook_file(&json!({"hooks": {"*": [{"hooks": [{
        "type": "command",
        "name": "who",
        "command": r#"echo "{\"systemMessage\": \"session ${CLAUDE_CODE_SESSION_ID:-none} env ${CLAUDE_ENV_FILE:-none} ran by $PPID\"}""#,
    }]}]}}));
    let config = file.path.to_str().unwrap();
    let event = support::fixture("Stop");
    // The variables Claude Code 2.1.332 gives a hook per session (and
    // `CLAUDE_ENV_FILE` on some events only).
    let session = |id: &str, env_file: Option<&str>| {
        let mut cmd = place.program("wasm-hooks-hook");
        cmd.env("CLAUDE_CODE_SESSION_ID", id)
            .env("CLAUDE_PID", format!("4{}", id.len()))
            .env("CLAUDE_CODE_MESSAGING_TOKEN", format!("token-{id}"));
        match env_file {
            Some(path) => cmd.env("CLAUDE_ENV_FILE", path),
            None => cmd.env_remove("CLAUDE_ENV_FILE"),
        };
        cmd.args(["--config", config])
            .write_stdin(event.to_string())
            .output()
            .unwrap()
    };
    let said = |out: &Output| {
        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
        body["systemMessage"].as_str().unwrap().to_owned()
    };
    let first = session("one", Some("/tmp/env-one"));
    assert!(
        said(&first).contains("session one env /tmp/env-one"),
        "{first:?}"
    );
    Place::wait_for("a daemon's socket", || place.sockets().len() == 1);
    let daemon = Place::daemon_pid(&place.sockets()[0]);
    for (id, env_file) in [
        ("two", None),
        ("three-longer", Some("/tmp/env-three")),
        ("one", None),
    ] {
        let out = session(id, env_file);
        let text = said(&out);
        assert_eq!(runner_pid(&out), daemon, "{id}: answered warm: {text}");
        let expected = format!("session {id} env {}", env_file.unwrap_or("none"));
        assert!(text.contains(&expected), "{id}: {text}");
    }
    assert_eq!(place.sockets().len(), 1, "one daemon for every session");
}

/// A daemon builds a project's engine once (per worker thread), answers
/// the next events with it, and builds it again (and only then) when
/// something it was built from changes: the person's settings, the trust store, the
/// organisation's layer. Each answer follows the files as they are.
#[test]
fn the_daemon_builds_an_engine_once_and_again_when_each_kind_of_input_changes() {
    let place = Place::new();
    let home = tempfile::tempdir().unwrap();
    let managed = support::managed_dir();
    std::fs::create_dir_all(home.path().join("config/wasm-hooks")).unwrap();
    // A project whose command hook (not sandboxed) runs only when trusted.
    let project = support::project_blocking_make();
    let as_person = |cmd: &mut std::process::Command| {
        cmd.env_remove("WASM_HOOKS_DAEMON")
            .env_remove("RUST_LOG")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env("HOME", home.path())
            .env("XDG_RUNTIME_DIR", place.runtime.path())
            .env("XDG_STATE_HOME", place.state.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("WASM_HOOKS_MANAGED_DIR", managed.path())
            .current_dir(home.path());
    };
    // What a daemon logs while answering reaches the client's stderr.
    let log = std::cell::RefCell::new(String::new());
    let mut daemon = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
    as_person(&mut daemon);
    let mut daemon = daemon.args(["-v", "daemon"]).spawn().unwrap();
    Place::wait_for("a socket", || place.sockets().len() == 1);
    let decide = |command: &str| {
        let mut hook = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
        as_person(&mut hook);
        let event = json!({"session_id": "s", "cwd": project.path(), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}});
        let out = support::output_fed(
            hook.env("WASM_HOOKS_DAEMON", "only").arg("hook"),
            &event.to_string(),
        );
        log.borrow_mut()
            .push_str(&String::from_utf8_lossy(&out.stderr));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        answer["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or("allow")
            .to_owned()
    };
    let builds = || log.borrow().matches("engine built").count();

    // Each worker thread keeps its own engine; answering one request at
    // a time, a daemon has two (one answers, one waits in `accept`).
    assert_eq!(decide("make all"), "allow", "untrusted: left out");
    for _ in 0..20 {
        assert_eq!(decide("ls"), "allow");
    }
    assert!(
        (1..=2).contains(&builds()),
        "21 events, {} builds",
        builds()
    );

    let settings = home.path().join("config/wasm-hooks/config.yaml");
    std::fs::write(&settings, "untrusted_projects: trust_all\n").unwrap();
    assert_eq!(decide("make all"), "deny", "the settings followed");
    std::fs::remove_file(&settings).unwrap();
    assert_eq!(decide("make all"), "allow", "the settings removed");

    let mut trust = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
    as_person(&mut trust);
    let trusted = trust
        .current_dir(project.path())
        .args(["trust", "--yes"])
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    assert_eq!(decide("make all"), "deny", "the trust store followed");

    assert_eq!(decide("shutdown now"), "allow");
    let rule = json!({"type": "inline", "rules": [{"field": "tool_input.command",
        "operator": "contains", "value": "shutdown", "action": "deny", "reason": "not here"}]});
    std::fs::write(
        managed.path().join("hooks.json"),
        json!({"hooks": {"PreToolUse": [{"hooks": [rule]}]}}).to_string(),
    )
    .unwrap();
    assert_eq!(decide("shutdown now"), "deny", "the managed layer followed");
    let after_changes = builds();
    for _ in 0..20 {
        assert_eq!(decide("ls"), "allow");
    }
    assert!(
        builds() <= after_changes + 2 && after_changes <= 2 + 4 * 2,
        "{}",
        log.borrow()
    );
    daemon.kill().unwrap();
    daemon.wait().unwrap();
}

/// Copilot CLI gives every hook call its own trace context
/// (`COPILOT_TRACEPARENT`): the daemon keeps one engine for them all (it
/// used to build one per event), and each event's command hook still sees
/// its own event's value.
#[test]
fn a_variable_that_changes_on_every_event_reaches_its_hook_without_a_new_engine() {
    let place = Place::new();
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [{
        "type": "command",
        "command": "printf '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"additionalContext\":\"%s\"}}' \"$COPILOT_TRACEPARENT\"",
    }]}]}}));
    let wasm_hooks = || place.std_command();
    let mut daemon = wasm_hooks()
        .args(["-v", "daemon"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    Place::wait_for("a socket", || place.sockets().len() == 1);
    let mut log = String::new();
    let event = support::fixture("PreToolUse");
    for n in 0..10 {
        let traceparent = format!("00-{n:032x}-{n:016x}-01");
        let mut hook = wasm_hooks();
        hook.env("WASM_HOOKS_DAEMON", "only")
            .env("COPILOT_TRACEPARENT", &traceparent)
            .args(["hook", "--config", file.path.to_str().unwrap()]);
        let out = support::output_fed(&mut hook, &event.to_string());
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            answer["hookSpecificOutput"]["additionalContext"], traceparent,
            "{out:?}"
        );
    }
    let builds = log.matches("engine built").count();
    assert!((1..=2).contains(&builds), "10 events, {builds} builds");
    daemon.kill().unwrap();
    daemon.wait().unwrap();
}

/// Hook files that do not load fail every event until one of them
/// changes, without a build per event; fixed, the next event is answered.
#[test]
fn a_hook_file_that_does_not_load_is_built_again_only_when_it_changes() {
    let place = Place::new();
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [{
        "type": "inline", "rules": [{"deny": "no", "when": {"nope": 1}}],
    }]}]}}));
    let mut daemon = place
        .std_command()
        .args(["-v", "daemon"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    Place::wait_for("a socket", || place.sockets().len() == 1);
    let event = support::fixture("PreToolUse").to_string();
    let mut log = String::new();
    let hook = |log: &mut String| {
        let mut hook = place.std_command();
        hook.env("WASM_HOOKS_DAEMON", "only").args([
            "hook",
            "--config",
            file.path.to_str().unwrap(),
        ]);
        let out = support::output_fed(&mut hook, &event);
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        out
    };
    for _ in 0..6 {
        hook(&mut log);
    }
    let failed = log.matches("engine not built").count();
    assert!(
        (1..=2).contains(&failed),
        "6 events, {failed} builds: {log}"
    );
    std::fs::write(&file.path, r#"{"hooks": {}}"#).unwrap();
    let fixed = hook(&mut log);
    assert!(fixed.status.success(), "{fixed:?}");
    assert!(log.contains("engine built"), "{log}");
    daemon.kill().unwrap();
    daemon.wait().unwrap();
}

#[test]
fn an_environment_that_changes_on_every_event_cannot_start_unbounded_daemons() {
    // A variable the agent sets afresh on every event, outside the list of
    // per-event variables, puts every event under a key of its own.
    let (place, file, event) = runner_on_stop();
    let config = file.path.to_str().unwrap();
    let hook_with = |way: &str, churn: usize| {
        place
            .wasm_hooks(way)
            .env("CHURN_EVERY_EVENT", churn.to_string())
            .args(["hook", "--config", config])
            .write_stdin(event.to_string())
            .output()
            .unwrap()
    };
    for churn in 0..8 {
        let answer = hook_with("only", churn);
        assert!(answer.status.success(), "{answer:?}");
    }
    assert_eq!(place.sockets().len(), 8);
    // The ninth key: `only` says why no daemon answers ...
    let refused = hook_with("only", 8);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("at most 8"), "{stderr}");
    // ... and `auto` answers in-process, warns, and starts none.
    let answered = hook_with("auto", 9);
    assert!(answered.status.success(), "{answered:?}");
    assert!(runner_pid(&answered) > 0);
    let stderr = String::from_utf8_lossy(&answered.stderr);
    assert!(stderr.contains("at most 8"), "{stderr}");
    assert_eq!(place.sockets().len(), 8, "no ninth daemon");
    // The daemons answer for their own keys still.
    let known = hook_with("only", 3);
    assert!(known.status.success(), "{known:?}");
}
