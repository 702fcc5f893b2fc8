//! Inline rule hooks: `type: "inline"` rules and profile-style
//! `type: "matcher"` entries, compiled once when the hook file is loaded
//! and evaluated in order against the event record; the first rule whose
//! conditions all hold decides.
//!
//! A rule: `{field, operator, value, action, reason, modify_field,
//! modify_value}`. Field paths use dots and the protocol's short names
//! (`tool` = `tool_name`, `args` = `tool_input`, `result` =
//! `tool_response`). Operators: `equals`, `not_equals`, `contains`,
//! `starts_with`, `ends_with`, `glob` (`**` and all), `regex`/`matches`,
//! `in` (a list), `exists`. Actions: `continue`/`proceed`, `allow`,
//! `deny`/`block`, `ask`, `modify` (sets `modify_field` to `modify_value` in
//! a copy of the tool input, or, with a `result.…` field on PostToolUse, of
//! the tool's output; `result` alone replaces the whole output),
//! `inject_context` (the reason becomes context).
//! A matcher entry (`match: {tool, args: {field: glob}}`, `action`,
//! `message`) is one rule whose conditions are globs.

use std::fmt;
use std::sync::Arc;

use globset::{Glob, GlobMatcher};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use wasm_hooks_core::{
    Approval, Context, Decision, Event, Handler, HandlerFuture, HookId, HookOutput, HookResult,
    Reply, Role, plain_text, record_field,
};

use super::action::Action;
use super::kind::{BuildContext, Built, HookKind, HookProblem};
use super::setup::{RuleProblem, SetupError};

/// One rule as a hook file writes it.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RuleDoc {
    field: String,
    #[serde(default)]
    operator: Operator,
    #[serde(default)]
    value: Value,
    #[serde(default)]
    action: Action,
    reason: Option<String>,
    modify_field: Option<String>,
    modify_value: Option<Value>,
}

/// How a rule compares its field with its `value`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
enum Operator {
    #[default]
    Equals,
    NotEquals,
    Contains,
    StartsWith,
    EndsWith,
    Glob,
    #[serde(alias = "matches")]
    Regex,
    In,
    Exists,
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match serde_json::to_value(self) {
            Ok(Value::String(word)) => f.write_str(&word),
            _ => write!(f, "{self:?}"),
        }
    }
}

/// A profile-style matcher entry's `match` object.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct MatchDoc {
    tool: Option<String>,
    #[serde(default)]
    args: serde_json::Map<String, Value>,
}

/// A compiled test on one field.
#[derive(Debug)]
enum Test {
    Equals(Value),
    NotEquals(Value),
    Contains(Value),
    StartsWith(String),
    EndsWith(String),
    Glob(GlobMatcher),
    Regex(Regex),
    In(Vec<Value>),
    Exists(bool),
}

#[derive(Debug)]
struct Condition {
    path: Vec<String>,
    test: Test,
}

#[derive(Debug)]
struct Rule {
    conditions: Vec<Condition>,
    action: Action,
    reason: String,
    /// What `modify` writes, and where.
    modify: Option<Rewrite>,
}

/// A `modify` rule's write: a field of the tool input, or of the tool's
/// output (an empty path replaces all of it).
#[derive(Debug, Clone, Default)]
struct Rewrite {
    output: bool,
    at: Vec<String>,
    value: Value,
}

/// An inline rule hook: a [`Handler`] that needs no process and no sandbox.
#[derive(Debug)]
pub struct InlineHook {
    rules: Vec<Rule>,
}

impl InlineHook {
    /// Compile `type: inline` rules (a JSON list of rule objects).
    ///
    /// # Errors
    /// When a rule is malformed, names an unknown operator or action, or
    /// carries a bad glob or regex; the message names the rule by index.
    pub fn from_rules(rules: &Value) -> Result<Self, SetupError> {
        let docs: Vec<RuleDoc> =
            crate::tracked::from_value(rules).map_err(|e| SetupError::Rules {
                path: match e.path().to_string() {
                    root if root == "." => String::new(),
                    path => path,
                },
                message: e.into_inner().to_string(),
            })?;
        if docs.is_empty() {
            return Err(SetupError::NoRules);
        }
        let rules = docs
            .into_iter()
            .enumerate()
            .map(|(index, doc)| compile(doc).map_err(|problem| SetupError::Rule { index, problem }))
            .collect::<Result<_, _>>()?;
        Ok(Self { rules })
    }

