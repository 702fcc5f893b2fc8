//! `wasm-hooks serve` as a process, over real HTTP on 127.0.0.1 and on a
//! Unix socket: the answers of `wasm-hooks hook` for real payloads,
//! concurrent requests, the body limit, bad JSON, the token (longer and
//! more varied on a public address), the health endpoint (refused to a
//! web page) and a graceful shutdown.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use support::Served as Server;

/// The project every test server serves ([`bash`] events come from it).
fn project() -> &'static Path {
    static PROJECT: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    PROJECT.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// `wasm-hooks serve` on `hooks` for [`project`]; without `--token-env` in
/// `extra`, with `--no-token`.
fn serve(hooks: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
    let no_token: &[&str] = if extra.contains(&"--token-env") {
        &[]
    } else {
        &["--no-token"]
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
    command
        .args(["serve", "--config"])
        .arg(hooks)
        .arg("--project")
        .arg(project())
        .args(extra)
        .args(no_token)
        .envs(env.iter().copied())
        .env("XDG_CONFIG_HOME", "/nonexistent");
    Server::start(command)
}

fn default_listen() -> [&'static str; 2] {
    ["--listen", "127.0.0.1:0"]
}

/// Claude Code's Bash `PreToolUse` for `command`, from [`project`].
fn bash(command: &str) -> Value {
    let mut event = support::fixture("PreToolUse");
    event["tool_input"]["command"] = json!(command);
    event["cwd"] = json!(project());
    event
}

fn guard() -> support::HookFile {
    support::hook_file(
        "PreToolUse",
        "Bash",
        &support::plugin("deny-dangerous-commands"),
        json!({}),
    )
}

async fn post(server: &Server, body: String) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/hook", server.address))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[tokio::test]
async fn answers_like_the_command_hook() {
    let hooks = guard();
    let server = serve(&hooks.path, &default_listen(), &[]);
    let (status, body) = post(&server, bash("rm -rf /").to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "command matches the dangerous pattern `rm -rf /`"}})
    );
    assert_eq!(
        post(&server, bash("ls").to_string()).await,
        (200, json!({}))
    );
    let health: Value = reqwest::get(format!("{}/health", server.address))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health, json!({"status": "ok", "hooks": 1, "not_ready": 0}));
}

#[tokio::test]
async fn modify_context_stop_and_a_timeout_over_http() {
    let command = |line: &str| json!({"type": "command", "name": "cmd", "command": line});
    let cases = [
        (
            command(r#"echo '{"action": "modify", "modified_args": {"command": "ls -a"}}'"#),
            // Unapproved: no decision, Claude Code's own check decides.
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -a"}}}),
        ),
        (
            command(r#"echo '{"hookSpecificOutput": {"additionalContext": "note"}}'"#),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "note"}}),
        ),
        (
            command(r#"echo '{"continue": false, "stopReason": "done"}'"#),
            json!({"continue": false, "stopReason": "done"}),
        ),
        (
            json!({"type": "command", "name": "slow", "command": "sleep 5", "timeout": 0.2, "on_failure": "block"}),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "blocked because a hook failed (on_failure = block): hook `slow` timed out (limit timeout_ms = 200)"}}),
        ),
    ];
    for (entry, expected) in cases {
        let hooks =
            support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}));
        let server = serve(&hooks.path, &default_listen(), &[]);
        assert_eq!(post(&server, bash("ls").to_string()).await, (200, expected));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_each_get_their_own_answer() {
    let hooks = guard();
    let server = serve(&hooks.path, &default_listen(), &[]);
    let client = reqwest::Client::new();
    let mut requests = tokio::task::JoinSet::new();
    for i in 0..32 {
        let command = if i % 2 == 0 {
            format!("rm -rf / # {i}")
        } else {
            format!("echo {i}")
        };
        let request = client
            .post(format!("{}/hook", server.address))
            .header("content-type", "application/json")
            .body(bash(&command).to_string());
        requests.spawn(async move {
            let response = request.send().await.unwrap();
            (
                i,
                response.status().as_u16(),
                response.json::<Value>().await.unwrap(),
            )
        });
    }
    let mut answered = 0;
    while let Some(result) = requests.join_next().await {
        let (i, status, body) = result.unwrap();
        assert_eq!(status, 200);
        let denied = body["hookSpecificOutput"]["permissionDecision"] == "deny";
        assert_eq!(denied, i % 2 == 0, "request {i}: {body}");
        answered += 1;
    }
    assert_eq!(answered, 32);
}

