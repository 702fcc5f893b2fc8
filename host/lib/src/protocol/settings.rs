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
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use serde_json::Value;

use wasm_hooks_core::EventName;

use super::Protocol;
use super::facts::SettingsShape;

/// The hook timeout `install` writes, in seconds, where the agent takes
/// one: longer than `hook --deadline` (50 s by default), so that a slow
/// guard is answered by wasm-hooks' failure answer (a block) before the
/// agent's timeout, which lets the tool through, fires.
pub const AGENT_TIMEOUT_SECS: u64 = 60;

impl Protocol {
    /// The events wasm-hooks is installed on in this agent's settings, by
    /// the agent's own names (none for OpenCode, which has no hook
    /// settings: `install opencode` writes a plugin).
    pub fn installed_events(self) -> Vec<&'static str> {
        self.facts().events.to_vec()
    }

    /// Whether the agent's `event` guards an action, by its own name.
    fn guards(self, event: &str) -> bool {
        EventName::parse(event).is_ok_and(EventName::guards_action)
            || Protocol::agent_guard_events().any(|e| e == event)
    }

    /// Whether an installed entry of this agent blocks the action when the
    /// program is missing or fails (observed, `tests/fixtures/
    /// settings-tolerance.md`): Claude Code (2.1.330 on; 2.1.197 ignores
    /// it) with `onFailure: "block"`, Cursor with `failClosed`, Copilot CLI
    /// and Gemini CLI by themselves on a failing `preToolUse` /
    /// `BeforeTool` and (Gemini CLI) `BeforeAgent`. Codex has no such
    /// setting and runs the tool.
    pub fn entries_fail_closed(self) -> bool {
        self.facts().entries_fail_closed
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
    /// The entry for `event` of `agent`: the command (Copilot CLI's told
    /// the event, which its input does not name), the agent's timeout, and
    /// what makes a failure block where the agent has a setting for it.
    fn entry(&self, agent: Protocol, event: &str) -> Vec<(String, CstInputValue)> {
        let guard = agent.guards(event);
        let fields: Vec<(&str, CstInputValue)> = match self {
            InstalledHook::Command(command) => agent
                .facts()
                .hook_file
                .map(|file| (file.command_entry)(command, event, guard))
                .unwrap_or_default()
                .into_iter()
                .map(|(name, value)| (name, cst_value(value)))
                .collect(),
            // `wasm-hooks serve` wants a token; Claude Code sends it from
            // the variable the person sets where both run. `onFailure:
            // "block"` on a guard event: Claude Code 2.1.332 takes a
            // non-2xx, a dropped connection (a `serve` killed or gone) or a
            // timeout of an HTTP hook for a block then, and for "go on"
            // otherwise.
            InstalledHook::Http(url) => {
                let mut fields: Vec<(&str, CstInputValue)> = vec![
                    ("type", "http".into()),
                    ("url", url.as_str().into()),
                    (
                        "headers",
                        CstInputValue::Object(vec![(
                            "Authorization".to_owned(),
                            format!("Bearer ${TOKEN_VARIABLE}").into(),
                        )]),
                    ),
                    (
                        "allowedEnvVars",
                        CstInputValue::Array(vec![TOKEN_VARIABLE.into()]),
                    ),
                ];
                if guard {
                    fields.push(("onFailure", "block".into()));
                }
                fields
            }
        };
        fields
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect()
    }

    /// Whether a hook entry of a settings file is this one (for a
    /// command: any command line running `wasm-hooks hook`, in `command`,
    /// or Copilot CLI's `bash` or `exec` + `args`).
    fn is(&self, entry: &Value) -> bool {
        match self {
            InstalledHook::Command(_) => {
                let exec = || {
                    let argv: Vec<&str> = std::iter::once(&entry["exec"])
                        .chain(entry["args"].as_array().into_iter().flatten())
                        .map(|w| w.as_str().unwrap_or_default())
                        .collect();
                    entry["exec"].is_string() && argv_runs_us(&argv)
                };
                entry.get("type").is_none_or(|t| t == "command")
                    && (runs_us(&entry["command"]) || runs_us(&entry["bash"]) || exec())
            }
            InstalledHook::Http(url) => entry["type"] == "http" && entry["url"] == url.as_str(),
        }
    }
}

