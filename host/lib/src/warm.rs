//! [`WarmEngine`]: an engine kept warm across events, for `serve` and the
//! daemon alike. It is built from its builder, and built again when one
//! of its inputs changed ([`InputStamps`]: hook files, settings, locks,
//! the trust record, what its hooks run) or, for `serve`, on SIGHUP. What
//! a failed build leaves answering is its [`RebuildPolicy`]'s to say.
//!
//! Answering never builds ([`WarmEngine::answering`]): when the project's
//! trust is no longer what the engine was built with, the caller waits for
//! one rebuild on a blocking thread ([`WarmEngine::refreshed`]) that every
//! request waiting with it shares, so an async worker never builds and
//! a burst of requests after `trust --revoke` builds once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::{HookEngine, HookEngineBuilder, InputStamps};

/// What a build that fails leaves answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebuildPolicy {
    /// The last good engine goes on answering, and the problem stands
    /// until a build succeeds (`serve`: an edit with a typo never takes a
    /// fleet's guards down; `/ready` says so).
    KeepLastGood,
    /// No engine: every event is the hook files' failure until one of
    /// their inputs changes (the daemon, standing in for a process per
    /// event, which would not have the old engine either).
    Fail,
}

/// What a reload did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reloaded {
    /// No input changed.
    Unchanged,
    /// A new engine answers.
    Built,
    /// The build failed; see the policy for what answers.
    Failed(String),
}

/// Why the engine cannot answer now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAnswering {
    /// The project's trust is not what the engine was built with: it must
    /// be built again ([`WarmEngine::refreshed`]) before it answers.
    Stale,
    /// No engine, and why.
    Broken(String),
}

/// An engine kept warm; see the module's documentation.
#[derive(Debug)]
pub struct WarmEngine {
    /// The project, for messages and metrics.
    name: String,
    builder: Option<Arc<HookEngineBuilder>>,
    policy: RebuildPolicy,
    engine: RwLock<Option<Arc<HookEngine>>>,
    /// The inputs of the engine (or, after a failed build, of the files
    /// that would make one) as they were read.
    stamps: Mutex<InputStamps>,
    /// Why the last build failed, while it stands.
    problem: RwLock<Option<String>>,
}

impl WarmEngine {
    /// An engine kept as it is: with no builder it is never built again.
    pub fn fixed(name: &str, engine: HookEngine) -> Self {
        Self {
            name: name.to_owned(),
            builder: None,
            policy: RebuildPolicy::KeepLastGood,
            engine: RwLock::new(Some(Arc::new(engine))),
            stamps: Mutex::new(InputStamps::default()),
            problem: RwLock::new(None),
        }
    }

    /// The engine `builder` builds, built now; when its files do not
    /// load, none yet, and the problem kept.
    pub fn build(name: &str, builder: HookEngineBuilder, policy: RebuildPolicy) -> Self {
        let warm = Self {
            name: name.to_owned(),
            builder: Some(Arc::new(builder)),
            policy,
            engine: RwLock::new(None),
            stamps: Mutex::new(InputStamps::default()),
            problem: RwLock::new(None),
        };
        warm.reload(true);
        warm
    }

    /// The project, for messages and metrics.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What builds it, if it is ever built again.
    pub fn builder(&self) -> Option<&Arc<HookEngineBuilder>> {
        self.builder.as_ref()
    }

