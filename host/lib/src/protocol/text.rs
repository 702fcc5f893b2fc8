//! How an agent's JSON text is read, the same way for every agent and
//! every transport (stdin, HTTP, a tool's arguments sent as a string)
//! before any guard sees it. A lone UTF-16 surrogate escape (`\ud800`,
//! which JavaScript agents write for half a character) is read as U+FFFD,
//! the character Node writes for it when it hands the string to a shell;
//! serde alone refuses the whole text, and a decoder that fell back to
//! the raw string showed guards no `command` at all. A NUL, which ends a
//! C string (no agent runs a command or opens a path holding one), is
//! read as a space, so a guard sees the words on both sides of it.
//! Escapes of plain characters (`r\u006d -rf`) are unescaped by the JSON
//! reader itself.

use std::borrow::Cow;

use serde_json::Value;

/// `text` read as JSON, normalised as this module says.
///
/// # Errors
/// When it is not JSON (after lone surrogates are replaced).
pub fn event_json(text: &str) -> Result<Value, serde_json::Error> {
    let mut value: Value = serde_json::from_str(&lone_surrogates_replaced(text))?;
    without_nul(&mut value);
    Ok(value)
}

/// `text` with every `\uD800`–`\uDFFF` escape that is not half of a
/// pair written `\uFFFD`.
fn lone_surrogates_replaced(text: &str) -> Cow<'_, str> {
    if !text.contains("\\u") {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        let Some(unit) = escaped_unit(bytes, at) else {
            // Any other escape: skip its two bytes (`\\` among them).
            at += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&unit);
        let low = (0xDC00..0xE000).contains(&unit);
        if high && escaped_unit(bytes, at + 6).is_some_and(|u| (0xDC00..0xE000).contains(&u)) {
            at += 12;
        } else if high || low {
            out.push_str(&text[copied..at]);
            out.push_str("\\uFFFD");
            at += 6;
            copied = at;
        } else {
            at += 6;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The UTF-16 unit of the `\uXXXX` escape at `at`, if one is there.
fn escaped_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

/// Every NUL of every string (and key) in `value` made a space.
fn without_nul(value: &mut Value) {
    match value {
        Value::String(text) if text.contains('\0') => *text = text.replace('\0', " "),
        Value::Array(items) => items.iter_mut().for_each(without_nul),
        Value::Object(map) if map.keys().any(|k| k.contains('\0')) => {
            let taken = std::mem::take(map);
            for (key, mut item) in taken {
                without_nul(&mut item);
                map.insert(key.replace('\0', " "), item);
            }
        }
        Value::Object(map) => map.values_mut().for_each(without_nul),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lone_surrogates_nuls_and_escaped_letters_reach_guards_as_the_shell_would_see_them() {
        let read = event_json(
            r#"{"command": "r\u006d -rf / \ud800", "path": ".env\u0000x", "ok": "\ud83d\ude00", "esc": "\\ud800"}"#,
        )
        .unwrap();
        assert_eq!(
            read,
            json!({"command": "rm -rf / \u{FFFD}", "path": ".env x", "ok": "😀", "esc": "\\ud800"})
        );
        // A lone low half, and a high half followed by no low one.
        assert_eq!(
            event_json(r#"["\udc00", "\ud800\u0041"]"#).unwrap(),
            json!(["\u{FFFD}", "\u{FFFD}A"])
        );
        assert!(event_json("{not json").is_err());
    }
}
