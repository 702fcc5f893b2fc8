//! The OpenCode plugin `install opencode` writes: OpenCode has no command
//! hooks, so a small plugin (`opencode_plugin.js`, readable, the command
//! filled in) runs `wasm-hooks-hook --protocol opencode` for each of its
//! hooks and applies the answer (see `wasm_hooks::Protocol::OpenCode`).

use wasm_hooks::agents::AGENT_TIMEOUT_SECS;
use wasm_hooks::agents::InstalledHook;

/// The plugin, with `__COMMAND__` and `__TIMEOUT_MS__` to fill in.
const TEMPLATE: &str = include_str!("opencode_plugin.js");

/// The first line of every plugin written: how one of ours is known.
const MARK: &str = "// wasm-hooks for OpenCode: written by `wasm-hooks install opencode`,";

/// The plugin running `hook`'s command (its words as a JSON list: no
/// shell), with the agent timeout `install` writes everywhere.
pub(crate) fn text(hook: &InstalledHook) -> anyhow::Result<String> {
    let InstalledHook::Command(command) = hook else {
        anyhow::bail!("OpenCode has no HTTP hooks: install the command hook");
    };
    let words = shlex::split(command)
        .ok_or_else(|| anyhow::anyhow!("cannot split the command `{command}` into words"))?;
    Ok(TEMPLATE
        .replace("__COMMAND__", &serde_json::to_string(&words)?)
        .replace("__TIMEOUT_MS__", &(AGENT_TIMEOUT_SECS * 1000).to_string()))
}

/// Whether `text` is a plugin `install opencode` wrote.
pub(crate) fn is_ours(text: &str) -> bool {
    text.starts_with(MARK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_runs_the_command_word_by_word_and_is_known_as_ours() {
        let plugin = text(&InstalledHook::Command(
            "'/opt/my tools/wasm-hooks-hook' --protocol opencode".into(),
        ))
        .unwrap();
        assert!(is_ours(&plugin));
        assert!(
            plugin.contains(
                r#"const COMMAND = ["/opt/my tools/wasm-hooks-hook","--protocol","opencode"];"#
            ),
            "{plugin}"
        );
        assert!(plugin.contains("const TIMEOUT_MS = 60000;"));
        assert!(!plugin.contains("__"), "every blank filled");
        assert!(!is_ours("export const Mine = async () => ({});"));
        assert!(text(&InstalledHook::Http("http://127.0.0.1:1/hook".into())).is_err());
    }
}
