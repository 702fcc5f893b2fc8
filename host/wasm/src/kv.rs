//! The `kv` host interface: a small in-memory key-value store per plugin
//! and session, so that a plugin can count or remember across events while
//! every event still runs on a fresh instance. Everything is bounded: key
//! and value sizes, keys per scope, scopes, and the bytes of all scopes
//! together (past a bound, the least recently used scopes are dropped).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use wasm_hooks_core::{MapChange, SharedState};

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
    /// Whether values last only the call that set them: in a host that
    /// answers each event as a process of its own would (`hook`, and the
    /// daemon standing in for it), where nothing outlives the event.
    per_call: bool,
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

/// One call's view of its scope, kept as a transaction: what it read and
/// what it set reach the store together when the call has answered
/// ([`KvScope::commit`]), and only if nothing it read has changed since.
/// So two events of one session answered at once (two `serve` replicas,
/// or one host's concurrent requests) cannot both count from the same
/// value: the later one runs again on the new values.
#[derive(Debug)]
pub(crate) struct KvScope {
    store: Arc<KvStore>,
    scope: ScopeKey,
    change: MapChange,
    /// Why a read from a shared store failed, if one did: the call's
    /// answer then rests on a value it could not see, and is not used.
    unread: Option<String>,
}

/// What committing a call's values came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Committed {
    /// Stored (or there was nothing to store).
    Done,
    /// A value the call read has changed since: run it again.
    Stale,
}

impl KvStore {
    /// A store whose values live in `shared`.
    pub(crate) fn shared(shared: Arc<dyn SharedState>) -> Self {
        Self {
            scopes: Mutex::default(),
            shared: Some(shared),
            per_call: false,
        }
    }

    /// A store that keeps each call's values for that call only.
    pub(crate) fn per_call() -> Self {
        Self {
            per_call: true,
            ..Self::default()
        }
    }

    /// A fresh view of `plugin` in `session`, having read and set nothing.
    pub(crate) fn scope(self: &Arc<Self>, plugin: &Arc<str>, session: &str) -> KvScope {
        KvScope {
            store: Arc::clone(self),
            scope: (Arc::clone(plugin), session.to_owned()),
            change: MapChange::default(),
            unread: None,
        }
    }
}

impl KvScope {
    /// The value under `key`, if any: what this call set, else what the
    /// store held when this call first read it.
    pub(crate) fn get(&mut self, key: &str) -> Option<String> {
        if let Some(value) = self.change.written.get(key) {
            return Some(value.clone());
        }
        if let Some(seen) = self.change.read.get(key) {
            return seen.clone();
        }
        let value = self.read_store(key);
        self.change.read.insert(key.to_owned(), value.clone());
        value
    }

    /// Set `value` under `key` for this call (stored by
    /// [`KvScope::commit`]), or say which bound it would pass.
    pub(crate) fn set(&mut self, key: String, value: String) -> Result<(), String> {
        if key.len() > MAX_KEY {
            return Err(format!("kv: key of {} bytes, over {MAX_KEY}", key.len()));
        }
        if value.len() > MAX_VALUE {
            return Err(format!(
                "kv: value of {} bytes, over {MAX_VALUE}",
                value.len()
            ));
        }
        if !self.change.written.contains_key(&key) && self.keys_after_adding(&key) > MAX_KEYS {
            return Err(format!(
                "kv: {MAX_KEYS} keys already stored for this session"
            ));
        }
        self.change.written.insert(key, value);
        Ok(())
    }

