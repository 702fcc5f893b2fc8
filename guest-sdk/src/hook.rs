//! The [`Hook`] trait plugin authors implement, and the adapter that binds it
//! to the generated WIT export (used only through `export_hook!`).

use std::marker::PhantomData;

use crate::bindings::exports::wasm_hooks::hook::handler::Guest;
use crate::bindings::wasm_hooks::hook::types as wit;
use crate::{Event, Outcome, Result};

/// A hook plugin. Every method has a default that answers
/// [`Outcome::proceed`], so implement only the events you care about.
///
/// The host calls [`Hook::handle`] once per event on a fresh instance: no
/// state survives from one event to the next. Returning `Err` is a hook
/// failure; the host applies the hook's `on_failure` policy.
pub trait Hook {
    /// Entry point for every event. The default dispatches on the canonical
    /// event name to the methods below, and to [`Hook::other`] for the rest.
    fn handle(event: &Event) -> Result<Outcome> {
        match event.name() {
            // A shell command run another way (a skill's `!cmd`) is a
            // `Bash` call to a guard: the host names it PreToolUse for a
            // hook written for those, and an older host does not.
            "PreToolUse" | "PreSkillShellCommand" => Self::pre_tool_use(event),
            "PostToolUse" => Self::post_tool_use(event),
            "PostToolUseFailure" => Self::post_tool_use_failure(event),
            "UserPromptSubmit" => Self::user_prompt_submit(event),
            "PermissionRequest" => Self::permission_request(event),
            "Notification" => Self::notification(event),
            "Stop" => Self::stop(event),
            "SubagentStop" => Self::subagent_stop(event),
            "SessionStart" => Self::session_start(event),
            "SessionEnd" => Self::session_end(event),
            _ => Self::other(event),
        }
    }

    /// Before a tool runs: can deny, ask or rewrite its input.
    fn pre_tool_use(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// After a tool succeeded.
    fn post_tool_use(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// After a tool failed.
    fn post_tool_use_failure(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// The person submitted a prompt.
    fn user_prompt_submit(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// A permission prompt is about to be shown.
    fn permission_request(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// The agent notifies the person.
    fn notification(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// The agent finished answering; a deny makes it go on, with the reason.
    fn stop(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// A subagent finished.
    fn subagent_stop(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// A session begins or resumes.
    fn session_start(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// A session ends.
    fn session_end(event: &Event) -> Result<Outcome> {
        Self::other(event)
    }

    /// Every event without a method of its own, and the default of every
    /// method above: [`Outcome::proceed`].
    fn other(event: &Event) -> Result<Outcome> {
        let _ = event;
        Ok(Outcome::proceed())
    }
}

/// Binds a [`Hook`] to the generated export trait.
#[doc(hidden)]
pub struct Adapter<H>(PhantomData<H>);

impl<H: Hook> Guest for Adapter<H> {
    fn handle(event: wit::Event) -> std::result::Result<wit::Outcome, String> {
        let event = Event::from(event);
        H::handle(&event)
            .map(Into::into)
            .map_err(|e| e.message().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct OnlyStop;
    impl Hook for OnlyStop {
        fn stop(_: &Event) -> Result<Outcome> {
            Ok(Outcome::deny("keep going"))
        }
        fn session_start(_: &Event) -> Result<Outcome> {
            Err(crate::Error::new("broken"))
        }
    }

    fn call(name: &str) -> std::result::Result<wit::Outcome, String> {
        Adapter::<OnlyStop>::handle(wit::Event {
            name: name.into(),
            session_id: "s".into(),
            timestamp: "t".into(),
            cwd: None,
            tool_name: None,
            payload: "{}".into(),
        })
    }

    #[test]
    fn handle_dispatches_by_event_name_and_defaults_to_proceed() {
        assert!(matches!(
            call("Stop").unwrap().decision,
            wit::Decision::Deny(_)
        ));
        assert!(matches!(
            call("PreToolUse").unwrap().decision,
            wit::Decision::Proceed
        ));
        assert!(matches!(
            call("Checkpoint").unwrap().decision,
            wit::Decision::Proceed
        ));
        assert_eq!(call("SessionStart").unwrap_err(), "broken");
    }
}
