//! The `wasm-hooks` command lines of the README's and docs/'s shell
//! blocks, so the docs cannot drift from the program:
//!
//! - every one is run for real, page by page, as a reader would in a
//!   project of their own (`every_command_in_the_docs_runs_in_a_readers_project`),
//!   except those another named test runs with what they need (a
//!   registry, Redis, a Python or TypeScript toolchain: `RUN_ELSEWHERE`);
//! - every one, those included, is one this build accepts: its subcommand
//!   exists and each flag parses (`--help` appended).

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Each line of a ```sh block in the README, docs/ and the example
/// plugins' READMEs (leading `$ ` taken off), with the file it is in and
/// the block's number there, in order.
fn documented_lines() -> Vec<(PathBuf, usize, String)> {
    let root = crate::support::workspace_root();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    let examples = root.join("example-plugins");
    docs.push(examples.join("README.md"));
    docs.extend(
        std::fs::read_dir(&examples)
            .unwrap()
            .map(|e| e.unwrap().path().join("README.md"))
            .filter(|p| p.is_file()),
    );
    docs.sort();
    pages.extend(docs);
    let mut found = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut in_shell = false;
        let mut block = 0;
        for line in text.lines() {
            if line.starts_with("```") {
                in_shell = line == "```sh" || line == "```bash";
                block += 1;
                continue;
            }
            let line = line.trim_start().trim_start_matches("$ ");
            if in_shell {
                found.push((page.clone(), block, line.to_owned()));
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
    let commands: Vec<_> = documented_lines()
        .into_iter()
        .filter(|(_, _, line)| line.starts_with("wasm-hooks "))
        .map(|(page, _, line)| (page, line))
        .collect();
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

/// Lines run by another test, which has what they need: (page, the line's
/// start, the tests that run it, as `module::name`).
const RUN_ELSEWHERE: &[(&str, &str, &[&str])] = &[
    // The README's lines are its three quick starts, run as written.
    (
        "README.md",
        "wasm-hooks ",
        &[
            "quick_start::the_claude_code_quick_start_blocks_rm_rf_as_the_readme_shows",
            "quick_start::the_plugin_quick_start_goes_from_new_to_a_clean_validate",
            "quick_start::the_serve_quick_start_answers_ready_and_denies_over_http",
        ],
    ),
    // A registry: a real one on loopback, with keys and a teammate's clone.
    (
        "",
        "wasm-hooks publish ",
        &[
            "oci_plugins::a_teammates_clone_is_answered_by_the_rust_python_and_js_plugins_pulled_and_verified",
        ],
    ),
    (
        "",
        "wasm-hooks add oci://",
        &[
            "oci_plugins::a_teammates_clone_is_answered_by_the_rust_python_and_js_plugins_pulled_and_verified",
        ],
    ),
    (
        "",
        "wasm-hooks update",
        &["oci_plugins::a_tag_that_moved_changes_nothing_until_update"],
    ),
    (
        "docs/hook-files.md",
        "wasm-hooks pull",
        &[
            "oci_plugins::a_teammates_clone_is_answered_by_the_rust_python_and_js_plugins_pulled_and_verified",
        ],
    ),
    // Redis.
    (
        "",
        "wasm-hooks serve --serve-config",
        &["serve_fleet::serve_reads_its_settings_from_a_file_and_flags_win"],
    ),
    // The neutral API's server, asked with curl.
    (
        "docs/embedding.md",
        "wasm-hooks serve ",
        &[
            "neutral_api::decide_answers_the_canonical_event_with_the_whole_outcome_its_openapi_document_describes",
        ],
    ),
    // The live page, which serves until stopped.
    (
        "",
        "wasm-hooks ui",
        &["observe::ui_serves_the_page_and_streams_the_audit_logs_decisions_behind_its_token"],
    ),
    // The example plugins, in their folders of this checkout.
    (
        "example-plugins/README.md",
        "wasm-hooks test example-plugins/",
        &["policy_tests::the_example_plugins_fixtures_pass"],
    ),
    (
        "conventional-commits-py/README.md",
        "wasm-hooks ",
        &[
            "guest_languages::the_python_example_passes_its_native_and_policy_tests_and_fails_loudly",
        ],
    ),
    (
        "destructive-sql-py/README.md",
        "wasm-hooks ",
        &["guest_languages::the_python_example_with_a_pypi_dependency_follows_its_readme"],
    ),
    (
        "new-dependencies-js/README.md",
        "wasm-hooks ",
        &["guest_languages::the_js_example_passes_its_policy_and_native_tests_and_fails_loudly"],
    ),
    // In a Python or TypeScript plugin, with its toolchain.
    (
        "docs/plugins.md",
        "wasm-hooks ",
        &[
            "guest_languages::a_python_plugin_from_new_passes_its_native_tests_builds_and_decides",
            "guest_languages::a_python_plugin_bundles_its_pypi_dependencies_and_nothing_else_from_the_machine",
            "guest_languages::a_typescript_plugin_with_an_npm_dependency_installs_tests_builds_and_decides",
        ],
    ),
];

/// Lines that ask on a terminal: run on one (`script`), answered "y".
const ASKING: &[&str] = &["wasm-hooks trust"];

/// What the runs change in a line, and why: a fixed port may be taken.
const CHANGED: &[(&str, &str)] = &[("127.0.0.1:8787", "127.0.0.1:0")];

/// The test that runs `line` of `page` instead of this one, if any.
fn run_elsewhere(page: &str, line: &str) -> Option<&'static [&'static str]> {
    RUN_ELSEWHERE
        .iter()
        .find(|(on, start, _)| (on.is_empty() || page.ends_with(on)) && line.starts_with(start))
        .map(|(_, _, test)| *test)
}

