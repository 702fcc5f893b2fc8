//! MCP tool hooks (`type: "mcp_tool"`, Claude Code's spelling): call a
//! tool on an MCP server and read its answer as a hook's answer.
//!
//! The server is started by wasm-hooks over stdio, either named (`server:
//! "vault"`, looked up under `mcpServers` in the `.mcp.json` beside the
//! hook file or in the directory above it, as a project keeps it) or given
//! inline (`server: {command, args, env}`). One process serves every hook
//! of the same server for as long as the engine lives; a call that fails
//! drops the connection, and the next call starts the server again.
//!
//! `input` holds the tool's arguments; a string value may name fields of
//! the event record as `${tool_input.file_path}` (a whole-string reference
//! keeps the field's JSON type; a missing field is the empty string). The
//! tool's result is the hook's answer: its structured content, or its text,
//! read as a command hook's stdout (JSON in any shape of `docs/protocol.md`, or
//! plain text). A tool error (`isError`), a server that does not start or
//! answer, and the deadline are hook failures.

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use regex::Regex;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use wasm_hooks_core::{Event, Handler, HandlerFuture, HookError, HookId, HookOutput, Reply};

use super::answer;
use super::kind::{
    BuildContext, Built, HookKind, HookProblem, refuse_code_loading, string_list, string_map,
};
use super::mcp_servers::{McpServer, McpServerSpec};
use super::runs::Runs;

/// How long an MCP tool hook may take, the server's start included, unless
/// its entry says otherwise (Claude Code's default for hooks).
pub const DEFAULT_MCP_TIMEOUT_MS: u64 = 60_000;

/// An MCP tool hook: a [`Handler`] that calls one tool per event.
#[derive(Debug)]
pub struct McpToolHook {
    server: Arc<McpServer>,
    tool: String,
    input: Map<String, Value>,
    timeout_ms: u64,
}

impl McpToolHook {
    /// A hook calling `tool` on `server` with `input`, its `${…}`
    /// references filled in per event.
    pub fn new(
        server: Arc<McpServer>,
        tool: String,
        input: Map<String, Value>,
        timeout_ms: Option<u64>,
    ) -> Self {
        Self {
            server,
            tool,
            input,
            timeout_ms: timeout_ms.unwrap_or(DEFAULT_MCP_TIMEOUT_MS),
        }
    }

    async fn run(
        &self,
        hook: &HookId,
        event: &Event,
    ) -> Result<wasm_hooks_core::HookResult, HookError> {
        let arguments = self
            .input
            .iter()
            .map(|(k, v)| (k.clone(), interpolate(v, event.record())))
            .collect();
        let call = self.server.call(&self.tool, arguments);
        let result = tokio::time::timeout(Duration::from_millis(self.timeout_ms), call)
            .await
            .map_err(|_| HookError::Timeout {
                hook: hook.clone(),
                limit_ms: self.timeout_ms,
            })?
            .map_err(|message| HookError::Failed {
                hook: hook.clone(),
                message,
            })?;
        let text = result_text(&result);
        if result.is_error == Some(true) {
            return Err(HookError::Failed {
                hook: hook.clone(),
                message: format!("tool `{}` failed: {text}", self.tool),
            });
        }
        let answer = match &result.structured_content {
            Some(structured @ Value::Object(_)) => {
                answer::json_answer(event.name(), &structured.to_string())
            }
            _ => answer::on_success(event.name(), &text),
        };
        answer.map_err(|message| HookError::BadResult {
            hook: hook.clone(),
            message: format!("tool `{}`: {message}", self.tool),
        })
    }
}

/// The text blocks of a result, joined.
fn result_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Handler for McpToolHook {
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        Box::pin(async move {
            Reply {
                result: self.run(hook, event).await,
                output: HookOutput::default(),
            }
        })
    }

    fn details(&self) -> Vec<String> {
        let spec = &self.server.spec;
        vec![format!(
            "mcp: tool `{}` on server `{}` ({} {})",
            self.tool,
            spec.name,
            spec.command,
            spec.args.join(" ")
        )]
    }
}

static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{([A-Za-z0-9_.\-]+)\}").expect("the reference pattern is valid")
});

