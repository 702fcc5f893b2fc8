//! Agent hooks (`type: "agent"`, Claude Code's fifth kind): a model that
//! may call tools, turn after turn, before it gives its verdict. Here the
//! tools are host functions over the hook's own read-only grants (read a
//! file, grep, glob, list a folder; the transcript when `transcript: true`)
//! — no shell, no writes, no network but the model. Its turns are capped
//! (`max_turns`), its time by the hook's timeout and the event's deadline,
//! each tool's answer by size. The verdict, `{"ok", "reason"}` (by the
//! `answer` tool or as its last text), is folded as a prompt hook's, as
//! Claude Code folds it. Every tool call, and why one was refused, is in
//! the trace (the hook's `logs`).

mod tools;
mod wire;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};
use wasm_hooks_core::{
    Event, EventName, Handler, HandlerFuture, HookError, HookId, HookOutput, HookResult, Reply,
};
use wasm_hooks_wasm::{GrantBase, Grants};

use self::tools::ReadOnlyTools;
use self::wire::{ANSWER_TOOL, Conversation};
use super::kind::{
    BuildContext, Built, HookKind, HookProblem, optional_flag, optional_text, string_list,
};
use super::model::ModelApi;
use super::prompt::{
    PromptSettings, Provider, check_egress, end_turn_on_block, read_answer, system_prompt,
};
use crate::template::Template;

/// Tells the model what it is and what to answer.
const SYSTEM: &str = "You are a verifier hook in an AI coding agent. Judge the event you are \
given; you may read files with the tools (read-only: only the folders you are granted). When you \
know, call the `answer` tool with {\"ok\": true} when the event may go on, or {\"ok\": false, \
\"reason\": \"...\"} when it must not, with a short reason for the agent.";

/// Turns when the entry does not say.
const DEFAULT_MAX_TURNS: u32 = 10;
/// The most turns an entry may ask for.
const MOST_TURNS: u64 = 50;
/// The whole loop's time when the entry does not say (Claude Code's
/// default for agent hooks).
const DEFAULT_TIMEOUT_MS: u64 = 60_000;

/// An agent hook: a model with read-only tools, asked until it answers.
#[derive(Debug)]
pub(crate) struct AgentHook {
    api: ModelApi,
    template: Template,
    tools: Arc<ReadOnlyTools>,
    max_turns: u32,
    timeout_ms: u64,
    continue_on_block: bool,
}

impl AgentHook {
    /// Ask the model, run the tools it calls, until it answers: the
    /// verdict, the model's last text and the tool log.
    async fn run(
        &self,
        hook: &HookId,
        event: &Event,
        log: &mut Vec<String>,
    ) -> (Result<HookResult, HookError>, String) {
        let deadline = Instant::now() + Duration::from_millis(self.timeout_ms);
        let system = system_prompt(SYSTEM, event.name());
        let mut conversation =
            Conversation::new(self.api.provider, system, self.template.render(event));
        let transcript = event
            .record()
            .get("transcript_path")
            .and_then(Value::as_str)
            .map(std::path::PathBuf::from);
        let mut text = String::new();
        for turn in 1..=self.max_turns {
            let body = conversation.request(&self.api);
            let answer = match self.api.send(hook, &body, deadline, self.timeout_ms).await {
                Ok(answer) => answer,
                Err(e) => return (Err(e), text),
            };
            let Some(said) = conversation.read(&answer) else {
                return (
                    Err(bad(hook, "the provider's response is not a turn".into())),
                    text,
                );
            };
            text.clone_from(&said.text);
            if let Some(verdict) = said.calls.iter().find(|c| c.name == ANSWER_TOOL) {
                log.push(format!("turn {turn}: answer {}", verdict.input));
                return (
                    self.verdict(hook, event.name(), &verdict.input.to_string()),
                    text,
                );
            }
            if said.calls.is_empty() {
                return (self.verdict(hook, event.name(), &said.text), text);
            }
            let mut results = Vec::new();
            for call in said.calls {
                let ran = self
                    .tool(call.name.clone(), call.input.clone(), transcript.clone())
                    .await;
                let (answer, refused) = match ran {
                    Ok(answer) => {
                        log.push(format!(
                            "turn {turn}: {} {} → {} bytes",
                            call.name,
                            call.input,
                            answer.len()
                        ));
                        (answer, false)
                    }
                    Err(why) => {
                        log.push(format!(
                            "turn {turn}: {} {} → refused: {why}",
                            call.name, call.input
                        ));
                        (format!("refused: {why}"), true)
                    }
                };
                results.push((call.id, answer, refused));
            }
            conversation.add_turn(&answer, results);
        }
        let message = format!(
            "the model gave no verdict in {} turns (`max_turns`)",
            self.max_turns
        );
        (
            Err(HookError::Failed {
                hook: hook.clone(),
                message,
            }),
            text,
        )
    }

    /// Run one tool off the runtime's threads (it reads files).
    async fn tool(
        &self,
        name: String,
        input: Value,
        transcript: Option<std::path::PathBuf>,
    ) -> Result<String, String> {
        let tools = Arc::clone(&self.tools);
        tokio::task::spawn_blocking(move || tools.run(&name, &input, transcript.as_deref()))
            .await
            .unwrap_or_else(|e| Err(format!("the tool failed: {e}")))
    }

    fn verdict(
        &self,
        hook: &HookId,
        event: EventName,
        text: &str,
    ) -> Result<HookResult, HookError> {
        read_answer(event, text)
            .map(|answer| end_turn_on_block(event, answer, self.continue_on_block))
            .map_err(|message| bad(hook, message.to_string()))
    }
}

