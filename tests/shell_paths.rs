//! Every kind of guard sees every path to a shell (#43): Claude Code's
//! `PreSkillShellCommand` (a skill's or slash command's inline `` !`cmd` ``)
//! reaches a hook written for PreToolUse `Bash` as a PreToolUse `Bash`
//! call, its own name kept in `original_event_name`; so a wasm guard of
//! each guest language (whose SDK routes it to `pre_tool_use` too), a
//! command guard and an inline guard each stop a slash command's shell.

use serde_json::{Value, json};

use crate::support;

/// Claude Code 2.1.332's PreSkillShellCommand running `command`, through
/// `wasm-hooks hook` with the hook file `hooks` (the person's own, by
/// `-c`): the answer.
fn skill_shell(hooks: &Value, command: &str) -> Value {
    let file = support::write_hook_file(hooks);
    let mut event = support::fixture_of("2.1.332", "PreSkillShellCommand");
    event["cwd"] = json!(file.dir.path());
    event["tool_input"]["command"] = json!(command);
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
    run.args(["hook", "-c"])
        .arg(&file.path)
        .env("WASM_HOOKS_DAEMON", "off")
        .env("WASM_HOOKS_CACHE_DIR", support::toolchain_cache())
        .env("XDG_CONFIG_HOME", "/nonexistent");
    let out = support::output_fed(&mut run, &event.to_string());
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&out.stderr)))
}

/// A PreToolUse `Bash` group holding `hook`.
fn bash_guard(hook: Value) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
}

fn denied_with(answer: &Value, reason: &str) -> bool {
    answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        && answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .is_some_and(|why| why.contains(reason))
}

#[test]
fn a_rust_wasm_guard_stops_a_slash_commands_shell() {
    let hooks = bash_guard(json!({"type": "wasm", "on_failure": "block",
        "plugin": support::plugin("deny-dangerous-commands")}));
    let answer = skill_shell(&hooks, "rm -rf /");
    assert!(denied_with(&answer, "dangerous pattern"), "{answer}");
    assert!(!denied_with(&skill_shell(&hooks, "ls"), ""));
}

#[test]
fn a_python_wasm_guard_stops_a_slash_commands_shell() {
    let plugin = crate::built_examples::built_example("conventional-commits-py");
    let hooks = bash_guard(json!({"type": "wasm", "on_failure": "block", "plugin": plugin}));
    let answer = skill_shell(&hooks, "git commit -m 'fixed the parser'");
    assert!(denied_with(&answer, "Conventional Commits"), "{answer}");
}

#[test]
fn a_js_wasm_guard_stops_a_slash_commands_shell() {
    let plugin = crate::built_examples::built_example("new-dependencies-js");
    let hooks = bash_guard(
        json!({"type": "wasm", "on_failure": "block", "plugin": plugin,
        "config": {"allowed": ["requests"]}}),
    );
    let answer = skill_shell(&hooks, "pip install reqests");
    assert!(denied_with(&answer, "typosquat"), "{answer}");
}

#[test]
fn a_command_guard_sees_a_slash_commands_shell_as_a_bash_call() {
    // It tests the name it was written for: PreToolUse, with the one it
    // came as beside it.
    let hooks = bash_guard(json!({"type": "command", "command":
        "python3 -c \"import json,sys; e=json.load(sys.stdin); \
         ok = e['hook_event_name'] == 'PreToolUse' and e['original_event_name'] == 'PreSkillShellCommand' \
              and 'rm -rf' in e['tool_input']['command']; \
         print(json.dumps({'decision': 'block', 'reason': 'seen as a Bash call'}) if ok else '{}')\""}));
    let answer = skill_shell(&hooks, "rm -rf victim");
    assert!(denied_with(&answer, "seen as a Bash call"), "{answer}");
}

#[test]
fn an_inline_guard_stops_a_slash_commands_shell() {
    let hooks = bash_guard(
        json!({"type": "inline", "rules": [{"field": "hook_event_name",
        "operator": "equals", "value": "PreToolUse", "action": "deny", "reason": "a Bash call"}]}),
    );
    assert!(denied_with(
        &skill_shell(&hooks, "rm -rf victim"),
        "a Bash call"
    ));
}
