//! Moving an agent's own command hooks into a wasm-hooks hook file
//! (`wasm-hooks import`): each command entry of the agent's settings
//! (Claude Code's, Codex's `hooks.json`, Gemini CLI's), but wasm-hooks'
//! own, is taken out of them, with its group's matcher, and given to the
//! hook file under the same event, where it behaves as it did: the hook
//! file reads Claude Code's shape, `if`, `async`, `timeout` and
//! `onFailure` alike. Gemini CLI's timeouts (milliseconds) become
//! `timeout_ms`, and its tool names in matchers the canonical ones the
//! engine reads its events with. Both files are edited in place, keeping
//! everything else byte for byte.

use jsonc_parser::cst::{CstInputValue, CstNode, CstObject};
use serde_json::{Map, Value};

use wasm_hooks_core::EventName;

use super::settings::{SettingsError, parse, runs_us};
use super::{Protocol, gemini};

/// What importing one settings file takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The settings without the moved entries.
    pub settings: String,
    /// The moved hooks as hook-file groups, by event: `{event: [{matcher,
    /// hooks: [entry]}]}`.
    pub hooks: Map<String, Value>,
    /// How many entries were moved.
    pub moved: usize,
    /// Entries left where they were, and why, one line each.
    pub left: Vec<String>,
}

/// Take `agent`'s command hooks out of its settings `text`: `None` when it
/// has none to move (nor any left for a reason).
///
/// # Errors
/// When the settings are not a JSON object.
pub fn take_command_hooks(text: &str, agent: Protocol) -> Result<Option<Imported>, SettingsError> {
    let (root, settings) = parse(text)?;
    let Some(hooks) = settings.object_value("hooks") else {
        return Ok(None);
    };
    let mut moved_hooks = Map::new();
    let mut moved = 0;
    let mut left = Vec::new();
    for event in hooks.properties() {
        let Some(name) = event.decoded_name() else {
            continue;
        };
        let Some(groups) = event.value().and_then(|v| v.as_array()) else {
            continue;
        };
        if EventName::parse(&name).is_err() {
            left.push(format!(
                "hooks.{name}: wasm-hooks does not know the event, so its hooks stay"
            ));
            continue;
        }
        for group in groups.elements() {
            let Some(taken) = take_from_group(&group, agent, &name, &mut left) else {
                continue;
            };
            moved += taken["hooks"].as_array().map_or(0, Vec::len);
            moved_hooks
                .entry(name.clone())
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
                .expect("made as an array")
                .push(taken);
        }
        if groups.elements().is_empty() {
            event.remove();
        }
    }
    if moved == 0 && left.is_empty() {
        return Ok(None);
    }
    if hooks.properties().is_empty()
        && let Some(prop) = settings.get("hooks")
    {
        prop.remove();
    }
    Ok(Some(Imported {
        settings: root.to_string(),
        hooks: moved_hooks,
        moved,
        left,
    }))
}

/// Take the command entries out of one group of `event`'s (removing the
/// group when nothing is left in it): the hook-file group they make, with
/// the group's matcher; `None` when it has none to move. What stays, and
/// why, goes to `left`.
fn take_from_group(
    group: &CstNode,
    agent: Protocol,
    event: &str,
    left: &mut Vec<String>,
) -> Option<Value> {
    let object = group.as_object()?;
    let entries = object.array_value("hooks")?;
    let matcher = object
        .get("matcher")
        .and_then(|m| m.value())
        .and_then(|v| v.to_serde_value());
    let mut taken = Vec::new();
    for entry in entries.elements() {
        let Some(value) = entry.to_serde_value() else {
            continue;
        };
        if value["type"] != "command" {
            left.push(format!(
                "hooks.{event}: a `{}` hook stays (import moves command hooks)",
                value["type"].as_str().unwrap_or("?")
            ));
            continue;
        }
        if runs_us(&value["command"]) {
            continue;
        }
        taken.push(converted(agent, value));
        entry.remove();
    }
    if taken.is_empty() {
        return None;
    }
    if entries.elements().is_empty() {
        group.clone().remove();
    }
    let mut new_group = Map::new();
    if let Some(matcher) = matcher {
        new_group.insert("matcher".into(), converted_matcher(agent, matcher));
    }
    new_group.insert("hooks".into(), Value::Array(taken));
    Some(Value::Object(new_group))
}

/// An entry as the hook file reads it: Gemini CLI's millisecond timeout
/// as `timeout_ms`; everything else as it was.
fn converted(agent: Protocol, mut entry: Value) -> Value {
    if agent == Protocol::Gemini
        && let Some(object) = entry.as_object_mut()
        && let Some(ms) = object.remove("timeout")
    {
        object.insert("timeout_ms".into(), ms);
    }
    entry
}