    /// Store what this call set, as one step, if nothing it read has
    /// changed since.
    ///
    /// # Errors
    /// When a shared store could not be reached (to read, even by a call
    /// that set nothing: a guard's answer must not rest on a value it
    /// could not see), or the scope would be too full (another event
    /// added keys meanwhile).
    pub(crate) fn commit(self) -> Result<Committed, String> {
        if let Some(why) = self.unread {
            return Err(format!("kv: {why}"));
        }
        if self.change.written.is_empty() || self.store.per_call {
            return Ok(Committed::Done);
        }
        if let Some(shared) = &self.store.shared {
            return match shared.map_commit(&self.map_name(), &self.change, MAX_KEYS) {
                Ok(true) => Ok(Committed::Done),
                Ok(false) => Ok(Committed::Stale),
                Err(e) => Err(format!("kv: {e}")),
            };
        }
        let Self {
            store,
            scope,
            change,
            ..
        } = self;
        let mut scopes = store.scopes.lock().unwrap_or_else(PoisonError::into_inner);
        // Checked before anything is evicted or made: a commit that stores
        // nothing changes nothing.
        let held = scopes.values.get(&scope).map(|(_, values)| values);
        if !change.still_holds(|key| held.and_then(|v| v.get(key)).map(String::as_str)) {
            return Ok(Committed::Stale);
        }
        let count = held.map_or(0, HashMap::len);
        if count + change.added_keys(|key| held.is_some_and(|v| v.contains_key(key))) > MAX_KEYS {
            return Err(format!(
                "kv: {MAX_KEYS} keys already stored for this session"
            ));
        }
        let now = scopes.tick();
        if !scopes.values.contains_key(&scope) && scopes.values.len() >= MAX_SCOPES {
            scopes.evict_oldest(&scope);
        }
        let (used, values) = scopes.values.entry(scope.clone()).or_default();
        *used = now;
        let mut added = 0;
        let mut replaced = 0;
        for (key, value) in change.written {
            added += key.len() + value.len();
            if let Some(old) = values.insert(key.clone(), value) {
                replaced += key.len() + old.len();
            }
        }
        scopes.bytes = scopes.bytes + added - replaced;
        while scopes.bytes > MAX_BYTES && scopes.evict_oldest(&scope) {}
        Ok(Committed::Done)
    }

    /// The value under `key` in the store now. A shared store that cannot
    /// be reached reads as empty, and the commit then fails.
    fn read_store(&mut self, key: &str) -> Option<String> {
        if self.store.per_call {
            return None;
        }
        if let Some(shared) = &self.store.shared {
            return match shared.map_get(&self.map_name(), key) {
                Ok(value) => value,
                Err(why) => {
                    self.unread.get_or_insert(why);
                    None
                }
            };
        }
        let mut scopes = self.lock();
        let now = scopes.tick();
        let (used, values) = scopes.values.get_mut(&self.scope)?;
        *used = now;
        values.get(key).cloned()
    }

