//! Every agent and every way a shell command runs (issue 31): Claude Code
//! 2.1.332's PreSkillShellCommand under a PreToolUse `Bash` guard, the
//! rewrite Claude Code applies on its own terms, the deadline that answers
//! before an agent's timeout lets a tool through, and the payloads
//! captured from Copilot CLI, OpenCode and Cursor's documentation.

use crate::support;

use std::path::Path;

use assert_cmd::Command;
use serde_json::{Value, json};

/// What a `hook` program answered.
struct Answered {
    body: Value,
    stderr: String,
    code: i32,
}

/// Run `program` (`wasm-hooks` with `hook` first in `args`, or
/// `wasm-hooks-hook`) on `event`, with no user settings and no daemon.
fn answer(program: &str, args: &[&str], event: &Value) -> Answered {
    answer_text(program, args, &event.to_string(), &[])
}

/// [`answer`] for an event given as text (which may hold what a JSON
/// value cannot: a lone surrogate escape), with `env` set too.
fn answer_text(program: &str, args: &[&str], event: &str, env: &[(&str, &str)]) -> Answered {
    let out = Command::cargo_bin(program)
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("WASM_HOOKS_DAEMON", "off")
        .env_remove("CLAUDE_PROJECT_DIR")
        .envs(env.iter().copied())
        .args(args)
        .write_stdin(event.to_owned())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    Answered {
        body: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap(),
    }
}

fn hook(protocol: &str, file: &Path, event: &Value) -> Answered {
    let file = file.to_str().unwrap();
    answer(
        "wasm-hooks",
        &["hook", "--protocol", protocol, "--config", file],
        event,
    )
}

/// A hook file whose PreToolUse `Bash` guard refuses `rm -rf`.
fn rm_rf_guard(extra: Value) -> support::HookFile {
    let mut guard = json!({"type": "inline", "name": "no-rm-rf", "rules": [
        {"field": "tool_input.command", "operator": "contains", "value": "rm -rf",
         "action": "deny", "reason": "no rm -rf here"}
    ]});
    if let (Value::Object(g), Value::Object(x)) = (&mut guard, extra) {
        g.extend(x);
    }
    support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]}}),
    )
}

#[test]
fn a_slash_commands_rm_rf_is_stopped_by_a_pre_tool_use_bash_guard() {
    let skill = support::fixture_of("2.1.332", "PreSkillShellCommand");
    assert_eq!(skill["hook_event_name"], "PreSkillShellCommand");
    assert_eq!(skill["tool_name"], "Bash");
    let mut rm = skill.clone();
    rm["tool_input"]["command"] = json!("rm -rf victim");
    let file = rm_rf_guard(json!({}));
    let denied = hook("claude", &file.path, &rm);
    assert_eq!(denied.code, 0, "{}", denied.stderr);
    assert_eq!(
        denied.body["hookSpecificOutput"],
        json!({"hookEventName": "PreSkillShellCommand", "permissionDecision": "deny",
            "permissionDecisionReason": "no rm -rf here"})
    );
    let mut ls = skill;
    ls["tool_input"]["command"] = json!("ls");
    assert_eq!(hook("claude", &file.path, &ls).body, json!({}));
}

