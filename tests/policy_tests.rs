//! `wasm-hooks test`: the example plugins' own fixtures pass; a wrong
//! fixture fails with both sides of each difference (and exit code 1);
//! broken fixtures and missing hook files are reported, not skipped.

use crate::support;

use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::{Value, json};

fn wasm_hooks() -> Command {
    Command::cargo_bin("wasm-hooks").unwrap()
}

/// `wasm-hooks test PATH`, which must fail (exit code 1).
fn failing(path: &std::path::Path) -> assert_cmd::assert::Assert {
    wasm_hooks().arg("test").arg(path).assert().code(1)
}

#[test]
fn the_example_plugins_fixtures_pass() {
    for (package, tests) in [
        ("deny-dangerous-commands", 6),
        ("protect-paths", 5),
        ("inject-project-context", 3),
        ("require-tests-before-stop", 5),
        ("rate-limit-tools", 12),
        ("redact-secrets", 4),
    ] {
        support::plugin(package);
        let dir = support::workspace_root()
            .join("example-plugins")
            .join(package);
        wasm_hooks()
            .arg("test")
            .arg(&dir)
            .assert()
            .success()
            .stdout(contains(format!("{tests} tests: {tests} passed, 0 failed")));
    }
}

/// A folder with the deny-dangerous-commands hook file and these fixtures.
fn suite(fixtures: &[(&str, &str)]) -> tempfile::TempDir {
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "wasm", "plugin": support::plugin("deny-dangerous-commands")}]}]}});
    folder(&hooks, fixtures)
}

/// A folder with the hook file `hooks` and these fixtures.
fn folder(hooks: &Value, fixtures: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hooks.json"), hooks.to_string()).unwrap();
    std::fs::create_dir(dir.path().join("fixtures")).unwrap();
    for (name, text) in fixtures {
        std::fs::write(dir.path().join("fixtures").join(name), text).unwrap();
    }
    dir
}

const WRONG: &str = "\
name: rm -rf / is allowed (it is not)
event: {hook_event_name: PreToolUse, tool_name: Bash, tool_input: {command: rm -rf /}}
expect: {decision: allow, reason: harmless}
";

#[test]
fn a_wrong_fixture_fails_with_a_diff() {
    let dir = suite(&[("wrong.yaml", WRONG)]);
    failing(dir.path()).stdout(
        contains("FAIL")
            .and(contains("rm -rf / is allowed (it is not)"))
            .and(contains(
                "decision\n       - expected: allow\n       + got:      deny",
            ))
            .and(contains(
                "reason\n       - expected: to contain \"harmless\"",
            ))
            .and(contains("dangerous pattern `rm -rf /`"))
            .and(contains("1 test: 0 passed, 1 failed")),
    );
    let out = wasm_hooks()
        .args(["test", "--json"])
        .arg(dir.path())
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(report["tests"][0]["mismatches"][0]["field"], "decision");
    assert_eq!(report["tests"][0]["mismatches"][0]["got"], "deny");
}

#[test]
fn rewrites_and_context_are_checked_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": {"command": "ls -la", "timeout": 5},
        "additionalContext": "rewritten by the test hook"}});
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "args": ["echo", answer.to_string()]}]}]}});
    std::fs::write(dir.path().join("hooks.json"), hooks.to_string()).unwrap();
    let fixture = "\
event: {hook_event_name: PreToolUse, tool_name: Bash, tool_input: {command: ls}}
expect:
  decision: allow
  updated_input: {command: ls -la, timeout: 6}
  context: rewritten
";
    std::fs::write(dir.path().join("rewrite.yaml"), fixture).unwrap();
    // A command hook: the person's own file, named with -c.
    wasm_hooks()
        .arg("test")
        .arg("-c")
        .arg(dir.path().join("hooks.json"))
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(
            contains("updated_input.timeout\n       - expected: 6\n       + got:      5")
                .and(contains("updated_input.command").not())
                .and(contains("context").not()),
        );
}

#[test]
fn broken_fixtures_and_missing_hook_files_are_failures() {
    let dir = suite(&[
        ("typo.yaml", "event: {}\nexpect: {verdict: deny}\n"),
        ("ok.yaml", &WRONG.replace("allow, reason: harmless", "deny")),
    ]);
    failing(dir.path()).stdout(
        contains("typo.yaml")
            .and(contains("unknown field `verdict`"))
            .and(contains("2 tests: 1 passed, 1 failed")),
    );
    let lonely = tempfile::tempdir().unwrap();
    std::fs::write(lonely.path().join("t.yaml"), WRONG).unwrap();
    failing(&lonely.path().join("t.yaml")).stdout(contains("no hook file"));
}

#[test]
fn a_failing_hook_fails_the_test_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "wasm", "plugin": support::plugin("hostile-panic")}]}]}});
    std::fs::write(dir.path().join("hooks.json"), hooks.to_string()).unwrap();
    let fixture = "\
tests:
  - name: strict
    event: {hook_event_name: PreToolUse, tool_name: Bash, tool_input: {command: ls}}
    expect: {decision: proceed}
  - name: tolerant
    event: {hook_event_name: PreToolUse, tool_name: Bash, tool_input: {command: ls}}
    expect: {decision: proceed, allow_failures: true}
