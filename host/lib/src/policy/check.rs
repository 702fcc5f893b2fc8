//! What a policy test expects of an outcome, and the differences found.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use wasm_hooks_core::Outcome;

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
    /// The rewritten tool output (PostToolUse): an object is checked field
    /// by field, like `updated_input`; `null` expects no rewrite; anything
    /// else must equal it.
    #[serde(default, deserialize_with = "given")]
    pub updated_output: Option<Value>,
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
        for (field, expected, got) in self.texts(outcome) {
            if let Some(part) = expected
                && !got.contains(part.as_str())
            {
                differ(field, format!("to contain {part:?}"), format!("{got:?}"));
            }
        }
        if let Some(fields) = &self.updated_input {
            compare_fields(
                "updated_input",
                fields,
                outcome.updated_input.as_ref(),
                &mut differ,
            );
        }
        const NOT_REWRITTEN: &str = "nothing (not rewritten)";
        match (&self.updated_output, &outcome.updated_output) {
            (Some(Value::Null), Some(got)) => {
                differ("updated_output", NOT_REWRITTEN.into(), got.to_string());
            }
            (Some(Value::Null), None) => {}
            (Some(Value::Object(fields)), got) => {
                compare_fields("updated_output", fields, got.as_ref(), &mut differ);
            }
            (Some(expected), got) if got.as_ref() != Some(expected) => differ(
                "updated_output",
                expected.to_string(),
                got.as_ref()
                    .map_or_else(|| NOT_REWRITTEN.to_owned(), Value::to_string),
            ),
            _ => {}
        }
        found
    }

    /// The text fields the expectation may name, each with what the
    /// outcome says.
    fn texts<'a>(&'a self, outcome: &Outcome) -> [(&'static str, &'a Option<String>, String); 4] {
        [
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
        ]
    }
}

/// A field that is present, even as `null` (which serde's `Option` would
/// read as absent).
fn given<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Each expected field of `name` against the same field of `got`.
fn compare_fields(
    name: &str,
    fields: &Map<String, Value>,
    got: Option<&Value>,
    differ: &mut impl FnMut(&str, String, String),
) {
    for (key, value) in fields {
        let found = got.and_then(|g| g.get(key));
        if found != Some(value) {
            differ(
                &format!("{name}.{key}"),
                value.to_string(),
                found.map_or_else(|| "nothing (no such field)".to_owned(), Value::to_string),
            );
        }
    }
}

fn joined<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    texts.collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use wasm_hooks_core::Verdict;

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

    #[test]
    fn a_rewritten_output_is_checked_by_field_or_whole() {
        let mut o = Outcome::proceed();
        o.updated_output = Some(json!({"stdout": "key [REDACTED]", "stderr": ""}));
        let by_field = json!({"updated_output": {"stdout": "key [REDACTED]"}});
        assert!(expect(by_field).check(&o).is_empty());
        let wrong = expect(json!({"updated_output": {"stdout": "key AKIA"}})).check(&o);
        assert_eq!(wrong[0].field, "updated_output.stdout");
        assert_eq!(wrong[0].got, "\"key [REDACTED]\"");
        let whole = expect(json!({"updated_output": "text"})).check(&Outcome::proceed());
        assert_eq!(
            (whole[0].field.as_str(), whole[0].got.as_str()),
            ("updated_output", "nothing (not rewritten)")
        );
        let untouched = expect(json!({"updated_output": null}));
        assert!(untouched.check(&Outcome::proceed()).is_empty());
        assert_eq!(untouched.check(&o)[0].expected, "nothing (not rewritten)");
        assert_eq!(expect(json!({})).updated_output, None);
    }
}