#[test]
fn a_guard_that_says_every_shell_false_keeps_to_tool_calls() {
    let mut rm = support::fixture_of("2.1.332", "PreSkillShellCommand");
    rm["tool_input"]["command"] = json!("rm -rf victim");
    let file = rm_rf_guard(json!({"every_shell": false}));
    assert_eq!(hook("claude", &file.path, &rm).body, json!({}));
    let call = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/tmp",
        "tool_name": "Bash", "tool_input": {"command": "rm -rf victim"}});
    assert_eq!(
        hook("claude", &file.path, &call).body["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

#[test]
fn a_rewrite_nobody_approved_goes_to_claude_code_without_a_decision() {
    let file = support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "inline", "name": "dry-run", "rules": [
                {"field": "tool_input.command", "operator": "equals", "value": "make deploy",
                 "action": "modify", "modify_field": "args.command",
                 "modify_value": "make deploy DRY_RUN=1"}
            ]}
        ]}]}}),
    );
    let mut event = support::fixture_of("2.1.330", "PreToolUse");
    event["tool_input"]["command"] = json!("make deploy");
    let claude = hook("claude", &file.path, &event);
    assert_eq!(
        claude.body["hookSpecificOutput"],
        json!({"hookEventName": "PreToolUse", "updatedInput": {"command": "make deploy DRY_RUN=1",
            "description": "fake model runs a command"}}),
        "{}",
        claude.stderr
    );
    let codex = hook("codex", &file.path, &event);
    assert_eq!(
        codex.body["hookSpecificOutput"]["permissionDecision"], "deny",
        "Codex runs a rewrite only with allow: an unapproved one is refused"
    );
}

#[test]
fn a_slow_guard_is_answered_with_a_block_at_the_deadline() {
    let file = support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "name": "slow", "command": "sleep 60", "timeout": 120, "on_failure": "block"}
        ]}]}}),
    );
    let path = file.path.to_str().unwrap();
    let event = support::fixture_of("2.1.330", "PreToolUse");
    for (program, args) in [
        (
            "wasm-hooks",
            vec!["hook", "--deadline", "1", "--config", path],
        ),
        ("wasm-hooks-hook", vec!["--deadline", "1", "--config", path]),
    ] {
        let answered = answer(program, &args, &event);
        assert_eq!(answered.code, 2, "{program}: {}", answered.stderr);
        assert!(
            answered
                .stderr
                .contains("no answer within the deadline of 1 s"),
            "{program}: {}",
            answered.stderr
        );
        assert_eq!(answered.body, Value::Null, "{program}: one answer only");
    }
    // Not a guard event: the agent goes on, and the person is told.
    let stop = support::fixture_of("2.1.330", "Stop");
    let file = support::write_hook_file(&json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "name": "slow", "command": "sleep 60", "timeout": 120}
    ]}]}}));
    let told = answer(
        "wasm-hooks",
        &[
            "hook",
            "--deadline",
            "1",
            "--config",
            file.path.to_str().unwrap(),
        ],
        &stop,
    );
    assert_eq!(told.code, 0, "{}", told.stderr);
    assert!(
        told.body["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("deadline")),
        "{:?}",
        told.body
    );
}

/// Every `.json` payload in `tests/fixtures/<dir>/`, by file stem.
fn payloads(dir: &str) -> Vec<(String, Value)> {
    let dir = support::workspace_root().join("tests/fixtures").join(dir);
    let mut all: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension().is_some_and(|e| e == "json") && !path.ends_with("answers.json")
        })
        .map(|path| {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, support::read_json(&path))
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// Whether `body` (with `code`) is `protocol`'s deny of a tool call.
fn is_deny(protocol: &str, answered: &Answered) -> bool {
    let body = &answered.body;
    answered.code == 0
        && match protocol {
            "claude" | "codex" => body["hookSpecificOutput"]["permissionDecision"] == "deny",
            "gemini" => body["decision"] == "deny",
            "copilot" => body["permissionDecision"] == "deny",
            "cursor" => body["permission"] == "deny",
            "opencode" => body["block"].as_str().is_some_and(|r| !r.is_empty()),
            _ => unreachable!(),
        }
}

/// A captured payload as the installed hook gets it: Copilot CLI's own
/// input names no event (the installed command does, `--agent-event`),
/// and the OpenCode plugin adds the hook's name to what OpenCode hands it.
/// `None` for a capture of a hook the plugin does not forward.
fn as_installed(protocol: &str, name: &str, mut payload: Value) -> Option<(Value, Vec<String>)> {
    let event = name.split('_').next().unwrap_or(name);
    match protocol {
        "copilot" => Some((payload, vec!["--agent-event".into(), event.into()])),
        "opencode" => {
            let hook = event.strip_prefix("event.").unwrap_or(event);
            let forwarded = ["tool.execute.before", "tool.execute.after", "chat.message"]
                .contains(&hook)
                || ["session.created", "session.idle", "session.error"].contains(&hook);
            forwarded.then(|| {
                payload["hook_event_name"] = json!(hook);
                (payload, Vec::new())
            })
        }
        _ => Some((payload, Vec::new())),
    }
}

/// Where a payload of `protocol` holds a shell call's command, if it is one.
fn shell_command<'a>(protocol: &str, name: &str, payload: &'a mut Value) -> Option<&'a mut Value> {
    let input = match protocol {
        "copilot" => payload.get_mut("toolArgs"),
        "opencode" => payload.get_mut("output").and_then(|o| o.get_mut("args")),
        "cursor" if name == "beforeShellExecution" => Some(payload),
        _ => payload.get_mut("tool_input"),
    }?;
    input.get_mut("command")
}

