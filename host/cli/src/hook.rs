//! `wasm-hooks hook`: stand in as an agent's command hook. Read the agent's
//! event on stdin, run every configured hook, and answer on stdout (and by
//! exit code) in the agent's own protocol.

use std::io::{Read, Write as _};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use serde_json::Value;
use wasm_hooks::{Answer, DEFAULT_STOP_LOOP_LIMIT, Event, HookEngineBuilder, Protocol};

use super::daemon::client::{self, Forwarded};
use super::daemon::engines::{Built, FromDaemon};
use super::install::Agent;
use super::speaks::Speaks;
use super::stderr::Stderr;
use super::{deadline, last_words};

use super::audit::AuditLogArg;
use super::explain::{self, ProjectChoice};
use super::hook_files::HookFileArgs;
use super::{Exit, report};

/// Arguments of `wasm-hooks hook`.
#[derive(Debug, Clone, Args)]
pub(crate) struct HookArgs {
    /// The agent whose protocol to speak, or `canonical` (`none`):
    /// wasm-hooks' own, the canonical event in and the whole outcome out,
    /// for a program that is none of the agents.
    #[arg(long, value_enum, default_value_t = Speaks::Agent(Agent(Protocol::Claude)))]
    protocol: Speaks,

    #[command(flatten)]
    hook_files: HookFileArgs,

    #[command(flatten)]
    audit: AuditLogArg,

    /// When the hooks cannot run at all (hook files that do not load, an
    /// unreadable event), let the agent go on; by default an event that
    /// guards an action (PreToolUse, PermissionRequest, UserPromptSubmit)
    /// or an unreadable one is blocked with the reason, and any other goes
    /// on with the reason shown to the person.
    #[arg(long)]
    fail_open: bool,

    /// Also say on stderr why each hook ran or not (as `wasm-hooks
    /// explain`); the answer on stdout is unchanged.
    #[arg(long)]
    explain: bool,

    /// How many Stop (or SubagentStop) blocks in a row a session may get
    /// before one goes through, with a warning naming the hook. Counted in
    /// $XDG_STATE_HOME/wasm-hooks/stop-loops (else
    /// ~/.local/state/wasm-hooks/stop-loops), one small file per session
    /// in the middle of a loop.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STOP_LOOP_LIMIT)]
    stop_loop_limit: u32,

    /// Answer within this many seconds, whatever the hooks are doing: past
    /// it the hooks' failure is answered (a block on an event that guards
    /// an action). Keep it under the agent's own hook timeout, which lets
    /// the tool through; 0 turns it off.
    #[arg(long, value_name = "SECONDS", default_value_t = deadline::DEFAULT_SECONDS)]
    deadline: u64,

    /// The agent's name of the event, for an agent whose input does not
    /// name it (Copilot CLI's own format: `--agent-event preToolUse`);
    /// ignored when the input names one.
    #[arg(long, value_name = "EVENT")]
    agent_event: Option<String>,
}

// The deadline comes before the agent timeout `install` writes: else the
// agent's timeout, which lets the tool through, would decide a slow guard
// before wasm-hooks' failure answer could.
const _: () = assert!(deadline::DEFAULT_SECONDS < wasm_hooks::agents::AGENT_TIMEOUT_SECS);

pub(crate) fn run(args: HookArgs, verbose: u8) -> anyhow::Result<Exit> {
    let input = read_stdin();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let stdin = input.as_deref().map_or(&[][..], str::as_bytes);
    deadline::watch(args.deadline, stdin, &argv);
    let mut start_daemon = None;
    let reply = match input.as_deref().map(|text| client::forward(text, verbose)) {
        Ok(Forwarded::Answered {
            stdout,
            stderr,
            exit,
        }) => HookReply {
            stdout,
            stderr,
            exit,
        },
        Ok(Forwarded::Failed(why)) => failed(&args, input.as_deref(), &why),
        Ok(Forwarded::InProcess { start }) => {
            start_daemon = start;
            respond_or_last_words(&args, input.as_deref())
        }
        Err(_) => respond_or_last_words(&args, input.as_deref()),
    };
    if !deadline::claim() {
        // The deadline passed: its answer is being written, and the
        // process ends with it.
        loop {
            std::thread::park();
        }
    }
    report::print(&reply.stdout)?;
    Stderr.write_all(reply.stderr.as_bytes())?;
    // The agent has its answer: now the engine this process built goes
    // (its runtime, its plugins' memory, an MCP server it started).
    DROPPED_AFTER_ANSWER.with_borrow_mut(Option::take);
    if let Some(place) = start_daemon
        && let Err(why) = client::start(&place)
    {
        tracing::warn!("{why}; answering in-process");
    }
    Ok(Exit::of_code(reply.exit))
}

