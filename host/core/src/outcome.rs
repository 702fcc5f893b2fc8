//! What hooks answer and how their answers fold into one [`Outcome`].
//!
//! A handler returns a [`HookResult`] (or fails with a
//! [`HookError`]); the engine feeds each, in priority order,
//! to a [`Fold`], which applies the rules of `docs/protocol.md`: a deny ends the
//! chain, a modify hands the new input (or, after the tool ran, the new
//! output) to the next hook, contexts and
//! messages accumulate with the hook that sent them, the first ask wins
//! unless a later hook denies, and allow only wins over proceed. This module
//! does not run hooks (that is `dispatch`) nor print outcomes (that is the CLI).

use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::error::HookError;
use crate::id::HookId;

/// A request that the person approve the operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Approval {
    /// The question shown to the person.
    pub prompt: String,
    /// The choices offered; empty means the host's defaults.
    pub options: Vec<String>,
    /// How long to wait before applying the default, if the hook says.
    pub timeout_ms: Option<u32>,
    /// Whether a timeout allows (true) or denies (false).
    pub default_allow: bool,
}

/// One hook's decision about the operation.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// No opinion.
    Proceed,
    /// Allow, with an optional reason.
    Allow {
        /// Why.
        reason: Option<String>,
    },
    /// Block, with a reason the agent and the model see.
    Deny {
        /// Why.
        reason: String,
    },
    /// Ask the person first.
    Ask(Approval),
    /// Go on with this replacement input (before the tool runs).
    Modify {
        /// The new tool input (a JSON object).
        input: Value,
    },
    /// Hand this on instead of the tool's output (PostToolUse only: the
    /// tool already ran).
    ModifyOutput {
        /// The new tool output (any JSON value, in the shape of
        /// `tool_response`).
        output: Value,
    },
}

impl Decision {
    /// The decision's name, as in its JSON form: `proceed`, `allow`,
    /// `deny`, `ask`, `modify` or `modify_output`.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Proceed => "proceed",
            Self::Allow { .. } => "allow",
            Self::Deny { .. } => "deny",
            Self::Ask(_) => "ask",
            Self::Modify { .. } => "modify",
            Self::ModifyOutput { .. } => "modify_output",
        }
    }
}

/// Who injected context speaks as.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A system message (the default).
    #[default]
    System,
    /// A user message.
    User,
    /// An assistant message.
    Assistant,
}

/// How serious a message for the person is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// For information.
    Info,
    /// A warning.
    Warning,
    /// An error.
    Error,
}

/// Text added to the agent's context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Context {
    /// The text.
    pub text: String,
    /// Who it speaks as.
    pub role: Role,
}

/// A message for the person, never sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UserMessage {
    /// How serious it is.
    pub severity: Severity,
    /// The text.
    pub text: String,
}

/// What a hook asks of the agent beyond its decision: settings of the
/// session that some agents take on some events (Claude Code 2.1.330:
/// `sessionTitle`, `initialUserMessage`, `watchPaths`, `worktreePath`,
/// `terminalSequence`). An agent's adapter sends each where that agent's
/// event takes it, and reports the rest as dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Requests {
    /// A title for the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_title: Option<String>,
    /// A first message sent as if the person typed it (session start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_user_message: Option<String>,
    /// Paths the agent should watch for changes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub watch_paths: Vec<String>,
    /// Where the worktree a hook created lives (worktree creation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree_path: Option<String>,
    /// A terminal notification or title sequence to emit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal_sequence: Option<String>,
}

impl Requests {
    /// Whether nothing is asked.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Take what `later` asks that is not asked yet: the first hook's
    /// title, message, path and sequence win; watched paths add up.
    fn merge(&mut self, later: &Requests) {
        let first = |mine: &mut Option<String>, theirs: &Option<String>| {
            if mine.is_none() {
                mine.clone_from(theirs);
            }
        };
        first(&mut self.session_title, &later.session_title);
        first(&mut self.initial_user_message, &later.initial_user_message);
        first(&mut self.worktree_path, &later.worktree_path);
        first(&mut self.terminal_sequence, &later.terminal_sequence);
        for path in &later.watch_paths {
            if !self.watch_paths.contains(path) {
                self.watch_paths.push(path.clone());
            }
        }
    }
}

