//! Why each hook ran or not for one event: the engine's side of `wasm-hooks
//! explain`. Every hook loaded is listed in the order hooks run, with what
//! kept it from the event (its event pattern, its matcher, its `if` rule),
//! or its answer and time, or that the chain had stopped before it; the
//! hooks left out at load (an untrusted project's, those a higher layer
//! switched off) are listed too. Which project and files were read is the caller's to add.

use std::time::Duration;

use serde::Serialize;
use wasm_hooks_core::{Decision, Event, EventName, HookId, Misfit, Outcome, TraceStatus};

use crate::engine::HookEngine;

/// One event explained.
#[derive(Debug, Serialize)]
pub struct Explanation {
    /// The event's canonical name.
    pub event: &'static str,
    /// What the matchers were tested against (the tool's name, mostly).
    pub subject: Option<String>,
    /// Every hook, in the order hooks run, then those left out.
    pub hooks: Vec<HookExplained>,
    /// The folded outcome, as `run` gives it.
    pub outcome: Outcome,
}

/// One hook and what became of it.
#[derive(Debug, Serialize)]
pub struct HookExplained {
    /// Its name.
    pub hook: HookId,
    /// Where it is declared.
    pub source: String,
    /// What became of it.
    #[serde(flatten)]
    pub fate: Fate,
}

/// What a hook's answer carried beside its decision: what `explain`
/// shows under the hook, so that a context or a rewrite is seen where it
/// came from.
#[derive(Debug, Default, Serialize)]
pub struct Produced {
    /// The context it added for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The message it showed the person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message: Option<String>,
    /// The message it showed as the system's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// Why it stopped the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// The tool input it rewrote to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<serde_json::Value>,
    /// The tool output it rewrote to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_output: Option<serde_json::Value>,
}

impl Produced {
    /// What `status` carried, if it is an answer.
    fn of(status: &TraceStatus) -> Self {
        let TraceStatus::Answered(result) = status else {
            return Self::default();
        };
        let (updated_input, updated_output) = match &result.decision {
            Decision::Modify { input } => (Some(input.clone()), None),
            Decision::ModifyOutput { output } => (None, Some(output.clone())),
            _ => (None, None),
        };
        Self {
            context: result.context.as_ref().map(|c| c.text.clone()),
            user_message: result.user_message.as_ref().map(|m| m.text.clone()),
            system_message: result.system_message.clone(),
            stop: result.stop.clone(),
            updated_input,
            updated_output,
        }
    }

    /// Each thing carried, as a line (`context: …`).
    pub fn lines(&self) -> Vec<String> {
        let text = [
            ("context", &self.context),
            ("message to the person", &self.user_message),
            ("system message", &self.system_message),
            ("stop", &self.stop),
        ];
        let values = [
            ("rewrote the input to", &self.updated_input),
            ("rewrote the output to", &self.updated_output),
        ];
        text.iter()
            .filter_map(|(what, t)| t.as_ref().map(|t| format!("{what}: {t}")))
            .chain(
                values
                    .iter()
                    .filter_map(|(what, v)| v.as_ref().map(|v| format!("{what} {v}"))),
            )
            .collect()
    }
}

/// What became of one hook for the event.
#[derive(Debug, Serialize)]
#[serde(tag = "fate", rename_all = "snake_case")]
pub enum Fate {
    /// It ran: its answer (or failure), and how long it took.
    Ran {
        /// `deny`, `allow`, `failed: …`, …
        answer: String,
        /// Its time, in microseconds.
        elapsed_us: u64,
        /// What else its answer carried.
        #[serde(flatten)]
        produced: Produced,
    },
    /// It fits the event but did not run: a hook before it had already
    /// decided (a deny stops the chain).
    NotReached,
    /// It does not fit the event.
    Skipped {
        /// Which part of it does not fit.
        because: Misfit,
        /// That part, in words.
        detail: String,
    },
    /// It was left out at load.
    LeftOut {
        /// Why.
        why: String,
        /// Which part of it would not fit the event anyway, if one.
        #[serde(skip_serializing_if = "Option::is_none")]
        because: Option<Misfit>,
        /// That part, in words.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

impl HookEngine {
    /// Dispatch `event` and explain what each hook made of it.
    pub async fn explain(&self, event: Event) -> Explanation {
        let hooks = self.hooks();
        let outcome = self.dispatch(event.clone()).await;
        let subject = event.subject().map(str::to_owned);
        let mut explained: Vec<HookExplained> = hooks
            .iter()
            .map(|spec| {
                let fate = match spec.misfit(&event) {
                    Some(because) => Fate::Skipped {
                        because,
                        detail: misfit_detail(spec, because, subject.as_deref()),
                    },
                    None => match outcome.trace.iter().find(|t| t.hook == spec.id) {
                        Some(entry) => Fate::Ran {
                            answer: answer_word(&entry.status) + entry.enforcement.note(),
                            elapsed_us: micros(entry.elapsed),
                            produced: Produced::of(&entry.status),
                        },
                        None => Fate::NotReached,
                    },
                };
                HookExplained {
                    hook: spec.id.clone(),
                    source: spec.source.to_string(),
                    fate,
                }
            })
            .collect();
        let left_out = self.not_run();
        explained.extend(left_out.map(|s| {
            let because = s.spec.misfit(&event);
            HookExplained {
                hook: s.spec.id.clone(),
                source: s.spec.source.to_string(),
                fate: Fate::LeftOut {
                    why: s.why.to_owned(),
                    because,
                    detail: because.map(|b| misfit_detail(&s.spec, b, subject.as_deref())),
                },
            }
        }));
        Explanation {
            event: event.name().as_str(),
            subject,
            hooks: explained,
            outcome,
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A trace entry's status in a word or two.
fn answer_word(status: &TraceStatus) -> String {
    match status {
        TraceStatus::Answered(result) => result.decision.word().to_owned(),
        TraceStatus::Failed { error, policy } => format!("failed ({policy:?}): {error}"),
        TraceStatus::Detached => "started in the background".to_owned(),
    }
}

/// The part of `spec` that does not fit, in words.
fn misfit_detail(
    spec: &wasm_hooks_core::HookSpec,
    because: Misfit,
    subject: Option<&str>,
) -> String {
    match because {
        Misfit::Event => {
            let on: Vec<&str> = spec.events.events().map(EventName::as_str).collect();
            let tools: Vec<&str> = spec.events.tools().flatten().collect();
            let mut text = format!("it is on {}", on.join(", "));
            if !tools.is_empty() {
                text.push_str(&format!(" for the tool {}", tools.join(", ")));
            }
            text
        }
        Misfit::Matcher => format!(
            "its matcher `{}` does not fit {}",
            spec.matcher,
            subject.map_or("an event with no tool".to_owned(), |s| format!("`{s}`"))
        ),
        Misfit::Condition => match &spec.condition {
            Some(rule) => format!("its `if` rule `{rule}` does not hold"),
            None => "its `if` rule does not hold".to_owned(),
        },
    }
}
