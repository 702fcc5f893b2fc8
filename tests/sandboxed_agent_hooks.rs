//! Agent hooks (`type: "agent"`) against a model on 127.0.0.1 scripted to
//! call tools, in the Anthropic and OpenAI wire formats: a granted file is
//! read and the verdict folded; files outside the grants (absolute paths,
//! `..`, links, the transcript when not granted) are refused and the
//! refusal is in the trace; the turn limit and the deadline end a model
//! that never answers.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::{Request, Response, Server};
use wasm_hooks::{Event, HookEngine, HookError, Outcome, TraceStatus, Verdict};

/// Cargo sets this variable for test processes: it stands in for an API key.
const KEY_VAR: &str = "CARGO_MANIFEST_DIR";
const PROVIDERS: [&str; 2] = ["anthropic", "openai"];

/// A project with a file worth reading, and a secret beside it.
struct Project {
    root: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("project");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("CHANGELOG.md"),
            "## 2.0\n- removed the public API\n",
        )
        .unwrap();
        std::fs::write(root.path().join("secret.txt"), "hunter2-the-secret\n").unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), dir.join("src/link.txt"))
            .unwrap();
        Self { root }
    }

    fn dir(&self) -> String {
        self.root.path().join("project").display().to_string()
    }

    fn secret(&self) -> String {
        self.root.path().join("secret.txt").display().to_string()
    }
}

/// The model's turn calling `tool` with `input` (id `call-N`), in
/// `provider`'s format.
fn calls(provider: &str, n: usize, tool: &str, input: &Value) -> Response {
    let id = format!("call-{n}");
    let body = if provider == "openai" {
        json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": tool, "arguments": input.to_string()}}
        ]}}]})
    } else {
        json!({"content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": id, "name": tool, "input": input}
        ]})
    };
    Response::json(200, &body.to_string())
}

