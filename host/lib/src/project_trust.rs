//! What the project's layers may do, given whether the person trusts the
//! project ([`crate::trust`]) and the user's `untrusted_projects` policy:
//! trusted, everything runs; untrusted, only sandboxed hooks run, as
//! untrusted hooks ([`wasm_hooks_core::HookSpec::trusted`]), or nothing
//! does; and the person is told once per session what was skipped (or
//! left out as broken) and the command that trusts it.
//!
//! Trust holds through change ([`hold`]): when a trusted project's files
//! differ from the version the person trusted, that version answers. Its
//! hooks run as trusted, a removed one included; one whose script or
//! plugin changed fails by its `on_failure` (a guard blocks, naming the
//! file); hooks new or changed since run as an untrusted project's do
//! (sandboxed only, and only to add safety), until the person trusts the
//! change. A project with no version to hold whose file does not load
//! blocks the events that guard an action ([`BrokenProject`]).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use wasm_hooks_core::{
    Attributed, Error, Event, EventPattern, Handler, HandlerFuture, HookError, HookId, HookOutput,
    HookSpec, OnFailure, Outcome, Reply, Review, Shown, sha256_hex,
};

use crate::config::{FileHooks, HookIdentity, Loader, Scope};
use crate::once::OnceMarks;
use crate::trust::{TrustRecord, TrustStatus, UntrustedProjects};

/// The handler of a hook that was left out: never runs it.
#[derive(Debug)]
struct LeftOut(&'static str);

impl Handler for LeftOut {
    fn handle<'a>(&'a self, hook: &'a HookId, _: &'a Event) -> HandlerFuture<'a> {
        let result = Err(HookError::Failed {
            hook: hook.clone(),
            message: format!("not run: left out ({})", self.0),
        });
        Box::pin(std::future::ready(Reply {
            result,
            output: HookOutput::default(),
        }))
    }
}

/// The handler of a trusted hook whose script or plugin changed since the
/// person trusted it: fails (so its `on_failure` decides: a guard blocks)
/// naming the files, never runs what changed.
#[derive(Debug)]
struct RunsChanged(Vec<PathBuf>);

impl Handler for RunsChanged {
    fn handle<'a>(&'a self, hook: &'a HookId, _: &'a Event) -> HandlerFuture<'a> {
        let files: Vec<String> = self
            .0
            .iter()
            .map(|f| Shown(&f.to_string_lossy()).to_string())
            .collect();
        let result = Err(HookError::Failed {
            hook: hook.clone(),
            message: format!(
                "not run: {} changed since you trusted this project (`wasm-hooks trust` shows the change and accepts it)",
                files.join(", ")
            ),
        });
        Box::pin(std::future::ready(Reply {
            result,
            output: HookOutput::default(),
        }))
    }
}

/// The handler standing for a project's files that do not load, where no
/// version the person trusted can answer for them: fails naming each
/// file, line and problem.
#[derive(Debug)]
struct BrokenProject(String);

impl Handler for BrokenProject {
    fn handle<'a>(&'a self, hook: &'a HookId, _: &'a Event) -> HandlerFuture<'a> {
        let result = Err(HookError::Failed {
            hook: hook.clone(),
            message: self.0.clone(),
        });
        Box::pin(std::future::ready(Reply {
            result,
            output: HookOutput::default(),
        }))
    }
}

/// The guard that a project's files that do not load (`problems`, each
/// naming its file and line) leave where no version the person trusted can
/// answer: on every event that guards an action it fails, and blocks
/// (`on_failure: block`) naming them; other events are not blocked (the
/// notice names what was left out), and every other layer's hooks still
/// run on every event. None when every file loads.
pub(crate) fn broken_project_guard(problems: &[Error]) -> Option<HookSpec> {
    if problems.is_empty() {
        return None;
    }
    let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let message = format!(
        "this project's hook or config files do not load, and it has no version you trusted to answer instead, so what it may guard is blocked until they are fixed (your own and the organisation's hooks still ran): {}",
        listed.join("; ")
    );
    let mut spec = HookSpec::new(
        BROKEN_PROJECT,
        EventPattern::guarding_actions(),
        Arc::new(BrokenProject(message)),
    )
    .with_on_failure(OnFailure::Block);
    spec.description = Some("stands for the project's files that do not load".to_owned());
    Some(spec)
}

