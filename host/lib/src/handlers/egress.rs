//! What hooks reaching the network share: the URLs they may call, the
//! variables they may send, one HTTP client, and how a failed request
//! reads.

use super::setup::SetupError;
use globset::{Glob, GlobSet, GlobSetBuilder};
use wasm_hooks_core::{HookError, HookId};

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
