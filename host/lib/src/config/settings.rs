//! The engine's own settings file, beside the hook files:
//! `<project>/.wasm-hooks/config.{yaml,yml,json}`, then
//! `<user config>/wasm-hooks/config.{yaml,yml,json}`.
//!
//! ```yaml
//! audit_log: .wasm-hooks/audit.jsonl   # relative to the project
//! allow_urls: ["https://hooks.example.com/*"]   # the user's file only
//! secret_env: [DEPLOY_PASSPHRASE]      # also redacted from the audit log
//! untrusted_projects: sandboxed_only   # the user's file only
//! hook_secrets: [HOOKS_TOKEN]          # the user's file only: variables
//!                                      # HTTP and prompt hooks may send
//! ceilings: {timeout_ms: 10000}        # the user's file only: the most a
//!                                      # hook file's wasm limits may be
//! audit_key: ~/.config/wasm-hooks/audit.key   # the user's file only: seal
//!                                      # the audit log with this key
//! limits: {event_deadline_ms: 20000, max_hooks_per_event: 32}
//!                                      # the user's file only: may only
//!                                      # lower the engine's limits
//! plugin_signers: [~/.config/wasm-hooks/team.pub]
//!                                      # the user's file only: keys whose
//!                                      # signatures plugins pulled from a
//!                                      # registry must carry
//! require_signed_plugins: true         # any file: pulled plugins must be
//!                                      # signed by one of those keys
//! enforcement: dryrun                  # the user's file only: the person's
//!                                      # hooks are only recorded (`warn`:
//!                                      # told; `enforce`, the default)
//!                                      # where their entry and file do not say
//! ```
//!
//! A project's file may only narrow what the person set: it adds secret
//! names, and may name an audit log inside the project (which wins over
//! the user's), and only while the project is trusted. Widening keys
//! (`allow_urls`, `untrusted_projects`, `hook_secrets`, `ceilings`,
//! `audit_key`, `limits`, `enforcement`) and an audit log outside the
//! project are errors there: a cloned repository must not open egress or
//! append to `~/.bashrc`. Lists add up. Unknown fields are errors naming
//! the file, line and column.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::layers::EXTENSIONS;
use super::scope::Scope;
use crate::handlers::egress::UrlAllowlist;
use crate::oci::PublicKey;
use crate::trust::UntrustedProjects;
use wasm_hooks_core::{DispatchLimits, Enforcement, Error};
use wasm_hooks_wasm::LimitOverrides;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsDoc {
    audit_log: Option<PathBuf>,
    #[serde(default)]
    allow_urls: Vec<String>,
    #[serde(default)]
    secret_env: Vec<String>,
    #[serde(default)]
    hook_secrets: Vec<String>,
    untrusted_projects: Option<UntrustedProjects>,
    ceilings: Option<LimitOverrides>,
    audit_key: Option<PathBuf>,
    limits: Option<LimitsDoc>,
    #[serde(default)]
    plugin_signers: Vec<PathBuf>,
    #[serde(default)]
    require_signed_plugins: bool,
    enforcement: Option<Enforcement>,
}

/// The engine's limits a settings file may lower (`limits:`), in the
/// user's or the organisation's file: each only lowers what is in force.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsDoc {
    /// [`DispatchLimits::event_deadline_ms`].
    event_deadline_ms: Option<u64>,
    /// [`DispatchLimits::max_hooks_per_event`].
    max_hooks_per_event: Option<usize>,
}

impl LimitsDoc {
    /// `limits` lowered where this says less.
    pub(crate) fn lower(&self, limits: DispatchLimits) -> DispatchLimits {
        let mut lowered = limits;
        if let Some(ms) = self.event_deadline_ms {
            lowered = lowered.event_deadline_ms(ms);
        }
        if let Some(hooks) = self.max_hooks_per_event {
            lowered = lowered.max_hooks_per_event(hooks);
        }
        limits.min(lowered)
    }
}

