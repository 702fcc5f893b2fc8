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

use std::cmp::Reverse;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::scope::Scope;
use super::{FileHooks, HookIdentity, LoadedHook};
use crate::project_trust::SkippedHook;

pub(crate) const EXTENSIONS: [&str; 3] = ["json", "yaml", "yml"];

/// The user's configuration directory: `$XDG_CONFIG_HOME`, or `~/.config`.
pub(crate) fn user_config_dir() -> Option<PathBuf> {
    wasm_hooks_core::xdg_dir("XDG_CONFIG_HOME", ".config")
}

/// One hook file of the search list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layer {
    /// The file.
    pub(crate) path: PathBuf,
    /// Whose it is.
    pub(crate) scope: Scope,
}

/// The existing default hook files, highest precedence first.
pub(crate) fn default_files(
    project: &Path,
    user_config: Option<&Path>,
    claude: bool,
) -> Vec<Layer> {
    searched_files(project, user_config, claude)
        .into_iter()
        .filter(|layer| layer.path.is_file())
        .collect()
}

/// Every default hook file looked for, highest precedence first, whether
/// it exists or not.
pub(crate) fn searched_files(
    project: &Path,
    user_config: Option<&Path>,
    claude: bool,
) -> Vec<Layer> {
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
    let project_files = candidates.into_iter().map(|path| Layer {
        path,
        scope: Scope::Project,
    });
    let user_files = user_config
        .map(|user| ours(user.join("wasm-hooks"), "hooks"))
        .unwrap_or_default()
        .into_iter()
        .map(|path| Layer {
            path,
            scope: Scope::User,
        });
    project_files.chain(user_files).collect()
}

/// The managed hook files in `dir` (`hooks.{json,yaml,yml}`).
pub(crate) fn managed_files(dir: &Path) -> Vec<Layer> {
    EXTENSIONS
        .iter()
        .map(|ext| dir.join(format!("hooks.{ext}")))
        .filter(|path| path.is_file())
        .map(|path| Layer {
            path,
            scope: Scope::Managed,
        })
        .collect()
}

/// Why a hook switched off by a higher layer does not run.
const SWITCHED_OFF: &str = "switched off by `enabled: false` in a higher layer";

