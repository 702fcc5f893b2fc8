//! [`SharedState`]: session state that engines on several hosts must
//! agree on (replicas of `serve`): `once` marks, stop-loop counts and the
//! plugins' `kv`. The stores are the library's (`EmbeddedState` in memory,
//! `RedisState`); the trait sits here so that the wasm host's `kv` can use
//! one without knowing which.

/// Session state shared by the engines that answer one session. A call
/// that cannot reach the store fails; the caller does what keeps a guard a
/// guard.
pub trait SharedState: Send + Sync + std::fmt::Debug {
    /// Set `key` unless it is set; whether this call set it.
    ///
    /// # Errors
    /// When the store cannot be reached.
    fn set_once(&self, key: &str) -> Result<bool, String>;

    /// The counter `key` (0 when unset).
    ///
    /// # Errors
    /// When the store cannot be reached.
    fn count(&self, key: &str) -> Result<u32, String>;

    /// Set the counter `key` (0 removes it).
    ///
    /// # Errors
    /// When the store cannot be reached.
    fn set_count(&self, key: &str, value: u32) -> Result<(), String>;

    /// The value under `key` in the map named `map`.
    ///
    /// # Errors
    /// When the store cannot be reached.
    fn map_get(&self, map: &str, key: &str) -> Result<Option<String>, String>;

    /// Store `value` under `key` in the map named `map`, unless that would
    /// make it hold more than `max_keys` keys.
    ///
    /// # Errors
    /// When the store cannot be reached, or the map is full.
    fn map_set(&self, map: &str, key: &str, value: &str, max_keys: usize) -> Result<(), String>;

    /// How many calls have failed so far (for metrics); 0 for a store
    /// that cannot fail.
    fn failures(&self) -> u64 {
        0
    }
}