/// The agent's block of a guard event, and its reason.
fn denied_because(body: &Value) -> Option<&str> {
    (body["hookSpecificOutput"]["permissionDecision"] == "deny")
        .then(|| body["hookSpecificOutput"]["permissionDecisionReason"].as_str())
        .flatten()
}

/// A body the server runs no hook for is answered with the agent's block
/// (#43: an agent takes a non-2xx for "go on"), naming what is wrong.
#[tokio::test]
async fn bad_bodies_get_the_agents_block_never_a_refusal() {
    let hooks = guard();
    let server = serve(
        &hooks.path,
        &["--listen", "127.0.0.1:0", "--max-body-kb", "4"],
        &[],
    );
    // No event name to answer under: the block every event takes.
    let (status, body) = post(&server, "{not json".into()).await;
    assert_eq!(status, 200);
    assert_eq!(body["decision"], "block", "{body}");
    assert!(
        body["reason"]
            .as_str()
            .is_some_and(|why| why.contains("the body is not JSON")),
        "{body}"
    );
    let (status, body) = post(&server, json!([1, 2]).to_string()).await;
    assert_eq!(status, 200);
    assert!(
        body["reason"]
            .as_str()
            .is_some_and(|why| why.contains("the body is not an event")),
        "{body}"
    );
    // An event the catalogue does not know (a newer agent's) is no
    // opinion, never an error the agent would show or act on.
    let (status, body) = post(
        &server,
        json!({"hook_event_name": "SomethingNew2099", "session_id": "s", "cwd": project()})
            .to_string(),
    )
    .await;
    assert_eq!((status, body), (200, json!({})));
    // A Write of more than the limit to a guarded path: blocked, never
    // waved through (its name read from the start of the body).
    let big = bash(&"x".repeat(5000)).to_string();
    let (status, body) = post(&server, big).await;
    assert_eq!(status, 200);
    assert!(
        denied_because(&body).is_some_and(|why| why.contains("over 4096 bytes")),
        "{body}"
    );
    // Another event too large: that event's block.
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
        "cwd": project(), "prompt": "y".repeat(5000)});
    let (status, body) = post(&server, prompt.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(body["decision"], "block", "{body}");
}

