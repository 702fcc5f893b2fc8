//! [`PermissionRule`]: Claude Code's permission-rule syntax as a hook's `if`
//! condition (`Bash(git *)`, `Edit(src/**)`, `WebFetch(domain:example.com)`,
//! `mcp__github`): the hook runs only for tool calls the rule matches.
//!
//! - `Tool` matches every call of that tool; `mcp__server` every tool of
//!   that MCP server.
//! - `Bash(pattern)`: the command, where `*` matches anything (spaces and
//!   slashes too); the older `prefix:*` is `prefix*`.
//! - `Read`, `Edit`, `Write`, `MultiEdit`, `NotebookEdit`, `Glob`, `Grep`
//!   `(pattern)`: the path, as a glob where `*` stays inside one directory
//!   and `**` crosses them. A relative pattern is relative to the event's
//!   `cwd`; `//path` is absolute, `~/path` in the home directory.
//! - `WebFetch(domain:host)`: the URL's host; `WebFetch(pattern)` the URL.
//! - Any other `Tool(pattern)`: any string field of the input.

use std::fmt;

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use crate::event::Event;

/// A permission rule, compiled.
///
/// # Examples
/// ```
/// use serde_json::json;
/// use wasm_hooks_core::{Event, PermissionRule};
///
/// let git = PermissionRule::parse("Bash(git *)").unwrap();
/// assert!(git.matches(&Event::pre_tool_use("Bash", json!({"command": "git push"}))));
/// assert!(!git.matches(&Event::pre_tool_use("Bash", json!({"command": "rm -rf /"}))));
/// ```
#[derive(Debug, Clone)]
pub struct PermissionRule {
    text: String,
    tool: String,
    /// `mcp__server__` for a rule naming an MCP server, which matches its
    /// every tool.
    server_prefix: Option<String>,
    argument: Option<Argument>,
}

#[derive(Debug, Clone)]
enum Argument {
    Command(GlobMatcher),
    /// A path glob, and whether it is relative (to the event's `cwd`).
    Path(GlobMatcher, bool),
    /// A host, and `.host` for its subdomains.
    Domain(String, String),
    Any(GlobMatcher),
}

/// Tools whose argument is a path.
const PATH_TOOLS: &[(&str, &[&str])] = &[
    ("Read", &["file_path"]),
    ("Edit", &["file_path"]),
    ("Write", &["file_path"]),
    ("MultiEdit", &["file_path"]),
    ("NotebookEdit", &["notebook_path"]),
    ("Glob", &["path", "pattern"]),
    ("Grep", &["path"]),
];

/// Why a permission rule does not read, naming the rule and what it
/// must be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RuleError(String);

impl PermissionRule {
    /// Compile a rule.
    ///
    /// # Errors
    /// When it is not `Tool` or `Tool(pattern)`, or the pattern is not a
    /// valid glob; the message says which.
    pub fn parse(text: &str) -> Result<Self, RuleError> {
        let text = text.trim();
        let (tool, argument) = match text.split_once('(') {
            None => (text, None),
            Some((tool, rest)) => {
                let pattern = rest.strip_suffix(')').ok_or_else(|| {
                    RuleError(format!(
                        "`{text}`: a rule is `Tool` or `Tool(pattern)`, with the `)` at the end"
                    ))
                })?;
                (tool.trim(), Some(pattern.trim()))
            }
        };
        if tool.is_empty() || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(RuleError(format!("`{text}`: `{tool}` is not a tool name")));
        }
        let argument = match argument {
            None | Some("" | "*") => None,
            Some(pattern) => Some(
                Argument::compile(tool, pattern)
                    .map_err(|e| RuleError(format!("`{text}`: {e}")))?,
            ),
        };
        Ok(Self {
            text: text.to_owned(),
            tool: tool.to_owned(),
            server_prefix: tool.starts_with("mcp__").then(|| format!("{tool}__")),
            argument,
        })
    }

    /// Whether the rule matches `event`'s tool call (never an event
    /// without a tool).
    pub fn matches(&self, event: &Event) -> bool {
        let Some(tool) = event.tool_name() else {
            return false;
        };
        let named = tool == self.tool
            || self
                .server_prefix
                .as_deref()
                .is_some_and(|prefix| tool.starts_with(prefix));
        if !named {
            return false;
        }
        let Some(argument) = &self.argument else {
            return true;
        };
        let input = event.tool_input().unwrap_or(&Value::Null);
        let text = |field: &str| input.get(field).and_then(Value::as_str);
        match argument {
            Argument::Command(glob) => text("command").is_some_and(|c| glob.is_match(c.trim())),
            Argument::Path(glob, relative) => path_fields(tool)
                .iter()
                .filter_map(|f| text(f))
                .any(|path| path_matches(glob, *relative, path, event.cwd())),
            Argument::Domain(domain, subdomains) => text("url")
                .and_then(host)
                .is_some_and(|h| h == *domain || h.ends_with(subdomains.as_str())),
            Argument::Any(glob) => match input {
                Value::Object(fields) => fields
                    .values()
                    .filter_map(Value::as_str)
                    .any(|v| glob.is_match(v)),
                _ => false,
            },
        }
    }
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::Shown(&self.text).fmt(f)
    }
}

