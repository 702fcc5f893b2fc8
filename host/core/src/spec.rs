//! What one registered hook is: where it applies, in what order, what a
//! failure does, where it came from, and the handler that runs it. Hook
//! files become [`HookSpec`]s in `config`; an embedding host builds them
//! directly, for instance around a Rust closure with [`HookSpec::from_fn`].

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::closure::FnHandler;
use crate::event::{Event, EventName};
use crate::handler::Handler;
use crate::id::HookId;
use crate::matcher::{EventPattern, ToolMatcher};
use crate::outcome::{Enforcement, HookResult, OnFailure};
use crate::rule::PermissionRule;

/// One hook, ready to register with [`HookRegistry::register`](crate::HookRegistry::register).
///
/// # Examples
/// ```
/// use wasm_hooks_core::{Decision, EventName, EventPattern, HookResult, HookSpec, ToolMatcher};
///
/// let no_sudo = HookSpec::from_fn("no-sudo", EventPattern::event(EventName::PreToolUse), |event| async move {
///     let sudo = event.tool_input().and_then(|i| i["command"].as_str()).is_some_and(|c| c.starts_with("sudo "));
///     Ok(HookResult::new(if sudo {
///         Decision::Deny { reason: "no sudo".into() }
///     } else {
///         Decision::Proceed
///     }))
/// })
/// .with_matcher(ToolMatcher::parse("Bash").unwrap());
/// assert_eq!(no_sudo.id.as_str(), "no-sudo");
/// ```
#[derive(Debug, Clone)]
pub struct HookSpec {
    /// The hook's name in traces and errors.
    pub id: HookId,
    /// The events it listens to.
    pub events: EventPattern,
    /// Which subjects (tool names, …) it applies to.
    pub matcher: ToolMatcher,
    /// Only tool calls this rule matches (a hook file's `if`), when given.
    pub condition: Option<PermissionRule>,
    /// Whether a PreToolUse hook whose matcher fits `Bash` also sees the
    /// shell commands an agent runs another way (a skill's inline command,
    /// [`EventName::is_other_shell`]) as `Bash` calls: one guard for every
    /// way a shell command runs. On by default; a hook file's
    /// `"every_shell": false` keeps the hook to tool calls.
    pub every_shell: bool,
    /// What the hook is for, as its author says.
    pub description: Option<String>,
    /// Lower runs first; ties keep registration (file) order.
    pub priority: i32,
    /// What a failure of this hook does.
    pub on_failure: OnFailure,
    /// Whether its answer is acted on, or only recorded (a hook being
    /// tried out).
    pub enforcement: Enforcement,
    /// Run in the background: started, never awaited, its answer only
    /// logged (hook files say `"async": true`).
    pub background: bool,
    /// Where it was declared.
    pub source: HookSource,
    /// What runs.
    pub handler: Arc<dyn Handler>,
    /// Whether the hook comes from a layer the person trusts (hooks from
    /// code always do). An untrusted hook may only make things safer: its
    /// deny, ask, context and messages count; its allow counts as no
    /// opinion; its rewrites are refused; it cannot end the turn or ask the
    /// agent for anything else.
    pub trusted: bool,
    /// Whether the hook comes from a project's layer (its hook files or
    /// agent settings, trusted or not). A project's hooks together have
    /// only their share of an event's deadline
    /// ([`DispatchLimits::PROJECT_SHARE_PERCENT`](crate::DispatchLimits::PROJECT_SHARE_PERCENT)),
    /// so that however slow they are, the person's and the organisation's
    /// hooks still run.
    pub from_project: bool,
    /// Where the engine does less than the declaration asks (a setting it
    /// reads but cannot honour whole), one sentence each, for `validate`
    /// and `list` to show: never silence.
    pub caveats: Vec<String>,
}

/// Where a hook was declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookSource {
    /// An entry of a hook file.
    File {
        /// The hook file.
        file: PathBuf,
        /// The entry, e.g. `hooks.PreToolUse[0].hooks[1]`.
        entry: String,
    },
    /// Registered by the embedding program.
    Code,
}

impl fmt::Display for HookSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File { file, entry } => write!(
                f,
                "{}: {}",
                crate::Shown(&file.to_string_lossy()),
                crate::Shown(entry)
            ),
            Self::Code => f.write_str("registered in code"),
        }
    }
}

impl HookSpec {
    /// A hook running `handler` on `events`, for every tool, with priority
    /// 0, `on_failure: warn`, enforced, in the foreground.
    pub fn new(id: impl AsRef<str>, events: EventPattern, handler: Arc<dyn Handler>) -> Self {
        Self {
            id: HookId::new(id),
            events,
            matcher: ToolMatcher::Any,
            condition: None,
            every_shell: true,
            description: None,
            priority: 0,
            on_failure: OnFailure::default(),
            enforcement: Enforcement::Enforce,
            background: false,
            source: HookSource::Code,
            handler,
            trusted: true,
            from_project: false,
            caveats: Vec::new(),
        }
    }