fn bad(hook: &HookId, message: String) -> HookError {
    HookError::BadResult {
        hook: hook.clone(),
        message,
    }
}

impl Handler for AgentHook {
    fn details(&self) -> Vec<String> {
        vec![format!(
            "agent: model {} at {}, key from the variable {}, at most {} turns, reads {}",
            self.api.model,
            self.api.endpoint,
            self.api.key_env,
            self.max_turns,
            self.tools.describe()
        )]
    }

    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        Box::pin(async move {
            let mut logs = Vec::new();
            let (result, stdout) = self.run(hook, event, &mut logs).await;
            Reply {
                result,
                output: HookOutput {
                    stdout,
                    logs,
                    ..HookOutput::default()
                },
            }
        })
    }
}

/// Claude Code's `agent` kind.
pub(crate) struct AgentKind;

/// An agent hook's own fields; the model's fields as a prompt hook's.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct AgentEntry {
    /// What the agent is asked to verify (`$ARGUMENTS` is the event).
    #[schemars(with = "Option<String>")]
    prompt: Option<Value>,
    /// The model.
    #[schemars(with = "Option<String>")]
    model: Option<Value>,
    /// `anthropic` or `openai`.
    provider: Option<Provider>,
    /// The API's base URL.
    #[schemars(with = "Option<String>")]
    base_url: Option<Value>,
    /// The variable holding the API key.
    #[schemars(with = "Option<String>")]
    api_key_env: Option<Value>,
    /// Each answer's token budget.
    #[schemars(with = "Option<u32>")]
    max_tokens: Option<Value>,
    /// Directories its tools may read (none unless listed; `${PROJECT_DIR}`).
    #[schemars(with = "Option<Vec<String>>")]
    allow_read: Option<Value>,
    /// Whether its tools may read the event's transcript.
    #[schemars(with = "Option<bool>")]
    transcript: Option<Value>,
    /// The most turns (model answers) before it fails [10, at most 50].
    #[schemars(with = "Option<u32>")]
    max_turns: Option<Value>,
    /// Let the turn go on after a block.
    #[serde(alias = "continueOnBlock")]
    #[schemars(with = "Option<bool>")]
    continue_on_block: Option<Value>,
}

impl HookKind for AgentKind {
    const TYPES: &'static [&'static str] = &["agent"];
    type Entry = AgentEntry;

    fn build(entry: AgentEntry, cx: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        let Some(prompt) = optional_text(entry.prompt.as_ref(), "prompt")? else {
            return Err("an agent hook needs `prompt`, what its model is asked to verify".into());
        };
        let whole = |value: &Option<Value>, field: &str, most: u64| match value {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=most).contains(n))
                .map(Some)
                .ok_or_else(|| {
                    HookProblem::Message(format!(
                        "`{field}` must be a whole number from 1 to {most}"
                    ))
                }),
        };
        let max_tokens = whole(&entry.max_tokens, "max_tokens", u64::from(u32::MAX))?;
        let max_turns = whole(&entry.max_turns, "max_turns", MOST_TURNS)?;
        let settings = PromptSettings {
            prompt,
            provider: entry.provider,
            base_url: optional_text(entry.base_url.as_ref(), "base_url")?,
            model: optional_text(entry.model.as_ref(), "model")?,
            api_key_env: optional_text(entry.api_key_env.as_ref(), "api_key_env")?,
            max_tokens: max_tokens.and_then(|n| u32::try_from(n).ok()),
            timeout_ms: Some(cx.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)),
            cache: false,
            continue_on_block: optional_flag(entry.continue_on_block.as_ref(), "continueOnBlock")?,
        };
        check_egress(&settings, cx)?;
        let grants = Grants::resolve(
            &string_list(entry.allow_read.as_ref(), "allow_read")?,
            &[],
            &[],
            &GrantBase {
                project_dir: &cx.settings.wasm.project_dir,
                relative_to: cx.base,
                variable: &|name| cx.settings.env.var(name),
            },
        )?;
        let dirs: Vec<_> = grants.dirs().iter().map(|d| d.path.clone()).collect();
        let transcript = optional_flag(entry.transcript.as_ref(), "transcript")?;
        let template = Template::parse(&settings.prompt.replace("$ARGUMENTS", "{{event}}"))?;
        let mut api = cx
            .settings
            .prompts
            .model_api(cx.settings.http.client()?, &settings);
        api.request_env = cx.settings.env.clone();
        let identity = json!({
            "prompt": entry.prompt, "provider": entry.provider, "base_url": entry.base_url,
            "model": entry.model, "api_key_env": entry.api_key_env, "max_tokens": entry.max_tokens,
            "allow_read": dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>(),
            "transcript": transcript, "max_turns": entry.max_turns,
            "continue_on_block": entry.continue_on_block, "timeout_ms": settings.timeout_ms,
        });
        let hook = AgentHook {
            api,
            template,
            tools: Arc::new(ReadOnlyTools::new(dirs, transcript)),
            max_turns: max_turns.map_or(DEFAULT_MAX_TURNS, |n| {
                u32::try_from(n).unwrap_or(DEFAULT_MAX_TURNS)
            }),
            timeout_ms: settings.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
            continue_on_block: settings.continue_on_block,
        };
        Ok(Built::new(Arc::new(hook), "agent".to_owned(), identity))
    }
}
