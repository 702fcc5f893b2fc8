//! Every `wasm-hooks` command line in the README's and docs/'s shell blocks
//! is one this build accepts: its subcommand exists and each flag it
//! names parses (the line, cut before redirections and pipes, run with
//! `--help` appended). A renamed command or flag fails here, not in a
//! reader's terminal. (The quick starts are run in full: `quick_start::`.)

use std::path::PathBuf;

/// Each `wasm-hooks …` line of a ```sh block in the README and docs/, with
/// the file it is in.
fn documented_commands() -> Vec<(PathBuf, String)> {
    let root = crate::support::workspace_root();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut found = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut in_shell = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_shell = line == "```sh" || line == "```bash";
                continue;
            }
            let line = line.trim_start().trim_start_matches("$ ");
            if in_shell && line.starts_with("wasm-hooks ") {
                found.push((page.clone(), line.to_owned()));
            }
        }
    }
    found
}

/// The words of `line` up to a comment, a redirection, a pipe or a
/// second command, an optional `[--flag]` as the flag.
fn words(line: &str) -> Vec<String> {
    let cut = line.split(" #").next().unwrap();
    let words = shlex::split(cut).unwrap_or_else(|| panic!("not shell words: {line}"));
    words
        .into_iter()
        .take_while(|w| !matches!(w.as_str(), "<" | ">" | "|" | "&&" | "&" | ";" | "2>&1"))
        .filter(|w| !w.starts_with('<') && !w.starts_with('>'))
        // `[--prune]`: an optional flag, as usage lines write it.
        .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_owned())
        .collect()
}

#[test]
fn every_wasm_hooks_command_in_the_docs_is_one_this_build_accepts() {
    let commands = documented_commands();
    assert!(commands.len() > 40, "found only {}", commands.len());
    let mut refused = Vec::new();
    for (page, line) in commands {
        let args = words(&line);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
            .args(&args[1..])
            .arg("--help")
            .env("WASM_HOOKS_DAEMON", "off")
            .output()
            .unwrap();
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            refused.push(format!(
                "{}: `{line}`: {}",
                page.display(),
                said.lines().next().unwrap_or_default()
            ));
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}