#[tokio::test]
async fn a_configured_token_is_required() {
    let hooks = guard();
    let server = serve(
        &hooks.path,
        &["--listen", "127.0.0.1:0", "--token-env", "HOOK_TOKEN"],
        &[("HOOK_TOKEN", "s3cret-token-0123456789")],
    );
    let (status, body) = post(&server, bash("ls").to_string()).await;
    assert_eq!(status, 200, "an unset token disables no guard");
    assert!(
        denied_because(&body).is_some_and(|why| why.contains("bearer token")),
        "{body}"
    );
    let client = reqwest::Client::new();
    let wrong = client
        .post(format!("{}/hook", server.address))
        .header("content-type", "application/json")
        .bearer_auth("guess")
        .body(bash("ls").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 200);
    let body: Value = wrong.json().await.unwrap();
    assert!(denied_because(&body).is_some(), "{body}");
    let right = client
        .post(format!("{}/hook", server.address))
        .header("content-type", "application/json")
        .bearer_auth("s3cret-token-0123456789")
        .body(bash("rm -rf /").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(right.status().as_u16(), 200);
    let body: Value = right.json().await.unwrap();
    assert_eq!(body["hookSpecificOutput"]["permissionDecision"], "deny");
}

/// `wasm-hooks serve ARGS` expected to refuse to start: what it said.
fn refused_to_serve(args: &[&str], env: &[(&str, &str)]) -> String {
    let hooks = guard();
    let out = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .args(["serve", "--config"])
        .arg(&hooks.path)
        .args(args)
        .envs(env.iter().copied())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_public_address_needs_a_token() {
    let said = refused_to_serve(&["--listen", "0.0.0.0:0", "--no-token"], &[]);
    assert!(said.contains("without a token"), "{said}");
}

#[test]
fn a_public_address_needs_a_long_varied_token() {
    let public = ["--listen", "0.0.0.0:0", "--token-env", "HOOK_TOKEN"];
    for (weak, why) in [
        ("s3cret-token-0123456789", "23 characters"),
        ("abababababababababababababab1212", "4 different characters"),
    ] {
        let said = refused_to_serve(&public, &[("HOOK_TOKEN", weak)]);
        assert!(said.contains("too weak for 0.0.0.0:0"), "{why}: {said}");
        assert!(
            said.contains("at least 32 characters, at least 12 of them different"),
            "{why}: {said}"
        );
    }
    // On loopback, 16 varied characters are still enough: it starts.
    let hooks = guard();
    serve(
        &hooks.path,
        &["--listen", "127.0.0.1:0", "--token-env", "HOOK_TOKEN"],
        &[("HOOK_TOKEN", "0123456789abcdef")],
    );
}

#[test]
fn m11_l5_serve_needs_a_strong_token_unless_told_otherwise() {
    let said = refused_to_serve(&["--listen", "127.0.0.1:0"], &[]);
    assert!(said.contains("serve needs a token"), "{said}");
    for weak in ["x", "short-token", "aaaaaaaaaaaaaaaaaaaaaaaa"] {
        let said = refused_to_serve(
            &["--listen", "127.0.0.1:0", "--token-env", "HOOK_TOKEN"],
            &[("HOOK_TOKEN", weak)],
        );
        assert!(said.contains("too weak"), "{weak}: {said}");
    }
}

#[tokio::test]
async fn a_unix_socket_serves_the_same_answers() {
    let hooks = guard();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hooks.sock");
    let server = serve(&hooks.path, &["--socket", socket.to_str().unwrap()], &[]);
    assert_eq!(server.address, format!("unix:{}", socket.display()));
    let body = bash("rm -rf /").to_string();
    let mut stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
    let request = format!(
        "POST /hook HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains(r#""permissionDecision":"deny""#),
        "{response}"
    );
}

#[tokio::test]
async fn sigterm_finishes_the_request_in_flight_then_stops() {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let hooks = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": format!("touch {}; sleep 1; echo 'late but answered' >&2; exit 2", started.display())}
    ]}]}}));
    let mut server = serve(&hooks.path, &default_listen(), &[]);
    let in_flight = tokio::spawn(
        reqwest::Client::new()
            .post(format!("{}/hook", server.address))
            .header("content-type", "application/json")
            .body(bash("ls").to_string())
            .send(),
    );
    while !started.exists() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(server.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let response = in_flight.await.unwrap().unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["hookSpecificOutput"]["permissionDecisionReason"],
        "late but answered"
    );
    assert_eq!(server.child.wait().unwrap().code(), Some(0));
}

/// A raw HTTP/1.1 request to the server's TCP address, with these extra
/// header lines: the status code.
async fn raw(server: &Server, headers: &str, body: &str) -> u16 {
    raw_answer(server, headers, body).await.0
}

/// [`raw`], with whether the answer is the block of a request no hook ran
/// for (its reason, `why`).
async fn raw_blocked(server: &Server, headers: &str, body: &str, why: &str) -> bool {
    let (status, text) = raw_answer(server, headers, body).await;
    status == 200 && text.contains("\"permissionDecision\":\"deny\"") && text.contains(why)
}

/// The status and the whole text of the answer to a raw POST /hook.
async fn raw_answer(server: &Server, headers: &str, body: &str) -> (u16, String) {
    let request = format!(
        "POST /hook HTTP/1.1\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let text = response_of(server, &request).await;
    (text[9..12].parse().unwrap(), text)
}

/// A raw `GET /health` to the server's TCP address, with these extra
/// header lines: the status code.
async fn raw_health(server: &Server, headers: &str) -> u16 {
    let request = format!("GET /health HTTP/1.1\r\n{headers}Connection: close\r\n\r\n");
    response_of(server, &request).await[9..12].parse().unwrap()
}

/// The answer to this raw HTTP/1.1 request, whole.
async fn response_of(server: &Server, request: &str) -> String {
    let address = server.host_port();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test]
async fn c4_a_post_a_web_page_could_send_without_asking_runs_no_hook() {
    let hooks = guard();
    let server = serve(&hooks.path, &default_listen(), &[]);
    let host = format!("Host: {}\r\n", server.host_port());
    let body = bash("ls").to_string();
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let headers = format!("{host}Content-Type: {content_type}\r\n");
        assert!(
            raw_blocked(&server, &headers, &body, "Content-Type: application/json").await,
            "{content_type}: blocked, not refused"
        );
    }
    assert!(
        raw_blocked(&server, &host, &body, "Content-Type").await,
        "no content type"
    );
    let json = format!("{host}Content-Type: application/json; charset=utf-8\r\n");
    assert_eq!(raw_answer(&server, &json, &body).await.0, 200);
    assert!(!raw_blocked(&server, &json, &body, "").await, "answered");
}