/// The name of [`broken_project_guard`]'s hook.
const BROKEN_PROJECT: &str = "wasm-hooks/broken-project-files";

/// How one of a project's hooks differs from the version the person
/// trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookChange {
    /// New since: it runs as an untrusted project's hook until trusted.
    Added(HookId),
    /// Changed since (the same name, another hook): the trusted version
    /// runs, the new one as an untrusted project's hook.
    Changed(HookId),
    /// Removed since: it keeps running until the removal is trusted.
    Removed(HookId),
    /// The files it runs (a script, a plugin) changed: it fails by its
    /// `on_failure` until trusted.
    RunsChanged {
        /// The hook.
        hook: HookId,
        /// What changed.
        files: Vec<PathBuf>,
    },
}

impl std::fmt::Display for HookChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookChange::Added(hook) => {
                write!(f, "+ `{hook}`: new (runs sandboxed only until trusted)")
            }
            HookChange::Changed(hook) => write!(
                f,
                "~ `{hook}`: changed (the trusted version runs; the new one sandboxed only)"
            ),
            HookChange::Removed(hook) => {
                write!(
                    f,
                    "- `{hook}`: removed (still runs until the removal is trusted)"
                )
            }
            HookChange::RunsChanged { hook, files } => {
                let files: Vec<String> = files
                    .iter()
                    .map(|f| Shown(&f.to_string_lossy()).to_string())
                    .collect();
                write!(
                    f,
                    "! `{hook}`: {} changed (it fails by its on_failure until trusted)",
                    files.join(", ")
                )
            }
        }
    }
}

/// The project's layers as the version the person trusted holds them
/// (`record`'s texts): for each of its hook files `searched` (in layer
/// order) whose text differs from the trusted one, the trusted version's
/// hooks (marked held) and the current file's hooks that are not among
/// them (new or changed: pending, and their `enabled: false` entries
/// dropped: a pending change only adds safety); a file as trusted is read
/// as it is, its hooks held. A held hook whose files changed gets a
/// handler that fails naming them. With how each hook differs. When not
/// `apply`, the current files' layers as found (the changes still said).
pub(crate) fn hold(
    loader: &mut Loader,
    record: &TrustRecord,
    searched: &[PathBuf],
    mut current: Vec<(PathBuf, FileHooks)>,
    apply: bool,
) -> (Vec<FileHooks>, Vec<HookChange>) {
    let mut layers = Vec::new();
    let mut changes = Vec::new();
    for path in searched {
        let now = current
            .iter()
            .position(|(file, _)| file == path)
            .map(|at| current.remove(at).1);
        let trusted_text = record.text(path);
        let same = match (trusted_text, &now) {
            (Some(text), Some(now)) => now.sha256.as_deref() == Some(&*sha256_hex(text.as_bytes())),
            _ => false,
        };
        if same {
            let mut now = now.unwrap_or_default();
            for hook in &mut now.hooks {
                hold_hook(hook, record, &mut changes);
            }
            if !apply {
                now.hooks.iter_mut().for_each(|hook| hook.held = false);
            }
            layers.push(now);
            continue;
        }
        let trusted =
            trusted_text.and_then(|text| match loader.load_text(path, text, Scope::Project) {
                Ok(trusted) => Some(trusted),
                Err(problems) => {
                    // Trusted when it loaded: this build reads it otherwise (a
                    // kind's fields changed); nothing of it can answer.
                    tracing::warn!(
                        file = %path.display(),
                        "the trusted version of this file no longer loads: {}",
                        problems.first().map(ToString::to_string).unwrap_or_default()
                    );
                    None
                }
            });
        let mut trusted = trusted.unwrap_or_default();
        // A file there that did not load is said by its own notice, not
        // as every hook of it removed.
        let broken = now.is_none() && path.is_file();
        let mut now = now.unwrap_or_default();
        if !broken {
            changes.extend(differences(&trusted, &now));
        }
        for hook in &mut trusted.hooks {
            hold_hook(hook, record, &mut changes);
        }
        if apply {
            let kept: HashSet<HookIdentity> =
                trusted.hooks.iter().map(|h| h.identity.clone()).collect();
            now.hooks.retain(|hook| !kept.contains(&hook.identity));
            now.disabled.clear();
            layers.push(trusted);
        }
        layers.push(now);
    }
    (layers, changes)
}

