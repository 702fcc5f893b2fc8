//! The limits of one dispatch: how long the hooks of one event may take
//! together, and how many may run. Kept apart from each hook's own limits
//! (`timeout_ms`, fuel, memory), which bound one hook; these bound an
//! event, so that no number of slow hooks can hold an agent past its own
//! hook timeout (which it would take as "no opinion").

use std::time::Duration;

/// The limits [`HookRegistry::dispatch`](crate::HookRegistry::dispatch)
/// keeps for each event. What a limit cuts off fails by the hook's
/// `on_failure`, and blocks on an event that guards an action whatever
/// its `on_failure` says (a hook of a lower layer could otherwise push a
/// higher layer's guard past the limit and silence it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DispatchLimits {
    /// How long the foreground hooks of one event may take together, in
    /// milliseconds (default 30 000: half of the 60 s the agents give a
    /// hook command by default). A hook still running then is stopped; a
    /// hook not started by then does not start.
    pub event_deadline_ms: u64,
    /// How many foreground hooks may run for one event (default 64); the
    /// ones past it do not run.
    pub max_hooks_per_event: usize,
}

impl DispatchLimits {
    /// The defaults: 30 000 ms per event, 64 hooks per event.
    pub const DEFAULT: Self = Self {
        event_deadline_ms: 30_000,
        max_hooks_per_event: 64,
    };

    /// The share of an event's deadline, in percent, that a project's
    /// hooks ([`HookSpec::from_project`](crate::HookSpec::from_project))
    /// have together: past it, no more of them start and a running one is
    /// stopped, so that the person's and the organisation's hooks keep
    /// the rest whatever a repository ships.
    pub const PROJECT_SHARE_PERCENT: u32 = 50;

    /// How long a project's hooks may take together
    /// ([`Self::PROJECT_SHARE_PERCENT`] of the event deadline).
    pub fn project_deadline(&self) -> Duration {
        self.event_deadline() * Self::PROJECT_SHARE_PERCENT / 100
    }

    /// These limits with the event deadline set, in milliseconds.
    #[must_use]
    pub fn event_deadline_ms(mut self, ms: u64) -> Self {
        self.event_deadline_ms = ms;
        self
    }

    /// These limits with the most hooks per event set.
    #[must_use]
    pub fn max_hooks_per_event(mut self, hooks: usize) -> Self {
        self.max_hooks_per_event = hooks;
        self
    }

    /// The smaller of each limit of `self` and `other`.
    #[must_use]
    pub fn min(self, other: Self) -> Self {
        Self {
            event_deadline_ms: self.event_deadline_ms.min(other.event_deadline_ms),
            max_hooks_per_event: self.max_hooks_per_event.min(other.max_hooks_per_event),
        }
    }

    /// The event deadline as a duration.
    pub fn event_deadline(&self) -> Duration {
        Duration::from_millis(self.event_deadline_ms)
    }
}

impl Default for DispatchLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}
