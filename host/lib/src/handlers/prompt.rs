//! LLM prompt hooks (`type: "prompt"`, alias `"llm"`): fill a prompt
//! template from the event, ask a model, and read its JSON answer.
//!
//! Providers: the Anthropic Messages API and the OpenAI-compatible chat
//! completions API (which also covers llama.cpp, vLLM and Ollama), over
//! the engine's shared HTTP client. The answer may be `{"ok": bool,
//! "reason"}` (Claude Code), `{"safe": bool, "reason"}` (seed 001) or a full
//! result object in any shape of `docs/protocol.md`; anything else is a hook
//! failure, with the model's text in the trace. A 429 is retried after its
//! `retry-after` while the deadline allows. With `cache: true`, identical
//! prompts within a session are answered from a bounded cache with a TTL.
//! The API key is read from the named variable per request and is never
//! written to a message, a log line or the trace.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use wasm_hooks_core::{
    Decision, Event, EventName, Handler, HandlerFuture, HookError, HookId, HookOutput, HookResult,
    Reply,
};

use crate::RequestEnv;

use super::answer::{self, AnswerError};
use super::kind::{BuildContext, Built, HookKind, HookProblem, optional_flag, optional_text};
use super::model::{ModelApi, error_message};
use super::setup::SetupError;
use crate::template::Template;

use super::defaults::PromptDefaults;
pub use super::model::Provider;

impl PromptDefaults {
    /// The model `settings` name, with these defaults for what they do
    /// not say.
    pub(crate) fn model_api(&self, client: reqwest::Client, settings: &PromptSettings) -> ModelApi {
        ModelApi::new(
            client,
            settings.provider.unwrap_or(self.provider),
            settings.base_url.clone().or_else(|| self.base_url.clone()),
            settings.model.clone().unwrap_or_else(|| self.model.clone()),
            settings
                .api_key_env
                .clone()
                .or_else(|| self.api_key_env.clone()),
            settings.max_tokens.unwrap_or(self.max_tokens),
        )
    }
}

/// What a prompt hook entry sets; unset fields come from [`PromptDefaults`].
#[derive(Debug, Clone, Default)]
pub struct PromptSettings {
    /// The prompt template; `$ARGUMENTS` is the whole event as JSON.
    pub prompt: String,
    /// See [`PromptDefaults::provider`].
    pub provider: Option<Provider>,
    /// See [`PromptDefaults::base_url`].
    pub base_url: Option<String>,
    /// See [`PromptDefaults::model`].
    pub model: Option<String>,
    /// See [`PromptDefaults::api_key_env`].
    pub api_key_env: Option<String>,
    /// See [`PromptDefaults::max_tokens`].
    pub max_tokens: Option<u32>,
    /// See [`PromptDefaults::timeout_ms`].
    pub timeout_ms: Option<u64>,
    /// Answer identical prompts within a session from a cache.
    pub cache: bool,
    /// Let the agent's turn go on after this hook blocks (Claude Code's
    /// `continueOnBlock`); by default a block also ends the turn, as in
    /// Claude Code, except on Stop and SubagentStop, where a block means
    /// "keep working".
    pub continue_on_block: bool,
}

/// Tells the model what to answer.
const SYSTEM: &str = "You are a policy hook in an AI coding agent. Judge the event you are given. \
Answer with one JSON object and nothing else: {\"ok\": true} when it may go on, or \
{\"ok\": false, \"reason\": \"...\"} when it must not, with a short reason for the agent.";

/// Added on Stop and SubagentStop, where the prompt is a condition the
/// agent must meet before it stops (Claude Code's wording of `impossible`).
const STOP_SYSTEM: &str = " The event is the agent stopping: the prompt is a condition \
that must be met before it may stop. {\"ok\": false} keeps it working. Only when the condition \
can never be met in this session (self-contradictory, or it needs what is not available) answer \
{\"ok\": false, \"impossible\": true, \"reason\": \"...\"}: the agent then stops and the \
person is told why.";

/// Cached answers live this long.
const CACHE_TTL: Duration = Duration::from_secs(600);
/// At most this many cached answers per hook.
const CACHE_ENTRIES: usize = 512;

/// Answers by session and prompt, with when they were given.
type AnswerCache = HashMap<String, (Instant, HookResult)>;

/// An LLM prompt hook: a [`Handler`] that asks a model.
#[derive(Debug, Clone)]
pub struct PromptHook {
    api: ModelApi,
    timeout_ms: u64,
    template: Template,
    cache: Option<Arc<Mutex<AnswerCache>>>,
    continue_on_block: bool,
}

