//! The decisions feed behind the live page: each decision as a
//! [`DecisionNote`] (the event in a line, the verdict, each hook's answer,
//! whether it was a dry run, how long it took; secrets redacted as the
//! audit log redacts them), the last few kept for a page that opens late,
//! and a broadcast to every page open, each with a bounded buffer: a page
//! that falls behind loses the oldest notes and is told how many.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;
use wasm_hooks_core::{Event, Outcome, Redactor, TraceStatus};

/// One decision, as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionNote {
    /// When (RFC 3339).
    pub time: String,
    /// The project whose hooks decided (`-` when one engine serves all).
    pub project: String,
    /// The agent's session.
    pub session: String,
    /// The event's name.
    pub event: String,
    /// Its subject (the tool), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What it was about, cut short and redacted: the command, the file.
    pub about: String,
    /// The verdict: `proceed`, `allow`, `deny`, `ask`.
    pub verdict: String,
    /// The hook that set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// Each hook that ran, in order.
    pub hooks: Vec<HookNote>,
}

/// One hook's part in a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookNote {
    /// The hook.
    pub hook: String,
    /// Its answer's word, or `failed`.
    pub answer: String,
    /// `enforce`, `warn` or `dryrun`.
    pub enforcement: String,
    /// How long it took.
    pub elapsed_us: u64,
}

/// The longest `about`, in characters.
const ABOUT_CHARS: usize = 160;

impl DecisionNote {
    /// The note of `outcome` for `event`, decided by `project`'s hooks,
    /// its text redacted by `redactor`.
    pub fn of(project: &str, event: &Event, outcome: &Outcome, redactor: &Redactor) -> Self {
        let hooks = outcome
            .trace
            .iter()
            .map(|entry| HookNote {
                hook: entry.hook.to_string(),
                answer: match &entry.status {
                    TraceStatus::Answered(result) => result.decision.word().to_owned(),
                    TraceStatus::Failed { .. } => "failed".to_owned(),
                    TraceStatus::Detached => "background".to_owned(),
                },
                enforcement: entry.enforcement.as_str().to_owned(),
                elapsed_us: u64::try_from(entry.elapsed.as_micros()).unwrap_or(u64::MAX),
            })
            .collect();
        Self {
            time: wasm_hooks_core::now_rfc3339(),
            project: project.to_owned(),
            session: event.session_id().to_owned(),
            event: event.name().as_str().to_owned(),
            subject: event.subject().map(str::to_owned),
            about: about(event.record(), Some(redactor)),
            verdict: crate::server_metrics::verdict_word(&outcome.verdict).to_owned(),
            decided_by: outcome.decided_by.as_ref().map(ToString::to_string),
            hooks,
        }
    }
}

/// What an event is about, in a line: the command, the file, the prompt,
/// else the tool input; redacted (by `redactor`, when it is not so
/// already), controls escaped, cut short.
pub(crate) fn about(
    record: &serde_json::Map<String, Value>,
    redactor: Option<&Redactor>,
) -> String {
    let input = record.get("tool_input");
    let text = input
        .and_then(|i| {
            ["command", "file_path", "path", "url", "pattern"]
                .iter()
                .find_map(|key| i[*key].as_str())
                .map(str::to_owned)
        })
        .or_else(|| {
            record
                .get("prompt")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .or_else(|| input.map(ToString::to_string))
        .unwrap_or_default();
    let text = match redactor {
        Some(redactor) => redactor.text(&text),
        None => text,
    };
    wasm_hooks_core::escape_controls(&text)
        .chars()
        .take(ABOUT_CHARS)
        .collect()
}

/// The notes kept for a page that opens late.
const HISTORY: usize = 500;

/// How far one page may fall behind before it loses notes.
const PER_PAGE: usize = 1024;

/// Decisions as they are made, for every page open.
#[derive(Debug)]
pub struct DecisionFeed {
    sender: broadcast::Sender<Arc<DecisionNote>>,
    recent: Mutex<VecDeque<Arc<DecisionNote>>>,
}

impl Default for DecisionFeed {
    fn default() -> Self {
        Self::new()
    }
}

impl DecisionFeed {
    /// An empty feed.
    pub fn new() -> Self {
        Self {
            sender: broadcast::channel(PER_PAGE).0,
            recent: Mutex::new(VecDeque::with_capacity(HISTORY)),
        }
    }

    /// Hand `note` to every page open, and keep it for pages to come.
    pub fn publish(&self, note: DecisionNote) {
        let note = Arc::new(note);
        {
            let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
            if recent.len() == HISTORY {
                recent.pop_front();
            }
            recent.push_back(Arc::clone(&note));
        }
        // No page open is no error.
        let _ = self.sender.send(note);
    }

    /// The notes kept, oldest first, and what comes after them.
    pub fn subscribe(
        &self,
    ) -> (
        Vec<Arc<DecisionNote>>,
        broadcast::Receiver<Arc<DecisionNote>>,
    ) {
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        // Subscribed under the lock: no note falls between the two.
        (recent.iter().cloned().collect(), self.sender.subscribe())
    }
}

/// Notes made from audit records, for a page fed from the audit log
/// (`wasm-hooks ui`): a `dispatch` record starts a note, the hook results
/// after it (of the same session and event) fill in its hooks.
#[derive(Debug, Default)]
pub struct AuditNotes {
    notes: Vec<DecisionNote>,
}

impl AuditNotes {
    /// Take in one record.
    pub fn add(&mut self, record: &wasm_hooks_core::AuditLine) {
        let data = &record.data;
        match record.kind.as_str() {
            "dispatch" => {
                let event = data["record"].as_object();
                let text = |key: &str| event.and_then(|e| e.get(key)).and_then(Value::as_str);
                self.notes.push(DecisionNote {
                    time: record.time.clone(),
                    project: text("cwd").unwrap_or("-").to_owned(),
                    session: record.session.clone(),
                    event: record.event.clone().unwrap_or_default(),
                    subject: text("tool_name").map(str::to_owned),
                    // Audit records are redacted as they are written.
                    about: event.map(|e| about(e, None)).unwrap_or_default(),
                    verdict: data["verdict"]["decision"]
                        .as_str()
                        .unwrap_or("proceed")
                        .to_owned(),
                    decided_by: data["decided_by"].as_str().map(str::to_owned),
                    hooks: Vec::new(),
                });
            }
            "hook_result" | "hook_failure" => {
                let Some(note) = self.notes.iter_mut().rev().find(|n| {
                    n.session == record.session && Some(&n.event) == record.event.as_ref()
                }) else {
                    return;
                };
                note.hooks.push(HookNote {
                    hook: record.hook.clone().unwrap_or_default(),
                    answer: data["status"]["answered"]["decision"]
                        .as_str()
                        .unwrap_or("failed")
                        .to_owned(),
                    enforcement: data["enforcement"].as_str().unwrap_or("enforce").to_owned(),
                    elapsed_us: data["elapsed_us"].as_u64().unwrap_or(0),
                });
            }
            _ => {}
        }
    }

    /// The notes made so far, oldest first.
    pub fn take(&mut self) -> Vec<DecisionNote> {
        std::mem::take(&mut self.notes)
    }

    /// The notes made so far but the last, whose hook results may still
    /// be on their way.
    pub fn take_settled(&mut self) -> Vec<DecisionNote> {
        let last = self.notes.pop();
        let settled = self.take();
        self.notes.extend(last);
        settled
    }
}