/// [`respond`] in this process, with the hooks' failure ready to be
/// written should the process abort on the way (out of memory, a stack
/// overflow): see [`last_words`].
fn respond_or_last_words(args: &HookArgs, input: Result<&str, &String>) -> HookReply {
    respond_as(args, input, None, true)
}

/// Why the answer prepared by [`respond_or_last_words`] was written.
const ABORTED: &str = "wasm-hooks aborted while answering (out of memory, a stack overflow or another fatal fault; see above)";

/// What one `hook` invocation prints and exits with.
#[derive(Debug, Default)]
pub(crate) struct HookReply {
    /// For stdout.
    pub(crate) stdout: String,
    /// For stderr, besides what was written to [`Stderr`] on the way.
    pub(crate) stderr: String,
    /// The exit code.
    pub(crate) exit: u8,
}

impl HookReply {
    fn of(answer: &Answer) -> Self {
        Self {
            stdout: if answer.body.is_null() {
                String::new()
            } else {
                format!("{}\n", answer.body)
            },
            stderr: answer
                .stderr
                .iter()
                .map(|line| format!("{line}\n"))
                .collect(),
            exit: match answer.exit_code {
                0 => Exit::GoOn,
                2 => Exit::Denied,
                _ => Exit::Failed,
            }
            .code(),
        }
    }
}

/// Answer the event `input` (stdin, or why it could not be read) by
/// running the hooks, on the daemon's runtime and with its caller's
/// variables when given, or on a runtime of its own. Log lines and
/// `--explain` go to [`Stderr`] as they come.
pub(crate) fn respond(
    args: &HookArgs,
    input: Result<&str, &String>,
    daemon: Option<FromDaemon>,
) -> HookReply {
    respond_as(args, input, daemon, false)
}

/// [`respond`], with [`last_words`] armed (when asked) from the event once
/// it is read: no second parse of it.
fn respond_as(
    args: &HookArgs,
    input: Result<&str, &String>,
    daemon: Option<FromDaemon>,
    arm_last_words: bool,
) -> HookReply {
    let protocol = args.protocol.protocol();
    let answer = match input
        .map_err(Clone::clone)
        .and_then(|text| read_event(args, protocol, text))
    {
        Ok((sender, mut event)) => {
            let name = event.name();
            let _armed = arm_last_words.then(|| {
                last_words::arm(HookReply::of(&protocol.failure(
                    Some(name),
                    ABORTED,
                    args.fail_open,
                )))
            });
            // A panic anywhere in answering is the hooks' failure, never
            // an exit without an answer (which an agent takes for "go on").
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                answer(args, sender, &mut event, daemon)
            }))
            .unwrap_or_else(|panic| Err(format!("wasm-hooks failed: {}", panic_text(&*panic))))
            .unwrap_or_else(|message| protocol.failure(Some(name), &message, args.fail_open))
        }
        Err(message) => protocol.failure(None, &message, args.fail_open),
    };
    HookReply::of(&answer)
}

/// What a panic said, as far as it can be told.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// The answer when the hooks could not be run, for `why`.
fn failed(args: &HookArgs, input: Result<&str, &String>, why: &str) -> HookReply {
    let protocol = args.protocol.protocol();
    let event = input
        .ok()
        .and_then(|text| read_event(args, protocol, text).ok());
    HookReply::of(&protocol.failure(event.map(|(_, event)| event.name()), why, args.fail_open))
}

/// Everything on stdin, or why it could not be read.
fn read_stdin() -> Result<String, String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("reading the event from stdin: {e}"))?;
    Ok(text)
}

impl HookArgs {
    /// The compile cache flags, which choose the daemon's runtime.
    pub(crate) fn cache(&self) -> &super::hook_files::CacheArgs {
        self.hook_files.cache()
    }
}

/// The user's state directory for wasm-hooks: `$XDG_STATE_HOME/wasm-hooks`,
/// else `~/.local/state/wasm-hooks`.
fn state_dir() -> Option<PathBuf> {
    wasm_hooks::cli_support::xdg_dir("XDG_STATE_HOME", ".local/state")
        .map(|dir| dir.join("wasm-hooks"))
}

/// The agent's event, read from stdin (one the catalogue does not know,
/// from a newer agent, reaches `*` hooks only, and is never blocked), and
/// the protocol of the agent that sent it ([`Protocol::read`]).
fn read_event(
    args: &HookArgs,
    protocol: Protocol,
    text: &str,
) -> Result<(Protocol, Event), String> {
    let mut value: Value =
        wasm_hooks::event_json(text).map_err(|e| format!("the event on stdin is not JSON: {e}"))?;
    if let (Some(name), Value::Object(record)) = (&args.agent_event, &mut value) {
        record
            .entry("hook_event_name")
            .or_insert_with(|| name.as_str().into());
    }
    protocol
        .read(value)
        .map_err(|e| format!("the event on stdin: {e}"))
}

