//! Lints: hook entries that load but can silently never do what they say
//! (a matcher no tool name fits, a rule on a field no event carries, a
//! guard that fails open). Each is a warning with the field it is about;
//! `validate --deny-warnings` makes them errors.

use wasm_hooks_core::{
    EventName, EventPattern, KNOWN_RECORD_FIELDS, KNOWN_TOOLS, OnFailure, ToolMatcher, nearest,
};

/// What the lints look at in one loaded hook.
pub(super) struct HookShape<'a> {
    pub(super) events: &'a EventPattern,
    /// The matcher as written (the group's, or the hook's own).
    pub(super) matcher_text: Option<&'a str>,
    pub(super) matcher: &'a ToolMatcher,
    /// The kind's `type` name.
    pub(super) kind: &'static str,
    /// `on_failure` if the entry sets it.
    pub(super) on_failure: Option<OnFailure>,
    pub(super) background: bool,
    /// The record fields the hook reads by name.
    pub(super) reads: &'a [String],
    /// Whether it is in Claude Code's own settings file (which Claude Code
    /// reads too, with its own key names).
    pub(super) in_claude_settings: bool,
}

/// Where a lint points.
pub(super) enum Place {
    /// The matcher (the group's, for a hook in a group).
    Matcher,
    /// A field of the hook entry.
    Field(&'static str),
}

/// One warning.
pub(super) struct Lint {
    pub(super) place: Place,
    pub(super) message: String,
}

/// Every lint that applies to `hook`.
pub(super) fn lint(hook: &HookShape<'_>) -> Vec<Lint> {
    let mut found = Vec::new();
    found.extend(matcher_near_a_tool(hook));
    found.extend(suffix_against_matcher(hook));
    found.extend(guard_failing_open(hook));
    // Where the fields are named: a command's templates, or rules.
    let reads_in = if hook.kind == "command" {
        "command"
    } else {
        "rules"
    };
    found.extend(
        hook.reads
            .iter()
            .filter_map(|f| field_no_event_has(hook.events, f, reads_in)),
    );
    found
}

/// A matcher that fits none of the agents' tools, whose words differ from
/// a tool name only by case or a small misspelling (`bash` for `Bash`).
fn matcher_near_a_tool(hook: &HookShape<'_>) -> Option<Lint> {
    let text = hook.matcher_text?.trim();
    if text.is_empty() || text == "*" || KNOWN_TOOLS.iter().any(|t| hook.matcher.matches(Some(t))) {
        return None;
    }
    let words: Vec<&str> = text
        .split('|')
        .map(str::trim)
        .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .collect();
    let near: Vec<String> = words
        .iter()
        .filter_map(|w| nearest(w, KNOWN_TOOLS.iter().copied()).map(|n| format!("`{n}`")))
        .collect();
    (!near.is_empty()).then(|| Lint {
        place: Place::Matcher,
        message: format!(
            "the matcher `{text}` fits no tool of Claude Code, Codex or Gemini CLI, so this hook never runs on one; did you mean {}? (tool names are matched case by case)",
            near.join(" or ")
        ),
    })
}

/// An event key that names a tool (`tool:pre_execute:bash`) under a
/// matcher that never fits that tool.
fn suffix_against_matcher(hook: &HookShape<'_>) -> Option<Lint> {
    let tools: Vec<&str> = hook.events.tools().collect::<Option<_>>()?;
    if matches!(hook.matcher, ToolMatcher::Any) {
        return None;
    }
    // The suffix is compared without case; try the agents' spellings too.
    let fits = |suffix: &str| {
        std::iter::once(suffix)
            .chain(
                KNOWN_TOOLS
                    .iter()
                    .copied()
                    .filter(|t| t.eq_ignore_ascii_case(suffix)),
            )
            .any(|t| hook.matcher.matches(Some(t)))
    };
    if tools.iter().any(|t| fits(t)) {
        return None;
    }
    Some(Lint {
        place: Place::Matcher,
        message: format!(
            "the event names the tool{} {} but the matcher `{}` never fits {}, so this hook never runs",
            if tools.len() == 1 { "" } else { "s" },
            tools
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", "),
            hook.matcher_text.unwrap_or_default(),
            if tools.len() == 1 { "it" } else { "them" },
        ),
    })
}

/// A hook that can deny an action, on an event that guards one, left at the
/// default `on_failure` (warn): when it crashes, times out or cannot read
/// its config, the action goes through. An explicit `on_failure` is a
/// choice, and is left alone.
fn guard_failing_open(hook: &HookShape<'_>) -> Option<Lint> {
    let can_deny = matches!(
        hook.kind,
        "wasm" | "command" | "http" | "mcp_tool" | "prompt" | "agent"
    );
    let guarded = hook.events.events().find(|e| e.guards_action())?;
    let say = if hook.in_claude_settings {
        // Claude Code runs this file's hooks itself and ignores keys it
        // does not know: only its own key keeps the guard closed there.
        "Claude Code runs the hooks of its own settings file itself: say `\"onFailure\": \"block\"` here (Claude Code's key, honoured from 2.1.330), or move the hook into `.wasm-hooks/hooks.json` with `wasm-hooks import claude` and say `on_failure: block` there"
    } else {
        "say `on_failure: block` for a guard, or `on_failure: warn` to keep failing open"
    };
    (can_deny && !hook.background && hook.on_failure.is_none()).then(|| Lint {
        place: Place::Field("type"),
        message: format!(
            "this {} hook can deny {guarded}, but if it fails (a crash, a timeout, a config it cannot read) the action goes through: `on_failure` defaults to `warn`; {say}",
            hook.kind
        ),
    })
}

