//! From nothing to a tested plugin: `wasm-hooks new` makes a crate,
//! `wasm-hooks build` builds it for wasm32-wasip2, `wasm-hooks test`
//! passes its generated fixtures against its generated hook file, and
//! `cargo test` passes its native tests (the SDK's mock host).

use std::path::{Path, PathBuf};

use crate::support;

use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

fn wasm_hooks() -> Command {
    Command::cargo_bin("wasm-hooks").unwrap()
}

/// A copy of this checkout's SDK `folder` (`python/wasm_hooks`) under
/// `sdk`, another guest-sdk folder: its regular files only. The copy's
/// folder.
fn copy_of_the_checkouts_sdk(sdk: &Path, folder: &str) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk");
    let theirs = sdk.join(folder);
    std::fs::create_dir_all(&theirs).unwrap();
    for entry in std::fs::read_dir(repo.join(folder)).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), theirs.join(entry.file_name())).unwrap();
        }
    }
    theirs
}

/// Share compiled dependencies with the other guest builds, at the same
/// versions: the crate's `target/` is the workspace's plugin target, its
/// lockfile the workspace's. That target.
fn share_the_guest_target(dir: &Path) -> PathBuf {
    let shared = support::workspace_root().join("target/plugins");
    std::fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::symlink(&shared, dir.join("target")).unwrap();
    std::fs::copy(
        support::workspace_root().join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    shared
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
        "wasm-hooks-guest/Cargo.toml",
        "wasm-hooks-guest/wit/0.2.0/hook.wit",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    // It builds anywhere: the SDK is its own copy, not a path into this
    // checkout.
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(r#"wasm-hooks-guest = { path = "wasm-hooks-guest" }"#),
        "{manifest}"
    );
    assert!(!manifest.contains(env!("CARGO_MANIFEST_DIR")), "{manifest}");
    let shared = share_the_guest_target(&dir);

    wasm_hooks()
        .arg("build")
        .arg(&dir)
        .assert()
        .success()
        .stdout(
            contains("no_rm.wasm")
                .and(contains("world:  wasm-hooks:hook@0.2.0"))
                .and(contains("size:"))
                .and(contains(
                    "config: checked at load against config.schema.json",
                )),
        );
    // A copy where the hook file finds it, wherever cargo built it.
    assert!(dir.join("build/no_rm.wasm").is_file());
    // The scaffold follows the project's own advice: no warning.
    wasm_hooks()
        .current_dir(&dir)
        .args(["validate", "--deny-warnings", "hooks.json"])
        .assert()
        .success()
        .stdout(contains("ok: 1 hook in 1 file"));
    wasm_hooks()
        .arg("test")
        .arg(&dir)
        .assert()
        .success()
        .stdout(contains("3 tests: 3 passed, 0 failed"));
    // Its logic, natively: `cargo test` with the SDK's mock host.
    let native = support::cargo()
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

    // The same sources in another folder build the same bytes.
    let sha = |path: &Path| {
        use sha2::Digest as _;
        sha2::Sha256::digest(std::fs::read(path).unwrap())
    };
    let copy = parent.path().join("elsewhere/no-rm");
    std::fs::create_dir_all(&copy).unwrap();
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "src/lib.rs",
        "hooks.json",
        "config.schema.json",
    ] {
        std::fs::create_dir_all(copy.join(file).parent().unwrap()).unwrap();
        std::fs::copy(dir.join(file), copy.join(file)).unwrap();
    }
    let out = std::process::Command::new("cp")
        .arg("-r")
        .arg(dir.join("wasm-hooks-guest"))
        .arg(&copy)
        .output()
        .unwrap();
    assert!(out.status.success());
    std::os::unix::fs::symlink(&shared, copy.join("target")).unwrap();
    wasm_hooks().arg("build").arg(&copy).assert().success();
    assert_eq!(
        sha(&dir.join("build/no_rm.wasm")),
        sha(&copy.join("build/no_rm.wasm")),
        "a Rust plugin's build is the same wherever its folder is"
    );

    // A source changed after the build: `test` refuses the old component.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let lib = dir.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, text + "\n// changed\n").unwrap();
    wasm_hooks()
        .arg("test")
        .arg(&dir)
        .assert()
        .code(1)
        .stderr(contains("src/lib.rs changed after").and(contains("run `wasm-hooks build")));
}

