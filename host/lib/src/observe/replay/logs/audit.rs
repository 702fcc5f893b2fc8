//! wasm-hooks' own audit log: each `dispatch` record holds the event it
//! decided (the catalogue's record, secrets redacted) and the verdict,
//! which is what happened.

use serde_json::Value;

use super::{Out, Reading, text};
use crate::observe::replay::Happened;
use crate::protocol::Protocol;

/// Reading an audit log.
pub(super) struct Audit;

impl Reading for Audit {
    /// A `dispatch` is an event; the other kinds (a hook's result, an
    /// injection, …) are part of one.
    fn record(&mut self, out: &mut Out<'_>, record: &Value) -> bool {
        match text(record, "kind") {
            Some("dispatch") => {}
            Some(_) => return true,
            None => return false,
        }
        let data = &record["data"];
        let happened = match data["verdict"]["decision"].as_str() {
            Some("deny") => Happened::Denied,
            Some("ask") => Happened::Asked,
            Some(_) => Happened::Ran,
            None => Happened::Unknown,
        };
        out.event(
            Protocol::Canonical,
            data["record"].clone(),
            text(record, "time"),
            happened,
        )
    }
}