/// A matcher as the hook file reads it: Gemini CLI's tool names (in an
/// exact name or a `|` list) as the canonical names its events carry.
fn converted_matcher(agent: Protocol, matcher: Value) -> Value {
    let Value::String(text) = &matcher else {
        return matcher;
    };
    if agent != Protocol::Gemini
        || !text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '|' | ' '))
    {
        return matcher;
    }
    let names: Vec<&str> = text
        .split('|')
        .map(|name| gemini::canonical_tool(name.trim()).unwrap_or(name))
        .collect();
    Value::String(names.join("|"))
}

/// `text`, a JSON hook file (or an empty one), with `hooks`' groups added
/// under their events after any already there.
///
/// # Errors
/// When the hook file is not a JSON object with a `hooks` map (a YAML
/// file, or the flat list form, is not edited).
pub fn add_hook_groups(text: &str, hooks: &Map<String, Value>) -> Result<String, SettingsError> {
    let (root, file) = parse(text)?;
    let map: CstObject = match file.get("hooks") {
        None => file.object_value_or_set("hooks"),
        Some(prop) => prop.value().and_then(|v| v.as_object()).ok_or_else(|| {
            SettingsError::new("`hooks` is not a map from events to groups".to_owned())
        })?,
    };
    for (event, groups) in hooks {
        let list = match map.get(event) {
            None => map.array_value_or_set(event),
            Some(prop) => prop
                .value()
                .and_then(|v| v.as_array())
                .ok_or_else(|| SettingsError::new(format!("`hooks.{event}` is not a list")))?,
        };
        for group in groups.as_array().into_iter().flatten() {
            list.append(input(group));
        }
    }
    Ok(root.to_string())
}

/// The fields written first in an object, in this order (the rest keep
/// theirs): a group's matcher before its hooks, a hook's type first.
const FIRST: [&str; 4] = ["matcher", "type", "command", "hooks"];

/// A JSON value as concrete-syntax input, [`FIRST`] fields first.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(fields) => {
            let mut fields: Vec<(&String, &Value)> = fields.iter().collect();
            fields.sort_by_key(|(k, _)| FIRST.iter().position(|f| f == k).unwrap_or(FIRST.len()));
            CstInputValue::Object(
                fields
                    .into_iter()
                    .map(|(k, v)| (k.clone(), input(v)))
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const CLAUDE: &str = r#"{
  // team settings
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./guard.sh", "timeout": 5, "if": "Bash(rm *)"},
        {"type": "command", "command": "wasm-hooks hook --protocol claude"},
        {"type": "prompt", "prompt": "is this safe? $ARGUMENTS"}
      ]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "./notify.sh", "async": true}]}]
  }
}
"#;

    #[test]
    fn command_hooks_move_with_their_matcher_and_the_rest_stays() {
        let imported = take_command_hooks(CLAUDE, Protocol::Claude)
            .unwrap()
            .unwrap();
        assert_eq!(imported.moved, 2);
        assert_eq!(
            Value::Object(imported.hooks.clone()),
            json!({
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "./guard.sh", "timeout": 5, "if": "Bash(rm *)"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "./notify.sh", "async": true}]}]
            })
        );
        assert!(
            imported.left[0].contains("a `prompt` hook stays"),
            "{:?}",
            imported.left
        );
        assert!(imported.settings.contains("// team settings"));
        let left = parse(&imported.settings)
            .unwrap()
            .1
            .to_serde_value()
            .unwrap();
        assert_eq!(
            left["hooks"],
            json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "wasm-hooks hook --protocol claude"},
                {"type": "prompt", "prompt": "is this safe? $ARGUMENTS"}]}]})
        );
        let file = add_hook_groups("", &imported.hooks).unwrap();
        let file: Value = serde_json::from_str(&file).unwrap();
        assert_eq!(file["hooks"], Value::Object(imported.hooks));
    }

    #[test]
    fn gemini_timeouts_and_tool_names_are_converted() {
        let gemini = r#"{"hooks": {"BeforeTool": [{"matcher": "run_shell_command|write_file",
            "hooks": [{"type": "command", "command": "./g.sh", "timeout": 3000}]}]}}"#;
        let imported = take_command_hooks(gemini, Protocol::Gemini)
            .unwrap()
            .unwrap();
        assert_eq!(
            imported.hooks["BeforeTool"],
            json!([{"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "./g.sh", "timeout_ms": 3000}]}])
        );
        assert_eq!(
            take_command_hooks(r#"{"model": "x"}"#, Protocol::Gemini).unwrap(),
            None
        );
    }
}
