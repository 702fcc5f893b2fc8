//! The answers agents read, as serde types, one set per format: Claude Code's
//! ([`ClaudeAnswer`], which Codex reads too) is both how command and HTTP
//! hooks' answers are read (`handlers::answer`) and how the Claude Code and
//! Codex adapters write theirs (`protocol::claude`); Gemini CLI's
//! ([`GeminiAnswer`]) is written by its adapter. The fields every format
//! shares are [`Common`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What every agent's answer shares: ending the turn, messages for the
/// person, hiding the hook's output.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Common {
    /// `false` ends the agent's turn.
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    pub(crate) go_on: Option<bool>,
    /// Why the turn ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stop_reason: Option<String>,
    /// Hide the hook's output from the transcript.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) suppress_output: Option<bool>,
    /// A message shown to the person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system_message: Option<String>,
}

/// Claude Code's JSON answer (Codex reads the same).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaudeAnswer {
    /// The fields every agent shares.
    #[serde(flatten)]
    pub(crate) common: Common,
    /// The top-level decision (`block` on UserPromptSubmit, PostToolUse,
    /// Stop…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) decision: Option<DecisionWord>,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// The part named after the event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hook_specific_output: Option<ClaudeSpecific>,
    /// A terminal notification or title sequence (Claude Code 2.1.330).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) terminal_sequence: Option<String>,
}

/// Claude Code's `hookSpecificOutput`.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaudeSpecific {
    /// The event it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hook_event_name: Option<String>,
    /// PreToolUse's decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) permission_decision: Option<PermissionWord>,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) permission_decision_reason: Option<String>,
    /// The tool's new input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) updated_input: Option<Value>,
    /// Any tool's new output (PostToolUse), in the tool's own output shape
    /// (Claude Code checks it, and keeps the original when it does not fit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) updated_tool_output: Option<Value>,
    /// An MCP tool's new output (PostToolUse; the older field).
    #[serde(
        rename = "updatedMCPToolOutput",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) updated_mcp_tool_output: Option<Value>,
    /// Context for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) additional_context: Option<String>,
    /// PermissionRequest's answer: allow (with a new input) or deny.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) decision: Option<RequestDecision>,
    /// PermissionDenied: try the call again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) retry: Option<bool>,
    /// MessageDisplay: the text shown instead of the delta.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) display_content: Option<String>,
    /// SessionStart, UserPromptSubmit: the session's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) session_title: Option<String>,
    /// SessionStart: a first message, as if the person typed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) initial_user_message: Option<String>,
    /// SessionStart, CwdChanged, FileChanged: paths to watch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) watch_paths: Option<Vec<String>>,
    /// WorktreeCreate: where the new worktree is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) worktree_path: Option<String>,
    /// Elicitation(Result): accept, decline or cancel the MCP server's
    /// question.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) action: Option<ElicitationAction>,
    /// Elicitation(Result): the answers sent with an accept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) content: Option<Value>,
}

/// What a hook does with an MCP server's question (Elicitation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ElicitationAction {
    /// Answer it (with `content`).
    Accept,
    /// Refuse to answer.
    Decline,
    /// Dismiss it.
    Cancel,
}

/// PermissionRequest's `decision`: `{"behavior": "allow", "updatedInput"}`
/// or `{"behavior": "deny", "message", "interrupt"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "behavior",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub(crate) enum RequestDecision {
    /// Grant the permission, optionally for a new input.
    Allow {
        /// The tool's new input.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        updated_input: Option<Value>,
    },
    /// Refuse it.
    Deny {
        /// Why, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Also end the turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interrupt: Option<bool>,
    },
}

/// Gemini CLI's JSON answer.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GeminiAnswer {
    /// The fields every agent shares.
    #[serde(flatten)]
    pub(crate) common: Common,
    /// `deny`, or `allow` before a tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) decision: Option<PermissionWord>,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// The part named after the event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hook_specific_output: Option<GeminiSpecific>,
}

/// Gemini CLI's `hookSpecificOutput`.
#[derive(Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GeminiSpecific {
    /// The event it answers, as Gemini CLI names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hook_event_name: Option<String>,
    /// The tool's new input.
    #[serde(rename = "tool_input", skip_serializing_if = "Option::is_none")]
    pub(crate) tool_input: Option<Value>,
    /// What the model reads instead of the tool's output.
    #[serde(rename = "tool_output", skip_serializing_if = "Option::is_none")]
    pub(crate) tool_output: Option<String>,
    /// Context for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) additional_context: Option<String>,
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
    /// Claude Code 2.1.330: leave the call for later (a headless session
    /// stops with it pending; an interactive one asks). Read as `ask`,
    /// never written.
    Defer,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_words_read_every_spelling_and_write_its_own() {
        let word = |w: &str| serde_json::from_value::<DecisionWord>(w.into());
        assert_eq!(word("approve").unwrap(), DecisionWord::Allow);
        assert_eq!(word("deny").unwrap(), DecisionWord::Deny);
        assert_eq!(serde_json::to_value(DecisionWord::Deny).unwrap(), "block");
        assert_eq!(
            serde_json::from_value::<PermissionWord>("defer".into()).unwrap(),
            PermissionWord::Defer
        );
        assert!(serde_json::from_value::<PermissionWord>("later".into()).is_err());
    }
}
