//! The organisation's settings, beside its managed hook files in a
//! system-wide directory (`/etc/wasm-hooks/config.{yaml,yml,json}`):
//!
//! ```yaml
//! allow_managed_hooks_only: true          # no user or project hook runs
//! allowed_urls: ["https://hooks.corp.example/*"]   # HTTP and prompt hooks
//!                                         # may call these and nothing else
//! allowed_mcp_servers: [corp-mcp]         # the programs mcp_tool hooks may start
//! block_on_failure: true                  # managed hooks fail closed
//! limits: {event_deadline_ms: 20000}      # lowers the engine's limits; no
//!                                         # user setting raises them again
//! plugin_signers: [team.pub]              # keys (relative to this directory)
//! require_signed_plugins: true            # every wasm plugin is pulled from a
//!                                         # registry and signed by one of them
//! enforcement: warn                       # managed hooks' default where their
//!                                         # entry and file do not say
//! ```
//!
//! Unknown fields are errors naming the file, line and column.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::layers::EXTENSIONS;
use super::settings::LimitsDoc;
use crate::handlers::egress::UrlAllowlist;
use crate::oci::PublicKey;
use wasm_hooks_core::{Enforcement, Error};

/// What the organisation's `config.*` sets.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ManagedSettings {
    /// Run the managed hooks only.
    #[serde(default)]
    pub(crate) allow_managed_hooks_only: bool,
    /// The only URLs HTTP and prompt hooks may call (globs), on top of
    /// every other allowlist.
    pub(crate) allowed_urls: Option<Vec<String>>,
    /// The only programs `mcp_tool` hooks may start (a name or a path).
    pub(crate) allowed_mcp_servers: Option<Vec<String>>,
    /// Managed hooks deny when they fail (`on_failure: block`).
    #[serde(default)]
    pub(crate) block_on_failure: bool,
    /// The engine's limits, lowered for everyone.
    #[serde(default)]
    pub(crate) limits: LimitsDoc,
    /// Key files (relative to the directory) plugins may be signed by.
    #[serde(default)]
    plugin_signers: Vec<PathBuf>,
    /// Every wasm plugin outside the managed layer must come from a
    /// registry, signed by one of `plugin_signers`.
    #[serde(default)]
    pub(crate) require_signed_plugins: bool,
    /// The managed hooks' `enforcement` where their entry and file do not
    /// say.
    pub(crate) enforcement: Option<Enforcement>,
    /// `plugin_signers`, read.
    #[serde(skip)]
    pub(crate) signer_keys: Vec<PublicKey>,
}

impl ManagedSettings {
    /// The settings in `dir`, the first `config.*` found; none without one.
    ///
    /// # Errors
    /// A file that cannot be read or parsed, or a bad URL pattern.
    pub(crate) fn load(dir: &Path) -> Result<Self, Error> {
        let Some(path) = EXTENSIONS
            .iter()
            .map(|ext| dir.join(format!("config.{ext}")))
            .find(|p| p.is_file())
        else {
            return Ok(Self::default());
        };
        let text = super::read_text(&path, "the managed settings file")?;
        let mut settings: Self = super::parse::<Option<Self>>(&path, &text)?.unwrap_or_default();
        settings.signer_keys = settings
            .plugin_signers
            .iter()
            .map(|key| crate::oci::read_key(&dir.join(key)))
            .collect::<Result<_, _>>()
            .map_err(|e| Error::Config {
                path: path.clone(),
                line: None,
                column: None,
                message: format!("plugin_signers: {e}"),
            })?;
        if let Some(urls) = &settings.allowed_urls {
            UrlAllowlist::new(urls.iter().cloned()).map_err(|e| Error::Config {
                path: path.clone(),
                line: None,
                column: None,
                message: format!("allowed_urls: {e}"),
            })?;
        }
        Ok(settings)
    }

    /// The URL restriction, if the organisation sets one.
    pub(crate) fn url_restriction(&self) -> Option<UrlAllowlist> {
        self.allowed_urls
            .as_ref()
            .map(|urls| UrlAllowlist::new(urls.iter().cloned()).expect("checked when read"))
    }
}
