//! Reading a JSON value into a type, with the path to what did not read.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// `T` read from `value`; on failure, the path inside `value` to what did
/// not read (`hooks.PreToolUse[0].timeout`). The path is tracked only on a
/// second pass after a failure: tracking it costs an allocation per field,
/// and the `hook` daemon reads every hook file again for every event
/// (`docs/benchmarks.md`).
///
/// # Errors
/// What the tracking pass says does not fit `T`.
pub(crate) fn from_value<T: DeserializeOwned>(
    value: &Value,
) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    T::deserialize(value).or_else(|_| serde_path_to_error::deserialize(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        name: String,
        #[serde(default)]
        items: Vec<u32>,
    }

    #[test]
    fn a_value_that_reads_is_read_and_a_failure_is_placed() {
        let read: Entry = from_value(&json!({"name": "a", "items": [1]})).unwrap();
        assert_eq!(
            read,
            Entry {
                name: "a".into(),
                items: vec![1]
            }
        );
        let failed = from_value::<Entry>(&json!({"name": "a", "items": [1, "x"]})).unwrap_err();
        assert_eq!(failed.path().to_string(), "items[1]");
        let failed = from_value::<Entry>(&json!({"name": "a", "nope": 1})).unwrap_err();
        assert!(
            failed.inner().to_string().contains("unknown field `nope`"),
            "{failed}"
        );
    }
}
