//! An MCP server on stdio whose tools answer as hooks do, for the tests of
//! `mcp_tool` hooks: a real server, spoken to by the real protocol.
//!
//! - `guard_command {command}`: denies a command containing `rm -rf`,
//!   otherwise answers `{}` (no opinion);
//! - `describe_file {file_path}`: context naming the file;
//! - `calls`: context saying how many calls this process has served (one
//!   process serving many events shows as a count above 1);
//! - `sealed`: a tool error (`isError`), "the vault is sealed";
//! - `greet`: plain text, not JSON;
//! - `sleep {ms}`: answers `{}` after `ms` milliseconds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::json;

/// The arguments of `guard_command`.
#[derive(Deserialize, schemars::JsonSchema)]
struct CommandArgs {
    /// The shell command about to run.
    command: String,
}

/// The arguments of `describe_file`.
#[derive(Deserialize, schemars::JsonSchema)]
struct FileArgs {
    /// The file the tool touches.
    file_path: String,
}

/// The arguments of `sleep`.
#[derive(Deserialize, schemars::JsonSchema)]
struct SleepArgs {
    /// How long to wait, in milliseconds.
    ms: u64,
}

/// The server: its tools and a call counter.
#[derive(Clone)]
struct HookTools {
    tool_router: ToolRouter<Self>,
    calls: std::sync::Arc<AtomicU64>,
}

/// A successful call answering `answer` as JSON text.
fn answer(answer: &serde_json::Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(answer.to_string())])
}

#[tool_router]
impl HookTools {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
            calls: std::sync::Arc::default(),
        }
    }

    fn count(&self) -> u64 {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1
    }

    #[tool(description = "Deny a shell command that deletes recursively")]
    fn guard_command(&self, Parameters(args): Parameters<CommandArgs>) -> CallToolResult {
        self.count();
        if args.command.contains("rm -rf") {
            answer(&json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": format!("mcp guard: `{}` deletes recursively", args.command),
            }}))
        } else {
            answer(&json!({}))
        }
    }

    #[tool(description = "Add context naming the file a tool touches")]
    fn describe_file(&self, Parameters(args): Parameters<FileArgs>) -> CallToolResult {
        self.count();
        answer(&json!({"hookSpecificOutput": {
            "additionalContext": format!("mcp saw file {}", args.file_path),
        }}))
    }

    #[tool(description = "Say how many calls this server process has served")]
    fn calls(&self) -> CallToolResult {
        let n = self.count();
        answer(&json!({"hookSpecificOutput": {"additionalContext": format!("call {n}")}}))
    }

    #[tool(description = "Fail, as a tool error")]
    fn sealed(&self) -> CallToolResult {
        self.count();
        CallToolResult::error(vec![ContentBlock::text("the vault is sealed")])
    }

    #[tool(description = "Answer plain text")]
    fn greet(&self) -> CallToolResult {
        self.count();
        CallToolResult::success(vec![ContentBlock::text("hello from mcp")])
    }

    #[tool(description = "Answer no opinion after a while")]
    async fn sleep(&self, Parameters(args): Parameters<SleepArgs>) -> CallToolResult {
        self.count();
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        answer(&json!({}))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for HookTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = HookTools::new().serve(rmcp::transport::stdio()).await?;
    server.waiting().await?;
    Ok(())
}
