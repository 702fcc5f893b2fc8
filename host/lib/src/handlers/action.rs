//! The words hooks answer with, as types: the one vocabulary of actions
//! that inline rules and JSON answers name (every spelling the seeds and the
//! agents use is an alias of one action), and Claude Code's `decision` and
//! `permissionDecision` words, read and written through serde. Nothing else
//! matches on these strings.

use serde::de::DeserializeOwned;
use serde::de::value::{Error as WordError, StrDeserializer};
use serde::{Deserialize, Serialize};

/// What an inline rule or a generic JSON answer (`action`) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Action {
    /// No opinion (`continue`, `proceed`).
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
    /// Every spelling, for error messages.
    const SPELLINGS: &str =
        "continue, proceed, allow, deny, block, ask, ask_user, modify or inject_context";

    /// The action `word` names.
    ///
    /// # Errors
    /// An unknown word, with the spellings expected.
    pub(crate) fn named(word: &str) -> Result<Self, String> {
        read_word(word)
            .map_err(|()| format!("unknown action `{word}` (expected {})", Self::SPELLINGS))
    }
}

/// Claude Code's top-level `decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DecisionWord {
    /// `approve` (older) or `allow`.
    #[serde(rename = "approve", alias = "allow")]
    Allow,
    /// `block` or `deny`.
    #[serde(rename = "block", alias = "deny")]
    Deny,
    /// A rewrite.
    Modify,
}

/// Claude Code's `hookSpecificOutput.permissionDecision` (Gemini CLI's
/// `decision` takes the same words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PermissionWord {
    /// Allow (with `updatedInput`: a rewrite).
    Allow,
    /// Deny.
    Deny,
    /// Ask the person.
    Ask,
}

fn read_word<T: DeserializeOwned>(word: &str) -> Result<T, ()> {
    T::deserialize(StrDeserializer::<WordError>::new(word)).map_err(drop)
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
                .contains("unknown action `nuke`")
        );
        let word = |w: &str| serde_json::from_value::<DecisionWord>(w.into());
        assert_eq!(word("approve").unwrap(), DecisionWord::Allow);
        assert_eq!(word("deny").unwrap(), DecisionWord::Deny);
        assert_eq!(serde_json::to_value(DecisionWord::Deny).unwrap(), "block");
        assert!(serde_json::from_value::<PermissionWord>("defer".into()).is_err());
    }
}
