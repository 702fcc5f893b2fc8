//! Context injection: hooks' context for the agent, checked against a size
//! cap and a per-turn token budget, batched, and handed to the host's
//! [`ContextSink`] with where each part came from.

use serde::Serialize;

use wasm_hooks_core::{Context, EventName, HookId, Role};

/// Where the host puts context for the agent (its conversation, say).
pub trait ContextSink: Send + Sync {
    /// Add one message to the agent's context.
    fn inject(&self, message: ContextMessage);
}

/// A [`ContextSink`] that keeps what it is given until the host takes it
/// ([`ContextQueue::take`]): for a host that adds context to its own
/// model request (a program in another language, through its bindings).
#[derive(Debug, Default)]
pub struct ContextQueue {
    messages: std::sync::Mutex<Vec<ContextMessage>>,
}

impl ContextQueue {
    /// Everything delivered since the last call, in order.
    pub fn take(&self) -> Vec<ContextMessage> {
        std::mem::take(&mut *self.locked())
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, Vec<ContextMessage>> {
        self.messages
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ContextSink for ContextQueue {
    fn inject(&self, message: ContextMessage) {
        self.locked().push(message);
    }
}

/// One message for the agent's context: one injection, or several from one
/// turn batched together with a heading for each source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextMessage {
    /// Who it speaks as.
    pub role: Role,
    /// The text.
    pub text: String,
    /// Where each part came from, in order.
    pub sources: Vec<Provenance>,
}

/// Where one injection came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    /// The hook that sent it.
    pub hook: HookId,
    /// The event it answered.
    pub event: EventName,
    /// When it was accepted, RFC 3339.
    pub timestamp: String,
    /// Its size.
    pub bytes: usize,
}

/// The checks on injected context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectionLimits {
    /// The largest single injection; a larger one is refused, never
    /// truncated (default 10 KiB).
    pub max_bytes: usize,
    /// Estimated tokens a turn may inject before each further injection
    /// warns; the budget is soft: nothing is refused for it (default 1000).
    pub turn_budget_tokens: usize,
}

impl Default for InjectionLimits {
    fn default() -> Self {
        Self {
            max_bytes: 10 * 1024,
            turn_budget_tokens: 1000,
        }
    }
}

/// What happened to one hook's context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InjectionReport {
    /// The hook that sent it.
    pub hook: HookId,
    /// Its size.
    pub bytes: usize,
    /// Its estimated tokens (a token per 4 bytes, rounded up).
    pub tokens: usize,
    /// Queued, queued over budget, or refused.
    pub status: InjectionStatus,
}

/// The fate of one injection.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum InjectionStatus {
    /// Queued for the agent.
    Queued,
    /// Queued, but the turn is now over its token budget.
    OverBudget {
        /// Tokens injected this turn, this one included.
        used: usize,
        /// The budget.
        budget: usize,
    },
    /// Refused: larger than the cap.
    Refused {
        /// Why, naming the size and the cap.
        reason: String,
    },
}

/// The injections of the current turn, waiting for the next flush.
#[derive(Debug, Default)]
pub(crate) struct Turn {
    pending: Vec<(Role, String, Provenance)>,
    tokens: usize,
}

impl Turn {
    /// Check one hook's context and queue it unless it is too large.
    pub(crate) fn offer(
        &mut self,
        limits: &InjectionLimits,
        hook: &HookId,
        event: EventName,
        context: &Context,
    ) -> InjectionReport {
        let bytes = context.text.len();
        let tokens = bytes.div_ceil(4);
        let report = |status| InjectionReport {
            hook: hook.clone(),
            bytes,
            tokens,
            status,
        };
        if bytes > limits.max_bytes {
            return report(InjectionStatus::Refused {
                reason: format!(
                    "context from hook `{hook}` is {bytes} bytes, over the {} byte cap: refused (not truncated)",
                    limits.max_bytes
                ),
            });
        }
        self.tokens += tokens;
        self.pending.push((
            context.role,
            context.text.clone(),
            Provenance {
                hook: hook.clone(),
                event,
                timestamp: wasm_hooks_core::now_rfc3339(),
                bytes,
            },
        ));
        report(if self.tokens > limits.turn_budget_tokens {
            InjectionStatus::OverBudget {
                used: self.tokens,
                budget: limits.turn_budget_tokens,
            }
        } else {
            InjectionStatus::Queued
        })
    }