#[tokio::test]
async fn h7_h8_a_browser_origin_or_a_foreign_host_runs_no_hook() {
    let hooks = guard();
    let server = serve(&hooks.path, &default_listen(), &[]);
    let port = server.address.rsplit(':').next().unwrap().to_owned();
    let body = bash("ls").to_string();
    let json = "Content-Type: application/json\r\n";
    let from_page = format!("Host: 127.0.0.1:{port}\r\nOrigin: https://evil.example\r\n{json}");
    // No hook runs for them; the answer blocks (a page could not read it).
    assert!(raw_blocked(&server, &from_page, &body, "web pages").await);
    let rebound = format!("Host: evil.example:{port}\r\n{json}");
    assert!(
        raw_blocked(&server, &rebound, &body, "not this server's address").await,
        "DNS rebinding"
    );
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let ok = format!("Host: {host}\r\n{json}");
        assert_eq!(raw(&server, &ok, &body).await, 200, "{host}");
        assert!(!raw_blocked(&server, &ok, &body, "").await, "{host}");
    }
    let named = serve(
        &hooks.path,
        &["--listen", "127.0.0.1:0", "--allow-host", "hooks.internal"],
        &[],
    );
    let port = named.address.rsplit(':').next().unwrap().to_owned();
    let ok = format!("Host: hooks.internal:{port}\r\n{json}");
    assert!(!raw_blocked(&named, &ok, &body, "").await);
}

#[tokio::test]
async fn health_refuses_a_foreign_host_and_a_page_origin() {
    let hooks = guard();
    let server = serve(&hooks.path, &default_listen(), &[]);
    let port = server.address.rsplit(':').next().unwrap().to_owned();
    let own = format!("Host: 127.0.0.1:{port}\r\n");
    assert_eq!(raw_health(&server, &own).await, 200);
    let from_page = format!("{own}Origin: https://evil.example\r\n");
    assert_eq!(raw_health(&server, &from_page).await, 403);
    let rebound = format!("Host: evil.example:{port}\r\n");
    assert_eq!(raw_health(&server, &rebound).await, 421, "DNS rebinding");
}

#[test]
fn l4_socket_refuses_to_replace_a_file_that_is_not_a_socket() {
    let hooks = guard();
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("notes.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .args(["serve", "--config"])
        .arg(&hooks.path)
        .arg("--no-token")
        .arg("--socket")
        .arg(&precious)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a socket"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
}

/// A server with 4 places and this idle timeout, and `silent` connections
/// that say nothing: a real request is still answered within `bound`, and
/// the first silent connection has been closed by the server.
async fn answered_beside_silent_connections(idle_timeout_ms: &str, silent: usize, bound: u64) {
    let hooks = guard();
    let args = ["--listen", "127.0.0.1:0", "--max-connections", "4"];
    let server = serve(
        &hooks.path,
        &[&args[..], &["--idle-timeout-ms", idle_timeout_ms]].concat(),
        &[],
    );
    let address = server.host_port().to_owned();
    let mut idle = Vec::new();
    for _ in 0..silent {
        idle.push(tokio::net::TcpStream::connect(&address).await.unwrap());
    }
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(bound),
        post(&server, bash("rm -rf /").to_string()),
    )
    .await
    .expect("answered while silent connections held every place");
    assert_eq!(answer.0, 200);
    assert_eq!(answer.1["hookSpecificOutput"]["permissionDecision"], "deny");
    let mut byte = [0u8; 1];
    let read = idle[0].read(&mut byte).await;
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

#[tokio::test]
async fn m5_idle_connections_cannot_starve_the_server() {
    // Every place taken by a connection that sends nothing, each closed
    // after 300 ms of silence.
    answered_beside_silent_connections("300", 4, 30).await;
}

/// A project whose `.wasm-hooks/hooks.json` runs `hook` on PreToolUse.
fn guarded_by(hook: &Value) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    let hooks = project.path().join(".wasm-hooks/hooks.json");
    std::fs::create_dir_all(hooks.parent().unwrap()).unwrap();
    std::fs::write(
        &hooks,
        json!({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}).to_string(),
    )
    .unwrap();
    project
}