/// Whether a command line runs `… wasm-hooks hook …` or
/// `… wasm-hooks-hook …` (see [`argv_runs_us`]): the entry `install`
/// writes, which wasm-hooks must not load as a hook of its own. Read by
/// the one shell reader, so that a wrapped entry (`timeout 5 wasm-hooks
/// hook`, `env A=1 …`, `sh -c 'wasm-hooks hook'`) is ours too: loaded as a
/// hook, it would run wasm-hooks inside itself, again on every level.
pub(crate) fn runs_us(command: &Value) -> bool {
    command.as_str().is_some_and(|line| line_runs_us(line, 0))
}

/// How deep `sh -c` lines are followed looking for wasm-hooks.
const MAX_NESTED_SHELLS: usize = 4;

fn line_runs_us(line: &str, depth: usize) -> bool {
    crate::shell::simple_commands(line).iter().any(|simple| {
        simple
            .words
            .as_ref()
            .is_some_and(|words| words_run_us(words, depth))
    })
}

fn words_run_us(words: &[String], depth: usize) -> bool {
    crate::shell::commands(words, false).iter().any(|command| {
        is_us(command.program, command.args)
            || command.reads.iter().any(|read| {
                read.what == crate::shell::ReadAs::Code(crate::shell::lexicon::Lang::Shell)
                    && depth < MAX_NESTED_SHELLS
                    && line_runs_us(&read.text, depth + 1)
            })
    })
}

/// Whether a program and its arguments, given one by one (a command
/// hook's `args`), run `… wasm-hooks hook …` (a program named
/// `wasm-hooks` whose first argument is `hook`) or `… wasm-hooks-hook …`
/// (its small client), after any wrapper (`nice`, `timeout 5`, `env`).
pub(crate) fn argv_runs_us(argv: &[impl AsRef<str>]) -> bool {
    let words: Vec<String> = argv.iter().map(|w| w.as_ref().to_owned()).collect();
    words_run_us(&words, 0)
}

fn is_us(program: &str, args: &[String]) -> bool {
    match program.rsplit('/').next() {
        Some("wasm-hooks-hook") => true,
        Some("wasm-hooks") => args.first().is_some_and(|sub| sub == "hook"),
        _ => false,
    }
}

/// A JSON value as the settings' syntax tree takes it.
fn cst_value(value: Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s),
        Value::Array(items) => CstInputValue::Array(items.into_iter().map(cst_value).collect()),
        Value::Object(fields) => {
            CstInputValue::Object(fields.into_iter().map(|(k, v)| (k, cst_value(v))).collect())
        }
    }
}

/// A settings file that is not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(String);

impl SettingsError {
    pub(super) fn new(message: String) -> Self {
        Self(message)
    }
}

