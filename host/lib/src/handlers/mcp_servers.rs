//! MCP server processes, one per spec, started on first use and shared by
//! the `mcp_tool` hooks that call them.
use crate::RequestEnv;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::Mutex;

/// How to start an MCP server on stdio.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct McpServerSpec {
    /// The name it goes by in messages.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it, beside the inherited environment.
    pub env: Vec<(String, String)>,
    /// Where it runs.
    pub cwd: PathBuf,
    /// The `.mcp.json` it was named in, if it was.
    pub config_file: Option<PathBuf>,
}

/// A server's connection, started on first use and shared by its hooks.
#[derive(Debug)]
pub struct McpServer {
    pub(super) spec: McpServerSpec,
    request_env: RequestEnv,
    session: Mutex<Option<RunningService<RoleClient, ()>>>,
}

impl McpServer {
    /// A server that starts when first called, with the request's own
    /// variables over the process's environment.
    pub fn new(spec: McpServerSpec, request_env: RequestEnv) -> Self {
        Self {
            spec,
            request_env,
            session: Mutex::new(None),
        }
    }

    /// Call `tool` with `arguments`, starting the server if it is not
    /// running. Calls to one server go one at a time.
    pub(super) async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult, String> {
        let mut session = self.session.lock().await;
        if session.is_none() {
            *session = Some(self.start().await?);
        }
        let client = session.as_ref().expect("started above");
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        match client.call_tool(params).await {
            Ok(result) => Ok(result),
            Err(e) => {
                // The next call starts afresh.
                *session = None;
                Err(match e {
                    ServiceError::McpError(e) => {
                        format!(
                            "server `{}` refused the call: {}",
                            self.spec.name, e.message
                        )
                    }
                    e => format!("server `{}`: {e}", self.spec.name),
                })
            }
        }
    }

    async fn start(&self) -> Result<RunningService<RoleClient, ()>, String> {
        let spec = &self.spec;
        let mut command = tokio::process::Command::new(&spec.command);
        self.request_env.apply(&mut command);
        command
            .args(&spec.args)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&spec.cwd)
            .kill_on_drop(true);
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start MCP server `{}` (`{}`): {e}",
                    spec.name, spec.command
                )
            })?;
        ().serve(transport)
            .await
            .map_err(|e| format!("MCP server `{}` did not start: {e}", spec.name))
    }
}

/// The servers of one set of hook files, by how they start: hooks naming
/// the same server share its process.
#[derive(Default)]
pub(crate) struct McpServers {
    started: HashMap<McpServerSpec, Arc<McpServer>>,
    /// The organisation's `allowed_mcp_servers`: the only programs hooks
    /// may start: a path matches only itself, a bare name only the same bare
    /// name (found on `PATH`), and no layer may set a variable that makes
    /// them load other code.
    pub(crate) allowed: Option<Vec<String>>,
}

impl McpServers {
    /// No server started yet; hooks may start only `allowed` programs,
    /// when the organisation names them.
    pub(crate) fn allowing(allowed: Option<Vec<String>>) -> Self {
        Self {
            started: HashMap::new(),
            allowed,
        }
    }

    pub(super) fn get(&mut self, spec: McpServerSpec, env: &RequestEnv) -> Arc<McpServer> {
        self.started
            .entry(spec.clone())
            .or_insert_with(|| Arc::new(McpServer::new(spec, env.clone())))
            .clone()
    }
}