/// How `now`'s hooks differ from `trusted`'s: by identity (the same hook
/// is unchanged), then by name (another hook under a trusted name is a
/// change; a trusted name no hook has now, a removal).
fn differences(trusted: &FileHooks, now: &FileHooks) -> Vec<HookChange> {
    let ids = |file: &FileHooks| -> HashSet<HookIdentity> {
        file.hooks.iter().map(|h| h.identity.clone()).collect()
    };
    let names = |file: &FileHooks| -> HashSet<HookId> {
        file.hooks.iter().map(|h| h.spec.id.clone()).collect()
    };
    let (trusted_ids, trusted_names) = (ids(trusted), names(trusted));
    let (now_ids, now_names) = (ids(now), names(now));
    let mut changes: Vec<HookChange> = now
        .hooks
        .iter()
        .filter(|hook| !trusted_ids.contains(&hook.identity))
        .map(|hook| {
            let id = hook.spec.id.clone();
            if trusted_names.contains(&id) {
                HookChange::Changed(id)
            } else {
                HookChange::Added(id)
            }
        })
        .collect();
    changes.extend(
        trusted
            .hooks
            .iter()
            .filter(|hook| !now_ids.contains(&hook.identity) && !now_names.contains(&hook.spec.id))
            .map(|hook| HookChange::Removed(hook.spec.id.clone())),
    );
    changes
}

/// Mark `hook` as the trusted version's; when a file it runs is not as
/// trusted, make it fail naming the files, and say so in `changes`.
fn hold_hook(
    hook: &mut crate::config::LoadedHook,
    record: &TrustRecord,
    changes: &mut Vec<HookChange>,
) {
    hook.held = true;
    let changed: Vec<PathBuf> = hook
        .executes
        .iter()
        .filter(|file| !record.holds(file))
        .cloned()
        .collect();
    if !changed.is_empty() {
        changes.push(HookChange::RunsChanged {
            hook: hook.spec.id.clone(),
            files: changed.clone(),
        });
        hook.spec.handler = Arc::new(RunsChanged(changed));
    }
}

/// A project's trust: the files it was (or would be) trusted with, and
/// whether it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectTrust {
    /// The project.
    pub project: PathBuf,
    /// Every file that decides what its layers run: hook files,
    /// `config.*`, and the files their hooks run or read as code.
    pub files: Vec<PathBuf>,
    /// Whether the person trusts it as it is.
    pub status: TrustStatus,
    /// The hook and settings files among `files` as they were read: their
    /// sha256 (hex), which trust checks and records (not the file as it
    /// may be by then).
    pub read: std::collections::BTreeMap<PathBuf, String>,
    /// What its hooks run that trust cannot pin (`hook `x`: runs `$TOOL`,
    /// which names a variable`): trusting it trusts these as they will be.
    pub unpinned: Vec<String>,
    /// How its hooks differ from the version the person trusted, when its
    /// files changed since (what `wasm-hooks trust` would accept).
    pub changes: Vec<HookChange>,
}

/// A hook that does not run: its project is not trusted, the
/// organisation runs its managed hooks only, or a higher layer switched it
/// off (`enabled: false`).
#[derive(Debug, Clone)]
pub struct SkippedHook {
    /// What it is: its name, where it is declared, what it would apply to
    /// (so that `explain` and `list` can still say whether it fits). Its
    /// handler does not run the hook ([`SkippedHook::new`]).
    pub spec: HookSpec,
    /// Its kind (`command`, `http`, `wasm`…).
    pub kind: &'static str,
    /// Why it does not run.
    pub why: &'static str,
}

