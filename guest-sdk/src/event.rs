//! The event a hook is called with: the host's record, with typed accessors
//! over its JSON payload. Start from [`Event`].

use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor,
};
use serde_json::Value;

use crate::bindings::wasm_hooks::hook::types as wit;
use crate::{Error, Result};

/// One lifecycle event, as the agent reported it.
///
/// The payload is the same JSON object a command hook reads on stdin, with
/// Claude Code's field names (`tool_name`, `tool_input`, `prompt`, …). It is
/// parsed at most once, on first use.
pub struct Event {
    name: String,
    session_id: String,
    timestamp: String,
    cwd: Option<String>,
    tool_name: Option<String>,
    payload: String,
    parsed: OnceLock<std::result::Result<Value, String>>,
}

impl Event {
    /// An event from a record as an agent sends it (Claude Code's field
    /// names: `hook_event_name`, `session_id`, `tool_name`, `tool_input`…),
    /// for tests; see [`crate::testing`].
    pub fn from_record(record: &Value) -> Self {
        let text = |field: &str| record.get(field).and_then(Value::as_str).map(str::to_owned);
        Self {
            name: text("hook_event_name").unwrap_or_default(),
            session_id: text("session_id").unwrap_or_default(),
            timestamp: text("timestamp").unwrap_or_default(),
            cwd: text("cwd"),
            tool_name: text("tool_name"),
            payload: record.to_string(),
            parsed: OnceLock::new(),
        }
    }

    /// Canonical event name, e.g. `"PreToolUse"`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent's session identifier.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// When the event fired, RFC 3339.
    pub fn timestamp(&self) -> &str {
        &self.timestamp
    }

    /// The agent's working directory, if known.
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// The agent's project directory (`project_dir`, which `wasm-hooks
    /// hook` and `serve` add), else the working directory.
    pub fn project_dir(&self) -> Option<String> {
        match self.field::<String>("project_dir") {
            Ok(Some(dir)) => Some(dir),
            _ => self.cwd.clone(),
        }
    }

    /// The tool concerned, for tool events.
    pub fn tool_name(&self) -> Option<&str> {
        self.tool_name.as_deref()
    }

    /// The whole event record as JSON text.
    pub fn payload(&self) -> &str {
        &self.payload
    }

    /// The whole event record, parsed.
    ///
    /// # Errors
    /// When the host sent a payload that is not JSON (a host bug).
    pub fn json(&self) -> Result<&Value> {
        self.parsed
            .get_or_init(|| serde_json::from_str(&self.payload).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| Error::new(format!("event payload is not JSON: {e}")))
    }

    /// One top-level field of the record, deserialized; `None` when absent
    /// or null. Unless the whole record was already parsed (by
    /// [`Event::json`]), only this field is built: the others are skipped
    /// over, not allocated.
    ///
    /// # Errors
    /// When the field is present but does not fit `T`.
    pub fn field<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        let fail = |e: serde_json::Error| Error::new(format!("event field `{name}`: {e}"));
        match self.parsed.get() {
            Some(Ok(record)) => match record.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => T::deserialize(value).map(Some).map_err(fail),
            },
            Some(Err(e)) => Err(Error::new(format!("event payload is not JSON: {e}"))),
            None => {
                let mut de = serde_json::Deserializer::from_str(&self.payload);
                OneField::<T>::new(name).deserialize(&mut de).map_err(fail)
            }
        }
    }

    /// The tool's output (`tool_response`, PostToolUse), deserialized into
    /// `T` (`serde_json::Value` takes any shape); `None` when absent.
    ///
    /// # Errors
    /// When it does not fit `T`.
    pub fn tool_response<T: DeserializeOwned>(&self) -> Result<Option<T>> {
        self.field("tool_response")
    }

    /// The tool the event is about, its input read into the shape every
    /// agent's name for it shares ([`Tool`](crate::Tool)); `None` when the
    /// event concerns no tool.
    ///
    /// # Errors
    /// When a known tool's input lacks a field it needs.
    pub fn tool(&self) -> Result<Option<crate::Tool>> {
        let Some(name) = self.tool_name() else {
            return Ok(None);
        };
        let input: Value = self.field("tool_input")?.unwrap_or(Value::Null);
        crate::Tool::read(name, input).map(Some)
    }

    /// The tool's input (`tool_input`), deserialized into `T`.
    ///
    /// # Errors
    /// When the event has no `tool_input` or it does not fit `T`.
    pub fn tool_input<T: DeserializeOwned>(&self) -> Result<T> {
        self.field("tool_input")?
            .ok_or_else(|| Error::new(format!("{} event has no `tool_input`", self.name)))
    }
}