impl PromptHook {
    /// A hook from its entry's settings and the engine's defaults.
    ///
    /// # Errors
    /// When the prompt is empty or its template names something unknown.
    pub fn new(
        client: reqwest::Client,
        settings: PromptSettings,
        defaults: &PromptDefaults,
    ) -> Result<Self, SetupError> {
        if settings.prompt.trim().is_empty() {
            return Err(SetupError::EmptyPrompt);
        }
        let template = Template::parse(&settings.prompt.replace("$ARGUMENTS", "{{event}}"))?;
        Ok(Self {
            api: defaults.model_api(client, &settings),
            timeout_ms: settings.timeout_ms.unwrap_or(defaults.timeout_ms),
            template,
            cache: settings.cache.then(Arc::default),
            continue_on_block: settings.continue_on_block,
        })
    }

    /// This hook, reading its key's variable from the request's own before
    /// the process's.
    pub fn with_request_env(mut self, env: RequestEnv) -> Self {
        self.api.request_env = env;
        self
    }

    fn request_body(&self, event: EventName, prompt: &str) -> Value {
        let user = json!({"role": "user", "content": prompt});
        let system = system_prompt(SYSTEM, event);
        let api = &self.api;
        match api.provider {
            Provider::Anthropic => json!({
                "model": api.model, "max_tokens": api.max_tokens, "system": system, "messages": [user],
            }),
            Provider::OpenAi => json!({
                "model": api.model, "max_tokens": api.max_tokens,
                "messages": [{"role": "system", "content": system}, user],
            }),
        }
    }

    async fn call(&self, hook: &HookId, event: &Event) -> (Result<HookResult, HookError>, String) {
        let prompt = self.template.render(event);
        let key = format!("{}\u{0}{prompt}", event.session_id());
        if let Some(hit) = self.cached(&key) {
            return (Ok(hit), String::new());
        }
        let text = match self.ask(hook, event.name(), &prompt).await {
            Ok(text) => text,
            Err(e) => return (Err(e), String::new()),
        };
        let result = read_answer(event.name(), &text)
            .map(|answer| end_turn_on_block(event.name(), answer, self.continue_on_block))
            .map_err(|message| HookError::BadResult {
                hook: hook.clone(),
                message: message.to_string(),
            });
        if let (Ok(answer), Some(cache)) = (&result, &self.cache) {
            let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
            cache.retain(|_, (at, _)| at.elapsed() < CACHE_TTL);
            if cache.len() >= CACHE_ENTRIES
                && let Some(oldest) = cache
                    .iter()
                    .min_by_key(|(_, (at, _))| *at)
                    .map(|(k, _)| k.clone())
            {
                cache.remove(&oldest);
            }
            cache.insert(key, (Instant::now(), answer.clone()));
        }
        (result, text)
    }

    fn cached(&self, key: &str) -> Option<HookResult> {
        let cache = self
            .cache
            .as_ref()?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        cache
            .get(key)
            .filter(|(at, _)| at.elapsed() < CACHE_TTL)
            .map(|(_, result)| result.clone())
    }

    /// Send the prompt and return the model's text.
    async fn ask(
        &self,
        hook: &HookId,
        event: EventName,
        prompt: &str,
    ) -> Result<String, HookError> {
        let deadline = Instant::now() + Duration::from_millis(self.timeout_ms);
        let body = self.request_body(event, prompt);
        let answer = self
            .api
            .send(hook, &body, deadline, self.timeout_ms)
            .await?;
        self.api
            .text_of(&answer)
            .ok_or_else(|| HookError::BadResult {
                hook: hook.clone(),
                message: format!(
                    "the provider's response has no text: {}",
                    error_message(&answer.to_string())
                ),
            })
    }
}

/// The system prompt `base` for `event`: on a stop, with what a stop
/// condition's answers mean.
pub(crate) fn system_prompt(base: &str, event: EventName) -> String {
    if is_stop(event) {
        format!("{base}{STOP_SYSTEM}")
    } else {
        base.to_owned()
    }
}

/// Whether `event` is a stop, where a block means "keep working".
fn is_stop(event: EventName) -> bool {
    matches!(event, EventName::Stop | EventName::SubagentStop)
}

/// A block that also ends the turn, unless `continueOnBlock` says
/// otherwise or the event is a stop (whose block means "go on"), as Claude
/// Code folds prompt and agent hooks.
pub(crate) fn end_turn_on_block(
    event: EventName,
    mut answer: HookResult,
    continue_on_block: bool,
) -> HookResult {
    if let Decision::Deny { reason } = &answer.decision
        && answer.stop.is_none()
        && !continue_on_block
        && !is_stop(event)
    {
        answer.stop = Some(reason.clone());
    }
    answer
}