/// One hook's whole answer to one event.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct HookResult {
    /// What to do with the operation.
    #[serde(flatten)]
    pub decision: Decision,
    /// Added to the agent's context.
    pub context: Option<Context>,
    /// Shown to the person.
    pub user_message: Option<UserMessage>,
    /// A warning shown to the person.
    pub system_message: Option<String>,
    /// End the agent's turn, with a reason.
    pub stop: Option<String>,
    /// Hide this hook's own output from the transcript.
    pub suppress_output: bool,
    /// Free JSON for the audit record.
    pub metadata: Option<Value>,
    /// What it asks of the agent beyond the decision, if anything (boxed:
    /// most answers ask nothing, and a result stays small).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<Box<Requests>>,
}

impl HookResult {
    /// A result with this decision and nothing else.
    pub fn new(decision: Decision) -> Self {
        Self {
            decision,
            context: None,
            user_message: None,
            system_message: None,
            stop: None,
            suppress_output: false,
            metadata: None,
            requests: None,
        }
    }
}

/// What happens when a hook fails (crash, timeout, trap, bad output).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// Go on as if the hook said nothing, with a warning for the person
    /// (Claude Code's `onFailure: continue`).
    #[default]
    #[serde(alias = "continue")]
    Warn,
    /// Deny the operation, with the failure as the reason.
    Block,
    /// Go on silently (the failure is still in the trace).
    Ignore,
}

/// Whether a hook's answer is acted on: a hook can be tried out before
/// it guards (`enforcement` in a hook file).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum Enforcement {
    /// Its answer counts (the default).
    #[default]
    #[serde(rename = "enforce")]
    Enforce,
    /// Its answer is told to the person ("would have denied …") and
    /// recorded, never acted on.
    #[serde(rename = "warn")]
    Warn,
    /// Its answer is only recorded (the trace, the audit log, metrics):
    /// it never blocks, asks, rewrites, adds context or speaks.
    #[serde(rename = "dryrun", alias = "dry_run", alias = "dry-run")]
    DryRun,
}

impl Enforcement {
    /// Whether answers are acted on.
    pub fn is_enforced(&self) -> bool {
        *self == Self::Enforce
    }

    /// What to add after an answer's word in a listing: nothing when it
    /// was acted on.
    pub fn note(self) -> &'static str {
        match self {
            Self::Enforce => "",
            Self::Warn => " (warn: not acted on)",
            Self::DryRun => " (dry run: not acted on)",
        }
    }

    /// Its name, as in a hook file: `enforce`, `warn` or `dryrun`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enforce => "enforce",
            Self::Warn => "warn",
            Self::DryRun => "dryrun",
        }
    }
}

/// The decision of all hooks together.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Verdict {
    /// No hook had an opinion.
    Proceed,
    /// At least one hook allowed and none asked or denied.
    Allow {
        /// The allowing hook's reason.
        reason: Option<String>,
    },
    /// A hook denied.
    Deny {
        /// Why.
        reason: String,
    },
    /// A hook asked, and none denied.
    Ask(Approval),
}

impl Verdict {
    /// `proceed`, `allow`, `deny` or `ask`: the `decision` field of its
    /// JSON form.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Proceed => "proceed",
            Self::Allow { .. } => "allow",
            Self::Deny { .. } => "deny",
            Self::Ask(_) => "ask",
        }
    }

    /// The reason given: an allow's or a deny's, or an ask's prompt.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Proceed => None,
            Self::Allow { reason } => reason.as_deref(),
            Self::Deny { reason } => Some(reason),
            Self::Ask(approval) => Some(&approval.prompt),
        }
    }
}