/// Reads one field of a JSON object, skipping the others.
struct OneField<'n, T> {
    name: &'n str,
    wanted: PhantomData<T>,
}

impl<'n, T> OneField<'n, T> {
    fn new(name: &'n str) -> Self {
        Self {
            name,
            wanted: PhantomData,
        }
    }
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for OneField<'_, T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Option<T>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for OneField<'_, T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the event record, a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Option<T>, A::Error> {
        let mut found = None;
        while let Some(is_it) = map.next_key_seed(KeyIs(self.name))? {
            if is_it && found.is_none() {
                found = map.next_value::<Option<T>>()?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Whether a key is the one wanted, without copying it.
struct KeyIs<'n>(&'n str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> std::result::Result<bool, E> {
        Ok(key == self.0)
    }
}

impl From<wit::Event> for Event {
    fn from(e: wit::Event) -> Self {
        Self {
            name: e.name,
            session_id: e.session_id,
            timestamp: e.timestamp,
            cwd: e.cwd,
            tool_name: e.tool_name,
            payload: e.payload,
            parsed: OnceLock::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(payload: &str) -> Event {
        Event::from(wit::Event {
            name: "PreToolUse".into(),
            session_id: "s1".into(),
            timestamp: "2026-01-01T00:00:00Z".into(),
            cwd: Some("/p".into()),
            tool_name: Some("Bash".into()),
            payload: payload.into(),
        })
    }

    #[test]
    fn tool_input_deserializes_into_the_callers_type() {
        #[derive(serde::Deserialize)]
        struct Bash {
            command: String,
        }
        let e = event(r#"{"tool_input":{"command":"ls -la"}}"#);
        let input: Bash = e.tool_input().unwrap();
        assert_eq!(input.command, "ls -la");
        assert_eq!(e.tool_name(), Some("Bash"));
        assert_eq!(e.cwd(), Some("/p"));
    }

    #[test]
    fn missing_tool_input_is_an_error_naming_the_event() {
        let e = event(r#"{"prompt":"hi"}"#);
        let err = e.tool_input::<Value>().unwrap_err();
        assert!(err.message().contains("PreToolUse"), "{err}");
    }

    #[test]
    fn fields_that_do_not_fit_name_the_field() {
        let e = event(r#"{"duration_ms":"soon"}"#);
        let err = e.field::<u64>("duration_ms").unwrap_err();
        assert!(err.message().contains("duration_ms"), "{err}");
        assert_eq!(e.field::<u64>("absent").unwrap(), None);
    }

    #[test]
    fn a_payload_that_is_not_json_is_an_error() {
        assert!(event("not json").json().is_err());
        assert!(event("not json").field::<Value>("a").is_err());
        let broken = event("not json");
        assert!(broken.json().is_err());
        assert!(broken.field::<Value>("a").is_err(), "after json() too");
    }

    #[test]
    fn a_field_reads_the_same_skipping_or_from_the_parsed_record() {
        let payload = r#"{"a":{"x":[1,"\u0062",{"y":null}]},"tool_input":{"command":"ls"},"esc\"aped":1,"n":null,"last":true}"#;
        let skipping = event(payload);
        let parsed = event(payload);
        parsed.json().unwrap();
        for e in [&skipping, &parsed] {
            assert_eq!(
                e.field::<Value>("a").unwrap(),
                Some(serde_json::json!({"x": [1, "b", {"y": null}]}))
            );
            assert_eq!(e.field::<i32>("esc\"aped").unwrap(), Some(1));
            assert_eq!(e.field::<bool>("last").unwrap(), Some(true));
            assert_eq!(e.field::<i32>("n").unwrap(), None);
            assert_eq!(e.field::<i32>("absent").unwrap(), None);
        }
        assert!(
            skipping.parsed.get().is_none(),
            "reading fields does not parse the whole record"
        );
    }
}
