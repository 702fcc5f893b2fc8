//! Installing wasm-hooks as the hook of an agent: adding and removing its
//! entries in the agent's settings (Claude Code's and Gemini CLI's
//! `settings.json`, Codex's `hooks.json`, which share one shape:
//! `{"hooks": {"<Event>": [{"matcher": …, "hooks": [entry]}]}}`), editing
//! the text in place (through a concrete syntax tree) so that everything
//! else — other settings, other hooks, comments, formatting — stays byte
//! for byte.
//!
//! An entry is ours when it is a `command` hook running `… wasm-hooks hook
//! …`, or the `http` hook of the URL installed. Installing twice changes
//! nothing; uninstalling removes exactly our entries, then the groups and
//! event lists they leave empty.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use wasm_hooks_core::EventName;

use super::Protocol;

/// The Claude Code events wasm-hooks is installed on: those a guard or an
/// audit needs, not the ones that fire per displayed chunk or file change.
const CLAUDE_EVENTS: &[EventName] = &[
    EventName::PreToolUse,
    EventName::PreSkillShellCommand,
    EventName::PermissionRequest,
    EventName::PostToolUse,
    EventName::PostToolUseFailure,
    EventName::UserPromptSubmit,
    EventName::Stop,
    EventName::SubagentStop,
    EventName::SessionStart,
    EventName::SessionEnd,
    EventName::Notification,
    EventName::PreCompact,
];

/// Codex 0.169's events (all it has, but `Interrupt`, which only reports).
const CODEX_EVENTS: &[EventName] = &[
    EventName::PreToolUse,
    EventName::PermissionRequest,
    EventName::PostToolUse,
    EventName::UserPromptSubmit,
    EventName::Stop,
    EventName::SubagentStart,
    EventName::SubagentStop,
    EventName::SessionStart,
    EventName::SessionEnd,
    EventName::PreCompact,
    EventName::PostCompact,
];

/// Gemini CLI 0.61's events, by its own names, but those that fire per
/// model call (`BeforeModel`, `AfterModel`, `BeforeToolSelection`).
const GEMINI_EVENTS: &[&str] = &[
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "SessionStart",
    "SessionEnd",
    "PreCompress",
    "Notification",
];

impl Protocol {
    /// The events wasm-hooks is installed on in this agent's settings, by
    /// the agent's own names.
    pub fn installed_events(self) -> Vec<&'static str> {
        match self {
            Protocol::Claude => CLAUDE_EVENTS.iter().map(|e| e.as_str()).collect(),
            Protocol::Codex => CODEX_EVENTS.iter().map(|e| e.as_str()).collect(),
            Protocol::Gemini => GEMINI_EVENTS.to_vec(),
        }
    }

    /// Whether the agent's `event` is about one tool call (its group gets
    /// a matcher for every tool).
    fn is_tool_event(self, event: &str) -> bool {
        match self {
            Protocol::Gemini => matches!(event, "BeforeTool" | "AfterTool"),
            Protocol::Claude | Protocol::Codex => EventName::parse(event)
                .is_ok_and(|e| e.has_tool() || e == EventName::PermissionRequest),
        }
    }
}

/// The variable an installed HTTP hook sends as its bearer token, and
/// `wasm-hooks serve --token-env` reads.
pub const TOKEN_VARIABLE: &str = "WASM_HOOKS_TOKEN";

/// The hook entry to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstalledHook {
    /// A command hook running this command line (`… wasm-hooks hook …`).
    Command(String),
    /// An HTTP hook posting to this URL (`wasm-hooks serve`).
    Http(String),
}

