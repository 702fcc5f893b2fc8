//! A plugin built against WIT 0.1.1 with the SDK of that release (pinned
//! in `tests/compat/guest-sdk-0.1`), so that the tests show a current host
//! still serving it: it denies `rm -rf`, masks `SECRET` in a Bash output
//! (0.1.x's `modify` on PostToolUse), and remembers a count in `kv`.

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook, kv};

struct Compat;

impl Hook for Compat {
    fn pre_tool_use(event: &Event) -> Result<Outcome> {
        let command = event.tool_input::<serde_json::Value>()?["command"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let seen = kv::get("seen").map_or(0, |n| n.parse::<u32>().unwrap_or(0)) + 1;
        kv::set("seen", &seen.to_string())?;
        Ok(if command.contains("rm -rf") {
            Outcome::deny(format!("0.1 plugin says no (call {seen})"))
        } else {
            Outcome::proceed()
        })
    }

    fn post_tool_use(event: &Event) -> Result<Outcome> {
        let Some(mut output) = event.tool_response::<serde_json::Value>()? else {
            return Ok(Outcome::proceed());
        };
        let Some(stdout) = output["stdout"].as_str() else {
            return Ok(Outcome::proceed());
        };
        output["stdout"] = stdout.replace("SECRET", "******").into();
        Ok(Outcome::modify_output(output))
    }
}

export_hook!(Compat);
