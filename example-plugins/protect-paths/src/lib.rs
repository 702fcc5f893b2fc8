//! protect-paths: deny writes and edits to files matching protected globs
//! (`.env*`, `**/secrets/**`, `.git/**` by default); reads and every other
//! tool proceed. Paths are matched relative to the event's working
//! directory when they lie inside it, as given otherwise.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use wasm_hooks_guest::{Error, Event, Hook, Outcome, Result, export_hook};

const DEFAULT_GLOBS: &[&str] = &[
    ".env*",
    "**/.env*",
    "**/secrets/**",
    ".git/**",
    "**/.git/**",
];

/// The tools that write files (canonical names: the host maps Gemini's
/// `write_file`/`replace` to `Write`/`Edit`), and the field naming the file.
const WRITE_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Globs to protect instead of the defaults.
    globs: Option<Vec<String>>,
}

struct ProtectPaths;

impl Hook for ProtectPaths {
    fn pre_tool_use(event: &Event) -> Result<Outcome> {
        let tool = event.tool_name().unwrap_or_default();
        let Some((_, field)) = WRITE_TOOLS.iter().find(|(t, _)| *t == tool) else {
            return Ok(Outcome::proceed());
        };
        let input: serde_json::Value = event.tool_input()?;
        let Some(path) = input.get(*field).and_then(|p| p.as_str()) else {
            return Ok(Outcome::proceed());
        };
        let config: Config = wasm_hooks_guest::config()?;
        let globs = match &config.globs {
            Some(globs) => globs.iter().map(String::as_str).collect(),
            None => DEFAULT_GLOBS.to_vec(),
        };
        let set = compile(&globs)?;
        let relative = relative_to(path, event.cwd());
        match set.matches(relative).first() {
            Some(&i) => Ok(Outcome::deny(format!(
                "`{relative}` is protected (matches `{}`): {tool} is not allowed there",
                globs[i]
            ))),
            None => Ok(Outcome::proceed()),
        }
    }
}

fn compile(globs: &[&str]) -> Result<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        set.add(Glob::new(glob).map_err(|e| Error::new(format!("glob `{glob}`: {e}")))?);
    }
    set.build().map_err(|e| Error::new(e.to_string()))
}

/// `path` relative to `cwd` when it lies inside it.
fn relative_to<'a>(path: &'a str, cwd: Option<&str>) -> &'a str {
    cwd.and_then(|cwd| path.strip_prefix(cwd.trim_end_matches('/')))
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(path)
}

export_hook!(ProtectPaths);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_working_directory_become_relative() {
        assert_eq!(relative_to("/p/.env", Some("/p")), ".env");
        assert_eq!(relative_to("/p/a/b", Some("/p/")), "a/b");
        assert_eq!(relative_to("/q/.env", Some("/p")), "/q/.env");
        assert_eq!(relative_to("/pq/x", Some("/p")), "/pq/x");
    }

    #[test]
    fn the_default_globs_cover_env_secrets_and_git() {
        let set = compile(DEFAULT_GLOBS).unwrap();
        for hit in [
            ".env",
            ".env.local",
            "app/.env",
            "config/secrets/key.pem",
            ".git/config",
        ] {
            assert!(set.is_match(hit), "{hit}");
        }
        for miss in ["src/main.rs", "environment.md", "secrets.md"] {
            assert!(!set.is_match(miss), "{miss}");
        }
    }
}
