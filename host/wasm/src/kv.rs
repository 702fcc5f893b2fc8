//! The `kv` host interface: a small key-value store per plugin and
//! session, so that a plugin can count or remember across events while
//! every event still runs on a fresh instance. Its values live in the
//! engine's [`SessionStore`] (one map per plugin and session: in memory,
//! or one Redis every replica of `serve` shares), or, in a host that
//! answers each event as a process of its own would, for one call only.
//! Keys and values are bounded here, keys per map and the store's own
//! size by the store.

use std::sync::Arc;

use wasm_hooks_core::{MapChange, SessionStore};

/// Longest key, in bytes.
pub(crate) const MAX_KEY: usize = 256;
/// Longest value, in bytes.
pub(crate) const MAX_VALUE: usize = 16 * 1024;
/// Keys one plugin may keep in one session.
pub(crate) const MAX_KEYS: usize = 256;

/// Where the values of one runtime's calls live.
#[derive(Debug)]
pub(crate) struct KvStore {
    /// The store, or `None`: values last only the call that set them (in
    /// a host that answers each event as a process of its own would:
    /// `hook`, and the daemon standing in for it).
    store: Option<Arc<dyn SessionStore>>,
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
    /// Why a read from the store failed, if one did: the call's answer
    /// then rests on a value it could not see, and is not used.
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
    /// A store whose values live in `store`.
    pub(crate) fn kept_in(store: Arc<dyn SessionStore>) -> Self {
        Self { store: Some(store) }
    }

    /// A store that keeps each call's values for that call only.
    pub(crate) fn per_call() -> Self {
        Self { store: None }
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
        if !self.change.written.contains_key(&key) && self.change.written.len() >= MAX_KEYS {
            return Err(format!("kv: {MAX_KEYS} keys set by this call"));
        }
        self.change.written.insert(key, value);
        Ok(())
    }

    /// Store what this call set, as one step, if nothing it read has
    /// changed since.
    ///
    /// # Errors
    /// When the store could not be reached (to read, even by a call that
    /// set nothing: a guard's answer must not rest on a value it could not
    /// see), or the scope would be too full (the store counts what it
    /// holds with what this call adds).
    pub(crate) fn commit(self) -> Result<Committed, String> {
        if let Some(why) = self.unread {
            return Err(format!("kv: {why}"));
        }
        let Some(store) = &self.store.store else {
            return Ok(Committed::Done);
        };
        if self.change.written.is_empty() {
            return Ok(Committed::Done);
        }
        match store.map_commit(&self.map_name(), &self.change, MAX_KEYS) {
            Ok(true) => Ok(Committed::Done),
            Ok(false) => Ok(Committed::Stale),
            Err(e) => Err(format!("kv: {e}")),
        }
    }

    /// The value under `key` in the store now. A store that cannot be
    /// reached reads as empty, and the commit then fails.
    fn read_store(&mut self, key: &str) -> Option<String> {
        let store = self.store.store.as_ref()?;
        match store.map_get(&self.map_name(), key) {
            Ok(value) => value,
            Err(why) => {
                self.unread.get_or_insert(why.to_string());
                None
            }
        }
    }

    /// This scope's map in the store.
    fn map_name(&self) -> String {
        format!("kv:{}:{}", self.scope.0, self.scope.1)
    }
}

#[cfg(test)]
mod tests {
    use wasm_hooks_core::{MemoryStore, StoreError};

    use super::*;

    fn in_memory() -> Arc<KvStore> {
        Arc::new(KvStore::kept_in(Arc::new(MemoryStore::new())))
    }

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
        let store = in_memory();
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
        a.set("n".into(), "2".into()).unwrap();
        assert_eq!(a.get("n").as_deref(), Some("2"), "a call sees its own set");
        assert_eq!(
            read(&store, "plugin", "s1", "n").as_deref(),
            Some("1"),
            "nothing is stored before the call commits"
        );
        assert_eq!(a.commit(), Ok(Committed::Done));
        assert_eq!(read(&store, "plugin", "s1", "n").as_deref(), Some("2"));
        let mut full = store.scope(&"plugin".into(), "s1");
        for i in 1..MAX_KEYS {
            full.set(format!("k{i}"), String::new()).unwrap();
        }
        assert_eq!(full.commit(), Ok(Committed::Done), "n and 255 more");
        let mut over = store.scope(&"plugin".into(), "s1");
        over.set("one more".into(), String::new()).unwrap();
        assert!(over.commit().unwrap_err().contains("256 keys"));
    }

    #[test]
    fn two_calls_counting_from_the_same_value_cannot_both_commit() {
        let store = in_memory();
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

    /// A store that cannot be reached.
    #[derive(Debug)]
    struct Unreachable;

    fn unreachable<T>() -> Result<T, StoreError> {
        Err(StoreError::Unreachable("unreachable".into()))
    }

    impl SessionStore for Unreachable {
        fn set_once(&self, _: &str) -> Result<bool, StoreError> {
            unreachable()
        }
        fn count(&self, _: &str) -> Result<u32, StoreError> {
            unreachable()
        }
        fn set_count(&self, _: &str, _: u32) -> Result<(), StoreError> {
            unreachable()
        }
        fn map_get(&self, _: &str, _: &str) -> Result<Option<String>, StoreError> {
            unreachable()
        }
        fn map_commit(&self, _: &str, _: &MapChange, _: usize) -> Result<bool, StoreError> {
            unreachable()
        }
    }

    #[test]
    fn a_call_that_could_not_read_a_shared_store_fails_even_if_it_set_nothing() {
        let store = Arc::new(KvStore::kept_in(Arc::new(Unreachable)));
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
}
