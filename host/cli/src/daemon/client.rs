//! The `hook` side: forward the invocation to the daemon for this process
//! (see [`super::place`]) and print its answer; or, when there is none,
//! answer in-process and start one for the next event.
//!
//! `WASM_HOOKS_DAEMON` chooses: `auto` (the default), `off` (never), or
//! `only` (always through a daemon, starting one and waiting for it if
//! needed; for tests and for checking that the daemon answers).

use std::borrow::Cow;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::place::{self, OWN_VARIABLES, Place};
use super::wire::{self, Reply, Request};

/// What became of forwarding one invocation.
#[derive(Debug)]
pub(crate) enum Forwarded {
    /// The daemon answered: what to write and the exit code.
    Answered {
        /// For stdout.
        stdout: String,
        /// For stderr.
        stderr: String,
        /// The exit code.
        exit: u8,
    },
    /// The daemon may have run the hooks but its answer was lost, or
    /// `only` was asked and no daemon answered: the hooks' failure.
    Failed(String),
    /// Answer in-process; then start this daemon, if any.
    InProcess {
        /// The daemon to start for the next event.
        start: Option<Place>,
    },
}

/// How `hook` uses a daemon (`WASM_HOOKS_DAEMON`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Auto,
    Off,
    Only,
}

/// The most daemons one user runs at once (`MAX_DAEMONS`): past it, `hook`
/// answers in-process and starts none.
const MAX_DAEMONS: usize = 8;

/// How many daemons run beside `place`'s directory: lock files held.
fn live_daemons(place: &Place) -> usize {
    let Some(dir) = place.lock.parent() else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "lock"))
        .filter(|e| {
            std::fs::File::open(e.path())
                .is_ok_and(|file| matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
        })
        .count()
}

/// How long `only` waits for a daemon it started.
const START_WAIT: Duration = Duration::from_secs(10);

/// How `WASM_HOOKS_DAEMON` asks for a daemon to be used.
fn mode() -> Mode {
    match std::env::var(OWN_VARIABLES).as_deref() {
        Err(_) | Ok("" | "auto") => Mode::Auto,
        Ok("off") => Mode::Off,
        Ok("only") => Mode::Only,
        Ok(other) => {
            tracing::warn!("{OWN_VARIABLES}={other}: expected auto, off or only; not using one");
            Mode::Off
        }
    }
}

/// Forward this process's `hook` invocation, whose stdin was `stdin`.
pub(crate) fn forward(stdin: &str, verbose: u8) -> Forwarded {
    let in_process = Forwarded::InProcess { start: None };
    let mode = mode();
    // With -v the log lines belong to this process; at a terminal a
    // person is trying things out, and colours differ.
    if mode == Mode::Off || verbose > 0 || std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return in_process;
    }
    let Some(argv) = std::env::args_os()
        .map(|arg| arg.into_string().ok())
        .collect::<Option<Vec<String>>>()
    else {
        return in_process;
    };
    let place = match Place::of_this_process() {
        Ok(Some(place)) => place,
        Ok(None) if mode == Mode::Only => {
            return Forwarded::Failed(format!(
                "{OWN_VARIABLES}=only, but $XDG_RUNTIME_DIR is not set"
            ));
        }
        Ok(None) => return in_process,
        Err(why) => {
            tracing::debug!("no daemon: {why}");
            return match mode {
                Mode::Only => Forwarded::Failed(format!("no daemon: {why}")),
                _ => in_process,
            };
        }
    };
    let Some(env) = place::request_variables() else {
        return in_process;
    };
    let request = Request {
        key: Cow::Borrowed(&place.key),
        argv,
        stdin: Cow::Borrowed(stdin),
        env,
    };
    let mut reply = wire::exchange(&place, &request);
    if mode == Mode::Only && matches!(reply, Ok(None)) {
        if let Err(why) = start(&place) {
            return Forwarded::Failed(why);
        }
        let started = Instant::now();
        while !place.socket.exists() && started.elapsed() < START_WAIT {
            std::thread::sleep(Duration::from_millis(5));
        }
        reply = wire::exchange(&place, &request);
    }
    match (reply, mode) {
        (
            Ok(Some(Reply::Answered {
                stdout,
                stderr,
                exit,
            })),
            _,
        ) => Forwarded::Answered {
            stdout,
            stderr,
            exit,
        },
        (Ok(Some(Reply::Declined { why })), Mode::Only) => {
            Forwarded::Failed(format!("the daemon declined: {why}"))
        }
        (Ok(Some(Reply::Declined { why })), _) => {
            tracing::debug!("the daemon declined: {why}");
            in_process
        }
        (Ok(None), Mode::Only) => {
            Forwarded::Failed(format!("no daemon answered on {}", place.socket.display()))
        }
        (Ok(None), _) => Forwarded::InProcess { start: Some(place) },
        (Err(e), _) => Forwarded::Failed(format!("the daemon's answer was lost: {e}")),
    }
}

/// Start the daemon for `place` in the background: its own process group
/// (an agent's timeout kills the hook's group, not it), no stdio (an agent
/// waits for the hook's pipes to close). A second one started at the same
/// time finds the lock taken and exits.
///
/// Refused, with why, when [`MAX_DAEMONS`] already run: a caller whose
/// environment differs on every event (a variable in the key that changes
/// each time) would otherwise start one per event.
pub(crate) fn start(place: &Place) -> Result<(), String> {
    let live = live_daemons(place);
    if live >= MAX_DAEMONS {
        return Err(format!(
            "{live} wasm-hooks daemons already run for you (at most {MAX_DAEMONS}), so none is started: a variable that changes between events is likely in the daemon's key (see `wasm-hooks daemon --help`)"
        ));
    }
    let spawned = std::env::current_exe().and_then(|exe| {
        Command::new(exe)
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
    });
    match spawned {
        Ok(child) => {
            tracing::debug!(pid = child.id(), socket = %place.socket.display(), "daemon started");
        }
        Err(e) => tracing::debug!("starting a daemon: {e}"),
    }
    Ok(())
}
