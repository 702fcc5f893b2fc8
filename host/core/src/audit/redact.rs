//! Secrets kept out of the audit log.
//!
//! Four kinds of text are replaced by [`REDACTED`] before a record is
//! written:
//! - the values of environment variables whose names say they are secret
//!   (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASS*`, `*CREDENTIAL*`, `*AUTH*`,
//!   `*WEBHOOK*`, `*DSN*`, `*COOKIE*`), and of any variable named
//!   explicitly;
//! - text shaped like a known API key or credential: Anthropic, OpenAI,
//!   Groq, xAI, Replicate and Hugging Face keys, GitHub and GitLab tokens,
//!   AWS access key ids, Slack tokens and webhooks, Discord webhooks,
//!   Stripe secret keys and webhook secrets, Google API keys, OAuth tokens
//!   and client secrets, npm and PyPI tokens, SendGrid, DigitalOcean,
//!   Shopify, Vault and Supabase tokens, JWTs, Sentry DSNs, bearer tokens,
//!   private key blocks (PEM and PGP; one whose END line is missing is
//!   hidden to the end of the text);
//! - the password of a URL (`postgres://app:[REDACTED]@db/x`), the value
//!   of an assignment to a secret-named variable or header
//!   (`MY_DB_PASS=[REDACTED]`, `X-Api-Key: [REDACTED]`), the credentials
//!   of an `Authorization` header (`Basic [REDACTED]`), the argument of a
//!   secret-named flag (`--password [REDACTED]`), an Azure account or
//!   shared access key and a SAS signature (`&sig=[REDACTED]`), the rest
//!   kept;
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

/// Environment variable names whose values are secret.
const SECRET_NAME: &str = r"(?i)key|token|secret|pass|credential|auth|webhook|dsn|cookie";

/// Text shaped like a credential, hidden whole. Each shape is its own group
/// once joined, so a flag such as `(?i)` stays within its shape.
const KEY_SHAPES: &[&str] = &[
    r"sk-ant-[A-Za-z0-9_\-]{16,}",
    r"sk-(proj-)?[A-Za-z0-9_\-]{20,}",
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"\bA(KIA|SIA)[0-9A-Z]{16}\b",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",
    r"\bxapp-[A-Za-z0-9\-]{10,}",
    r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{16,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)",
    r"gl(?:pat|rt|dt|ptt)-[A-Za-z0-9_\-]{20,}",
    r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
    r"https://(?:discord|discordapp)\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]+",
    r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}",
    r"\bwhsec_[A-Za-z0-9+/=]{24,}",
    r"\bAIza[0-9A-Za-z_\-]{35}",
    r"\bya29\.[A-Za-z0-9_\-]{20,}",
    r"\bGOCSPX-[A-Za-z0-9_\-]{20,}",
    r"\bnpm_[A-Za-z0-9]{36}",
    r"\bpypi-AgE[A-Za-z0-9_\-]{16,}",
    r"\bhf_[A-Za-z0-9]{30,}",
    r"\bgsk_[A-Za-z0-9]{32,}",
    r"\bxai-[A-Za-z0-9]{32,}",
    r"\br8_[A-Za-z0-9]{32,}",
    r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
    r"\bdo[opr]_v1_[a-f0-9]{64}",
    r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}",
    r"\bsbp_[a-f0-9]{40}",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    r"https://[0-9a-f]{32}(?::[0-9a-f]{32})?@[A-Za-z0-9.\-]+",
];

/// What a secret found in place becomes: [`REDACTED`] between what stays
/// (fixed text, so no string is built per call).
const IN_PLACE_REPLACEMENT: &str = "${keep}[REDACTED]${tail}";