/// A value together with the hook it came from; in JSON,
/// `{"hook": …, "value": …}` (the value is not flattened: it may be a bare
/// string).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Attributed<T> {
    /// The hook that sent it.
    pub hook: HookId,
    /// The value.
    pub value: T,
}

impl<T> Attributed<T> {
    fn by(hook: &HookId, value: T) -> Self {
        Self {
            hook: hook.clone(),
            value,
        }
    }
}

/// What a hook wrote besides its answer: captured stdout/stderr and log lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct HookOutput {
    /// Captured standard output (lossy UTF-8), capped.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    /// Captured standard error (lossy UTF-8), capped.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    /// Lines the hook logged through the host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
    /// Whether output was cut at the cap.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

impl HookOutput {
    /// Whether the hook wrote nothing.
    pub fn is_empty(&self) -> bool {
        self.stdout.is_empty() && self.stderr.is_empty() && self.logs.is_empty()
    }
}

/// How one hook's run ended.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceStatus {
    /// The hook answered.
    Answered(HookResult),
    /// The hook was started in the background; its answer is only logged.
    Detached,
    /// The hook failed; `policy` is what was done about it.
    Failed {
        /// What went wrong.
        error: HookError,
        /// The hook's `on_failure` policy, as applied.
        policy: OnFailure,
    },
}

/// One hook that ran for an event.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TraceEntry {
    /// Which hook.
    pub hook: HookId,
    /// How long it took.
    #[serde(rename = "elapsed_us", serialize_with = "micros")]
    #[schemars(with = "u64")]
    pub elapsed: Duration,
    /// Its answer or failure.
    pub status: TraceStatus,
    /// What it wrote besides its answer.
    pub output: HookOutput,
    /// Whether its answer was acted on (left out when it was).
    #[serde(skip_serializing_if = "Enforcement::is_enforced")]
    pub enforcement: Enforcement,
}

fn micros<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The folded answer of every hook that ran for one event.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Outcome {
    /// What the agent should do.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The hook whose answer set the verdict, if any did.
    pub decided_by: Option<HookId>,
    /// The tool input after every `modify`, if any hook changed it.
    pub updated_input: Option<Value>,
    /// Whether a hook allowed `updated_input` as it finally is (an allow
    /// that saw it: after the last rewrite, or when the hooks before it
    /// were asked again). Only then may an agent run a rewritten input
    /// without its own permission check.
    pub rewrite_approved: bool,
    /// The tool output after every `modify_output` (PostToolUse), if any
    /// hook changed it: what the model should get instead of the tool's
    /// own output.
    pub updated_output: Option<Value>,
    /// Context to add, in hook order.
    pub contexts: Vec<Attributed<Context>>,
    /// Messages for the person, in hook order.
    pub user_messages: Vec<Attributed<UserMessage>>,
    /// Warnings for the person, in hook order (failures under `warn` too).
    pub system_messages: Vec<Attributed<String>>,
    /// The first request to end the turn.
    pub stop: Option<Attributed<String>>,
    /// Whether some hook asked for its output to be hidden.
    pub suppress_output: bool,
    /// What the hooks ask of the agent beyond the decision.
    #[serde(skip_serializing_if = "Requests::is_empty")]
    pub requests: Requests,
    /// Every hook that ran, in order.
    pub trace: Vec<TraceEntry>,
}

impl Outcome {
    /// A deny for `reason` that no hook made: the host's own (a failure, a
    /// limit), or a test's.
    pub fn denied(reason: impl Into<String>) -> Self {
        Self {
            verdict: Verdict::Deny {
                reason: reason.into(),
            },
            ..Self::proceed()
        }
    }

    /// The outcome when no hook ran.
    pub fn proceed() -> Self {
        Self {
            verdict: Verdict::Proceed,
            decided_by: None,
            updated_input: None,
            rewrite_approved: false,
            updated_output: None,
            contexts: Vec::new(),
            user_messages: Vec::new(),
            system_messages: Vec::new(),
            stop: None,
            suppress_output: false,
            requests: Requests::default(),
            trace: Vec::new(),
        }
    }

