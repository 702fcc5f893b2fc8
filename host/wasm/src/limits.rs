//! Per-call resource limits for wasm hooks: the engine-wide defaults
//! ([`WasmLimits`]) and a hook file's overrides ([`LimitOverrides`]).

use serde::{Deserialize, Serialize};

/// The limits one wasm hook call runs under. Units are in the field names.
///
/// | field | default | why |
/// |---|---|---|
/// | `fuel` | 1 000 000 000 | deterministic instruction budget; a spinning plugin stops in ~0.1 s |
/// | `timeout_ms` | 1 000 | wall-clock deadline (epochs, and a timer for blocked host calls) |
/// | `memory_mb` | 64 | linear memory cap; a serde_json plugin needs ~2 MiB |
/// | `max_result_kb` | 1 024 | the answer's strings together |
/// | `max_output_kb` | 64 | captured stdout, stderr and log lines, each |
/// | `max_table_elements` | 10 000 | entries of any one wasm table; Rust plugins use a few hundred |
///
/// The wasm stack (512 KiB) belongs to the engine, not to a hook: see
/// [`WasmRuntimeBuilder::max_wasm_stack_kb`](super::WasmRuntimeBuilder::max_wasm_stack_kb).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WasmLimits {
    /// Instruction budget (wasmtime fuel units).
    pub fuel: u64,
    /// Wall-clock deadline in milliseconds.
    pub timeout_ms: u64,
    /// Linear memory cap in MiB.
    pub memory_mb: u64,
    /// Maximum size of the answer in KiB.
    pub max_result_kb: u64,
    /// Maximum captured stdout, stderr and log output in KiB, each.
    pub max_output_kb: u64,
    /// Maximum entries of any one wasm table.
    pub max_table_elements: u64,
}

impl Default for WasmLimits {
    fn default() -> Self {
        Self {
            fuel: 1_000_000_000,
            timeout_ms: 1_000,
            memory_mb: 64,
            max_result_kb: 1_024,
            max_output_kb: 64,
            max_table_elements: 10_000,
        }
    }
}

/// A hook file's `limits` object: each field given replaces the engine-wide
/// default; unknown fields are rejected.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct LimitOverrides {
    /// See [`WasmLimits::fuel`].
    pub fuel: Option<u64>,
    /// See [`WasmLimits::timeout_ms`].
    pub timeout_ms: Option<u64>,
    /// See [`WasmLimits::memory_mb`].
    pub memory_mb: Option<u64>,
    /// See [`WasmLimits::max_result_kb`].
    pub max_result_kb: Option<u64>,
    /// See [`WasmLimits::max_output_kb`].
    pub max_output_kb: Option<u64>,
    /// See [`WasmLimits::max_table_elements`].
    pub max_table_elements: Option<u64>,
}

impl LimitOverrides {
    /// These overrides, none above `ceiling`, and the names of those that
    /// were (`timeout_ms 15000 > 5000`).
    pub fn capped(self, ceiling: &WasmLimits) -> (Self, Vec<String>) {
        let mut cut = Vec::new();
        let mut cap = |name: &str, asked: Option<u64>, most: u64| {
            asked.map(|v| {
                if v > most {
                    cut.push(format!("{name} {v} > {most}"));
                    most
                } else {
                    v
                }
            })
        };
        let capped = Self {
            fuel: cap("fuel", self.fuel, ceiling.fuel),
            timeout_ms: cap("timeout_ms", self.timeout_ms, ceiling.timeout_ms),
            memory_mb: cap("memory_mb", self.memory_mb, ceiling.memory_mb),
            max_result_kb: cap("max_result_kb", self.max_result_kb, ceiling.max_result_kb),
            max_output_kb: cap("max_output_kb", self.max_output_kb, ceiling.max_output_kb),
            max_table_elements: cap(
                "max_table_elements",
                self.max_table_elements,
                ceiling.max_table_elements,
            ),
        };
        (capped, cut)
    }
}

impl WasmLimits {
    /// The most a hook file may ask for unless the person raises it
    /// (`ceilings` in their config): 10 billion fuel, 5 s, 256 MiB of
    /// memory, 4 MiB of answer, 1 MiB of output, 100 000 table entries.
    pub const CEILINGS: WasmLimits = WasmLimits {
        fuel: 10_000_000_000,
        timeout_ms: 5_000,
        memory_mb: 256,
        max_result_kb: 4_096,
        max_output_kb: 1_024,
        max_table_elements: 100_000,
    };

    /// These limits with `overrides` applied.
    pub fn with(self, overrides: &LimitOverrides) -> Self {
        Self {
            fuel: overrides.fuel.unwrap_or(self.fuel),
            timeout_ms: overrides.timeout_ms.unwrap_or(self.timeout_ms),
            memory_mb: overrides.memory_mb.unwrap_or(self.memory_mb),
            max_result_kb: overrides.max_result_kb.unwrap_or(self.max_result_kb),
            max_output_kb: overrides.max_output_kb.unwrap_or(self.max_output_kb),
            max_table_elements: overrides
                .max_table_elements
                .unwrap_or(self.max_table_elements),
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
    }

    pub(crate) fn output_bytes(&self) -> usize {
        usize::try_from(self.max_output_kb.saturating_mul(1 << 10)).unwrap_or(usize::MAX)
    }

    pub(crate) fn result_bytes(&self) -> usize {
        usize::try_from(self.max_result_kb.saturating_mul(1 << 10)).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_only_what_they_name() {
        let o: LimitOverrides = serde_json::from_str(r#"{"fuel": 5, "memory_mb": 8}"#).unwrap();
        let l = WasmLimits::default().with(&o);
        assert_eq!((l.fuel, l.memory_mb), (5, 8));
        assert_eq!(l.timeout_ms, WasmLimits::default().timeout_ms);
    }

    #[test]
    fn unknown_limit_fields_are_rejected() {
        let err = serde_json::from_str::<LimitOverrides>(r#"{"timeout": 5}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `timeout`"), "{err}");
    }
}