    /// A new turn: the token budget starts again (queued context stays).
    pub(crate) fn restart_budget(&mut self) {
        self.tokens = 0;
    }

    /// The queued injections as messages: one per role, in the order the
    /// roles first appeared, several sources batched under headings.
    pub(crate) fn take_messages(&mut self) -> Vec<ContextMessage> {
        let mut messages: Vec<(Role, Vec<(String, Provenance)>)> = Vec::new();
        for (role, text, source) in self.pending.drain(..) {
            match messages.iter_mut().find(|(r, _)| *r == role) {
                Some((_, parts)) => parts.push((text, source)),
                None => messages.push((role, vec![(text, source)])),
            }
        }
        messages
            .into_iter()
            .map(|(role, parts)| batch(role, parts))
            .collect()
    }
}

fn batch(role: Role, mut parts: Vec<(String, Provenance)>) -> ContextMessage {
    if parts.len() == 1 {
        let (text, source) = parts.remove(0);
        return ContextMessage {
            role,
            text,
            sources: vec![source],
        };
    }
    let mut text = String::from("Hook feedback:");
    for (part, source) in &parts {
        text.push_str(&format!(
            "\n\nFrom {} ({}, {} bytes):\n{part}",
            source.hook, source.event, source.bytes
        ));
    }
    ContextMessage {
        role,
        text,
        sources: parts.into_iter().map(|(_, s)| s).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(text: &str, role: Role) -> Context {
        Context {
            text: text.into(),
            role,
        }
    }

    #[test]
    fn over_the_cap_is_refused_whole_and_not_queued() {
        let mut turn = Turn::default();
        let limits = InjectionLimits {
            max_bytes: 10,
            turn_budget_tokens: 1000,
        };
        let r = turn.offer(
            &limits,
            &HookId::new("big"),
            EventName::PostToolUse,
            &context("eleven byte", Role::System),
        );
        assert!(
            matches!(&r.status, InjectionStatus::Refused { reason } if reason.contains("11 bytes, over the 10 byte cap")),
            "{r:?}"
        );
        assert!(turn.take_messages().is_empty());
    }

    #[test]
    fn the_budget_warns_but_queues() {
        let mut turn = Turn::default();
        let limits = InjectionLimits {
            max_bytes: 100,
            turn_budget_tokens: 3,
        };
        let hook = HookId::new("h");
        let first = turn.offer(
            &limits,
            &hook,
            EventName::Stop,
            &context("12345678", Role::System),
        );
        assert_eq!((first.tokens, &first.status), (2, &InjectionStatus::Queued));
        let second = turn.offer(
            &limits,
            &hook,
            EventName::Stop,
            &context("12345", Role::System),
        );
        assert_eq!(
            second.status,
            InjectionStatus::OverBudget { used: 4, budget: 3 }
        );
        turn.restart_budget();
        let third = turn.offer(
            &limits,
            &hook,
            EventName::Stop,
            &context("12", Role::System),
        );
        assert_eq!(third.status, InjectionStatus::Queued);
        assert_eq!(turn.take_messages()[0].sources.len(), 3);
    }

    #[test]
    fn one_message_per_role_listing_each_source() {
        let mut turn = Turn::default();
        let limits = InjectionLimits::default();
        for (hook, text, role) in [
            ("lint", "E501 line too long", Role::System),
            ("reminder", "be brief", Role::User),
            ("types", "mismatched types", Role::System),
        ] {
            turn.offer(
                &limits,
                &HookId::new(hook),
                EventName::PostToolUse,
                &context(text, role),
            );
        }
        let messages = turn.take_messages();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].role, Role::System);
        assert_eq!(
            messages[0].text,
            "Hook feedback:\n\nFrom lint (PostToolUse, 18 bytes):\nE501 line too long\n\nFrom types (PostToolUse, 16 bytes):\nmismatched types"
        );
        let hooks: Vec<&str> = messages[0]
            .sources
            .iter()
            .map(|s| s.hook.as_str())
            .collect();
        assert_eq!(hooks, ["lint", "types"]);
        assert_eq!(messages[1].text, "be brief");
        assert_eq!(messages[1].sources[0].event, EventName::PostToolUse);
        assert!(turn.take_messages().is_empty());
    }
}