/// Every agent's captured payloads, as the installed hook gets them:
/// where each was captured (`dir/name`), its protocol, the payload, and
/// the arguments `install` adds to `hook`.
fn every_payload() -> Vec<(String, &'static str, Value, Vec<String>)> {
    let mut all = Vec::new();
    for (dir, protocol) in [
        ("claude-code-2.1.197", "claude"),
        ("claude-code-2.1.330", "claude"),
        ("claude-code-2.1.332", "claude"),
        ("codex-0.169", "codex"),
        ("codex-0.171", "codex"),
        ("gemini-cli-0.61", "gemini"),
        ("copilot-1.0.102", "copilot"),
        ("copilot-1.0.102/claude-format", "claude"),
        ("opencode-1.18.33", "opencode"),
        ("cursor-docs", "cursor"),
    ] {
        for (name, payload) in payloads(dir) {
            if let Some((payload, extra)) = as_installed(protocol, &name, payload) {
                all.push((format!("{dir}/{name}"), protocol, payload, extra));
            }
        }
    }
    all
}

/// The shell calls among [`every_payload`] (before the tool runs), each
/// command made `rm -rf /` (what every kind of guard here refuses).
fn every_rm_rf_call() -> Vec<(String, &'static str, Value, Vec<String>)> {
    let mut calls = Vec::new();
    for (at, protocol, mut payload, extra) in every_payload() {
        let name = at.rsplit('/').next().unwrap_or(&at).to_owned();
        let before = ["Pre", "Before", "pre", "before", "tool.execute.before"]
            .iter()
            .any(|p| name.starts_with(p));
        if let Some(command) = shell_command(protocol, &name, &mut payload).filter(|_| before) {
            *command = json!("rm -rf /");
            calls.push((at, protocol, payload, extra));
        }
    }
    calls
}

/// `hook` in `protocol` on `config`, with the installed arguments `extra`
/// and then `more`.
fn hook_args<'a>(
    protocol: &'a str,
    config: &'a str,
    extra: &'a [String],
    more: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["hook", "--protocol", protocol, "--config", config];
    args.extend(extra.iter().map(String::as_str));
    args.extend(more);
    args
}

