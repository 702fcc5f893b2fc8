//! The engine's own settings file, beside the hook files:
//! `<project>/.wasm-hooks/config.{yaml,yml,json}`, then
//! `<user config>/wasm-hooks/config.{yaml,yml,json}`.
//!
//! ```yaml
//! audit_log: .wasm-hooks/audit.jsonl   # relative to the project
//! allow_urls: ["https://hooks.example.com/*"]
//! secret_env: [DEPLOY_PASSPHRASE]      # also redacted from the audit log
//! ```
//!
//! The project's file wins over the user's for `audit_log`; lists add up.
//! Unknown fields are errors naming the file, line and column.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::layers::EXTENSIONS;
use crate::handlers::http::UrlAllowlist;
use wasm_hooks_core::Error;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsDoc {
    audit_log: Option<PathBuf>,
    #[serde(default)]
    allow_urls: Vec<String>,
    #[serde(default)]
    secret_env: Vec<String>,
}

/// The engine settings from every settings file, merged.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct EngineSettings {
    /// Where to append the audit log; a relative path in a project's file
    /// is relative to the project, in the user's file to `$HOME`.
    pub(crate) audit_log: Option<PathBuf>,
    /// More URLs HTTP hooks may call (globs).
    pub(crate) allow_urls: Vec<String>,
    /// Variables whose values are secret whatever their names.
    pub(crate) secret_env: Vec<String>,
}

/// The existing settings files, the project's first; each with the
/// directory its relative paths start from.
pub(crate) fn settings_files(
    project: &Path,
    user_config: Option<&Path>,
) -> Vec<(PathBuf, PathBuf)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dirs = vec![(project.join(".wasm-hooks"), Some(project.to_owned()))];
    if let Some(user) = user_config {
        dirs.push((user.join("wasm-hooks"), home));
    }
    dirs.into_iter()
        .flat_map(|(dir, base)| {
            EXTENSIONS.iter().filter_map(move |ext| {
                let file = dir.join(format!("config.{ext}"));
                let base = base.clone().unwrap_or_else(|| dir.clone());
                file.is_file().then_some((file, base))
            })
        })
        .collect()
}

impl EngineSettings {
    /// Read and merge `files` (highest precedence first), as listed by
    /// [`settings_files`].
    ///
    /// # Errors
    /// Every file that cannot be read or parsed.
    pub(crate) fn load(files: &[(PathBuf, PathBuf)]) -> Result<Self, Vec<Error>> {
        let mut merged = Self::default();
        let mut errors = Vec::new();
        for (file, base) in files {
            let doc = std::fs::read_to_string(file)
                .map_err(|e| Error::Config {
                    path: file.clone(),
                    line: None,
                    column: None,
                    message: format!("cannot read it: {e}"),
                })
                .and_then(|text| super::parse::<Option<SettingsDoc>>(file, &text));
            match doc.and_then(|doc| checked(file, doc.unwrap_or_default())) {
                Ok(doc) => merged.add(doc, base),
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(merged)
        } else {
            Err(errors)
        }
    }

    fn add(&mut self, doc: SettingsDoc, base: &Path) {
        if self.audit_log.is_none() {
            self.audit_log = doc.audit_log.map(|p| expand_home(&p, base));
        }
        self.allow_urls.extend(doc.allow_urls);
        self.secret_env.extend(doc.secret_env);
    }
}

/// `doc` when its URL patterns are valid.
fn checked(file: &Path, doc: SettingsDoc) -> Result<SettingsDoc, Error> {
    match UrlAllowlist::default().extended(doc.allow_urls.iter().cloned()) {
        Ok(_) => Ok(doc),
        Err(message) => Err(Error::Config {
            path: file.to_owned(),
            line: None,
            column: None,
            message: format!("allow_urls: {message}"),
        }),
    }
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
        let files = settings_files(project.path(), Some(user.path()));
        let settings = EngineSettings::load(&files).unwrap();
        assert_eq!(
            settings.audit_log,
            Some(project.path().join("logs/audit.jsonl"))
        );
        assert_eq!(settings.secret_env, ["A", "B"]);
        assert_eq!(settings.allow_urls, ["https://h/*"]);
    }

    #[test]
    fn unknown_fields_name_the_file_and_line() {
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".wasm-hooks")).unwrap();
        let file = project.path().join(".wasm-hooks/config.yaml");
        std::fs::write(&file, "audit_log: a.jsonl\naudit_logs: b\n").unwrap();
        let errors = EngineSettings::load(&settings_files(project.path(), None)).unwrap_err();
        let message = errors[0].to_string();
        assert!(
            message.starts_with(&format!("{}:2:", file.display())),
            "{message}"
        );
        assert!(message.contains("audit_logs"), "{message}");
    }
}
