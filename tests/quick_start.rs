//! The README's quick starts, run as written (the only change: `serve`'s
//! port, 8787, becomes a free one): a Claude Code user's blocked `rm -rf`,
//! a plugin author's scaffold from `new` to `validate --deny-warnings`, an
//! operator's `serve`. The docs cannot drift from what the commands do.

use std::path::Path;
use std::process::Command;

/// The commands of the README's quick start `name`, and the text after
/// its block up to the next heading.
fn quick_start(name: &str) -> (String, String) {
    let readme =
        std::fs::read_to_string(crate::support::workspace_root().join("README.md")).unwrap();
    let marker = format!("<!-- quick-start: {name} -->");
    let after = readme
        .split(&marker)
        .nth(1)
        .unwrap_or_else(|| panic!("{marker}"));
    let (block, rest) = after.split_once("<!-- end -->").unwrap();
    let commands = block
        .trim()
        .strip_prefix("```sh\n")
        .and_then(|b| b.strip_suffix("```"))
        .unwrap();
    let text = rest.split("\n#").next().unwrap().to_owned();
    (commands.to_owned(), text)
}

/// Run `script` with bash in `dir`, as a person whose `PATH` starts with
/// the built `wasm-hooks`, with a home of `home`.
fn bash(script: &str, dir: &Path, home: &Path) -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .parent()
        .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("WASM_HOOKS_CACHE_DIR", crate::support::toolchain_cache())
        .env("WASM_HOOKS_DAEMON", "off")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script}\n{said}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A git checkout and a home for it.
fn project() -> (tempfile::TempDir, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let init = Command::new("git")
        .args(["init", "-q"])
        .current_dir(project.path())
        .status()
        .unwrap();
    assert!(init.success());
    (project, home)
}

/// A Claude Code user: `init`, `validate`, `install claude`, and the
/// event Claude Code sends before `rm -rf ~` is denied, with the answer
/// the README shows, byte for byte.
#[test]
fn the_claude_code_quick_start_blocks_rm_rf_as_the_readme_shows() {
    let (project, home) = project();
    let (commands, text) = quick_start("claude");
    let out = bash(&commands, project.path(), home.path());
    let shown = text
        .split("```json\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap();
    assert!(out.ends_with(shown), "{out}\nthe README shows:\n{shown}");
    assert!(
        project.path().join(".claude").is_dir(),
        "install wrote Claude Code's settings"
    );
}

/// An operator: `serve` for the first quick start's project answers
/// `/ready` and denies `rm -rf /` over HTTP.
#[test]
fn the_serve_quick_start_answers_ready_and_denies_over_http() {
    let (project, home) = project();
    bash(&quick_start("claude").0, project.path(), home.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (commands, _) = quick_start("serve");
    let commands = commands
        .replace("--project", &format!("--listen 127.0.0.1:{port} --project"))
        .replace("8787", &port.to_string());
    let out = bash(&commands, project.path(), home.path());
    assert!(
        out.contains(r#""permissionDecision":"deny""#) && out.contains(r#"{"status":"ready"}"#),
        "{out}"
    );
}

/// A plugin author: the Python scaffold, its native tests, its build,
/// its fixtures and a clean `validate --deny-warnings`.
#[test]
fn the_plugin_quick_start_goes_from_new_to_a_clean_validate() {
    let (parent, home) = project();
    let (commands, _) = quick_start("plugin");
    let out = bash(&commands, parent.path(), home.path());
    assert!(
        out.contains("3 tests: 3 passed, 0 failed") && out.contains("ok: 1 hook in 1 file"),
        "{out}"
    );
}