impl InstalledHook {
    fn entry(&self) -> CstInputValue {
        let fields = match self {
            InstalledHook::Command(command) => vec![
                ("type".to_owned(), "command".into()),
                ("command".to_owned(), command.as_str().into()),
            ],
            // `wasm-hooks serve` wants a token; Claude Code sends it from
            // the variable the person sets where both run.
            InstalledHook::Http(url) => vec![
                ("type".to_owned(), "http".into()),
                ("url".to_owned(), url.as_str().into()),
                (
                    "headers".to_owned(),
                    CstInputValue::Object(vec![(
                        "Authorization".to_owned(),
                        format!("Bearer ${TOKEN_VARIABLE}").into(),
                    )]),
                ),
                (
                    "allowedEnvVars".to_owned(),
                    CstInputValue::Array(vec![TOKEN_VARIABLE.into()]),
                ),
            ],
        };
        CstInputValue::Object(fields)
    }

    /// Whether a hook entry of a settings file is this one (for a
    /// command: any command line running `wasm-hooks hook`).
    fn is(&self, entry: &Value) -> bool {
        match self {
            InstalledHook::Command(_) => entry["type"] == "command" && runs_us(&entry["command"]),
            InstalledHook::Http(url) => entry["type"] == "http" && entry["url"] == url.as_str(),
        }
    }
}

/// Whether a command line runs `… wasm-hooks hook …` or
/// `… wasm-hooks-hook …` (see [`argv_runs_us`]): the entry `install`
/// writes, which wasm-hooks must not load as a hook of its own.
pub(crate) fn runs_us(command: &Value) -> bool {
    let words = command.as_str().and_then(shlex::split).unwrap_or_default();
    argv_runs_us(words.as_slice())
}

/// Whether a program and its arguments, given one by one (a command
/// hook's `args`), are `… wasm-hooks hook …` (a program named
/// `wasm-hooks` whose first argument is `hook`) or `… wasm-hooks-hook …`
/// (its small client).
pub(crate) fn argv_runs_us(argv: &[impl AsRef<str>]) -> bool {
    let Some((program, rest)) = argv.split_first() else {
        return false;
    };
    match program.as_ref().rsplit('/').next() {
        Some("wasm-hooks-hook") => true,
        Some("wasm-hooks") => rest.first().is_some_and(|sub| sub.as_ref() == "hook"),
        _ => false,
    }
}

/// A settings file that is not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(String);

fn parse(text: &str) -> Result<(CstRootNode, CstObject), SettingsError> {
    let text = if text.trim().is_empty() { "{}\n" } else { text };
    let root = CstRootNode::parse(text, &ParseOptions::default())
        .map_err(|e| SettingsError(format!("not JSON: {e}")))?;
    let object = root
        .object_value()
        .ok_or_else(|| SettingsError("the settings are not a JSON object".into()))?;
    Ok((root, object))
}

fn hooks_object(settings: &CstObject) -> Result<CstObject, SettingsError> {
    match settings.get("hooks") {
        None => Ok(settings.object_value_or_set("hooks")),
        Some(prop) => prop
            .value()
            .and_then(|v| v.as_object())
            .ok_or_else(|| SettingsError("`hooks` is not an object".into())),
    }
}

/// `text`, the settings of `agent`, with `hook` added on every event of
/// [`Protocol::installed_events`] that lacks it, and an older command of
/// ours replaced by this one; `None` when it is already everywhere.
///
/// # Errors
/// When the settings are not a JSON object or their `hooks` (or an event's
/// list) has another type.
pub fn install(
    text: &str,
    agent: Protocol,
    hook: &InstalledHook,
) -> Result<Option<String>, SettingsError> {
    let (root, settings) = parse(text)?;
    let hooks = hooks_object(&settings)?;
    let mut changed = false;
    for event in agent.installed_events() {
        let groups = event_list(&hooks, event)?;
        let ours: Vec<CstObject> = groups
            .elements()
            .iter()
            .filter_map(|group| group.as_object()?.array_value("hooks"))
            .flat_map(|entries| entries.elements())
            .filter(|entry| entry.to_serde_value().is_some_and(|e| hook.is(&e)))
            .filter_map(|entry| entry.as_object())
            .collect();
        if !ours.is_empty() {
            // An older entry of ours (another path, or `wasm-hooks hook`
            // where the small client is now installed) is brought up to
            // date where it stands.
            if let InstalledHook::Command(command) = hook {
                for prop in ours.iter().filter_map(|entry| entry.get("command")) {
                    let current = prop.value().and_then(|v| v.to_serde_value());
                    if current.as_ref().and_then(Value::as_str) != Some(command) {
                        prop.set_value(command.as_str().into());
                        changed = true;
                    }
                }
            }
            continue;
        }
        let mut group = Vec::new();
        if agent.is_tool_event(event) {
            group.push(("matcher".to_owned(), "*".into()));
        }
        group.push(("hooks".to_owned(), CstInputValue::Array(vec![hook.entry()])));
        groups.append(CstInputValue::Object(group));
        changed = true;
    }
    Ok(changed.then(|| root.to_string()))
}

