//! The library's error types: [`Error`] for loading (hook files, plugins)
//! and [`HookError`] for one hook failing at run time. Every variant carries
//! the values a person needs to find the cause: the file, the hook, the limit
//! and its configured value.

use crate::escape::escape_controls;
use std::path::PathBuf;

use serde::{Serialize, Serializer};

use crate::escape::Shown;
use crate::id::HookId;

/// A hook file or plugin that cannot be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A hook file that cannot be read or does not say what is expected.
    #[error("{}{}: {}", Shown(&path.to_string_lossy()), location(*line, *column), Shown(message))]
    Config {
        /// The hook file.
        path: PathBuf,
        /// 1-based line, when known.
        line: Option<usize>,
        /// 1-based column, when known.
        column: Option<usize>,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A plugin that cannot be loaded: missing, not a component, or not
    /// fitting the hook world.
    #[error("loading plugin {}: {}", Shown(&path.to_string_lossy()), Shown(message))]
    Plugin {
        /// The plugin file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A plugin built against a WIT version this host does not support.
    #[error(
        "loading plugin {}: built against {found}, but this host supports {expected}",
        path.display()
    )]
    IncompatiblePlugin {
        /// The plugin file.
        path: PathBuf,
        /// The WIT package the plugin was built against.
        found: String,
        /// The WIT package this host implements.
        expected: &'static str,
    },
    /// A hook entry whose handler cannot be set up (its plugin, say).
    #[error("{}{}: {entry}: {source}", path.display(), location(*line, *column))]
    InHookFile {
        /// The hook file.
        path: PathBuf,
        /// 1-based line of the entry, when known.
        line: Option<usize>,
        /// 1-based column of the entry, when known.
        column: Option<usize>,
        /// The entry, e.g. `hooks.PreToolUse[0].hooks[1]`.
        entry: String,
        /// What went wrong.
        source: Box<Error>,
    },
    /// The wasm runtime could not be set up; the runtime's own error, with
    /// its chain, is the source.
    #[error("starting the wasm runtime: {source}")]
    Runtime {
        /// What the runtime said.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The audit log cannot be opened.
    #[error("opening the audit log {}: {source}", path.display())]
    Audit {
        /// The log file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Error {
    /// The file a problem is in, with its 1-based line and column when
    /// known (a hook file's, a plugin's), for a caller that shows them
    /// apart from the message (an editor, a language binding's exception).
    pub fn location(&self) -> Option<(&std::path::Path, Option<usize>, Option<usize>)> {
        match self {
            Self::Config {
                path, line, column, ..
            }
            | Self::InHookFile {
                path, line, column, ..
            } => Some((path, *line, *column)),
            Self::Plugin { path, .. } | Self::IncompatiblePlugin { path, .. } => {
                Some((path, None, None))
            }
            _ => None,
        }
    }
}

fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

/// One hook failing while handling an event. The engine applies the hook's
/// `on_failure` policy; the failure is always in the outcome's trace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// The hook ran past its wall-clock deadline.
    #[error("hook `{hook}` timed out (limit timeout_ms = {limit_ms})")]
    Timeout {
        /// Which hook.
        hook: HookId,
        /// The configured deadline.
        limit_ms: u64,
    },
    /// The event's deadline passed before the hook answered (or started):
    /// the hooks of one event together may take at most
    /// [`DispatchLimits::event_deadline_ms`](crate::DispatchLimits).
    #[error(
        "hook `{hook}` did not answer within the event's deadline (limit event_deadline_ms = {limit_ms})"
    )]
    EventDeadline {
        /// Which hook.
        hook: HookId,
        /// The event's deadline.
        limit_ms: u64,
    },
    /// A project's hook still running (or not started) when the project's
    /// hooks had used their share of the event's deadline
    /// ([`DispatchLimits::PROJECT_SHARE_PERCENT`](crate::DispatchLimits::PROJECT_SHARE_PERCENT)).
    #[error(
        "hook `{hook}` did not answer within the project's share of the event's deadline ({limit_ms} ms, half of event_deadline_ms): a project's hooks together may take no more, so that yours still run"
    )]
    ProjectShare {
        /// Which hook.
        hook: HookId,
        /// The project's share, in milliseconds.
        limit_ms: u64,
    },
    /// More hooks fit the event than
    /// [`DispatchLimits::max_hooks_per_event`](crate::DispatchLimits)
    /// allows; this one, past the limit, did not run.
    #[error(
        "hook `{hook}` did not run: more than {limit} hooks fit the event (limit max_hooks_per_event = {limit})"
    )]
    TooManyHooks {
        /// Which hook.
        hook: HookId,
        /// The limit.
        limit: usize,
    },
    /// A command hook that reads an event variable the event left out for
    /// its size: it would have seen an empty value.
    #[error(
        "hook `{hook}` reads `${variable}`, which this event left out for its size (over 32 KiB): blocked whatever on_failure says; read the event from stdin instead"
    )]
    VariableTooLarge {
        /// Which hook.
        hook: HookId,
        /// The variable left out.
        variable: String,
    },
    /// The hook used up its instruction budget.
    #[error("hook `{hook}` ran out of fuel (limit fuel = {fuel})")]
    FuelExhausted {
        /// Which hook.
        hook: HookId,
        /// The configured budget.
        fuel: u64,
    },
    /// The hook tried to grow its memory past the cap.
    #[error("hook `{hook}` exceeded its memory cap (limit memory_mb = {limit_mb})")]
    MemoryLimit {
        /// Which hook.
        hook: HookId,
        /// The configured cap.
        limit_mb: u64,
    },
    /// The hook's answer was larger than allowed.
    #[error("hook `{hook}` returned {size_kb} KiB, over its limit (max_result_kb = {limit_kb})")]
    ResultTooLarge {
        /// Which hook.
        hook: HookId,
        /// The answer's size.
        size_kb: u64,
        /// The configured limit.
        limit_kb: u64,
    },
    /// The plugin trapped (a panic, an out-of-bounds access, a stack overflow…).
    #[error("hook `{hook}` crashed: {}", escape_controls(message))]
    Trap {
        /// Which hook.
        hook: HookId,
        /// The trap, and the plugin's last stderr line when it left one.
        message: String,
    },
    /// A command hook's program does not exist (exit code 127).
    #[error("hook `{hook}`: command not found: `{command}`")]
    CommandNotFound {
        /// Which hook.
        hook: HookId,
        /// The command as configured.
        command: String,
    },
    /// A command hook's program cannot be executed (exit code 126).
    #[error("hook `{hook}`: `{command}` is not executable")]
    NotExecutable {
        /// Which hook.
        hook: HookId,
        /// The command as configured.
        command: String,
    },
    /// A command hook could not start because the event made its arguments
    /// too large (`E2BIG`). Whoever wrote the event chose its size, so this
    /// failure always blocks, whatever `on_failure` says.
    #[error(
        "hook `{hook}`: the event made `{command}`'s arguments too large to start it (over 128 KiB in one); blocked whatever on_failure says, since the event's author chose its size: read the event from stdin instead of a template"
    )]
    ArgumentsTooLarge {
        /// Which hook.
        hook: HookId,
        /// The command as configured.
        command: String,
    },
    /// A command hook exited with a code that is neither 0 nor 2.
    #[error("hook `{hook}` exited with code {code}{}", if stderr.is_empty() { String::new() } else { format!(": {}", escape_controls(stderr)) })]
    ExitCode {
        /// Which hook.
        hook: HookId,
        /// The exit code.
        code: i32,
        /// The last line it wrote to stderr.
        stderr: String,
    },
    /// A command hook was killed by a signal.
    #[error("hook `{hook}` was killed by signal {signal}")]
    Signal {
        /// Which hook.
        hook: HookId,
        /// The signal number.
        signal: i32,
    },
    /// An HTTP hook's endpoint answered with a status other than 2xx.
    #[error("hook `{hook}`: the endpoint answered HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {}", escape_controls(body)) })]
    HttpStatus {
        /// Which hook.
        hook: HookId,
        /// The HTTP status.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// An untrusted project's hook failed: the failure, marked as the
    /// project's ([`HookError::from_untrusted`]).
    #[error("[from the untrusted project's hook `{}`] {error}", hook.in_label())]
    Untrusted {
        /// Which hook.
        hook: HookId,
        /// The failure.
        error: Box<HookError>,
    },
    /// The hook reported that it could not decide.
    #[error("hook `{hook}` failed: {}", escape_controls(message))]
    Failed {
        /// Which hook.
        hook: HookId,
        /// The hook's own message.
        message: String,
    },
    /// The hook answered something that is not a valid result.
    #[error("hook `{hook}` gave an invalid answer: {}", escape_controls(message))]
    BadResult {
        /// Which hook.
        hook: HookId,
        /// What is wrong with it.
        message: String,
    },
}

