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

/// The `.rs` files of a crate's `src`, by module path (`handlers::kind`).
fn modules(krate: &str) -> std::collections::BTreeMap<String, std::path::PathBuf> {
    let src = workspace_root().join("host").join(krate).join("src");
    let mut found = std::collections::BTreeMap::new();
    let mut pending = vec![src.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(&src).unwrap().with_extension("");
                let mut parts: Vec<String> = relative
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    parts.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    parts.pop();
                }
                found.insert(parts.join("::"), path);
            }
        }
    }
    found
}

/// The modules of `krate` each file names (`crate::a::b`, `super::c`,
/// `self::d`), resolved to the longest module path that is a file: the
/// import graph, files by module path.
fn imports(krate: &str) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let modules = modules(krate);
    let path = regex::Regex::new(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)").unwrap();
    let mut graph = std::collections::BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        // Tests may reach anywhere.
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        let here: Vec<&str> = if module.is_empty() {
            vec![]
        } else {
            module.split("::").collect()
        };
        let is_dir_module = file
            .file_stem()
            .is_some_and(|s| s == "mod" || s == "lib" || s == "main");
        let mut named = std::collections::BTreeSet::new();
        for caps in path.captures_iter(text) {
            let mut parts: Vec<&str> = match &caps[1] {
                "crate" => vec![],
                // `super` of a file module is its folder's module; of a
                // folder's `mod.rs`, the folder's parent.
                "super" if is_dir_module => here[..here.len().saturating_sub(1)].to_vec(),
                "super" => here[..here.len().saturating_sub(1)].to_vec(),
                _ if is_dir_module => here.clone(),
                _ => here[..here.len().saturating_sub(1)].to_vec(),
            };
            let mut rest: Vec<&str> = caps[2].trim_start_matches("::").split("::").collect();
            while rest.first() == Some(&"super") {
                rest.remove(0);
                parts.pop();
            }
            parts.extend(rest);
            let target = (0..=parts.len())
                .rev()
                .map(|n| parts[..n].join("::"))
                .find(|m| modules.contains_key(m));
            if let Some(target) = target.filter(|t| t != module && !t.is_empty()) {
                named.insert(target);
            }
        }
        graph.insert(module.clone(), named);
    }
    graph
}

/// The circles of the graph (strongly connected sets of two or more
/// files), each sorted.
fn circles(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<Vec<String>> {
    let reaches = |from: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut pending = vec![from.to_owned()];
        while let Some(node) = pending.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    pending.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: std::collections::BTreeMap<&String, _> =
        graph.keys().map(|m| (m, reaches(m))).collect();
    let mut found: Vec<Vec<String>> = Vec::new();
    for module in graph.keys() {
        let circle: Vec<String> = graph
            .keys()
            .filter(|other| {
                *other == module
                    || (reach[module].contains(*other) && reach[other].contains(module))
            })
            .cloned()
            .collect();
        if circle.len() > 1 && !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

/// No import circle between files (#46): a file never reaches, through
/// the files it names, back to itself.
#[test]
fn no_import_circle_between_files() {
    let mut found = Vec::new();
    for krate in ["core", "wasm", "lib", "cli"] {
        for circle in circles(&imports(krate)) {
            found.push(format!("{krate}: {}", circle.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// Every file of the host crates whose code (not its comments or tests)
/// names `agent`'s protocol (`Protocol::Gemini`, `gemini::`, `"gemini"`).
fn naming(variant: &str, module: &str) -> std::collections::BTreeSet<String> {
    let names =
        regex::Regex::new(&format!(r#"Protocol::{variant}\b|\b{module}::|"{module}""#)).unwrap();
    let root = workspace_root();
    let mut found = std::collections::BTreeSet::new();
    for krate in ["core", "wasm", "lib", "cli"] {
        for path in modules(krate).into_values() {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            if code
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .any(|line| names.is_match(line))
            {
                let relative = path.strip_prefix(&root).unwrap();
                found.insert(relative.display().to_string());
            }
        }
    }
    found
}

/// An agent is one file (#46): its wire format, events and facts are in
/// its own module (`host/lib/src/protocol/<agent>.rs`), and its name is in
/// code only there and in the places listed here — the table of agents,
/// the dispatch, its session log's reader, and what the CLI does for it
/// alone. A new place that names an agent fails here: put it in the
/// agent's module (or its facts) instead, or add it with why.
#[test]
fn an_agent_is_named_in_code_only_in_its_own_places() {
    let shared = [
        "host/lib/src/protocol/mod.rs",   // decode/encode dispatch
        "host/lib/src/protocol/facts.rs", // the one table of agents
    ];
    let own: &[(&str, &str, &[&str])] = &[
        (
            "Claude",
            "claude",
            &[
                "host/lib/src/protocol/claude.rs",
                // Codex and Copilot CLI speak Claude Code's format.
                "host/lib/src/protocol/codex.rs",
                "host/lib/src/protocol/copilot.rs",
                "host/lib/src/observe/replay/logs/claude.rs",
                "host/lib/src/observe/replay/logs/mod.rs",
                // The default protocol of `hook`, `serve` and the fuzz.
                "host/cli/src/hook.rs",
                "host/cli/src/serve.rs",
                "host/cli/src/fallback_answer.rs",
                "host/lib/src/fail_closed_fuzz.rs",
            ],
        ),
        (
            "Codex",
            "codex",
            &[
                "host/lib/src/protocol/codex.rs",
                "host/lib/src/observe/replay/logs/codex.rs",
                "host/lib/src/observe/replay/logs/mod.rs",
                "host/cli/src/fallback_answer.rs",
            ],
        ),
        (
            "Gemini",
            "gemini",
            &[
                "host/lib/src/protocol/import.rs",
                "host/lib/src/protocol/gemini.rs",
                "host/lib/src/observe/replay/logs/gemini.rs",
                "host/lib/src/observe/replay/logs/mod.rs",
                "host/cli/src/import.rs",
            ],
        ),
        (
            "Copilot",
            "copilot",
            &[
                "host/lib/src/protocol/copilot.rs",
                "host/lib/src/observe/replay/logs/copilot.rs",
                "host/lib/src/observe/replay/logs/mod.rs",
                "host/cli/src/fallback_answer.rs",
            ],
        ),
        ("Cursor", "cursor", &[]),
        (
            "OpenCode",
            "opencode",
            &[
                "host/lib/src/protocol/opencode.rs",
                // Its hook is a plugin `install` writes.
                "host/cli/src/install.rs",
                "host/cli/src/doctor.rs",
            ],
        ),
    ];
    let mut elsewhere = Vec::new();
    for (variant, module, places) in own {
        let named = naming(variant, module);
        for file in &named {
            if !shared.contains(&file.as_str()) && !places.contains(&file.as_str()) {
                elsewhere.push(format!("{variant}: {file}"));
            }
        }
        // The list shrinks with the code: a place that no longer names the
        // agent is struck off.
        for place in places.iter().filter(|p| !named.contains(**p)) {
            elsewhere.push(format!("{variant}: {place} (listed, but names it no more)"));
        }
    }
    assert!(
        elsewhere.is_empty(),
        "an agent named outside its places:\n{}",
        elsewhere.join("\n")
    );
}