/// Secrets inside something worth keeping: a URL's password (the scheme,
/// user and host stay); the value assigned to a secret-named variable or
/// header (`DB_PASS=…`, `api_key: …`, `X-Api-Key: …`); the credentials of
/// an `Authorization` header whatever its scheme; the argument of a flag
/// whose name ends in a secret word (`--password …`, `--api-key=…`, not
/// `--token-file …`); an Azure connection string's key and a SAS URL's
/// signature. Groups `keep` and `tail` stay.
const SECRETS_IN_PLACE: &[&str] = &[
    r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]*:)[^@\s/]+(?P<tail>@)",
    r#"(?i)(?P<keep>\b[a-z0-9_\-]*(?:pass|secret|token|api[_\-]?key|credential|creds|private[_\-]?key)[a-z0-9_\-]*\s*[=:]\s*["']?)[^\s"']{6,}"#,
    r#"(?i)(?P<keep>\bauthorization["']?\s*[:=]\s*["']?(?:basic|bearer|token|bot)\s+)[A-Za-z0-9._~+/=\-]+"#,
    r#"(?i)(?P<keep>--(?:[a-z0-9]+-)*(?:password|passwd|token|secret|api-?key|secret-?key)(?:\s+|=))(?:"[^"\n]*"|'[^'\n]*'|[^\s"'\-][^\s"']*)"#,
    r#"(?i)(?P<keep>\b(?:Account|SharedAccess)Key=)[^;\s"']+"#,
    r#"(?P<keep>[?&]sig=)[^&#\s"']+"#,
    // The password a command line hands a client by a short flag:
    // `curl -u user:…`, `mysql -p…`, `docker login -p …`, `sshpass -p …`,
    // `redis-cli -a …`.
    r#"(?P<keep>(?:^|\s)(?:-u|--user)\s+[^\s:'"]+:)[^\s'"]+"#,
    r#"(?P<keep>\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p)[^\s'"]+"#,
    r#"(?P<keep>\bdocker\s+login\b[^\n|;&]*?\s-p\s+)[^\s'"]+"#,
    r#"(?P<keep>\bsshpass\b[^\n|;&]*?\s-p\s*)[^\s'"]+"#,
    r#"(?P<keep>\bredis-cli\b[^\n|;&]*?\s-a\s+)[^\s'"]+"#,
];

