//! Engine-wide defaults for command and prompt hooks, which the engine's
//! builder sets and the kinds read.

use super::model::Provider;

/// Engine-wide defaults for command hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandDefaults {
    /// Deadline in milliseconds, unless a hook says `timeout`/`timeout_ms`
    /// (default 60 000, as Claude Code).
    pub timeout_ms: u64,
    /// Cap on captured stdout and on stderr, each, in KiB (default 1024).
    pub max_output_kb: u64,
    /// Prefix of the event variables: `<PREFIX>_EVENT`, … (default
    /// `WASM_HOOKS`).
    pub env_prefix: String,
}

impl Default for CommandDefaults {
    fn default() -> Self {
        Self {
            timeout_ms: 60_000,
            max_output_kb: 1024,
            env_prefix: "WASM_HOOKS".to_owned(),
        }
    }
}

/// Engine-wide defaults for prompt hooks, so that a hook can give only its
/// `prompt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptDefaults {
    /// Default `anthropic`.
    pub provider: Provider,
    /// Default: the provider's public API.
    pub base_url: Option<String>,
    /// Default `claude-haiku-4-5`: fast and cheap, as hooks need.
    pub model: String,
    /// Default: `ANTHROPIC_API_KEY` or `OPENAI_API_KEY`.
    pub api_key_env: Option<String>,
    /// Default 256.
    pub max_tokens: u32,
    /// Default 30 000.
    pub timeout_ms: u64,
}

impl Default for PromptDefaults {
    fn default() -> Self {
        Self {
            provider: Provider::Anthropic,
            base_url: None,
            model: "claude-haiku-4-5".to_owned(),
            api_key_env: None,
            max_tokens: 256,
            timeout_ms: 30_000,
        }
    }
}
