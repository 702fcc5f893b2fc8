//! What a policy test expects of an outcome, and the differences found.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Outcome;

/// What the folded outcome must be. Every field is optional; an empty
/// expectation passes whatever happens.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// The decision.
    pub decision: Option<ExpectedDecision>,
    /// A substring of the reason (of a deny, an allow, or an ask's prompt).
    pub reason: Option<String>,
    /// Fields of the rewritten tool input and their values.
    pub updated_input: Option<Map<String, Value>>,
    /// A substring of the added context (all of it, joined by newlines).
    pub context: Option<String>,
    /// A substring of the messages for the person (user and system ones).
    pub message: Option<String>,
    /// A substring of the request to end the turn.
    pub stop: Option<String>,
    /// Let the test pass even when a hook failed (by default a failure is
    /// a mismatch: a failing hook that fails open would pass by accident).
    #[serde(default)]
    pub allow_failures: bool,
}

/// A decision a test can expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedDecision {
    /// No hook had an opinion.
    Proceed,
    /// Allowed.
    Allow,
    /// Denied.
    Deny,
    /// The person is asked.
    Ask,
}

impl ExpectedDecision {
    /// The word, as [`Verdict::word`](crate::Verdict::word) spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Proceed => "proceed",
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Ask => "ask",
        }
    }
}

/// One way an outcome differs from the expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// The expectation's field (`decision`, `updated_input.command`, …).
    pub field: String,
    /// What was expected.
    pub expected: String,
    /// What the outcome holds.
    pub got: String,
}

impl Expectation {
    /// Every difference between `outcome` and this expectation; none when
    /// the test passes.
    pub fn check(&self, outcome: &Outcome) -> Vec<Mismatch> {
        let mut found = Vec::new();
        let mut differ = |field: &str, expected: String, got: String| {
            found.push(Mismatch {
                field: field.to_owned(),
                expected,
                got,
            });
        };
        if !self.allow_failures {
            for error in outcome.failures() {
                differ("hooks", "no hook failure".into(), error.to_string());
            }
        }
        let got = outcome.verdict.word();
        if let Some(expected) = self.decision
            && expected.as_str() != got
        {
            differ("decision", expected.as_str().into(), got.into());
        }
        let texts = [
            (
                "reason",
                &self.reason,
                outcome.verdict.reason().unwrap_or_default().to_owned(),
            ),
            (
                "context",
                &self.context,
                joined(outcome.contexts.iter().map(|c| c.value.text.as_str())),
            ),
            (
                "message",
                &self.message,
                joined(
                    outcome
                        .user_messages
                        .iter()
                        .map(|m| m.value.text.as_str())
                        .chain(outcome.system_messages.iter().map(|m| m.value.as_str())),
                ),
            ),
            (
                "stop",
                &self.stop,
                outcome
                    .stop
                    .as_ref()
                    .map(|s| s.value.clone())
                    .unwrap_or_default(),
            ),
        ];
        for (field, expected, got) in texts {
            if let Some(part) = expected
                && !got.contains(part.as_str())
            {
                differ(field, format!("to contain {part:?}"), format!("{got:?}"));
            }
        }
        if let Some(fields) = &self.updated_input {
            for (key, value) in fields {
                let got = outcome.updated_input.as_ref().and_then(|i| i.get(key));
                if got != Some(value) {
                    differ(
                        &format!("updated_input.{key}"),
                        value.to_string(),
                        got.map_or_else(|| "nothing (no such field)".to_owned(), Value::to_string),
                    );
                }
            }
        }
        found
    }
}

fn joined<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    texts.collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Verdict;

    fn outcome(verdict: Verdict, updated: Option<Value>) -> Outcome {
        let mut o = Outcome::proceed();
        o.verdict = verdict;
        o.updated_input = updated;
        o
    }

    fn expect(doc: Value) -> Expectation {
        serde_json::from_value(doc).unwrap()
    }

    #[test]
    fn a_matching_outcome_has_no_mismatch() {
        let o = outcome(
            Verdict::Deny {
                reason: "matches the dangerous pattern".into(),
            },
            None,
        );
        assert!(
            expect(json!({"decision": "deny", "reason": "dangerous"}))
                .check(&o)
                .is_empty()
        );
    }

    #[test]
    fn each_difference_is_named_with_both_sides() {
        let o = outcome(Verdict::Proceed, Some(json!({"command": "ls"})));
        let found = expect(json!({
            "decision": "deny", "reason": "sudo",
            "updated_input": {"command": "ls -la", "timeout": 5},
        }))
        .check(&o);
        let fields: Vec<&str> = found.iter().map(|m| m.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "decision",
                "reason",
                "updated_input.command",
                "updated_input.timeout"
            ]
        );
        assert_eq!(
            (found[0].expected.as_str(), found[0].got.as_str()),
            ("deny", "proceed")
        );
        assert_eq!(found[2].got, "\"ls\"");
        assert_eq!(found[3].got, "nothing (no such field)");
    }
}