    /// Whether a hook denied the operation.
    pub fn is_denied(&self) -> bool {
        matches!(self.verdict, Verdict::Deny { .. })
    }

    /// The failures of the hooks that ran, in order.
    pub fn failures(&self) -> impl Iterator<Item = &HookError> {
        self.trace.iter().filter_map(|entry| match &entry.status {
            TraceStatus::Failed { error, .. } => Some(error),
            _ => None,
        })
    }
}

impl Outcome {
    /// A hook's allow: it wins over no opinion, and approves the tool
    /// input as it is now (the hook saw it).
    fn allow(&mut self, hook: &HookId, reason: &Option<String>) -> Flow {
        self.rewrite_approved = true;
        if self.verdict == Verdict::Proceed {
            self.verdict = Verdict::Allow {
                reason: reason.clone(),
            };
            self.decided_by = Some(hook.clone());
        }
        Flow::Continue
    }

    /// A hook's ask: the first one wins over allow and no opinion.
    fn ask(&mut self, hook: &HookId, approval: &Approval) -> Flow {
        if matches!(self.verdict, Verdict::Proceed | Verdict::Allow { .. }) {
            self.verdict = Verdict::Ask(approval.clone());
            self.decided_by = Some(hook.clone());
        }
        Flow::Continue
    }

    /// Record that `hook` answered, in the trace.
    fn answered(
        &mut self,
        hook: HookId,
        result: HookResult,
        elapsed: Duration,
        output: HookOutput,
    ) {
        self.trace.push(TraceEntry {
            hook,
            elapsed,
            status: TraceStatus::Answered(result),
            output,
            enforcement: Enforcement::Enforce,
        });
    }

    /// A hook's deny: it wins, and ends the chain.
    fn deny(&mut self, hook: &HookId, reason: &str) -> Flow {
        self.verdict = Verdict::Deny {
            reason: reason.to_owned(),
        };
        self.decided_by = Some(hook.clone());
        Flow::Stop
    }
}

/// Whether the engine should run the next hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Run the next hook.
    Continue,
    /// A deny ended the chain: run no more hooks.
    Stop,
}

/// Folds hook answers, one at a time in priority order, into an [`Outcome`].
///
/// # Examples
/// ```
/// use wasm_hooks_core::{Decision, Flow, Fold, HookId, HookOutput, HookResult, Verdict};
/// use std::time::Duration;
///
/// let mut fold = Fold::new();
/// let ask = HookResult::new(Decision::Allow { reason: None });
/// assert_eq!(fold.answer(HookId::new("a"), ask, Duration::ZERO, HookOutput::default()), Flow::Continue);
/// let deny = HookResult::new(Decision::Deny { reason: "no".into() });
/// assert_eq!(fold.answer(HookId::new("b"), deny, Duration::ZERO, HookOutput::default()), Flow::Stop);
/// assert_eq!(fold.finish().verdict, Verdict::Deny { reason: "no".into() });
/// ```
#[derive(Debug)]
pub struct Fold {
    outcome: Outcome,
}

impl Default for Fold {
    fn default() -> Self {
        Self::new()
    }
}

impl Fold {
    /// An empty fold: the outcome of no hooks is `proceed`.
    pub fn new() -> Self {
        Self {
            outcome: Outcome::proceed(),
        }
    }