/// The model's answer: `{"ok"|"safe": bool, "reason"}` or a full result
/// object, possibly inside a code fence. On a stop, `{"ok": false,
/// "impossible": true}` lets the agent stop and tells the person why (the
/// condition can never be met: keeping it working would not help).
pub(crate) fn read_answer(event: EventName, text: &str) -> Result<HookResult, AnswerError> {
    let start = text.find('{');
    let end = text.rfind('}');
    let (Some(start), Some(end)) = (start, end) else {
        return Err(AnswerError::new(format!(
            "the model did not answer with JSON: {}",
            error_message(text)
        )));
    };
    let json = &text[start..=end];
    let value: Value = serde_json::from_str(json).map_err(|e| {
        AnswerError::new(format!(
            "the model's JSON does not parse ({e}): {}",
            error_message(text)
        ))
    })?;
    let verdict = ["ok", "safe"]
        .into_iter()
        .find_map(|k| value.get(k).and_then(Value::as_bool));
    match verdict {
        Some(true) => Ok(HookResult::new(Decision::Proceed)),
        Some(false) => {
            let reason = value["reason"]
                .as_str()
                .unwrap_or("the model judged this not ok")
                .to_owned();
            if is_stop(event) && value["impossible"] == Value::Bool(true) {
                let mut answer = HookResult::new(Decision::Proceed);
                answer.system_message =
                    Some(format!("the stop condition can never be met: {reason}"));
                return Ok(answer);
            }
            Ok(HookResult::new(Decision::Deny { reason }))
        }
        None => answer::json_answer(event, json).map_err(|e| e.within("the model's answer")),
    }
}

impl Handler for PromptHook {
    fn details(&self) -> Vec<String> {
        vec![format!(
            "prompt: model {} at {}, key from the variable {}",
            self.api.model, self.api.endpoint, self.api.key_env
        )]
    }

    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        Box::pin(async move {
            let (result, text) = self.call(hook, event).await;
            Reply {
                result,
                output: HookOutput {
                    stdout: text,
                    ..HookOutput::default()
                },
            }
        })
    }
}

/// The `prompt` kind (`llm` in profile-style YAML).
pub(crate) struct PromptKind;

/// A prompt hook's own fields; absent ones take [`PromptDefaults`].
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct PromptEntry {
    /// The prompt template.
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
    /// The answer's token budget.
    #[schemars(with = "Option<u32>")]
    max_tokens: Option<Value>,
    /// Answer identical prompts within a session from a cache.
    #[schemars(with = "Option<bool>")]
    cache: Option<Value>,
    /// Let the turn go on after a block.
    #[serde(alias = "continueOnBlock")]
    #[schemars(with = "Option<bool>")]
    continue_on_block: Option<Value>,
}

impl HookKind for PromptKind {
    const TYPES: &'static [&'static str] = &["prompt", "llm"];
    type Entry = PromptEntry;

    fn build(entry: PromptEntry, cx: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        let Some(prompt) = optional_text(entry.prompt.as_ref(), "prompt")? else {
            return Err("a prompt hook needs `prompt`, the text sent to the model".into());
        };
        let max_tokens = match &entry.max_tokens {
            None => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or("`max_tokens` must be a positive whole number")?,
            ),
        };
        let cache = optional_flag(entry.cache.as_ref(), "cache")?;
        let continue_on_block = optional_flag(entry.continue_on_block.as_ref(), "continueOnBlock")?;
        let settings = PromptSettings {
            prompt,
            provider: entry.provider,
            base_url: optional_text(entry.base_url.as_ref(), "base_url")?,
            model: optional_text(entry.model.as_ref(), "model")?,
            api_key_env: optional_text(entry.api_key_env.as_ref(), "api_key_env")?,
            max_tokens,
            timeout_ms: cx.timeout_ms,
            cache,
            continue_on_block,
        };
        let identity = json!({
            "prompt": entry.prompt, "provider": entry.provider, "base_url": entry.base_url,
            "model": entry.model, "api_key_env": entry.api_key_env, "max_tokens": entry.max_tokens,
            "cache": entry.cache, "continue_on_block": entry.continue_on_block, "timeout_ms": cx.timeout_ms,
        });
        check_egress(&settings, cx)?;
        let client = cx.settings.http.client()?;
        let hook = PromptHook::new(client, settings, &cx.settings.prompts)?
            .with_request_env(cx.settings.env.clone());
        Ok(Built::new(Arc::new(hook), "prompt".to_owned(), identity))
    }
}

