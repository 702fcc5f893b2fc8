//! Approvals: a hook can only *ask*; the host's [`ApprovalSystem`] asks the
//! person and grants or refuses. The session applies the timeout, the
//! hook's default, and the session-scoped "allow always" cache.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;

use wasm_hooks_core::{EventName, HookId};

/// The options offered when a hook names none.
pub const DEFAULT_OPTIONS: [&str; 3] = ["Allow once", "Allow always", "Deny"];

/// What an [`ApprovalSystem`] returns.
/// `None` means nobody answered (no terminal, say): the request's default
/// applies.
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = Option<ApprovalChoice>> + Send + 'a>>;

/// Asks the person to approve an operation a hook flagged.
pub trait ApprovalSystem: Send + Sync {
    /// Ask, and return the person's choice, or `None` when nobody can
    /// answer. The session stops waiting after `request.timeout` and
    /// applies `request.default`, so an implementation may take as long as
    /// it likes.
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a>;
}

/// One question for the person.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The hook that asks.
    pub hook: HookId,
    /// The event concerned.
    pub event: EventName,
    /// The question.
    pub prompt: String,
    /// The choices, as shown; [`DEFAULT_OPTIONS`] when the hook named none.
    pub options: Vec<String>,
    /// How long to wait for an answer.
    #[serde(rename = "timeout_ms", serialize_with = "millis")]
    pub timeout: Duration,
    /// What a timeout decides: [`ApprovalChoice::Deny`] unless the hook
    /// said `allow`.
    pub default: ApprovalChoice,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalChoice {
    /// Go on, this time.
    AllowOnce,
    /// Go on, and do not ask this hook's question again this session.
    AllowAlways,
    /// Block the operation.
    Deny,
}

impl ApprovalChoice {
    /// The choice an option's text stands for: "… always" allows always,
    /// "allow…", "yes…", "approve…", "ok…" allow once, anything else denies.
    ///
    /// # Examples
    /// ```
    /// use wasm_hooks::ApprovalChoice;
    /// assert_eq!(ApprovalChoice::from_option("Allow always"), ApprovalChoice::AllowAlways);
    /// assert_eq!(ApprovalChoice::from_option("Yes, run it"), ApprovalChoice::AllowOnce);
    /// assert_eq!(ApprovalChoice::from_option("Cancel"), ApprovalChoice::Deny);
    /// ```
    pub fn from_option(option: &str) -> Self {
        let option = option.trim().to_lowercase();
        if option.contains("always") {
            Self::AllowAlways
        } else if ["allow", "yes", "approve", "ok"]
            .iter()
            .any(|w| option.starts_with(w))
        {
            Self::AllowOnce
        } else {
            Self::Deny
        }
    }

    /// The choice a program in another language answered with, as JSON:
    /// `null` is no answer (the request's default applies), a bool allows
    /// once or denies, a string is an option's text (`_` read as a space:
    /// `"allow_always"`); anything else denies.
    ///
    /// # Examples
    /// ```
    /// use serde_json::json;
    /// use wasm_hooks::ApprovalChoice;
    /// assert_eq!(ApprovalChoice::from_answer(&json!("allow_always")), Some(ApprovalChoice::AllowAlways));
    /// assert_eq!(ApprovalChoice::from_answer(&json!(true)), Some(ApprovalChoice::AllowOnce));
    /// assert_eq!(ApprovalChoice::from_answer(&json!(null)), None);
    /// assert_eq!(ApprovalChoice::from_answer(&json!(7)), Some(ApprovalChoice::Deny));
    /// ```
    pub fn from_answer(answer: &serde_json::Value) -> Option<Self> {
        use serde_json::Value;
        match answer {
            Value::Null => None,
            Value::Bool(true) => Some(Self::AllowOnce),
            Value::String(text) => Some(Self::from_option(&text.replace('_', " "))),
            _ => Some(Self::Deny),
        }
    }

    /// Whether the operation may go on.
    pub fn allows(self) -> bool {
        self != Self::Deny
    }
}

/// How a decision was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The person answered.
    Person,
    /// An earlier "allow always" for the same hook and question.
    Cache,
    /// No answer in time: the request's default.
    Timeout,
    /// Nobody could answer (no terminal): the request's default.
    Unanswered,
}

/// A request and how it was decided, as the session reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRecord {
    /// The question asked.
    pub request: ApprovalRequest,
    /// The decision.
    pub choice: ApprovalChoice,
    /// Who decided.
    pub decided_by: DecidedBy,
}

/// Answers from a script, for tests and non-interactive runs: each request
/// takes the next answer; `None` never answers (so the timeout decides);
/// once the script is used up, every request gets the fallback (or, with no
/// fallback, no answer).
#[derive(Debug, Default)]
pub struct ScriptedApprovals {
    answers: Mutex<VecDeque<Option<ApprovalChoice>>>,
    fallback: Option<ApprovalChoice>,
    seen: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprovals {
    /// These answers, in order.
    pub fn new(answers: impl IntoIterator<Item = Option<ApprovalChoice>>) -> Self {
        Self {
            answers: Mutex::new(answers.into_iter().collect()),
            ..Self::default()
        }
    }

    /// The same answer to every request.
    pub fn always(choice: ApprovalChoice) -> Self {
        Self {
            fallback: Some(choice),
            ..Self::default()
        }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ApprovalRequest> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Approvals nobody can answer: each request's default applies at once
/// (a host with no one to ask).
#[derive(Debug, Default, Clone, Copy)]
pub struct Unanswered;

impl ApprovalSystem for Unanswered {
    fn request<'a>(&'a self, _request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(std::future::ready(None))
    }
}

impl ApprovalSystem for ScriptedApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.clone());
        let answer = self
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or(self.fallback);
        Box::pin(async move {
            match answer {
                Some(choice) => Some(choice),
                None => std::future::pending().await,
            }
        })
    }
}
