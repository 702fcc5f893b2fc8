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
    "chat.message",
];

/// The event `hook --agent-event NAME` names (for an agent whose input
/// does not: Copilot CLI's own format).
fn agent_event(args: &[OsString]) -> Option<String> {
    let mut words = args.iter().filter_map(|a| a.to_str());
    while let Some(word) = words.next() {
        match word.strip_prefix("--agent-event") {
            Some("") => return words.next().map(str::to_owned),
            Some(rest) => return rest.strip_prefix('=').map(str::to_owned),
            None => {}
        }
    }
    None
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
        .or_else(|| agent_event(args));
    if name
        .as_deref()
        .is_none_or(|name| GUARD_EVENTS.contains(&name))
    {
        let fail_open = args.iter().any(|arg| arg == "--fail-open");
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
    use wasm_hooks::{CATALOGUE, Protocol};

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
            for (name, _) in CATALOGUE {
                let stdin = serde_json::json!({"hook_event_name": name.as_str()}).to_string();
                for fail_open in [false, true] {
                    let args: Vec<OsString> = if fail_open {
                        vec!["--fail-open".into()]
                    } else {
                        Vec::new()
                    };
                    assert_eq!(
                        failure(stdin.as_bytes(), &args, "why"),
                        reply(protocol.failure(Some(*name), "why", fail_open)),
                        "{name:?} {protocol:?}"
                    );
                }
            }
            assert_eq!(
                failure(b"not json", &[], "why"),
                reply(protocol.failure(None, "why", false))
            );
        }
        // Copilot CLI's input does not name the event: the command does.
        let copilot = br#"{"toolName": "bash", "toolArgs": {"command": "rm -rf victim"}}"#;
        for (args, exit) in [
            (vec!["--agent-event", "preToolUse"], 2),
            (vec!["--agent-event=agentStop"], 0),
        ] {
            let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
            assert_eq!(failure(copilot, &args, "why").exit, exit, "{args:?}");
        }
    }
}