";
    std::fs::write(dir.path().join("panic.yaml"), fixture).unwrap();
    failing(dir.path()).stdout(
        contains("FAIL")
            .and(contains("hooks\n       - expected: no hook failure"))
            .and(contains("boom from the panic plugin"))
            .and(contains("ok   "))
            .and(contains("2 tests: 1 passed, 1 failed")),
    );
}

#[test]
fn test_in_a_cloned_repository_does_not_run_its_command_hooks_unless_named_with_c() {
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": format!("touch '{}'", ran.display())}]}]}});
    std::fs::write(dir.path().join("hooks.json"), hooks.to_string()).unwrap();
    std::fs::create_dir(dir.path().join("fixtures")).unwrap();
    std::fs::write(
        dir.path().join("fixtures/ls.yaml"),
        "name: ls\nevent: {hook_event_name: PreToolUse, tool_name: Bash, tool_input: {command: ls}}\nexpect: {decision: proceed}\n",
    )
    .unwrap();
    failing(dir.path()).stdout(contains("name the file with -c"));
    assert!(!ran.exists(), "a repository's command ran under `test`");
    wasm_hooks()
        .arg("test")
        .arg("-c")
        .arg(dir.path().join("hooks.json"))
        .arg(dir.path().join("fixtures"))
        .assert()
        .success();
    assert!(ran.exists(), "named with -c, it is the person's choice");
}

/// A folder whose hook file has two inline deny rules on Bash (`no-rm`
/// on `rm`, `no-root` on ` /`), with these fixtures.
fn two_rules(fixtures: &[(&str, &str)]) -> tempfile::TempDir {
    let rule = |name: &str, word: &str| {
        json!({"name": name, "type": "inline", "rules": [{"field": "tool_input.command",
            "operator": "contains", "value": word, "action": "deny", "reason": format!("no {word}")}]})
    };
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [rule("no-rm", "rm"), rule("no-root", " /")]}]}});
    folder(&hooks, fixtures)
}

/// A fixture for an event no hook of the file is on says so, instead of
/// failing with `got ""` (or passing while it tests nothing).
#[test]
fn a_fixture_for_an_event_no_hook_is_on_says_so() {
    let dir = two_rules(&[
        (
            "start.yaml",
            "name: session start adds notes\n\
             event: {hook_event_name: SessionStart, source: startup}\n\
             expect: {context: notes}\n",
        ),
        (
            "stop.yaml",
            "name: stop goes on\nevent: {hook_event_name: Stop}\nexpect: {decision: proceed}\n",
        ),
    ]);
    failing(dir.path()).stdout(
        contains("no hook of this file is on SessionStart (its hooks: it is on PreToolUse)")
            .and(contains("no hook of this file is on Stop"))
            .and(contains("got:      \"\"").not())
            .and(contains("2 tests: 0 passed, 2 failed")),
    );
}

/// A fixture may name the hook it exercises: the test fails when another
/// hook decided, or when the named one did not run; a name no hook has is
/// an error that lists the names there are.
#[test]
fn a_fixture_names_the_hook_it_exercises() {
    let event = "event: {hook_event_name: PreToolUse, tool_name: Bash, tool_input: {command: rm -rf /}}\n\
                 expect: {decision: deny}\n";
    let dir = two_rules(&[
        (
            "a-right.yaml",
            &format!("name: right\nhook: no-rm\n{event}"),
        ),
        (
            "b-other.yaml",
            &format!("name: other\nhook: no-root\n{event}"),
        ),
        ("c-typo.yaml", &format!("name: typo\nhook: no-rn\n{event}")),
    ]);
    failing(dir.path()).stdout(
        contains("ok   ")
            .and(contains("right"))
            .and(contains(
                "hook\n       - expected: `no-root` runs, and no other hook decides\n       + got:      it was not reached: a hook before it decided",
            ))
            .and(contains("no hook named `no-rn` in this file (its hooks: no-rm, no-root)"))
            .and(contains("3 tests: 1 passed, 2 failed")),
    );
}

/// `test --coverage` names the hooks no fixture ran and the inline rules
/// no fixture made decide (like `opa test --coverage`), in words and in
/// `--json`.
#[test]
fn coverage_names_the_hooks_and_rules_no_fixture_reached() {
    let dir = two_rules(&[(
        "rm.yaml",
        "name: rm is denied\nhook: no-rm\n\
         event: {hook_event_name: PreToolUse, tool_name: Bash, tool_input: {command: rm x}}\n\
         expect: {decision: deny}\n",
    )]);
    wasm_hooks()
        .args(["test", "--coverage"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(
            contains("coverage: ")
                .and(contains("1 of 2 hooks ran"))
                .and(contains("not run by any test: no-root ("))
                .and(contains("no-root: rule 1 (deny: no  /) decided no test"))
                .and(contains("no-rm: rule 1").not()),
        );
    let out = wasm_hooks()
        .args(["test", "--coverage", "--json"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(report["coverage"][0]["total"], 2, "{report}");
    assert_eq!(
        report["coverage"][0]["not_run"][0][0], "no-root",
        "{report}"
    );
    assert_eq!(
        report["coverage"][0]["rules_never_decided"][0][0], "no-root",
        "{report}"
    );
}
