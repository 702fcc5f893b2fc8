//! [`SessionStore`]: the state kept per session beside the hooks —
//! which `once` hooks already ran, how many stops in a row were blocked,
//! and the plugins' `kv` maps. One trait, three stores: [`MemoryStore`]
//! (an engine that lives across events), the library's `DirectoryStore`
//! (a process per event, `wasm-hooks hook`) and `RedisStore` (every
//! replica of `serve`). The trait sits here so that the wasm host's `kv`
//! uses a store without knowing which.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

/// Why a store could not do what it was asked. The caller then does what
/// keeps a guard a guard (a `once` hook runs again, a blocked stop stays
/// counted, a plugin's call that rests on a value it could not read is
/// not used).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store could not be reached, read or written (what failed is
    /// said, with no password in it).
    #[error("{0}")]
    Unreachable(String),
    /// The map would hold more keys than allowed.
    #[error("{max} keys already stored")]
    Full {
        /// The bound.
        max: usize,
    },
    /// This store keeps no maps (a directory's, for a process per event,
    /// whose plugins' values last one event).
    #[error("this store keeps no maps")]
    NoMaps,
}

/// Session state: marks, counters and maps, each under a key the caller
/// names (the caller puts the session and hook in it).
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// Set `key` unless it is set; whether this call set it (of two
    /// callers racing, one does).
    ///
    /// # Errors
    /// When the store cannot be reached.
    fn set_once(&self, key: &str) -> Result<bool, StoreError>;

    /// The counter `key` (0 when unset).
    ///
    /// # Errors
    /// When the store cannot be reached.
    fn count(&self, key: &str) -> Result<u32, StoreError>;

    /// Set the counter `key` (0 removes it).
    ///
    /// # Errors
    /// When the store cannot be reached.
    fn set_count(&self, key: &str, value: u32) -> Result<(), StoreError>;

    /// The value under `key` in the map named `map`.
    ///
    /// # Errors
    /// When the store cannot be reached, or keeps no maps.
    fn map_get(&self, map: &str, key: &str) -> Result<Option<String>, StoreError>;

    /// Apply `change` to the map named `map` as one step: only if every
    /// key in `change.read` still holds what it held when read, and the map
    /// then holds at most `max_keys` keys. `Ok(false)` when a value read
    /// has changed since (the caller runs again on the new values).
    ///
    /// # Errors
    /// When the store cannot be reached or keeps no maps, or the map would
    /// be too full.
    fn map_commit(
        &self,
        map: &str,
        change: &MapChange,
        max_keys: usize,
    ) -> Result<bool, StoreError>;

    /// How many calls have failed so far (for metrics); 0 for a store
    /// that cannot fail.
    fn failures(&self) -> u64 {
        0
    }
}

/// What one call did to a map: the values it read (as it first read them,
/// `None` for a key that was absent) and the values it set. Committed
/// whole or not at all ([`SessionStore::map_commit`]), so that two hosts
/// running the same plugin for the same session at once cannot both count
/// from the same value.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MapChange {
    /// Each key read, with the value it had then.
    pub read: BTreeMap<String, Option<String>>,
    /// Each key set, with its new value.
    pub written: BTreeMap<String, String>,
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

/// Maps kept at once by a [`MemoryStore`]; past it the least recently
/// used goes.
const MAX_MAPS: usize = 1024;
/// Bytes of keys and values a [`MemoryStore`] keeps in all maps together:
/// sessions come and go (a long `serve` sees thousands), and without this
/// bound the maps could grow to `MAX_MAPS` × 256 keys × 16 KiB, 4 GiB.
const MAX_MAP_BYTES: usize = 64 << 20;

/// A store in this process's memory, for an engine that lives across
/// events. Its maps are bounded (least recently used dropped first); it
/// never fails.
#[derive(Debug, Default)]
pub struct MemoryStore {
    marks: Mutex<HashSet<String>>,
    counts: Mutex<HashMap<String, u32>>,
    maps: Mutex<Maps>,
}

