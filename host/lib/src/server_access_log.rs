//! `serve`'s access log: one JSON line per `POST /hook`, as it was
//! answered: when, from which client address, which project, which
//! session and agent event and tool,
//! the decision and the hook that made it, the HTTP status and how long it
//! took. No tool input, prompt, reason or header is written: nothing an
//! event carries that could be a secret reaches the log (the audit log is
//! the place for what was decided and why, redacted).

use std::io::Write;
use std::sync::Mutex;

use serde::Serialize;

/// One answered request.
#[derive(Debug, Default, Serialize)]
pub(crate) struct AccessRecord {
    /// When it was answered (RFC 3339).
    pub(crate) time: String,
    /// The client's address, as the connection gives it.
    pub(crate) client: String,
    /// The project whose hooks answered (`-` for none).
    pub(crate) project: String,
    /// The agent's session.
    pub(crate) session: String,
    /// The event.
    pub(crate) event: String,
    /// The tool, for a tool's event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool: Option<String>,
    /// The folded verdict (`proceed`, `allow`, `deny`, `ask`, `failed`).
    pub(crate) decision: String,
    /// The hook whose answer set it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) decided_by: Option<String>,
    /// The HTTP status.
    pub(crate) status: u16,
    /// How long answering took, in microseconds.
    pub(crate) duration_us: u64,
}

/// Where the lines go.
pub(crate) struct AccessLog {
    out: Mutex<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessLog")
    }
}

impl AccessLog {
    /// A log written to `out`.
    pub(crate) fn new(out: Box<dyn Write + Send>) -> Self {
        Self {
            out: Mutex::new(out),
        }
    }

    /// Write `record` as one line; a log that cannot be written is said
    /// once per failure in the server's own log, never the request's
    /// failure.
    pub(crate) fn write(&self, record: &AccessRecord) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(e) => return tracing::warn!("cannot write the access log: {e}"),
        };
        line.push(b'\n');
        let mut out = self
            .out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(e) = out.write_all(&line).and_then(|()| out.flush()) {
            tracing::warn!("cannot write the access log: {e}");
        }
    }
}
