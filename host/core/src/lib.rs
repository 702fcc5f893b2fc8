//! The core of wasm-hooks: what every hook kind and every agent shares, with
//! no WebAssembly runtime in it.
//!
//! - [`EventName`] and [`Event`]: the event catalogue and the record every
//!   hook receives;
//! - [`EventPattern`] and [`ToolMatcher`]: which events and subjects a hook
//!   applies to;
//! - [`HookResult`], [`Fold`] and [`Outcome`]: what hooks answer and how
//!   answers fold into one decision;
//! - [`Handler`]: the one trait every hook kind implements, and
//!   [`FnHandler`] for Rust closures;
//! - [`HookSpec`] and [`HookRegistry`]: registered hooks and dispatch;
//! - [`AuditLog`]: the tamper-evident record of dispatches.
//!
//! Agents normally use the `wasm-hooks` crate, which re-exports all of this
//! and builds a registry from hook files.

mod audit;
mod closure;
mod digest;
mod dirs;
mod dispatch;
mod dispatch_limits;
mod error;
mod escape;
mod event;
mod handler;
mod id;
mod known;
mod matcher;
mod outcome;
mod read_file;
mod regex_memo;
mod rule;
mod session_store;
mod spec;
mod suggest;

pub use audit::{
    AuditEntry, AuditKey, AuditKind, AuditLine, AuditLog, Break, CheckedLine, REDACTED, Redactor,
    Verification, read as read_audit_log, read_checked as read_checked_audit_log,
    verify as verify_audit_log,
};
pub use closure::FnHandler;
pub use digest::sha256_hex;
pub use dirs::{NotPersonal, Owner, personal_dir, personal_dir_from_env, xdg_dir};
pub use dispatch::{HookHandle, HookRegistry, Review};
pub use dispatch_limits::DispatchLimits;
pub use error::{Error, HookError};
pub use escape::{MAX_SHOWN_CHARS, Shown, escape_controls};
pub use event::{
    CATALOGUE, Event, EventError, EventName, UnknownEvent, now_rfc3339, plain_text, record_field,
    rfc3339_of_millis,
};
pub use handler::{Handler, HandlerFuture, PrepareFuture, Reply};
pub use id::HookId;
pub use known::{KNOWN_RECORD_FIELDS, KNOWN_TOOLS};
pub use matcher::{EventPattern, ToolMatcher, regex_error};
pub use outcome::{
    Approval, Attributed, Context, Decision, Enforcement, Flow, Fold, HookOutput, HookResult,
    OnFailure, Outcome, Requests, Role, Severity, TraceEntry, TraceStatus, UserMessage, Verdict,
};
pub use read_file::{ReadRefused, read_regular_file};
pub use regex_memo::{MAX_REGEX_BUDGET_BYTES, MAX_REGEX_BYTES, compile_regex, with_regex_budget};
pub use rule::{PermissionRule, RuleError};
pub use session_store::{MapChange, MemoryStore, SessionStore, StoreError};
pub use spec::{HookSource, HookSpec, Misfit};
pub use suggest::nearest;
