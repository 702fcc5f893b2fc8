//! From nothing to a tested plugin: `wasm-hooks new` makes a crate,
//! `wasm-hooks build` builds it for wasm32-wasip2, `wasm-hooks test`
//! passes its generated fixtures against its generated hook file, and
//! `cargo test` passes its native tests (the SDK's mock host).

use crate::support;

use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

fn wasm_hooks() -> Command {
    Command::cargo_bin("wasm-hooks").unwrap()
}

#[test]
fn a_new_plugin_builds_and_passes_its_own_fixtures() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("no-rm");
    wasm_hooks()
        .args(["new", "no-rm", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(contains("created the plugin crate no-rm"));
    for file in [
        "Cargo.toml",
        "src/lib.rs",
        "hooks.json",
        "fixtures/basic.yaml",
        "README.md",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    // Share compiled dependencies with the other guest builds, at the same
    // versions: the crate's `target/` is the workspace's plugin target.
    let shared = support::workspace_root().join("target/plugins");
    std::fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::symlink(&shared, dir.join("target")).unwrap();
    std::fs::copy(
        support::workspace_root().join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();

    wasm_hooks()
        .arg("build")
        .arg(&dir)
        .assert()
        .success()
        .stdout(
            contains("no_rm.wasm")
                .and(contains("world:  wasm-hooks:hook@0.2.0"))
                .and(contains("size:")),
        );
    // A copy where the hook file finds it, wherever cargo built it.
    assert!(dir.join("build/no_rm.wasm").is_file());
    wasm_hooks()
        .arg("test")
        .arg(&dir)
        .assert()
        .success()
        .stdout(contains("3 tests: 3 passed, 0 failed"));
    // Its logic, natively: `cargo test` with the SDK's mock host.
    let native = std::process::Command::new(std::env::var_os("CARGO").unwrap_or("cargo".into()))
        .arg("test")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&native.stdout);
    assert!(
        native.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&native.stderr)
    );
    assert!(said.contains("3 passed"), "{said}");
}

#[test]
fn new_refuses_bad_names_and_full_directories() {
    let parent = tempfile::tempdir().unwrap();
    wasm_hooks()
        .args(["new", "9lives", "--dir"])
        .arg(parent.path().join("x"))
        .assert()
        .code(1)
        .stderr(contains("is not a crate name"));
    std::fs::write(parent.path().join("taken"), "").unwrap();
    wasm_hooks()
        .args(["new", "ok-name", "--dir"])
        .arg(parent.path())
        .assert()
        .code(1)
        .stderr(contains("exists and is not empty"));
}

#[test]
fn build_says_what_is_missing() {
    let empty = tempfile::tempdir().unwrap();
    wasm_hooks()
        .arg("build")
        .arg(empty.path())
        .assert()
        .code(1)
        .stderr(contains(
            "is not a plugin folder: a Rust plugin has a Cargo.toml",
        ));
}
