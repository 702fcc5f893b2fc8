//! Where hook files are looked for, and how layers add up.
//!
//! The default search list, highest precedence first:
//! 1. `<project>/.wasm-hooks/hooks.local.{json,yaml,yml}` (meant to be
//!    git-ignored);
//! 2. `<project>/.claude/settings.local.json`, when Claude Code settings
//!    are asked for;
//! 3. `<project>/.wasm-hooks/hooks.{json,yaml,yml}`;
//! 4. `<project>/.claude/settings.json`, when asked for;
//! 5. `<user config>/wasm-hooks/hooks.{json,yaml,yml}`, where the user
//!    config directory is `$XDG_CONFIG_HOME` or `~/.config`.
//!
//! Files missing from the list are skipped. Hooks from every layer add up,
//! higher layers' first; the same hook in two layers runs once; an
//! `enabled: false` entry with a `name` switches off that hook in lower
//! layers.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::FileHooks;
use wasm_hooks_core::HookSpec;

pub(super) const EXTENSIONS: [&str; 3] = ["json", "yaml", "yml"];

/// The user's configuration directory: `$XDG_CONFIG_HOME`, or `~/.config`.
pub(crate) fn user_config_dir() -> Option<PathBuf> {
    wasm_hooks_core::xdg_dir("XDG_CONFIG_HOME", ".config")
}

/// The existing default hook files, highest precedence first.
pub(crate) fn default_files(
    project: &Path,
    user_config: Option<&Path>,
    claude: bool,
) -> Vec<PathBuf> {
    let ours = |dir: PathBuf, stem: &str| -> Vec<PathBuf> {
        EXTENSIONS
            .iter()
            .map(|ext| dir.join(format!("{stem}.{ext}")))
            .collect()
    };
    let project_dir = project.join(".wasm-hooks");
    let claude_dir = project.join(".claude");
    let mut candidates = ours(project_dir.clone(), "hooks.local");
    if claude {
        candidates.push(claude_dir.join("settings.local.json"));
    }
    candidates.extend(ours(project_dir, "hooks"));
    if claude {
        candidates.push(claude_dir.join("settings.json"));
    }
    if let Some(user) = user_config {
        candidates.extend(ours(user.join("wasm-hooks"), "hooks"));
    }
    candidates.into_iter().filter(|p| p.is_file()).collect()
}

/// Add layers up, highest precedence first: duplicates run once, and names
/// disabled in a layer are dropped from the layers below it.
pub(crate) fn merge(layers: Vec<FileHooks>) -> Vec<HookSpec> {
    let mut seen = HashSet::new();
    let mut disabled_above = HashSet::new();
    let mut merged = Vec::new();
    for layer in layers {
        for (identity, spec) in layer.hooks {
            if !disabled_above.contains(spec.id.as_str()) && seen.insert(identity) {
                merged.push(spec);
            }
        }
        disabled_above.extend(layer.disabled);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HookIdentity;
    use wasm_hooks_core::{Decision, EventName, EventPattern, HookResult};

    fn spec(name: &str) -> HookSpec {
        HookSpec::from_fn(name, EventPattern::event(EventName::Stop), |_| async {
            Ok(HookResult::new(Decision::Proceed))
        })
    }

    fn layer(hooks: &[(&str, &str)], disabled: &[&str]) -> FileHooks {
        FileHooks {
            hooks: hooks
                .iter()
                .map(|(id, name)| (HookIdentity::of_test(id), spec(name)))
                .collect(),
            disabled: disabled.iter().map(|d| (*d).to_owned()).collect(),
        }
    }

    fn names(specs: &[HookSpec]) -> Vec<&str> {
        specs.iter().map(|s| s.id.as_str()).collect()
    }

    #[test]
    fn layers_add_up_higher_first_and_duplicates_run_once() {
        let merged = merge(vec![
            layer(&[("x", "local-x"), ("shared", "shared-local")], &[]),
            layer(&[("shared", "shared-project"), ("y", "project-y")], &[]),
        ]);
        assert_eq!(names(&merged), ["local-x", "shared-local", "project-y"]);
    }

    #[test]
    fn a_higher_layer_disables_a_lower_hook_by_name_but_not_its_own() {
        let merged = merge(vec![
            layer(&[("a", "audit")], &["guard"]),
            layer(&[("g", "guard"), ("b", "other")], &["audit"]),
        ]);
        assert_eq!(names(&merged), ["audit", "other"]);
    }

    #[test]
    fn the_search_list_is_in_precedence_order_and_skips_missing_files() {
        let project = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        let touch = |p: PathBuf| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "{}").unwrap();
            p
        };
        let user_file = touch(user.path().join("wasm-hooks/hooks.yaml"));
        let project_file = touch(project.path().join(".wasm-hooks/hooks.json"));
        let claude = touch(project.path().join(".claude/settings.json"));
        let local = touch(project.path().join(".wasm-hooks/hooks.local.json"));
        assert_eq!(
            default_files(project.path(), Some(user.path()), false),
            [local.clone(), project_file.clone(), user_file.clone()]
        );
        assert_eq!(
            default_files(project.path(), Some(user.path()), true),
            [local, project_file, claude, user_file]
        );
    }
}
