//! Text from hooks and plugins, made safe to print: control characters
//! (escape sequences that clear a screen or retitle a terminal, newlines
//! that forge log lines) and bidirectional overrides (which reorder what a
//! line seems to say) are shown as escapes instead of acting.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` acts on a terminal or a reader rather than showing.
fn acts(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character and bidirectional override written
/// as an escape (`\n`, `\t`, `\u{1b}`); borrowed when there is none.
///
/// # Examples
/// ```
/// use wasm_hooks_core::escape_controls;
/// assert_eq!(escape_controls("ok"), "ok");
/// assert_eq!(escape_controls("a\x1b[2Jb\nc"), r"a\u{1b}[2Jb\nc");
/// ```
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if acts(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The most characters of one value [`Shown`] prints (`MAX_SHOWN_CHARS`).
pub const MAX_SHOWN_CHARS: usize = 512;

/// A value as a person is shown it (a name, a command, a reason, a path):
/// control characters and bidirectional overrides escaped as by
/// [`escape_controls`], and cut after [`MAX_SHOWN_CHARS`] characters with
/// its whole length said, so that what a person reads is what runs and no
/// value can push the rest of a prompt off the screen.
///
/// # Examples
/// ```
/// use wasm_hooks_core::{MAX_SHOWN_CHARS, Shown};
/// assert_eq!(Shown("rm\x1b[2K").to_string(), r"rm\u{1b}[2K");
/// let long = "x".repeat(MAX_SHOWN_CHARS + 1);
/// assert!(Shown(&long).to_string().ends_with(&format!("… ({} bytes in all)", long.len())));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a>(pub &'a str);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`: a width or alignment asked for applies.
        match self.0.char_indices().nth(MAX_SHOWN_CHARS) {
            None => f.pad(&escape_controls(self.0)),
            Some((cut, _)) => f.pad(&format!(
                "{}… ({} bytes in all)",
                escape_controls(&self.0[..cut]),
                self.0.len()
            )),
        }
    }
}
