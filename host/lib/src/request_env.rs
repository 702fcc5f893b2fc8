//! The variables one request brings over the process's own environment:
//! a warm daemon serves many `hook` calls, and the agents give each call
//! per-session and per-event variables (Claude Code's session id, its
//! `CLAUDE_ENV_FILE`, …) that decide no answer of the engine's own but
//! that a command hook, an MCP server, a plugin's granted variables or an
//! HTTP hook's headers may read. They reach those as the caller had them,
//! set or unset, and the daemon is keyed by everything else but the
//! variables that change from one event to the next: an engine it keeps
//! is given each event's ([`RequestEnv::update`]) before it answers it.

use std::sync::{Arc, PoisonError, RwLock};

/// Variables set (`Some`) or unset (`None`) for one request, over the
/// process's environment. Empty by default: the process's own, unchanged.
/// Clones share their variables: an engine's hooks hold clones of the one
/// its builder was given, so [`RequestEnv::update`] reaches them all.
#[derive(Debug, Clone, Default)]
pub struct RequestEnv(Arc<RwLock<Variables>>);

/// Variables by name, each set to its value or unset.
type Variables = Arc<[(String, Option<String>)]>;

impl RequestEnv {
    /// These variables, each set to its value or unset.
    pub fn new(variables: impl IntoIterator<Item = (String, Option<String>)>) -> Self {
        Self(Arc::new(RwLock::new(variables.into_iter().collect())))
    }

    /// From now on, `other`'s variables (for the next event an engine that
    /// shares these answers).
    pub fn update(&self, other: &RequestEnv) {
        let variables = other.variables();
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = variables;
    }

    fn variables(&self) -> Variables {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The variable's value for this request: its own when it brings the
    /// name, else the process's.
    pub fn var(&self, name: &str) -> Option<String> {
        match self.variables().iter().find(|(n, _)| n == name) {
            Some((_, value)) => value.clone(),
            None => std::env::var(name).ok(),
        }
    }

    /// Give a child process this request's variables.
    pub(crate) fn apply(&self, command: &mut tokio::process::Command) {
        for (name, value) in self.variables().iter() {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_variables_win_over_the_processes_set_or_unset() {
        let env = RequestEnv::new([
            (
                "CLAUDE_CODE_SESSION_ID".to_owned(),
                Some("second".to_owned()),
            ),
            ("PATH".to_owned(), None),
        ]);
        assert_eq!(env.var("CLAUDE_CODE_SESSION_ID").as_deref(), Some("second"));
        assert_eq!(env.var("PATH"), None);
        assert_eq!(env.var("HOME"), std::env::var("HOME").ok());
        assert_eq!(
            RequestEnv::default().var("HOME"),
            std::env::var("HOME").ok()
        );
    }

    #[test]
    fn an_update_reaches_every_clone() {
        let env = RequestEnv::new([("COPILOT_TRACEPARENT".to_owned(), Some("00-a".to_owned()))]);
        let held = env.clone();
        env.update(&RequestEnv::new([(
            "COPILOT_TRACEPARENT".to_owned(),
            Some("00-b".to_owned()),
        )]));
        assert_eq!(held.var("COPILOT_TRACEPARENT").as_deref(), Some("00-b"));
    }
}
