//! MCP tool names as each agent writes them, read back as Claude Code's
//! `mcp__<server>__<tool>`, so that a matcher written the Claude Code way
//! fits every agent. Copilot CLI names a tool `<server>-<tool>`, OpenCode
//! `<server>_<tool>` (each with characters outside `[A-Za-z0-9_-]` made
//! `_`); both server and tool names may hold `-` and `_`, so the name is
//! split at a server the agent is known to have: OpenCode's plugin sends
//! its servers' names, Copilot's are read from its MCP configuration.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The most of an MCP configuration file read (`MAX_MCP_CONFIG_BYTES`).
const MAX_MCP_CONFIG_BYTES: u64 = 1 << 20;

/// `tool` as `mcp__<server>__<rest>` when it is `<server><joint><rest>`
/// for one of `servers` (the longest that fits, each as the agent writes
/// it in a tool name); `None` when it is no MCP tool of theirs.
pub(super) fn canonical(tool: &str, joint: char, servers: &[String]) -> Option<String> {
    servers
        .iter()
        .map(|server| sanitized(server))
        .filter(|server| {
            tool.strip_prefix(server.as_str())
                .and_then(|rest| rest.strip_prefix(joint))
                .is_some_and(|rest| !rest.is_empty())
        })
        .max_by_key(String::len)
        .map(|server| {
            let rest = &tool[server.len() + joint.len_utf8()..];
            super::mcp_tool_name(&server, rest)
        })
}

/// A server's name as the agents write it in a tool's: every character
/// outside `[A-Za-z0-9_-]` made `_`.
fn sanitized(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The MCP servers Copilot CLI has for a session in `cwd`: the person's
/// (`$COPILOT_HOME/mcp-config.json`, else `~/.copilot/mcp-config.json`)
/// and the workspace's (`.mcp.json`, `.github/mcp.json`,
/// `.vscode/mcp.json`). Servers given on Copilot's command line
/// (`--additional-mcp-config`) cannot be seen (docs/agents.md).
pub(super) fn copilot_servers(cwd: &Path) -> Vec<String> {
    let home = std::env::var_os("COPILOT_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".copilot")));
    let files = home
        .map(|h| h.join("mcp-config.json"))
        .into_iter()
        .chain([".mcp.json", ".github/mcp.json", ".vscode/mcp.json"].map(|f| cwd.join(f)));
    let mut servers = Vec::new();
    for file in files {
        let Ok(bytes) = wasm_hooks_core::read_regular_file(&file, MAX_MCP_CONFIG_BYTES) else {
            continue;
        };
        let Ok(config) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        for key in ["mcpServers", "servers"] {
            if let Some(Value::Object(named)) = config.get(key) {
                servers.extend(named.keys().cloned());
            }
        }
    }
    servers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_name_is_split_at_the_longest_known_server() {
        let servers = ["echo".to_owned(), "echo-srv".to_owned(), "my.db".to_owned()];
        assert_eq!(
            canonical("echo-srv-run_query", '-', &servers).as_deref(),
            Some("mcp__echo-srv__run_query")
        );
        assert_eq!(
            canonical("my_db_select", '_', &servers).as_deref(),
            Some("mcp__my_db__select")
        );
        assert_eq!(canonical("bash", '-', &servers), None);
        assert_eq!(canonical("echo-", '-', &servers), None);
    }
}
