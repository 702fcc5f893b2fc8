//! [`HookId`]: the name of a hook, shared cheaply by traces, logs, errors
//! and the audit log.

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};

/// The name of a hook as it appears in traces, logs and errors.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HookId(Arc<str>);

impl HookId {
    /// A hook id from its name.
    pub fn new(name: impl AsRef<str>) -> Self {
        Self(Arc::from(name.as_ref()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for HookId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for HookId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}
