//! inject-project-context: at session start, add the project's conventions
//! file (`CONVENTIONS.md` in the session's working directory by default) to
//! the agent's context. The file is read through a read-only grant
//! (`allow_read: ["${PROJECT_DIR}"]`); a missing file adds nothing.

use serde::Deserialize;
use wasm_hooks_guest::{Event, Hook, Level, Outcome, Result, export_hook};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Config {
    /// The file, relative to the working directory.
    file: String,
    /// At most this many bytes of it are added.
    max_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            file: "CONVENTIONS.md".into(),
            max_bytes: 16 * 1024,
        }
    }
}

struct InjectProjectContext;

impl Hook for InjectProjectContext {
    fn session_start(event: &Event) -> Result<Outcome> {
        let config: Config = wasm_hooks_guest::config()?;
        let Some(cwd) = event.cwd() else {
            return Ok(Outcome::proceed());
        };
        let path = format!("{}/{}", cwd.trim_end_matches('/'), config.file);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                wasm_hooks_guest::log(Level::Info, &format!("no conventions file {path}: {e}"));
                return Ok(Outcome::proceed());
            }
        };
        let mut end = text.len().min(config.max_bytes);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = if end < text.len() { "\n[… cut]" } else { "" };
        Ok(Outcome::proceed().with_context(format!(
            "Project conventions ({}):\n{}{cut}",
            config.file,
            &text[..end]
        )))
    }
}

export_hook!(InjectProjectContext);
