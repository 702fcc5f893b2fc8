//! Policy tests for hook setups, like `opa test` for hooks: fixture files
//! (YAML or JSON) each holding one or more tests — an event as the agent
//! sends it, and what the folded outcome must be. Reading them is here;
//! comparing an outcome with an expectation is in `check`.
//!
//! ```yaml
//! name: rm -rf / is denied
//! hooks: ../hooks.json          # optional: the hook file, relative to this file
//! event:
//!   hook_event_name: PreToolUse
//!   tool_name: Bash
//!   tool_input: { command: "rm -rf /" }
//! expect:
//!   decision: deny              # proceed | allow | deny | ask
//!   reason: dangerous pattern   # a substring of the reason
//! ```
//!
//! A file may instead hold `tests: [{name, event, expect, hooks}, …]`, with
//! a `hooks` beside `tests` for the tests that name none. A relative `cwd`
//! or `transcript_path` in an event is taken relative to the fixture file.

mod check;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

pub use check::{Expectation, ExpectedDecision, Mismatch};

use wasm_hooks_core::Error;

/// One policy test.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyTest {
    /// What the test shows; the file name when absent.
    #[serde(default)]
    pub name: String,
    /// The hook file to run it against, relative to the fixture file;
    /// the caller's default when absent.
    pub hooks: Option<PathBuf>,
    /// The event, as the agent sends it (Claude Code's field names).
    pub event: Value,
    /// The hook the test exercises, by name: it must run on the event,
    /// and when the outcome is decided, decide it.
    pub hook: Option<String>,
    /// What the outcome must be.
    pub expect: Expectation,
}

/// A file of several tests, with a hook file for those that name none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Many {
    hooks: Option<PathBuf>,
    tests: Vec<PolicyTest>,
}

/// The tests in the fixture file at `path`, with their `hooks` made
/// relative to the current directory and their names filled in.
///
/// # Errors
/// [`Error::Config`] naming the file and what is wrong in it.
pub fn read_fixtures(path: &Path) -> Result<Vec<PolicyTest>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
        path: path.to_owned(),
        line: None,
        column: None,
        message: format!("cannot read the fixture: {e}"),
    })?;
    let doc: Value = crate::config::parse(path, &text)?;
    let read = if doc.get("tests").is_some() {
        serde_json::from_value::<Many>(doc).map(|many| {
            let mut tests = many.tests;
            for test in &mut tests {
                test.hooks = test.hooks.take().or_else(|| many.hooks.clone());
            }
            tests
        })
    } else {
        serde_json::from_value::<PolicyTest>(doc).map(|test| vec![test])
    };
    let mut tests = read.map_err(|e| Error::Config {
        path: path.to_owned(),
        line: None,
        column: None,
        message: format!("not a fixture ({{name, event, expect}} or {{tests: [...]}}): {e}"),
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let several = tests.len() > 1;
    for (i, test) in tests.iter_mut().enumerate() {
        if test.name.is_empty() {
            test.name = if several {
                format!("{stem}[{i}]")
            } else {
                stem.clone()
            };
        }
        test.hooks = test.hooks.as_ref().map(|h| base.join(h));
        // Paths in the event may be relative to the fixture file.
        for field in ["cwd", "transcript_path"] {
            if let Some(Value::String(path)) = test.event.get(field)
                && Path::new(path).is_relative()
            {
                let resolved = std::path::absolute(base.join(path))
                    .unwrap_or_else(|_| base.join(path))
                    .to_string_lossy()
                    .into_owned();
                test.event[field] = Value::String(resolved);
            }
        }
    }
    Ok(tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn one_test_or_a_list_in_yaml_or_json() {
        let dir = tempfile::tempdir().unwrap();
        let one = write(
            dir.path(),
            "deny-rm.yaml",
            "event: {hook_event_name: PreToolUse}\nexpect: {decision: deny}\nhooks: ../h.json\n",
        );
        let tests = read_fixtures(&one).unwrap();
        assert_eq!(tests[0].name, "deny-rm");
        assert_eq!(tests[0].hooks, Some(dir.path().join("../h.json")));
        let many = write(
            dir.path(),
            "many.json",
            r#"{"tests": [{"name": "a", "event": {}, "expect": {}}, {"event": {}, "expect": {}}]}"#,
        );
        let names: Vec<String> = read_fixtures(&many)
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["a", "many[1]"]);
    }

    #[test]
    fn a_file_that_is_no_fixture_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let bad = write(
            dir.path(),
            "bad.yaml",
            "event: {}\nexpect: {verdict: deny}\n",
        );
        let err = read_fixtures(&bad).unwrap_err().to_string();
        assert!(
            err.contains("bad.yaml") && err.contains("unknown field `verdict`"),
            "{err}"
        );
    }
}