impl Argument {
    fn compile(tool: &str, pattern: &str) -> Result<Self, String> {
        if tool == "Bash" {
            let pattern = pattern
                .strip_suffix(":*")
                .map_or_else(|| pattern.to_owned(), |p| format!("{p}*"));
            return glob(&pattern, false).map(Self::Command);
        }
        if tool == "WebFetch"
            && let Some(domain) = pattern.strip_prefix("domain:")
        {
            let domain = domain.to_ascii_lowercase();
            let subdomains = format!(".{domain}");
            return Ok(Self::Domain(domain, subdomains));
        }
        if !path_fields(tool).is_empty() {
            let pattern = expand_home(pattern);
            let relative = !pattern.starts_with('/');
            return glob(&pattern, true).map(|g| Self::Path(g, relative));
        }
        glob(pattern, false).map(Self::Any)
    }
}

fn path_fields(tool: &str) -> &'static [&'static str] {
    PATH_TOOLS
        .iter()
        .find(|(name, _)| *name == tool)
        .map_or(&[], |(_, fields)| fields)
}

fn glob(pattern: &str, literal_separator: bool) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("bad pattern `{pattern}`: {e}"))
}

/// `//abs` is `/abs`, `~/x` is in the home directory; anything else as is.
fn expand_home(pattern: &str) -> String {
    if let Some(absolute) = pattern.strip_prefix("//") {
        return format!("/{absolute}");
    }
    match (pattern.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => pattern.to_owned(),
    }
}

/// A path against a path glob: as given, and relative to `cwd` when the
/// pattern is `relative`.
fn path_matches(glob: &GlobMatcher, relative: bool, path: &str, cwd: Option<&str>) -> bool {
    if glob.is_match(path) {
        return true;
    }
    relative
        && cwd
            .and_then(|cwd| {
                path.strip_prefix(cwd.trim_end_matches('/'))?
                    .strip_prefix('/')
            })
            .is_some_and(|inside| glob.is_match(inside))
}

/// The host of an `http(s)://` URL, lowercased.
fn host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(tool: &str, input: Value) -> Event {
        Event::pre_tool_use(tool, input).with("cwd", "/home/dev/project")
    }

    fn hits(rule: &str, tool: &str, input: Value) -> bool {
        PermissionRule::parse(rule)
            .unwrap()
            .matches(&call(tool, input))
    }

    #[test]
    fn bash_rules_match_the_command_with_star_crossing_everything() {
        assert!(hits(
            "Bash(git *)",
            "Bash",
            json!({"command": "git commit -m 'a/b'"})
        ));
        assert!(!hits("Bash(git *)", "Bash", json!({"command": "rm -rf /"})));
        assert!(hits(
            "Bash(npm run test:*)",
            "Bash",
            json!({"command": "npm run test -- -w"})
        ));
        assert!(hits("Bash", "Bash", json!({"command": "anything"})));
        assert!(!hits("Bash(git *)", "Edit", json!({"command": "git push"})));
    }

    #[test]
    fn path_rules_match_relative_to_the_cwd_and_stay_in_directories() {
        let edit = |path: &str| hits("Edit(src/**)", "Edit", json!({"file_path": path}));
        assert!(edit("/home/dev/project/src/main.rs"));
        assert!(edit("/home/dev/project/src/a/b/c.rs"));
        assert!(!edit("/home/dev/project/tests/a.rs"));
        assert!(!edit("/elsewhere/src/main.rs"));
        assert!(!hits(
            "Read(*.rs)",
            "Read",
            json!({"file_path": "/home/dev/project/src/main.rs"})
        ));
        assert!(hits(
            "Read(//etc/**)",
            "Read",
            json!({"file_path": "/etc/passwd"})
        ));
    }

    #[test]
    fn domains_mcp_servers_and_bad_rules() {
        assert!(hits(
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://docs.example.com/x"})
        ));
        assert!(!hits(
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://example.com.evil.io/"})
        ));
        assert!(hits("mcp__github", "mcp__github__create_pr", json!({})));
        assert!(!hits("mcp__github", "mcp__gitlab__x", json!({})));
        assert!(
            PermissionRule::parse("Bash(git *")
                .unwrap_err()
                .to_string()
                .contains("`)`")
        );
        assert!(
            PermissionRule::parse("Ba sh")
                .unwrap_err()
                .to_string()
                .contains("not a tool name")
        );
        let stop = Event::stop(false);
        assert!(!PermissionRule::parse("Bash").unwrap().matches(&stop));
    }
}
