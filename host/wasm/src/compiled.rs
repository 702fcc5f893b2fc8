//! One compiled version of a plugin: its linked component, the compiler
//! that made it and the engine its instances live in.

use std::sync::Arc;

use super::tier::Compiler;
use super::world::HookPre;

impl Compiled {
    /// Its sha256 (hex).
    pub(super) fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The JSON Schema of its `config`, if it carries one.
    pub(super) fn config_schema(&self) -> Option<&str> {
        self.config_schema.as_deref()
    }

    /// The compiler that made it.
    pub(super) fn compiler(&self) -> Compiler {
        self.compiler
    }

    /// The engine its instances live in (its compiler's).
    pub(super) fn engine(&self) -> &wasmtime::Engine {
        &self.engine
    }
}

/// One compiled version of a plugin.
pub(super) struct Compiled {
    pub(super) pre: HookPre,
    pub(super) sha256: String,
    /// The JSON Schema of its `config` it carries, if any.
    pub(super) config_schema: Option<Arc<str>>,
    /// Whether it came from the compile cache.
    pub(super) from_cache: bool,
    pub(super) compiler: Compiler,
    pub(super) engine: wasmtime::Engine,
}
