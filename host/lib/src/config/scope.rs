//! Whose a hook file is.

/// Whose a hook file is, which decides what it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Scope {
    /// A project's (`.wasm-hooks/`, `.claude/`): written by whoever wrote
    /// the repository, trusted only once the person says so.
    Project,
    /// The person's own (their config directory, or a file they named).
    User,
    /// The organisation's (a system-wide directory the person cannot
    /// write): always trusted, loaded first, never switched off below.
    Managed,
}

impl Scope {
    /// Its name, as state kept per layer is keyed (`kv`, `once` marks):
    /// a project's hook never shares the person's or the organisation's.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Managed => "managed",
        }
    }
}