/// The engine settings from every settings file, merged.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct EngineSettings {
    /// The user's audit log; a relative path is relative to `$HOME`.
    pub(crate) audit_log: Option<PathBuf>,
    /// The project's audit log (inside the project), used only while the
    /// project is trusted; it wins over the user's.
    pub(crate) project_audit_log: Option<PathBuf>,
    /// More URLs HTTP hooks may call (globs), from the user's file.
    pub(crate) allow_urls: Vec<String>,
    /// Variables whose values are secret whatever their names.
    pub(crate) secret_env: Vec<String>,
    /// What runs in an untrusted project, from the user's file.
    pub(crate) untrusted_projects: Option<UntrustedProjects>,
    /// Variables hooks may send (HTTP headers, API keys), from the user's
    /// file.
    pub(crate) hook_secrets: Vec<String>,
    /// The most a hook file's wasm `limits` may ask for, from the user's
    /// file (over [`wasm_hooks_wasm::WasmLimits::CEILINGS`]).
    pub(crate) ceilings: LimitOverrides,
    /// The key file the audit log is sealed with, from the user's file.
    pub(crate) audit_key: Option<PathBuf>,
    /// The engine's limits the user's file lowers.
    pub(crate) limits: LimitsDoc,
    /// The keys plugins pulled from registries may be signed by, from the
    /// user's file.
    pub(crate) plugin_signers: Vec<PublicKey>,
    /// Whether the user's file requires pulled plugins to be signed.
    pub(crate) require_signed_plugins: bool,
    /// The person's hooks' `enforcement` where their entry and file do
    /// not say, from the user's file.
    pub(crate) enforcement: Option<Enforcement>,
    /// Whether the project's file requires its own hooks' pulled plugins
    /// to be signed (it asks nothing of the person's hooks).
    pub(crate) project_requires_signed_plugins: bool,
    /// Each project's file read, with the sha256 (hex) of its bytes: trust
    /// checks those.
    pub(crate) read: Vec<(PathBuf, String)>,
}

/// One settings file: the file, where its relative paths start, whose.
pub(crate) struct SettingsFile {
    pub(crate) path: PathBuf,
    base: PathBuf,
    pub(crate) scope: Scope,
}

/// The existing settings files, the project's first.
pub(crate) fn settings_files(project: &Path, user_config: Option<&Path>) -> Vec<SettingsFile> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dirs = vec![(
        project.join(".wasm-hooks"),
        Some(project.to_owned()),
        Scope::Project,
    )];
    if let Some(user) = user_config {
        dirs.push((user.join("wasm-hooks"), home, Scope::User));
    }
    dirs.into_iter()
        .flat_map(|(dir, base, scope)| {
            EXTENSIONS.iter().filter_map(move |ext| {
                let path = dir.join(format!("config.{ext}"));
                let base = base.clone().unwrap_or_else(|| dir.clone());
                path.is_file().then_some(SettingsFile { path, base, scope })
            })
        })
        .collect()
}