/// Every captured payload of every agent is read (none is answered as
/// unreadable), and every shell call among them, its command made
/// `rm -rf /`, meets one PreToolUse `Bash` guard's deny in the agent's
/// own words.
#[test]
fn every_agents_payloads_are_read_and_every_shell_call_meets_one_bash_guard() {
    let file = rm_rf_guard(json!({}));
    let config = file.path.to_str().unwrap();
    for (at, protocol, payload, extra) in every_payload() {
        let answered = answer(
            "wasm-hooks",
            &hook_args(protocol, config, &extra, &[]),
            &payload,
        );
        assert!(
            answered.code == 0 && !answered.stderr.contains("the event on stdin"),
            "{at}: {} {}",
            answered.code,
            answered.stderr
        );
    }
    let mut denied = Vec::new();
    for (at, protocol, payload, extra) in every_rm_rf_call() {
        let answered = answer(
            "wasm-hooks",
            &hook_args(protocol, config, &extra, &[]),
            &payload,
        );
        assert!(
            is_deny(protocol, &answered),
            "{at}: {:?} {}",
            answered.body,
            answered.stderr
        );
        denied.push(at);
    }
    // The shell calls of each agent, its skill shell command and Cursor's
    // shell event among them.
    for expected in [
        "claude-code-2.1.332/PreSkillShellCommand",
        "claude-code-2.1.332/PreToolUse",
        "codex-0.169/PreToolUse",
        "gemini-cli-0.61/BeforeTool",
        "copilot-1.0.102/preToolUse",
        "copilot-1.0.102/claude-format/PreToolUse",
        "opencode-1.18.33/tool.execute.before",
        "cursor-docs/beforeShellExecution",
        "cursor-docs/preToolUse",
    ] {
        assert!(
            denied.iter().any(|d| d == expected),
            "{expected}: {denied:?}"
        );
    }
}

/// The same file with a top-level `enforcement`: every hook of it becomes
/// a dry run (or a warning).
fn with_enforcement(file: &support::HookFile, enforcement: &str) -> support::HookFile {
    let mut doc = support::read_json(&file.path);
    doc["enforcement"] = json!(enforcement);
    support::write_hook_file(&doc)
}

/// A guard being tried out (`enforcement: dryrun`, here for its whole
/// file) never blocks any agent, whatever its kind, and what it would have
/// denied is in the audit log and in `stats`; under `warn` the person is
/// told too.
#[test]
fn a_dry_run_guard_never_blocks_any_agent_and_its_would_denies_are_in_the_audit_log_and_stats() {
    let calls = every_rm_rf_call();
    for (kind, guard) in every_kind_of_rm_rf_guard() {
        for enforcement in ["dryrun", "warn"] {
            let file = with_enforcement(&guard, enforcement);
            let config = file.path.to_str().unwrap();
            let log = file.dir.path().join("audit.jsonl");
            let log = log.to_str().unwrap();
            for (at, protocol, payload, extra) in &calls {
                let args = hook_args(protocol, config, extra, &["--audit-log", log]);
                let answered = answer("wasm-hooks", &args, payload);
                assert!(
                    answered.code == 0 && !is_deny(protocol, &answered),
                    "{kind} {enforcement} {at}: {} {:?} {}",
                    answered.code,
                    answered.body,
                    answered.stderr
                );
                if enforcement == "warn" && *protocol == "claude" {
                    let told = answered.body["systemMessage"].as_str().unwrap_or_default();
                    assert!(
                        told.contains("would have denied"),
                        "{kind} {at}: {}",
                        answered.body
                    );
                }
            }
            let stats = Command::cargo_bin("wasm-hooks")
                .unwrap()
                .env("XDG_CONFIG_HOME", "/nonexistent")
                .args(["stats", "--json", "--audit-log", log, "--config", config])
                .output()
                .unwrap();
            assert!(
                stats.status.success(),
                "{}",
                String::from_utf8_lossy(&stats.stderr)
            );
            let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
            let hooks = stats["stats"]["hooks"].as_object().unwrap();
            assert_eq!(hooks.len(), 1, "{kind}: {stats}");
            let (_, guard) = hooks.iter().next().unwrap();
            assert_eq!(
                guard["would"]["deny"],
                calls.len(),
                "{kind} {enforcement}: {guard}"
            );
            assert_eq!(guard["decided"], json!({}), "{kind} {enforcement}: {guard}");
            assert_eq!(guard["enforcement"], enforcement);
            assert_eq!(stats["never_fired"], json!([]));
        }
    }
}

