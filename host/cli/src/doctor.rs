//! `wasm-hooks doctor`: is every guard able to answer? For each agent on
//! this machine: whether wasm-hooks is installed, where, by which program;
//! which of the agent's events it is on; whether each entry fails closed.
//! Then the daemon, the project's trust and its pending changes, the hook
//! files, and the hooks that never fired in the audit log. One line per
//! finding, each problem with the command that mends it; the exit code is
//! 1 when a guard could fail open (or not answer at all).

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use wasm_hooks::TrustStatus;
use wasm_hooks::observe::AuditStats;

use super::audit::AuditLogArg;
use super::hook_files::HookFileArgs;
use super::install::{Agent, installed_program_problem, read, user_file};
use super::stats::since;
use super::{Exit, report};

/// Arguments of `wasm-hooks doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// A hook that has not fired for this long is named: a duration
    /// (`30d`) or a time.
    #[arg(long, value_name = "WHEN", default_value = "30d")]
    since: String,

    #[command(flatten)]
    audit: AuditLogArg,

    #[command(flatten)]
    hook_files: HookFileArgs,
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    /// All is well.
    Ok,
    /// Worth knowing; no guard fails open for it.
    Note,
    /// A guard could fail open, or not answer.
    Problem,
}

/// One line of the report.
struct Finding {
    level: Level,
    subject: String,
    what: String,
    /// The command that mends it.
    fix: Option<String>,
}

/// The findings so far.
#[derive(Default)]
struct Report(Vec<Finding>);

impl Report {
    fn add(&mut self, level: Level, subject: &str, what: impl Into<String>, fix: Option<String>) {
        self.0.push(Finding {
            level,
            subject: subject.to_owned(),
            what: what.into(),
            fix,
        });
    }
}

pub(crate) fn run(args: DoctorArgs) -> anyhow::Result<Exit> {
    let mut report = Report::default();
    let project = match args.hook_files.project_dir() {
        Some(dir) => dir.to_owned(),
        None => std::env::current_dir()?,
    };
    // Each agent's program and the version driven (`scripts/agents`):
    // what wasm-hooks knows its events and answers from.
    for protocol in wasm_hooks::Protocol::AGENTS {
        let facts = protocol.facts();
        agent_findings(
            &mut report,
            Agent(protocol),
            facts.program,
            facts.driven,
            &project,
        );
    }
    daemon_findings(&mut report);
    let mut builder = args.hook_files.builder(&[])?;
    args.audit.apply(&mut builder);
    match builder.build() {
        Err(e) => report.add(
            Level::Problem,
            "hook files",
            format!("they do not load, so the hooks that read them do not answer: {e}"),
            Some("wasm-hooks validate".to_owned()),
        ),
        Ok(engine) => {
            report.add(
                Level::Ok,
                "hook files",
                format!("{} hooks load", engine.hooks().len()),
                None,
            );
            for problem in engine.left_out() {
                report.add(
                    Level::Problem,
                    "hook files",
                    format!("left out, so its guards do not answer (the events it may guard are blocked): {problem}"),
                    Some("wasm-hooks validate".to_owned()),
                );
            }
            trust_findings(&mut report, &engine);
            never_fired(&mut report, &engine, since(&args.since)?);
        }
    }
    let text = render(&report);
    report::print(&text)?;
    Ok(if report.0.iter().any(|f| f.level == Level::Problem) {
        Exit::Failed
    } else {
        Exit::GoOn
    })
}

