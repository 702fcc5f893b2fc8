//! Instances a hook keeps between calls: warm ones (`instance: reuse`),
//! for plugins whose start is most of their cost (a Python or JavaScript
//! guest builds its interpreter's state on every fresh instance); and, for
//! every other hook, the next fresh instance a host made ahead between
//! events ([`Prepared`]), which no event has used.
//!
//! What carries from one call to the next: the guest's memory and globals
//! (module-level variables, caches, anything it allocated), and WASI
//! handles it left open. Nothing else: each call gets the hook's full fuel
//! and time again, a fresh `kv` view for its event's session, and its own
//! captured output and log lines. An instance is dropped, and the next
//! call gets a fresh one, after a trap or any limit, after
//! [`MAX_INSTANCE_CALLS`] calls, and when the plugin's file is reloaded; at most
//! [`MAX_IDLE`] wait per hook, and a call that finds none makes one.

use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use wasmtime::Store;

use super::compiled::Compiled;
use super::state::HostState;
use super::stdio::CappedPipe;
use super::world::HookInstance;

/// Calls one warm instance answers before it is replaced: state a plugin
/// leaks (a growing cache) is bounded by it.
pub const MAX_INSTANCE_CALLS: u32 = 1_000;

/// Warm instances kept per hook: as many events as are answered at once on
/// a small machine; more run on fresh instances.
pub const MAX_IDLE: usize = 8;

/// How a hook's plugin gets an instance for each event (`instance` in the
/// hook file).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum InstancePolicy {
    /// A fresh instance for every event: nothing carries from one to the
    /// next.
    #[default]
    Fresh,
    /// A warm instance, kept between events in a long-lived host (`serve`,
    /// an embedding program), replaced after a trap, a limit or 1,000
    /// calls. In `hook` every event still gets a fresh one. Its memory
    /// carries from one event to the next, whatever their sessions.
    Reuse,
}

/// A store with an instance in it (once made), and its captured output.
pub(crate) struct WarmInstance {
    pub(crate) store: Store<HostState>,
    pub(crate) stdout: CappedPipe,
    pub(crate) stderr: CappedPipe,
    /// Made by the first call.
    pub(crate) instance: Option<HookInstance>,
    /// The compiled version it is an instance of.
    pub(crate) compiled: Arc<Compiled>,
    /// Calls it answered.
    pub(crate) calls: u32,
    /// Fuel its instantiation burned ahead of its first call (made by
    /// [`Prepared`]'s host), charged to that call.
    pub(crate) start_fuel: u64,
}

/// The idle warm instances of one hook.
#[derive(Default)]
pub(crate) struct WarmPool {
    idle: Mutex<Vec<WarmInstance>>,
}

impl std::fmt::Debug for WarmPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WarmPool({} idle)", self.lock().len())
    }
}

impl WarmPool {
    /// An idle instance of `compiled`, if one waits (those of an older
    /// version are dropped).
    pub(crate) fn take(&self, compiled: &Arc<Compiled>) -> Option<WarmInstance> {
        let mut idle = self.lock();
        idle.retain(|warm| Arc::ptr_eq(&warm.compiled, compiled));
        idle.pop()
    }

    /// Keep `warm` for a later call, unless it answered its last call or
    /// enough wait already.
    pub(crate) fn give_back(&self, warm: WarmInstance) {
        let mut idle = self.lock();
        if warm.calls < MAX_INSTANCE_CALLS && idle.len() < MAX_IDLE {
            idle.push(warm);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<WarmInstance>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A fresh-instance hook's instance made ahead of its event (never called:
/// an event gets it as it would a new one), and the instance its last
/// event used, whose drop (its pool slot's reset) waits for the next
/// preparation. Both stay empty unless the host prepares
/// (`Handler::prepare`): a host that never does drops every instance
/// after its call, as before.
#[derive(Default)]
pub(crate) struct Prepared {
    next: Mutex<Option<WarmInstance>>,
    spent: Mutex<Option<WarmInstance>>,
    /// Whether the host prepares: then spent instances wait for it.
    preparing: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ready = lock(&self.next).is_some();
        write!(f, "Prepared({})", if ready { "ready" } else { "none" })
    }
}

impl Prepared {
    /// The instance made ahead, if it is of `compiled` (one of an older
    /// version is dropped).
    pub(crate) fn take(&self, compiled: &Arc<Compiled>) -> Option<WarmInstance> {
        // A host that never prepares (`serve`) takes no lock per call.
        if !self.preparing.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        lock(&self.next)
            .take()
            .filter(|ready| Arc::ptr_eq(&ready.compiled, compiled))
    }

    /// Keep `spent` (its call is over) until the next preparation drops
    /// it, when the host prepares; else drop it now.
    pub(crate) fn retire(&self, spent: WarmInstance) {
        if self.preparing.load(std::sync::atomic::Ordering::Relaxed) {
            *lock(&self.spent) = Some(spent);
        }
    }

    /// Start preparing: drop the spent instance; whether an instance of
    /// `compiled` is already waiting.
    pub(crate) fn begin(&self, compiled: &Arc<Compiled>) -> bool {
        self.preparing
            .store(true, std::sync::atomic::Ordering::Relaxed);
        drop(lock(&self.spent).take());
        lock(&self.next)
            .as_ref()
            .is_some_and(|ready| Arc::ptr_eq(&ready.compiled, compiled))
    }

    /// Keep `ready`, made ahead, for the next event.
    pub(crate) fn put(&self, ready: WarmInstance) {
        *lock(&self.next) = Some(ready);
    }
}

fn lock(slot: &Mutex<Option<WarmInstance>>) -> std::sync::MutexGuard<'_, Option<WarmInstance>> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}