/// The tools' answers the request carries back for the last turn, with
/// whether each is a refusal.
fn tool_answers(provider: &str, request: &Request) -> Vec<(String, bool)> {
    let body: Value = serde_json::from_str(&request.body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    if provider == "openai" {
        messages
            .iter()
            .rev()
            .take_while(|m| m["role"] == "tool")
            .map(|m| {
                let text = m["content"].as_str().unwrap().to_owned();
                let refused = text.starts_with("refused:");
                (text, refused)
            })
            .collect()
    } else {
        messages.last().unwrap()["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .map(|b| {
                        (
                            b["content"].as_str().unwrap().to_owned(),
                            b["is_error"] == true,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn engine(server: &Server, provider: &str, project: &Project, extra: Value) -> HookEngine {
    let base = if provider == "openai" {
        server.url("/v1")
    } else {
        server.url("")
    };
    let entry = json!({
        "type": "agent", "name": "verifier", "provider": provider, "base_url": base,
        "model": "test-model", "api_key_env": KEY_VAR,
        "prompt": "Does this change keep the public API? $ARGUMENTS",
        "allow_read": [project.dir()],
    });
    support::engine_of_one_hook(entry, &extra, KEY_VAR)
}

fn edit(project: &Project, transcript: &str) -> Event {
    Event::pre_tool_use(
        "Edit",
        json!({"file_path": format!("{}/src/lib.rs", project.dir())}),
    )
    .with("transcript_path", transcript)
}

fn logs(outcome: &Outcome) -> String {
    outcome.trace[0].output.logs.join("\n")
}

#[tokio::test]
async fn a_scripted_model_reads_a_granted_file_and_answers_not_ok() {
    for provider in PROVIDERS {
        let project = Project::new();
        let changelog = format!("{}/CHANGELOG.md", project.dir());
        let server = Server::start(move |_, n| match n {
            0 => calls(provider, n, "read_file", &json!({"path": changelog})),
            _ => calls(
                provider,
                n,
                "answer",
                &json!({"ok": false, "reason": "the changelog says the public API was removed"}),
            ),
        })
        .await;
        let outcome = engine(&server, provider, &project, json!({}))
            .dispatch(edit(&project, "/nonexistent"))
            .await;
        assert_eq!(
            outcome.verdict,
            Verdict::Deny {
                reason: "the changelog says the public API was removed".into()
            },
            "{provider}"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{provider}");
        let read = tool_answers(provider, &requests[1]);
        assert_eq!(
            read,
            vec![("## 2.0\n- removed the public API".to_owned(), false)],
            "{provider}: the file's text went back to the model"
        );
        let first: Value = serde_json::from_str(&requests[0].body).unwrap();
        let tools: Vec<&str> = first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .or(t["function"]["name"].as_str())
                    .unwrap()
            })
            .collect();
        assert_eq!(
            tools,
            ["read_file", "grep", "glob", "list", "answer"],
            "{provider}: no shell, no write, no fetch"
        );
        assert!(logs(&outcome).contains("read_file"), "{}", logs(&outcome));
        assert!(
            outcome.stop.is_some(),
            "{provider}: a block ends the turn, as Claude Code folds it"
        );
    }
}

#[tokio::test]
async fn a_model_asking_for_files_outside_the_grants_is_refused_and_the_refusal_is_in_the_trace() {
    for provider in PROVIDERS {
        let project = Project::new();
        let transcript = project.secret();
        let escapes = [
            project.secret(),
            "../secret.txt".to_owned(),
            format!("{}/../secret.txt", project.dir()),
            "src/link.txt".to_owned(),
            transcript.clone(),
            "/etc/passwd".to_owned(),
        ];
        let asked = escapes.clone();
        let server = Server::start(move |_, n| match asked.get(n) {
            Some(path) => calls(provider, n, "read_file", &json!({"path": path})),
            None => calls(provider, n, "answer", &json!({"ok": true})),
        })
        .await;
        let outcome = engine(&server, provider, &project, json!({"max_turns": 10}))
            .dispatch(edit(&project, &transcript))
            .await;
        assert_eq!(outcome.verdict, Verdict::Proceed, "{provider}");
        let requests = server.requests();
        for (n, path) in escapes.iter().enumerate() {
            let answers = tool_answers(provider, &requests[n + 1]);
            assert!(
                answers.len() == 1 && answers[0].1 && !answers[0].0.contains("hunter2"),
                "{provider}: {path} was not refused: {answers:?}"
            );
        }
        let trace = logs(&outcome);
        assert_eq!(
            trace.matches("refused").count(),
            escapes.len(),
            "{provider}: every refusal is in the trace: {trace}"
        );
        assert!(!trace.contains("hunter2"), "{trace}");
    }
}

#[tokio::test]
async fn the_transcript_is_read_only_when_the_hook_is_granted_it() {
    let project = Project::new();
    let transcript = project.secret();
    let path = transcript.clone();
    let server = Server::start(move |_, n| match n {
        0 => calls("anthropic", n, "read_file", &json!({"path": path})),
        _ => calls("anthropic", n, "answer", &json!({"ok": true})),
    })
    .await;
    let outcome = engine(&server, "anthropic", &project, json!({"transcript": true}))
        .dispatch(edit(&project, &transcript))
        .await;
    assert_eq!(outcome.verdict, Verdict::Proceed);
    let answers = tool_answers("anthropic", &server.requests()[1]);
    assert_eq!(answers, vec![("hunter2-the-secret".to_owned(), false)]);
}

#[tokio::test]
async fn a_model_that_never_answers_stops_at_the_turn_limit() {
    for provider in PROVIDERS {
        let project = Project::new();
        let server =
            Server::start(move |_, n| calls(provider, n, "list", &json!({"path": "."}))).await;
        let outcome = engine(
            &server,
            provider,
            &project,
            json!({"max_turns": 3, "on_failure": "block"}),
        )
        .dispatch(edit(&project, "/nonexistent"))
        .await;
        assert_eq!(server.requests().len(), 3, "{provider}");
        match &outcome.trace[0].status {
            TraceStatus::Failed {
                error: HookError::Failed { message, .. },
                ..
            } => {
                assert!(message.contains("no verdict in 3 turns"), "{message}");
            }
            other => panic!("{provider}: expected the turn limit, got {other:?}"),
        }
        assert!(
            outcome.is_denied(),
            "{provider}: a guard that cannot decide blocks (on_failure: block)"
        );
    }
}

#[tokio::test]
async fn a_model_slower_than_the_hooks_deadline_times_out() {
    let project = Project::new();
    let server = Server::start(|_, n| {
        calls("anthropic", n, "answer", &json!({"ok": true})).after(Duration::from_secs(5))
    })
    .await;
    let outcome = engine(
        &server,
        "anthropic",
        &project,
        json!({"timeout_ms": 300, "on_failure": "warn"}),
    )
    .dispatch(edit(&project, "/nonexistent"))
    .await;
    assert!(
        matches!(
            &outcome.trace[0].status,
            TraceStatus::Failed {
                error: HookError::Timeout { limit_ms: 300, .. },
                ..
            }
        ),
        "{:?}",
        outcome.trace[0].status
    );
    assert_eq!(
        outcome.verdict,
        Verdict::Proceed,
        "on_failure: warn lets it by"
    );
}

#[tokio::test]
async fn an_impossible_stop_condition_lets_the_agent_stop_and_the_person_is_told() {
    let project = Project::new();
    let server = Server::start(|_, n| {
        calls(
            "anthropic",
            n,
            "answer",
            &json!({"ok": false, "impossible": true, "reason": "the tests need a GPU"}),
        )
    })
    .await;
    let file = support::write_hook_file(&json!({"hooks": {"Stop": [{"hooks": [{
        "type": "agent", "base_url": server.url(""), "api_key_env": KEY_VAR,
        "prompt": "Do all tests pass?", "allow_read": [project.dir()],
    }]}]}}));
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .hook_secrets([KEY_VAR.to_owned()])
        .build()
        .unwrap();
    let outcome = engine.dispatch(Event::stop(false)).await;
    assert_eq!(outcome.verdict, Verdict::Proceed);
    assert!(
        outcome
            .system_messages
            .iter()
            .any(|m| m.value.contains("can never be met: the tests need a GPU")),
        "{:?}",
        outcome.system_messages
    );
    let body: Value = serde_json::from_str(&server.requests()[0].body).unwrap();
    assert!(body["system"].as_str().unwrap().contains("impossible"));
}
