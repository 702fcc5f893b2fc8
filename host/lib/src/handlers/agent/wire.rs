//! An agent hook's conversation in the provider's own wire format: the
//! request with the tools, the model's turn read back as text and tool
//! calls, and the tools' answers added for the next turn (Anthropic's
//! `tool_use`/`tool_result` blocks, OpenAI's `tool_calls` and `tool`
//! messages).

use serde_json::{Value, json};

use super::tools;
use crate::handlers::model::{ModelApi, Provider};

/// The tool the model gives its verdict with.
pub(crate) const ANSWER_TOOL: &str = "answer";

/// One call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    /// The provider's id for it, echoed with the answer.
    pub(crate) id: String,
    /// The tool.
    pub(crate) name: String,
    /// Its input (`Null` when the model's arguments are not JSON).
    pub(crate) input: Value,
}

/// What the model said in one turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Turn {
    /// Its text.
    pub(crate) text: String,
    /// The tools it called, in order.
    pub(crate) calls: Vec<ToolCall>,
}

/// The messages so far.
#[derive(Debug)]
pub(crate) struct Conversation {
    provider: Provider,
    system: String,
    messages: Vec<Value>,
}

impl Conversation {
    /// A conversation opened by `prompt`, under `system`.
    pub(crate) fn new(provider: Provider, system: String, prompt: String) -> Self {
        Self {
            provider,
            system,
            messages: vec![json!({"role": "user", "content": prompt})],
        }
    }

    /// The next request to `api`.
    pub(crate) fn request(&self, api: &ModelApi) -> Value {
        let answer = (
            ANSWER_TOOL,
            "Give your verdict and end: ok true when the event may go on, false (with a reason) when it must not.",
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}, "reason": {"type": "string"}, "impossible": {"type": "boolean"}}, "required": ["ok"]}),
        );
        let specs = tools::definitions().into_iter().chain([answer]);
        match self.provider {
            Provider::Anthropic => json!({
                "model": api.model, "max_tokens": api.max_tokens, "system": self.system,
                "messages": self.messages,
                "tools": specs.map(|(name, description, schema)| json!({
                    "name": name, "description": description, "input_schema": schema,
                })).collect::<Vec<_>>(),
            }),
            Provider::OpenAi => {
                let mut messages = vec![json!({"role": "system", "content": self.system})];
                messages.extend(self.messages.iter().cloned());
                json!({
                    "model": api.model, "max_tokens": api.max_tokens, "messages": messages,
                    "tools": specs.map(|(name, description, schema)| json!({
                        "type": "function",
                        "function": {"name": name, "description": description, "parameters": schema},
                    })).collect::<Vec<_>>(),
                })
            }
        }
    }

    /// The model's turn in its `answer`, or `None` when the answer is not
    /// a turn of this provider's.
    pub(crate) fn read(&self, answer: &Value) -> Option<Turn> {
        match self.provider {
            Provider::Anthropic => {
                let blocks = answer["content"].as_array()?;
                let text = blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("");
                let calls = blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_use")
                    .map(|b| ToolCall {
                        id: b["id"].as_str().unwrap_or_default().to_owned(),
                        name: b["name"].as_str().unwrap_or_default().to_owned(),
                        input: b["input"].clone(),
                    })
                    .collect();
                Some(Turn { text, calls })
            }
            Provider::OpenAi => {
                let message = answer["choices"].get(0)?.get("message")?;
                let calls = message["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| ToolCall {
                        id: c["id"].as_str().unwrap_or_default().to_owned(),
                        name: c["function"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        input: c["function"]["arguments"]
                            .as_str()
                            .and_then(|a| serde_json::from_str(a).ok())
                            .unwrap_or(Value::Null),
                    })
                    .collect();
                Some(Turn {
                    text: message["content"].as_str().unwrap_or_default().to_owned(),
                    calls,
                })
            }
        }
    }

    /// Add the model's `answer` and the tools' `results` (call id, text,
    /// whether it is a refusal) for the next turn.
    pub(crate) fn add_turn(&mut self, answer: &Value, results: Vec<(String, String, bool)>) {
        match self.provider {
            Provider::Anthropic => {
                self.messages
                    .push(json!({"role": "assistant", "content": answer["content"]}));
                let blocks: Vec<Value> = results
                    .into_iter()
                    .map(|(id, text, refused)| {
                        json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": refused})
                    })
                    .collect();
                self.messages
                    .push(json!({"role": "user", "content": blocks}));
            }
            Provider::OpenAi => {
                self.messages.push(answer["choices"][0]["message"].clone());
                for (id, text, _) in results {
                    self.messages
                        .push(json!({"role": "tool", "tool_call_id": id, "content": text}));
                }
            }
        }
    }
}