/// The settings' concrete syntax tree and its top-level object.
pub(super) fn parse(text: &str) -> Result<(CstRootNode, CstObject), SettingsError> {
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
/// [`Protocol::installed_events`] that lacks it, and an entry of ours
/// brought up to date where it stands (another command, a missing
/// timeout or fail-closed setting); `None` when nothing changed.
///
/// # Errors
/// When the settings are not a JSON object or their `hooks` (or an event's
/// list) has another type.
pub fn install(
    text: &str,
    agent: Protocol,
    hook: &InstalledHook,
) -> Result<Option<String>, SettingsError> {
    let Some(shape) = agent.facts().hook_file.map(|file| file.shape) else {
        return Err(SettingsError(format!(
            "{} has no hook settings: `wasm-hooks install {agent}` writes its hook",
            agent.facts().name
        )));
    };
    let (root, settings) = parse(text)?;
    let mut changed = false;
    if shape == SettingsShape::Flat && settings.get("version").is_none() {
        settings.insert(0, "version", 1.into());
        changed = true;
    }
    let hooks = hooks_object(&settings)?;
    for event in agent.installed_events() {
        let list = event_list(&hooks, event)?;
        let wanted = hook.entry(agent, event);
        let ours: Vec<CstObject> = entries(&list, shape)
            .into_iter()
            .filter(|entry| entry.to_serde_value().is_some_and(|e| hook.is(&e)))
            .collect();
        if ours.is_empty() {
            let entry = CstInputValue::Object(wanted);
            match shape {
                SettingsShape::Flat => {
                    list.append(entry);
                }
                SettingsShape::Grouped { tool_events } => {
                    let mut group = Vec::new();
                    if tool_events.contains(&event) {
                        group.push(("matcher".to_owned(), "*".into()));
                    }
                    group.push(("hooks".to_owned(), CstInputValue::Array(vec![entry])));
                    list.append(CstInputValue::Object(group));
                }
            }
            changed = true;
            continue;
        }
        for entry in &ours {
            changed |= bring_up_to_date(entry, &wanted);
        }
    }
    Ok(changed.then(|| root.to_string()))
}

/// wasm-hooks' entries in `agent`'s settings `text`, by event (the
/// agent's own names, in the file's order): the events with none are left
/// out.
///
/// # Errors
/// When the settings are not a JSON object.
fn our_entries(text: &str, agent: Protocol) -> Result<Vec<(String, Vec<Value>)>, SettingsError> {
    let Some(shape) = agent.facts().hook_file.map(|file| file.shape) else {
        return Ok(Vec::new());
    };
    let (_, settings) = parse(text)?;
    let Some(hooks) = settings.object_value("hooks") else {
        return Ok(Vec::new());
    };
    let ours = InstalledHook::Command("wasm-hooks hook".to_owned());
    Ok(hooks
        .properties()
        .into_iter()
        .filter_map(|event| {
            let name = event.decoded_name()?;
            let list = event.value().and_then(|v| v.as_array())?;
            let entries: Vec<Value> = entries(&list, shape)
                .iter()
                .filter_map(CstObject::to_serde_value)
                .filter(|entry| ours.is(entry))
                .collect();
            (!entries.is_empty()).then_some((name, entries))
        })
        .collect())
}

/// The guard events of `agent`'s settings `text` whose wasm-hooks entry
/// would let the action through should wasm-hooks fail or go missing: one
/// without the agent's fail-closed setting (Claude Code's `onFailure:
/// "block"`, Cursor's `failClosed`; every one of Codex's, which has
/// none), or one whose command says `--fail-open` or `--deadline 0`.
///
/// # Errors
/// When the settings are not a JSON object.
pub fn failing_open(text: &str, agent: Protocol) -> Result<Vec<String>, SettingsError> {
    // The fields the agent's entry has on a guard event only: its
    // fail-closed setting, where it has one.
    let closing = |event: &str| -> Vec<(&'static str, Value)> {
        let Some(file) = agent.facts().hook_file else {
            return Vec::new();
        };
        let open = (file.command_entry)("", event, false);
        (file.command_entry)("", event, true)
            .into_iter()
            .filter(|field| !open.contains(field))
            .collect()
    };
    let lets_through = |event: &str, entry: &Value| {
        let words: Vec<&str> = [&entry["command"], &entry["bash"], &entry["exec"]]
            .into_iter()
            .chain(entry["args"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .flat_map(str::split_whitespace)
            .collect();
        let told_open = words.contains(&"--fail-open")
            || words.contains(&"--deadline=0")
            || words.windows(2).any(|w| w == ["--deadline", "0"]);
        let closing = closing(event);
        told_open
            || if closing.is_empty() {
                !agent.entries_fail_closed()
            } else {
                closing.iter().any(|(field, value)| entry[field] != *value)
            }
    };
    Ok(our_entries(text, agent)?
        .into_iter()
        .filter(|(name, entries)| {
            agent.guards(name) && entries.iter().any(|entry| lets_through(name, entry))
        })
        .map(|(name, _)| name)
        .collect())
}

/// The events of `agent`'s settings `text` that run wasm-hooks, by the
/// agent's own names, in the file's order.
///
/// # Errors
/// When the settings are not a JSON object.
pub fn installed_on(text: &str, agent: Protocol) -> Result<Vec<String>, SettingsError> {
    Ok(our_entries(text, agent)?
        .into_iter()
        .map(|(name, _)| name)
        .collect())
}

/// The program each wasm-hooks entry of `agent`'s settings `text` runs,
/// as written (`/home/me/.cargo/bin/wasm-hooks`, or a bare
/// `wasm-hooks` an older install wrote), each once, in order.
///
/// # Errors
/// When `text` is not a JSON object.
pub fn installed_programs(text: &str, agent: Protocol) -> Result<Vec<String>, SettingsError> {
    let mut programs: Vec<String> = Vec::new();
    for entry in our_entries(text, agent)?
        .iter()
        .flat_map(|(_, entries)| entries)
    {
        let program = match entry["exec"].as_str() {
            Some(exec) => Some(exec.to_owned()),
            None => [&entry["command"], &entry["bash"]]
                .into_iter()
                .filter_map(Value::as_str)
                .find_map(|line| shlex::split(line)?.into_iter().next()),
        };
        if let Some(program) = program.filter(|p| !programs.contains(p)) {
            programs.push(program);
        }
    }
    Ok(programs)
}

/// Set each of `wanted`'s fields in `entry` where it differs; whether any
/// did.
fn bring_up_to_date(entry: &CstObject, wanted: &[(String, CstInputValue)]) -> bool {
    let mut changed = false;
    for (name, value) in wanted {
        let want = input_to_value(value);
        match entry.get(name) {
            Some(prop) if prop.value().and_then(|v| v.to_serde_value()) == Some(want) => {}
            Some(prop) => {
                prop.set_value(value.clone());
                changed = true;
            }
            None => {
                entry.append(name, value.clone());
                changed = true;
            }
        }
    }
    changed
}

/// A concrete-syntax input value as JSON, to compare with what is there.
fn input_to_value(value: &CstInputValue) -> Value {
    match value {
        CstInputValue::Null => Value::Null,
        CstInputValue::Bool(b) => Value::Bool(*b),
        CstInputValue::Number(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        CstInputValue::String(s) => Value::String(s.clone()),
        CstInputValue::Array(items) => Value::Array(items.iter().map(input_to_value).collect()),
        CstInputValue::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), input_to_value(v)))
                .collect(),
        ),
    }
}