impl EngineSettings {
    /// Read and merge `files` (highest precedence first), as listed by
    /// [`settings_files`]. With `leave_out_project`, a project's file that
    /// cannot be read, parsed or accepted is left out, its problem
    /// returned second, and the other files still apply.
    ///
    /// # Errors
    /// Every file that cannot be read or parsed, and every key a project's
    /// file may not set (a project's only without `leave_out_project`).
    pub(crate) fn load(
        files: &[SettingsFile],
        leave_out_project: bool,
    ) -> Result<(Self, Vec<Error>), Vec<Error>> {
        let mut merged = Self::default();
        let mut errors = Vec::new();
        let mut left_out = Vec::new();
        for file in files {
            let doc = super::read_text(&file.path, "the settings file")
                .inspect(|text| {
                    if file.scope == Scope::Project {
                        let sha = wasm_hooks_core::sha256_hex(text.as_bytes());
                        merged.read.push((file.path.clone(), sha));
                    }
                })
                .and_then(|text| super::parse::<Option<SettingsDoc>>(&file.path, &text));
            match doc.and_then(|doc| checked(file, doc.unwrap_or_default())) {
                Ok(doc) => match signer_keys(&doc.plugin_signers, file) {
                    Ok(keys) => {
                        merged.plugin_signers.extend(keys);
                        merged.add(doc, file);
                    }
                    Err(e) => errors.push(e),
                },
                Err(e) if leave_out_project && file.scope == Scope::Project => left_out.push(e),
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok((merged, left_out))
        } else {
            Err(errors)
        }
    }

    fn add(&mut self, doc: SettingsDoc, file: &SettingsFile) {
        let log = doc.audit_log.map(|p| expand_home(&p, &file.base));
        match file.scope {
            Scope::Project => {
                self.project_audit_log = self.project_audit_log.take().or(log);
                self.project_requires_signed_plugins |= doc.require_signed_plugins;
            }
            Scope::User | Scope::Managed => {
                self.audit_log = self.audit_log.take().or(log);
                self.untrusted_projects = self.untrusted_projects.or(doc.untrusted_projects);
                self.hook_secrets.extend(doc.hook_secrets);
                if let Some(ceilings) = doc.ceilings {
                    self.ceilings = ceilings;
                }
                let key = doc.audit_key.map(|p| expand_home(&p, &file.base));
                self.audit_key = self.audit_key.take().or(key);
                self.limits = doc.limits.unwrap_or(self.limits);
                self.require_signed_plugins |= doc.require_signed_plugins;
                self.enforcement = self.enforcement.or(doc.enforcement);
            }
        }
        self.allow_urls.extend(doc.allow_urls);
        self.secret_env.extend(doc.secret_env);
    }
}

/// The keys `plugin_signers` names, read (relative to the file's base,
/// `~` for home).
fn signer_keys(files: &[PathBuf], file: &SettingsFile) -> Result<Vec<PublicKey>, Error> {
    files
        .iter()
        .map(|key| {
            crate::oci::read_key(&expand_home(key, &file.base))
                .map_err(|e| problem(&file.path, format!("plugin_signers: {e}")))
        })
        .collect()
}

fn problem(path: &Path, message: String) -> Error {
    Error::Config {
        path: path.to_owned(),
        line: None,
        column: None,
        message,
    }
}

/// `doc` when its URL patterns are valid, and, in a project's file, when
/// it only narrows.
fn checked(file: &SettingsFile, doc: SettingsDoc) -> Result<SettingsDoc, Error> {
    if file.scope == Scope::Project {
        let user_only = |key: &str| {
            problem(
                &file.path,
                format!(
                    "`{key}` may only be set in the user's config (a project cannot widen what its hooks may do)"
                ),
            )
        };
        if !doc.allow_urls.is_empty() {
            return Err(user_only("allow_urls"));
        }
        if doc.untrusted_projects.is_some() {
            return Err(user_only("untrusted_projects"));
        }
        if !doc.hook_secrets.is_empty() {
            return Err(user_only("hook_secrets"));
        }
        if doc.ceilings.is_some() {
            return Err(user_only("ceilings"));
        }
        if doc.audit_key.is_some() {
            return Err(user_only("audit_key"));
        }
        if doc.limits.is_some() {
            return Err(user_only("limits"));
        }
        if !doc.plugin_signers.is_empty() {
            return Err(user_only("plugin_signers"));
        }
        if doc.enforcement.is_some() {
            return Err(problem(
                &file.path,
                "`enforcement` may only be set in the user's config, for the person's hooks: a project says it in its own hook files (a file's top-level `enforcement`, or an entry's), and cannot make anyone else's hooks a dry run".to_owned(),
            ));
        }
        if let Some(log) = &doc.audit_log {
            let path = expand_home(log, &file.base);
            if !inside(&path, &file.base) {
                return Err(problem(
                    &file.path,
                    format!(
                        "audit_log: `{}` is outside the project; a project's audit log stays inside it",
                        path.display()
                    ),
                ));
            }
        }
    }
    match UrlAllowlist::default().extended(doc.allow_urls.iter().cloned()) {
        Ok(_) => Ok(doc),
        Err(message) => Err(problem(&file.path, format!("allow_urls: {message}"))),
    }
}

/// Whether `path` is inside `dir`, links resolved (the file itself need
/// not exist yet: its directory is resolved).
fn inside(path: &Path, dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    let resolved = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => parent.canonicalize().map(|p| p.join(name)),
        _ => path.canonicalize(),
    };
    resolved.is_ok_and(|p| p.starts_with(&dir) && !p.is_symlink())
}

