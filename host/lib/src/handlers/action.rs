//! The one vocabulary of actions that inline rules and JSON answers name:
//! every spelling the seeds and the agents use is an alias of one
//! [`Action`]. (Claude Code's own `decision` and `permissionDecision` words
//! are `protocol::answer`'s.)

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde::de::value::{Error as WordError, StrDeserializer};

/// What an inline rule or a generic JSON answer (`action`) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
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
    }
}