/// Add layers up, highest precedence first: duplicates run once, as the
/// copy of the highest scope (the first of them in a tie), so a project's
/// copy of the person's hook never stands in for it. A name disabled in a
/// layer is dropped from the layers below it of the same scope, and from
/// every layer of a lower scope: a project can switch off its own hooks,
/// never the person's. The hooks dropped so come second.
pub(crate) fn merge(
    layers: Vec<(Scope, FileHooks)>,
) -> (Vec<(Scope, LoadedHook)>, Vec<SkippedHook>) {
    let disables: Vec<(usize, Scope, &str)> = layers
        .iter()
        .enumerate()
        .flat_map(|(at, (scope, found))| {
            found
                .disabled
                .iter()
                .map(move |name| (at, *scope, name.as_str()))
        })
        .collect();
    let switched_off = |at: usize, scope: Scope, name: &str| {
        disables.iter().any(|(by, by_scope, disabled)| {
            *disabled == name && (*by_scope > scope || (*by_scope == scope && *by < at))
        })
    };
    let switched: Vec<Vec<bool>> = layers
        .iter()
        .enumerate()
        .map(|(at, (scope, found))| {
            found
                .hooks
                .iter()
                .map(|hook| switched_off(at, *scope, hook.spec.id.as_str()))
                .collect()
        })
        .collect();
    // Which copy of each identity runs: the highest scope's, then the
    // first layer's.
    let mut kept: HashMap<&HookIdentity, (Scope, Reverse<usize>)> = HashMap::new();
    for (at, ((scope, found), off)) in layers.iter().zip(&switched).enumerate() {
        for (hook, off) in found.hooks.iter().zip(off) {
            if !off {
                let rank = (*scope, Reverse(at));
                kept.entry(&hook.identity)
                    .and_modify(|best| *best = (*best).max(rank))
                    .or_insert(rank);
            }
        }
    }
    let mut kept: HashMap<HookIdentity, usize> = kept
        .into_iter()
        .map(|(identity, (_, Reverse(at)))| (identity.clone(), at))
        .collect();
    let mut merged = Vec::new();
    let mut dropped = Vec::new();
    for (at, ((scope, found), off)) in layers.into_iter().zip(switched).enumerate() {
        for (hook, off) in found.hooks.into_iter().zip(off) {
            if off {
                dropped.push(SkippedHook::new(hook.spec.clone(), hook.kind, SWITCHED_OFF));
            } else if kept.get(&hook.identity) == Some(&at) {
                // Once: the same hook twice in one file runs once too.
                kept.remove(&hook.identity);
                merged.push((scope, hook));
            }
        }
    }
    (merged, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HookIdentity;
    use wasm_hooks_core::{Decision, EventName, EventPattern, HookResult, HookSpec};

    fn spec(name: &str) -> HookSpec {
        HookSpec::from_fn(name, EventPattern::event(EventName::Stop), |_| async {
            Ok(HookResult::new(Decision::Proceed))
        })
    }

    fn layer(scope: Scope, hooks: &[(&str, &str)], disabled: &[&str]) -> (Scope, FileHooks) {
        let found = FileHooks {
            hooks: hooks
                .iter()
                .map(|(id, name)| LoadedHook {
                    identity: HookIdentity::of_test(id),
                    spec: spec(name),
                    kind: "test",
                    executes: Vec::new(),
                    unpinned: Vec::new(),
                    sandboxed: false,
                    held: false,
                })
                .collect(),
            disabled: disabled.iter().map(|d| (*d).to_owned()).collect(),
            ..FileHooks::default()
        };
        (scope, found)
    }

    fn names(hooks: &[(Scope, LoadedHook)]) -> Vec<&str> {
        hooks.iter().map(|(_, h)| h.spec.id.as_str()).collect()
    }

    #[test]
    fn layers_add_up_higher_first_and_duplicates_run_once() {
        let (merged, _) = merge(vec![
            layer(
                Scope::Project,
                &[("x", "local-x"), ("shared", "shared-local")],
                &[],
            ),
            layer(
                Scope::Project,
                &[("shared", "shared-project"), ("y", "project-y")],
                &[],
            ),
        ]);
        assert_eq!(names(&merged), ["local-x", "shared-local", "project-y"]);
    }

    #[test]
    fn a_higher_layer_disables_a_lower_hook_by_name_but_not_its_own() {
        let (merged, dropped) = merge(vec![
            layer(Scope::Project, &[("a", "audit")], &["guard"]),
            layer(
                Scope::Project,
                &[("g", "guard"), ("b", "other")],
                &["audit"],
            ),
        ]);
        assert_eq!(names(&merged), ["audit", "other"]);
        let dropped: Vec<(&str, &str)> = dropped
            .iter()
            .map(|s| (s.spec.id.as_str(), s.why))
            .collect();
        assert_eq!(dropped, [("guard", SWITCHED_OFF)], "kept, to be explained");
    }

    #[test]
    fn c5_a_project_cannot_switch_off_the_persons_own_guard() {
        let (merged, _) = merge(vec![
            layer(Scope::Project, &[("p", "project-hook")], &["guard"]),
            layer(Scope::User, &[("g", "guard")], &["project-hook"]),
        ]);
        assert_eq!(
            names(&merged),
            ["guard"],
            "the project's disable does not reach the user's guard; the user's reaches the project's hook"
        );
    }

    #[test]
    fn a_projects_copy_of_the_persons_hook_never_stands_in_for_it() {
        let (merged, _) = merge(vec![
            layer(
                Scope::Project,
                &[("guard", "project-copy"), ("p", "mine")],
                &[],
            ),
            layer(Scope::User, &[("guard", "users-guard")], &[]),
            layer(Scope::Managed, &[("m", "org"), ("m", "org-twice")], &[]),
        ]);
        assert_eq!(
            names(&merged),
            ["mine", "users-guard", "org"],
            "the user's copy runs, once; the same hook twice in one file runs once"
        );
        assert_eq!(merged[1].0, Scope::User);
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
        let paths = |claude| -> Vec<(PathBuf, Scope)> {
            default_files(project.path(), Some(user.path()), claude)
                .into_iter()
                .map(|l| (l.path, l.scope))
                .collect()
        };
        assert_eq!(
            paths(false),
            [
                (local.clone(), Scope::Project),
                (project_file.clone(), Scope::Project),
                (user_file.clone(), Scope::User)
            ]
        );
        assert_eq!(
            paths(true),
            [
                (local, Scope::Project),
                (project_file, Scope::Project),
                (claude, Scope::Project),
                (user_file, Scope::User)
            ]
        );
    }
}
