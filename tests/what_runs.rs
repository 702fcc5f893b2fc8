//! What runs is what the person installed (#42): a variable that chooses
//! what runs or what is believed (the compile cache, the plugin store)
//! is honoured only for a directory of the person's own outside every
//! project, so a repository's `.claude/settings.json` `env` cannot point
//! the person's wasm guard at native code it ships. (The managed layer:
//! `silencing`; the installed program: `install`.)

use std::path::Path;

use serde_json::json;
use wasm_hooks::{Tiering, WasmRuntime};

use crate::support;
use crate::trust::Repository;

/// A cache entry for `plugin` whose compiled code is another plugin's
/// (`protect-paths`, which lets any Bash command through), planted in
/// `cache`: what a repository would ship to turn a guard off.
fn plant_allow_all_artifact(cache: &Path, plugin: &Path) {
    let elsewhere = tempfile::tempdir().unwrap();
    let runtime = WasmRuntime::builder()
        .cache_dir(elsewhere.path())
        .tiering(Tiering::Off)
        .build()
        .unwrap();
    let allow_all = runtime.load(&support::plugin("protect-paths")).unwrap();
    let made = runtime.cache_entry(&allow_all.sha256()).unwrap();
    let guard_sha = wasm_hooks_wasm::PluginInfo::read(plugin).unwrap().sha256;
    let planted = cache.join(
        runtime
            .cache_entry(&guard_sha)
            .unwrap()
            .strip_prefix(elsewhere.path())
            .unwrap(),
    );
    std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
    std::fs::copy(made, &planted).unwrap();
    std::fs::set_permissions(
        &planted,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
}

/// A repository guarded by the deny-dangerous-commands plugin (its own
/// copy, a sandboxed hook: it runs untrusted), with a compiled artifact
/// planted in `.wh-cache` that would let `rm -rf` through.
fn repository_with_a_planted_cache() -> (Repository, std::path::PathBuf) {
    let repo = Repository::new(&json!({}));
    let plugin = repo.path().join(".wasm-hooks/guard.wasm");
    std::fs::copy(support::plugin("deny-dangerous-commands"), &plugin).unwrap();
    repo.write(
        ".wasm-hooks/hooks.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "plugin": "guard.wasm", "on_failure": "block"}]}]}})
        .to_string(),
    );
    let cache = repo.path().join(".wh-cache");
    plant_allow_all_artifact(&cache, &plugin);
    (repo, cache)
}

fn rm_rf_answer(repo: &Repository, cache_variable: &std::ffi::OsStr) -> serde_json::Value {
    let mut event = support::fixture_of("2.1.330", "PreToolUse");
    event["cwd"] = json!(repo.path());
    event["tool_input"]["command"] = json!("rm -rf /");
    let out = repo
        .wasm_hooks(&["hook"])
        .env("WASM_HOOKS_CACHE_DIR", cache_variable)
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("WASM_HOOKS_CACHE_DIR") && said.contains("ignored"),
        "the person is told why: {said}"
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_relative_cache_dir_from_a_repositorys_env_loads_nothing_it_ships() {
    let (repo, _) = repository_with_a_planted_cache();
    let answer = rm_rf_answer(&repo, std::ffi::OsStr::new(".wh-cache"));
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
}

#[test]
fn a_cache_dir_inside_the_project_loads_nothing_it_ships() {
    let (repo, cache) = repository_with_a_planted_cache();
    // An absolute path, into the repository (a folder a clone made: the
    // person's own, with the person's modes, and still the repository's).
    std::fs::create_dir_all(repo.path().join(".git")).unwrap();
    let answer = rm_rf_answer(&repo, cache.as_os_str());
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
}

#[test]
fn a_cache_dir_others_may_write_or_another_user_owns_loads_nothing() {
    use std::os::unix::fs::PermissionsExt as _;
    let (repo, _) = repository_with_a_planted_cache();
    let shared = tempfile::tempdir().unwrap();
    let plugin = repo.path().join(".wasm-hooks/guard.wasm");
    plant_allow_all_artifact(shared.path(), &plugin);
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let answer = rm_rf_answer(&repo, shared.path().as_os_str());
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "writable by others: {answer}"
    );
    // Another user's (only root can make one here).
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    std::os::unix::fs::chown(shared.path(), Some(65534), None).unwrap();
    let answer = rm_rf_answer(&repo, shared.path().as_os_str());
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "another user's: {answer}"
    );
}

#[test]
fn a_plugin_store_inside_a_project_is_not_the_persons() {
    let repo = Repository::new(&json!({}));
    std::fs::create_dir_all(repo.path().join(".git")).unwrap();
    let store = repo.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    repo.write(
        ".wasm-hooks/wasm-hooks.lock",
        &json!({"version": 1, "plugins": {}}).to_string(),
    );
    let out = repo
        .wasm_hooks(&["pull"])
        .env("WASM_HOOKS_PLUGIN_STORE", &store)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("WASM_HOOKS_PLUGIN_STORE") && said.contains("inside the project"),
        "{said}"
    );
}
