//! Matching hooks to events, compiled once when a hook file is loaded:
//! [`EventPattern`] (which events a hook listens to: exact names, globs over
//! names and aliases, a tool-specific suffix, comma lists) and
//! [`ToolMatcher`] (the `matcher` field of a hook group, tested against each
//! event's subject: the tool name, or for events without a tool their own
//! subject, see [`Event::subject`](crate::Event::subject)).

use globset::{Glob, GlobMatcher};
use regex::Regex;

use crate::event::{CATALOGUE, EventName, UnknownEvent};

/// Which events a hook listens to, as written where a hook file names
/// events:
///
/// - exact, canonical or alias: `PreToolUse`, `tool:pre_execute`;
/// - a glob over canonical and alias names: `tool:*`, `*ToolUse`, `*`;
/// - a tool-specific suffix: `tool:pre_execute:bash` is `PreToolUse` for the
///   tool `bash` (compared without regard to case);
/// - a comma list of any of these: `session:start,session:end`.
///
/// # Examples
/// ```
/// use wasm_hooks_core::{EventName, EventPattern};
/// let p = EventPattern::parse("tool:*").unwrap();
/// assert!(p.matches(EventName::PreToolUse, Some("Bash")));
/// assert!(p.matches(EventName::PostToolUseFailure, None));
/// assert!(!p.matches(EventName::Stop, None));
/// let bash = EventPattern::parse("tool:pre_execute:bash").unwrap();
/// assert!(bash.matches(EventName::PreToolUse, Some("Bash")));
/// assert!(!bash.matches(EventName::PreToolUse, Some("Edit")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventPattern {
    alternatives: Vec<Alternative>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Alternative {
    events: EventSet,
    tool: Option<String>,
}

/// A set of events, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct EventSet(u64);

impl EventSet {
    /// The event's bit: its discriminant, which is its place in the
    /// catalogue (both come from one list in `event`).
    fn bit(name: EventName) -> u64 {
        1 << (name as u32)
    }

    fn insert(&mut self, name: EventName) {
        self.0 |= Self::bit(name);
    }

    fn contains(self, name: EventName) -> bool {
        self.0 & Self::bit(name) != 0
    }

    fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl EventPattern {
    /// Compile a pattern.
    ///
    /// # Errors
    /// When a part names no event: an unknown name (with the nearest known
    /// one as a suggestion), or a glob that matches nothing.
    pub fn parse(pattern: &str) -> Result<Self, UnknownEvent> {
        let alternatives = pattern
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(Alternative::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if alternatives.is_empty() {
            return Err(UnknownEvent::new(pattern));
        }
        Ok(Self { alternatives })
    }

    /// The pattern for every catalogued event, every tool.
    pub fn any() -> Self {
        let mut events = EventSet::default();
        for (name, _) in CATALOGUE {
            events.insert(*name);
        }
        Self {
            alternatives: vec![Alternative { events, tool: None }],
        }
    }

    /// The pattern for every event that guards an action
    /// ([`EventName::guards_action`]), every tool.
    pub fn guarding_actions() -> Self {
        let mut events = EventSet::default();
        for (name, _) in CATALOGUE {
            if name.guards_action() {
                events.insert(*name);
            }
        }
        Self {
            alternatives: vec![Alternative { events, tool: None }],
        }
    }

    /// The tool each alternative of the pattern names (`bash` in
    /// `tool:pre_execute:bash`), `None` for one that names none.
    pub fn tools(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        self.alternatives.iter().map(|a| a.tool.as_deref())
    }

    /// The pattern for exactly one event, every tool.
    pub fn event(name: EventName) -> Self {
        let mut events = EventSet::default();
        events.insert(name);
        Self {
            alternatives: vec![Alternative { events, tool: None }],
        }
    }

    /// Whether an event with this name and subject fits the pattern.
    pub fn matches(&self, name: EventName, subject: Option<&str>) -> bool {
        self.alternatives.iter().any(|a| {
            a.events.contains(name)
                && a.tool
                    .as_deref()
                    .is_none_or(|t| subject.is_some_and(|s| s.eq_ignore_ascii_case(t)))
        })
    }

    /// Every event the pattern can match, in catalogue order.
    pub fn events(&self) -> impl Iterator<Item = EventName> + '_ {
        CATALOGUE
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| self.alternatives.iter().any(|a| a.events.contains(*n)))
    }
}

impl Alternative {
    fn parse(part: &str) -> Result<Self, UnknownEvent> {
        if let Some(events) = Self::names(part) {
            return Ok(Self { events, tool: None });
        }
        // `tool:pre_execute:bash`: an event pattern, then a tool name.
        if let Some((head, tool)) = part.rsplit_once(':')
            && !tool.is_empty()
            && !tool.contains('*')
            && let Some(events) = Self::names(head)
        {
            return Ok(Self {
                events,
                tool: Some(tool.to_owned()),
            });
        }
        Err(UnknownEvent::new(part))
    }

