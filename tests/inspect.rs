//! `wasm-hooks inspect` and `PluginInfo` on real components: the SDK's
//! stamp, imports, exports and the capabilities they allow, the cache
//! entry; and clear errors for files that are not components.

use crate::support;

use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::Value;
use support::plugin;
use wasm_hooks_wasm::PluginInfo;

fn wasm_hooks() -> Command {
    Command::cargo_bin("wasm-hooks").unwrap()
}

#[test]
fn an_sdk_plugin_shows_its_world_exports_and_capabilities() {
    let info = PluginInfo::read(&plugin("deny-dangerous-commands")).unwrap();
    assert_eq!(info.wit, ["wasm-hooks:hook@0.2.0"]);
    assert!(info.compatible);
    assert_eq!(info.exports, ["wasm-hooks:hook/handler@0.2.0"]);
    assert!(
        info.imports
            .iter()
            .any(|i| i == "wasm-hooks:hook/host@0.2.0")
    );
    let capabilities = info.capabilities();
    assert!(capabilities.iter().any(|c| c.starts_with("host: ")));
    assert!(
        !capabilities.iter().any(|c| c.contains("not provided")),
        "{capabilities:#?}"
    );
    assert_eq!(info.sha256.len(), 64);
}

#[test]
fn every_example_plugin_is_a_compatible_hook_component() {
    for (package, reads_files) in [
        ("deny-dangerous-commands", false),
        ("protect-paths", false),
        ("inject-project-context", true),
        ("require-tests-before-stop", true),
        ("rate-limit-tools", false),
        ("redact-secrets", false),
    ] {
        let info = PluginInfo::read(&plugin(package)).unwrap();
        assert!(info.compatible, "{package}");
        assert_eq!(info.exports, ["wasm-hooks:hook/handler@0.2.0"], "{package}");
        let kv = info
            .imports
            .iter()
            .any(|i| i.starts_with("wasm-hooks:hook/kv@"));
        assert_eq!(
            kv,
            package == "rate-limit-tools",
            "{package}: only it imports kv"
        );
        let files = info.capabilities().iter().any(|c| c.starts_with("files: "));
        assert_eq!(files, reads_files, "{package}: {:#?}", info.capabilities());
    }
}

#[test]
fn a_plugin_that_touches_files_and_the_network_says_so() {
    let capabilities = PluginInfo::read(&plugin("hostile-snoop"))
        .unwrap()
        .capabilities();
    for expected in ["files: only directories granted", "network: always refused"] {
        assert!(
            capabilities.iter().any(|c| c.starts_with(expected)),
            "{expected}: {capabilities:#?}"
        );
    }
}

#[test]
fn the_cli_reports_the_cache_entry_and_json() {
    let cache = tempfile::tempdir().unwrap();
    let path = plugin("deny-dangerous-commands");
    wasm_hooks()
        .arg("inspect")
        .arg("--cache-dir")
        .arg(cache.path())
        .arg(&path)
        .assert()
        .success()
        .stdout(
            contains("world:   wasm-hooks:hook@0.2.0").and(contains("not in the compile cache")),
        );
    wasm_hooks()
        .arg("compile")
        .arg("--cache-dir")
        .arg(cache.path())
        .arg(&path)
        .assert()
        .success();
    let out = wasm_hooks()
        .arg("inspect")
        .arg("--json")
        .arg("--cache-dir")
        .arg(cache.path())
        .arg(&path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let described: Value = serde_json::from_slice(&out).unwrap();
    let cached = described[0]["cached"].as_str().unwrap();
    assert!(
        cached.starts_with(cache.path().to_str().unwrap()),
        "{described:#}"
    );
    assert_eq!(described[0]["exports"][0], "wasm-hooks:hook/handler@0.2.0");
}

#[test]
fn other_worlds_missing_imports_and_non_components_are_told_apart() {
    wasm_hooks()
        .arg("inspect")
        .arg(plugin("hostile-other-world"))
        .assert()
        .success()
        .stdout(contains("no wasm-hooks stamp").and(contains("exports: greet")));

    let dir = tempfile::tempdir().unwrap();
    let wat = support::workspace_root().join("tests/hostile/missing-import/missing-import.wat");
    let missing = dir.path().join("missing-import.wasm");
    std::fs::write(&missing, wat::parse_file(wat).unwrap()).unwrap();
    wasm_hooks()
        .arg("inspect")
        .arg(&missing)
        .assert()
        .success()
        .stdout(contains(
            "`wasm-hooks:missing/thing@0.1.0`: not provided by this host",
        ));

    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let text = dir.path().join("notes.wasm");
    std::fs::write(&text, "hello").unwrap();
    wasm_hooks()
        .arg("inspect")
        .arg(&core)
        .arg(&text)
        .assert()
        .code(1)
        .stderr(
            contains("core.wasm: is a core wasm module, not a component")
                .and(contains("notes.wasm: is not a WebAssembly file")),
        );
}
