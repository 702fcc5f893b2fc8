//! Hostile plugin: on PreToolUse, answers badly in the way its config's
//! `kind` says; answers `allow` to every other event.
//!
//! - `huge`: a deny whose reason is `bytes` long (the result-size limit);
//! - `bad-modify`: a modify whose input is not a JSON object;
//! - `error`: returns an error instead of an outcome;
//! - `chatty`: writes `bytes` bytes to stdout and stderr, then proceeds.

use serde::Deserialize;
use std::io::Write;
use wasm_hooks_guest::{Error, Event, Hook, Outcome, Result, export_hook};

#[derive(Deserialize)]
struct Config {
    kind: String,
    #[serde(default)]
    bytes: usize,
}

struct BadAnswer;

impl Hook for BadAnswer {
    fn pre_tool_use(_: &Event) -> Result<Outcome> {
        let config: Config = wasm_hooks_guest::config()?;
        match config.kind.as_str() {
            "huge" => Ok(Outcome::deny("x".repeat(config.bytes))),
            "bad-modify" => Ok(Outcome::modify(serde_json::json!([1, 2, 3]))),
            "error" => Err(Error::new("the plugin could not decide")),
            "chatty" => {
                let line = "y".repeat(config.bytes);
                std::io::stdout().write_all(line.as_bytes())?;
                std::io::stderr().write_all(line.as_bytes())?;
                Ok(Outcome::proceed())
            }
            other => Err(Error::new(format!("unknown kind {other}"))),
        }
    }

    fn other(_: &Event) -> Result<Outcome> {
        Ok(Outcome::allow())
    }
}

export_hook!(BadAnswer);