/// A Rust plugin on a copy of the SDK folder (`--sdk-path`), away from the
/// checkout, builds: the SDK's manifest inherits nothing from a workspace.
#[test]
fn a_rust_plugin_builds_on_a_copied_sdk_of_sdk_path() {
    let parent = tempfile::tempdir().unwrap();
    let sdk = parent.path().join("vendor/guest-sdk");
    std::fs::create_dir_all(parent.path().join("vendor")).unwrap();
    let out = std::process::Command::new("cp")
        .arg("-rL")
        .arg(support::workspace_root().join("guest-sdk"))
        .arg(&sdk)
        .output()
        .unwrap();
    assert!(out.status.success());
    let dir = parent.path().join("no-rm");
    wasm_hooks()
        .args(["new", "no-rm", "--sdk-path"])
        .arg(&sdk)
        .arg("--dir")
        .arg(&dir)
        .assert()
        .success();
    assert!(!dir.join("wasm-hooks-guest").exists());
    share_the_guest_target(&dir);
    wasm_hooks()
        .arg("build")
        .arg(&dir)
        .assert()
        .success()
        .stdout(contains("world:  wasm-hooks:hook@0.2.0"));
}

/// The SDK's manifest names its versions itself (so that copies of it
/// build anywhere); they must stay the workspace's.
#[test]
fn the_sdk_manifest_keeps_the_workspace_versions() {
    let root = support::workspace_root();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let sdk = std::fs::read_to_string(root.join("guest-sdk/Cargo.toml")).unwrap();
    for line in [
        r#"wit-bindgen = "0.60""#,
        r#"serde_json = "1""#,
        r#"serde = { version = "1", features = ["derive"] }"#,
        r#"rust-version = "1.95""#,
        r#"version = "0.1.0""#,
        r#"edition = "2024""#,
    ] {
        assert!(
            workspace.lines().any(|l| l == line),
            "the workspace has {line}"
        );
        assert!(sdk.lines().any(|l| l == line), "the SDK has {line}");
    }
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
fn a_python_or_js_plugin_copies_the_sdk_of_sdk_path_and_refuses_sdk_version() {
    let parent = tempfile::tempdir().unwrap();
    let sdk = parent.path().join("guest-sdk");
    for (lang, folder, file) in [
        ("python", "python/wasm_hooks", "__init__.py"),
        ("js", "js/wasm_hooks", "index.js"),
    ] {
        // Another SDK: the checkout's, marked.
        let theirs = copy_of_the_checkouts_sdk(&sdk, folder);
        let marked = format!(
            // A copy, not a template: `{{name}}` stays as it is.
            "{}\n// marker {{{{name}}}}\n",
            std::fs::read_to_string(theirs.join(file)).unwrap()
        );
        std::fs::write(theirs.join(file), &marked).unwrap();
        let dir = parent.path().join(format!("from-path-{lang}"));
        wasm_hooks()
            .args(["new", "x", "--lang", lang, "--sdk-path"])
            .arg(&sdk)
            .arg("--dir")
            .arg(&dir)
            .assert()
            .success();
        assert_eq!(
            std::fs::read_to_string(dir.join("wasm_hooks").join(file)).unwrap(),
            marked,
            "{lang}: the SDK of --sdk-path, not the built-in one"
        );
        let refused = parent.path().join(format!("versioned-{lang}"));
        wasm_hooks()
            .args([
                "new",
                "x",
                "--lang",
                lang,
                "--sdk-version",
                "0.1.0",
                "--dir",
            ])
            .arg(&refused)
            .assert()
            .code(1)
            .stderr(contains("only a Rust plugin depends on a published SDK"));
        assert!(!refused.exists(), "{lang}: nothing written when refused");
    }
    let missing = parent.path().join("missing");
    wasm_hooks()
        .args(["new", "x", "--lang", "python", "--sdk-path"])
        .arg(parent.path().join("nowhere"))
        .arg("--dir")
        .arg(&missing)
        .assert()
        .code(1)
        .stderr(contains("python/wasm_hooks/__init__.py"));
    assert!(!missing.exists(), "nothing written when the SDK is missing");
}

#[test]
fn new_sdk_path_refuses_an_sdk_file_that_is_a_symlink() {
    const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY----- the person's own";
    let parent = tempfile::tempdir().unwrap();
    let secret = parent.path().join("id_rsa");
    std::fs::write(&secret, SECRET).unwrap();
    // A checkout whose SDK file is a link to the person's key.
    let sdk = parent.path().join("guest-sdk");
    let linked = copy_of_the_checkouts_sdk(&sdk, "python/wasm_hooks").join("_host.py");
    std::fs::remove_file(&linked).unwrap();
    std::os::unix::fs::symlink(&secret, &linked).unwrap();
    let dir = parent.path().join("plugin");
    wasm_hooks()
        .args(["new", "x", "--lang", "python", "--sdk-path"])
        .arg(&sdk)
        .arg("--dir")
        .arg(&dir)
        .assert()
        .code(1)
        .stderr(contains("python/wasm_hooks/_host.py").and(contains("refusing to copy it")));
    let mut folders = vec![dir];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                assert!(
                    !text.contains(SECRET),
                    "the key copied to {}",
                    path.display()
                );
            }
        }
    }
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