#[derive(Debug, Default)]
struct Maps {
    /// Each map, with when it was last used.
    values: HashMap<String, (u64, HashMap<String, String>)>,
    clock: u64,
    /// Bytes of every key and value held.
    bytes: usize,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SessionStore for MemoryStore {
    fn set_once(&self, key: &str) -> Result<bool, StoreError> {
        Ok(lock(&self.marks).insert(key.to_owned()))
    }

    fn count(&self, key: &str) -> Result<u32, StoreError> {
        Ok(lock(&self.counts).get(key).copied().unwrap_or(0))
    }

    fn set_count(&self, key: &str, value: u32) -> Result<(), StoreError> {
        let mut counts = lock(&self.counts);
        if value == 0 {
            counts.remove(key);
        } else {
            counts.insert(key.to_owned(), value);
        }
        Ok(())
    }

    fn map_get(&self, map: &str, key: &str) -> Result<Option<String>, StoreError> {
        let mut maps = lock(&self.maps);
        let now = maps.tick();
        Ok(maps.values.get_mut(map).and_then(|(used, values)| {
            *used = now;
            values.get(key).cloned()
        }))
    }

    fn map_commit(
        &self,
        map: &str,
        change: &MapChange,
        max_keys: usize,
    ) -> Result<bool, StoreError> {
        let mut maps = lock(&self.maps);
        // Checked before anything is evicted or made: a commit that stores
        // nothing changes nothing.
        let held = maps.values.get(map).map(|(_, values)| values);
        if !change.still_holds(|key| held.and_then(|v| v.get(key)).map(String::as_str)) {
            return Ok(false);
        }
        let count = held.map_or(0, HashMap::len);
        if count + change.added_keys(|key| held.is_some_and(|v| v.contains_key(key))) > max_keys {
            return Err(StoreError::Full { max: max_keys });
        }
        if change.written.is_empty() {
            return Ok(true);
        }
        let now = maps.tick();
        if !maps.values.contains_key(map) && maps.values.len() >= MAX_MAPS {
            maps.evict_oldest(map);
        }
        let (used, values) = maps.values.entry(map.to_owned()).or_default();
        *used = now;
        let (mut added, mut replaced) = (0, 0);
        for (key, value) in &change.written {
            added += key.len() + value.len();
            if let Some(old) = values.insert(key.clone(), value.clone()) {
                replaced += key.len() + old.len();
            }
        }
        maps.bytes = maps.bytes + added - replaced;
        while maps.bytes > MAX_MAP_BYTES && maps.evict_oldest(map) {}
        Ok(true)
    }
}

impl Maps {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Drop the least recently used map other than `keep`; whether there
    /// was one.
    fn evict_oldest(&mut self, keep: &str) -> bool {
        let oldest = self
            .values
            .iter()
            .filter(|(map, _)| map.as_str() != keep)
            .min_by_key(|(_, (used, _))| *used)
            .map(|(map, _)| map.clone());
        let Some(oldest) = oldest else {
            return false;
        };
        if let Some((_, values)) = self.values.remove(&oldest) {
            self.bytes -= values.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
        }
        true
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(store: &MemoryStore, map: &str, key: &str, value: &str) {
        let mut change = MapChange::default();
        change.written.insert(key.into(), value.into());
        assert_eq!(store.map_commit(map, &change, 256), Ok(true));
    }

    #[test]
    fn marks_and_counts_in_memory() {
        let store = MemoryStore::new();
        assert_eq!(store.set_once("s1:greet"), Ok(true));
        assert_eq!(store.set_once("s1:greet"), Ok(false));
        assert_eq!(store.count("stops:s1"), Ok(0));
        store.set_count("stops:s1", 3).unwrap();
        assert_eq!(store.count("stops:s1"), Ok(3));
        store.set_count("stops:s1", 0).unwrap();
        assert!(lock(&store.counts).is_empty(), "0 removes the counter");
    }

    #[test]
    fn a_commit_over_the_key_bound_is_refused_and_changes_nothing() {
        let store = MemoryStore::new();
        put(&store, "m", "a", "1");
        let mut change = MapChange::default();
        change.written.insert("b".into(), "2".into());
        assert_eq!(
            store.map_commit("m", &change, 1),
            Err(StoreError::Full { max: 1 })
        );
        assert_eq!(store.map_get("m", "b"), Ok(None));
    }

    #[test]
    fn m6_sessions_without_end_keep_the_store_within_its_byte_budget() {
        let store = MemoryStore::new();
        let value = "x".repeat(16 * 1024);
        // 1,100 sessions filling 64 keys of 16 KiB each: 1.1 GiB asked for.
        for session in 0..1_100 {
            let mut change = MapChange::default();
            for key in 0..64 {
                change.written.insert(format!("k{key}"), value.clone());
            }
            assert_eq!(
                store.map_commit(&session.to_string(), &change, 256),
                Ok(true)
            );
        }
        let maps = lock(&store.maps);
        assert!(maps.bytes <= MAX_MAP_BYTES, "{}", maps.bytes);
        let counted: usize = maps
            .values
            .values()
            .flat_map(|(_, v)| v.iter().map(|(k, v)| k.len() + v.len()))
            .sum();
        assert_eq!(counted, maps.bytes, "the count is exact");
        assert!(
            maps.values.contains_key("1099"),
            "the newest session is kept"
        );
    }

    #[test]
    fn the_least_recently_used_map_goes_first() {
        let store = MemoryStore::new();
        for i in 0..MAX_MAPS {
            put(&store, &i.to_string(), "k", "v");
        }
        store.map_get("0", "k").unwrap();
        put(&store, "new", "k", "v");
        assert!(store.map_get("0", "k").unwrap().is_some(), "recently used");
        assert!(store.map_get("1", "k").unwrap().is_none(), "evicted");
    }
}