/// `value` with `${path}` references to the event record filled in.
fn interpolate(value: &Value, record: &Map<String, Value>) -> Value {
    match value {
        Value::String(s) => {
            if let Some(caps) = REFERENCE.captures(s).filter(|c| c[0].len() == s.len()) {
                return lookup(record, &caps[1])
                    .cloned()
                    .unwrap_or_else(|| Value::String(String::new()));
            }
            let filled = REFERENCE.replace_all(s, |caps: &regex::Captures<'_>| {
                lookup(record, &caps[1])
                    .map_or_else(String::new, |v| wasm_hooks_core::plain_text(v).into_owned())
            });
            Value::String(filled.into_owned())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| interpolate(v, record)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), interpolate(v, record)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The field at dotted `path` (`tool_input.file_path`, `tool_calls.0.name`).
fn lookup<'a>(record: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut value = record.get(parts.next()?)?;
    for part in parts {
        value = match value {
            Value::Object(map) => map.get(part)?,
            Value::Array(items) => items.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

/// The `mcp_tool` kind.
pub(crate) struct McpToolKind;

/// An MCP tool hook's own fields, as Claude Code spells them.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct McpToolEntry {
    /// A server's name in `.mcp.json`, or `{command, args, env}`.
    server: Option<Value>,
    /// The tool to call.
    #[schemars(with = "Option<String>")]
    tool: Option<Value>,
    /// Its arguments, with `${…}` references to the event.
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    input: Option<Value>,
}

impl HookKind for McpToolKind {
    const TYPES: &'static [&'static str] = &["mcp_tool"];
    type Entry = McpToolEntry;

    fn build(entry: McpToolEntry, cx: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        let Some(Value::String(tool)) = entry.tool else {
            return Err("an mcp_tool hook needs `tool`, the name of the tool to call".into());
        };
        let input = match entry.input {
            None => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err("`input` must be an object of the tool's arguments".into()),
        };
        let spec = match entry.server {
            Some(Value::String(name)) => named_server(&name, cx.base)?,
            Some(Value::Object(inline)) => {
                server_spec("inline".to_owned(), &inline, cx.base, "server")?
            }
            _ => {
                return Err("an mcp_tool hook needs `server`: a name from `.mcp.json`, or `{\"command\": …, \"args\": […]}`".into());
            }
        };
        // Under the organisation's allowlist, no layer may make an allowed
        // program load other code.
        let restricted = cx.settings.mcp.allowed.is_some();
        refuse_code_loading(&spec.env, "server.env", cx.is_project() || restricted)?;
        let identity = json!({
            "server": [&spec.command, &spec.args, &spec.env, &spec.cwd],
            "tool": tool, "input": input, "timeout_ms": cx.timeout_ms,
        });
        if let Some(allowed) = &cx.settings.mcp.allowed {
            // A path matches only itself; a bare name only the same bare
            // name (found on PATH), never a file of that name elsewhere
            // (a repository's own `node`).
            let named = |a: &String| *a == spec.command;
            if !allowed.iter().any(named) {
                return Err(format!(
                    "MCP server `{}` (`{}`) is not among the organisation's allowed_mcp_servers ({})",
                    spec.name,
                    spec.command,
                    allowed.join(", ")
                )
                .into());
            }
        }
        let default_name = format!("mcp:{}:{tool}", spec.name);
        // Read as a command hook's argument list is: the program, the
        // script it runs and what that requires, and what trust cannot pin
        // (`npx -y some-mcp`).
        let argv: Vec<String> = std::iter::once(spec.command.clone())
            .chain(spec.args.iter().cloned())
            .collect();
        let runs = Runs::of_argv(&argv, &spec.cwd, &cx.settings.wasm.project_dir, &spec.env);
        let executes = runs
            .files
            .into_iter()
            .chain(spec.config_file.clone())
            .collect();
        let server = cx.settings.mcp.get(spec, &cx.settings.env);
        let hook = McpToolHook::new(server, tool, input, cx.timeout_ms);
        let mut built = Built::new(Arc::new(hook), default_name, identity).executing(executes);
        built.unpinned = runs.unpinned;
        Ok(built)
    }
}

/// The places a named server is looked up: `.mcp.json` beside the hook
/// file, then in the directory above (a project's root, for
/// `.wasm-hooks/hooks.json` and `.claude/settings.json`).
fn mcp_files(base: &Path) -> Vec<PathBuf> {
    std::iter::once(base)
        .chain(base.parent())
        .map(|dir| dir.join(".mcp.json"))
        .collect()
}

/// The server called `name` in the nearest `.mcp.json` that has it.
fn named_server(name: &str, base: &Path) -> Result<McpServerSpec, HookProblem> {
    let files = mcp_files(base);
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", file.display()))?;
        if let Some(Value::Object(server)) = doc.get("mcpServers").and_then(|s| s.get(name)) {
            let dir = file.parent().unwrap_or(base);
            let at = format!("{}: mcpServers.{name}", file.display());
            let mut spec = server_spec(name.to_owned(), server, dir, &at)?;
            spec.config_file = Some(file.clone());
            return Ok(spec);
        }
    }
    let looked: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    Err(format!(
        "no MCP server `{name}` under `mcpServers` in {}",
        looked.join(" or ")
    )
    .into())
}

