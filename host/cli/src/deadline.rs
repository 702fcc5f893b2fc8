//! The whole answer's deadline (`hook --deadline`, shared by `wasm-hooks
//! hook` and `wasm-hooks-hook`): when the process has not answered in
//! time, the watchdog (a `SIGALRM` from `alarm(2)`: no thread to start,
//! which cost the answer 0.2–0.3 ms) writes the hooks' failure (see
//! `fallback_answer`: a block on an event that guards an action) and
//! exits. An agent's own hook timeout lets the tool through (Copilot CLI
//! always, Claude Code without `onFailure: "block"`), so `install` writes
//! an agent timeout longer than this deadline: a slow guard is then
//! decided by wasm-hooks' failure answer, never by the agent's timeout.
//!
//! Exactly one answer is written: the watchdog and the main thread each
//! [`claim`] the right to answer, and the loser writes nothing.

use std::ffi::OsString;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use super::fallback_answer::{self, Fallback};

/// The deadline when `--deadline` is not given, in seconds: under the
/// shortest default hook timeout of the agents wasm-hooks installs into
/// (60 s: Claude Code, Gemini CLI) and under the timeout `install` writes.
pub(crate) const DEFAULT_SECONDS: u64 = 50;

/// Whether an answer is being written.
static ANSWERING: AtomicBool = AtomicBool::new(false);

/// The answer the watchdog writes, made before the alarm is armed (the
/// signal handler only reads it).
static FALLBACK: OnceLock<Fallback> = OnceLock::new();

/// The child whose answer this process waits for (`wasm-hooks-hook`
/// running `wasm-hooks hook`), killed when the deadline passes; 0 for none.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Take the right to write the answer: `false` when the watchdog took it
/// first (it is writing and exits at once; write nothing).
pub(crate) fn claim() -> bool {
    !ANSWERING.swap(true, Ordering::SeqCst)
}

/// The child to kill should the deadline pass while it answers (0: none
/// any more, once it was waited for).
#[allow(
    dead_code,
    reason = "wasm-hooks-hook's: `wasm-hooks` starts no child to answer"
)]
pub(crate) fn waiting_for(pid: u32) {
    CHILD.store(i32::try_from(pid).unwrap_or(0), Ordering::SeqCst);
}

/// The deadline `args` ask for (`--deadline N` or `--deadline=N`), else
/// [`DEFAULT_SECONDS`]; 0 turns it off. (`wasm-hooks` reads it with clap.)
#[allow(
    dead_code,
    reason = "wasm-hooks-hook's, which parses no arguments; tested here"
)]
pub(crate) fn requested(args: &[OsString]) -> u64 {
    fallback_answer::option_value(args, "--deadline")
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_SECONDS)
}

/// Start the watchdog: after `seconds` (none when 0), unless an answer was
/// claimed first, write the hooks' failure for the event on `stdin` and
/// exit with its code.
pub(crate) fn watch(seconds: u64, stdin: &[u8], args: &[OsString]) {
    if seconds == 0 {
        return;
    }
    let why = format!(
        "no answer within the deadline of {seconds} s (`--deadline`), so the hooks' failure is answered"
    );
    if FALLBACK
        .set(fallback_answer::failure(stdin, args, &why))
        .is_err()
    {
        // Armed already: one deadline per process.
        return;
    }
    // SAFETY: `on_alarm` does only what is async-signal-safe (an atomic
    // swap, kill, write and _exit on data made before the alarm is
    // armed); `sigaction` is given a zeroed, then filled, struct.
    let armed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&raw mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &raw const action, std::ptr::null_mut()) == 0
    };
    if !armed {
        // No watchdog: the agent's own timeout is all that is left.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "wasm-hooks: no deadline watchdog: {}\n",
                std::io::Error::last_os_error()
            )
            .as_bytes(),
        );
        return;
    }
    // SAFETY: alarm(2) only arms this process's timer (a child does not
    // inherit it).
    unsafe {
        libc::alarm(u32::try_from(seconds).unwrap_or(u32::MAX));
    }
}

/// The alarm rang: the deadline passed.
extern "C" fn on_alarm(_: libc::c_int) {
    if let Some(answer) = FALLBACK.get() {
        expire(answer);
    }
}

/// The deadline passed: answer `answer` and exit, unless the main thread is
/// answering already.
fn expire(answer: &Fallback) {
    if !claim() {
        return;
    }
    let child = CHILD.load(Ordering::SeqCst);
    // SAFETY: kill(2) on a pid this process started and still waits for
    // (not reaped, so the pid is not reused); write(2) on the standard
    // streams; _exit(2) ends the process without running anything else,
    // as the main thread may hold locks.
    unsafe {
        if child > 0 {
            libc::kill(child, libc::SIGKILL);
        }
        write_all(1, answer.stdout.as_bytes());
        write_all(2, answer.stderr.as_bytes());
        libc::_exit(libc::c_int::from(answer.exit));
    }
}

/// `write(2)` all of `bytes` to `fd`, as far as it goes: async-signal
/// safe (it allocates nothing and takes no lock).
pub(crate) fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        let Ok(n) = usize::try_from(n) else { return };
        if n == 0 {
            return;
        }
        bytes = &bytes[n..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_is_read_from_the_arguments_in_either_spelling() {
        let args = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(requested(&args(&["--protocol", "claude"])), DEFAULT_SECONDS);
        assert_eq!(requested(&args(&["--deadline", "7"])), 7);
        assert_eq!(requested(&args(&["--deadline=0", "--protocol=gemini"])), 0);
        assert_eq!(requested(&args(&["--deadlines", "9"])), DEFAULT_SECONDS);
    }
}
