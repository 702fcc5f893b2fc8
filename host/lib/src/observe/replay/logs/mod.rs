//! Each agent's session log, read into [`Recorded`] events: Claude Code's
//! transcripts (subagents' too), Codex's rollout files, Gemini CLI's chat
//! records, Copilot CLI's session events, and wasm-hooks' own audit log.
//! One module per format, each learnt from logs the real binaries wrote
//! (`tests/fixtures/sessions/README.md`); this one finds the files and
//! reads any of them a line at a time in bounded memory (a line past
//! [`lines::MAX_LINE`] is counted, not held; at most [`MAX_PENDING`]
//! calls wait for their results), every record that is not an event
//! counted as unknown, never fatal.
//!
//! An event is built as the agent's own hook payload and decoded by the
//! agent's [`Protocol`], so a replayed call is the call a live hook saw.

mod audit;
mod claude;
mod codex;
mod copilot;
mod gemini;

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::SystemTime;

use serde_json::Value;

use super::{Happened, Recorded, SourceRead};
use crate::observe::lines::{self, Line};
use crate::protocol::Protocol;

/// A session log's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Claude Code's transcripts: `~/.claude/projects/<project>/<session>.jsonl`.
    Claude,
    /// Codex's rollout files: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
    /// Gemini CLI's chat records: `~/.gemini/tmp/<project>/chats/session-*.jsonl`.
    Gemini,
    /// Copilot CLI's session events: `~/.copilot/session-state/<session>/events.jsonl`.
    Copilot,
    /// wasm-hooks' own audit log: every event it dispatched.
    Audit,
}

/// One format's reading of one file: records in, events out.
trait Reading {
    /// Read one record; `false` when it is none this format knows.
    fn record(&mut self, out: &mut Out<'_>, record: &Value) -> bool;

    /// The file ended: hand on what waits for an end.
    fn end(&mut self, _out: &mut Out<'_>) {}
}

impl LogFormat {
    /// Every format.
    pub const ALL: [LogFormat; 5] = [
        LogFormat::Claude,
        LogFormat::Codex,
        LogFormat::Gemini,
        LogFormat::Copilot,
        LogFormat::Audit,
    ];

    /// Its name, as `replay --agent` takes it.
    pub fn word(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Copilot => "copilot",
            Self::Audit => "audit",
        }
    }

    /// The format a log at `path` is in, told from its name and folders.
    pub fn of_path(path: &Path) -> Option<Self> {
        let text = path.to_string_lossy();
        let has = |part: &str| text.contains(part);
        Self::ALL.into_iter().find(|format| match format {
            Self::Claude => has(".claude/projects"),
            Self::Codex => has(".codex/sessions") || has("rollout-"),
            Self::Gemini => has(".gemini/tmp"),
            Self::Copilot => has(".copilot/session-state") || text.ends_with("events.jsonl"),
            Self::Audit => has("audit"),
        })
    }

    /// The names its files end with.
    fn suffixes(self) -> &'static [&'static str] {
        match self {
            Self::Copilot => &["events.jsonl"],
            Self::Claude | Self::Codex | Self::Gemini | Self::Audit => &[".jsonl"],
        }
    }

    /// Its logs in the folder `dir` (and below), written since `since`.
    pub fn files_in(self, dir: &Path, since: Option<SystemTime>) -> Vec<PathBuf> {
        files_below(dir, self.suffixes(), since)
    }

    /// Where the agent keeps its logs below the home folder `home`, those
    /// written since `since` (none for the audit log: the engine knows
    /// where its own is). Codex's and Copilot's folders move with
    /// `$CODEX_HOME` and `$COPILOT_HOME`.
    pub fn default_files(self, home: &Path, since: Option<SystemTime>) -> Vec<PathBuf> {
        let moved = |var: &str| std::env::var_os(var).map(PathBuf::from);
        let dir = match self {
            Self::Claude => home.join(".claude/projects"),
            Self::Codex => moved("CODEX_HOME")
                .unwrap_or_else(|| home.join(".codex"))
                .join("sessions"),
            Self::Gemini => home.join(".gemini/tmp"),
            Self::Copilot => moved("COPILOT_HOME")
                .unwrap_or_else(|| home.join(".copilot"))
                .join("session-state"),
            Self::Audit => return Vec::new(),
        };
        self.files_in(&dir, since)
    }

    /// A reading of the file at `path`.
    fn reading(self, path: &Path) -> Box<dyn Reading> {
        match self {
            Self::Claude => Box::new(claude::Transcript::new(path)),
            Self::Codex => Box::new(codex::Rollout::default()),
            Self::Gemini => Box::new(gemini::Chat::new(path)),
            Self::Copilot => Box::new(copilot::Events::default()),
            Self::Audit => Box::new(audit::Audit),
        }
    }
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(word: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|f| f.word() == word)
            .ok_or_else(|| {
                let known: Vec<_> = Self::ALL.iter().map(|f| f.word()).collect();
                format!(
                    "unknown session log `{word}`: expected one of {}",
                    known.join(", ")
                )
            })
    }
}

