//! The hook kinds of hook files, each in its own module behind the
//! [`Handler`](wasm_hooks_core::Handler) trait and each owning its fields
//! ([`kind::HookKind`]): `wasm` (running plugins is `wasm-hooks-wasm`'s),
//! `command`, `inline` and `matcher`, `http`, `mcp_tool`, `prompt`, and
//! `agent` (a model with read-only tools over the hook's grants). `model`
//! is the API both model kinds call; `answer` reads the JSON answers of
//! command, http and prompt hooks.

pub(crate) mod action;
pub(crate) mod agent;
pub(crate) mod answer;
pub mod callback;
pub mod command;
pub(crate) mod config_schema;
pub(crate) mod defaults;
pub(crate) mod deferred_wasm;
pub(crate) mod egress;
pub mod http;
pub mod inline;
pub(crate) mod kind;
pub mod mcp;
pub(crate) mod mcp_servers;
pub(crate) mod model;
pub mod prompt;
pub(crate) mod runs;
pub mod setup;
pub(crate) mod wasm;
pub(crate) mod wasm_setup;

use self::kind::KindEntry;

/// Every kind a hook file's `type` may name, in the order error messages
/// list them.
pub(crate) const KINDS: &[KindEntry] = &[
    KindEntry::of::<wasm::WasmKind>(),
    KindEntry::of::<command::CommandKind>(),
    KindEntry::of::<inline::InlineKind>(),
    KindEntry::of::<inline::MatcherKind>(),
    KindEntry::of::<prompt::PromptKind>(),
    KindEntry::of::<http::HttpKind>(),
    KindEntry::of::<mcp::McpToolKind>(),
    KindEntry::of::<agent::AgentKind>(),
];
