//! Messages for the person: hooks' user messages and warnings, hooks'
//! own output unless they asked to hide it, and tool output, which no hook
//! can hide.

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, PoisonError};

use wasm_hooks_core::{HookId, HookOutput, Severity};

/// Where the host shows things to the person (never to the model).
pub trait DisplaySystem: Send + Sync {
    /// A hook's message, or a warning about a hook, at a level.
    fn message(&self, hook: &HookId, severity: Severity, text: &str);
    /// What a hook printed or logged (not called when the hook asked to
    /// suppress its output).
    fn hook_output(&self, hook: &HookId, output: &HookOutput);
    /// A tool's output: always shown, whatever the hooks say.
    fn tool_output(&self, tool: &str, output: &str);
}

/// A [`DisplaySystem`] writing lines to a stream (stderr by default), with
/// colour by level when the stream is a terminal and `NO_COLOR` is unset.
pub struct TerminalDisplay {
    out: Mutex<Box<dyn Write + Send>>,
    colour: bool,
}

impl std::fmt::Debug for TerminalDisplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalDisplay")
            .field("colour", &self.colour)
            .finish_non_exhaustive()
    }
}

impl Default for TerminalDisplay {
    fn default() -> Self {
        let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Self::to_writer(Box::new(std::io::stderr()), colour)
    }
}

impl TerminalDisplay {
    /// Write to stderr.
    pub fn new() -> Self {
        Self::default()
    }

    /// Write to `out`, with ANSI colours or not.
    pub fn to_writer(out: Box<dyn Write + Send>, colour: bool) -> Self {
        Self {
            out: Mutex::new(out),
            colour,
        }
    }

    fn line(&self, colour: &str, text: &str) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = if self.colour {
            writeln!(out, "\x1b[{colour}m{text}\x1b[0m")
        } else {
            writeln!(out, "{text}")
        };
    }
}

const RED: &str = "31";
const YELLOW: &str = "33";
const CYAN: &str = "36";
const DIM: &str = "2";
const PLAIN: &str = "0";

impl DisplaySystem for TerminalDisplay {
    fn message(&self, hook: &HookId, severity: Severity, text: &str) {
        let (colour, label) = match severity {
            Severity::Error => (RED, "error"),
            Severity::Warning => (YELLOW, "warning"),
            Severity::Info => (CYAN, "info"),
        };
        self.line(colour, &format!("[{hook}] {label}: {text}"));
    }

    fn hook_output(&self, hook: &HookId, output: &HookOutput) {
        let streams = [("stdout", &output.stdout), ("stderr", &output.stderr)];
        for (stream, text) in streams {
            for line in text.lines() {
                self.line(DIM, &format!("[{hook}] {stream}: {line}"));
            }
        }
        for line in &output.logs {
            self.line(DIM, &format!("[{hook}] log: {line}"));
        }
    }

    fn tool_output(&self, tool: &str, output: &str) {
        for line in output.lines() {
            self.line(PLAIN, &format!("[{tool}] {line}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A shared buffer to read back what was written.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn levels_are_coloured_when_asked() {
        let buffer = Buffer::default();
        let display = TerminalDisplay::to_writer(Box::new(buffer.clone()), true);
        let hook = HookId::new("lint");
        display.message(&hook, Severity::Error, "broken");
        display.message(&hook, Severity::Warning, "careful");
        display.message(&hook, Severity::Info, "fyi");
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "\x1b[31m[lint] error: broken\x1b[0m\n\x1b[33m[lint] warning: careful\x1b[0m\n\x1b[36m[lint] info: fyi\x1b[0m\n"
        );
    }

    #[test]
    fn plain_output_names_hook_and_stream() {
        let buffer = Buffer::default();
        let display = TerminalDisplay::to_writer(Box::new(buffer.clone()), false);
        let output = HookOutput {
            stdout: "a\nb\n".into(),
            logs: vec!["checked".into()],
            ..HookOutput::default()
        };
        display.hook_output(&HookId::new("h"), &output);
        display.tool_output("Bash", "done");
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "[h] stdout: a\n[h] stdout: b\n[h] log: checked\n[Bash] done\n"
        );
    }
}
