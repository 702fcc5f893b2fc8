//! Asking the person on the terminal: the question and its options on the
//! controlling terminal (`/dev/tty`, so piped stdin/stdout do not matter),
//! an answer read until the request's deadline. With no terminal, the
//! request's default applies at once.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::approval::{ApprovalChoice, ApprovalFuture, ApprovalRequest, ApprovalSystem};

/// An [`ApprovalSystem`] that asks on the controlling terminal.
#[derive(Debug, Clone)]
pub struct TerminalApproval {
    device: PathBuf,
}

impl Default for TerminalApproval {
    fn default() -> Self {
        Self {
            device: PathBuf::from("/dev/tty"),
        }
    }
}

impl TerminalApproval {
    /// Ask on `/dev/tty`.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ApprovalSystem for TerminalApproval {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        let (device, request) = (self.device.clone(), request.clone());
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask_on(&device, &request))
                .await
                .unwrap_or(None)
        })
    }
}

fn ask_on(device: &std::path::Path, request: &ApprovalRequest) -> Option<ApprovalChoice> {
    match OpenOptions::new().read(true).write(true).open(device) {
        Ok(tty) => ask(&tty, &mut &tty, request),
        Err(e) => {
            tracing::info!(
                hook = %request.hook,
                "no terminal to ask on ({}: {e}); the default applies",
                device.display(),
            );
            None
        }
    }
}

/// Show the question on `output` and read answers from `input` until one
/// names an option; `None` when the request's time is up or the input
/// ends.
pub(crate) fn ask(
    mut input: impl Read + AsFd,
    output: &mut impl Write,
    request: &ApprovalRequest,
) -> Option<ApprovalChoice> {
    let deadline = Instant::now() + request.timeout;
    let _ = write!(output, "{}", question(request));
    let _ = output.flush();
    let mut pending = Vec::new();
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            let _ = writeln!(
                output,
                "\nno answer in time: {:?} (the default)",
                request.default
            );
            return None;
        }
        if !readable(&input, remaining) {
            continue;
        }
        let mut buf = [0; 256];
        match input.read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            match choice(&String::from_utf8_lossy(&line), &request.options) {
                Some(choice) => return Some(choice),
                None => {
                    let _ = write!(output, "Please answer 1-{}: ", request.options.len());
                    let _ = output.flush();
                }
            }
        }
    }
}

fn question(request: &ApprovalRequest) -> String {
    let mut text = format!("\n[{}] {}\n", request.hook, request.prompt);
    for (i, option) in request.options.iter().enumerate() {
        text.push_str(&format!("  {}) {option}\n", i + 1));
    }
    text.push_str(&format!(
        "Choose 1-{} (no answer in {}s: {:?}): ",
        request.options.len(),
        request.timeout.as_secs(),
        request.default
    ));
    text
}

/// The choice an answer names: an option's number, an option's text or its
/// start, `y`/`yes`, `n`/`no`.
fn choice(answer: &str, options: &[String]) -> Option<ApprovalChoice> {
    let answer = answer.trim().to_lowercase();
    if answer.is_empty() {
        return None;
    }
    if let Ok(n) = answer.parse::<usize>() {
        return options
            .get(n.checked_sub(1)?)
            .map(|o| ApprovalChoice::from_option(o));
    }
    match answer.as_str() {
        "y" | "yes" => return Some(ApprovalChoice::AllowOnce),
        "n" | "no" => return Some(ApprovalChoice::Deny),
        _ => {}
    }
    let mut matching = options
        .iter()
        .filter(|o| o.to_lowercase().starts_with(&answer));
    match (matching.next(), matching.next()) {
        (Some(only), None) => Some(ApprovalChoice::from_option(only)),
        _ => None,
    }
}

/// Whether `fd` has input within `timeout`.
fn readable(fd: &impl AsFd, timeout: Duration) -> bool {
    let mut poll = libc::pollfd {
        fd: fd.as_fd().as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(timeout.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd, borrowed for the call; the fd outlives it.
    let ready = unsafe { libc::poll(&mut poll, 1, ms) };
    ready > 0
}

#[cfg(test)]
mod tests {
    use std::io::pipe;

    use super::*;
    use wasm_hooks_core::{EventName, HookId};

    fn request(timeout: Duration) -> ApprovalRequest {
        ApprovalRequest {
            hook: HookId::new("push-guard"),
            event: EventName::PreToolUse,
            prompt: "Push to main?".into(),
            options: super::super::approval::DEFAULT_OPTIONS
                .map(String::from)
                .to_vec(),
            timeout,
            default: ApprovalChoice::Deny,
        }
    }

    fn answer(typed: &str) -> (Option<ApprovalChoice>, String) {
        let (reader, mut writer) = pipe().unwrap();
        writer.write_all(typed.as_bytes()).unwrap();
        drop(writer);
        let mut shown = Vec::new();
        let choice = ask(reader, &mut shown, &request(Duration::from_secs(30)));
        (choice, String::from_utf8(shown).unwrap())
    }

    #[test]
    fn the_question_lists_the_options_and_the_default() {
        let (choice, shown) = answer("2\n");
        assert_eq!(choice, Some(ApprovalChoice::AllowAlways));
        assert!(
            shown.contains(
                "[push-guard] Push to main?\n  1) Allow once\n  2) Allow always\n  3) Deny\n"
            ),
            "{shown}"
        );
        assert!(shown.contains("no answer in 30s: Deny"), "{shown}");
    }

    #[test]
    fn answers_by_number_text_or_yes_no() {
        assert_eq!(answer("1\n").0, Some(ApprovalChoice::AllowOnce));
        assert_eq!(answer("deny\n").0, Some(ApprovalChoice::Deny));
        assert_eq!(answer("allow a\n").0, Some(ApprovalChoice::AllowAlways));
        assert_eq!(answer("y\n").0, Some(ApprovalChoice::AllowOnce));
        let (choice, shown) = answer("9\nmaybe\nn\n");
        assert_eq!(choice, Some(ApprovalChoice::Deny));
        assert_eq!(shown.matches("Please answer 1-3").count(), 2, "{shown}");
    }

    #[test]
    fn end_of_input_or_no_answer_in_time_is_no_answer() {
        assert_eq!(answer("").0, None);
        let (reader, _writer) = pipe().unwrap();
        let mut shown = Vec::new();
        let req = request(Duration::from_millis(50));
        assert_eq!(ask(reader, &mut shown, &req), None);
        assert!(
            String::from_utf8(shown)
                .unwrap()
                .contains("no answer in time")
        );
    }

    #[tokio::test]
    async fn without_a_terminal_nobody_answers() {
        let approvals = TerminalApproval {
            device: PathBuf::from("/nonexistent/tty"),
        };
        let req = request(Duration::from_secs(30));
        assert_eq!(approvals.request(&req).await, None);
    }
}
