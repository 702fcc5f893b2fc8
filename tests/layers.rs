//! The host's layers, as its manifests declare them: the core crate runs no
//! WebAssembly, and each crate depends only on the ones below it (cargo
//! refuses cycles; this test refuses an upward or a skipped-over edge).

use crate::support::workspace_root;

/// The normal dependencies a host crate's manifest names.
fn dependencies(krate: &str) -> Vec<String> {
    let path = workspace_root().join("host").join(krate).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let section = text
        .split("\n[")
        .find(|s| s.starts_with("dependencies]"))
        .unwrap_or_else(|| panic!("{} has a [dependencies] table", path.display()));
    section
        .lines()
        .skip(1)
        .filter_map(|line| line.split(['=', '.']).next())
        .map(str::trim)
        .filter(|name| !name.is_empty() && !name.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

fn ours(deps: &[String]) -> Vec<&str> {
    let mut found: Vec<&str> = deps
        .iter()
        .map(String::as_str)
        .filter(|d| d.starts_with("wasm-hooks"))
        .collect();
    found.sort_unstable();
    found
}

#[test]
fn the_core_crate_runs_no_webassembly() {
    let deps = dependencies("core");
    assert!(deps.iter().any(|d| d == "serde"), "{deps:?}");
    assert!(!deps.iter().any(|d| d.starts_with("wasm")), "{deps:?}");
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    assert_eq!(ours(&dependencies("core")), Vec::<&str>::new());
    assert_eq!(ours(&dependencies("wasm")), ["wasm-hooks-core"]);
    assert_eq!(
        ours(&dependencies("lib")),
        ["wasm-hooks-core", "wasm-hooks-wasm"]
    );
    assert_eq!(ours(&dependencies("cli")), ["wasm-hooks"]);
    assert!(dependencies("wasm").iter().any(|d| d == "wasmtime"));
}