/// Whether `agent` is on this machine (its program on `PATH`, or its
/// folder in the home), and wasm-hooks' entries in its settings.
fn agent_findings(report: &mut Report, agent: Agent, program: &str, driven: &str, project: &Path) {
    let name = agent.name();
    let version = on_path(program).map(|path| version_of(&path));
    let files: Vec<PathBuf> = std::iter::once(agent.file_in(project))
        .chain(agent.local_file(&agent.file_in(project)))
        .chain(user_file(agent).ok())
        .collect();
    let installed: Vec<(PathBuf, String)> = files
        .into_iter()
        .filter_map(|file| read(&file).ok().map(|text| (file, text)))
        .filter(|(_, text)| !text.is_empty() && is_ours(agent, text))
        .collect();
    if version.is_none() && installed.is_empty() {
        return;
    }
    match &version {
        Some(Some(found)) if !driven.is_empty() && !found.contains(driven) => report.add(
            Level::Note,
            name,
            format!(
                "version {found}; wasm-hooks was checked against {driven}: its events may differ"
            ),
            None,
        ),
        Some(Some(found)) => report.add(Level::Ok, name, format!("version {found}"), None),
        Some(None) => report.add(Level::Note, name, "on PATH, its version not told", None),
        None => {}
    }
    let fix = format!("wasm-hooks install {}", agent.word());
    if installed.is_empty() {
        report.add(
            Level::Problem,
            name,
            "on this machine, and wasm-hooks is not installed as its hook: no guard sees its events",
            Some(fix),
        );
        return;
    }
    for (file, text) in installed {
        let at = format!("{name} ({})", file.display());
        installed_findings(report, agent, &at, &text, &fix);
    }
}

/// What one settings file of `agent` with wasm-hooks' entries says.
fn installed_findings(report: &mut Report, agent: Agent, at: &str, text: &str, fix: &str) {
    let protocol = agent.protocol();
    let on = wasm_hooks::agents::installed_on(text, protocol).unwrap_or_default();
    let missing: Vec<&str> = protocol
        .installed_events()
        .into_iter()
        .filter(|event| !on.iter().any(|e| e == event))
        .collect();
    if agent.0 != wasm_hooks::Protocol::OpenCode {
        report.add(
            Level::Ok,
            at,
            format!("installed on {} events", on.len()),
            None,
        );
    }
    if !missing.is_empty() {
        report.add(
            Level::Problem,
            at,
            format!("not on these events of the agent: {}", missing.join(", ")),
            Some(fix.to_owned()),
        );
    }
    for program in wasm_hooks::agents::installed_programs(text, protocol).unwrap_or_default() {
        match installed_program_problem(&program) {
            Some(problem) => report.add(Level::Problem, at, problem, Some(fix.to_owned())),
            None => report.add(Level::Ok, at, format!("runs {program}"), None),
        }
    }
    let open = wasm_hooks::agents::failing_open(text, protocol).unwrap_or_default();
    if !protocol.entries_fail_closed() {
        report.add(
            Level::Note,
            at,
            format!(
                "{} has no setting that blocks a tool when its hook fails: keep the installed program where the entries name it",
                agent.name()
            ),
            None,
        );
    } else if !open.is_empty() {
        report.add(
            Level::Problem,
            at,
            format!(
                "a failing or missing wasm-hooks lets these through: {}",
                open.join(", ")
            ),
            Some(fix.to_owned()),
        );
    } else {
        report.add(
            Level::Ok,
            at,
            "a failing or missing wasm-hooks blocks the action",
            None,
        );
    }
}

/// Whether `text` (a settings file of `agent`) runs wasm-hooks.
fn is_ours(agent: Agent, text: &str) -> bool {
    match agent {
        Agent(wasm_hooks::Protocol::OpenCode) => super::opencode_plugin::is_ours(text),
        _ => !wasm_hooks::agents::installed_on(text, agent.protocol())
            .unwrap_or_default()
            .is_empty(),
    }
}