    /// The engine as last built, if any (whatever its trust).
    pub fn engine(&self) -> Option<Arc<HookEngine>> {
        self.engine
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Why the last build failed, while it stands.
    pub fn problem(&self) -> Option<String> {
        self.problem
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Why the engine is not built from every file as it is, if it is
    /// not: its last build failed, or a project file that does not load
    /// was left out of it.
    pub fn not_ready(&self) -> Option<String> {
        if let Some(problem) = self.problem() {
            return Some(problem);
        }
        let left_out: Vec<String> = self
            .engine()?
            .left_out()
            .iter()
            .map(ToString::to_string)
            .collect();
        (!left_out.is_empty()).then(|| format!("left out: {}", left_out.join("; ")))
    }

    /// The engine to answer with now. Never builds: once the project's
    /// trust is no longer what the engine was built with (given, revoked,
    /// or a trusted script changed), it is [`NotAnswering::Stale`].
    ///
    /// # Errors
    /// [`NotAnswering`].
    pub fn answering(&self) -> Result<Arc<HookEngine>, NotAnswering> {
        let Some(engine) = self.engine() else {
            return Err(NotAnswering::Broken(format!(
                "the hooks of {} do not load: {}",
                self.name,
                self.problem().unwrap_or_default()
            )));
        };
        if engine.trust_is_current() {
            return Ok(engine);
        }
        if self.builder.is_none() {
            return Err(NotAnswering::Broken(
                "the project's trust changed since this server started; restart it".to_owned(),
            ));
        }
        Err(NotAnswering::Stale)
    }

    /// [`WarmEngine::answering`], after building the engine again (on a
    /// blocking thread) if its trust changed: of the requests waiting at
    /// once, the first builds (and is told [`Reloaded::Built`]) and the
    /// others take its engine.
    ///
    /// # Errors
    /// When the hooks do not load.
    pub async fn refreshed(self: &Arc<Self>) -> Result<(Arc<HookEngine>, Reloaded), String> {
        match self.answering() {
            Ok(engine) => return Ok((engine, Reloaded::Unchanged)),
            Err(NotAnswering::Broken(why)) => return Err(why),
            Err(NotAnswering::Stale) => {}
        }
        let warm = Arc::clone(self);
        let rebuilt = tokio::task::spawn_blocking(move || warm.rebuild_if_stale())
            .await
            .unwrap_or_else(|e| Reloaded::Failed(e.to_string()));
        match (rebuilt, self.answering()) {
            (rebuilt, Ok(engine)) => Ok((engine, rebuilt)),
            (Reloaded::Failed(why), _) => Err(format!(
                "the project's trust changed, and its hooks do not load: {why}"
            )),
            (_, Err(NotAnswering::Broken(why))) => Err(why),
            (_, Err(NotAnswering::Stale)) => {
                Err("the project's trust changed, and its hooks do not load".to_owned())
            }
        }
    }

    /// Build again if the engine's trust is still not current once the
    /// stamps are ours (another request may have built it meanwhile).
    fn rebuild_if_stale(&self) -> Reloaded {
        let stamps = self.stamps.lock().unwrap_or_else(PoisonError::into_inner);
        if self.engine().is_none_or(|engine| engine.trust_is_current()) {
            return Reloaded::Unchanged;
        }
        tracing::info!(project = %self.name, "the project's trust changed: building its engine again");
        self.build_now(stamps)
    }

    /// Build the engine again when an input changed (or `force`); what a
    /// failure leaves answering is the policy's.
    pub fn reload(&self, force: bool) -> Reloaded {
        if self.builder.is_none() {
            return Reloaded::Unchanged;
        }
        let mut stamps = self.stamps.lock().unwrap_or_else(PoisonError::into_inner);
        match stamps.changed() {
            None if !force => return Reloaded::Unchanged,
            None => {}
            Some(path) => {
                tracing::info!(project = %self.name, "building the engine again: {} changed", path.display());
            }
        }
        self.build_now(stamps)
    }

    fn build_now(&self, mut stamps: std::sync::MutexGuard<'_, InputStamps>) -> Reloaded {
        let Some(builder) = &self.builder else {
            return Reloaded::Unchanged;
        };
        let (built, stamped) = builder.build_stamped(stamps.paths().map(Path::to_owned));
        *stamps = stamped;
        let mut engine = self.engine.write().unwrap_or_else(PoisonError::into_inner);
        let mut problem = self.problem.write().unwrap_or_else(PoisonError::into_inner);
        match built {
            Ok(built) => {
                tracing::info!(project = %self.name, "engine built");
                *engine = Some(Arc::new(built));
                *problem = None;
                Reloaded::Built
            }
            Err(e) => {
                let why = e.to_string();
                match self.policy {
                    RebuildPolicy::KeepLastGood => tracing::warn!(
                        project = %self.name,
                        "its hooks do not load; the last good engine answers: {why}"
                    ),
                    RebuildPolicy::Fail => {
                        tracing::info!(project = %self.name, "engine not built: {why}");
                        *engine = None;
                    }
                }
                *problem = Some(why.clone());
                Reloaded::Failed(why)
            }
        }
    }

    /// The directories of every input, to watch.
    pub fn watched_dirs(&self) -> Vec<PathBuf> {
        let stamps = self.stamps.lock().unwrap_or_else(PoisonError::into_inner);
        let mut dirs: Vec<PathBuf> = stamps
            .paths()
            .filter_map(|p| p.parent().map(Path::to_owned))
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }
}
