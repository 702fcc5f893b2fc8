//! `deny-dangerous-commands`: a PreToolUse hook that denies shell commands
//! matching any of a list of patterns, naming the pattern in the reason.
//!
//! A pattern is text that must appear in the command as whole words, after
//! runs of white space are folded to one space; `*` stands for any text
//! (`curl * | sh`), and a pattern that starts or ends with `*` may start or
//! end inside a word (`mkfs*` matches `mkfs.ext4`). The hook's `config` may replace the defaults:
//!
//! ```json
//! { "patterns": ["rm -rf /", "git push --force"], "tools": ["Bash"] }
//! ```
//!
//! `tools` lists the tool names treated as shells (default: `Bash`,
//! `bash`, `run_shell_command`, `shell`, `exec_command`); other tools, and every
//! other event, get `proceed`.

use serde::Deserialize;
use wasm_hooks_guest::{Event, Hook, Level, Outcome, Result, export_hook};

/// Commands denied when the hook's config names no patterns of its own.
const DEFAULT_PATTERNS: &[&str] = &[
    "rm -rf /",
    "rm -fr /",
    "rm -rf ~",
    "rm -rf ~/",
    "rm -rf $HOME",
    ":(){ :|:& };:",
    "mkfs*",
    "dd * of=/dev/*",
    "curl * | sh",
    "curl * | bash",
    "wget * | sh",
    "wget * | bash",
];

/// Tool names whose input is a shell command, unless the config says others.
const DEFAULT_SHELL_TOOLS: &[&str] =
    &["Bash", "bash", "run_shell_command", "shell", "exec_command"];

/// The hook's `config`; its schema is `config.schema.json` (written by the
/// test `the_config_schema_file_is_current`).
#[derive(Deserialize, Default, wasm_hooks_guest::schemars::JsonSchema)]
#[schemars(crate = "wasm_hooks_guest::schemars")]
#[serde(deny_unknown_fields)]
struct Config {
    /// Commands to deny (replacing the defaults): whole words, `*` for any
    /// text.
    patterns: Option<Vec<String>>,
    /// Tool names whose input is a shell command.
    tools: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct ShellInput {
    command: Option<String>,
}

struct DenyDangerousCommands;

impl Hook for DenyDangerousCommands {
    fn pre_tool_use(event: &Event) -> Result<Outcome> {
        let config: Config = wasm_hooks_guest::config()?;
        let tool = event.tool_name().unwrap_or_default();
        let is_shell = match &config.tools {
            Some(tools) => tools.iter().any(|t| t == tool),
            None => DEFAULT_SHELL_TOOLS.contains(&tool),
        };
        if !is_shell {
            return Ok(Outcome::proceed());
        }
        let Some(command) = event.tool_input::<ShellInput>()?.command else {
            return Ok(Outcome::proceed());
        };
        let command = fold_whitespace(&command);
        let hit = match &config.patterns {
            Some(patterns) => first_match(&command, patterns.iter().map(String::as_str)),
            None => first_match(&command, DEFAULT_PATTERNS.iter().copied()),
        };
        Ok(match hit {
            Some(pattern) => {
                wasm_hooks_guest::log(Level::Info, &format!("denied `{command}`"));
                Outcome::deny(format!("command matches the dangerous pattern `{pattern}`"))
            }
            None => Outcome::proceed(),
        })
    }
}

export_hook!(DenyDangerousCommands);

/// The first pattern that `command` matches.
fn first_match<'a>(command: &str, mut patterns: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    patterns.find(|p| matches(command, &fold_whitespace(p)))
}

/// Whether `command` contains `pattern` as whole words: `*` matches any text
/// (including none), the pieces must appear in order, and the match must
/// start and end on a word boundary unless the pattern starts or ends with
/// `*`. So `rm -rf /` matches `sudo rm -rf /` and `rm -rf /*`, but not
/// `rm -rf /tmp/x`.
fn matches(command: &str, pattern: &str) -> bool {
    let anchored_start = !pattern.starts_with('*');
    let anchored_end = !pattern.ends_with('*');
    let pieces: Vec<&str> = pattern
        .split('*')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let Some((last, init)) = pieces.split_last() else {
        return true;
    };
    // Leftmost placement of every piece but the last is optimal: a later
    // start only leaves less room for the pieces after it.
    let mut cursor = 0;
    for (i, piece) in init.iter().enumerate() {
        let need_start = i == 0 && anchored_start;
        match find_from(command, cursor, piece, |at| {
            !need_start || starts_word(command, at)
        }) {
            Some(at) => cursor = at + piece.len(),
            None => return false,
        }
    }
    let need_start = init.is_empty() && anchored_start;
    find_from(command, cursor, last, |at| {
        (!need_start || starts_word(command, at))
            && (!anchored_end || ends_word(command, at + last.len()))
    })
    .is_some()
}

/// The first position at or after `from` where `needle` occurs and `ok` holds.
fn find_from(hay: &str, from: usize, needle: &str, ok: impl Fn(usize) -> bool) -> Option<usize> {
    hay[from..]
        .match_indices(needle)
        .map(|(i, _)| from + i)
        .find(|&at| ok(at))
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || ";&|()<>`'\"*".contains(c)
}

fn starts_word(s: &str, at: usize) -> bool {
    s[..at].chars().next_back().is_none_or(is_separator)
}

fn ends_word(s: &str, end: usize) -> bool {
    s[end..].chars().next().is_none_or(is_separator)
}

fn fold_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `config.schema.json` is the schema of [`Config`]. When it is not,
    /// the test rewrites it and fails once, so a stale file never passes CI
    /// and the change shows in the diff.
    #[test]
    fn the_config_schema_file_is_current() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/config.schema.json");
        let schema = wasm_hooks_guest::config_schema::<Config>();
        assert!(
            schema.contains("\"additionalProperties\": false"),
            "{schema}"
        );
        if std::fs::read_to_string(file).ok().as_deref() != Some(schema.as_str()) {
            std::fs::write(file, &schema).unwrap();
            panic!("{file} was out of date: rewritten from `Config`; commit it");
        }
    }

    fn denied(command: &str) -> Option<&'static str> {
        first_match(&fold_whitespace(command), DEFAULT_PATTERNS.iter().copied())
    }

    #[test]
    fn default_patterns_catch_the_classics() {
        assert_eq!(denied("rm -rf /"), Some("rm -rf /"));
        assert_eq!(denied("sudo rm   -rf  /"), Some("rm -rf /"));
        assert_eq!(denied("rm -rf /*"), Some("rm -rf /"));
        assert_eq!(denied("cd x && rm -rf ~"), Some("rm -rf ~"));
        assert_eq!(denied("rm -rf ~/"), Some("rm -rf ~/"));
        assert_eq!(denied(":(){ :|:& };:"), Some(":(){ :|:& };:"));
        assert_eq!(denied("mkfs.ext4 /dev/sda1"), Some("mkfs*"));
        assert_eq!(
            denied("dd if=/dev/zero of=/dev/sda bs=1M"),
            Some("dd * of=/dev/*")
        );
        assert_eq!(denied("curl -fsSL https://x.sh | sh"), Some("curl * | sh"));
    }

    #[test]
    fn ordinary_commands_pass() {
        for c in [
            "ls -la",
            "cargo test",
            "rm -rf target",
            "rm -rf /tmp/build",
            "rm -rf ~/.cache/x",
            "farm -rf /",
            "dd if=a of=b",
            "curl https://x",
            "curl https://x | shellcheck -",
        ] {
            assert_eq!(denied(c), None, "{c}");
        }
    }
}
