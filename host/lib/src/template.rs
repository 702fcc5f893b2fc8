//! Templates in commands (and, later, prompts): `{{tool_name}}`,
//! `{{tool_args.file_path}}`, `{{event}}`, … compiled once when a hook file
//! is loaded and filled in from each event. Unknown names are load errors.
//!
//! Names: `tool_name` (`tool`), `tool_args` (`args`, `tool_input`),
//! `result` (`tool_response`), `error`, `message`, `timestamp`,
//! `session_id`, `user_input` (the prompt), `event` (the whole record); a
//! dotted path after `tool_args`, `result` or `event` reaches inside.
//! Strings are inserted as they are, other values as JSON, absent ones as
//! nothing. [`Template::render_quoted`] shell-quotes every value, so that
//! none can end the command and start another.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use wasm_hooks_core::{Event, record_field};

use crate::handlers::setup::SetupError;

static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\{\{\s*([^{}\s]+)\s*\}\}").expect("the placeholder pattern is valid")
});

/// A compiled template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Value(Source),
}

/// Where a placeholder's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// The first present of these record fields.
    Field(&'static [&'static str]),
    /// A path inside a record field (`None`: the whole record).
    Path(Option<&'static str>, Vec<String>),
}

const NAMES: &str = "tool_name, tool_args, tool_args.<path>, result, error, message, timestamp, session_id, user_input, event";

impl Template {
    /// Compile `text`.
    ///
    /// # Errors
    /// When a placeholder names nothing known; the message lists the names.
    pub(crate) fn parse(text: &str) -> Result<Self, SetupError> {
        let mut parts = Vec::new();
        let mut last = 0;
        for caps in PLACEHOLDER.captures_iter(text) {
            let whole = caps.get(0).expect("a match has group 0");
            if whole.start() > last {
                parts.push(Part::Text(text[last..whole.start()].to_owned()));
            }
            parts.push(Part::Value(source(&caps[1])?));
            last = whole.end();
        }
        if last < text.len() {
            parts.push(Part::Text(text[last..].to_owned()));
        }
        Ok(Self { parts })
    }

    /// The record fields its placeholders read, as dotted paths
    /// (`tool_input.file_path`), for the lint on fields no event carries.
    pub(crate) fn fields_read(&self) -> impl Iterator<Item = String> + '_ {
        self.parts.iter().filter_map(|part| match part {
            Part::Text(_) => None,
            Part::Value(Source::Field(fields)) => fields.first().map(|f| (*f).to_owned()),
            Part::Value(Source::Path(root, path)) => Some(
                root.iter()
                    .copied()
                    .map(str::to_owned)
                    .chain(path.iter().cloned())
                    .collect::<Vec<_>>()
                    .join("."),
            ),
        })
    }

    /// Whether it has placeholders to fill in.
    pub(crate) fn has_values(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Value(_)))
    }

    /// Fill in the values as they are (for arguments run without a shell).
    pub(crate) fn render(&self, event: &Event) -> String {
        self.fill(event, |v| v)
    }

    /// Fill in the values, each shell-quoted (for `sh -c`).
    pub(crate) fn render_quoted(&self, event: &Event) -> String {
        self.fill(event, |v| {
            let v = v.replace('\0', "");
            shlex::try_quote(&v)
                .map(std::borrow::Cow::into_owned)
                .unwrap_or_default()
        })
    }

    fn fill(&self, event: &Event, quote: impl Fn(String) -> String) -> String {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.clone(),
                Part::Value(source) => quote(value(source, event)),
            })
            .collect()
    }
}

fn unknown(name: &str) -> SetupError {
    SetupError::UnknownTemplate {
        name: name.to_owned(),
        known: NAMES,
    }
}

fn source(name: &str) -> Result<Source, SetupError> {
    let (head, rest) = match name.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (name, None),
    };
    let root: Option<&'static str> = match record_field(head) {
        "tool_input" => Some("tool_input"),
        "tool_response" => Some("tool_response"),
        "event" => None,
        field if rest.is_none() => {
            let fields: &'static [&'static str] = match field {
                "tool_name" => &["tool_name"],
                "error" => &["error", "error_message"],
                "message" => &["message"],
                "timestamp" => &["timestamp"],
                "session_id" => &["session_id"],
                "prompt" => &["prompt"],
                _ => return Err(unknown(name)),
            };
            return Ok(Source::Field(fields));
        }
        _ => return Err(unknown(name)),
    };
    let path = rest
        .map(|r| r.split('.').map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(Source::Path(root, path))
}

fn value(source: &Source, event: &Event) -> String {
    let record = event.record();
    let found = match source {
        Source::Field(fields) => fields.iter().find_map(|f| record.get(*f)).cloned(),
        Source::Path(root, path) => {
            let start = match root {
                Some(field) => record.get(*field).cloned(),
                None => Some(Value::Object(record.clone())),
            };
            start.and_then(|v| path.iter().try_fold(v, |v, key| v.get(key).cloned()))
        }
    };
    match found {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event() -> Event {
        Event::pre_tool_use(
            "Write",
            json!({"file_path": "src/a b.rs", "content": "x", "meta": {"n": 3}}),
        )
        .with("session_id", "s1")
    }

    #[test]
    fn names_aliases_and_paths_are_filled_in() {
        let t = Template::parse(
            "{{tool_name}} {{ tool }} {{tool_args.file_path}} {{args.meta.n}} {{session_id}}",
        )
        .unwrap();
        assert_eq!(t.render(&event()), "Write Write src/a b.rs 3 s1");
        let t =
            Template::parse("{{tool_args.meta}}|{{result}}|{{event.tool_input.content}}").unwrap();
        assert_eq!(t.render(&event()), r#"{"n":3}||x"#);
        let prompt = Event::user_prompt_submit("hello");
        assert_eq!(
            Template::parse("[{{user_input}}]").unwrap().render(&prompt),
            "[hello]"
        );
    }

    #[test]
    fn quoted_values_cannot_inject_commands() {
        let hostile = Event::pre_tool_use("Write", json!({"file_path": "'; rm -rf ~; '"}));
        let t = Template::parse("prettier --write {{tool_args.file_path}}").unwrap();
        let line = t.render_quoted(&hostile);
        // The shell sees exactly one argument after --write.
        let words = shlex::split(&line).unwrap();
        assert_eq!(words, ["prettier", "--write", "'; rm -rf ~; '"]);
        assert_eq!(
            shlex::split(&t.render_quoted(&event())).unwrap(),
            ["prettier", "--write", "src/a b.rs"]
        );
    }

    #[test]
    fn unknown_names_are_errors_listing_the_known_ones() {
        let err = Template::parse("echo {{tool_nmae}}")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown template `{{tool_nmae}}`") && err.contains("tool_args.<path>"),
            "{err}"
        );
        assert!(Template::parse("echo {{session_id.x}}").is_err());
        assert_eq!(
            Template::parse("no placeholders").unwrap().render(&event()),
            "no placeholders"
        );
    }
}
