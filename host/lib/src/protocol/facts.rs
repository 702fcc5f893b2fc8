//! [`AgentFacts`]: what wasm-hooks knows of one agent as a program beside
//! its wire format — its name, where its hook settings live, the events
//! `install` hooks, what the person still has to do, the version driven,
//! what no hook of it can reach. Each agent's module holds its own
//! (`FACTS`); [`Protocol::facts`] is the one table that lists them.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One agent's facts; see the module's documentation.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct AgentFacts {
    /// Its name for people (`Claude Code`).
    pub name: &'static str,
    /// Its program on `PATH` (`claude`), as `doctor` looks for it.
    pub program: &'static str,
    /// The version whose hooks were driven and recorded (empty: only its
    /// documentation was read).
    pub driven: &'static str,
    /// Its hook settings under a project (`.claude/settings.json`).
    pub settings: &'static str,
    /// The uncommitted file beside them it also reads, if any (for a
    /// machine's absolute path).
    pub local_settings: Option<&'static str>,
    /// Its hook settings under the person's home.
    pub user_settings: &'static str,
    /// A variable that moves them (`CODEX_HOME`), and the file under it.
    pub user_settings_variable: Option<(&'static str, &'static str)>,
    /// The events `install` hooks, by its own names.
    pub events: &'static [&'static str],
    /// Whether an installed entry blocks the action when the program is
    /// missing or fails (observed: `tests/fixtures/settings-tolerance.md`).
    pub entries_fail_closed: bool,
    /// What the person still has to do before it runs a project's hooks
    /// (read from the agent itself), and a user install's.
    pub next_step: (&'static str, &'static str),
    /// Its paths to a shell that no hook of it can reach, said plainly by
    /// `install` and `explain`.
    pub unguarded: Option<&'static str>,
    /// Whether `init` offers to import its command hooks.
    pub importable: bool,
    /// Whether `install --http` writes an HTTP hook for it (one posting
    /// to `wasm-hooks serve`).
    pub http_hooks: bool,
    /// How `install` writes its hook settings; `None` for an agent with
    /// none (OpenCode's hook is a plugin).
    pub hook_file: Option<HookFile>,
}

/// How an agent's hook settings hold the entry `install` writes.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct HookFile {
    /// How the file holds its entries.
    pub shape: SettingsShape,
    /// The fields of the command entry on `event` (by the agent's name)
    /// running `command`, which guards an action or not: the agent's own
    /// timeout, and the setting that makes a failure block, where it has
    /// one.
    pub command_entry: fn(command: &str, event: &str, guards: bool) -> Vec<(&'static str, Value)>,
}

/// How an agent's hook file holds its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettingsShape {
    /// `{"hooks": {"<Event>": [{"matcher": …, "hooks": [entry]}]}}`
    /// (Claude Code, Codex, Gemini CLI); the group of one of `tool_events`
    /// gets a matcher for every tool.
    Grouped {
        /// The events about one tool call, by the agent's names.
        tool_events: &'static [&'static str],
    },
    /// `{"version": 1, "hooks": {"<event>": [entry]}}` (Copilot CLI,
    /// Cursor).
    Flat,
}

impl AgentFacts {
    /// Its hook settings in `dir` (a project, or a home).
    pub fn settings_in(&self, dir: &Path) -> PathBuf {
        dir.join(self.settings)
    }

    /// The uncommitted file beside its project `settings`, if it has one.
    pub fn local_settings_beside(&self, settings: &Path) -> Option<PathBuf> {
        self.local_settings
            .map(|name| settings.with_file_name(name))
    }

    /// Its settings in the person's home: under the variable that moves
    /// them when it is set, else under `home`.
    pub fn user_settings_in(
        &self,
        home: &Path,
        variable: impl Fn(&str) -> Option<String>,
    ) -> PathBuf {
        match self.user_settings_variable {
            Some((name, file)) if let Some(dir) = variable(name) => PathBuf::from(dir).join(file),
            _ => home.join(self.user_settings),
        }
    }
}