/// The program `name` on `PATH`, if it is there.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// The first line `program --version` prints within 5 s, if it does.
fn version_of(program: &Path) -> Option<String> {
    let mut child = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    while child.try_wait().ok()?.is_none() {
        if started.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    child
        .stdout
        .take()?
        .take(4096)
        .read_to_string(&mut out)
        .ok()?;
    out.lines()
        .next()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
}

/// Whether a warm daemon answers `hook` here.
fn daemon_findings(report: &mut Report) {
    match super::daemon::Place::of_this_process() {
        Ok(None) => report.add(
            Level::Note,
            "daemon",
            "no $XDG_RUNTIME_DIR: each event starts a whole `wasm-hooks hook` process (no warm daemon)",
            None,
        ),
        Ok(Some(place)) if std::os::unix::net::UnixStream::connect(&place.socket).is_ok() => {
            report.add(Level::Ok, "daemon", format!("answering at {}", place.socket.display()), None);
        }
        Ok(Some(_)) => report.add(
            Level::Ok,
            "daemon",
            "none running for this environment: the next event starts one",
            None,
        ),
        Err(e) => report.add(
            Level::Problem,
            "daemon",
            format!("its directory is not safe to use, so none starts: {e}"),
            Some("chmod 700 \"$XDG_RUNTIME_DIR/wasm-hooks\"".to_owned()),
        ),
    }
}

/// The project's trust, and what waits for it.
fn trust_findings(report: &mut Report, engine: &wasm_hooks::HookEngine) {
    let Some(trust) = engine.project_trust() else {
        return;
    };
    let subject = format!("project {}", trust.project.display());
    match &trust.status {
        TrustStatus::Trusted => report.add(Level::Ok, &subject, "trusted as it is", None),
        TrustStatus::Never => report.add(
            Level::Note,
            &subject,
            format!(
                "not trusted: only its sandboxed hooks run ({} left out)",
                engine.skipped().len()
            ),
            Some("wasm-hooks trust".to_owned()),
        ),
        TrustStatus::Changed(files) => report.add(
            Level::Note,
            &subject,
            format!(
                "{} files changed since you trusted it ({} hook changes pending); what you trusted answers until you accept them",
                files.len(),
                trust.changes.len()
            ),
            Some("wasm-hooks trust".to_owned()),
        ),
    }
}

/// The hooks configured that the audit log never saw fire since `since`.
fn never_fired(report: &mut Report, engine: &wasm_hooks::HookEngine, since: std::time::SystemTime) {
    let Some(log) = engine.audit_log() else {
        report.add(
            Level::Note,
            "audit log",
            "none is kept (`audit_log:` in ~/.config/wasm-hooks/config.yaml keeps one): whether each hook fires cannot be told",
            None,
        );
        return;
    };
    let Ok(file) = std::fs::File::open(log.path()) else {
        return;
    };
    let Ok(stats) = AuditStats::read(std::io::BufReader::new(file), Some(since)) else {
        return;
    };
    let configured = engine.hooks();
    for hook in stats.never_fired(&configured) {
        report.add(
            Level::Note,
            &format!("hook {}", hook.id),
            format!(
                "never fired in {} (from {})",
                log.path().display(),
                hook.source
            ),
            Some("wasm-hooks explain < event.json".to_owned()),
        );
    }
}

/// The report, one finding a line, problems last with their fixes, then
/// the tally.
fn render(report: &Report) -> String {
    let mut out = String::new();
    let mut findings: Vec<&Finding> = report.0.iter().collect();
    findings.sort_by_key(|f| f.level);
    for finding in &findings {
        let word = match finding.level {
            Level::Ok => "ok     ",
            Level::Note => "note   ",
            Level::Problem => "problem",
        };
        let _ = write!(out, "{word}  {}: {}", finding.subject, finding.what);
        if let Some(fix) = &finding.fix {
            let _ = write!(out, "  (fix: `{fix}`)");
        }
        out.push('\n');
    }
    let problems = findings
        .iter()
        .filter(|f| f.level == Level::Problem)
        .count();
    let _ = writeln!(
        out,
        "{problems} problem{} a guard could fail open on",
        if problems == 1 { "" } else { "s" }
    );
    out
}