    /// Fold in one hook's answer.
    pub fn answer(
        &mut self,
        hook: HookId,
        result: HookResult,
        elapsed: Duration,
        output: HookOutput,
    ) -> Flow {
        let o = &mut self.outcome;
        let flow = match &result.decision {
            Decision::Proceed => Flow::Continue,
            Decision::Allow { reason } => o.allow(&hook, reason),
            Decision::Ask(approval) => o.ask(&hook, approval),
            Decision::Modify { input } => {
                o.updated_input = Some(input.clone());
                o.rewrite_approved = false;
                Flow::Continue
            }
            Decision::ModifyOutput { output } => {
                o.updated_output = Some(output.clone());
                Flow::Continue
            }
            Decision::Deny { reason } => o.deny(&hook, reason),
        };
        let by = |value| Attributed::by(&hook, value);
        o.contexts.extend(result.context.clone().map(by));
        o.user_messages.extend(
            result
                .user_message
                .clone()
                .map(|m| Attributed::by(&hook, m)),
        );
        o.system_messages.extend(
            result
                .system_message
                .clone()
                .map(|m| Attributed::by(&hook, m)),
        );
        if o.stop.is_none() {
            o.stop = result.stop.clone().map(|s| Attributed::by(&hook, s));
        }
        o.suppress_output |= result.suppress_output;
        if let Some(requests) = &result.requests {
            o.requests.merge(requests);
        }
        o.answered(hook, result, elapsed, output);
        flow
    }

    /// Fold in what a hook answered when asked again about the final,
    /// rewritten input (it ran before the last rewrite): its deny or ask
    /// counts as in [`Fold::answer`], its allow approves the rewrite; what
    /// else it says was already folded the first time, and a new rewrite
    /// is not taken (the input is final), which its trace entry says.
    pub fn recheck(
        &mut self,
        hook: HookId,
        result: HookResult,
        elapsed: Duration,
        mut output: HookOutput,
    ) -> Flow {
        let o = &mut self.outcome;
        let flow = match &result.decision {
            Decision::Deny { reason } => o.deny(&hook, reason),
            Decision::Ask(approval) => o.ask(&hook, approval),
            Decision::Allow { reason } => o.allow(&hook, reason),
            Decision::Modify { .. } | Decision::ModifyOutput { .. } => {
                output.logs.push(
                    "re-check of the rewritten input: a further rewrite is not taken".to_owned(),
                );
                Flow::Continue
            }
            Decision::Proceed => Flow::Continue,
        };
        output
            .logs
            .push("asked again: a later hook rewrote the input it had seen".to_owned());
        o.answered(hook, result, elapsed, output);
        flow
    }

    /// Fold in one hook's failure, as its `on_failure` policy says.
    pub fn failure(
        &mut self,
        hook: HookId,
        error: HookError,
        policy: OnFailure,
        elapsed: Duration,
        output: HookOutput,
    ) -> Flow {
        let o = &mut self.outcome;
        let policy = if error.fails_closed() {
            OnFailure::Block
        } else {
            policy
        };
        let flow = match policy {
            OnFailure::Warn => {
                o.system_messages.push(Attributed::by(
                    &hook,
                    format!("hook failed (on_failure = warn, going on): {error}"),
                ));
                Flow::Continue
            }
            OnFailure::Block => {
                o.verdict = Verdict::Deny {
                    reason: format!("blocked because a hook failed (on_failure = block): {error}"),
                };
                o.decided_by = Some(hook.clone());
                Flow::Stop
            }
            OnFailure::Ignore => Flow::Continue,
        };
        o.trace.push(TraceEntry {
            hook,
            elapsed,
            status: TraceStatus::Failed { error, policy },
            output,
            enforcement: Enforcement::Enforce,
        });
        flow
    }

    /// Record the answer (or failure) of a hook that is not enforced
    /// ([`Enforcement::Warn`], [`Enforcement::DryRun`]): it is in the
    /// trace, marked, and changes nothing of the outcome; under `warn`,
    /// what it would have done is told the person. It never stops the
    /// chain.
    pub fn unenforced(
        &mut self,
        hook: HookId,
        enforcement: Enforcement,
        result: Result<HookResult, HookError>,
        elapsed: Duration,
        output: HookOutput,
    ) {
        let o = &mut self.outcome;
        let status = match result {
            Ok(result) => TraceStatus::Answered(result),
            Err(error) => TraceStatus::Failed {
                error,
                policy: match enforcement {
                    Enforcement::Warn => OnFailure::Warn,
                    _ => OnFailure::Ignore,
                },
            },
        };
        if enforcement == Enforcement::Warn
            && let Some(would) = would_have(&status)
        {
            o.system_messages.push(Attributed::by(
                &hook,
                format!("hook (enforcement = warn, not acted on) would have {would}"),
            ));
        }
        o.trace.push(TraceEntry {
            hook,
            elapsed,
            status,
            output,
            enforcement,
        });
    }