/// A stdio server's start from its `{command, args, env}` object.
fn server_spec(
    name: String,
    server: &Map<String, Value>,
    dir: &Path,
    at: &str,
) -> Result<McpServerSpec, HookProblem> {
    match server.get("type").and_then(Value::as_str) {
        None | Some("stdio") => {}
        Some(other) => {
            return Err(format!(
                "{at}: `{other}` servers are not supported; wasm-hooks starts `stdio` servers only"
            )
            .into());
        }
    }
    let Some(Value::String(command)) = server.get("command") else {
        return Err(format!("{at}: needs `command`, the program to start").into());
    };
    Ok(McpServerSpec {
        name,
        command: command.clone(),
        args: string_list(server.get("args"), &format!("{at}.args"))?,
        env: string_map(server.get("env"), &format!("{at}.env"))?,
        cwd: dir.to_owned(),
        config_file: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_fill_in_event_fields_keeping_whole_values_typed() {
        let record = json!({
            "tool_input": {"file_path": "/src/a.rs", "limit": 5},
            "tool_calls": [{"name": "Read"}],
        });
        let record = record.as_object().unwrap();
        let input = json!({
            "path": "${tool_input.file_path}",
            "limit": "${tool_input.limit}",
            "said": "read ${tool_input.file_path} (first call ${tool_calls.0.name})",
            "missing": "${tool_input.nothing}",
            "nested": ["${tool_input.limit}", {"p": "${tool_input.file_path}"}],
            "kept": 3,
        });
        assert_eq!(
            interpolate(&input, record),
            json!({
                "path": "/src/a.rs",
                "limit": 5,
                "said": "read /src/a.rs (first call Read)",
                "missing": "",
                "nested": [5, {"p": "/src/a.rs"}],
                "kept": 3,
            })
        );
    }

    #[test]
    fn a_named_server_is_found_in_the_projects_mcp_json() {
        let project = tempfile::tempdir().unwrap();
        let hooks_dir = project.path().join(".wasm-hooks");
        std::fs::create_dir(&hooks_dir).unwrap();
        std::fs::write(
            project.path().join(".mcp.json"),
            r#"{"mcpServers": {"vault": {"command": "vault-mcp", "args": ["--stdio"], "env": {"MODE": "hooks"}},
                "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}"#,
        )
        .unwrap();
        let Ok(spec) = named_server("vault", &hooks_dir) else {
            panic!("vault not found");
        };
        assert_eq!(spec.command, "vault-mcp");
        assert_eq!(spec.args, ["--stdio"]);
        assert_eq!(spec.env, [("MODE".to_owned(), "hooks".to_owned())]);
        assert_eq!(spec.cwd, project.path());
        let message = |r: Result<McpServerSpec, HookProblem>| match r {
            Err(HookProblem::Message(m)) => m,
            _ => panic!("expected a problem"),
        };
        let remote = message(named_server("remote", &hooks_dir));
        assert!(remote.contains("stdio` servers only"), "{remote}");
        let missing = message(named_server("nope", &hooks_dir));
        assert!(missing.contains("no MCP server `nope`"), "{missing}");
        assert!(missing.contains(".mcp.json"), "{missing}");
    }
}
