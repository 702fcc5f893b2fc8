//! `wasm-hooks-hook`: `wasm-hooks hook` for agents, at the cost of a small
//! process. It takes the same arguments, forwards the event to the warm
//! daemon of the `wasm-hooks` beside it (see `daemon/`), and prints its
//! answer; whenever the daemon does not answer (none running yet,
//! `WASM_HOOKS_DAEMON=off`, `-v`, a stderr that is a terminal, arguments it
//! does not take) it runs that `wasm-hooks hook` instead, which answers
//! in-process and starts a daemon for the next event. It links neither
//! wasmtime nor tokio: its start-up is that of a small program.

// No Rust start-up: `main` below is the C entry point. Rust's own start-up
// (finding the main thread's stack in /proc/self/maps, a signal stack, the
// standard streams checked) costs about 0.1 ms of this small process on
// the machine measured (docs/benchmarks.md), and none of it is needed
// here. (So no test harness either: `test = false` in Cargo.toml; the
// shared modules' tests run in `wasm-hooks`.)
#![no_main]

// The daemon's own modules, shared with `wasm-hooks` (this package has no
// library); what only the daemon side uses is unused here.
#[path = "deadline.rs"]
mod deadline;
#[path = "fallback_answer.rs"]
mod fallback_answer;
#[path = "daemon/place.rs"]
#[allow(dead_code)]
mod place;
#[path = "daemon/wire.rs"]
#[allow(dead_code)]
mod wire;

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::{IsTerminal as _, Read as _, Write as _};
use std::process::{Command, Stdio};

use place::{OWN_VARIABLES, Place};
use wire::{Reply, Request};

/// The C entry point (see `no_main` above); `std::env::args_os` still
/// works, as glibc hands the arguments to Rust's own initializer.
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // As Rust's start-up would: a reader of our output that went away is a
    // write error, not a signal that kills us.
    // SAFETY: setting a signal's disposition to "ignore" has no handler to
    // make safe.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    libc::c_int::from(run())
}

/// Forward (or run in full), and the exit code.
fn run() -> u8 {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    // Room for a usual event at once (from empty, it is read in small
    // pieces, a system call each).
    let mut stdin = Vec::with_capacity(wire::RECEIVE_BUFFER);
    // What could not be read is for `wasm-hooks hook` to report.
    let read = std::io::stdin().read_to_end(&mut stdin);
    deadline::watch(deadline::requested(&args), &stdin, &args);
    let Ok(full) = std::env::current_exe().map(|exe| exe.with_file_name("wasm-hooks")) else {
        return answer_failure(
            &stdin,
            &args,
            "wasm-hooks-hook cannot find its own executable",
        );
    };
    if read.is_ok()
        && let Some(code) = forwarded(&full, &args, &stdin)
    {
        return code;
    }
    in_full(&full, &args, &stdin)
}

/// Write the hooks' failure for `why` (see `fallback_answer`); its exit
/// code.
fn answer_failure(stdin: &[u8], args: &[OsString], why: &str) -> u8 {
    let answer = fallback_answer::failure(stdin, args, why);
    claim_or_wait();
    let _ = std::io::stdout().write_all(answer.stdout.as_bytes());
    let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    answer.exit
}

/// The daemon's answer, printed; `None` when it did not answer.
fn forwarded(full: &std::path::Path, args: &[OsString], stdin: &[u8]) -> Option<u8> {
    if std::env::var(OWN_VARIABLES).is_ok_and(|way| way == "off") || std::io::stderr().is_terminal()
    {
        return None;
    }
    let mut argv = vec!["wasm-hooks".to_owned(), "hook".to_owned()];
    for arg in args {
        argv.push(arg.to_str()?.to_owned());
    }
    let place = Place::of(full).ok()??;
    let request = Request {
        key: Cow::Borrowed(&place.key),
        argv,
        stdin: Cow::Borrowed(std::str::from_utf8(stdin).ok()?),
        env: place::request_variables()?,
    };
    match wire::exchange(&place, &request) {
        Ok(Some(Reply::Answered {
            stdout,
            stderr,
            exit,
        })) => {
            claim_or_wait();
            let _ = std::io::stdout().write_all(stdout.as_bytes());
            let _ = std::io::stderr().write_all(stderr.as_bytes());
            Some(exit)
        }
        _ => None,
    }
}

/// Run `wasm-hooks hook` with these arguments on `stdin`; its exit code.
/// When it cannot be run, or ends without an answer of its own (killed by
/// a signal, or an exit code no answer has), this answers the hooks'
/// failure in its place: an agent takes a hook that died for "go on".
fn in_full(full: &std::path::Path, args: &[OsString], stdin: &[u8]) -> u8 {
    // Its answer comes through this process, so that the deadline's
    // watchdog and it never both write one.
    let started = Command::new(full)
        .arg("hook")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(e) => {
            let why = format!("wasm-hooks-hook: running {}: {e}", full.display());
            return answer_failure(stdin, args, &why);
        }
    };
    deadline::waiting_for(child.id());
    if let Some(mut pipe) = child.stdin.take() {
        // A hook process that stops reading early closes the pipe.
        let _ = pipe.write_all(stdin);
    }
    let mut answer = Vec::new();
    if let Some(mut pipe) = child.stdout.take() {
        let _ = pipe.read_to_end(&mut answer);
    }
    let waited = child.wait();
    deadline::waiting_for(0);
    let why = match waited {
        Ok(status) => match status.code().and_then(|code| u8::try_from(code).ok()) {
            Some(code @ 0..=2) => {
                claim_or_wait();
                let _ = std::io::stdout().write_all(&answer);
                return code;
            }
            Some(code) => format!("{} hook ended with exit code {code}", full.display()),
            None => format!("{} hook ended without an answer ({status})", full.display()),
        },
        Err(e) => format!("waiting for {}: {e}", full.display()),
    };
    answer_failure(stdin, args, &why)
}

/// Take the right to answer; when the deadline's watchdog took it first,
/// wait for it to end the process with its answer.
fn claim_or_wait() {
    if !deadline::claim() {
        loop {
            std::thread::park();
        }
    }
}