    /// The record fields the rules test, as dotted paths with the short
    /// names expanded (`tool_input.command`), each once.
    pub(crate) fn fields_read(&self) -> Vec<String> {
        let mut fields: Vec<String> = self
            .rules
            .iter()
            .flat_map(|r| &r.conditions)
            .map(|c| c.path.join("."))
            .collect();
        fields.dedup();
        fields
    }

    /// Compile a profile-style matcher entry: `match` (a tool glob and
    /// argument globs, all of which must hold), `action` and `message`.
    ///
    /// # Errors
    /// When `match` is malformed, a glob is bad or the action unknown.
    pub fn from_matcher(
        matches: &Value,
        action: &str,
        message: Option<&str>,
    ) -> Result<Self, SetupError> {
        Self::matcher(matches, action, message).map_err(SetupError::Matcher)
    }

    fn matcher(matches: &Value, action: &str, message: Option<&str>) -> Result<Self, RuleProblem> {
        let doc: MatchDoc =
            serde_json::from_value(matches.clone()).map_err(|e| RuleProblem::Match {
                message: e.to_string(),
            })?;
        let mut conditions = Vec::new();
        if let Some(tool) = doc.tool {
            conditions.push(Condition {
                path: vec!["tool_name".into()],
                test: Test::Glob(glob(&tool)?),
            });
        }
        for (field, pattern) in doc.args {
            let pattern = pattern.as_str().ok_or_else(|| RuleProblem::MatchArgument {
                field: field.clone(),
            })?;
            conditions.push(Condition {
                path: path(&format!("tool_input.{field}")),
                test: Test::Glob(glob(pattern)?),
            });
        }
        let action = Action::named(action).map_err(|message| RuleProblem::Action { message })?;
        if action == Action::Modify {
            return Err(RuleProblem::Action {
                message: "a matcher entry cannot `modify`; use an inline rule with `modify_field`"
                    .into(),
            });
        }
        Ok(Self {
            rules: vec![Rule {
                conditions,
                action,
                reason: message.map_or_else(|| "matched a matcher rule".to_owned(), str::to_owned),
                modify: None,
            }],
        })
    }

    /// The first rule whose conditions all hold for `event`, with its
    /// index.
    fn rule_for(&self, event: &Event) -> Option<(usize, &Rule)> {
        let record = event.record();
        self.rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.conditions.iter().all(|c| c.holds(record)))
    }

    fn decide(&self, event: &Event) -> HookResult {
        let Some((_, rule)) = self.rule_for(event) else {
            return HookResult::new(Decision::Proceed);
        };
        let reason = rule.reason.clone();
        let mut result = HookResult::new(match rule.action {
            Action::Continue | Action::InjectContext => Decision::Proceed,
            Action::Allow => Decision::Allow {
                reason: Some(reason.clone()),
            },
            Action::Deny => Decision::Deny {
                reason: reason.clone(),
            },
            Action::Ask => Decision::Ask(Approval {
                prompt: reason.clone(),
                options: Vec::new(),
                timeout_ms: None,
                default_allow: false,
            }),
            Action::Modify => {
                let Rewrite { output, at, value } = rule.modify.clone().unwrap_or_default();
                let original = if output {
                    event.tool_response()
                } else {
                    event.tool_input()
                };
                let mut changed = original
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Default::default()));
                set(&mut changed, &at, value);
                if output {
                    Decision::ModifyOutput { output: changed }
                } else {
                    Decision::Modify { input: changed }
                }
            }
        });
        if rule.action == Action::InjectContext {
            result.context = Some(Context {
                text: reason,
                role: Role::System,
            });
        }
        result
    }
}