/// `wasm-hooks` as a person whose home (config, state) is `home`.
fn wasm_hooks_as(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"));
    cmd
}

#[tokio::test]
async fn c4_each_project_is_answered_by_its_own_hooks_and_no_other_place_is() {
    let home = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let deny_rm = json!({"type": "inline", "rules": [{"field": "tool_input.command",
        "operator": "contains", "value": "rm -rf", "action": "deny", "reason": "not here"}]});
    let guarded = guarded_by(&deny_rm);
    let mut trust = wasm_hooks_as(home.path());
    trust.args(["trust", "--yes"]).current_dir(guarded.path());
    assert!(trust.output().unwrap().status.success());
    let mut command = wasm_hooks_as(home.path());
    command
        .args([
            "serve",
            "--no-token",
            "--listen",
            "127.0.0.1:0",
            "--project",
        ])
        .arg(guarded.path())
        .arg("--project")
        .arg(plain.path());
    let server = Server::start(command);
    let from = |dir: &Path| {
        let mut event = bash("rm -rf build");
        event["cwd"] = json!(dir);
        event.to_string()
    };
    let (status, body) = post(&server, from(&guarded.path().join("src"))).await;
    assert_eq!(status, 200);
    assert_eq!(body["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(post(&server, from(plain.path())).await, (200, json!({})));
    // An event cannot pick another place (its command hooks would run
    // there), nor step out of a served one: from anywhere else it is
    // answered by the person's and the organisation's hooks alone (#43:
    // never refused, which an agent takes for "go on"). This person's own
    // guard refuses `rm -rf`.
    std::fs::create_dir_all(home.path().join("config/wasm-hooks")).unwrap();
    std::fs::write(
        home.path().join("config/wasm-hooks/hooks.json"),
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "inline", "rules": [
            {"field": "tool_input.command", "operator": "contains", "value": "rm -rf",
             "action": "deny", "reason": "the person's own guard"}]}]}]}})
        .to_string(),
    )
    .unwrap();
    let mut command = wasm_hooks_as(home.path());
    command
        .args([
            "serve",
            "--no-token",
            "--listen",
            "127.0.0.1:0",
            "--project",
        ])
        .arg(guarded.path());
    let persons = Server::start(command);
    for elsewhere in [
        std::env::temp_dir(),
        plain.path().join("../.."),
        PathBuf::from("relative/dir"),
    ] {
        let (status, body) = post(&persons, from(&elsewhere)).await;
        assert_eq!(status, 200, "{}: {body}", elsewhere.display());
        assert!(
            denied_because(&body).is_some_and(|why| why.contains("the person's own guard")),
            "{}: {body}",
            elsewhere.display()
        );
    }
    // Unless the operator says to block them.
    let mut command = wasm_hooks_as(home.path());
    command
        .args(["serve", "--no-token", "--listen", "127.0.0.1:0"])
        .args(["--outside-projects", "block", "--project"])
        .arg(guarded.path());
    let blocking = Server::start(command);
    let mut ls = bash("ls");
    ls["cwd"] = json!(std::env::temp_dir());
    let (status, body) = post(&blocking, ls.to_string()).await;
    assert_eq!(status, 200);
    assert!(
        denied_because(&body).is_some_and(|why| why.contains("in no project")),
        "{body}"
    );
}

