//! Tool matchers: the `matcher` field of a hook group, compiled once when a
//! hook file is loaded and tested against each event's subject (the tool
//! name, or for events without a tool their own subject, see
//! [`Event::subject`](crate::Event::subject)). Start from [`ToolMatcher`].

use regex::Regex;

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
/// use wasm_hooks::ToolMatcher;
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
        Regex::new(m).map(Self::Regex)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn everything_else_is_an_unanchored_regex() {
        assert!(m("Edit.*").matches(Some("NotebookEdit")));
        assert!(m("^Bash$").matches(Some("Bash")));
        assert!(!m("^Bash$").matches(Some("BashOutput")));
        assert!(ToolMatcher::parse("(unclosed").is_err());
    }
}