/// The hook entries of one event's list: its elements (flat), or the
/// elements of each group's `hooks` (grouped).
fn entries(list: &CstArray, shape: SettingsShape) -> Vec<CstObject> {
    match shape {
        SettingsShape::Flat => list
            .elements()
            .iter()
            .filter_map(CstNode::as_object)
            .collect(),
        SettingsShape::Grouped { .. } => list
            .elements()
            .iter()
            .filter_map(|group| group.as_object()?.array_value("hooks"))
            .flat_map(|entries| entries.elements())
            .filter_map(|entry| entry.as_object())
            .collect(),
    }
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

/// `text` without `hook`'s entries (in groups, or directly in an event's
/// list), and the number removed; `None` when there were none.
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
    let ours = |node: &CstNode| node.to_serde_value().is_some_and(|e| hook.is(&e));
    for event in hooks.properties() {
        let Some(list) = event.value().and_then(|v| v.as_array()) else {
            continue;
        };
        for element in list.elements() {
            if ours(&element) {
                element.remove();
                removed += 1;
                continue;
            }
            let Some(entries) = element.as_object().and_then(|g| g.array_value("hooks")) else {
                continue;
            };
            let before = entries.elements().len();
            for entry in entries.elements() {
                if ours(&entry) {
                    entry.remove();
                    removed += 1;
                }
            }
            if before > 0 && entries.elements().is_empty() {
                element.remove();
            }
        }
        if list.elements().is_empty() {
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
        assert_eq!(count, Protocol::Claude.facts().events.len());
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
    fn entries_that_would_let_an_action_through_are_named() {
        let installed = install(SETTINGS, Protocol::Claude, &ours())
            .unwrap()
            .unwrap();
        assert_eq!(
            failing_open(&installed, Protocol::Claude).unwrap(),
            Vec::<String>::new()
        );
        let older = installed.replacen(r#""onFailure": "block""#, r#""onFailure": "continue""#, 1);
        assert_eq!(
            failing_open(&older, Protocol::Claude).unwrap(),
            ["PreToolUse"]
        );
        let told = installed.replace("--protocol claude", "--protocol claude --fail-open");
        assert_eq!(failing_open(&told, Protocol::Claude).unwrap().len(), 4);
        let cursor = install("", Protocol::Cursor, &ours()).unwrap().unwrap();
        assert!(failing_open(&cursor, Protocol::Cursor).unwrap().is_empty());
        let codex = install("", Protocol::Codex, &ours()).unwrap().unwrap();
        assert_eq!(
            failing_open(&codex, Protocol::Codex).unwrap(),
            ["PreToolUse", "PermissionRequest", "UserPromptSubmit"]
        );
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
            // Wrapped: still ours, never loaded as a hook (#43).
            ("timeout 5 wasm-hooks hook --protocol claude", true),
            ("env WASM_HOOKS_DAEMON=off /opt/bin/wasm-hooks hook", true),
            ("nice -n 5 wasm-hooks-hook", true),
            ("sh -c 'wasm-hooks hook --protocol claude'", true),
            ("bash -lc \"cd /p && exec wasm-hooks hook\"", true),
            ("sh -c \"sh -c 'wasm-hooks hook'\"", true),
            ("echo wasm-hooks hook", false),
        ] {
            assert_eq!(runs_us(&Value::from(command)), ours, "{command}");
        }
        assert!(argv_runs_us(&["/opt/bin/wasm-hooks", "hook"]));
        assert!(!argv_runs_us(&["wasm-hooks hook"]), "one word, not two");
        let nothing: &[&str] = &[];
        assert!(!argv_runs_us(nothing));
    }
}
