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

use globset::{Glob, GlobSet, GlobSetBuilder};
use regex::Regex;

use serde::Deserialize;
use serde_json::{Value, json};
use wasm_hooks_core::{
    Decision, Event, Handler, HandlerFuture, HookError, HookId, HookOutput, HookResult, Reply,
};

use crate::RequestEnv;

use super::answer;
use super::kind::{BuildContext, Built, HookKind, HookProblem, string_list, string_map};
use super::setup::SetupError;

/// Which URLs HTTP hooks may call: glob patterns over the whole URL.
#[derive(Debug, Clone)]
pub struct UrlAllowlist {
    patterns: Vec<String>,
    set: GlobSet,
}

/// The default allowlist: loopback addresses only.
const LOOPBACK: [&str; 6] = [
    "http://127.0.0.1:*",
    "http://127.0.0.1/*",
    "http://localhost:*",
    "http://localhost/*",
    // `[` opens a character class in a glob: escaped, it is the bracket of
    // an IPv6 address.
    r"http://\[::1\]:*",
    r"http://\[::1\]/*",
];

impl Default for UrlAllowlist {
    fn default() -> Self {
        /// Built once: every engine build asks for it several times.
        static LOOPBACK_ONLY: std::sync::LazyLock<UrlAllowlist> = std::sync::LazyLock::new(|| {
            UrlAllowlist::new(LOOPBACK).expect("the loopback patterns are valid globs")
        });
        LOOPBACK_ONLY.clone()
    }
}

impl UrlAllowlist {
    /// An allowlist of these glob patterns (`https://hooks.example.com/*`).
    ///
    /// # Errors
    /// When a pattern is not a valid glob.
    pub fn new<I, S>(patterns: I) -> Result<Self, SetupError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        let bad = |pattern: &str, e: globset::Error| SetupError::UrlPattern {
            pattern: pattern.to_owned(),
            message: e.to_string(),
        };
        let mut builder = GlobSetBuilder::new();
        for p in &patterns {
            builder.add(Glob::new(p).map_err(|e| bad(p, e))?);
        }
        let set = builder.build().map_err(|e| bad(&patterns.join(", "), e))?;
        Ok(Self { patterns, set })
    }

    /// This allowlist with more patterns.
    ///
    /// # Errors
    /// When a pattern is not a valid glob.
    pub fn extended<I, S>(&self, more: I) -> Result<Self, SetupError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut more = more.into_iter().map(Into::into).peekable();
        if more.peek().is_none() {
            return Ok(self.clone());
        }
        Self::new(self.patterns.iter().cloned().chain(more))
    }

    /// Whether `url` may be called: it parses, carries no credentials
    /// (`http://127.0.0.1:80@evil.com/` goes to evil.com), and matches a
    /// pattern.
    pub fn allows(&self, url: &str) -> bool {
        match reqwest::Url::parse(url) {
            Ok(parsed) => {
                parsed.username().is_empty()
                    && parsed.password().is_none()
                    && self.set.is_match(url)
            }
            Err(_) => false,
        }
    }

    /// The patterns, for error messages.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

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

/// A request that failed as a hook failure: a timeout names the limit,
/// anything else says what was being done (without the URL, which may carry
/// a query the person would rather not see in logs).
pub(crate) fn request_error(
    hook: &HookId,
    limit_ms: u64,
    doing: &str,
    e: reqwest::Error,
) -> HookError {
    if e.is_timeout() {
        HookError::Timeout {
            hook: hook.clone(),
            limit_ms,
        }
    } else {
        HookError::Failed {
            hook: hook.clone(),
            message: format!("{doing}: {}", e.without_url()),
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

/// What HTTP and prompt hooks share: the allowlist, the variables they may
/// send, and one client (one connection pool), made when the first hook
/// needs it.
pub(crate) struct HttpSettings {
    /// The URLs hooks may call.
    pub(crate) allowlist: UrlAllowlist,
    /// The variables a hook may send (in a header, as an API key): the
    /// person's `hook_secrets`.
    secrets: Vec<String>,
    /// The organisation's `allowed_urls`: no hook calls outside them.
    pub(crate) restriction: Option<UrlAllowlist>,
    client: Option<reqwest::Client>,
}

impl HttpSettings {
    /// Settings with this allowlist and these sendable variables, and no
    /// client yet.
    pub(crate) fn new(allowlist: UrlAllowlist, secrets: Vec<String>) -> Self {
        Self {
            allowlist,
            secrets,
            restriction: None,
            client: None,
        }
    }

    /// These settings, with the organisation's URL restriction.
    pub(crate) fn restricted(mut self, restriction: Option<UrlAllowlist>) -> Self {
        self.restriction = restriction;
        self
    }

    /// `Ok` when a hook may call `url`: it is in the allowlist, and in the
    /// organisation's `allowed_urls` when it sets them.
    pub(crate) fn may_call(&self, url: &str) -> Result<(), SetupError> {
        for list in std::iter::once(&self.allowlist).chain(&self.restriction) {
            if !list.allows(url) {
                return Err(SetupError::UrlNotAllowed {
                    url: url.to_owned(),
                    allowed: list.patterns().to_vec(),
                });
            }
        }
        Ok(())
    }

    /// `Ok` when a hook may send the variable `name` (its `field` says
    /// where the hook file names it).
    pub(crate) fn may_send(&self, name: &str, field: &str) -> Result<(), String> {
        if self.secrets.iter().any(|s| s == name) {
            return Ok(());
        }
        Err(format!(
            "`{field}` names `{name}`, which is not among the variables hooks may send: add it to `hook_secrets` in your own config (~/.config/wasm-hooks/config.yaml)"
        ))
    }

    /// The shared client, made on first use. It follows no redirect: only
    /// the URL checked against the allowlist is ever called.
    pub(crate) fn client(&mut self) -> Result<reqwest::Client, String> {
        if let Some(client) = &self.client {
            return Ok(client.clone());
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        self.client = Some(client.clone());
        Ok(client)
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