/// One keep-alive client sending `body` until the server closes: how many
/// answers it got, and how many requests it sent that got none.
async fn keep_alive_client(
    address: String,
    body: String,
    answered_in_all: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> (usize, usize) {
    use std::sync::atomic::Ordering;
    let request = format!(
        "POST /hook HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let mut stream = tokio::io::BufReader::new(stream);
    let mut answered = 0;
    loop {
        if stream
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .is_err()
        {
            return (answered, 0);
        }
        let mut head = String::new();
        let mut length = 0;
        let whole = loop {
            let mut line = String::new();
            match tokio::io::AsyncBufReadExt::read_line(&mut stream, &mut line).await {
                Ok(0) | Err(_) => break false,
                Ok(_) if line == "\r\n" => break true,
                Ok(_) => {
                    if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = n.trim().parse().unwrap();
                    }
                    head.push_str(&line.to_ascii_lowercase());
                }
            }
        };
        let mut content = vec![0; length];
        if !whole || stream.read_exact(&mut content).await.is_err() {
            return (answered, 1);
        }
        assert!(head.starts_with("http/1.1 200"), "{head}");
        answered += 1;
        answered_in_all.fetch_add(1, Ordering::Relaxed);
        if head.contains("connection: close") {
            return (answered, 0);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn l3_sigterm_under_load_leaves_no_request_unanswered() {
    let rule = json!({"type": "inline", "rules": [{"field": "tool_input.command",
        "operator": "contains", "value": "rm -rf", "action": "deny"}]});
    let hooks = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [rule]}]}}));
    let mut server = serve(&hooks.path, &default_listen(), &[]);
    let address = server.host_port().to_owned();
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut clients = tokio::task::JoinSet::new();
    for i in 0..8 {
        clients.spawn(keep_alive_client(
            address.clone(),
            bash(&format!("ls {i}")).to_string(),
            answered.clone(),
        ));
    }
    while answered.load(std::sync::atomic::Ordering::Relaxed) < 400 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(server.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let (mut total, mut lost) = (0, 0);
    while let Some(result) = clients.join_next().await {
        let (answered, unanswered) = result.unwrap();
        total += answered;
        lost += unanswered;
    }
    assert_eq!(
        lost, 0,
        "requests sent and never answered ({total} answered)"
    );
    assert_eq!(server.child.wait().unwrap().code(), Some(0));
}

#[tokio::test]
async fn m5_a_full_server_closes_its_quietest_connection_for_a_new_one() {
    // Silent connections would hold their places for a minute: the answer
    // comes because the server closes the quietest for the newcomer.
    answered_beside_silent_connections("60000", 12, 20).await;
}

/// Whether the server closed `stream` while `drip` kept sending a byte
/// every 50 ms (for at most 20 s); the answer read meanwhile, if any.
async fn dripped_until_closed(stream: &mut tokio::net::TcpStream, drip: &[u8]) -> Option<String> {
    for byte in drip.iter().cycle().take(400) {
        let mut buf = [0u8; 4096];
        tokio::select! {
            read = stream.read(&mut buf) => {
                return match read {
                    Ok(0) | Err(_) => Some(String::new()),
                    Ok(n) => Some(String::from_utf8_lossy(&buf[..n]).into_owned()),
                };
            }
            () = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
        }
        if stream.write_all(&[*byte]).await.is_err() {
            return Some(String::new());
        }
    }
    None
}

