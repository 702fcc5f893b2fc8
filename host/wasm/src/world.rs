//! Which WIT version a plugin was built for, and calling it in that
//! version: [`HookPre`] is a compiled plugin ready to instantiate, bound to
//! the bindings of its version (`v0_2`, the newest, or `v0_1`). The rest of
//! the crate sees only this and the newest version's answer type.

use wasm_hooks_core::Event;
use wasmtime::component::InstancePre;

use super::state::HostState;
use super::{abi, v0_1, v0_2};

/// The WIT package this host implements (the newest it serves).
pub const WIT_PACKAGE: &str = v0_2::WIT_PACKAGE;

/// Every WIT package this host serves, newest first.
pub(crate) const SERVED: [&str; 2] = [v0_2::WIT_PACKAGE, v0_1::WIT_PACKAGE];

/// What an incompatible plugin is told this host serves.
pub(crate) const SERVED_TEXT: &str = "wasm-hooks:hook@0.2.0 (and 0.1.x)";

/// The newest version's answer, which older versions' answers become.
pub(crate) use v0_2::WitOutcome;

/// Whether a plugin stamped `found` runs on this host.
pub(crate) fn served(found: &str) -> bool {
    SERVED
        .iter()
        .any(|supported| abi::compatible(found, supported))
}

/// A compiled plugin bound to the bindings of its WIT version.
pub(crate) enum HookPre {
    /// Built against 0.2.x.
    V0_2(v0_2::HookPre<HostState>),
    /// Built against 0.1.x.
    V0_1(v0_1::HookPre<HostState>),
}

impl HookPre {
    /// Bind `pre` to the newest version whose world it exports.
    ///
    /// # Errors
    /// When it fits none, with the newest version's complaint.
    pub(crate) fn new(pre: InstancePre<HostState>) -> Result<Self, String> {
        match v0_2::HookPre::new(pre.clone()) {
            Ok(bound) => Ok(Self::V0_2(bound)),
            Err(newest) => v0_1::HookPre::new(pre).map(Self::V0_1).map_err(|_| {
                format!(
                    "does not fit the hook world of {}: {newest}",
                    v0_2::WIT_PACKAGE
                )
            }),
        }
    }

    /// A new instance in `store`.
    pub(crate) async fn instantiate(
        &self,
        store: &mut wasmtime::Store<HostState>,
    ) -> wasmtime::Result<HookInstance> {
        Ok(match self {
            Self::V0_2(pre) => HookInstance::V0_2(pre.instantiate_async(store).await?),
            Self::V0_1(pre) => HookInstance::V0_1(pre.instantiate_async(store).await?),
        })
    }

    /// Add every served version's host interfaces to a linker.
    pub(crate) fn add_to_linker(
        linker: &mut wasmtime::component::Linker<HostState>,
    ) -> wasmtime::Result<()> {
        v0_2::add_to_linker(linker)?;
        v0_1::add_to_linker(linker)
    }
}

/// An instance of a plugin, in the bindings of its version.
pub(crate) enum HookInstance {
    /// Built against 0.2.x.
    V0_2(v0_2::Hook),
    /// Built against 0.1.x.
    V0_1(v0_1::Hook),
}

impl HookInstance {
    /// Call `handle` once, in the plugin's version. The outer error is a
    /// trap; the inner one the plugin's own `err`.
    pub(crate) async fn handle(
        &self,
        store: &mut wasmtime::Store<HostState>,
        event: &Event,
    ) -> wasmtime::Result<Result<WitOutcome, String>> {
        match self {
            Self::V0_2(hook) => v0_2::handle(hook, store, event).await,
            Self::V0_1(hook) => v0_1::handle(hook, store, event).await,
        }
    }
}
