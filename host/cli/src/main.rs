//! The `wasm-hooks` binary: a thin shell over the `wasm_hooks` library. It
//! parses arguments (clap derive), calls the library and prints; [`main`]
//! is the one place where results become exit codes. Each subcommand lives
//! in its own file.

mod audit;
mod background_compile;
mod bench;
mod build;
mod cache;
mod compile;
mod daemon;
mod deadline;
mod doctor;
mod event_args;
mod explain;
mod fallback_answer;
mod heap_cap;
mod hook;
mod hook_files;
mod import;
mod init;
mod inspect;
mod install;
mod last_words;
mod list;
mod new;
mod opencode_plugin;
mod plugins;
mod publish;
mod replay;
mod report;
mod run;
mod schema;
mod serve;
mod speaks;
mod stats;
mod stderr;
mod test;
mod trust;
mod ui;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// wasm-hooks: sandboxed WebAssembly hooks (and more) for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "wasm-hooks", version, about, long_about = None)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG
    /// overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Dispatch one event through the configured hooks and print the outcome.
    Run(run::RunArgs),
    /// Say why each hook runs or not for one event: the project chosen and
    /// why, the hook files looked for, each hook's fit, answer and time.
    Explain(explain::ExplainArgs),
    /// Check hook files (and compile their plugins); exit 1 on any problem.
    Validate(validate::ValidateArgs),
    /// Show which hooks would run, in order, and where each comes from.
    List(list::ListArgs),
    /// Stand in as an agent's hook: read its event on stdin, run the
    /// configured hooks, answer in its protocol (Claude Code by default).
    ///
    /// The project whose `.wasm-hooks/` files are read is `--project-dir`,
    /// else `$CLAUDE_PROJECT_DIR`, else the event's `cwd`, else the current
    /// directory: the agent's project, not the directory `hook` is run
    /// from. `--explain` (or `wasm-hooks explain`) says which was chosen
    /// and why each hook ran or not.
    ///
    /// With $XDG_RUNTIME_DIR set, the event is answered by a warm `wasm-hooks
    /// daemon` (started by the first event; the same answer, without the
    /// start-up): WASM_HOOKS_DAEMON=off turns that off. `wasm-hooks-hook`,
    /// installed beside this program, takes the same arguments at the cost
    /// of a small process.
    Hook(hook::HookArgs),
    /// The warm daemon `hook` forwards events to (started by `hook` itself
    /// when `$XDG_RUNTIME_DIR` is set; WASM_HOOKS_DAEMON=off turns it off):
    /// it answers exactly as `hook` would, without its start-up. One runs
    /// per build, user and environment (less the variables an agent sets
    /// per event), at most 8 at once: past that `hook` answers in-process
    /// and warns that a variable changing between events is in the key.
    Daemon(daemon::DaemonArgs),
    /// Serve the hooks over HTTP (for agents' HTTP hooks): POST /hook.
    Serve(Box<serve::ServeArgs>),
    /// Install wasm-hooks as the hook of an agent's events (Claude Code,
    /// Codex, Gemini CLI, Copilot CLI, Cursor; OpenCode: a plugin): merged
    /// into its settings,
    /// with a backup, idempotent; a failing guard blocks where the agent
    /// can be told so.
    Install(install::InstallArgs),
    /// Remove exactly the entries `install` added.
    Uninstall(install::InstallArgs),
    /// Move an agent's existing command hooks into wasm-hooks' hook
    /// files (shown as a diff, asked first), leaving wasm-hooks' own entry
    /// in the agent's settings.
    Import(import::ImportArgs),
    /// Trust a project's hooks (after showing what they run), or show or
    /// revoke that trust: until then only its sandboxed hooks run.
    Trust(trust::TrustArgs),
    /// Check or read an audit log.
    Audit(audit::AuditArgs),
    /// What each hook has done, from the audit log: fired, decided,
    /// would-deny as a dry run, failures, p50/p99 time, last seen; and the
    /// hooks that never fired.
    Stats(stats::StatsArgs),
    /// Run the hook files over an agent's past sessions (Claude Code,
    /// Codex, Gemini CLI, Copilot CLI, the audit log): per hook, what it
    /// would have allowed, denied, asked or rewritten, against what
    /// happened. Only hooks that cannot act run (wasm, inline).
    Replay(replay::ReplayArgs),
    /// The live decisions page on 127.0.0.1, fed from your audit log, with
    /// your last replay: the address (with its one-time token) is printed.
    Ui(ui::UiArgs),
    /// Can every guard answer? Each agent on this machine (installed,
    /// where, which program, which events, failing closed), the daemon,
    /// the project's trust, hooks that never fired; exit 1 when a guard
    /// could fail open.
    Doctor(doctor::DoctorArgs),
    /// Compile plugins ahead of time into the compile cache.
    Compile(compile::CompileArgs),
    /// Show what the compile cache holds; `--prune` removes what is stale.
    Cache(cache::CacheCommandArgs),
    /// Measure what each kind of hook costs, side by side.
    Bench(bench::BenchArgs),
    /// Describe plugin files: world, imports, exports, capabilities, cache.
    Inspect(inspect::InspectArgs),
    /// Run policy tests: fixtures of events and the outcomes they must get.
    Test(test::TestArgs),
    /// Print the JSON Schema of hook files, for editors: save it as
    /// `.wasm-hooks/hooks.schema.json` and start the hook file with
    /// `"$schema": "./hooks.schema.json"`.
    Schema(schema::SchemaArgs),
    /// Start a project's hook file: a commented `.wasm-hooks/hooks.json`
    /// and the `.gitignore` line for the local layer.
    Init(init::InitArgs),
    /// Create a plugin crate: a working hook, a hook file, fixtures.
    New(new::NewArgs),
    /// Build a plugin crate for wasm32-wasip2 and describe the component.
    Build(build::BuildArgs),
    /// Pin a plugin in a registry (`oci://…`) in the lock beside the hook
    /// file (`wasm-hooks.lock`), pulling and checking it.
    Add(plugins::AddArgs),
    /// Fetch every plugin the locks pin into this machine's plugin store.
    Pull(plugins::PullArgs),
    /// Move the lock's pins to what their tags name now.
    Update(plugins::UpdateArgs),
    /// Push a plugin to a registry (CNCF Wasm OCI layout), signed with
    /// `--key`.
    Publish(publish::PublishArgs),
    /// Make a key pair for signing plugins (ECDSA P-256, as cosign).
    Keygen(publish::KeygenArgs),
}