impl Handler for InlineHook {
    fn handle<'a>(&'a self, _hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        let result = Ok(self.decide(event));
        Box::pin(async move {
            Reply {
                result,
                output: HookOutput::default(),
            }
        })
    }

    fn rules(&self) -> Vec<String> {
        self.rules
            .iter()
            .enumerate()
            .map(|(at, rule)| format!("rule {} ({}: {})", at + 1, rule.action.word(), rule.reason))
            .collect()
    }

    fn deciding_rule(&self, event: &Event) -> Option<usize> {
        self.rule_for(event).map(|(at, _)| at)
    }

    fn details(&self) -> Vec<String> {
        vec![format!(
            "inline: {} rule{} (no process, no sandbox needed)",
            self.rules.len(),
            if self.rules.len() == 1 { "" } else { "s" }
        )]
    }
}

fn compile(doc: RuleDoc) -> Result<Rule, RuleProblem> {
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| RuleProblem::NeedsText {
                operator: doc.operator.to_string(),
            })
    };
    let test = match doc.operator {
        Operator::Equals => Test::Equals(doc.value.clone()),
        Operator::NotEquals => Test::NotEquals(doc.value.clone()),
        Operator::Contains => Test::Contains(doc.value.clone()),
        Operator::StartsWith => Test::StartsWith(text(&doc.value)?),
        Operator::EndsWith => Test::EndsWith(text(&doc.value)?),
        Operator::Glob => Test::Glob(glob(&text(&doc.value)?)?),
        Operator::Regex => {
            let pattern = text(&doc.value)?;
            Test::Regex(wasm_hooks_core::compile_regex(&pattern).map_err(|e| {
                RuleProblem::BadRegex {
                    message: wasm_hooks_core::regex_error(&e),
                    pattern,
                }
            })?)
        }
        Operator::In => match &doc.value {
            Value::Array(items) => Test::In(items.clone()),
            _ => return Err(RuleProblem::NeedsList),
        },
        Operator::Exists => Test::Exists(doc.value.as_bool().unwrap_or(true)),
    };
    let action = doc.action;
    let modify = match (action, doc.modify_field, doc.modify_value) {
        (Action::Modify, Some(field), Some(value)) => {
            let at = path(&field);
            let (output, rest) = match at.split_first() {
                Some((root, rest)) if root == "tool_input" && !rest.is_empty() => (false, rest),
                Some((root, rest)) if root == "tool_response" => (true, rest),
                _ => return Err(RuleProblem::ModifyOutside { field }),
            };
            Some(Rewrite {
                output,
                at: rest.to_vec(),
                value,
            })
        }
        (Action::Modify, _, _) => {
            return Err(RuleProblem::ModifyNeedsFields);
        }
        _ => None,
    };
    let reason = doc
        .reason
        .unwrap_or_else(|| format!("rule matched: {} {} {}", doc.field, doc.operator, doc.value));
    Ok(Rule {
        conditions: vec![Condition {
            path: path(&doc.field),
            test,
        }],
        action,
        reason,
        modify,
    })
}

fn glob(pattern: &str) -> Result<GlobMatcher, RuleProblem> {
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| RuleProblem::BadGlob {
            pattern: pattern.to_owned(),
            message: e.to_string(),
        })
}

/// A dotted field path with the protocol's short names expanded.
fn path(field: &str) -> Vec<String> {
    let mut parts: Vec<String> = field.split('.').map(str::to_owned).collect();
    if let Some(first) = parts.first_mut() {
        *first = record_field(first).to_owned();
    }
    parts
}

fn lookup<'a>(record: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(record.get(first)?, |v, key| v.get(key))
        .filter(|v| !v.is_null())
}

/// Write `value` at `path` in `target`, making objects of whatever is in
/// the way; an empty path replaces `target`.
fn set(target: &mut Value, path: &[String], value: Value) {
    let mut here = target;
    for key in path {
        if !here.is_object() {
            *here = Value::Object(Default::default());
        }
        here = &mut here[key.as_str()];
    }
    *here = value;
}

