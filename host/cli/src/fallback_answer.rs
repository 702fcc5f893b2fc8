//! What `wasm-hooks-hook` answers when nothing else did: the `wasm-hooks`
//! beside it could not be started, or died without an answer (killed by
//! the kernel's out-of-memory killer, say). The same answer as
//! `Protocol::failure` in the library, which this small program does not
//! link (a test in `wasm-hooks` holds the two equal): an event that guards
//! an action, or one that cannot be read, is blocked (exit code 2, the
//! reason on stderr; 1 with `--fail-open`), any other goes on with the
//! reason shown to the person.

use std::ffi::OsString;

/// The events that guard an action, under every name an agent sends:
/// `EventName::guards_action`, with the catalogue's aliases.
pub(crate) const GUARD_EVENTS: &[&str] = &[
    "PreToolUse",
    "tool:pre",
    "tool:pre_execute",
    "BeforeTool",
    "PermissionRequest",
    "permission:prompt",
    "approval:required",
    "UserPromptSubmit",
    "PromptSubmit",
    "prompt:submit",
    "user:prompt_submit",
    "BeforeAgent",
    "UserPromptExpansion",
    "PreModelSwitch",
    "PreSkillShellCommand",
    // The agents' own names (`Protocol::agent_guard_events`).
    "preToolUse",
    "permissionRequest",
    "userPromptSubmitted",
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
    "beforeSubmitPrompt",
    "tool.execute.before",
    "shell.env",
    "chat.message",
];

/// A guard event's names, by what the agent's own deny of it looks like
/// (see [`deny_in_answer`]).
const TOOL_EVENTS: &[&str] = &[
    "PreToolUse",
    "tool:pre",
    "tool:pre_execute",
    "BeforeTool",
    "preToolUse",
];
const PERMISSION_EVENTS: &[&str] = &[
    "PermissionRequest",
    "permission:prompt",
    "approval:required",
    "permissionRequest",
];
const PROMPT_EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PromptSubmit",
    "prompt:submit",
    "user:prompt_submit",
    "BeforeAgent",
    "userPromptSubmitted",
];

/// The value of `option` in `args` (`--option VALUE` or `--option=VALUE`).
pub(crate) fn option_value(args: &[OsString], option: &str) -> Option<String> {
    let mut words = args.iter().filter_map(|a| a.to_str());
    while let Some(word) = words.next() {
        match word.strip_prefix(option) {
            Some("") => return words.next().map(str::to_owned),
            Some(rest) if rest.starts_with('=') => return Some(rest[1..].to_owned()),
            _ => {}
        }
    }
    None
}

/// The agent's own deny of guard event `name`, where `protocol` blocks it
/// only by its answer and not by exit code 2 (the library's
/// `Protocol::blocks_only_by_answer`, written as it writes it).
fn deny_in_answer(protocol: &str, name: &str, reason: &str) -> Option<serde_json::Value> {
    use serde_json::json;
    let prompt = PROMPT_EVENTS.contains(&name);
    match protocol {
        "copilot" if TOOL_EVENTS.contains(&name) => {
            Some(json!({"permissionDecision": "deny", "permissionDecisionReason": reason}))
        }
        "copilot" if PERMISSION_EVENTS.contains(&name) => {
            Some(json!({"behavior": "deny", "message": reason}))
        }
        "copilot" | "claude" | "codex" if prompt => {
            Some(json!({"decision": "block", "reason": reason}))
        }
        _ => None,
    }
}

/// The canonical protocol's failure (the library's `canonical::failure`,
/// written as it writes it): the whole outcome, a deny for `reason` on a
/// guard event or an unnamed one (unless `fail_open`), else a proceed
/// carrying `reason` for the person.
fn canonical_failure(name: Option<&str>, reason: &str, fail_open: bool) -> serde_json::Value {
    let blocks = !fail_open && name.is_none_or(|name| GUARD_EVENTS.contains(&name));
    let (verdict, system_messages) = if blocks {
        (
            serde_json::json!({"decision": "deny", "reason": reason}),
            serde_json::json!([]),
        )
    } else {
        (
            serde_json::json!({"decision": "proceed"}),
            serde_json::json!([{"hook": "wasm-hooks", "value": reason}]),
        )
    };
    let mut outcome = serde_json::json!({
        "decided_by": null, "updated_input": null, "rewrite_approved": false,
        "updated_output": null, "contexts": [], "user_messages": [],
        "system_messages": system_messages, "stop": null, "suppress_output": false,
        "trace": [],
    });
    if let (Some(outcome), serde_json::Value::Object(verdict)) = (outcome.as_object_mut(), verdict)
    {
        outcome.extend(verdict);
    }
    outcome
}

