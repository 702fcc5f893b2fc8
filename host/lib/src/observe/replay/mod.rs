//! `wasm-hooks replay`: a hook file run over an agent's past sessions,
//! and what each hook would have done, against what happened.
//!
//! Each agent's session log ([`logs`]) becomes [`Recorded`] events: the
//! event the agent would have sent its hook (decoded by the agent's own
//! [`Protocol`], so a replayed call is the call a live hook sees) and
//! what the log says became of it. The [`Replayer`] runs only the hooks
//! that cannot act on the world (wasm, inline; prompt hooks when asked),
//! every one of them as a dry run, so that each hook answers every event
//! it applies to whatever the others say; the others are counted as
//! skipped. One engine is built and reused: a replay runs at in-process
//! speed.

pub(crate) mod logs;

use std::collections::BTreeMap;

use serde::Serialize;
use wasm_hooks_core::{
    Decision, Enforcement, Event, HookRegistry, HookSpec, Redactor, TraceStatus,
};

use crate::HookEngine;

/// What the session log says became of a recorded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Happened {
    /// The tool ran (its result is in the log).
    Ran,
    /// It was refused: by a hook, or by the agent's own permissions.
    Denied,
    /// The person was asked.
    Asked,
    /// The log does not say (no result, or not a tool call).
    Unknown,
}

impl Happened {
    /// What happened, in a sentence's words ("it ran").
    pub fn said(self) -> &'static str {
        match self {
            Self::Ran => "it ran",
            Self::Denied => "it was refused",
            Self::Asked => "the person was asked",
            Self::Unknown => "the log does not say what became of it",
        }
    }

    /// Its word, as in the report.
    pub fn word(self) -> &'static str {
        match self {
            Self::Ran => "ran",
            Self::Denied => "denied",
            Self::Asked => "asked",
            Self::Unknown => "unknown",
        }
    }
}

/// One event recovered from a session log.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The event, as the agent's hook would have had it.
    pub event: Event,
    /// What became of it.
    pub happened: Happened,
    /// Where in the log: `file:line`.
    pub at: String,
    /// When, as the log says.
    pub time: Option<String>,
}

/// Which hooks a replay runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplayOptions {
    /// Also run prompt hooks (they call a model: they cost, and they see
    /// the sessions' text).
    pub prompts: bool,
}

/// The most examples kept per hook and kind of agreement.
const EXAMPLES: usize = 5;

/// What a replay found.
#[derive(Debug, Default, Serialize)]
pub struct ReplayReport {
    /// Events replayed.
    pub events: u64,
    /// Each hook run, by name.
    pub hooks: BTreeMap<String, HookReplay>,
    /// The hooks not run, with why.
    pub skipped: Vec<SkippedInReplay>,
    /// The session logs read.
    pub sources: Vec<SourceRead>,
}

/// A hook a replay does not run.
#[derive(Debug, Serialize)]
pub struct SkippedInReplay {
    /// The hook.
    pub hook: String,
    /// Its kind.
    pub kind: String,
    /// Why it is not run.
    pub why: &'static str,
}

