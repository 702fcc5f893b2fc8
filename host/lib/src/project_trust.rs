//! What the project's layers may do, given whether the person trusts the
//! project ([`crate::trust`]) and the user's `untrusted_projects` policy:
//! trusted, everything runs; untrusted, only sandboxed hooks run, as
//! untrusted hooks ([`wasm_hooks_core::HookSpec::trusted`]), or nothing
//! does; and the person is told once per session what was skipped (or
//! left out as broken) and the command that trusts it.

use std::path::PathBuf;
use std::sync::Arc;

use wasm_hooks_core::{
    Attributed, Error, Event, Handler, HandlerFuture, HookError, HookId, HookOutput, HookSpec,
    Outcome, Reply, Review, sha256_hex,
};

use crate::config::{FileHooks, Scope};
use crate::once::OnceMarks;
use crate::trust::{TrustStatus, UntrustedProjects};

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

    /// Whether it was left out because its project is not trusted (not
    /// switched off, nor below a managed-only policy).
    pub fn for_trust(&self) -> bool {
        self.why == UNTRUSTED
    }
}

/// Why a project's hook is left out.
const UNTRUSTED: &str = "the project is not trusted (`wasm-hooks trust`)";
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
    let mut skipped = Vec::new();
    let layers = layers
        .into_iter()
        .map(|(scope, mut found)| {
            let hooks = std::mem::take(&mut found.hooks);
            for mut hook in hooks {
                let why = if managed_only && scope != Scope::Managed {
                    MANAGED_ONLY
                } else if scope >= Scope::User || trusted {
                    found.hooks.push(hook);
                    continue;
                } else if policy == UntrustedProjects::SandboxedOnly && hook.sandboxed {
                    hook.spec.trusted = in_full;
                    found.hooks.push(hook);
                    continue;
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