    /// The events a name or glob stands for, if any.
    fn names(pattern: &str) -> Option<EventSet> {
        if !pattern.contains(['*', '?', '[']) {
            let mut set = EventSet::default();
            set.insert(EventName::parse(pattern).ok()?);
            return Some(set);
        }
        let glob: GlobMatcher = Glob::new(pattern).ok()?.compile_matcher();
        let mut set = EventSet::default();
        if pattern == "*" {
            // Everything, events the catalogue does not know included.
            set.insert(EventName::Unlisted);
        }
        for (name, aliases) in CATALOGUE {
            if glob.is_match(name.as_str()) || aliases.iter().any(|a| glob.is_match(a)) {
                set.insert(*name);
            }
        }
        (!set.is_empty()).then_some(set)
    }
}

/// A compiled `matcher`, following Claude Code's rules:
///
/// - `"*"`, `""` or none: everything;
/// - only letters, digits, `_`, `-`, `|`, `,` and spaces: exact names
///   (`Edit|Write`, `write_file, replace_in_file`);
/// - a name followed by one trailing `*`: a prefix (`mcp__*`, `builtin:*`);
/// - anything else: an unanchored regular expression (`Edit.*` also matches
///   `NotebookEdit`).
///
/// # Examples
/// ```
/// use wasm_hooks_core::ToolMatcher;
/// let m = ToolMatcher::parse("Edit|Write").unwrap();
/// assert!(m.matches(Some("Write")) && !m.matches(Some("WriteFile")));
/// assert!(ToolMatcher::parse("mcp__*").unwrap().matches(Some("mcp__github__pr")));
/// assert!(ToolMatcher::parse("Edit.*").unwrap().matches(Some("NotebookEdit")));
/// ```
#[derive(Debug, Clone)]
pub enum ToolMatcher {
    /// Matches every subject, and events without one.
    Any,
    /// One of these exact names.
    Names(Vec<String>),
    /// Names starting with this prefix.
    Prefix(String),
    /// An unanchored regular expression.
    Regex(Regex),
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

impl ToolMatcher {
    /// Compile a matcher as written in a hook file.
    ///
    /// # Errors
    /// When the matcher is taken as a regular expression and does not parse.
    pub fn parse(matcher: &str) -> Result<Self, regex::Error> {
        let m = matcher.trim();
        if m.is_empty() || m == "*" {
            return Ok(Self::Any);
        }
        if m.chars()
            .all(|c| is_name_char(c) || matches!(c, '|' | ',' | ' '))
        {
            let names = m
                .split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect();
            return Ok(Self::Names(names));
        }
        if let Some(prefix) = m.strip_suffix('*')
            && prefix.chars().all(|c| is_name_char(c) || c == ':')
        {
            return Ok(Self::Prefix(prefix.to_owned()));
        }
        crate::compile_regex(m).map(Self::Regex)
    }

    /// Whether this matcher accepts an event with this subject.
    pub fn matches(&self, subject: Option<&str>) -> bool {
        match (self, subject) {
            (Self::Any, _) => true,
            (_, None) => false,
            (Self::Names(names), Some(s)) => names.iter().any(|n| n == s),
            (Self::Prefix(prefix), Some(s)) => s.starts_with(prefix.as_str()),
            (Self::Regex(re), Some(s)) => re.is_match(s),
        }
    }
}

/// A regex syntax error on one line: `regex` spells them over several (the
/// pattern, a caret, the complaint); the complaint is the last line.
pub fn regex_error(e: &regex::Error) -> String {
    match e {
        regex::Error::CompiledTooBig(crate::regex_memo::MAX_REGEX_BUDGET_BYTES) => {
            return format!(
                "the hook files' patterns together compile past the limit of {} bytes (MAX_REGEX_BUDGET_BYTES)",
                crate::regex_memo::MAX_REGEX_BUDGET_BYTES
            );
        }
        regex::Error::CompiledTooBig(limit) => {
            return format!(
                "the pattern compiles past the limit of {limit} bytes (MAX_REGEX_BYTES)"
            );
        }
        _ => {}
    }
    let text = e.to_string();
    let last = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    last.strip_prefix("error: ").unwrap_or(last).to_owned()
}

impl std::fmt::Display for ToolMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Names(names) => crate::Shown(&names.join("|")).fmt(f),
            Self::Prefix(prefix) => write!(f, "{}*", crate::Shown(prefix)),
            Self::Regex(re) => crate::Shown(re.as_str()).fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_its_own_bit_in_catalogue_order() {
        assert!(CATALOGUE.len() <= 64, "an EventSet holds at most 64 events");
        for (index, (name, _)) in CATALOGUE.iter().enumerate() {
            assert_eq!(EventSet::bit(*name), 1 << index, "{name}");
        }
    }

