//! rate-limit-tools: deny a tool once it has been called `max_calls` times
//! within `per_seconds` in the same session. The calls are remembered in the
//! host's key-value store (`kv`), per plugin and session, since every event
//! runs on a fresh instance.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Deserialize;
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
        let mut calls: Vec<f64> = kv::get(&key)
            .and_then(|v| serde_json::from_str(&v).ok())
            .unwrap_or_default();
        calls.retain(|&t| now - t < config.per_seconds);
        if calls.len() >= config.max_calls {
            let oldest = calls.iter().copied().fold(now, f64::min);
            let wait = (config.per_seconds - (now - oldest)).ceil().max(1.0);
            return Ok(Outcome::deny(format!(
                "{tool} was called {} times in the last {} s (limit {}); try again in {wait} s",
                calls.len(),
                config.per_seconds,
                config.max_calls
            )));
        }
        calls.push(now);
        kv::set(&key, &serde_json::to_string(&calls)?)?;
        Ok(Outcome::proceed())
    }
}

export_hook!(RateLimitTools);
