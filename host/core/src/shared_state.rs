//! [`SharedState`]: session state that engines on several hosts must
//! agree on (replicas of `serve`): `once` marks, stop-loop counts and the
//! plugins' `kv`. The store is the library's (`RedisState`); the trait
//! sits here so that the wasm host's `kv` can use one without knowing
//! which.

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

    /// Apply `change` to the map named `map` as one step: only if every
    /// key in `change.read` still holds what it held when read, and the map
    /// then holds at most `max_keys` keys. `Ok(false)` when a value read
    /// has changed since (the caller runs again on the new values).
    ///
    /// # Errors
    /// When the store cannot be reached, or the map would be too full.
    fn map_commit(&self, map: &str, change: &MapChange, max_keys: usize) -> Result<bool, String>;

    /// How many calls have failed so far (for metrics); 0 for a store
    /// that cannot fail.
    fn failures(&self) -> u64 {
        0
    }
}

/// What one call did to a map: the values it read (as it first read them,
/// `None` for a key that was absent) and the values it set. Committed
/// whole or not at all ([`SharedState::map_commit`]), so that two hosts
/// running the same plugin for the same session at once cannot both count
/// from the same value.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MapChange {
    /// Each key read, with the value it had then.
    pub read: std::collections::BTreeMap<String, Option<String>>,
    /// Each key set, with its new value.
    pub written: std::collections::BTreeMap<String, String>,
}

impl MapChange {
    /// Whether every value read is what `current` holds now.
    pub fn still_holds<'a>(&self, mut current: impl FnMut(&str) -> Option<&'a str>) -> bool {
        self.read
            .iter()
            .all(|(key, seen)| current(key) == seen.as_deref())
    }

    /// How many keys `written` adds to a map holding `has(key)`.
    pub fn added_keys(&self, mut has: impl FnMut(&str) -> bool) -> usize {
        self.written.keys().filter(|key| !has(key)).count()
    }
}
