//! The variables one request brings over the process's own environment:
//! a warm daemon serves many `hook` calls, and the agents give each call
//! per-session and per-event variables (Claude Code's session id, its
//! `CLAUDE_ENV_FILE`, …) that decide no answer of the engine's own but
//! that a command hook, an MCP server, a plugin's granted variables or an
//! HTTP hook's headers may read. They reach those as the caller had them,
//! set or unset, and the daemon is keyed by everything else.

use std::sync::Arc;

/// Variables set (`Some`) or unset (`None`) for one request, over the
/// process's environment. Empty by default: the process's own, unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestEnv(Arc<[(String, Option<String>)]>);

impl RequestEnv {
    /// These variables, each set to its value or unset.
    pub fn new(variables: impl IntoIterator<Item = (String, Option<String>)>) -> Self {
        Self(variables.into_iter().collect())
    }

    /// The variable's value for this request: its own when it brings the
    /// name, else the process's.
    pub fn var(&self, name: &str) -> Option<String> {
        match self.0.iter().find(|(n, _)| n == name) {
            Some((_, value)) => value.clone(),
            None => std::env::var(name).ok(),
        }
    }

    /// Give a child process this request's variables.
    pub(crate) fn apply(&self, command: &mut tokio::process::Command) {
        for (name, value) in self.0.iter() {
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
}
