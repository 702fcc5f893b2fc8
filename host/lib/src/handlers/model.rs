//! A model behind an API, as prompt and agent hooks call it: where it is
//! (the provider's wire format and endpoint), which model, the API key's
//! variable (read per request, never written anywhere), and one request
//! sent with 429s retried while the hook's deadline allows.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_hooks_core::{HookError, HookId};

use super::egress::request_error;
use crate::RequestEnv;

/// Which wire format a model hook speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// The Anthropic Messages API (`POST {base_url}/v1/messages`).
    Anthropic,
    /// OpenAI-compatible chat completions (`POST {base_url}/chat/completions`).
    #[serde(rename = "openai")]
    OpenAi,
}

impl Provider {
    /// The provider's public API.
    pub(crate) fn default_base_url(self) -> &'static str {
        match self {
            Self::Anthropic => "https://api.anthropic.com",
            Self::OpenAi => "https://api.openai.com/v1",
        }
    }

    /// The variable its key is usually in.
    pub(crate) fn default_key_env(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::OpenAi => "OPENAI_API_KEY",
        }
    }
}

/// At most this many retries after a 429.
const RATE_LIMIT_RETRIES: usize = 2;

/// One model to ask.
#[derive(Debug, Clone)]
pub(crate) struct ModelApi {
    pub(crate) client: reqwest::Client,
    pub(crate) provider: Provider,
    /// The full URL requests go to.
    pub(crate) endpoint: String,
    pub(crate) model: String,
    /// The variable holding the API key.
    pub(crate) key_env: String,
    pub(crate) max_tokens: u32,
    /// Where the key's variable is read.
    pub(crate) request_env: RequestEnv,
}

impl ModelApi {
    /// A model at `base_url` (else the provider's public API).
    pub(crate) fn new(
        client: reqwest::Client,
        provider: Provider,
        base_url: Option<String>,
        model: String,
        key_env: Option<String>,
        max_tokens: u32,
    ) -> Self {
        let base = base_url.unwrap_or_else(|| provider.default_base_url().to_owned());
        let base = base.trim_end_matches('/');
        let endpoint = match provider {
            Provider::Anthropic => format!("{base}/v1/messages"),
            Provider::OpenAi => format!("{base}/chat/completions"),
        };
        Self {
            client,
            provider,
            endpoint,
            model,
            key_env: key_env.unwrap_or_else(|| provider.default_key_env().to_owned()),
            max_tokens,
            request_env: RequestEnv::default(),
        }
    }

    /// Send `body` and return the provider's JSON answer, retrying 429s
    /// (after their `retry-after`) while `deadline` allows. `limit_ms` is
    /// the hook's whole budget, named when it runs out.
    pub(crate) async fn send(
        &self,
        hook: &HookId,
        body: &Value,
        deadline: Instant,
        limit_ms: u64,
    ) -> Result<Value, HookError> {
        let timeout = || HookError::Timeout {
            hook: hook.clone(),
            limit_ms,
        };
        let failed = |message: String| HookError::Failed {
            hook: hook.clone(),
            message,
        };
        let api_key = self
            .request_env
            .var(&self.key_env)
            .filter(|k| !k.is_empty());
        if api_key.is_none() && self.provider == Provider::Anthropic {
            return Err(failed(format!(
                "`{}` is not set: no API key for the model",
                self.key_env
            )));
        }
        for attempt in 0..=RATE_LIMIT_RETRIES {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timeout());
            }
            let mut request = self.client.post(&self.endpoint).timeout(left).json(body);
            request = match (self.provider, &api_key) {
                (Provider::Anthropic, Some(key)) => request
                    .header("x-api-key", key)
                    .header("anthropic-version", "2023-06-01"),
                (Provider::OpenAi, Some(key)) => request.bearer_auth(key),
                (_, None) => request,
            };
            let response = request
                .send()
                .await
                .map_err(|e| request_error(hook, limit_ms, "calling the model", e))?;
            let status = response.status();
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let text = response
                .text()
                .await
                .map_err(|e| request_error(hook, limit_ms, "reading the model's answer", e))?;
            if status.as_u16() == 429 && attempt < RATE_LIMIT_RETRIES {
                let wait = Duration::from_secs(retry_after.unwrap_or(1));
                if Instant::now() + wait < deadline {
                    tracing::info!(hook = %hook, "rate limited; retrying in {wait:?}");
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            if !status.is_success() {
                return Err(HookError::HttpStatus {
                    hook: hook.clone(),
                    status: status.as_u16(),
                    body: error_message(&text),
                });
            }
            return serde_json::from_str(&text).map_err(|_| HookError::BadResult {
                hook: hook.clone(),
                message: format!(
                    "the provider's response has no text (it is not JSON): {}",
                    error_message(&text)
                ),
            });
        }
        Err(failed("still rate limited after retrying".into()))
    }

    /// The model's text in a provider's answer (`None`: it has none).
    pub(crate) fn text_of(&self, answer: &Value) -> Option<String> {
        match self.provider {
            Provider::Anthropic => Some(
                answer["content"]
                    .as_array()?
                    .iter()
                    .filter_map(|block| block["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
            ),
            Provider::OpenAi => answer["choices"][0]["message"]["content"]
                .as_str()
                .map(str::to_owned),
        }
    }
}

/// A provider's error body, short and on one line (`error.message` when it
/// has one).
pub(crate) fn error_message(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| body.to_owned());
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    line.chars().take(300).collect()
}
