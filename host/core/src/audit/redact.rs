//! Secrets kept out of the audit log.
//!
//! Three kinds of text are replaced by [`REDACTED`] before a record is
//! written:
//! - the values of environment variables whose names say they are secret
//!   (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*PASSWD*`,
//!   `*CREDENTIAL*`, `*AUTH*`), and of any variable named explicitly;
//! - text shaped like a known API key or credential: Anthropic and OpenAI
//!   keys, GitHub tokens, AWS access key ids, Slack tokens, bearer tokens,
//!   private key blocks;
//! - the value of any JSON field whose name says it is secret (`api_key`,
//!   `password`, `token`, `authorization`…).

use std::borrow::Cow;

use regex::Regex;
use serde_json::Value;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Values shorter than this are not treated as secrets: redacting `1` or
/// `true` everywhere would hide more than it protects.
const MIN_SECRET_LEN: usize = 8;

const SECRET_NAME: &str = r"(?i)key|token|secret|passw(or)?d|credential|auth";

const KEY_SHAPES: &[&str] = &[
    r"sk-ant-[A-Za-z0-9_\-]{16,}",
    r"sk-(proj-)?[A-Za-z0-9_\-]{20,}",
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"\bA(KIA|SIA)[0-9A-Z]{16}\b",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",
    r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{16,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
];

/// Replaces secrets in audit records.
#[derive(Debug, Clone)]
pub struct Redactor {
    secret_text: Regex,
}

impl Redactor {
    /// A redactor for this process's environment, also treating the
    /// variables in `extra_names` as secret whatever their names.
    pub fn from_env(extra_names: &[String]) -> Self {
        Self::new(std::env::vars(), extra_names)
    }

    /// A redactor for these variables (name, value).
    pub fn new(vars: impl IntoIterator<Item = (String, String)>, extra_names: &[String]) -> Self {
        // Both patterns are fixed or escaped text: they always compile.
        let secret_name = Regex::new(SECRET_NAME).expect("fixed pattern");
        let mut values: Vec<String> = vars
            .into_iter()
            .filter(|(name, value)| {
                value.len() >= MIN_SECRET_LEN
                    && (secret_name.is_match(name) || extra_names.contains(name))
            })
            .map(|(_, value)| value)
            .collect();
        // Longest first, so a secret that contains another is hidden whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        let alternatives: Vec<String> = values
            .iter()
            .map(|v| regex::escape(v))
            .chain(KEY_SHAPES.iter().map(|s| (*s).to_owned()))
            .collect();
        let secret_text = Regex::new(&alternatives.join("|")).expect("escaped alternatives");
        Self { secret_text }
    }

    /// `text` with every secret replaced.
    pub fn text(&self, text: &str) -> String {
        self.secret_text.replace_all(text, REDACTED).into_owned()
    }

    /// `value` with every secret in it replaced, in place.
    pub fn value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(redacted) = self.secret_text.replace_all(s, REDACTED) {
                    *s = redacted;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(fields) => {
                for (name, v) in fields.iter_mut() {
                    if v.is_string() && is_secret_field(name) {
                        *v = Value::from(REDACTED);
                    } else {
                        self.value(v);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A field name that holds a secret itself, not one that merely mentions a
/// key (`key_count`, `tokens`, `file_key_path` stay readable).
fn is_secret_field(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('-', "_");
    [
        "api_key",
        "apikey",
        "x_api_key",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "token",
        "access_token",
        "refresh_token",
        "auth_token",
        "authorization",
        "private_key",
    ]
    .contains(&name.as_str())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn redactor() -> Redactor {
        Redactor::new(
            [
                ("MY_API_KEY".to_owned(), "hunter2-hunter2".to_owned()),
                ("DB_PASSWORD".to_owned(), "correct-horse".to_owned()),
                ("HOME".to_owned(), "/home/someone".to_owned()),
                ("SHORT_TOKEN".to_owned(), "abc".to_owned()),
                ("PLAIN".to_owned(), "plain-but-named".to_owned()),
            ],
            &["PLAIN".to_owned()],
        )
    }

    #[test]
    fn values_of_secret_variables_are_replaced() {
        let r = redactor();
        assert_eq!(
            r.text("curl -H 'x: hunter2-hunter2' db correct-horse plain-but-named"),
            "curl -H 'x: [REDACTED]' db [REDACTED] [REDACTED]"
        );
        assert_eq!(r.text("cd /home/someone && abc"), "cd /home/someone && abc");
    }

    #[test]
    fn key_shapes_are_replaced() {
        let r = Redactor::new([], &[]);
        for secret in [
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
            "AKIAIOSFODNN7EXAMPLE",
            "Bearer abcdefghijklmnopqrstuvwxyz",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
        ] {
            assert_eq!(
                r.text(&format!("x {secret} y")),
                "x [REDACTED] y",
                "{secret}"
            );
        }
    }

    #[test]
    fn secret_fields_are_replaced_and_others_kept() {
        let r = redactor();
        let mut v = json!({
            "tool_input": {"command": "echo hunter2-hunter2", "api_key": "anything-at-all"},
            "tokens": 12, "key_count": "three", "list": ["correct-horse"]
        });
        r.value(&mut v);
        assert_eq!(
            v,
            json!({
                "tool_input": {"command": "echo [REDACTED]", "api_key": "[REDACTED]"},
                "tokens": 12, "key_count": "three", "list": ["[REDACTED]"]
            })
        );
    }
}