/// Replaces secrets in audit records.
#[derive(Debug, Clone)]
pub struct Redactor {
    secret_text: Regex,
    in_place: Vec<Regex>,
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
        let secret_name = crate::compile_regex(SECRET_NAME).expect("fixed pattern");
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
            .chain(KEY_SHAPES.iter().map(|shape| format!("(?:{shape})")))
            .collect();
        let secret_text =
            crate::compile_regex(&alternatives.join("|")).expect("escaped alternatives");
        let in_place = SECRETS_IN_PLACE
            .iter()
            .map(|p| crate::compile_regex(p).expect("fixed pattern"))
            .collect();
        Self {
            secret_text,
            in_place,
        }
    }

    /// `text` with every secret replaced.
    pub fn text(&self, text: &str) -> String {
        self.replaced(text).into_owned()
    }

    fn replaced<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = self.secret_text.replace_all(text, REDACTED);
        for pattern in &self.in_place {
            if let Cow::Owned(changed) = pattern.replace_all(&out, IN_PLACE_REPLACEMENT) {
                out = Cow::Owned(changed);
            }
        }
        out
    }

    /// `value` with every secret in it replaced, in place.
    pub fn value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(redacted) = self.replaced(s) {
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
        "pass",
        "dsn",
        "webhook_url",
        "cookie",
        "session_token",
        "client_key",
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

    /// Realistic secrets in text, each with a part that must not survive.
    const SECRETS: &[(&str, &str)] = &[
        ("psql $X pa55-w0rd-xyz", "pa55-w0rd-xyz"),
        (
            "curl https://example.invalid/hook/abcdef",
            "example.invalid/hook",
        ),
        ("report to https://k3y@o1.ingest.example/2", "k3y@"),
        ("cookie c00kie-value-123", "c00kie"),
        (
            "postgres://app:hunter2pass@db.internal:5432/app",
            "hunter2pass",
        ),
        ("mysql://root:s3cr3t!@localhost/db", "s3cr3t"),
        ("redis://:authpassword123@cache:6379", "authpassword123"),
        (
            "https://user:token1234@github.com/org/repo.git",
            "token1234",
        ),
        ("export MY_DB_PASS=another-pass-99", "another-pass-99"),
        ("DATABASE_PASSWORD=opensesame42 ./migrate", "opensesame42"),
        ("api_key: 'abcdef123456'", "abcdef123456"),
        ("--client-secret=zzzzzzzzzz", "zzzzzzzzzz"),
        ("sk_live_51H8abcdefghijklmnop", "sk_live_51H8"),
        ("sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC3"),
        ("rk_live_abcdefghijklmnopqr", "rk_live_abc"),
        (
            "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
            "hooks.slack.com/services/T000",
        ),
        (
            "https://discord.com/api/webhooks/123456/abcDEF-ghi_jkl",
            "abcDEF",
        ),
        (
            "https://0123456789abcdef0123456789abcdef@o42.ingest.sentry.io/7",
            "0123456789abcdef",
        ),
        ("AIzaSyA-abcdefghijklmnopqrstuvwxyz012345", "AIzaSyA"),
        ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abc"),
        ("glpat-abcdefghijklmnopqrst", "glpat-abc"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJhbGci",
        ),
        ("xoxb-1234567890-abcdefghij", "xoxb-123"),
        (
            "Authorization: Bearer abcdefghijklmnop.qrstuvwx",
            "abcdefghijklmnop",
        ),
        ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abc"),
        ("github_pat_11ABCDEFG0123456789_abcdefghij", "github_pat_11"),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "sk-ant-api03"),
        ("sk-proj-abcdefghijklmnopqrstuvwxyz", "sk-proj-abc"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----",
            "b3Blbn",
        ),
    ];

    /// Text that must stay as it is.
    const ORDINARY: &[&str] = &[
        "cargo test --workspace",
        "git push origin main",
        "https://docs.rs/serde/latest/serde/",
        "max_tokens: 256",
        "key_count = 3",
        "pk_live_publishable123456 is public",
        "ssh git@github.com",
        "file:///home/me/notes.md",
        "the password is asked for at login",
        "eyJ is how a JWT starts",
    ];

    #[test]
    fn m9_common_secret_shapes_are_redacted_and_ordinary_text_is_kept() {
        let r = Redactor::new(
            [
                ("MY_DB_PASS".to_owned(), "pa55-w0rd-xyz".to_owned()),
                (
                    "SLACK_WEBHOOK".to_owned(),
                    "https://example.invalid/hook/abcdef".to_owned(),
                ),
                (
                    "SENTRY_DSN".to_owned(),
                    "https://k3y@o1.ingest.example/2".to_owned(),
                ),
                ("SESSION_COOKIE".to_owned(), "c00kie-value-123".to_owned()),
            ],
            &[],
        );
        for (text, secret) in SECRETS {
            let redacted = r.text(text);
            assert!(!redacted.contains(secret), "{text} -> {redacted}");
            assert!(redacted.contains(REDACTED), "{text} -> {redacted}");
        }
        assert_eq!(
            r.text("postgres://app:hunter2pass@db.internal:5432/app"),
            "postgres://app:[REDACTED]@db.internal:5432/app",
            "the rest of the URL stays"
        );
        for ordinary in ORDINARY {
            assert_eq!(r.text(ordinary), *ordinary, "{ordinary}");
        }
    }

    /// Headers, flags, key blocks and newer key prefixes, each with a part
    /// that must not survive.
    const MORE_SECRETS: &[(&str, &str)] = &[
        (
            "curl -H 'Authorization: Basic dXNlcjpodW50ZXIy' https://x.invalid",
            "dXNlcjpodW50ZXIy",
        ),
        ("Authorization: Token 0123456789abcdef", "0123456789abcdef"),
        ("\"Authorization\": \"Bot MTk4NjIy.Cl2FMQ\"", "MTk4NjIy"),
        ("curl -H 'X-Api-Key: k3y-0123456789'", "k3y-0123456789"),
        ("api-key: k3y-0123456789", "k3y-0123456789"),
        ("x-goog-api-key: k3y-0123456789", "k3y-0123456789"),
        ("deploy --password hunter2 --host db", "hunter2"),
        ("tool --token abc", "abc"),
        ("tool --api-key abc", "abc"),
        ("tool --client-secret 'two words'", "two words"),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
            "lQOYBF",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nsecond-line",
            "second-line",
        ),
        ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abc"),
        ("xapp-1-A0123456789-1234567890123-abcdef", "xapp-1-A01"),
        ("glrt-abcdefghijklmnopqrstu", "glrt-abc"),
        ("gldt-abcdefghijklmnopqrstu", "gldt-abc"),
        ("glptt-abcdefghijklmnopqrstu", "glptt-abc"),
        ("pypi-AgEIcHlwaS5vcmcCJGFiY2RlZg", "pypi-AgEIcH"),
        (
            "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
            "SG.abc",
        ),
        ("ya29.a0AfH6SMBabcdefghijklmnopqrstuvwxyz", "ya29.a0A"),
        ("GOCSPX-abcdefghijklmnopqrstuvwxyz12", "GOCSPX-abc"),
        (
            "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "dop_v1_012",
        ),
        ("shpat_0123456789abcdef0123456789abcdef", "shpat_012"),
        ("hvs.CAESIabcdefghijklmnopqrstuvwxyz", "hvs.CAES"),
        ("sbp_0123456789abcdef0123456789abcdef01234567", "sbp_012"),
        (
            "gsk_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
            "gsk_abc",
        ),
        ("xai-abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "xai-abc"),
        ("r8_abcdefghijklmnopqrstuvwxyzABCDEFGHIJK", "r8_abc"),
        ("whsec_abcdefghijklmnopqrstuvwxyz012345", "whsec_abc"),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=bXlrZXk0NTY3ODkw==;EndpointSuffix=core.windows.net",
            "bXlrZXk0",
        ),
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2FzLWtleS0x=",
            "c2FzLWtl",
        ),
        (
            "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=abcDEF123%2Bxyz%3D",
            "abcDEF123",
        ),
    ];

    /// Prose near these shapes that must stay as it is.
    const MORE_ORDINARY: &[&str] = &[
        "the password is asked for at login",
        "use --token-file to read it",
        "Basic usage",
        "Basic authentication is enabled by default",
        "claude --max-tokens 256",
        "the sig=ok check",
    ];

    #[test]
    fn m9b_headers_flags_and_newer_prefixes_are_redacted() {
        let r = Redactor::new([], &[]);
        for (text, secret) in MORE_SECRETS {
            let redacted = r.text(text);
            assert!(!redacted.contains(secret), "{text} -> {redacted}");
            assert!(redacted.contains(REDACTED), "{text} -> {redacted}");
        }
        assert_eq!(
            r.text("deploy --password hunter2 --host db"),
            "deploy --password [REDACTED] --host db",
            "the flag and the next one stay"
        );
        assert_eq!(
            r.text("x-goog-api-key: k3y-0123456789"),
            "x-goog-api-key: [REDACTED]",
            "the header name stays"
        );
        assert_eq!(
            r.text("key: -----BEGIN EC PRIVATE KEY-----\nMHcC\nAoGB"),
            "key: [REDACTED]",
            "a block with no END line is hidden to the end"
        );
        for ordinary in MORE_ORDINARY {
            assert_eq!(r.text(ordinary), *ordinary, "{ordinary}");
        }
    }

    /// Passwords handed to a client by a short flag, and a secret-named
    /// variable of another spelling (#43).
    #[test]
    fn short_password_flags_of_common_clients_are_redacted() {
        let r = Redactor::new([], &[]);
        for (text, secret) in [
            ("curl -u admin:hunter2x https://x", "hunter2x"),
            ("curl --user admin:hunter2x https://x", "hunter2x"),
            ("mysql -h db -u root -phunter2x app", "hunter2x"),
            ("docker login -u me -p hunter2x registry.io", "hunter2x"),
            ("sshpass -p hunter2x ssh host", "hunter2x"),
            ("redis-cli -h cache -a hunter2x ping", "hunter2x"),
            ("MY_PRIVATE_CREDS=hunter2x ./deploy", "hunter2x"),
        ] {
            let redacted = r.text(text);
            assert!(!redacted.contains(secret), "{text} -> {redacted}");
            assert!(redacted.contains(REDACTED), "{text} -> {redacted}");
        }
        for ordinary in [
            "ssh -p 2222 host",
            "mkdir -p build/out",
            "ls -a",
            "curl -u-not-a-user x",
        ] {
            assert_eq!(r.text(ordinary), ordinary, "{ordinary}");
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