/// A field path no event of the pattern carries: a top-level name no agent
/// sends, or a tool field on events without a tool.
fn field_no_event_has(events: &EventPattern, field: &str, reads_in: &'static str) -> Option<Lint> {
    let top = field.split('.').next().unwrap_or(field);
    let carried_by = |has: fn(EventName) -> bool| events.events().any(has);
    let message = match top {
        "tool_name" | "tool_input" | "tool_use_id" if !carried_by(EventName::has_tool) => {
            format!(
                "no event this hook is on carries `{top}` (only tool events do), so `{field}` is never there"
            )
        }
        "tool_response" if !carried_by(EventName::has_tool_output) => format!(
            "no event this hook is on carries `tool_response` (only events after a tool ran do), so `{field}` is never there"
        ),
        known if KNOWN_RECORD_FIELDS.contains(&known) => return None,
        unknown => match nearest(unknown, KNOWN_RECORD_FIELDS.iter().copied()) {
            Some(near) => format!(
                "no event carries `{unknown}` (did you mean `{near}`?), so `{field}` is never there"
            ),
            None => {
                format!("no event the agents send carries `{unknown}`, so `{field}` is never there")
            }
        },
    };
    Some(Lint {
        place: Place::Field(reads_in),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape<'a>(
        events: &'a EventPattern,
        matcher_text: &'a str,
        matcher: &'a ToolMatcher,
        reads: &'a [String],
    ) -> HookShape<'a> {
        HookShape {
            events,
            matcher_text: Some(matcher_text),
            matcher,
            kind: "inline",
            on_failure: None,
            background: false,
            reads,
            in_claude_settings: false,
        }
    }

    fn messages(events: &str, matcher: &str, reads: &[&str]) -> Vec<String> {
        let events = EventPattern::parse(events).unwrap();
        let compiled = ToolMatcher::parse(matcher).unwrap();
        let reads: Vec<String> = reads.iter().map(|&r| r.to_owned()).collect();
        lint(&shape(&events, matcher, &compiled, &reads))
            .into_iter()
            .map(|l| l.message)
            .collect()
    }

    #[test]
    fn a_lowercase_tool_name_is_caught_and_a_real_one_is_not() {
        let found = messages("PreToolUse", "bash", &[]);
        assert!(found[0].contains("did you mean `Bash`?"), "{found:?}");
        assert!(messages("PreToolUse", "Bash|Edit", &[]).is_empty());
        assert!(messages("PreToolUse", "run_shell_command", &[]).is_empty());
        assert!(messages("PreToolUse", "mcp__github__.*", &[]).is_empty());
    }

    #[test]
    fn a_tool_suffix_the_matcher_never_fits_is_caught() {
        let found = messages("tool:pre_execute:bash", "Edit", &[]);
        assert!(found[0].contains("names the tool `bash`"), "{found:?}");
        assert!(messages("tool:pre_execute:bash", "Bash", &[]).is_empty());
        assert!(messages("tool:pre_execute:bash", "", &[]).is_empty());
    }

    #[test]
    fn fields_no_event_carries_are_caught() {
        let found = messages("PreToolUse", "", &["tool_inputs.command"]);
        assert!(found[0].contains("did you mean `tool_input`?"), "{found:?}");
        let found = messages("SessionStart", "", &["tool_input.command"]);
        assert!(found[0].contains("only tool events"), "{found:?}");
        let found = messages("PreToolUse", "", &["tool_response.ok"]);
        assert!(found[0].contains("after a tool ran"), "{found:?}");
        assert!(messages("PreToolUse", "", &["tool_input.command", "cwd"]).is_empty());
    }

    #[test]
    fn only_a_guard_left_at_the_default_on_failure_is_caught() {
        let events = EventPattern::parse("PreToolUse").unwrap();
        let any = ToolMatcher::parse("").unwrap();
        let mut hook = shape(&events, "", &any, &[]);
        hook.kind = "wasm";
        assert!(lint(&hook)[0].message.contains("can deny PreToolUse"));
        hook.on_failure = Some(OnFailure::Warn);
        assert!(lint(&hook).is_empty(), "an explicit choice");
        hook.on_failure = None;
        let stop = EventPattern::parse("SessionStart").unwrap();
        hook.events = &stop;
        assert!(lint(&hook).is_empty(), "nothing to guard");
    }
}