/// The guards of every kind on PreToolUse `Bash`: an inline rule, the
/// `deny-dangerous-commands` wasm plugin, and a command that reads the
/// event as JSON (a guard written the usual way, which fails open when
/// `tool_input` is not an object).
fn every_kind_of_rm_rf_guard() -> Vec<(&'static str, support::HookFile)> {
    let on_bash = |guard: Value| {
        support::write_hook_file(
            &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]}}),
        )
    };
    vec![
        ("inline", rm_rf_guard(json!({}))),
        (
            "wasm",
            on_bash(json!({"type": "wasm", "name": "dangerous",
                "plugin": support::plugin("deny-dangerous-commands")})),
        ),
        (
            "command",
            on_bash(json!({"type": "command", "name": "py-guard", "command":
                "python3 -c 'import json,sys; e=json.load(sys.stdin); c=e[\"tool_input\"][\"command\"]; sys.exit(2 if \"rm -rf\" in c else 0)'"})),
        ),
    ]
}

#[test]
fn copilots_tool_args_with_a_lone_surrogate_escape_meet_every_kind_of_guard() {
    let fixture = copilot_fixture("preToolUse");
    // Copilot CLI's `toolArgs` as JSON text, with a lone surrogate escape
    // that a strict parser refuses (so it stayed a string, and the guards
    // keyed on `tool_input.command` answered nothing) ...
    let mut as_text = fixture.clone();
    as_text["toolArgs"] = json!(r#"{"command": "rm -rf / \ud800", "description": "d"}"#);
    let as_text = as_text.to_string();
    // ... and the same escape in the event itself.
    let mut escaped = fixture.clone();
    escaped["toolArgs"]["command"] = json!("rm -rf / SURROGATE");
    let escaped = escaped.to_string().replace("SURROGATE", r"\udc00");
    for (kind, file) in every_kind_of_rm_rf_guard() {
        for (form, event) in [("text", &as_text), ("escape", &escaped)] {
            let args = copilot_hook_args(&file);
            let answered = answer_text("wasm-hooks", &args, event, &[]);
            assert_eq!(
                answered.body["permissionDecision"], "deny",
                "{kind} guard, {form}: {} {}",
                answered.body, answered.stderr
            );
        }
    }
}

#[test]
fn a_copilot_mcp_tool_meets_a_matcher_written_the_claude_code_way() {
    let project = tempfile::tempdir().unwrap();
    // Servers whose names hold Copilot's own separator: the tool name is
    // split at the longest server the configuration names.
    std::fs::write(
        project.path().join(".mcp.json"),
        r#"{"mcpServers": {"echo": {"command": "x"}, "echo-srv": {"command": "y"}}}"#,
    )
    .unwrap();
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [
        {"matcher": "mcp__echo-srv__say-it", "hooks": [{"type": "inline", "name": "no-echo", "rules": [
            {"field": "tool_input.text", "operator": "contains", "value": "secret",
             "action": "deny", "reason": "not that"}]}]}
    ]}}));
    let mut event = copilot_fixture("preToolUse");
    event["cwd"] = json!(project.path());
    event["toolName"] = json!("echo-srv-say-it");
    event["toolArgs"] = json!({"text": "the secret"});
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap();
    let answered = answer_text(
        "wasm-hooks",
        &copilot_hook_args(&file),
        &event.to_string(),
        &[("COPILOT_HOME", home)],
    );
    let body = answered.body;
    assert_eq!(body["permissionDecision"], "deny", "{body}");
    assert_eq!(body["permissionDecisionReason"], "not that", "{body}");
}

/// A captured Copilot CLI 1.0.102 payload.
fn copilot_fixture(name: &str) -> Value {
    support::read_json(
        &support::workspace_root().join(format!("tests/fixtures/copilot-1.0.102/{name}.json")),
    )
}

/// `hook`'s arguments as `install copilot` writes them for `preToolUse`,
/// on the hook file `file`.
fn copilot_hook_args(file: &support::HookFile) -> Vec<&str> {
    let config = file.path.to_str().unwrap();
    vec![
        "hook",
        "--protocol",
        "copilot",
        "--agent-event",
        "preToolUse",
        "--config",
        config,
    ]
}
