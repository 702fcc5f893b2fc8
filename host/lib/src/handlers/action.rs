//! The one vocabulary of actions that inline rules and JSON answers name:
//! every spelling the seeds and the agents use is an alias of one
//! [`Action`]. (Claude Code's own `decision` and `permissionDecision` words
//! are `protocol::answer`'s.)

use serde::Deserialize;
use serde::de::value::{Error as WordError, StrDeserializer};

/// What an inline rule or a generic JSON answer (`action`) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Action {
    /// No opinion (`continue`, `proceed`): a rule's default.
    #[default]
    #[serde(alias = "proceed")]
    Continue,
    /// Let the operation go ahead.
    Allow,
    /// Refuse it (`deny`, `block`).
    #[serde(alias = "block")]
    Deny,
    /// Ask the person (`ask`, `ask_user`).
    #[serde(alias = "ask_user")]
    Ask,
    /// Rewrite the tool's input (or, after it ran, its output).
    Modify,
    /// Add context and go on.
    InjectContext,
}

impl Action {
    /// The word a hook file names it by (`deny`, `inject_context`).
    pub(crate) fn word(self) -> &'static str {
        match self {
            Action::Continue => "continue",
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::Ask => "ask",
            Action::Modify => "modify",
            Action::InjectContext => "inject_context",
        }
    }

    /// The action `word` names (for an `action` given as plain text, as a
    /// matcher entry's is).
    ///
    /// # Errors
    /// An unknown word: serde's message, which lists every spelling.
    pub(crate) fn named(word: &str) -> Result<Self, String> {
        Self::deserialize(StrDeserializer::<WordError>::new(word))
            .map_err(|e| format!("`action`: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_names_one_action() {
        for (word, action) in [
            ("continue", Action::Continue),
            ("proceed", Action::Continue),
            ("block", Action::Deny),
            ("deny", Action::Deny),
            ("ask", Action::Ask),
            ("ask_user", Action::Ask),
            ("inject_context", Action::InjectContext),
        ] {
            assert_eq!(Action::named(word), Ok(action), "{word}");
        }
        assert!(
            Action::named("nuke")
                .unwrap_err()
                .contains("`action`: unknown variant `nuke`, expected one of")
        );
    }
}