impl SkippedHook {
    /// `spec`, of this `kind`, left out for `why`. What it would run is
    /// dropped: its handler becomes one that fails saying why, so a left-out
    /// hook cannot be run from here (an embedder calling
    /// `spec.handler` gets that failure, not the untrusted command).
    pub(crate) fn new(mut spec: HookSpec, kind: &'static str, why: &'static str) -> Self {
        spec.handler = Arc::new(LeftOut(why));
        Self { spec, kind, why }
    }

    /// Whether it was left out because its project is not trusted, or
    /// because it changed since (not switched off, nor below a
    /// managed-only policy).
    pub fn for_trust(&self) -> bool {
        self.why == UNTRUSTED || self.why == PENDING
    }
}

/// Why a project's hook is left out.
const UNTRUSTED: &str = "the project is not trusted (`wasm-hooks trust`)";
/// Why a project's new or changed hook is left out while the version the
/// person trusted answers.
const PENDING: &str =
    "new or changed since you trusted the project (`wasm-hooks trust` shows the change)";
/// Why a user's or project's hook is left out under a managed-only policy.
const MANAGED_ONLY: &str = "the organisation runs its managed hooks only";

/// Each layer's hooks that may run, given this project's trust, and those
/// left out; with `managed_only`, every hook below the managed layer is
/// left out; with `in_full`, an untrusted project's sandboxed hooks answer
/// as trusted ones (for a run nothing acts on). Applied to each layer before layers are merged, so that an
/// untrusted project's copy of a hook can never stand in for the person's
/// own (see [`crate::config::merge`]).
pub(crate) fn apply(
    layers: Vec<(Scope, FileHooks)>,
    trust: Option<&ProjectTrust>,
    policy: UntrustedProjects,
    managed_only: bool,
    in_full: bool,
) -> (Vec<(Scope, FileHooks)>, Vec<SkippedHook>) {
    let trusted =
        trust.is_none_or(|t| t.status.is_trusted()) || policy == UntrustedProjects::TrustAll;
    let holding = layers
        .iter()
        .any(|(_, found)| found.hooks.iter().any(|hook| hook.held));
    let mut skipped = Vec::new();
    let layers = layers
        .into_iter()
        .map(|(scope, mut found)| {
            let hooks = std::mem::take(&mut found.hooks);
            for mut hook in hooks {
                let why = if managed_only && scope != Scope::Managed {
                    MANAGED_ONLY
                } else if scope >= Scope::User || trusted || hook.held {
                    found.hooks.push(hook);
                    continue;
                } else if policy == UntrustedProjects::SandboxedOnly && hook.sandboxed {
                    hook.spec.trusted = in_full;
                    found.hooks.push(hook);
                    continue;
                } else if holding {
                    PENDING
                } else {
                    UNTRUSTED
                };
                skipped.push(SkippedHook::new(hook.spec, hook.kind, why));
            }
            (scope, found)
        })
        .collect();
    (layers, skipped)
}

/// Tells the person, once per session, that an untrusted project's hooks
/// (or its settings) were left out, and how to trust them; or that a
/// project file that does not load was left out while every other layer
/// ran.
#[derive(Debug)]
pub(crate) struct ProjectNotice {
    message: String,
    marks: Arc<OnceMarks>,
}

/// The pseudo-hook the notice is marked under, once per session and
/// message.
const NOTICE: &str = "wasm-hooks/untrusted-project";

impl ProjectNotice {
    /// A notice naming the project files left out because they do not
    /// load (`problems`, each naming its file); none when none was.
    pub(crate) fn broken(problems: &[Error], marks: Arc<OnceMarks>) -> Option<Self> {
        if problems.is_empty() {
            return None;
        }
        let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
        let message = format!(
            "left out this project's hook or config files that do not load (your own and the organisation's hooks still ran): {}",
            listed.join("; ")
        );
        Some(Self { message, marks })
    }

