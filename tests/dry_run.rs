//! Trying a guard out before it guards (#45): `enforcement: dryrun | warn
//! | enforce` per hook, per file, and for the person's and the
//! organisation's layers. A dry run never acts; nobody but the hook's own
//! layer can make a hook one, and a project's edit that would waits for
//! the person's trust like any other.

use crate::support;
use crate::trust::{Repository, denied};

use serde_json::{Value, json};

/// An inline PreToolUse `Bash` guard named `name` refusing commands that
/// contain `text`, with these extra fields.
fn guard(name: &str, text: &str, extra: Value) -> Value {
    let mut entry = json!({"type": "inline", "name": name, "rules": [
        {"field": "tool_input.command", "operator": "contains", "value": text,
         "action": "deny", "reason": format!("{name} refuses it")}]});
    entry
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    entry
}

fn on_bash(hooks: &[Value], top: Value) -> String {
    let mut doc = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}});
    doc.as_object_mut()
        .unwrap()
        .extend(top.as_object().unwrap().clone());
    doc.to_string()
}

/// The organisation's managed hooks: a guard against `git push --force`.
fn organisation() -> tempfile::TempDir {
    let managed = support::managed_dir();
    std::fs::write(
        managed.path().join("hooks.json"),
        on_bash(
            &[guard("org-guard", "git push --force", json!({}))],
            json!({}),
        ),
    )
    .unwrap();
    managed
}

/// `command` through `hook` as Claude Code sends it, with the
/// organisation's hooks in `managed`.
fn bash(repo: &Repository, managed: &tempfile::TempDir, command: &str) -> Value {
    let mut payload = support::fixture_of("2.1.330", "PreToolUse");
    payload["cwd"] = json!(repo.path());
    payload["tool_input"]["command"] = json!(command);
    let out = repo
        .wasm_hooks(&["hook"])
        .env("WASM_HOOKS_MANAGED_DIR", managed.path())
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn a_project_cannot_make_the_persons_or_the_organisations_guard_a_dry_run() {
    // The project tries every way it has: its settings, its file's
    // default, a copy of the person's guard as a dry run, and switching
    // the person's off; and the person trusts it.
    let project_hooks = on_bash(
        &[
            guard("person-guard", "rm -rf", json!({"enforcement": "dryrun"})),
            guard(
                "org-guard",
                "git push --force",
                json!({"enforcement": "dryrun"}),
            ),
            json!({"name": "person-guard", "enabled": false}),
        ],
        json!({"enforcement": "dryrun"}),
    );
    let repo = Repository::new(&serde_json::from_str(&project_hooks).unwrap());
    repo.write_users(
        "hooks.json",
        &on_bash(&[guard("person-guard", "rm -rf", json!({}))], json!({})),
    );
    let managed = organisation();
    repo.trust();
    // Then its settings try too: they may not say it, and the person
    // cannot trust them so.
    repo.write(".wasm-hooks/config.yaml", "enforcement: dryrun\n");
    for _ in 0..2 {
        let rm = bash(&repo, &managed, "rm -rf build");
        assert!(denied(&rm), "the person's guard still guards: {rm}");
        let push = bash(&repo, &managed, "git push --force");
        assert!(
            denied(&push),
            "the organisation's guard still guards: {push}"
        );
        let trusted = repo
            .wasm_hooks(&["trust", "--yes"])
            .env("WASM_HOOKS_MANAGED_DIR", managed.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&trusted.stderr);
        assert!(!trusted.status.success(), "{said}");
        assert!(
            said.contains("`enforcement` may only be set in the user's config"),
            "{said}"
        );
    }
}

#[test]
fn the_persons_layer_default_makes_only_their_own_hooks_a_dry_run() {
    let repo = Repository::new(&json!({}));
    repo.write_users("config.yaml", "enforcement: dryrun\n");
    repo.write_users(
        "hooks.json",
        &on_bash(
            &[
                guard("trial", "rm -rf", json!({})),
                guard("kept", "curl", json!({"enforcement": "enforce"})),
            ],
            json!({}),
        ),
    );
    let managed = organisation();
    assert!(
        !denied(&bash(&repo, &managed, "rm -rf build")),
        "the layer's default"
    );
    assert!(
        denied(&bash(&repo, &managed, "curl x")),
        "an entry's own word wins"
    );
    assert!(
        denied(&bash(&repo, &managed, "git push --force")),
        "the organisation's hooks are not the person's to try out"
    );
}

#[test]
fn an_edit_that_makes_a_trusted_project_guard_a_dry_run_waits_for_the_persons_trust() {
    let hooks = |top: Value| on_bash(&[guard("project-guard", "rm -rf", json!({}))], top);
    let repo = Repository::new(&serde_json::from_str(&hooks(json!({}))).unwrap());
    let managed = support::managed_dir();
    repo.trust();
    assert!(denied(&bash(&repo, &managed, "rm -rf build")));
    // The agent (or anyone) edits the file: what the person trusted
    // answers until they accept the change.
    repo.write(
        ".wasm-hooks/hooks.json",
        &hooks(json!({"enforcement": "dryrun"})),
    );
    let held = bash(&repo, &managed, "rm -rf build");
    assert!(denied(&held), "the trusted version still guards: {held}");
    repo.trust();
    let tried = bash(&repo, &managed, "rm -rf build");
    assert!(!denied(&tried), "accepted: now a dry run: {tried}");
}
