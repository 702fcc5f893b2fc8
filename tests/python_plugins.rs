//! Python plugins (#19): `wasm-hooks new --lang python`, the Python SDK's
//! native tests (unittest, with `wasm_hooks.testing`), `wasm-hooks build`
//! (componentize-py, installed once into the cache directory), and the
//! built components answering through `wasm-hooks test` and `run` — a
//! scaffold and the example plugin `example-plugins/conventional-commits-py`.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// Where `build` installs componentize-py for the tests: kept between runs
/// (beside the guests' build), so it is downloaded once per checkout.
fn toolchain_cache() -> PathBuf {
    support::workspace_root().join("target/plugins/toolchains")
}

fn wasm_hooks(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .current_dir(dir)
        .args(args)
        .env("WASM_HOOKS_CACHE_DIR", toolchain_cache())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap()
}

fn succeeded(what: &str, out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed: {text}");
    text
}

/// `wasm-hooks build` in `dir`, one at a time (the first installs the
/// toolchain); what it printed.
fn build(dir: &Path) -> String {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    succeeded("wasm-hooks build", &wasm_hooks(dir, &["build"]))
}

/// The plugin's native tests, with the SDK at `sdk` (none: its own copy).
fn unittest(dir: &Path, sdk: Option<&Path>) -> String {
    let mut command = Command::new("python3");
    command.current_dir(dir).args(["-m", "unittest", "-v"]);
    if let Some(sdk) = sdk {
        command.env("PYTHONPATH", sdk);
    }
    succeeded("python3 -m unittest", &command.output().unwrap())
}

#[test]
fn a_python_plugin_from_new_passes_its_native_tests_builds_and_decides() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("no-sudo");
    succeeded(
        "new",
        &wasm_hooks(
            parent.path(),
            &[
                "new",
                "--lang",
                "python",
                "no-sudo",
                "--dir",
                dir.to_str().unwrap(),
            ],
        ),
    );
    let native = unittest(&dir, None);
    assert!(native.contains("Ran 2 tests"), "{native}");
    let built = build(&dir);
    assert!(built.contains("build/no_sudo.wasm"), "{built}");
    assert!(built.contains("world:  wasm-hooks:hook@0.2.0"), "{built}");
    let tested = succeeded("wasm-hooks test", &wasm_hooks(&dir, &["test"]));
    assert!(tested.contains("3 tests: 3 passed, 0 failed"), "{tested}");
    let ran = wasm_hooks(
        &dir,
        &[
            "run",
            "-c",
            "hooks.json",
            "--event",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            r#"{"command": "sudo shutdown now"}"#,
        ],
    );
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");
    assert!(String::from_utf8_lossy(&ran.stdout).contains("`sudo` is not allowed"));
}

#[test]
fn the_python_example_passes_its_native_and_policy_tests_and_fails_loudly() {
    let source = support::workspace_root().join("example-plugins/conventional-commits-py");
    let sdk = support::workspace_root().join("guest-sdk/python");
    let native = unittest(&source, Some(&sdk));
    assert!(native.contains("OK"), "{native}");
    // Built in a copy (the build writes build/ beside app.py); the SDK is
    // the one `wasm-hooks` carries.
    let copy = tempfile::tempdir().unwrap();
    let dir = copy.path().join("conventional-commits-py");
    std::fs::create_dir_all(dir.join("fixtures")).unwrap();
    for file in ["app.py", "hooks.json", "fixtures/commits.yaml"] {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    build(&dir);
    let tested = succeeded("wasm-hooks test", &wasm_hooks(&dir, &["test"]));
    assert!(tested.contains("4 tests: 4 passed, 0 failed"), "{tested}");
    // A Python exception is a hook failure with its message, and this
    // hook file blocks on failure: a misspelt config key stops the commit
    // instead of letting every message through.
    let hooks = std::fs::read_to_string(dir.join("hooks.json"))
        .unwrap()
        .replace(r#""max_subject": 60"#, r#""max_subjet": 60"#);
    std::fs::write(dir.join("hooks.json"), hooks).unwrap();
    let ran = wasm_hooks(
        &dir,
        &[
            "run",
            "-c",
            "hooks.json",
            "--event",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            r#"{"command": "git commit -m 'fix: x'"}"#,
        ],
    );
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");
    let said = String::from_utf8_lossy(&ran.stdout);
    assert!(
        said.contains("HookError: unknown config keys ['max_subjet']"),
        "{said}"
    );
}