    /// A notice for `trust`'s project, naming what was `skipped` and
    /// whether its settings were left out; none when nothing was.
    pub(crate) fn untrusted(
        trust: &ProjectTrust,
        skipped: &[SkippedHook],
        settings_ignored: bool,
        marks: Arc<OnceMarks>,
    ) -> Option<Self> {
        if !trust.changes.is_empty() {
            return Some(Self::pending(trust, marks));
        }
        let skipped: Vec<&SkippedHook> = skipped.iter().filter(|s| s.why == UNTRUSTED).collect();
        if skipped.is_empty() && !settings_ignored {
            return None;
        }
        let mut left_out: Vec<String> = skipped
            .iter()
            .map(|s| format!("`{}` ({})", s.spec.id, s.kind))
            .collect();
        if settings_ignored {
            left_out.push("its config file".to_owned());
        }
        let why = match &trust.status {
            TrustStatus::Trusted => "",
            TrustStatus::Never => "not trusted",
            TrustStatus::Changed(_) => "not trusted since its hook files or scripts changed",
        };
        let message = format!(
            "this project's hooks are {why}: left out {}; sandboxed guards still run. Trust them with `wasm-hooks trust --project-dir {}`",
            left_out.join(", "),
            shlex::try_quote(&trust.project.to_string_lossy()).unwrap_or_default()
        );
        Some(Self { message, marks })
    }
}

impl ProjectNotice {
    /// The notice of a project whose files changed since the person
    /// trusted it: the trusted version answers; what differs; the one
    /// command that accepts it.
    fn pending(trust: &ProjectTrust, marks: Arc<OnceMarks>) -> Self {
        let changes: Vec<String> = trust.changes.iter().map(ToString::to_string).collect();
        let message = format!(
            "this project's hook files or what they run changed since you trusted it: the version you trusted still answers until you accept the change ({}). Review and accept it with `wasm-hooks trust --project-dir {}`",
            changes.join("; "),
            shlex::try_quote(&trust.project.to_string_lossy()).unwrap_or_default()
        );
        Self { message, marks }
    }
}

impl Review for ProjectNotice {
    fn review(&self, event: &Event, outcome: &mut Outcome) {
        // Marked per message: a new reason (files changed since) is told
        // again in the same session.
        let hook = HookId::new(format!(
            "{NOTICE}:{}",
            &sha256_hex(self.message.as_bytes())[..16]
        ));
        if self.marks.first(event.session_id(), &hook) {
            outcome.system_messages.push(Attributed {
                hook: HookId::new("wasm-hooks"),
                value: self.message.clone(),
            });
        }
    }
}

/// Several reviews, in order.
#[derive(Debug)]
pub(crate) struct Reviews(pub(crate) Vec<Arc<dyn Review>>);

impl Review for Reviews {
    fn review(&self, event: &Event, outcome: &mut Outcome) {
        for review in &self.0 {
            review.review(event, outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use wasm_hooks_core::{Decision, EventPattern, HookResult};

    use super::*;

    /// A left-out hook's spec still says what it would apply to, but its
    /// handler no longer runs what the hook runs.
    #[tokio::test]
    async fn a_left_out_hook_cannot_be_run_through_its_spec() {
        static RAN: AtomicBool = AtomicBool::new(false);
        let spec = HookSpec::from_fn("untrusted", EventPattern::any(), |_| async {
            RAN.store(true, Ordering::SeqCst);
            Ok(HookResult::new(Decision::Proceed))
        });
        let skipped = SkippedHook::new(spec, "command", UNTRUSTED);
        let event = Event::pre_tool_use("Bash", serde_json::json!({"command": "ls"}));
        let reply = skipped.spec.handler.handle(&skipped.spec.id, &event).await;
        assert!(
            matches!(&reply.result, Err(HookError::Failed { message, .. }) if message.starts_with("not run: left out")),
            "{reply:?}"
        );
        assert!(!RAN.load(Ordering::SeqCst));
        assert!(skipped.spec.misfit(&event).is_none(), "it would fit");
    }
}
