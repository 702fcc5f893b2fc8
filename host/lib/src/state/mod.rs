//! The session state beside the hooks (`once` marks, stop-loop counts,
//! the plugins' `kv`) behind core's [`SessionStore`]: in memory
//! ([`MemoryStore`]), in a directory for a process per event
//! ([`DirectoryStore`]), or in one Redis every replica of `serve` shares
//! ([`RedisStore`]). `files` names the private files of the directory
//! store and of trust.

mod directory;
pub(crate) mod files;
mod redis;

pub use directory::DirectoryStore;
pub use redis::{RedisStore, SESSION_TTL};
pub use wasm_hooks_core::{MemoryStore, SessionStore, StoreError};