    /// How many keys the scope would hold with `key` added to what it holds
    /// and what this call set. A shared store is not asked (its commit
    /// checks), so there this counts this call's keys only.
    fn keys_after_adding(&self, key: &str) -> usize {
        let written = self.change.written.len() + 1;
        if self.store.shared.is_some() || self.store.per_call {
            return written;
        }
        let scopes = self.lock();
        let Some((_, values)) = scopes.values.get(&self.scope) else {
            return written;
        };
        let new = self
            .change
            .written
            .keys()
            .map(String::as_str)
            .chain([key])
            .filter(|k| !values.contains_key(*k))
            .count();
        values.len() + new
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

    /// Set `key` in one call of `plugin` in `session`, and commit it.
    fn put(store: &Arc<KvStore>, plugin: &str, session: &str, key: &str, value: &str) {
        let mut scope = store.scope(&plugin.into(), session);
        scope.set(key.into(), value.into()).unwrap();
        assert_eq!(scope.commit(), Ok(Committed::Done));
    }

    /// The value under `key` for a new call of `plugin` in `session`.
    fn read(store: &Arc<KvStore>, plugin: &str, session: &str, key: &str) -> Option<String> {
        store.scope(&plugin.into(), session).get(key)
    }

    #[test]
    fn scopes_are_separate_and_bounded() {
        let store = Arc::new(KvStore::default());
        put(&store, "plugin", "s1", "n", "1");
        assert_eq!(read(&store, "plugin", "s1", "n").as_deref(), Some("1"));
        assert_eq!(read(&store, "plugin", "s2", "n"), None, "another session");
        assert_eq!(read(&store, "other", "s1", "n"), None, "another plugin");
        let mut a = store.scope(&"plugin".into(), "s1");
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
        assert_eq!(a.get("n").as_deref(), Some("2"), "a call sees its own set");
        assert_eq!(
            read(&store, "plugin", "s1", "n").as_deref(),
            Some("1"),
            "nothing is stored before the call commits"
        );
        assert_eq!(a.commit(), Ok(Committed::Done));
        assert_eq!(read(&store, "plugin", "s1", "n").as_deref(), Some("2"));
    }

    #[test]
    fn two_calls_counting_from_the_same_value_cannot_both_commit() {
        let store = Arc::new(KvStore::default());
        put(&store, "p", "s", "count", "1");
        let mut first = store.scope(&"p".into(), "s");
        let mut second = store.scope(&"p".into(), "s");
        for call in [&mut first, &mut second] {
            let n: u32 = call.get("count").unwrap().parse().unwrap();
            call.set("count".into(), (n + 1).to_string()).unwrap();
        }
        assert_eq!(first.commit(), Ok(Committed::Done));
        assert_eq!(second.commit(), Ok(Committed::Stale), "it read 1, now 2");
        assert_eq!(read(&store, "p", "s", "count").as_deref(), Some("2"));
        let mut absent = store.scope(&"p".into(), "s");
        assert_eq!(absent.get("new"), None);
        absent.set("new".into(), "x".into()).unwrap();
        put(&store, "p", "s", "new", "y");
        assert_eq!(absent.commit(), Ok(Committed::Stale), "it read no value");
    }

    /// A shared store that cannot be reached.
    #[derive(Debug)]
    struct Unreachable;

    impl SharedState for Unreachable {
        fn set_once(&self, _: &str) -> Result<bool, String> {
            Err("unreachable".into())
        }
        fn count(&self, _: &str) -> Result<u32, String> {
            Err("unreachable".into())
        }
        fn set_count(&self, _: &str, _: u32) -> Result<(), String> {
            Err("unreachable".into())
        }
        fn map_get(&self, _: &str, _: &str) -> Result<Option<String>, String> {
            Err("unreachable".into())
        }
        fn map_commit(&self, _: &str, _: &MapChange, _: usize) -> Result<bool, String> {
            Err("unreachable".into())
        }
    }

    #[test]
    fn a_call_that_could_not_read_a_shared_store_fails_even_if_it_set_nothing() {
        let store = Arc::new(KvStore::shared(Arc::new(Unreachable)));
        let mut call = store.scope(&"p".into(), "s");
        assert_eq!(call.get("denied"), None);
        assert_eq!(call.commit(), Err("kv: unreachable".to_owned()));
        assert_eq!(
            store.scope(&"p".into(), "s").commit(),
            Ok(Committed::Done),
            "a call that read nothing has nothing to fail"
        );
    }

    #[test]
    fn a_per_call_store_keeps_a_calls_values_for_that_call_only() {
        let store = Arc::new(KvStore::per_call());
        let mut call = store.scope(&"p".into(), "s");
        call.set("n".into(), "1".into()).unwrap();
        assert_eq!(call.get("n").as_deref(), Some("1"));
        assert_eq!(call.commit(), Ok(Committed::Done));
        assert_eq!(read(&store, "p", "s", "n"), None, "the next call");
    }

    #[test]
    fn m6_sessions_without_end_keep_the_store_within_its_byte_budget() {
        let store = Arc::new(KvStore::default());
        let value = "x".repeat(MAX_VALUE);
        // 1,100 sessions filling 64 keys of 16 KiB each: 1.1 GiB asked for.
        for session in 0..1_100 {
            let mut scope = store.scope(&"p".into(), &session.to_string());
            for key in 0..64 {
                scope.set(format!("k{key}"), value.clone()).unwrap();
            }
            assert_eq!(scope.commit(), Ok(Committed::Done));
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
            put(&store, "p", &i.to_string(), "k", "v");
        }
        read(&store, "p", "0", "k");
        put(&store, "p", "new", "k", "v");
        assert!(read(&store, "p", "0", "k").is_some(), "recently used");
        assert!(read(&store, "p", "1", "k").is_none(), "evicted");
    }
}