fn event_list(hooks: &CstObject, event: &str) -> Result<CstArray, SettingsError> {
    match hooks.get(event) {
        None => Ok(hooks.array_value_or_set(event)),
        Some(prop) => prop
            .value()
            .and_then(|v| v.as_array())
            .ok_or_else(|| SettingsError(format!("`hooks.{event}` is not a list"))),
    }
}

/// `text` without `hook`'s entries, and the number removed; `None` when
/// there were none.
///
/// # Errors
/// When the settings are not a JSON object.
pub fn uninstall(
    text: &str,
    hook: &InstalledHook,
) -> Result<Option<(String, usize)>, SettingsError> {
    let (root, settings) = parse(text)?;
    let Some(hooks) = settings.object_value("hooks") else {
        return Ok(None);
    };
    let mut removed = 0;
    for event in hooks.properties() {
        let Some(groups) = event.value().and_then(|v| v.as_array()) else {
            continue;
        };
        for group in groups.elements() {
            let Some(entries) = group.as_object().and_then(|g| g.array_value("hooks")) else {
                continue;
            };
            let before = entries.elements().len();
            for entry in entries.elements() {
                if entry.to_serde_value().is_some_and(|e| hook.is(&e)) {
                    entry.remove();
                    removed += 1;
                }
            }
            if before > 0 && entries.elements().is_empty() {
                group.remove();
            }
        }
        if groups.elements().is_empty() {
            event.remove();
        }
    }
    if removed == 0 {
        return Ok(None);
    }
    if hooks.properties().is_empty()
        && let Some(prop) = settings.get("hooks")
    {
        prop.remove();
    }
    Ok(Some((root.to_string(), removed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: &str = r#"{
  // the team's settings
  "permissions": { "allow": ["Bash(ls:*)"],   "deny": [] },
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [ { "type": "command", "command": "./audit.sh" } ] }
    ]
  },
  "model": "opus"
}
"#;

    fn value_of(text: &str) -> Value {
        let (_, settings) = parse(text).unwrap();
        settings.to_serde_value().unwrap()
    }

    fn ours() -> InstalledHook {
        InstalledHook::Command("/opt/bin/wasm-hooks hook --protocol claude".into())
    }

    #[test]
    fn install_adds_every_event_once_and_keeps_the_rest() {
        let installed = install(SETTINGS, Protocol::Claude, &ours())
            .unwrap()
            .unwrap();
        let value: Value = value_of(&installed);
        for event in Protocol::Claude.installed_events() {
            let groups = value["hooks"][event].as_array().unwrap();
            let ours_count = groups
                .iter()
                .flat_map(|g| g["hooks"].as_array().unwrap())
                .filter(|e| ours().is(e))
                .count();
            assert_eq!(ours_count, 1, "{event:?}");
        }
        assert_eq!(
            value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "./audit.sh"
        );
        assert_eq!(value["hooks"]["PreToolUse"][1]["matcher"], "*");
        assert!(value["hooks"]["Stop"][0].get("matcher").is_none());
        for kept in [
            "  // the team's settings\n",
            r#"  "permissions": { "allow": ["Bash(ls:*)"],   "deny": [] },"#,
            r#"      { "matcher": "Bash", "hooks": [ { "type": "command", "command": "./audit.sh" } ] }"#,
            r#"  "model": "opus""#,
        ] {
            assert!(installed.contains(kept), "{kept} in:\n{installed}");
        }
        assert_eq!(
            install(&installed, Protocol::Claude, &ours()).unwrap(),
            None,
            "idempotent"
        );
    }

    #[test]
    fn uninstall_removes_exactly_ours() {
        let installed = install(SETTINGS, Protocol::Claude, &ours())
            .unwrap()
            .unwrap();
        // Ours under another path counts too.
        let (removed, count) = uninstall(
            &installed,
            &InstalledHook::Command("wasm-hooks hook".into()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(count, CLAUDE_EVENTS.len());
        let gemini = install("", Protocol::Gemini, &ours()).unwrap().unwrap();
        let value = value_of(&gemini);
        assert_eq!(value["hooks"]["BeforeTool"][0]["matcher"], "*");
        assert!(value["hooks"]["BeforeAgent"][0].get("matcher").is_none());
        assert!(value["hooks"].get("PreToolUse").is_none());
        assert_eq!(removed, SETTINGS);
        assert_eq!(uninstall(&removed, &ours()).unwrap(), None);
    }

    #[test]
    fn http_entries_and_empty_files() {
        let http = InstalledHook::Http("http://127.0.0.1:8787/hook".into());
        let installed = install("", Protocol::Claude, &http).unwrap().unwrap();
        let (removed, _) = uninstall(&installed, &http).unwrap().unwrap();
        assert_eq!(value_of(&removed), serde_json::json!({}));
        assert!(
            install("[1]", Protocol::Claude, &http)
                .unwrap_err()
                .to_string()
                .contains("not a JSON object")
        );
        assert!(
            install(r#"{"hooks": {"Stop": 3}}"#, Protocol::Claude, &http)
                .unwrap_err()
                .to_string()
                .contains("`hooks.Stop` is not a list")
        );
    }

    #[test]
    fn installing_again_brings_an_older_command_of_ours_up_to_date_in_place() {
        let older = install(SETTINGS, Protocol::Claude, &ours())
            .unwrap()
            .unwrap();
        let client = InstalledHook::Command("wasm-hooks-hook --protocol claude".into());
        let newer = install(&older, Protocol::Claude, &client).unwrap().unwrap();
        assert_eq!(
            newer,
            older.replace(
                "/opt/bin/wasm-hooks hook --protocol claude",
                "wasm-hooks-hook --protocol claude"
            ),
            "each entry changed where it stands, nothing added"
        );
        assert_eq!(install(&newer, Protocol::Claude, &client).unwrap(), None);
    }

    #[test]
    fn our_command_is_recognised_by_program_and_subcommand() {
        for (command, ours) in [
            ("wasm-hooks hook", true),
            ("/usr/local/bin/wasm-hooks hook --protocol claude", true),
            ("'/path with space/wasm-hooks' hook", true),
            ("wasm-hooks-hook --protocol gemini", true),
            ("/opt/bin/wasm-hooks-hook", true),
            ("wasm-hooks", false),
            ("wasm-hooks run", false),
            ("my-wasm-hooks hook", false),
            ("./audit.sh", false),
        ] {
            assert_eq!(runs_us(&Value::from(command)), ours, "{command}");
        }
        assert!(argv_runs_us(&["/opt/bin/wasm-hooks", "hook"]));
        assert!(!argv_runs_us(&["wasm-hooks hook"]), "one word, not two");
        let nothing: &[&str] = &[];
        assert!(!argv_runs_us(nothing));
    }
}