impl Condition {
    fn holds(&self, record: &Map<String, Value>) -> bool {
        let found = lookup(record, &self.path);
        match (&self.test, found) {
            (Test::Exists(wanted), found) => found.is_some() == *wanted,
            (Test::NotEquals(v), found) => found != Some(v),
            (_, None) => false,
            (Test::Equals(v), Some(f)) => f == v,
            (Test::Contains(v), Some(Value::Array(items))) => items.contains(v),
            (Test::Contains(v), Some(f)) => plain_text(f).contains(&*plain_text(v)),
            (Test::StartsWith(p), Some(f)) => plain_text(f).starts_with(p.as_str()),
            (Test::EndsWith(p), Some(f)) => plain_text(f).ends_with(p.as_str()),
            (Test::Glob(g), Some(f)) => g.is_match(&*plain_text(f)),
            (Test::Regex(r), Some(f)) => r.is_match(&plain_text(f)),
            (Test::In(items), Some(f)) => items.contains(f),
        }
    }
}

/// The `inline` kind: a list of rules.
pub(crate) struct InlineKind;

/// An inline hook's own fields.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct InlineEntry {
    /// The rules, tried in order.
    #[serde(alias = "inline_rules")]
    #[schemars(with = "Option<Vec<RuleDoc>>")]
    rules: Option<Value>,
}

impl HookKind for InlineKind {
    const TYPES: &'static [&'static str] = &["inline"];
    type Entry = InlineEntry;

    fn build(entry: InlineEntry, _: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        let rules = entry
            .rules
            .ok_or("an inline hook needs `rules`: [{field, operator, value, action, …}]")?;
        let hook = InlineHook::from_rules(&rules)?;
        let reads = hook.fields_read();
        let mut built = Built::new(
            Arc::new(hook),
            "inline".to_owned(),
            json!({ "rules": rules }),
        );
        built.reads = reads;
        Ok(built.sandboxed())
    }
}

/// Profile-style YAML's `matcher` kind: one tool/argument match and an
/// action.
pub(crate) struct MatcherKind;

/// A matcher hook's own fields.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct MatcherEntry {
    /// `{tool, args}` to match.
    #[serde(rename = "match")]
    #[schemars(with = "Option<MatchDoc>")]
    matches: Option<Value>,
    /// What to do on a match.
    #[schemars(with = "Option<Action>")]
    action: Option<Value>,
    /// The reason or message given.
    #[schemars(with = "Option<String>")]
    message: Option<Value>,
}