/// A reader's machine: a home, and a git checkout of a project with an
/// event of Claude Code's (`event.json`), a hook file beside it
/// (`hooks.json`, a wasm guard `plugin.wasm`, also in `plugins/`) and an
/// empty `.wasm-hooks/`.
struct Reader {
    root: tempfile::TempDir,
}

impl Reader {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        for dir in [
            "home/config",
            "home/state",
            "run",
            "project/.wasm-hooks",
            "project/plugins",
        ] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        assert!(
            Command::new("git")
                .arg("init")
                .arg("-q")
                .arg(&project)
                .status()
                .unwrap()
                .success()
        );
        let plugin = crate::support::plugin("deny-dangerous-commands");
        std::fs::copy(&plugin, project.join("plugin.wasm")).unwrap();
        std::fs::copy(
            &plugin,
            project.join("plugins/deny-dangerous-commands.wasm"),
        )
        .unwrap();
        let hooks = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "plugin": "plugin.wasm", "on_failure": "block"}]}]}});
        std::fs::write(project.join("hooks.json"), hooks.to_string()).unwrap();
        let mut event = crate::support::fixture_of("2.1.330", "PreToolUse");
        event["tool_name"] = "Bash".into();
        event["tool_input"] = serde_json::json!({"command": "ls"});
        event["cwd"] = project.to_str().unwrap().into();
        std::fs::write(project.join("event.json"), event.to_string()).unwrap();
        Self { root }
    }

    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// `program args` in `dir` as this reader: the built `wasm-hooks`
    /// first on `PATH`, `event.json` on stdin, no daemon unless the line
    /// starts one.
    fn command(&self, dir: &Path, program: &str, args: &[&str]) -> Command {
        let bin = Path::new(env!("CARGO_BIN_EXE_wasm-hooks"))
            .parent()
            .unwrap();
        let home = self.root.path().join("home");
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(dir)
            .env(
                "PATH",
                format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
            )
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_RUNTIME_DIR", self.root.path().join("run"))
            .env("WASM_HOOKS_DAEMON", "off")
            .env("WASM_HOOKS_TOKEN", "a-token-of-the-readers")
            .env("WASM_HOOKS_CACHE_DIR", crate::support::toolchain_cache())
            // A Rust plugin's dependencies, built once for every test.
            .env(
                "CARGO_TARGET_DIR",
                crate::support::workspace_root().join("target/plugins"),
            )
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(std::fs::File::open(self.project().join("event.json")).unwrap());
        command
    }

    /// Run `line` in `dir`: what went wrong, if anything.
    fn run(&self, dir: &Path, line: &str) -> Result<(), String> {
        let words = words(line);
        let subcommand = words.get(1).map_or("", String::as_str);
        if matches!(subcommand, "serve" | "daemon") {
            return self.start(dir, line, subcommand);
        }
        let out = if ASKING.contains(&line.split(" #").next().unwrap().trim()) {
            let mut child = self
                .command(dir, "script", &["-qec", line, "/dev/null"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(b"y\n").unwrap();
            child.wait_with_output().unwrap()
        } else {
            self.command(dir, "bash", &["-c", line]).output().unwrap()
        };
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // 2 from `run` or `hook` is the hooks' block; from clap, a usage error.
        let blocked = out.status.code() == Some(2)
            && matches!(subcommand, "run" | "hook")
            && !said.contains("Usage:");
        if out.status.success() || blocked {
            Ok(())
        } else {
            Err(format!("exit {:?}: {said}", out.status.code()))
        }
    }

    /// Start the long-running `line` (`serve`, `daemon`), see it ready (a
    /// served event answered; the daemon's socket), and stop it.
    fn start(&self, dir: &Path, line: &str, subcommand: &str) -> Result<(), String> {
        let mut child = self
            .command(dir, "bash", &["-c", &format!("exec {line}")])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let ready = if subcommand == "serve" {
            let mut first = String::new();
            std::io::BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut first)
                .unwrap();
            match first.trim().strip_prefix("listening on http://") {
                Some(address) => self.answered(address),
                None => Err(format!("serve said {first:?}")),
            }
        } else {
            let sockets = self.root.path().join("run/wasm-hooks");
            loop {
                let listening = std::fs::read_dir(&sockets)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "sock"));
                if listening {
                    break Ok(());
                }
                if child.try_wait().unwrap().is_some() {
                    break Err("the daemon exited".to_owned());
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        };
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        ready.map_err(|e| format!("{e}; it said: {}", String::from_utf8_lossy(&out.stderr)))
    }

    /// `event.json` posted to the serve at `address` with the reader's
    /// token: an error unless it is answered.
    fn answered(&self, address: &str) -> Result<(), String> {
        let body = std::fs::read_to_string(self.project().join("event.json")).unwrap();
        let mut stream = std::net::TcpStream::connect(address).map_err(|e| e.to_string())?;
        write!(
            stream,
            "POST /hook HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer a-token-of-the-readers\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        std::io::Read::read_to_string(&mut stream, &mut response).unwrap();
        if response.starts_with("HTTP/1.1 200") {
            Ok(())
        } else {
            Err(format!("POST /hook: {response}"))
        }
    }
}

/// The test `module::name` exists in tests/.
fn exists(test: &str) -> bool {
    let (module, name) = test.split_once("::").unwrap();
    let source = crate::support::workspace_root().join(format!("tests/{module}.rs"));
    std::fs::read_to_string(source).is_ok_and(|text| text.contains(&format!("fn {name}()")))
}

#[test]
fn every_command_in_the_docs_runs_in_a_readers_project() {
    let mut failed = Vec::new();
    let mut ran = 0;
    let mut pages: Vec<(PathBuf, Vec<(usize, String)>)> = Vec::new();
    for (page, block, line) in documented_lines() {
        match pages.last_mut() {
            Some((last, lines)) if *last == page => lines.push((block, line)),
            _ => pages.push((page, vec![(block, line)])),
        }
    }
    for (page, lines) in pages {
        let name = page.display().to_string();
        let reader = Reader::new();
        let mut dir = reader.project();
        let mut in_block = 0;
        for (block, line) in lines {
            // Each block starts in the project again.
            if block != in_block {
                in_block = block;
                dir = reader.project();
            }
            // `cd X` (alone or after `&&`) moves the reader for what follows.
            let moved = line
                .split("&&")
                .map(str::trim)
                .find_map(|part| part.strip_prefix("cd "));
            if !line.starts_with("wasm-hooks ") {
                if let Some(to) = moved.filter(|_| line.starts_with("cd ")) {
                    dir = dir.join(to.split_whitespace().next().unwrap());
                }
                continue;
            }
            if let Some(tests) = run_elsewhere(&name, &line) {
                for test in tests {
                    assert!(
                        exists(test),
                        "{name}: `{line}` is said to be run by {test}, which is not a test"
                    );
                }
                continue;
            }
            let changed = CHANGED
                .iter()
                .fold(line.clone(), |l, (from, to)| l.replace(from, to));
            ran += 1;
            if let Err(why) = reader.run(&dir, &changed) {
                failed.push(format!("{name}: `{line}`: {why}"));
            }
            if let Some(to) = moved {
                dir = dir.join(to.split_whitespace().next().unwrap());
            }
        }
    }
    assert!(ran > 40, "ran only {ran}");
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
