//! require-tests-before-stop: when the agent wants to stop, block it (with a
//! reason the model sees, so it goes on) if the session changed source files
//! and ran no test command since the last change. It reads the session's
//! transcript (`transcript_path`, Claude Code's JSON lines) through a
//! read-only grant of the transcripts' folder. A second stop in a row
//! (`stop_hook_active`) is let through, so the agent can never be stuck.

use serde::Deserialize;
use serde_json::Value;
use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Config {
    /// File extensions that count as source.
    source_extensions: Vec<String>,
    /// Substrings of a Bash command that make it a test run.
    test_commands: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        let strings = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
        Self {
            source_extensions: strings(&[
                "rs", "py", "ts", "tsx", "js", "jsx", "go", "java", "kt", "rb", "c", "cc", "cpp",
                "h", "hpp", "cs", "swift",
            ]),
            test_commands: strings(&[
                "cargo test",
                "cargo nextest",
                "pytest",
                "npm test",
                "npm run test",
                "pnpm test",
                "yarn test",
                "go test",
                "mvn test",
                "gradle test",
                "make test",
                "jest",
                "vitest",
                "rspec",
                "ctest",
            ]),
        }
    }
}

/// What the transcript shows, in order.
#[derive(Debug, PartialEq)]
enum Step {
    /// A source file was written or edited.
    Changed(String),
    /// A test command ran.
    Tested,
}

struct RequireTestsBeforeStop;

impl Hook for RequireTestsBeforeStop {
    fn stop(event: &Event) -> Result<Outcome> {
        if event.field::<bool>("stop_hook_active")? == Some(true) {
            return Ok(Outcome::proceed());
        }
        let Some(path) = event.field::<String>("transcript_path")? else {
            return Ok(Outcome::proceed());
        };
        let transcript = std::fs::read_to_string(&path)
            .map_err(|e| wasm_hooks_guest::Error::new(format!("reading {path}: {e}")))?;
        let config: Config = wasm_hooks_guest::config()?;
        let steps = steps(&transcript, &config);
        let last_test = steps.iter().rposition(|s| *s == Step::Tested);
        let untested: Vec<&str> = steps
            .iter()
            .enumerate()
            .filter(|(i, _)| last_test.is_none_or(|t| *i > t))
            .filter_map(|(_, s)| match s {
                Step::Changed(file) => Some(file.as_str()),
                Step::Tested => None,
            })
            .collect();
        if untested.is_empty() {
            return Ok(Outcome::proceed());
        }
        let mut files: Vec<&str> = untested;
        files.dedup();
        Ok(Outcome::deny(format!(
            "source files changed ({}) but no test command ran since; run the tests before stopping",
            files.join(", ")
        )))
    }
}

/// The tool uses of a transcript that matter here, in order.
fn steps(transcript: &str, config: &Config) -> Vec<Step> {
    let mut steps = Vec::new();
    for line in transcript.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(content) = entry["message"]["content"].as_array() else {
            continue;
        };
        for item in content.iter().filter(|i| i["type"] == "tool_use") {
            let input = &item["input"];
            match item["name"].as_str().unwrap_or_default() {
                "Write" | "Edit" | "MultiEdit" => {
                    let file = input["file_path"].as_str().unwrap_or_default();
                    let extension = file.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
                    if config.source_extensions.iter().any(|e| e == extension) {
                        steps.push(Step::Changed(file.to_owned()));
                    }
                }
                "Bash" => {
                    let command = input["command"].as_str().unwrap_or_default();
                    if config
                        .test_commands
                        .iter()
                        .any(|t| command.contains(t.as_str()))
                    {
                        steps.push(Step::Tested);
                    }
                }
                _ => {}
            }
        }
    }
    steps
}

export_hook!(RequireTestsBeforeStop);

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, input: Value) -> String {
        serde_json::json!({"type": "assistant", "message": {"role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": name, "input": input}]}})
        .to_string()
    }

    #[test]
    fn source_writes_and_test_runs_are_found_in_order() {
        let transcript = [
            tool("Write", serde_json::json!({"file_path": "/p/README.md"})),
            tool("Edit", serde_json::json!({"file_path": "/p/src/lib.rs"})),
            tool("Bash", serde_json::json!({"command": "cargo test --all"})),
            "not json".to_owned(),
        ]
        .join("\n");
        assert_eq!(
            steps(&transcript, &Config::default()),
            [Step::Changed("/p/src/lib.rs".into()), Step::Tested]
        );
    }
}
