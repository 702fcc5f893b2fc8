//! The per-call store data of a wasm hook: the WASI context (nothing
//! granted), the resource limiter, the hook's config, its log lines and its
//! key-value scope.
//! One [`HostState`] lives as long as its `Store`: one event's, or a warm
//! instance's, whose log lines and `kv` scope are replaced for each call.

use std::sync::Arc;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::kv::KvScope;
use super::limits::WasmLimits;
use super::refused::Refusals;
use wasm_hooks_core::HookId;

/// Everything one call's `Store` holds.
pub(crate) struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: Limiter,
    pub(crate) hook: HookId,
    pub(crate) config: Arc<str>,
    pub(crate) logs: LogLines,
    /// The `kv` scope of the call running (none between calls of a warm
    /// instance).
    pub(crate) kv: Option<KvScope>,
    pub(crate) refusals: Refusals,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Caps linear memory and tables, and remembers whether the memory cap was
/// what stopped the plugin (so the failure names the right limit).
pub(crate) struct Limiter {
    memory_bytes: usize,
    table_elements: usize,
    pub(crate) memory_hit: bool,
}

impl Limiter {
    pub(crate) fn new(limits: &WasmLimits) -> Self {
        Self {
            memory_bytes: limits.memory_bytes(),
            table_elements: usize::try_from(limits.max_table_elements).unwrap_or(usize::MAX),
            memory_hit: false,
        }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired <= self.memory_bytes;
        self.memory_hit |= !allowed;
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= self.table_elements)
    }
}

/// Log lines a plugin wrote through `host.log`, capped in bytes.
pub(crate) struct LogLines {
    cap: usize,
    used: usize,
    pub(crate) lines: Vec<String>,
    pub(crate) truncated: bool,
}

impl LogLines {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            used: 0,
            lines: Vec::new(),
            truncated: false,
        }
    }

    /// Keep `line` if it fits; whether it did (the first line that does
    /// not ends the log: a contiguous prefix is kept).
    pub(crate) fn push(&mut self, line: String) -> bool {
        if self.truncated || self.used + line.len() > self.cap {
            self.truncated = true;
            false
        } else {
            self.used += line.len();
            self.lines.push(line);
            true
        }
    }
}

impl HostState {
    /// `kv.get` of every WIT version: the running call's view.
    pub(crate) fn kv_get(&mut self, key: &str) -> Option<String> {
        self.kv.as_mut()?.get(key)
    }

    /// `kv.set` of every WIT version: into the running call's view.
    pub(crate) fn kv_set(&mut self, key: String, value: String) -> Result<(), String> {
        match &mut self.kv {
            Some(kv) => kv.set(key, value),
            None => Err("kv: no call is running".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_growth_past_the_cap_is_refused_and_remembered() {
        let limits = WasmLimits {
            memory_mb: 1,
            ..WasmLimits::default()
        };
        let mut l = Limiter::new(&limits);
        assert!(l.memory_growing(0, 1 << 20, None).unwrap());
        assert!(!l.memory_hit);
        assert!(!l.memory_growing(1 << 20, (1 << 20) + 65536, None).unwrap());
        assert!(l.memory_hit);
    }

    #[test]
    fn table_growth_past_the_limit_is_refused() {
        let limits = WasmLimits {
            max_table_elements: 100,
            ..WasmLimits::default()
        };
        let mut l = Limiter::new(&limits);
        assert!(l.table_growing(10, 100, None).unwrap());
        assert!(!l.table_growing(100, 101, None).unwrap());
        assert!(!l.memory_hit, "a table is not memory");
    }

    #[test]
    fn log_lines_stop_at_the_cap() {
        let mut logs = LogLines::new(10);
        logs.push("12345".into());
        logs.push("678901".into());
        logs.push("abcde".into());
        assert_eq!(logs.lines, ["12345"]);
        assert!(logs.truncated);
    }
}