/// Where a format's reading hands its events, with where it is.
struct Out<'a> {
    /// The file and line being read, as `file:line`.
    at: String,
    each: &'a mut dyn FnMut(Recorded),
    events: u64,
}

impl Out<'_> {
    /// `payload`, the agent's own hook input, as `protocol` decodes it,
    /// recorded here; `None` when it does not decode.
    fn recorded(&self, protocol: Protocol, payload: Value, time: Option<&str>) -> Option<Recorded> {
        let (_, event) = protocol.read(payload).ok()?;
        Some(Recorded {
            event,
            happened: Happened::Unknown,
            at: self.at.clone(),
            time: time.map(str::to_owned),
        })
    }

    /// Hand on `recorded`, as `happened`.
    fn emit(&mut self, mut recorded: Recorded, happened: Happened) {
        recorded.happened = happened;
        self.events += 1;
        (self.each)(recorded);
    }

    /// Decode and hand on at once (an event whose fate is known).
    fn event(
        &mut self,
        protocol: Protocol,
        payload: Value,
        time: Option<&str>,
        happened: Happened,
    ) -> bool {
        match self.recorded(protocol, payload, time) {
            Some(recorded) => {
                self.emit(recorded, happened);
                true
            }
            None => false,
        }
    }
}

/// The most tool calls that wait for their results; past that the oldest
/// is handed on as `unknown`.
pub(crate) const MAX_PENDING: usize = 4096;

/// Tool calls waiting for their results, by id.
#[derive(Default)]
struct Pending {
    calls: VecDeque<(String, Recorded)>,
}

impl Pending {
    /// `recorded` waits for the result of call `id`.
    fn call(&mut self, out: &mut Out<'_>, id: &str, recorded: Recorded) {
        if self.calls.len() == MAX_PENDING
            && let Some((_, oldest)) = self.calls.pop_front()
        {
            out.emit(oldest, Happened::Unknown);
        }
        self.calls.push_back((id.to_owned(), recorded));
    }

    /// The result of call `id` came: hand it on as `happened`. `false`
    /// when no call waits under that id.
    fn result(&mut self, out: &mut Out<'_>, id: &str, happened: Happened) -> bool {
        let Some(at) = self.calls.iter().position(|(waiting, _)| waiting == id) else {
            return false;
        };
        let (_, recorded) = self.calls.remove(at).expect("the position just found");
        out.emit(recorded, happened);
        true
    }

    /// The log ended: the calls with no result are handed on as `unknown`.
    fn end(&mut self, out: &mut Out<'_>) {
        for (_, recorded) in self.calls.drain(..) {
            out.emit(recorded, Happened::Unknown);
        }
    }
}

/// Read the session log `path` in `format`, handing each event to `each`.
pub fn read(format: LogFormat, path: &Path, mut each: impl FnMut(Recorded)) -> SourceRead {
    let mut source = SourceRead {
        path: path.display().to_string(),
        format: format.word().to_owned(),
        ..SourceRead::default()
    };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) => {
            source.error = Some(e.to_string());
            return source;
        }
    };
    let mut reading = format.reading(path);
    let mut out = Out {
        at: String::new(),
        each: &mut each,
        events: 0,
    };
    let mut number = 0u64;
    let mut unknown = 0u64;
    let read = lines::each_line(BufReader::new(file), lines::MAX_LINE, |line| {
        number += 1;
        let record = match line {
            Line::Whole(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => return,
            Line::Whole(bytes) => serde_json::from_slice::<Value>(bytes).ok(),
            Line::TooLong => None,
        };
        out.at = format!("{}:{number}", path.display());
        if !record.is_some_and(|record| reading.record(&mut out, &record)) {
            unknown += 1;
        }
    });
    reading.end(&mut out);
    if let Err(e) = read {
        source.error = Some(e.to_string());
    }
    source.events = out.events;
    source.unknown = unknown;
    source
}

/// The files below `dir` whose names end in one of `suffixes`, modified
/// at or after `since`, oldest first.
fn files_below(dir: &Path, suffixes: &[&str], since: Option<SystemTime>) -> Vec<PathBuf> {
    let mut found: Vec<(SystemTime, PathBuf)> = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy();
            suffixes.iter().any(|s| name.ends_with(s))
        })
        .filter_map(|entry| {
            let modified = entry.metadata().ok()?.modified().ok()?;
            since
                .is_none_or(|since| modified >= since)
                .then(|| (modified, entry.into_path()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, path)| path).collect()
}

/// A record's text field, if it is text.
fn text<'a>(record: &'a Value, field: &str) -> Option<&'a str> {
    record.get(field).and_then(Value::as_str)
}
