//! The `kv` host interface: a small in-memory key-value store per plugin
//! and session, so that a plugin can count or remember across events while
//! every event still runs on a fresh instance. Everything is bounded: key
//! and value sizes, keys per scope, scopes, and the bytes of all scopes
//! together (past a bound, the least recently used scopes are dropped).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use wasm_hooks_core::SharedState;

/// Longest key, in bytes.
pub(crate) const MAX_KEY: usize = 256;
/// Longest value, in bytes.
pub(crate) const MAX_VALUE: usize = 16 * 1024;
/// Keys one plugin may keep in one session.
pub(crate) const MAX_KEYS: usize = 256;
/// Plugin-and-session scopes kept at once.
const MAX_SCOPES: usize = 1024;
/// Bytes of keys and values kept in all scopes together: sessions come and
/// go (a long `serve` sees thousands), and without this bound the store
/// could grow to `MAX_SCOPES` × `MAX_KEYS` × `MAX_VALUE`, 4 GiB.
const MAX_BYTES: usize = 64 << 20;

/// Every scope's values; one per runtime, shared by its calls. With a
/// shared store, the values live there instead (one map per plugin and
/// session), so that the replicas answering a session see the same ones.
#[derive(Debug, Default)]
pub(crate) struct KvStore {
    scopes: Mutex<Scopes>,
    shared: Option<Arc<dyn SharedState>>,
}

#[derive(Debug, Default)]
struct Scopes {
    /// The values of each (plugin, session), with when it was last used.
    values: HashMap<ScopeKey, (u64, HashMap<String, String>)>,
    clock: u64,
    /// Bytes of every key and value held.
    bytes: usize,
}

/// A plugin (by a name fixed at load) and a session.
type ScopeKey = (Arc<str>, String);

/// One call's view: the store and the scope it reads and writes.
#[derive(Debug, Clone)]
pub(crate) struct KvScope {
    store: Arc<KvStore>,
    scope: ScopeKey,
}

impl KvStore {
    /// A store whose values live in `shared`.
    pub(crate) fn shared(shared: Arc<dyn SharedState>) -> Self {
        Self {
            scopes: Mutex::default(),
            shared: Some(shared),
        }
    }

    /// The view of `plugin` in `session`.
    pub(crate) fn scope(self: &Arc<Self>, plugin: &Arc<str>, session: &str) -> KvScope {
        KvScope {
            store: Arc::clone(self),
            scope: (Arc::clone(plugin), session.to_owned()),
        }
    }
}

impl KvScope {
    /// The value under `key`, if any.
    pub(crate) fn get(&self, key: &str) -> Option<String> {
        if let Some(shared) = &self.store.shared {
            // A store that cannot be reached reads as empty (it said why).
            return shared.map_get(&self.map_name(), key).ok().flatten();
        }
        let mut scopes = self.lock();
        let now = scopes.tick();
        let (used, values) = scopes.values.get_mut(&self.scope)?;
        *used = now;
        values.get(key).cloned()
    }

    /// Store `value` under `key`, or say which bound it would pass.
    pub(crate) fn set(&self, key: String, value: String) -> Result<(), String> {
        if key.len() > MAX_KEY {
            return Err(format!("kv: key of {} bytes, over {MAX_KEY}", key.len()));
        }
        if value.len() > MAX_VALUE {
            return Err(format!(
                "kv: value of {} bytes, over {MAX_VALUE}",
                value.len()
            ));
        }
        if let Some(shared) = &self.store.shared {
            return shared
                .map_set(&self.map_name(), &key, &value, MAX_KEYS)
                .map_err(|e| format!("kv: {e}"));
        }
        let mut scopes = self.lock();
        let now = scopes.tick();
        if !scopes.values.contains_key(&self.scope) && scopes.values.len() >= MAX_SCOPES {
            scopes.evict_oldest(&self.scope);
        }
        let (used, values) = scopes.values.entry(self.scope.clone()).or_default();
        *used = now;
        if !values.contains_key(&key) && values.len() >= MAX_KEYS {
            return Err(format!(
                "kv: {MAX_KEYS} keys already stored for this session"
            ));
        }
        let added = key.len() + value.len();
        let replaced = values.get(&key).map_or(0, |old| key.len() + old.len());
        values.insert(key, value);
        scopes.bytes = scopes.bytes + added - replaced;
        while scopes.bytes > MAX_BYTES && scopes.evict_oldest(&self.scope) {}
        Ok(())
    }

