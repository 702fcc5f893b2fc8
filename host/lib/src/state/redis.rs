//! [`RedisStore`]: the session state in one Redis every replica of `serve`
//! shares (`--state redis://…`), where marks are set atomically (`SET
//! NX`), so of two replicas racing one wins, and a plugin's `kv` commit is
//! one server-side script.
//!
//! A store that cannot be reached fails each call: the callers then do
//! what keeps a guard a guard (a `once` hook runs again, a blocked stop
//! stays counted as the first), the rest goes on, and the next call after
//! a short pause tries the store again, so it recovers without a restart.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use wasm_hooks_core::{MapChange, SessionStore, StoreError};

/// How long session state is kept after its last write (a session that
/// stops sending events is forgotten).
pub const SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a call may wait on Redis.
const REDIS_TIMEOUT: Duration = Duration::from_millis(500);
/// How long Redis is not asked again after it failed.
const PAUSE_AFTER_FAILURE: Duration = Duration::from_millis(500);
/// What every key starts with.
const PREFIX: &str = "wasm-hooks:";

/// [`SessionStore::map_commit`] in Redis, run as one step by the server:
/// `KEYS[1]` the map; `ARGV` the number of keys read, the key bound, the
/// time to live, then each key read with 1 and its value (or 0 and "" when
/// it was absent), then each key set with its value. 1 done, 0 a value read
/// has changed, -1 too many keys.
const COMMIT_SCRIPT: &str = r"
local map = KEYS[1]
local reads = tonumber(ARGV[1])
local i = 4
for _ = 1, reads do
  local now = redis.call('HGET', map, ARGV[i])
  if ARGV[i + 1] == '1' then
    if now ~= ARGV[i + 2] then return 0 end
  elseif now then
    return 0
  end
  i = i + 3
end
local first = i
local added = 0
while i <= #ARGV do
  if redis.call('HEXISTS', map, ARGV[i]) == 0 then added = added + 1 end
  i = i + 2
end
if redis.call('HLEN', map) + added > tonumber(ARGV[2]) then return -1 end
i = first
while i <= #ARGV do
  redis.call('HSET', map, ARGV[i], ARGV[i + 1])
  i = i + 2
end
redis.call('EXPIRE', map, ARGV[3])
return 1
";

/// `url` as messages show it: a password in it (`redis://:secret@host`)
/// written `***`, so that no log line, metric or deny reason carries it.
fn without_password(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            // Cannot fail: the URL has a password, so it has a host.
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(_) => url.to_owned(),
        // Not a URL the parser takes: shown up to its host only.
        Err(_) => url
            .rsplit_once('@')
            .map_or_else(|| url.to_owned(), |(_, host)| format!("***@{host}")),
    }
}

/// The state in one Redis, shared by every replica.
pub struct RedisStore {
    client: redis::Client,
    url: String,
    connection: Mutex<Option<redis::Connection>>,
    failed_at: Mutex<Option<Instant>>,
    failures: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RedisStore({})", self.url)
    }
}