/// `~/x` under `$HOME`; a relative path under `base`.
fn expand_home(path: &Path, base: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => base.join(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_settings_win_and_lists_add_up() {
        let project = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".wasm-hooks")).unwrap();
        std::fs::create_dir_all(user.path().join("wasm-hooks")).unwrap();
        std::fs::write(
            project.path().join(".wasm-hooks/config.yaml"),
            "audit_log: logs/audit.jsonl\nsecret_env: [A]\n",
        )
        .unwrap();
        std::fs::write(
            user.path().join("wasm-hooks/config.json"),
            r#"{"audit_log": "/var/log/x.jsonl", "secret_env": ["B"], "allow_urls": ["https://h/*"]}"#,
        )
        .unwrap();
        std::fs::create_dir_all(project.path().join("logs")).unwrap();
        let files = settings_files(project.path(), Some(user.path()));
        let settings = EngineSettings::load(&files, false).unwrap().0;
        assert_eq!(
            settings.project_audit_log,
            Some(project.path().join("logs/audit.jsonl"))
        );
        assert_eq!(settings.audit_log, Some(PathBuf::from("/var/log/x.jsonl")));
        assert_eq!(settings.secret_env, ["A", "B"]);
        assert_eq!(settings.allow_urls, ["https://h/*"]);
    }

    #[test]
    fn unknown_fields_name_the_file_and_line() {
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".wasm-hooks")).unwrap();
        let file = project.path().join(".wasm-hooks/config.yaml");
        std::fs::write(&file, "audit_log: a.jsonl\naudit_logs: b\n").unwrap();
        let errors =
            EngineSettings::load(&settings_files(project.path(), None), false).unwrap_err();
        let message = errors[0].to_string();
        assert!(
            message.starts_with(&format!("{}:2:", file.display())),
            "{message}"
        );
        assert!(message.contains("audit_logs"), "{message}");
    }
}

#[cfg(test)]
mod widening {
    use super::*;

    fn project_config(text: &str) -> Result<EngineSettings, Vec<Error>> {
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".wasm-hooks")).unwrap();
        std::fs::write(project.path().join(".wasm-hooks/config.yaml"), text).unwrap();
        std::os::unix::fs::symlink("/tmp", project.path().join("out")).unwrap();
        EngineSettings::load(&settings_files(project.path(), None), false).map(|(s, _)| s)
    }

    fn refused(text: &str) -> String {
        project_config(text).unwrap_err()[0].to_string()
    }

    #[test]
    fn a_projects_config_cannot_set_the_engines_limits() {
        assert!(
            refused("limits:\n  event_deadline_ms: 1\n")
                .contains("`limits` may only be set in the user's config")
        );
    }

    #[test]
    fn h3_a_projects_config_cannot_widen_the_url_allowlist() {
        assert!(
            refused("allow_urls: ['*']\n")
                .contains("`allow_urls` may only be set in the user's config")
        );
        assert!(
            refused("untrusted_projects: trust_all\n").contains("`untrusted_projects` may only")
        );
    }

    #[test]
    fn h4_a_projects_audit_log_cannot_point_outside_the_project() {
        assert!(refused("audit_log: ~/.bashrc\n").contains("outside the project"));
        assert!(refused("audit_log: /etc/x.jsonl\n").contains("outside the project"));
        assert!(
            refused("audit_log: out/x.jsonl\n").contains("outside the project"),
            "through a link"
        );
        let inside =
            project_config("audit_log: .wasm-hooks/audit.jsonl\nsecret_env: [DEPLOY]\n").unwrap();
        assert!(inside.project_audit_log.is_some());
        assert_eq!(inside.secret_env, ["DEPLOY"], "a project may add secrets");
    }
}
