//! `wasm-hooks`: a hooks engine for AI coding agents.
//!
//! An agent reports lifecycle events (a tool is about to run, a prompt was
//! submitted, a session ended); the engine runs the hooks configured for
//! them — sandboxed WebAssembly components first of all — and folds their
//! answers into one [`Outcome`] the agent obeys.
//!
//! Start from [`HookEngine::builder`], add hook files, and call
//! [`HookEngine::dispatch`] with an [`Event`]:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use serde_json::json;
//! use wasm_hooks::{Event, HookEngine, Verdict};
//!
//! let engine = HookEngine::builder().hook_file("hooks.json").build()?;
//! let outcome = engine
//!     .dispatch(Event::pre_tool_use("Bash", json!({"command": "rm -rf /"})))
//!     .await;
//! if let Verdict::Deny { reason } = &outcome.verdict {
//!     eprintln!("blocked: {reason}");
//! }
//! # Ok(()) }
//! ```
//!
//! An agent that wants more than a decision — context routed to the model,
//! approvals asked of the person, messages shown, an audit trail — wraps the
//! engine in a [`Session`] and fires events through [`ToolHooks`] and
//! [`SessionHooks`]; `host/lib/examples/agent.rs` is a whole agent doing so.
//! [`AuditLog`] is the tamper-evident record; [`verify_audit_log`] checks it.
//!
//! The crates below this one: `wasm-hooks-core` (events, outcomes, the
//! [`Handler`] trait, [`HookRegistry`] and dispatch, the audit log) and
//! `wasm-hooks-wasm` (the sandboxed wasm handler). Their public names are
//! re-exported here, so an agent depends on this crate alone.
//!
//! What an embedder uses is at the root. What the `wasm-hooks` program
//! builds on lives in modules: [`agents`] (the agents' own hook settings:
//! install, import), [`serve`] (the HTTP server and the warm engine it
//! keeps), [`observe`] (the decision feed and live page, replay, stats),
//! [`policy`] (a hook file's expected decisions), [`schema`] (the JSON
//! Schemas of the files), [`oci`] (plugins in a registry) and
//! [`cli_support`] (the lower crates' helpers it uses).

mod config;
mod engine;
mod explain;
#[cfg(test)]
mod fail_closed_fuzz;
mod handlers;
mod inputs;
pub mod observe;
pub mod oci;
mod once;
mod openapi;
pub mod policy;
mod project_trust;
#[cfg(test)]
mod properties;
mod protocol;
mod request_env;
mod server;
mod server_access_log;
mod server_conn;
mod server_metrics;
mod server_reload;
mod server_trace;
mod session;
mod shell;
mod state;
mod stop_loop;
mod template;
mod tracked;
mod trust;
mod warm;

pub use engine::{HookEngine, HookEngineBuilder, LoadError, MANAGED_DIR};
pub use explain::{Explanation, Fate, HookExplained, Produced};
pub use handlers::callback::{CallbackFn, CallbackFuture, CallbackHook};
pub use handlers::command::{CommandHook, Program, Shell};
pub use handlers::defaults::{CommandDefaults, PromptDefaults};
pub use handlers::egress::UrlAllowlist;
pub use handlers::http::HttpHook;
pub use handlers::inline::InlineHook;
pub use handlers::prompt::{PromptHook, PromptSettings, Provider};
pub use handlers::setup::{RuleProblem, SetupError};
pub use inputs::InputStamps;
pub use project_trust::{HookChange, ProjectTrust, SkippedHook};
pub use protocol::{Answer, Protocol, event_json};
pub use request_env::RequestEnv;
pub use session::{
    ApprovalChoice, ApprovalFuture, ApprovalRecord, ApprovalRequest, ApprovalSystem,
    ContextMessage, ContextQueue, ContextSink, DEFAULT_OPTIONS, DecidedBy, DisplaySystem,
    InjectionLimits, InjectionReport, InjectionStatus, Provenance, Resolved, ScriptedApprovals,
    Session, SessionBuilder, SessionHooks, TerminalApproval, TerminalDisplay, ToolDenied,
    ToolError, ToolHooks, Unanswered,
};
pub use state::{DirectoryStore, MemoryStore, RedisStore, SESSION_TTL, SessionStore, StoreError};
pub use stop_loop::DEFAULT_STOP_LOOP_LIMIT;
pub use trust::{
    FileStamp, MAX_TRUSTED_TEXT_BYTES, TrustRecord, TrustStatus, TrustStore, UntrustedProjects,
};
pub use wasm_hooks_core::{
    Approval, Attributed, AuditEntry, AuditKey, AuditKind, AuditLog, Break, Context, Decision,
    DispatchLimits, Enforcement, Error, Event, EventError, EventName, EventPattern, Flow,
    FnHandler, Fold, Handler, HandlerFuture, HookError, HookHandle, HookId, HookOutput,
    HookRegistry, HookResult, HookSource, HookSpec, MAX_SHOWN_CHARS, MapChange, Misfit, OnFailure,
    Outcome, PermissionRule, PrepareFuture, REDACTED, Redactor, Reply, Requests, Review, Role,
    RuleError, Severity, ToolMatcher, TraceEntry, TraceStatus, UnknownEvent, UserMessage, Verdict,
    Verification, verify_audit_log,
};
pub use wasm_hooks_wasm::{
    CacheSurvey, CompileCache, CompileNote, CompiledAhead, Compiler, GrantBase, GrantError,
    GrantedDir, Grants, InstancePolicy, LimitOverrides, MAX_HANDLES, OptimizeJob, Plugin, Tiering,
    WasmHook, WasmLimits, WasmRuntime, WasmRuntimeBuilder,
};

/// The agents' own hook settings: what wasm-hooks knows of each agent,
/// and installing its hook there, or taking the command hooks found there
/// into a hook file.
pub mod agents {
    pub use crate::protocol::{
        AGENT_TIMEOUT_SECS, AgentFacts, HookFile, Imported, InstalledHook, SettingsError,
        SettingsShape, TOKEN_VARIABLE, add_hook_groups, failing_open, install, installed_on,
        installed_programs, take_command_hooks, uninstall,
    };
}

/// Serving many agents over HTTP: the server behind `wasm-hooks serve`,
/// its limits, and the engine it keeps warm per project.
pub mod serve {
    pub use crate::server::{DEFAULT_MAX_BODY, HookServer};
    pub use crate::server_conn::{
        DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT, DRAIN_GRACE,
        EVICT_AFTER,
    };
    pub use crate::warm::{NotAnswering, RebuildPolicy, Reloaded, WarmEngine};
}

/// The lower crates' helpers the `wasm-hooks` program uses (the audit
/// log's reader, the event catalogue, escaping for a terminal, a plugin's
/// inspection and stamping), which are not the embedding API: the program
/// reaches the lower crates only through this one.
pub mod cli_support {
    pub use wasm_hooks_core::{
        AuditLine, CATALOGUE, CheckedLine, ReadRefused, Shown, escape_controls, read_audit_log,
        read_checked_audit_log, read_regular_file, xdg_dir,
    };
    pub use wasm_hooks_wasm::{
        MAX_INSTANCE_CALLS, PluginInfo, WIT_PACKAGE, embed_config_schema, stamp_wit,
    };
}

/// The JSON Schemas of hook files and agents' settings, and the check of
/// a plugin's `config` against the schema it carries.
pub mod schema {
    pub use crate::config::{
        AGENT_SETTINGS_SCHEMA_ID, HOOK_FILE_SCHEMA_ID, agent_settings_schema, hook_file_schema,
    };
    pub use crate::handlers::config_schema::{ConfigSchemaError, check_config_schema};
}