impl RedisStore {
    /// A store in the Redis at `url` (`redis://HOST:PORT/DB`,
    /// `redis+unix:///PATH`); nothing is connected yet.
    ///
    /// # Errors
    /// When `url` is not a Redis URL (the message has no password).
    pub fn new(url: &str) -> Result<Self, StoreError> {
        let shown = without_password(url);
        let client = redis::Client::open(url)
            .map_err(|e| StoreError::Unreachable(format!("`{shown}`: {e}")))?;
        Ok(Self {
            client,
            url: shown,
            connection: Mutex::new(None),
            failed_at: Mutex::new(None),
            failures: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Run `command` on the connection (made first if there is none); a
    /// failure drops it and pauses asking. On a worker of a multi-threaded
    /// async runtime (`serve`), the worker's other tasks move to another
    /// worker meanwhile, so a slow Redis holds up only the calls waiting
    /// on it.
    fn run<T>(
        &self,
        command: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let on_worker = tokio::runtime::Handle::try_current().is_ok_and(|runtime| {
            runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        });
        if on_worker {
            tokio::task::block_in_place(|| self.run_here(command))
        } else {
            self.run_here(command)
        }
    }

    /// [`RedisStore::run`] on this thread.
    fn run_here<T>(
        &self,
        command: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut failed_at = self
            .failed_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if failed_at.is_some_and(|at| at.elapsed() < PAUSE_AFTER_FAILURE) {
            return Err(StoreError::Unreachable(format!(
                "the state store {} is unreachable",
                self.url
            )));
        }
        let mut slot = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let result = (|| {
            if slot.is_none() {
                let connection = self.client.get_connection_with_timeout(REDIS_TIMEOUT)?;
                connection.set_read_timeout(Some(REDIS_TIMEOUT))?;
                connection.set_write_timeout(Some(REDIS_TIMEOUT))?;
                *slot = Some(connection);
            }
            command(slot.as_mut().expect("connected above"))
        })();
        match result {
            Ok(value) => {
                *failed_at = None;
                Ok(value)
            }
            Err(e) => {
                self.failures
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                *slot = None;
                *failed_at = Some(Instant::now());
                tracing::warn!("the state store {} failed: {e}", self.url);
                Err(StoreError::Unreachable(format!(
                    "the state store {} failed: {e}",
                    self.url
                )))
            }
        }
    }
}

impl SessionStore for RedisStore {
    fn failures(&self) -> u64 {
        self.failures.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn set_once(&self, key: &str) -> Result<bool, StoreError> {
        self.run(|c| {
            let set: Option<String> = redis::cmd("SET")
                .arg(format!("{PREFIX}{key}"))
                .arg(1)
                .arg("NX")
                .arg("EX")
                .arg(SESSION_TTL.as_secs())
                .query(c)?;
            Ok(set.is_some())
        })
    }

    fn count(&self, key: &str) -> Result<u32, StoreError> {
        self.run(|c| {
            let value: Option<u32> = redis::cmd("GET").arg(format!("{PREFIX}{key}")).query(c)?;
            Ok(value.unwrap_or(0))
        })
    }

    fn map_get(&self, map: &str, key: &str) -> Result<Option<String>, StoreError> {
        self.run(|c| {
            redis::cmd("HGET")
                .arg(format!("{PREFIX}{map}"))
                .arg(key)
                .query(c)
        })
    }

    fn map_commit(
        &self,
        map: &str,
        change: &MapChange,
        max_keys: usize,
    ) -> Result<bool, StoreError> {
        // By its SHA1 (`EVALSHA`), sent whole only when the server lacks it.
        static COMMIT: std::sync::LazyLock<redis::Script> =
            std::sync::LazyLock::new(|| redis::Script::new(COMMIT_SCRIPT));
        let mut script = COMMIT.key(format!("{PREFIX}{map}"));
        script
            .arg(change.read.len())
            .arg(max_keys)
            .arg(SESSION_TTL.as_secs());
        for (key, seen) in &change.read {
            script
                .arg(key)
                .arg(u8::from(seen.is_some()))
                .arg(seen.as_deref().unwrap_or(""));
        }
        for (key, value) in &change.written {
            script.arg(key).arg(value);
        }
        match self.run(|c| script.invoke::<i64>(c))? {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(StoreError::Full { max: max_keys }),
        }
    }

    fn set_count(&self, key: &str, value: u32) -> Result<(), StoreError> {
        self.run(|c| {
            if value == 0 {
                redis::cmd("DEL")
                    .arg(format!("{PREFIX}{key}"))
                    .query::<()>(c)
            } else {
                redis::cmd("SET")
                    .arg(format!("{PREFIX}{key}"))
                    .arg(value)
                    .arg("EX")
                    .arg(SESSION_TTL.as_secs())
                    .query::<()>(c)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_redis_fails_each_call_and_is_not_asked_again_at_once() {
        let state = RedisStore::new("redis://127.0.0.1:1/").unwrap();
        assert!(state.set_once("k").is_err());
        let paused = state.count("k").unwrap_err().to_string();
        assert!(paused.contains("unreachable"), "{paused}");
        assert!(RedisStore::new("http://nope").is_err());
    }

    #[test]
    fn the_redis_urls_password_is_in_no_message() {
        let state = RedisStore::new("redis://fleet:hunter2@127.0.0.1:1/0").unwrap();
        let failed = state.set_once("k").unwrap_err().to_string();
        let paused = state.count("k").unwrap_err().to_string();
        for said in [failed, paused, format!("{state:?}")] {
            assert!(!said.contains("hunter2"), "{said}");
            assert!(said.contains("redis://fleet:***@127.0.0.1:1/0"), "{said}");
        }
        let refused = RedisStore::new("redis://:hunter2@[::1")
            .unwrap_err()
            .to_string();
        assert!(!refused.contains("hunter2"), "{refused}");
    }
}
