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

    /// The name as it may stand inside a label the model reads (`[from the
    /// untrusted project's hook `x`]`): a backquote or a bracket of the name
    /// (a cloned repository's) would end the label early and speak as
    /// wasm-hooks, so each is shown as `_`.
    pub fn in_label(&self) -> String {
        self.to_string().replace(['`', '[', ']'], "_")
    }
}

/// As a person is shown it ([`Shown`](crate::Shown)): a name comes from a
/// hook file, maybe a cloned repository's. [`HookId::as_str`] is the name
/// itself.
impl fmt::Display for HookId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::Shown(&self.0).fmt(f)
    }
}

impl Serialize for HookId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl schemars::JsonSchema for HookId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "HookId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A hook's name as traces, logs and errors show it."
        })
    }
}