/// Dispatch and encode; an `Err` is why the hooks could not run.
fn answer(
    args: &HookArgs,
    protocol: Protocol,
    event: &mut Event,
    daemon: Option<FromDaemon>,
) -> Result<Answer, String> {
    // The project is the agent's: --project-dir, else CLAUDE_PROJECT_DIR,
    // else the event's cwd; the hooks are told which (`project_dir`).
    let place =
        ProjectChoice::for_agent_event(&args.hook_files, event).map_err(|e| format!("{e:#}"))?;
    tracing::info!(project = %place.dir.display(), chosen_by = place.why, "project");
    event.set_project_dir(&place.dir);
    let state_dir = state_dir();
    let make = || {
        let mut builder = args
            .hook_files
            .builder_in(&[], Some(place.dir.clone()))
            .map_err(|e| format!("{e:#}"))?;
        args.audit.apply(&mut builder);
        builder.stop_loop_limit(args.stop_loop_limit).lints(false);
        if let Some(dir) = &state_dir {
            builder.state_dir(dir);
        }
        Ok(builder)
    };
    let built = match daemon {
        Some(daemon) => daemon.engine(&place.dir, state_dir.is_some(), make)?,
        None => {
            let mut builder: HookEngineBuilder = make()?;
            let mut options = args.hook_files.runtime_options();
            options.like_a_process();
            builder.runtime_options(options);
            Built::now(builder)?
        }
    };
    let answer = ASYNC_RUNTIME.with(|runtime| {
        let runtime = (**runtime)
            .as_ref()
            .map_err(|e| format!("starting the async runtime: {e}"))?;
        let outcome = run_hooks(args, &place, &built.builder, &built.engine, event, runtime);
        Ok(protocol.encode(event, &outcome))
    });
    DROPPED_AFTER_ANSWER.set(Some(built));
    answer
}

thread_local! {
    /// The engine that answered, dropped once the answer is written
    /// ([`run`]): a process answering one event does not make the agent
    /// wait for its teardown. A daemon's worker drops it at its next
    /// answer (the daemon keeps its engines anyway).
    static DROPPED_AFTER_ANSWER: std::cell::RefCell<Option<Built>> =
        const { std::cell::RefCell::new(None) };

    /// This thread's async runtime, made on first use: a process answers
    /// once, a daemon's worker thread many times, with the engines it
    /// keeps (their connections and sessions are this runtime's). Never
    /// dropped: a runtime dropped while thread-locals are torn down may
    /// panic, and the hooks it ran are all finished once an answer is made.
    static ASYNC_RUNTIME: std::mem::ManuallyDrop<std::io::Result<tokio::runtime::Runtime>> =
        std::mem::ManuallyDrop::new(
            tokio::runtime::Builder::new_current_thread().enable_all().build(),
        );
}

/// Let `engines` make ready, on this thread's async runtime, what their
/// next events would make on the way to an answer (their plugins' fresh
/// instances): a daemon's worker does it after its reply is sent.
pub(crate) fn prepare(engines: &[Arc<wasm_hooks::HookEngine>]) {
    ASYNC_RUNTIME.with(|runtime| {
        if let Ok(runtime) = &**runtime {
            for engine in engines {
                runtime.block_on(engine.prepare());
            }
        }
    });
}

/// Dispatch `event` to `engine` on `runtime` (explaining on [`Stderr`]
/// when asked), and wait for the hooks it left running in the background.
fn run_hooks(
    args: &HookArgs,
    place: &ProjectChoice,
    builder: &wasm_hooks::HookEngineBuilder,
    engine: &wasm_hooks::HookEngine,
    event: &Event,
    runtime: &tokio::runtime::Runtime,
) -> wasm_hooks::Outcome {
    let outcome = if args.explain {
        let explanation = runtime.block_on(engine.explain(event.clone()));
        match explain::render(place, builder, &explanation, false) {
            Ok(text) => Stderr.write_all(text.as_bytes()),
            Err(e) => writeln!(Stderr, "wasm-hooks: explaining: {e:#}"),
        }
        .unwrap_or_else(|e| tracing::debug!("writing the explanation: {e}"));
        explanation.outcome
    } else {
        runtime.block_on(engine.dispatch(event))
    };
    runtime.block_on(engine.wait_for_background());
    outcome
}