/// One session log, read.
#[derive(Debug, Default, Clone, Serialize)]
pub struct SourceRead {
    /// The file.
    pub path: String,
    /// Its format: `claude`, `codex`, `gemini`, `copilot`, `audit`.
    pub format: String,
    /// Events recovered from it.
    pub events: u64,
    /// Records that are not events, or that could not be read (a
    /// truncated line, a record of an unknown type, a line past the
    /// size cap): counted, never fatal.
    pub unknown: u64,
    /// Why the file could not be read at all, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What one hook would have done over the sessions.
#[derive(Debug, Default, Serialize)]
pub struct HookReplay {
    /// Events it applied to.
    pub seen: u64,
    /// Its answers by decision (`proceed`, `allow`, `deny`, `ask`,
    /// `modify`, `failed`).
    pub would: BTreeMap<String, u64>,
    /// Its answers against what happened: decision, then what happened
    /// (`ran`, `denied`, `asked`, `unknown`).
    pub against: BTreeMap<String, BTreeMap<String, u64>>,
    /// A few of each decision other than no opinion, against what
    /// happened.
    pub examples: Vec<Example>,
}

/// One event a hook had an opinion on.
#[derive(Debug, Clone, Serialize)]
pub struct Example {
    /// Its decision.
    pub would: String,
    /// What happened.
    pub happened: Happened,
    /// The event and its subject (`PreToolUse Bash`).
    pub event: String,
    /// What it was about, cut short: the command, the file.
    pub about: String,
    /// The hook's reason, if it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Where in the log.
    pub at: String,
    /// The session.
    pub session: String,
}

/// Runs recorded events through the hooks that cannot act, each as a dry
/// run, and keeps the report.
pub struct Replayer {
    registry: HookRegistry,
    report: ReplayReport,
    /// What the report shows of the sessions is redacted as the audit
    /// log is.
    redactor: Redactor,
}

impl Replayer {
    /// A replayer of `engine`'s hooks: wasm and inline ones (prompt ones
    /// too with `options.prompts`), each as a dry run; the rest are
    /// listed as skipped.
    pub fn new(engine: &HookEngine, options: ReplayOptions) -> Self {
        let registry = HookRegistry::new(None);
        let mut report = ReplayReport::default();
        for hook in engine.hooks() {
            let kind = engine.kind_of(&hook.id).unwrap_or("code");
            let why = match kind {
                "wasm" | "inline" | "matcher" => None,
                "prompt" if options.prompts => None,
                "prompt" => Some("a prompt hook calls a model: `--prompts` to run it"),
                _ => Some("it can act on the world (runs a program, calls a server)"),
            };
            if let Some(why) = why {
                report.skipped.push(SkippedInReplay {
                    hook: hook.id.to_string(),
                    kind: kind.to_owned(),
                    why,
                });
                continue;
            }
            report.hooks.entry(hook.id.to_string()).or_default();
            registry.register(HookSpec {
                background: false,
                ..hook.with_enforcement(Enforcement::DryRun)
            });
        }
        Self {
            registry,
            report,
            redactor: Redactor::from_env(&[]),
        }
    }

    /// Replay one recorded event.
    pub async fn replay(&mut self, recorded: &Recorded) {
        self.report.events += 1;
        let outcome = self.registry.dispatch(&recorded.event).await;
        for entry in &outcome.trace {
            let (word, reason) = match &entry.status {
                TraceStatus::Answered(result) => {
                    (result.decision.word(), reason_of(&result.decision))
                }
                TraceStatus::Failed { error, .. } => ("failed", Some(error.to_string())),
                TraceStatus::Detached => continue,
            };
            let hook = self.report.hooks.entry(entry.hook.to_string()).or_default();
            hook.seen += 1;
            *hook.would.entry(word.to_owned()).or_default() += 1;
            *hook
                .against
                .entry(word.to_owned())
                .or_default()
                .entry(recorded.happened.word().to_owned())
                .or_default() += 1;
            let kept = hook
                .examples
                .iter()
                .filter(|e| e.would == word && e.happened == recorded.happened)
                .count();
            if word != "proceed" && word != "allow" && kept < EXAMPLES {
                hook.examples
                    .push(example(word, reason, recorded, &self.redactor));
            }
        }
    }

    /// Events replayed so far.
    pub fn events(&self) -> u64 {
        self.report.events
    }

    /// Note a session log read.
    pub fn read(&mut self, source: SourceRead) {
        self.report.sources.push(source);
    }

    /// The report.
    pub fn finish(self) -> ReplayReport {
        self.report
    }
}

/// A decision's reason, if it has one.
fn reason_of(decision: &Decision) -> Option<String> {
    match decision {
        Decision::Deny { reason } => Some(reason.clone()),
        Decision::Allow { reason } => reason.clone(),
        Decision::Ask(approval) => Some(approval.prompt.clone()),
        _ => None,
    }
}

fn example(
    word: &str,
    reason: Option<String>,
    recorded: &Recorded,
    redactor: &Redactor,
) -> Example {
    let event = &recorded.event;
    Example {
        would: word.to_owned(),
        happened: recorded.happened,
        event: match event.subject() {
            Some(subject) => format!("{} {subject}", event.name().as_str()),
            None => event.name().as_str().to_owned(),
        },
        about: crate::observe::feed::about(event.record(), Some(redactor)),
        reason: reason.map(|r| redactor.text(&r)),
        at: recorded.at.clone(),
        session: event.session_id().to_owned(),
    }
}