#[tokio::test]
async fn m5_a_client_that_sends_slowly_is_cut_off() {
    let hooks = guard();
    let server = serve(
        &hooks.path,
        &["--listen", "127.0.0.1:0", "--request-timeout-ms", "500"],
        &[],
    );
    let address = server.host_port().to_owned();
    // A head that never ends, a byte at a time: never idle, never whole.
    let mut slow_head = tokio::net::TcpStream::connect(&address).await.unwrap();
    slow_head
        .write_all(format!("POST /hook HTTP/1.1\r\nHost: {address}\r\n").as_bytes())
        .await
        .unwrap();
    dripped_until_closed(&mut slow_head, b"X-Slow: yes\r\n")
        .await
        .expect("the server kept a head that never ended");
    // A whole head, then a body a byte at a time.
    let mut slow_body = tokio::net::TcpStream::connect(&address).await.unwrap();
    slow_body
        .write_all(
            format!("POST /hook HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let answer = dripped_until_closed(&mut slow_body, b" ")
        .await
        .expect("the server waited for a body that never ended");
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains("did not arrive within"),
        "{answer}"
    );
    // Meanwhile a well-formed request is answered.
    assert_eq!(post(&server, bash("ls").to_string()).await.0, 200);
}

/// A trusted project whose command hook (`sh guard.sh`) denies, served by
/// `serve` with `extra` flags; the person's home beside it.
struct TrustedServe {
    home: tempfile::TempDir,
    repo: tempfile::TempDir,
    server: Server,
}

impl TrustedServe {
    fn start(extra: &[&str]) -> Self {
        let home = tempfile::tempdir().unwrap();
        let repo = guarded_by(&json!({"type": "command", "command": "sh guard.sh"}));
        std::fs::write(
            repo.path().join("guard.sh"),
            "#!/bin/sh\necho 'no rm' >&2\nexit 2\n",
        )
        .unwrap();
        wasm_hooks_in(home.path(), repo.path(), &["trust", "--yes"]);
        let mut command = wasm_hooks_as(home.path());
        command
            .current_dir(repo.path())
            .args(["serve", "--no-token", "--listen", "127.0.0.1:0"])
            .args(extra)
            .arg("--project")
            .arg(repo.path());
        Self {
            server: Server::start(command),
            home,
            repo,
        }
    }

    /// `wasm-hooks ARGS` as the person, in the project.
    fn wasm_hooks(&self, args: &[&str]) {
        wasm_hooks_in(self.home.path(), self.repo.path(), args);
    }

    /// A Bash `ls` from inside the project.
    fn event(&self) -> String {
        let mut event = bash("ls");
        event["cwd"] = json!(self.repo.path());
        event.to_string()
    }
}

/// `wasm-hooks ARGS` as the person whose home is `home`, in `dir`.
fn wasm_hooks_in(home: &Path, dir: &Path, args: &[&str]) {
    let mut cmd = wasm_hooks_as(home);
    cmd.args(args).current_dir(dir);
    assert!(cmd.output().unwrap().status.success(), "{args:?}");
}

fn denied(body: &Value) -> bool {
    body["hookSpecificOutput"]["permissionDecision"] == "deny"
}

#[tokio::test(flavor = "multi_thread")]
async fn a_served_project_stops_running_its_script_after_trust_revoke_or_a_change() {
    let served = TrustedServe::start(&[]);
    let (server, event) = (&served.server, || served.event());
    let (status, body) = post(server, event()).await;
    assert_eq!(status, 200);
    assert!(denied(&body), "trusted, the script runs: {body}");
    // Revoked: the next request is answered as by an untrusted project.
    served.wasm_hooks(&["trust", "--revoke"]);
    let (_, body) = post(server, event()).await;
    assert!(
        !denied(&body),
        "after --revoke the script must not run: {body}"
    );
    // Trusted again: it runs again, without a restart.
    served.wasm_hooks(&["trust", "--yes"]);
    let (_, body) = post(server, event()).await;
    assert!(denied(&body), "trusted again: {body}");
    // The script changed: it must not run as trusted.
    std::fs::write(
        served.repo.path().join("guard.sh"),
        "#!/bin/sh\nexit 2 # changed\n",
    )
    .unwrap();
    let (_, body) = post(server, event()).await;
    assert!(!denied(&body), "a changed script must not run: {body}");
}

/// The engine's builds so far, as `/metrics` counts them.
async fn builds(server: &Server) -> u64 {
    let metrics = reqwest::get(format!("{}/metrics", server.address))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    metrics
        .lines()
        .filter(|l| l.starts_with("wasm_hooks_reloads_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_burst_of_requests_after_a_trust_change_builds_the_engine_once_off_the_async_workers() {
    // No reloading beside the requests (`--reload-ms 0`): the requests
    // alone find the trust change.
    let served = TrustedServe::start(&["--reload-ms", "0"]);
    let (server, event) = (&served.server, served.event());
    assert!(denied(&post(server, event.clone()).await.1));
    let before = builds(server).await;
    served.wasm_hooks(&["trust", "--revoke"]);
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (address, body) = (server.address.clone(), event.clone());
        burst.spawn(async move {
            let response = reqwest::Client::new()
                .post(format!("{address}/hook"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            response.json::<Value>().await.unwrap()
        });
    }
    while let Some(body) = burst.join_next().await {
        let body = body.unwrap();
        assert!(!denied(&body), "revoked, the script must not run: {body}");
    }
    assert_eq!(
        builds(server).await,
        before + 1,
        "eight requests waiting on one trust change build the engine once"
    );
}
