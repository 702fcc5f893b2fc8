//! Testing a plugin's [`Hook`](crate::Hook) natively, with `cargo test`
//! and no wasm: outside a component, [`config`](crate::config),
//! [`kv`](crate::kv) and [`log`](crate::log) reach the [`MockHost`]
//! installed on the current thread, and [`Event::from_record`] makes
//! events.
//!
//! ```
//! use serde_json::json;
//! use wasm_hooks_guest::testing::{MockHost, bash};
//! use wasm_hooks_guest::{Event, Hook, Outcome, Result};
//!
//! struct NoSudo;
//! impl Hook for NoSudo {
//!     fn pre_tool_use(event: &Event) -> Result<Outcome> {
//!         let words: Vec<String> = wasm_hooks_guest::config::<serde_json::Value>()?["blocked"]
//!             .as_array().into_iter().flatten()
//!             .filter_map(|w| w.as_str().map(str::to_owned)).collect();
//!         let command: serde_json::Value = event.tool_input()?;
//!         let command = command["command"].as_str().unwrap_or_default();
//!         Ok(match words.iter().find(|w| command.split_whitespace().any(|c| c == w.as_str())) {
//!             Some(word) => Outcome::deny(format!("`{word}` is not allowed")),
//!             None => Outcome::proceed(),
//!         })
//!     }
//! }
//!
//! let host = MockHost::new().config(json!({"blocked": ["sudo"]})).install();
//! let outcome = NoSudo::handle(&bash("sudo ls")).unwrap();
//! assert_eq!(outcome.deny_reason(), Some("`sudo` is not allowed"));
//! drop(host);
//! ```

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Value, json};

use crate::{Error, Event, Level, Result};

thread_local! {
    static HOST: RefCell<Option<MockHost>> = const { RefCell::new(None) };
}

/// The host, in a test: the hook's `config`, a key-value store, and the
/// log lines written. Install it on the current thread with
/// [`MockHost::install`].
#[derive(Debug, Clone, Default)]
pub struct MockHost {
    config: Value,
    kv: HashMap<String, String>,
    logs: Vec<(Level, String)>,
}

impl MockHost {
    /// A host with no config (`{}`), an empty store and no log lines.
    pub fn new() -> Self {
        Self {
            config: json!({}),
            ..Self::default()
        }
    }

    /// The hook's `config`, as the hook file would give it.
    pub fn config(mut self, config: Value) -> Self {
        self.config = config;
        self
    }

    /// A value already in the store.
    pub fn kv(mut self, key: &str, value: &str) -> Self {
        self.kv.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Use this host on the current thread until the guard is dropped.
    pub fn install(self) -> Installed {
        HOST.with(|host| *host.borrow_mut() = Some(self));
        Installed(())
    }
}

/// The installed [`MockHost`]: what the hook wrote to it; dropping it
/// removes the host.
#[derive(Debug)]
pub struct Installed(());

impl Installed {
    /// The lines the hook logged, in order.
    pub fn logs(&self) -> Vec<(Level, String)> {
        with(|host| host.logs.clone())
    }

    /// The value the store holds under `key`.
    pub fn kv(&self, key: &str) -> Option<String> {
        with(|host| host.kv.get(key).cloned())
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        HOST.with(|host| *host.borrow_mut() = None);
    }
}

/// Run `f` on the installed host; without one, a test forgot it, which is
/// worth a clear panic.
fn with<T>(f: impl FnOnce(&mut MockHost) -> T) -> T {
    HOST.with(|host| {
        let mut host = host.borrow_mut();
        let host = host.as_mut().expect(
            "no host: outside a component, install one with wasm_hooks_guest::testing::MockHost",
        );
        f(host)
    })
}

pub(crate) fn config_json() -> String {
    with(|host| host.config.to_string())
}

pub(crate) fn log(level: Level, message: &str) {
    with(|host| host.logs.push((level, message.to_owned())));
}

pub(crate) fn kv_get(key: &str) -> Option<String> {
    with(|host| host.kv.get(key).cloned())
}

pub(crate) fn kv_set(key: &str, value: &str) -> Result<()> {
    with(|host| {
        host.kv.insert(key.to_owned(), value.to_owned());
    });
    Ok::<(), Error>(())
}

/// An event named `name` with these record fields (Claude Code's names:
/// `tool_name`, `tool_input`, …).
pub fn event(name: &str, fields: Value) -> Event {
    let mut record =
        json!({"hook_event_name": name, "session_id": "test-session", "cwd": "/project"});
    if let (Some(record), Value::Object(fields)) = (record.as_object_mut(), fields) {
        record.extend(fields);
    }
    Event::from_record(&record)
}

/// Claude Code's PreToolUse for its Bash tool running `command`.
pub fn bash(command: &str) -> Event {
    event(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": command}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_dir_is_the_hosts_else_the_cwd() {
        assert_eq!(bash("ls").project_dir().as_deref(), Some("/project"));
        let named = event("Stop", json!({"cwd": "/p/sub", "project_dir": "/p"}));
        assert_eq!(named.project_dir().as_deref(), Some("/p"));
    }
}
