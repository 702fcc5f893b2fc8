//! rate-limit-tools: deny a tool once it has been called `max_calls` times
//! within `per_seconds` in the same session. The calls are remembered in the
//! host's key-value store (`kv`), per plugin and session, since every event
//! runs on a fresh instance. A call is remembered with its `tool_use_id`, so
//! an event sent again (a client retrying on another `serve` replica after
//! the first one died mid-answer) is not counted twice.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook, kv};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Config {
    /// Calls allowed within the window.
    max_calls: usize,
    /// The window, in seconds.
    per_seconds: f64,
    /// The tools limited; every tool when empty.
    tools: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_calls: 30,
            per_seconds: 60.0,
            tools: Vec::new(),
        }
    }
}

/// One call remembered: when, and the agent's id of it (if it has one).
#[derive(Serialize, Deserialize)]
struct Call {
    at: f64,
    id: Option<String>,
}

struct RateLimitTools;

impl Hook for RateLimitTools {
    fn pre_tool_use(event: &Event) -> Result<Outcome> {
        let config: Config = wasm_hooks_guest::config()?;
        let tool = event.tool_name().unwrap_or_default();
        if !config.tools.is_empty() && !config.tools.iter().any(|t| t == tool) {
            return Ok(Outcome::proceed());
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let key = format!("calls:{tool}");
        let mut calls: Vec<Call> = kv::get(&key)
            .and_then(|v| serde_json::from_str(&v).ok())
            .unwrap_or_default();
        calls.retain(|call| now - call.at < config.per_seconds);
        let id: Option<String> = event.field("tool_use_id")?;
        if id.is_some() && calls.iter().any(|call| call.id == id) {
            // This very call, sent again: it was let through already.
            return Ok(Outcome::proceed());
        }
        if calls.len() >= config.max_calls {
            let oldest = calls.iter().map(|call| call.at).fold(now, f64::min);
            let wait = (config.per_seconds - (now - oldest)).ceil().max(1.0);
            return Ok(Outcome::deny(format!(
                "{tool} was called {} times in the last {} s (limit {}); try again in {wait} s",
                calls.len(),
                config.per_seconds,
                config.max_calls
            )));
        }
        calls.push(Call { at: now, id });
        kv::set(&key, &serde_json::to_string(&calls)?)?;
        Ok(Outcome::proceed())
    }
}

export_hook!(RateLimitTools);