    /// This scope's map in a shared store.
    fn map_name(&self) -> String {
        format!("kv:{}:{}", self.scope.0, self.scope.1)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Scopes> {
        self.store
            .scopes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Scopes {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Drop the least recently used scope other than `keep`; whether there
    /// was one.
    fn evict_oldest(&mut self, keep: &ScopeKey) -> bool {
        let oldest = self
            .values
            .iter()
            .filter(|(scope, _)| *scope != keep)
            .min_by_key(|(_, (used, _))| *used)
            .map(|(scope, _)| scope.clone());
        let Some(oldest) = oldest else {
            return false;
        };
        if let Some((_, values)) = self.values.remove(&oldest) {
            self.bytes -= values.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_separate_and_bounded() {
        let store = Arc::new(KvStore::default());
        let a = store.scope(&"plugin".into(), "s1");
        let b = store.scope(&"plugin".into(), "s2");
        a.set("n".into(), "1".into()).unwrap();
        assert_eq!(a.get("n").as_deref(), Some("1"));
        assert_eq!(b.get("n"), None, "another session sees nothing");
        assert_eq!(
            store.scope(&"other".into(), "s1").get("n"),
            None,
            "another plugin neither"
        );
        assert!(
            a.set("k".repeat(MAX_KEY + 1), String::new())
                .unwrap_err()
                .contains("key")
        );
        assert!(
            a.set("v".into(), "x".repeat(MAX_VALUE + 1))
                .unwrap_err()
                .contains("value")
        );
        for i in 1..MAX_KEYS {
            a.set(format!("k{i}"), String::new()).unwrap();
        }
        assert!(
            a.set("one more".into(), String::new())
                .unwrap_err()
                .contains("keys")
        );
        a.set("n".into(), "2".into()).unwrap();
    }

    #[test]
    fn m6_sessions_without_end_keep_the_store_within_its_byte_budget() {
        let store = Arc::new(KvStore::default());
        let value = "x".repeat(MAX_VALUE);
        // 1,100 sessions filling 64 keys of 16 KiB each: 1.1 GiB asked for.
        for session in 0..1_100 {
            let scope = store.scope(&"p".into(), &session.to_string());
            for key in 0..64 {
                scope.set(format!("k{key}"), value.clone()).unwrap();
            }
        }
        let scopes = store.scopes.lock().unwrap();
        assert!(scopes.bytes <= MAX_BYTES, "{}", scopes.bytes);
        let counted: usize = scopes
            .values
            .values()
            .flat_map(|(_, v)| v.iter().map(|(k, v)| k.len() + v.len()))
            .sum();
        assert_eq!(counted, scopes.bytes, "the count is exact");
        assert!(
            scopes
                .values
                .contains_key(&(Arc::from("p"), "1099".to_owned())),
            "the newest session is kept"
        );
    }

    #[test]
    fn the_least_recently_used_scope_goes_first() {
        let store = Arc::new(KvStore::default());
        for i in 0..MAX_SCOPES {
            store
                .scope(&"p".into(), &i.to_string())
                .set("k".into(), "v".into())
                .unwrap();
        }
        store.scope(&"p".into(), "0").get("k");
        store
            .scope(&"p".into(), "new")
            .set("k".into(), "v".into())
            .unwrap();
        assert!(
            store.scope(&"p".into(), "0").get("k").is_some(),
            "recently used"
        );
        assert!(store.scope(&"p".into(), "1").get("k").is_none(), "evicted");
    }
}