    /// Record a hook started in the background: it takes no part in the
    /// outcome.
    pub fn detached(&mut self, hook: HookId) {
        self.outcome.trace.push(TraceEntry {
            hook,
            elapsed: Duration::ZERO,
            status: TraceStatus::Detached,
            output: HookOutput::default(),
            enforcement: Enforcement::Enforce,
        });
    }

    /// The folded outcome.
    pub fn finish(self) -> Outcome {
        self.outcome
    }
}

/// What an unenforced hook's answer would have done, in a few words
/// (`None`: nothing, it had no opinion or allowed).
fn would_have(status: &TraceStatus) -> Option<String> {
    Some(match status {
        TraceStatus::Answered(result) => match &result.decision {
            Decision::Proceed | Decision::Allow { .. } => return None,
            Decision::Deny { reason } => format!("denied: {reason}"),
            Decision::Ask(approval) => format!("asked the person: {}", approval.prompt),
            Decision::Modify { .. } => "rewritten the tool input".to_owned(),
            Decision::ModifyOutput { .. } => "replaced the tool output".to_owned(),
        },
        TraceStatus::Failed { error, .. } => format!("failed: {error}"),
        TraceStatus::Detached => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(answers: Vec<(&str, HookResult)>) -> (Outcome, usize) {
        let mut fold = Fold::new();
        let mut ran = 0;
        for (name, result) in answers {
            ran += 1;
            let flow = fold.answer(
                HookId::new(name),
                result,
                Duration::ZERO,
                HookOutput::default(),
            );
            if flow == Flow::Stop {
                break;
            }
        }
        (fold.finish(), ran)
    }

    fn decision(d: Decision) -> HookResult {
        HookResult::new(d)
    }

    fn ask(prompt: &str) -> Decision {
        Decision::Ask(Approval {
            prompt: prompt.into(),
            options: vec![],
            timeout_ms: None,
            default_allow: false,
        })
    }

    #[test]
    fn deny_ends_the_chain() {
        let (o, ran) = run(vec![
            ("a", decision(Decision::Proceed)),
            (
                "b",
                decision(Decision::Deny {
                    reason: "no".into(),
                }),
            ),
            ("c", decision(Decision::Allow { reason: None })),
        ]);
        assert_eq!(ran, 2);
        assert_eq!(
            o.verdict,
            Verdict::Deny {
                reason: "no".into()
            }
        );
        assert_eq!(o.decided_by, Some(HookId::new("b")));
    }

    #[test]
    fn allow_only_wins_over_proceed() {
        let (o, _) = run(vec![
            ("a", decision(Decision::Proceed)),
            (
                "b",
                decision(Decision::Allow {
                    reason: Some("ok".into()),
                }),
            ),
            (
                "c",
                decision(Decision::Allow {
                    reason: Some("later".into()),
                }),
            ),
        ]);
        assert_eq!(
            o.verdict,
            Verdict::Allow {
                reason: Some("ok".into())
            }
        );
        assert_eq!(o.decided_by, Some(HookId::new("b")));
        let (o, _) = run(vec![
            ("a", decision(ask("sure?"))),
            ("b", decision(Decision::Allow { reason: None })),
        ]);
        assert!(
            matches!(o.verdict, Verdict::Ask(_)),
            "allow does not override ask"
        );
    }

    #[test]
    fn first_ask_wins_unless_a_later_hook_denies() {
        let (o, _) = run(vec![
            ("a", decision(ask("first"))),
            ("b", decision(ask("second"))),
        ]);
        assert!(matches!(o.verdict, Verdict::Ask(ref a) if a.prompt == "first"));
        let (o, _) = run(vec![
            ("a", decision(ask("first"))),
            (
                "b",
                decision(Decision::Deny {
                    reason: "no".into(),
                }),
            ),
        ]);
        assert_eq!(
            o.verdict,
            Verdict::Deny {
                reason: "no".into()
            }
        );
    }

    #[test]
    fn modify_is_recorded_and_the_last_one_wins() {
        let (o, _) = run(vec![
            (
                "a",
                decision(Decision::Modify {
                    input: json!({"command": "ls"}),
                }),
            ),
            (
                "b",
                decision(Decision::Modify {
                    input: json!({"command": "ls -la"}),
                }),
            ),
        ]);
        assert_eq!(o.verdict, Verdict::Proceed);
        assert_eq!(o.updated_input, Some(json!({"command": "ls -la"})));
    }

    #[test]
    fn contexts_and_messages_accumulate_with_provenance() {
        let mut a = decision(Decision::Proceed);
        a.context = Some(Context {
            text: "one".into(),
            role: Role::System,
        });
        a.stop = Some("first stop".into());
        let mut b = decision(Decision::Proceed);
        b.context = Some(Context {
            text: "two".into(),
            role: Role::User,
        });
        b.user_message = Some(UserMessage {
            severity: Severity::Warning,
            text: "careful".into(),
        });
        b.stop = Some("second stop".into());
        b.suppress_output = true;
        let (o, _) = run(vec![("a", a), ("b", b)]);
        let contexts: Vec<_> = o
            .contexts
            .iter()
            .map(|c| (c.hook.as_str(), c.value.text.as_str()))
            .collect();
        assert_eq!(contexts, [("a", "one"), ("b", "two")]);
        assert_eq!(o.user_messages[0].hook, HookId::new("b"));
        assert_eq!(o.stop.unwrap().value, "first stop");
        assert!(o.suppress_output);
        assert_eq!(o.trace.len(), 2);
    }

    #[test]
    fn requests_keep_the_first_hooks_title_and_add_up_watched_paths() {
        let asking = |title: &str, path: &str| {
            let mut r = HookResult::new(Decision::Proceed);
            r.requests = Some(Box::new(Requests {
                session_title: Some(title.to_owned()),
                watch_paths: vec![path.to_owned(), "/shared".to_owned()],
                ..Requests::default()
            }));
            r
        };
        let mut fold = Fold::new();
        for (hook, title, path) in [("a", "first", "/a"), ("b", "second", "/b")] {
            fold.answer(
                HookId::new(hook),
                asking(title, path),
                Duration::ZERO,
                HookOutput::default(),
            );
        }
        let o = fold.finish();
        assert_eq!(o.requests.session_title.as_deref(), Some("first"));
        assert_eq!(o.requests.watch_paths, ["/a", "/shared", "/b"]);
        assert!(Outcome::proceed().requests.is_empty());
    }

    #[test]
    fn failures_follow_their_policy() {
        let err = || HookError::Failed {
            hook: HookId::new("h"),
            message: "boom".into(),
        };
        let fail = |policy| {
            let mut fold = Fold::new();
            let flow = fold.failure(
                HookId::new("h"),
                err(),
                policy,
                Duration::ZERO,
                HookOutput::default(),
            );
            (flow, fold.finish())
        };
        let (flow, o) = fail(OnFailure::Warn);
        assert_eq!((flow, &o.verdict), (Flow::Continue, &Verdict::Proceed));
        assert!(o.system_messages[0].value.contains("boom"));
        let (flow, o) = fail(OnFailure::Block);
        assert_eq!(flow, Flow::Stop);
        assert!(matches!(o.verdict, Verdict::Deny { ref reason } if reason.contains("boom")));
        let (flow, o) = fail(OnFailure::Ignore);
        assert_eq!(
            (flow, o.system_messages.len(), o.trace.len()),
            (Flow::Continue, 0, 1)
        );
    }
}
