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
//! [`SessionHooks`]; `host/examples/agent.rs` is a whole agent doing so.
//! [`AuditLog`] is the tamper-evident record; [`verify_audit_log`] checks it.
//!
//! The crates below this one: `wasm-hooks-core` (events, outcomes, the
//! [`Handler`] trait, [`HookRegistry`] and dispatch, the audit log) and
//! `wasm-hooks-wasm` (the sandboxed wasm handler). Their public names are
//! re-exported here, so an agent depends on this crate alone.
//!
//! Modules are private; everything public is re-exported here.

mod config;
mod engine;
mod explain;
#[cfg(test)]
mod fail_closed_fuzz;
mod handlers;
mod inputs;
mod observe;
pub mod oci;
mod once;
mod openapi;
mod policy;
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

pub use config::{
    AGENT_SETTINGS_SCHEMA_ID, HOOK_FILE_SCHEMA_ID, agent_settings_schema, hook_file_schema,
};
pub use engine::{HookEngine, HookEngineBuilder, LoadError, MANAGED_DIR};
pub use explain::{Explanation, Fate, HookExplained, Produced};
pub use handlers::callback::{CallbackFn, CallbackFuture, CallbackHook};
pub use handlers::command::{CommandDefaults, CommandHook, Program};
pub use handlers::config_schema::{ConfigSchemaError, check_config_schema};
pub use handlers::http::{HttpHook, UrlAllowlist};
pub use handlers::inline::InlineHook;
pub use handlers::prompt::{PromptDefaults, PromptHook, PromptSettings, Provider};
pub use handlers::setup::{RuleProblem, SetupError};
pub use inputs::InputStamps;
pub use observe::feed::{AuditNotes, DecisionFeed, DecisionNote, HookNote};
pub use observe::page::{PageState, routes as page_routes};
pub use observe::replay::logs::{LogFormat, read as read_session_log};
pub use observe::replay::{
    Example, Happened, HookReplay, Recorded, ReplayOptions, ReplayReport, Replayer,
    SkippedInReplay, SourceRead,
};
pub use observe::stats::{AuditStats, Elapsed, HookStats};
pub use policy::{Expectation, ExpectedDecision, Mismatch, PolicyTest, read_fixtures};
pub use project_trust::{HookChange, ProjectTrust, SkippedHook};
pub use protocol::{
    AGENT_TIMEOUT_SECS, AgentFacts, Answer, Imported, InstalledHook, Protocol, SettingsError,
    TOKEN_VARIABLE, add_hook_groups, event_json, failing_open, install as install_hooks,
    installed_on, installed_programs, take_command_hooks, uninstall as uninstall_hooks,
};
pub use request_env::RequestEnv;
pub use server::{DEFAULT_MAX_BODY, HookServer};
pub use server_conn::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT, DRAIN_GRACE,
    EVICT_AFTER,
};
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
pub use warm::{NotAnswering, RebuildPolicy, Reloaded, WarmEngine};
pub use wasm_hooks_core::{
    Approval, Attributed, AuditEntry, AuditKey, AuditKind, AuditLine, AuditLog, Break, CATALOGUE,
    CheckedLine, Context, Decision, DispatchLimits, Enforcement, Error, Event, EventError,
    EventName, EventPattern, Flow, FnHandler, Fold, Handler, HandlerFuture, HookError, HookHandle,
    HookId, HookOutput, HookRegistry, HookResult, HookSource, HookSpec, MAX_SHOWN_CHARS, MapChange,
    Misfit, OnFailure, Outcome, REDACTED, ReadRefused, Redactor, Reply, Requests, Review, Role,
    Severity, Shown, ToolMatcher, TraceEntry, TraceStatus, UnknownEvent, UserMessage, Verdict,
    Verification, escape_controls, read_audit_log, read_checked_audit_log, read_regular_file,
    verify_audit_log, xdg_dir,
};
pub use wasm_hooks_wasm::{
    CacheSurvey, CompileCache, CompileNote, CompiledAhead, Compiler, GrantBase, GrantedDir, Grants,
    InstancePolicy, LimitOverrides, MAX_HANDLES, MAX_INSTANCE_CALLS, OptimizeJob, Plugin,
    PluginInfo, Tiering, WIT_PACKAGE, WasmHook, WasmLimits, WasmRuntime, WasmRuntimeBuilder,
    embed_config_schema, stamp_wit,
};