    fn events(p: &str) -> Vec<EventName> {
        EventPattern::parse(p).unwrap().events().collect()
    }

    #[test]
    fn exact_names_and_aliases_match_one_event() {
        assert_eq!(events("PreToolUse"), [EventName::PreToolUse]);
        assert_eq!(events("tool:pre_execute"), [EventName::PreToolUse]);
        assert_eq!(events("BeforeAgent"), [EventName::UserPromptSubmit]);
    }

    #[test]
    fn globs_run_over_canonical_and_alias_names() {
        assert_eq!(
            events("tool:*"),
            [
                EventName::PreToolUse,
                EventName::PostToolUse,
                EventName::PostToolUseFailure
            ]
        );
        assert_eq!(
            events("*ToolUse"),
            [EventName::PreToolUse, EventName::PostToolUse]
        );
        assert_eq!(events("*").len(), CATALOGUE.len());
        let star = EventPattern::parse("*").unwrap();
        assert!(
            star.matches(EventName::Unlisted, None),
            "`*` sees unknown events"
        );
        for other in ["Pre*", "*Use", "PreToolUse"] {
            let p = EventPattern::parse(other).unwrap();
            assert!(!p.matches(EventName::Unlisted, None), "{other}");
        }
        assert_eq!(
            events("session:*"),
            [
                EventName::SessionStart,
                EventName::SessionEnd,
                EventName::SessionMessage
            ]
        );
    }

    #[test]
    fn a_tool_suffix_restricts_the_event_to_that_tool() {
        let p = EventPattern::parse("tool:pre_execute:bash").unwrap();
        assert!(p.matches(EventName::PreToolUse, Some("bash")));
        assert!(p.matches(EventName::PreToolUse, Some("Bash")));
        assert!(!p.matches(EventName::PreToolUse, Some("write_file")));
        assert!(!p.matches(EventName::PreToolUse, None));
        assert!(!p.matches(EventName::PostToolUse, Some("bash")));
        let glob = EventPattern::parse("tool:*:bash").unwrap();
        assert!(glob.matches(EventName::PostToolUse, Some("bash")));
    }

    #[test]
    fn comma_lists_are_alternatives() {
        let p = EventPattern::parse("session:start, session:end,tool:pre:bash").unwrap();
        assert!(p.matches(EventName::SessionStart, None));
        assert!(p.matches(EventName::SessionEnd, Some("logout")));
        assert!(p.matches(EventName::PreToolUse, Some("bash")));
        assert!(!p.matches(EventName::PreToolUse, Some("edit")));
    }

    #[test]
    fn patterns_that_name_no_event_are_errors_with_a_suggestion() {
        let err = EventPattern::parse("tool:pre_exeute").unwrap_err();
        assert_eq!(err.suggestion, Some("tool:pre_execute"), "{err}");
        assert!(EventPattern::parse("nothing:*").is_err());
        assert!(EventPattern::parse("").is_err());
        assert!(EventPattern::parse("PreToolUse,Nope").is_err());
    }

    fn m(s: &str) -> ToolMatcher {
        ToolMatcher::parse(s).unwrap()
    }

    #[test]
    fn empty_star_and_none_match_everything() {
        for any in ["", "*", "  "] {
            assert!(
                m(any).matches(Some("Bash")) && m(any).matches(None),
                "{any:?}"
            );
        }
    }

    #[test]
    fn name_lists_are_exact() {
        assert!(m("Bash").matches(Some("Bash")));
        assert!(!m("Bash").matches(Some("bash")));
        assert!(!m("Bash").matches(Some("BashOutput")));
        assert!(m("Edit|Write").matches(Some("Edit")));
        assert!(m("write_file, replace_in_file").matches(Some("replace_in_file")));
        assert!(!m("Bash").matches(None));
    }

    #[test]
    fn trailing_star_is_a_prefix() {
        assert!(m("mcp__*").matches(Some("mcp__memory__read")));
        assert!(m("builtin:*").matches(Some("builtin:read")));
        assert!(!m("mcp__*").matches(Some("Bash")));
    }

    #[test]
    fn regex_errors_fit_on_one_line() {
        let err = ToolMatcher::parse("(unclosed").unwrap_err();
        assert_eq!(regex_error(&err), "unclosed group");
    }

    #[test]
    fn everything_else_is_an_unanchored_regex() {
        assert!(m("Edit.*").matches(Some("NotebookEdit")));
        assert!(m("^Bash$").matches(Some("Bash")));
        assert!(!m("^Bash$").matches(Some("BashOutput")));
        assert!(ToolMatcher::parse("(unclosed").is_err());
    }
}