/// Process exit codes, documented once:
///
/// | code | meaning |
/// |---|---|
/// | 0 | the operation may go on (proceed or allow) |
/// | 1 | the invocation failed (bad arguments, hook files that do not load) |
/// | 2 | a hook denied the operation |
/// | 3 | a hook asks the person to approve the operation |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    GoOn,
    Failed,
    Denied,
    Ask,
}

impl Exit {
    /// Its number.
    pub(crate) fn code(self) -> u8 {
        match self {
            Exit::GoOn => 0,
            Exit::Failed => 1,
            Exit::Denied => 2,
            Exit::Ask => 3,
        }
    }

    /// The exit code an outcome gets.
    pub(crate) fn of_outcome(outcome: &wasm_hooks::Outcome) -> Self {
        use wasm_hooks::Verdict;
        match outcome.verdict {
            Verdict::Proceed | Verdict::Allow { .. } => Exit::GoOn,
            Verdict::Deny { .. } => Exit::Denied,
            Verdict::Ask(_) => Exit::Ask,
        }
    }

    /// The exit of this number (an unknown one is a failure).
    pub(crate) fn of_code(code: u8) -> Self {
        match code {
            0 => Exit::GoOn,
            2 => Exit::Denied,
            3 => Exit::Ask,
            _ => Exit::Failed,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}

/// Parse arguments, run the command, and turn its result into an exit code.
/// Every allocation of the program, within [`heap_cap::MAX_HEAP_BYTES`].
#[global_allocator]
static HEAP: heap_cap::CappedHeap = heap_cap::CappedHeap;

fn main() -> ExitCode {
    heap_cap::lower_from_env();
    let (command, verbose) = hook_alone().unwrap_or_else(|| {
        let cli = Cli::parse();
        (cli.command, cli.verbose)
    });
    init_tracing(verbose);
    match run(command, verbose) {
        Ok(exit) => exit.into(),
        Err(e) => {
            // Line by line, each as a person is shown a value: an error
            // may quote a hook file's text.
            for (i, line) in format!("{e:#}").lines().enumerate() {
                let prefix = if i == 0 { "wasm-hooks: " } else { "" };
                eprintln!("{prefix}{}", wasm_hooks::cli_support::Shown(line));
            }
            Exit::Failed.into()
        }
    }
}

fn run(command: Command, verbose: u8) -> anyhow::Result<Exit> {
    match command {
        Command::Run(args) => run::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Init(args) => init::run(args),
        Command::Schema(args) => schema::run(&args),
        Command::Validate(args) => validate::run(args),
        Command::List(args) => list::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Ui(args) => ui::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Compile(args) => compile::run(args),
        Command::Cache(args) => cache::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Test(args) => test::run(args),
        Command::New(args) => new::run(args),
        Command::Build(args) => build::run(args),
        Command::Add(args) => plugins::add(args),
        Command::Pull(args) => plugins::pull(args),
        Command::Update(args) => plugins::update(args),
        Command::Publish(args) => publish::run(args),
        Command::Keygen(args) => publish::keygen(args),
        Command::Hook(args) => hook::run(args, verbose),
        Command::Daemon(args) => daemon::run(&args),
        Command::Serve(args) => serve::run(*args),
        Command::Install(args) => install::install(args),
        Command::Uninstall(args) => install::uninstall(args),
        Command::Import(args) => import::run(args),
        Command::Trust(args) => trust::run(args),
    }
}

/// `wasm-hooks [-v] hook …`, the command an agent starts per event, read
/// by [`HookInvocation`]'s parser: the whole CLI's took 0.4 ms of every
/// event to build. Any other command line, and one that does not parse
/// (`--help`, a mistake), is left to the whole CLI's, which says the rest.
fn hook_alone() -> Option<(Command, u8)> {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let first_word = argv
        .iter()
        .skip(1)
        .find(|arg| !arg.as_encoded_bytes().starts_with(b"-"))?;
    if first_word != "hook" {
        return None;
    }
    let HookInvocation {
        verbose,
        command: HookCommand::Hook(args),
    } = HookInvocation::try_parse_from(argv).ok()?;
    Some((Command::Hook(args), verbose))
}

/// The arguments of a `hook` invocation (`argv`, the program name first)
/// as a daemon answers it: none for any other command, or with `-v`
/// (whose log lines belong in the client's process).
fn hook_invocation(argv: &[String]) -> Option<hook::HookArgs> {
    match HookInvocation::try_parse_from(argv).ok()? {
        HookInvocation {
            verbose: 0,
            command: HookCommand::Hook(args),
        } => Some(args),
        HookInvocation { .. } => None,
    }
}

/// [`Cli`] with `hook` as its only command: what a daemon parses a
/// forwarded invocation with (the whole CLI's parser is a tenth of a
/// request's time to build).
#[derive(Debug, Parser)]
#[command(name = "wasm-hooks")]
struct HookInvocation {
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,

    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Debug, Subcommand)]
enum HookCommand {
    Hook(hook::HookArgs),
}

fn init_tracing(verbose: u8) {
    // -v and -vv speak of wasm-hooks itself; wasmtime's own debug output
    // (a line per compiled function) only from -vvv on.
    let default = match verbose {
        0 => "warn",
        1 => "wasm_hooks=info,warn",
        2 => "wasm_hooks=debug,warn",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| stderr::Stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
}