impl HookError {
    /// Whether this failure blocks whatever the hook's `on_failure` says:
    /// one the event's author can cause at will.
    pub fn fails_closed(&self) -> bool {
        match self {
            Self::Untrusted { error, .. } => error.fails_closed(),
            other => matches!(
                other,
                Self::ArgumentsTooLarge { .. } | Self::VariableTooLarge { .. }
            ),
        }
    }

    /// This failure of an untrusted project's hook `hook`, marked as its
    /// wherever it reaches the model (a plugin's own error text, a missing
    /// plugin's remedy), as that hook's answers are.
    pub fn from_untrusted(self, hook: &HookId) -> Self {
        Self::Untrusted {
            hook: hook.clone(),
            error: Box::new(self),
        }
    }

    /// A short, stable name for the kind of failure (`timeout`, `fuel`, …),
    /// for machine-readable output.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Timeout { .. } => "timeout",
            Self::EventDeadline { .. } => "event_deadline",
            Self::ProjectShare { .. } => "project_share",
            Self::TooManyHooks { .. } => "too_many_hooks",
            Self::VariableTooLarge { .. } => "variable_too_large",
            Self::FuelExhausted { .. } => "fuel",
            Self::MemoryLimit { .. } => "memory",
            Self::ResultTooLarge { .. } => "result_size",
            Self::Trap { .. } => "trap",
            Self::CommandNotFound { .. } => "not_found",
            Self::NotExecutable { .. } => "not_executable",
            Self::ArgumentsTooLarge { .. } => "arguments_too_large",
            Self::ExitCode { .. } => "exit_code",
            Self::Signal { .. } => "signal",
            Self::HttpStatus { .. } => "http_status",
            Self::Failed { .. } => "failed",
            Self::BadResult { .. } => "bad_result",
            Self::Untrusted { error, .. } => error.kind(),
        }
    }
}

impl Serialize for HookError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("kind", self.kind())?;
        map.serialize_entry("message", &self.to_string())?;
        map.end()
    }
}

/// A failure as [`Serialize`] writes it: its kind and its message.
impl schemars::JsonSchema for HookError {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "HookError".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "description": "Why a hook failed: its kind (`timeout`, `fuel`, `trap`, `exit_code`…) and the message a person reads.",
            "properties": {
                "kind": {"type": "string"},
                "message": {"type": "string"}
            },
            "required": ["kind", "message"]
        })
    }
}
