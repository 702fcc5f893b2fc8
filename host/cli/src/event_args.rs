//! Where a command's event comes from (`run`, `explain`): flags, a file or
//! stdin.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::Value;
use wasm_hooks::{Event, EventName};

/// Where the event comes from: flags, a file or stdin.
#[derive(Debug, Args)]
pub(crate) struct EventArgs {
    /// Event name (canonical or alias, e.g. PreToolUse, tool:pre).
    #[arg(short, long, value_name = "NAME", conflicts_with = "event_file")]
    event: Option<String>,

    /// Tool name, for tool events.
    #[arg(short, long, value_name = "NAME", requires = "event")]
    tool: Option<String>,

    /// Tool input as a JSON object, for tool events.
    #[arg(short, long, value_name = "JSON", requires = "event")]
    input: Option<String>,

    /// Session id to put in the event record.
    #[arg(long, value_name = "ID", requires = "event")]
    session_id: Option<String>,

    /// Read the whole event record (JSON, as Claude Code sends it) from this
    /// file; with neither --event nor --event-file it is read from stdin.
    #[arg(long, value_name = "FILE")]
    event_file: Option<PathBuf>,
}

/// Where the event comes from, once the flags are checked.
enum EventSource {
    Flags {
        name: EventName,
        tool: Option<String>,
        input: Option<Value>,
        session_id: Option<String>,
    },
    File(PathBuf),
    Stdin,
}

impl EventArgs {
    /// The event these flags describe (read from a file or stdin if so).
    pub(crate) fn event(&self) -> anyhow::Result<Event> {
        EventSource::from_args(self)?.into_event()
    }
}

impl EventSource {
    fn from_args(args: &EventArgs) -> anyhow::Result<Self> {
        if let Some(path) = &args.event_file {
            return Ok(Self::File(path.clone()));
        }
        let Some(name) = &args.event else {
            return Ok(Self::Stdin);
        };
        let name = EventName::parse(name).context("--event")?;
        let input = args
            .input
            .as_deref()
            .map(|text| match serde_json::from_str(text) {
                Ok(v @ Value::Object(_)) => Ok(v),
                Ok(_) => bail!("--input must be a JSON object, like '{{\"command\":\"ls\"}}'"),
                Err(e) => bail!("--input is not JSON: {e}"),
            })
            .transpose()?;
        Ok(Self::Flags {
            name,
            tool: args.tool.clone(),
            input,
            session_id: args.session_id.clone(),
        })
    }

    fn into_event(self) -> anyhow::Result<Event> {
        let (text, origin) = match self {
            Self::Flags {
                name,
                tool,
                input,
                session_id,
            } => {
                let mut event = Event::new(name);
                if let Some(tool) = tool {
                    event = event.with("tool_name", tool);
                }
                if let Some(input) = input {
                    event = event.with("tool_input", input);
                }
                let session =
                    session_id.unwrap_or_else(|| format!("wasm-hooks-run-{}", std::process::id()));
                return Ok(event.with("session_id", session));
            }
            Self::File(path) => {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading event file {}", path.display()))?;
                (text, path.display().to_string())
            }
            Self::Stdin => {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .context("reading the event from stdin")?;
                (text, "stdin".to_owned())
            }
        };
        let value: Value = serde_json::from_str(&text)
            .with_context(|| format!("the event on {origin} is not JSON"))?;
        Event::from_json(value).with_context(|| format!("the event on {origin}"))
    }
}