/// A hook file's own `base_url` must be in the URL allowlist, as an HTTP
/// hook's URL must, and its `api_key_env` must be the provider's own
/// variable (or the engine's default) or one of the person's
/// `hook_secrets`: a hook file cannot send a secret where it likes.
pub(crate) fn check_egress(
    settings: &PromptSettings,
    cx: &BuildContext<'_>,
) -> Result<(), HookProblem> {
    let http = &cx.settings.http;
    if let Some(url) = &settings.base_url {
        http.may_call(url)?;
    }
    if let Some(restriction) = &http.restriction {
        // The provider's own URL too, when the organisation restricts.
        let defaults = &cx.settings.prompts;
        let provider = settings.provider.unwrap_or(defaults.provider);
        let url = settings
            .base_url
            .clone()
            .or_else(|| defaults.base_url.clone())
            .unwrap_or_else(|| provider.default_base_url().to_owned());
        if !restriction.allows(&url)
            && !restriction.allows(&format!("{}/", url.trim_end_matches('/')))
        {
            return Err(SetupError::UrlNotAllowed {
                url,
                allowed: restriction.patterns().to_vec(),
            }
            .into());
        }
    }
    if let Some(name) = &settings.api_key_env {
        let defaults = &cx.settings.prompts;
        let provider = settings.provider.unwrap_or(defaults.provider);
        let own = name == provider.default_key_env() || defaults.api_key_env.as_ref() == Some(name);
        if !own {
            http.may_send(name, "api_key_env")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_shape_the_model_may_give() {
        assert_eq!(
            read_answer(EventName::PreToolUse, r#"{"ok": true}"#)
                .unwrap()
                .decision,
            Decision::Proceed
        );
        assert_eq!(
            read_answer(
                EventName::PreToolUse,
                "```json\n{\"ok\": false, \"reason\": \"risky\"}\n```"
            )
            .unwrap()
            .decision,
            Decision::Deny {
                reason: "risky".into()
            }
        );
        assert_eq!(
            read_answer(
                EventName::PreToolUse,
                r#"Sure! {"safe": false, "reason": "deletes data"}"#
            )
            .unwrap()
            .decision,
            Decision::Deny {
                reason: "deletes data".into()
            }
        );
        assert_eq!(
            read_answer(
                EventName::PreToolUse,
                r#"{"decision": "block", "reason": "R"}"#
            )
            .unwrap()
            .decision,
            Decision::Deny { reason: "R".into() }
        );
        assert!(
            read_answer(EventName::PreToolUse, "looks fine to me")
                .unwrap_err()
                .to_string()
                .contains("did not answer with JSON")
        );
        assert!(
            read_answer(EventName::PreToolUse, "{not json}")
                .unwrap_err()
                .to_string()
                .contains("does not parse")
        );
    }

    #[test]
    fn an_impossible_stop_condition_lets_the_agent_stop_and_says_why_elsewhere_it_blocks() {
        let text = r#"{"ok": false, "impossible": true, "reason": "needs a GPU"}"#;
        let stop = read_answer(EventName::Stop, text).unwrap();
        assert_eq!(stop.decision, Decision::Proceed);
        assert_eq!(
            stop.system_message.as_deref(),
            Some("the stop condition can never be met: needs a GPU")
        );
        let subagent = read_answer(EventName::SubagentStop, text).unwrap();
        assert_eq!(subagent.decision, Decision::Proceed);
        let tool = read_answer(EventName::PreToolUse, text).unwrap();
        assert_eq!(
            tool.decision,
            Decision::Deny {
                reason: "needs a GPU".into()
            }
        );
        let not_met = read_answer(EventName::Stop, r#"{"ok": false, "reason": "tests fail"}"#);
        assert!(matches!(not_met.unwrap().decision, Decision::Deny { .. }));
        assert!(system_prompt(SYSTEM, EventName::Stop).contains("impossible"));
        assert!(!system_prompt(SYSTEM, EventName::PreToolUse).contains("impossible"));
    }

    #[test]
    fn arguments_is_the_whole_event_and_endpoints_follow_the_provider() {
        let settings = PromptSettings {
            prompt: "Judge: $ARGUMENTS".into(),
            provider: Some(Provider::OpenAi),
            base_url: Some("http://127.0.0.1:9/v1/".into()),
            ..PromptSettings::default()
        };
        let hook =
            PromptHook::new(reqwest::Client::new(), settings, &PromptDefaults::default()).unwrap();
        assert_eq!(hook.api.endpoint, "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(hook.api.key_env, "OPENAI_API_KEY");
        let event = Event::pre_tool_use("Bash", json!({"command": "ls"}));
        assert_eq!(
            hook.template.render(&event),
            format!("Judge: {}", event.to_json_string())
        );
        let bad = PromptSettings {
            prompt: "{{nope}}".into(),
            ..PromptSettings::default()
        };
        assert!(PromptHook::new(reqwest::Client::new(), bad, &PromptDefaults::default()).is_err());
    }
}