impl HookKind for MatcherKind {
    const TYPES: &'static [&'static str] = &["matcher"];
    type Entry = MatcherEntry;

    fn build(entry: MatcherEntry, _: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        let (Some(matches), Some(action)) = (&entry.matches, &entry.action) else {
            return Err("a matcher hook needs `match` ({tool, args}) and `action`".into());
        };
        let action = action.as_str().ok_or("`action` must be a string")?;
        let message = entry.message.as_ref().and_then(Value::as_str);
        let hook = InlineHook::from_matcher(matches, action, message)?;
        let identity = json!({"match": matches, "action": action, "message": message});
        Ok(Built::new(Arc::new(hook), "matcher".to_owned(), identity).sandboxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(rules: Value, event: &Event) -> HookResult {
        InlineHook::from_rules(&rules).unwrap().decide(event)
    }

    fn bash(command: &str) -> Event {
        Event::pre_tool_use("Bash", json!({"command": command, "timeout": 30}))
    }

    #[test]
    fn every_operator() {
        let e = bash("sudo rm -rf /tmp/x");
        let hit = |rule: Value| decide(json!([rule]), &e).decision != Decision::Proceed;
        let deny = |field: &str, op: &str, value: Value| json!({"field": field, "operator": op, "value": value, "action": "deny"});
        assert!(hit(deny("tool", "equals", json!("Bash"))));
        assert!(!hit(deny("tool", "equals", json!("bash"))));
        assert!(hit(deny("tool", "not_equals", json!("Edit"))));
        assert!(hit(deny("args.command", "contains", json!("rm -rf"))));
        assert!(hit(deny("args.command", "starts_with", json!("sudo "))));
        assert!(hit(deny("args.command", "ends_with", json!("/x"))));
        assert!(hit(deny("args.command", "glob", json!("sudo **"))));
        assert!(hit(deny("args.command", "regex", json!(r"rm\s+-rf"))));
        assert!(hit(deny("args.command", "matches", json!("^sudo"))));
        assert!(hit(deny("tool_name", "in", json!(["Edit", "Bash"]))));
        assert!(
            hit(deny("args.timeout", "equals", json!(30))),
            "non-strings compare as JSON"
        );
        assert!(!hit(deny("args.timeout", "equals", json!("30"))));
        assert!(hit(deny("args.command", "exists", json!(true))));
        assert!(hit(deny("args.missing", "exists", json!(false))));
        assert!(
            !hit(deny("args.missing", "contains", json!("x"))),
            "a missing field matches nothing"
        );
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let rules = json!([
            {"field": "tool", "value": "Edit", "action": "deny", "reason": "no edits"},
            {"field": "args.command", "operator": "starts_with", "value": "sudo", "action": "ask", "reason": "sudo?"},
            {"field": "args.command", "operator": "contains", "value": "rm", "action": "deny", "reason": "no rm"},
        ]);
        assert!(
            matches!(decide(rules.clone(), &bash("sudo rm x")).decision, Decision::Ask(ref a) if a.prompt == "sudo?")
        );
        assert_eq!(
            decide(rules.clone(), &bash("rm x")).decision,
            Decision::Deny {
                reason: "no rm".into()
            }
        );
        assert_eq!(decide(rules, &bash("ls")).decision, Decision::Proceed);
    }

    #[test]
    fn a_matching_continue_rule_ends_evaluation_and_nested_fields_are_reached() {
        let e = Event::pre_tool_use(
            "Bash",
            json!({"command": "rm x", "options": {"sandbox": {"on": true}}}),
        );
        let rules = json!([
            {"field": "args.options.sandbox.on", "value": true, "action": "continue"},
            {"field": "args.command", "operator": "contains", "value": "rm", "action": "deny"},
        ]);
        assert_eq!(
            decide(rules, &e).decision,
            Decision::Proceed,
            "the continue rule matched first"
        );
        let rules = json!([
            {"field": "args.options.sandbox.on", "value": false, "action": "continue"},
            {"field": "args.command", "operator": "contains", "value": "rm", "action": "deny"},
        ]);
        assert!(matches!(decide(rules, &e).decision, Decision::Deny { .. }));
    }

    #[test]
    fn modify_rewrites_a_copy_of_the_tool_input() {
        let rules = json!([{"field": "args.command", "operator": "starts_with", "value": "npm ",
            "action": "modify", "modify_field": "args.command", "modify_value": "pnpm install"}]);
        let result = decide(rules, &bash("npm install"));
        assert_eq!(
            result.decision,
            Decision::Modify {
                input: json!({"command": "pnpm install", "timeout": 30})
            }
        );
    }

    #[test]
    fn modify_of_the_result_rewrites_a_copy_of_the_tool_output() {
        let post = Event::post_tool_use(
            "Bash",
            json!({"command": "env"}),
            json!({"stdout": "TOKEN=abc", "stderr": ""}),
        );
        let rules = json!([{"field": "result.stdout", "operator": "contains", "value": "TOKEN=",
            "action": "modify", "modify_field": "result.stdout", "modify_value": "[hidden]"}]);
        assert_eq!(
            decide(rules, &post).decision,
            Decision::ModifyOutput {
                output: json!({"stdout": "[hidden]", "stderr": ""})
            }
        );
        let text = Event::post_tool_use("Read", json!({}), json!("TOKEN=abc"));
        let whole = json!([{"field": "result", "operator": "contains", "value": "TOKEN=",
            "action": "modify", "modify_field": "result", "modify_value": "[hidden]"}]);
        assert_eq!(
            decide(whole, &text).decision,
            Decision::ModifyOutput {
                output: json!("[hidden]")
            }
        );
        let field_of_text = json!([{"field": "tool", "value": "Read",
            "action": "modify", "modify_field": "result.note", "modify_value": 1}]);
        assert_eq!(
            decide(field_of_text, &text).decision,
            Decision::ModifyOutput {
                output: json!({"note": 1})
            }
        );
    }

    #[test]
    fn inject_context_and_allow() {
        let rules = json!([{"field": "tool", "value": "Bash", "action": "inject_context", "reason": "use rg, not grep"}]);
        let r = decide(rules, &bash("grep x"));
        assert_eq!(
            (r.decision, r.context.unwrap().text),
            (Decision::Proceed, "use rg, not grep".into())
        );
        let rules = json!([{"field": "tool", "value": "Bash", "action": "allow"}]);
        assert!(matches!(
            decide(rules, &bash("ls")).decision,
            Decision::Allow { .. }
        ));
    }

    #[test]
    fn matcher_entries_are_globs_that_must_all_hold() {
        let hook = InlineHook::from_matcher(
            &json!({"tool": "Write", "args": {"path": "**/.env*"}}),
            "block",
            Some("no env files"),
        )
        .unwrap();
        let write = |path: &str| Event::pre_tool_use("Write", json!({"path": path}));
        assert_eq!(
            hook.decide(&write("app/.env.local")).decision,
            Decision::Deny {
                reason: "no env files".into()
            }
        );
        assert_eq!(
            hook.decide(&write(".env")).decision,
            Decision::Deny {
                reason: "no env files".into()
            }
        );
        assert_eq!(
            hook.decide(&write("src/main.rs")).decision,
            Decision::Proceed
        );
        let read = Event::pre_tool_use("Read", json!({"path": ".env"}));
        assert_eq!(hook.decide(&read).decision, Decision::Proceed);
        let rm = InlineHook::from_matcher(
            &json!({"tool": "Bash", "args": {"command": "rm *"}}),
            "block",
            None,
        )
        .unwrap();
        assert!(matches!(
            rm.decide(&bash("rm -rf /")).decision,
            Decision::Deny { .. }
        ));
    }

    #[test]
    fn bad_rules_are_load_errors_naming_the_rule() {
        let regex = json!([{"field": "a", "value": "x"}, {"field": "b", "operator": "regex", "value": "("}]);
        assert!(matches!(
            InlineHook::from_rules(&regex).unwrap_err(),
            SetupError::Rule {
                index: 1,
                problem: RuleProblem::BadRegex { .. }
            }
        ));
        let err = |rules: Value| InlineHook::from_rules(&rules).unwrap_err().to_string();
        assert!(
            err(json!([{"field": "tool", "operator": "like", "value": "x"}]))
                .contains("rules[0].operator: unknown variant `like`")
        );
        assert!(err(json!([{"field": "a", "value": "x"}, {"field": "b", "operator": "regex", "value": "("}])).starts_with("rules[1]: bad regex"));
        assert!(
            err(json!([{"field": "a", "value": "x", "action": "nuke"}]))
                .contains("rules[0].action: unknown variant `nuke`")
        );
        assert!(
            err(json!([{"field": "a", "value": "x", "action": "modify"}]))
                .contains("needs `modify_field`")
        );
        assert!(err(json!([{"field": "a", "value": "x", "action": "modify", "modify_field": "session_id", "modify_value": 1}])).contains("inside the tool input"));
        assert!(
            err(json!([{"field": "a", "value": "x", "colour": "red"}]))
                .contains("unknown field `colour`")
        );
        assert!(err(json!([])).contains("at least one rule"));
        assert!(
            InlineHook::from_matcher(&json!({"tool": "["}), "block", None)
                .unwrap_err()
                .to_string()
                .contains("bad glob")
        );
    }
}
