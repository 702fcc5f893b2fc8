//! HTTP hooks (`type: "http"`): POST the event JSON to a URL and read the
//! answer, as Claude Code's HTTP hooks do.
//!
//! The URL must match the engine's allowlist ([`UrlAllowlist`]; by default
//! only loopback addresses), checked when the hook file is loaded. Header
//! values may name environment variables (`$NAME` or `${NAME}`), and only
//! those the hook lists in `allowed_env`; they are filled in per request and
//! never logged. A 2xx response with a JSON body (any answer shape of
//! `docs/protocol.md`) or an empty body is the answer; any other status, a body
//! that is not a JSON answer, a timeout or a failed connection is a hook
//! failure. A redirect is never followed (its target was never checked
//! against the allowlist, and the request would carry the hook's headers
//! there): a 3xx is a failure like any other status.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use regex::Regex;

use serde::Deserialize;
use serde_json::{Value, json};
use wasm_hooks_core::{
    Decision, Event, Handler, HandlerFuture, HookError, HookId, HookOutput, HookResult, Reply,
};

use crate::RequestEnv;

use super::answer;
use super::egress::UrlAllowlist;
use super::egress::request_error;
use super::kind::{BuildContext, Built, HookKind, HookProblem, string_list, string_map};
use super::setup::SetupError;

pub(crate) static ENV_REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
        .expect("the variable pattern is valid")
});

/// The variable an [`ENV_REFERENCE`] match names (`$NAME` or `${NAME}`).
pub(crate) fn referenced<'t>(caps: &regex::Captures<'t>) -> &'t str {
    caps.get(1)
        .or_else(|| caps.get(2))
        .map_or("", |m| m.as_str())
}

/// An HTTP hook: a [`Handler`] that POSTs the event to a URL.
#[derive(Debug, Clone)]
pub struct HttpHook {
    client: reqwest::Client,
    url: String,
    headers: Vec<(String, String)>,
    timeout_ms: u64,
    /// Where the headers' variables are read.
    request_env: RequestEnv,
}

/// How long an HTTP hook may take unless its entry says otherwise.
pub const DEFAULT_HTTP_TIMEOUT_MS: u64 = 30_000;

impl HttpHook {
    /// A hook POSTing to `url` with these headers, whose `$NAME` references
    /// must all be in `allowed_env`.
    ///
    /// # Errors
    /// When the URL is not allowed, or a header names a variable not in
    /// `allowed_env`.
    pub fn new(
        client: reqwest::Client,
        url: &str,
        headers: Vec<(String, String)>,
        allowed_env: &[String],
        timeout_ms: Option<u64>,
        allowlist: &UrlAllowlist,
    ) -> Result<Self, SetupError> {
        if !allowlist.allows(url) {
            return Err(SetupError::UrlNotAllowed {
                url: url.to_owned(),
                allowed: allowlist.patterns().to_vec(),
            });
        }
        for (name, value) in &headers {
            for caps in ENV_REFERENCE.captures_iter(value) {
                let var = referenced(&caps);
                if !allowed_env.iter().any(|a| a == var) {
                    return Err(SetupError::VariableNotAllowed {
                        header: name.clone(),
                        variable: var.to_owned(),
                    });
                }
            }
        }
        Ok(Self {
            client,
            url: url.to_owned(),
            headers,
            timeout_ms: timeout_ms.unwrap_or(DEFAULT_HTTP_TIMEOUT_MS),
            request_env: RequestEnv::default(),
        })
    }

    /// This hook, reading its headers' variables from the request's own
    /// before the process's.
    pub fn with_request_env(mut self, env: RequestEnv) -> Self {
        self.request_env = env;
        self
    }

    async fn call(&self, hook: &HookId, event: &Event) -> Result<HookResult, HookError> {
        let mut request = self
            .client
            .post(&self.url)
            .timeout(Duration::from_millis(self.timeout_ms))
            .header("content-type", "application/json")
            .body(event.to_json_string());
        for (name, value) in &self.headers {
            let value = ENV_REFERENCE.replace_all(value, |caps: &regex::Captures<'_>| {
                self.request_env.var(referenced(caps)).unwrap_or_default()
            });
            request = request.header(name, value.as_ref());
        }
        let doing = format!("POST {}", self.url);
        let response = request
            .send()
            .await
            .map_err(|e| request_error(hook, self.timeout_ms, &doing, e))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| request_error(hook, self.timeout_ms, "reading the response", e))?;
        if !status.is_success() {
            return Err(HookError::HttpStatus {
                hook: hook.clone(),
                status: status.as_u16(),
                body: snippet(&body),
            });
        }
        match body.trim() {
            "" => Ok(HookResult::new(Decision::Proceed)),
            text => {
                answer::json_answer(event.name(), text).map_err(|message| HookError::BadResult {
                    hook: hook.clone(),
                    message: format!("response body: {message}"),
                })
            }
        }
    }
}

