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
//! Modules are private; everything public is re-exported here.
#![deny(missing_docs)]

mod audit;
mod config;
mod digest;
mod engine;
mod error;
mod event;
mod handlers;
mod matcher;
mod outcome;
mod policy;
mod protocol;
mod server;
mod session;
mod spec;
mod suggest;
mod template;

pub use audit::{
    AuditEntry, AuditKind, AuditLine, AuditLog, Break, REDACTED, Redactor, Verification,
    read as read_audit_log, verify as verify_audit_log,
};
pub use engine::{HookEngine, HookEngineBuilder, HookHandle, LoadError};
pub use error::{Error, HookError};
pub use event::{CATALOGUE, Event, EventError, EventName, UnknownEvent};
pub use handlers::closure::FnHandler;
pub use handlers::command::{CommandDefaults, CommandHook, Program};
pub use handlers::http::{HttpHook, UrlAllowlist};
pub use handlers::inline::InlineHook;
pub use handlers::prompt::{PromptDefaults, PromptHook, PromptSettings, Provider};
pub use handlers::wasm::{
    CacheSurvey, CompileCache, GrantBase, GrantedDir, Grants, LimitOverrides, Plugin, PluginInfo,
    WIT_PACKAGE, WasmHook, WasmLimits, WasmRuntime, WasmRuntimeBuilder,
};
pub use handlers::{Handler, HandlerFuture, Reply};
pub use matcher::{EventPattern, ToolMatcher};
pub use outcome::{
    Approval, Attributed, Context, Decision, Flow, Fold, HookId, HookOutput, HookResult, OnFailure,
    Outcome, Role, Severity, TraceEntry, TraceStatus, UserMessage, Verdict,
};
pub use policy::{Expectation, ExpectedDecision, Mismatch, PolicyTest, read_fixtures};
pub use protocol::{
    Answer, CLAUDE_EVENTS, InstalledHook, Protocol, SettingsError, install as install_claude_hooks,
    uninstall as uninstall_claude_hooks,
};
pub use server::{DEFAULT_MAX_BODY, HookServer};
pub use session::{
    ApprovalChoice, ApprovalFuture, ApprovalRecord, ApprovalRequest, ApprovalSystem,
    ContextMessage, ContextSink, DEFAULT_OPTIONS, DecidedBy, DisplaySystem, InjectionLimits,
    InjectionReport, InjectionStatus, Provenance, Resolved, ScriptedApprovals, Session,
    SessionBuilder, SessionHooks, TerminalApproval, TerminalDisplay, ToolDenied, ToolError,
    ToolHooks,
};
pub use spec::{HookSource, HookSpec};