    /// A hook written as a Rust closure; an `Err` is a hook failure.
    pub fn from_fn<F, Fut>(id: impl AsRef<str>, events: EventPattern, f: F) -> Self
    where
        F: Fn(Event) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<HookResult, String>> + Send + 'static,
    {
        Self::new(id, events, Arc::new(FnHandler::new(f)))
    }

    /// This hook, for the subjects `matcher` accepts only.
    pub fn with_matcher(mut self, matcher: ToolMatcher) -> Self {
        self.matcher = matcher;
        self
    }

    /// This hook, for the tool calls `rule` matches only.
    pub fn with_condition(mut self, rule: PermissionRule) -> Self {
        self.condition = Some(rule);
        self
    }

    /// This hook, at `priority` (lower runs first).
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// This hook, with this failure policy.
    pub fn with_on_failure(mut self, on_failure: OnFailure) -> Self {
        self.on_failure = on_failure;
        self
    }

    /// This hook, its answers acted on or only recorded.
    pub fn with_enforcement(mut self, enforcement: Enforcement) -> Self {
        self.enforcement = enforcement;
        self
    }

    /// This hook, run in the background (never awaited).
    pub fn in_background(mut self) -> Self {
        self.background = true;
        self
    }

    /// Whether the hook applies to `event`.
    pub fn applies_to(&self, event: &Event) -> bool {
        self.misfit(event).is_none()
    }

    /// Why the hook does not apply to `event`: the first of its event
    /// pattern, its matcher and its `if` rule that does not fit (`None`
    /// when it applies).
    pub fn misfit(&self, event: &Event) -> Option<Misfit> {
        let subject = event.subject();
        if !self.listens_to(event.name(), subject) {
            Some(Misfit::Event)
        } else if !self.matcher.matches(subject) {
            Some(Misfit::Matcher)
        } else if self
            .condition
            .as_ref()
            .is_some_and(|rule| !rule.matches(event))
        {
            Some(Misfit::Condition)
        } else {
            None
        }
    }
}

impl HookSpec {
    /// `event` as this hook is written to see it: a shell command run
    /// another way reaches a hook that takes it only as a `Bash` call (not
    /// by its own name) as a PreToolUse `Bash` call
    /// ([`Event::as_tool_call`]), so that every kind of guard (a wasm
    /// plugin's `pre_tool_use`, a command's script, an inline rule)
    /// answers it as it answers that; any other event as it is.
    pub fn presented<'e>(&self, event: &'e Event) -> std::borrow::Cow<'e, Event> {
        if event.name().is_other_shell() && !self.events.matches(event.name(), event.subject()) {
            event.as_tool_call()
        } else {
            std::borrow::Cow::Borrowed(event)
        }
    }

    /// Whether the hook's events take an event of this name and subject:
    /// its pattern's own, and, for [`HookSpec::every_shell`], a shell
    /// command run another way when the pattern takes a PreToolUse `Bash`
    /// call (the matcher is checked after, against the same `Bash`).
    fn listens_to(&self, name: EventName, subject: Option<&str>) -> bool {
        self.events.matches(name, subject)
            || (name.is_other_shell()
                && self.every_shell
                && self.events.matches(EventName::PreToolUse, subject))
    }
}

/// Which part of a hook's "where" an event does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Misfit {
    /// The event (or the tool named in the event key) is not the hook's.
    Event,
    /// The matcher does not fit the event's subject (its tool).
    Matcher,
    /// The `if` rule does not hold.
    Condition,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::outcome::Decision;

    fn guard(events: &str, matcher: &str) -> HookSpec {
        HookSpec::from_fn("guard", EventPattern::parse(events).unwrap(), |_| async {
            Ok(HookResult::new(Decision::Proceed))
        })
        .with_matcher(ToolMatcher::parse(matcher).unwrap())
    }

    #[test]
    fn a_bash_guard_on_pre_tool_use_also_sees_a_skills_shell_command() {
        let skill = Event::new(EventName::PreSkillShellCommand)
            .with("tool_name", "Bash")
            .with("tool_input", json!({"command": "rm -rf victim"}));
        assert!(guard("PreToolUse", "Bash").applies_to(&skill));
        assert!(guard("tool:pre_execute:bash", "*").applies_to(&skill));
        assert!(guard("PreToolUse", "").applies_to(&skill));
        assert!(guard("PreSkillShellCommand", "").applies_to(&skill));
        assert_eq!(
            guard("PreToolUse", "Edit|Write").misfit(&skill),
            Some(Misfit::Matcher)
        );
        assert_eq!(
            guard("PostToolUse", "Bash").misfit(&skill),
            Some(Misfit::Event)
        );
        let mut tool_calls_only = guard("PreToolUse", "Bash");
        tool_calls_only.every_shell = false;
        assert_eq!(tool_calls_only.misfit(&skill), Some(Misfit::Event));
        let call = Event::pre_tool_use("Bash", json!({"command": "ls"}));
        assert!(tool_calls_only.applies_to(&call));
        assert!(!guard("PreSkillShellCommand", "").applies_to(&call));
    }
}