/// The start of a body, on one line, for an error message.
fn snippet(body: &str) -> String {
    let line: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

impl Handler for HttpHook {
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        Box::pin(async move {
            Reply {
                result: self.call(hook, event).await,
                output: HookOutput::default(),
            }
        })
    }

    fn details(&self) -> Vec<String> {
        let mut details = vec![format!("http: POST {}", self.url)];
        for (name, value) in &self.headers {
            let sends: Vec<&str> = ENV_REFERENCE
                .captures_iter(value)
                .map(|c| referenced(&c))
                .collect();
            details.push(if sends.is_empty() {
                format!("header {name}")
            } else {
                format!("header {name}, sending the variables {}", sends.join(", "))
            });
        }
        details
    }
}

/// The `http` kind.
pub(crate) struct HttpKind;

/// An HTTP hook's own fields.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct HttpEntry {
    /// Where the event is POSTed.
    #[schemars(with = "Option<String>")]
    url: Option<Value>,
    /// Extra headers; `${VAR}` expands variables named in `allowed_env`.
    #[schemars(with = "Option<std::collections::BTreeMap<String, String>>")]
    headers: Option<Value>,
    /// The variables headers may expand.
    #[serde(alias = "allowedEnvVars")]
    #[schemars(with = "Option<Vec<String>>")]
    allowed_env: Option<Value>,
}

impl HookKind for HttpKind {
    const TYPES: &'static [&'static str] = &["http"];
    type Entry = HttpEntry;

    fn build(entry: HttpEntry, cx: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        let Some(Value::String(url)) = &entry.url else {
            return Err("an http hook needs `url`, a string".into());
        };
        let headers = string_map(entry.headers.as_ref(), "headers")?;
        let allowed_env = string_list(entry.allowed_env.as_ref(), "allowed_env")?;
        let http = &mut cx.settings.http;
        http.may_call(url)?;
        for name in &allowed_env {
            http.may_send(name, "allowed_env")?;
        }
        let client = http.client()?;
        let hook = HttpHook::new(
            client,
            url,
            headers,
            &allowed_env,
            cx.timeout_ms,
            &http.allowlist,
        )?
        .with_request_env(cx.settings.env.clone());
        let identity = json!({
            "url": url, "headers": entry.headers, "allowed_env": entry.allowed_env, "timeout_ms": cx.timeout_ms,
        });
        Ok(Built::new(Arc::new(hook), url.clone(), identity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_allowlist_is_loopback_only() {
        let allow = UrlAllowlist::default();
        assert!(allow.allows("http://127.0.0.1:8080/hook"));
        assert!(allow.allows("http://localhost/hook"));
        assert!(allow.allows("http://[::1]:9000/"));
        assert!(!allow.allows("https://example.com/hook"));
        assert!(!allow.allows("http://127.0.0.1.evil.com/hook"));
        assert!(
            !allow.allows("http://127.0.0.1:80@evil.com/hook"),
            "credentials hide the real host"
        );
        assert!(!allow.allows("not a url"));
        let custom = UrlAllowlist::new(["https://hooks.example.com/*"]).unwrap();
        assert!(custom.allows("https://hooks.example.com/pre"));
        assert!(!custom.allows("https://hooks.example.com.evil/pre"));
    }

    #[test]
    fn headers_may_name_only_allowed_variables() {
        let client = reqwest::Client::new();
        let make = |headers: Vec<(&str, &str)>, allowed: &[&str]| {
            HttpHook::new(
                client.clone(),
                "http://127.0.0.1:1/",
                headers
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect(),
                &allowed.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
                None,
                &UrlAllowlist::default(),
            )
        };
        assert!(make(vec![("Authorization", "Bearer ${TOKEN}")], &["TOKEN"]).is_ok());
        let err = make(vec![("Authorization", "Bearer $SECRET")], &["TOKEN"]).unwrap_err();
        assert_eq!(
            err,
            SetupError::VariableNotAllowed {
                header: "Authorization".into(),
                variable: "SECRET".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "header `Authorization` names `$SECRET`, which is not in `allowed_env`"
        );
        let err = HttpHook::new(
            client.clone(),
            "https://example.com/",
            vec![],
            &[],
            None,
            &UrlAllowlist::default(),
        )
        .unwrap_err();
        assert!(matches!(err, SetupError::UrlNotAllowed { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("not in the engine's URL allowlist"),
            "{err}"
        );
    }
}