/// An answer: for stdout, for stderr, the exit code.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Fallback {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) exit: u8,
}

/// The answer to the event on `stdin` (a `hook` invocation's `args`) when
/// the hooks could not run, for `message`.
pub(crate) fn failure(stdin: &[u8], args: &[OsString], message: &str) -> Fallback {
    let stderr = format!("wasm-hooks: {message}\n");
    let name = serde_json::from_slice::<serde_json::Value>(stdin)
        .ok()
        .and_then(|event| event.get("hook_event_name")?.as_str().map(str::to_owned))
        .or_else(|| option_value(args, "--agent-event"));
    let fail_open = args.iter().any(|arg| arg == "--fail-open");
    let protocol = option_value(args, "--protocol").unwrap_or_else(|| "claude".to_owned());
    let reason = format!("wasm-hooks: {message}");
    if matches!(protocol.as_str(), "canonical" | "none") {
        return Fallback {
            stdout: format!(
                "{}\n",
                canonical_failure(name.as_deref(), &reason, fail_open)
            ),
            stderr,
            exit: 0,
        };
    }
    if let Some(deny) = name
        .as_deref()
        .filter(|_| !fail_open)
        .and_then(|name| deny_in_answer(&protocol, name, &reason))
    {
        return Fallback {
            stdout: format!("{deny}\n"),
            stderr,
            exit: 0,
        };
    }
    if name
        .as_deref()
        .is_none_or(|name| GUARD_EVENTS.contains(&name))
    {
        return Fallback {
            stdout: String::new(),
            stderr,
            exit: if fail_open { 1 } else { 2 },
        };
    }
    let told =
        serde_json::json!({ "systemMessage": format!("wasm-hooks: no hooks ran: {message}") });
    Fallback {
        stdout: format!("{told}\n"),
        stderr,
        exit: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_hooks::Protocol;
    use wasm_hooks::cli_support::CATALOGUE;

    #[test]
    fn the_guard_events_are_the_catalogues() {
        let mut expected: Vec<&str> = CATALOGUE
            .iter()
            .filter(|(name, _)| name.guards_action())
            .flat_map(|(name, aliases)| {
                std::iter::once(name.as_str()).chain(aliases.iter().copied())
            })
            .chain(Protocol::agent_guard_events())
            .collect();
        let mut listed = GUARD_EVENTS.to_vec();
        expected.sort_unstable();
        expected.dedup();
        listed.sort_unstable();
        assert_eq!(listed, expected);
    }

    #[test]
    fn the_small_clients_failure_is_the_librarys() {
        let reply = |answer: wasm_hooks::Answer| Fallback {
            stdout: if answer.body.is_null() {
                String::new()
            } else {
                format!("{}\n", answer.body)
            },
            stderr: answer.stderr.iter().map(|l| format!("{l}\n")).collect(),
            exit: answer.exit_code,
        };
        for protocol in Protocol::ALL {
            // `--protocol`'s word is the variant's name in lower case.
            let word = format!("{protocol:?}").to_lowercase();
            for (name, _) in CATALOGUE {
                let stdin = serde_json::json!({"hook_event_name": name.as_str()}).to_string();
                for fail_open in [false, true] {
                    let mut args: Vec<OsString> = vec!["--protocol".into(), word.as_str().into()];
                    if fail_open {
                        args.push("--fail-open".into());
                    }
                    assert_eq!(
                        failure(stdin.as_bytes(), &args, "why"),
                        reply(protocol.failure(Some(*name), "why", fail_open)),
                        "{name:?} {protocol:?}"
                    );
                }
            }
            let args = [OsString::from(format!("--protocol={word}"))];
            assert_eq!(
                failure(b"not json", &args, "why"),
                reply(protocol.failure(None, "why", false))
            );
        }
        // Copilot CLI's input does not name the event: the command does;
        // and its prompt guard blocks only by its answer.
        let copilot = br#"{"toolName": "bash", "toolArgs": {"command": "rm -rf victim"}}"#;
        for (event, body) in [
            (
                "preToolUse",
                r#"{"permissionDecision":"deny","permissionDecisionReason":"wasm-hooks: why"}"#,
            ),
            (
                "userPromptSubmitted",
                r#"{"decision":"block","reason":"wasm-hooks: why"}"#,
            ),
            (
                "agentStop",
                r#"{"systemMessage":"wasm-hooks: no hooks ran: why"}"#,
            ),
        ] {
            let args: Vec<OsString> = ["--protocol", "copilot", "--agent-event", event]
                .into_iter()
                .map(OsString::from)
                .collect();
            let answer = failure(copilot, &args, "why");
            assert_eq!(
                (answer.exit, answer.stdout.trim_end()),
                (0, body),
                "{event}"
            );
        }
    }
}
