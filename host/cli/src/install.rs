//! `wasm-hooks install|uninstall claude|codex|gemini|copilot|cursor`: add
//! (or remove) wasm-hooks as the hook of an agent's events, editing its
//! settings in place, with a backup of the previous version.
//!
//! Every guard entry is written to block when the program is missing or
//! fails, where the agent has a way to say so (Claude Code's `onFailure`,
//! Cursor's `failClosed`; Copilot CLI denies a failing `preToolUse` by
//! itself), with the agent's timeout above `hook --deadline`; where the
//! agent has none (Codex, Gemini CLI), `install` says so.
//!
//! The hook runs `wasm-hooks hook`, or its small client `wasm-hooks-hook`
//! where that sits beside this program and a warm daemon can answer
//! (`$XDG_RUNTIME_DIR` is set), always by its absolute path (a
//! repository's `PATH` cannot put another program in its place). Claude
//! Code's project hook goes into the uncommitted
//! `.claude/settings.local.json` (Copilot CLI's into
//! `.github/hooks/wasm-hooks.local.json`), which the project's
//! `.gitignore` is made to list; the other agents have no uncommitted
//! file. An entry of ours in the scope's other file is removed, so that
//! no event is hooked twice. Afterwards the person is told what the
//! agent still needs (Codex: a trusted project and trusted entries; Gemini
//! CLI: a trusted folder), and whether the project's hook files load.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use wasm_hooks::agents::InstalledHook;
use wasm_hooks::{HookEngineBuilder, Protocol};

use super::hook_files::{CacheArgs, HookFileArgs};
use super::{Exit, compile, opencode_plugin, report};

/// Arguments of `wasm-hooks install` and `uninstall`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The agent.
    agent: Agent,

    /// The project's settings (the default): `.claude/settings.json`,
    /// `.codex/hooks.json`, `.gemini/settings.json`,
    /// `.github/hooks/wasm-hooks.json` or `.cursor/hooks.json`.
    #[arg(long, conflicts_with = "user")]
    project: bool,

    /// The user's settings: `~/.claude/settings.json`,
    /// `$CODEX_HOME/hooks.json` (`~/.codex/hooks.json`),
    /// `~/.gemini/settings.json`, `$COPILOT_HOME/hooks/wasm-hooks.json`
    /// (`~/.copilot/hooks/…`) or `~/.cursor/hooks.json`.
    #[arg(long)]
    user: bool,

    /// An HTTP hook posting to this URL (`wasm-hooks serve`) instead of the
    /// command hook (Claude Code only: the others have no HTTP hooks).
    #[arg(long, value_name = "URL")]
    http: Option<String>,

    /// The project [default: the current directory].
    #[arg(long, value_name = "DIR")]
    project_dir: Option<PathBuf>,
}

/// An agent `install` knows, as a command names it (`claude`, `codex`…):
/// one of [`Protocol::AGENTS`], whose [`wasm_hooks::agents::AgentFacts`] say the
/// rest (its settings files, events, next step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct Agent(pub(crate) Protocol);

impl ValueEnum for Agent {
    fn value_variants<'a>() -> &'a [Self] {
        const AGENTS: [Agent; 6] = [
            Agent(Protocol::AGENTS[0]),
            Agent(Protocol::AGENTS[1]),
            Agent(Protocol::AGENTS[2]),
            Agent(Protocol::AGENTS[3]),
            Agent(Protocol::AGENTS[4]),
            Agent(Protocol::AGENTS[5]),
        ];
        &AGENTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.word()).help(self.0.facts().name))
    }
}

impl Agent {
    pub(crate) fn protocol(self) -> Protocol {
        self.0
    }

    pub(crate) fn name(self) -> &'static str {
        self.0.facts().name
    }

    /// The agent's paths to a shell that no hook of it can reach, said
    /// plainly by `install` and `explain` (docs/agents.md has the table).
    pub(crate) fn unguarded(self) -> Option<&'static str> {
        self.0.facts().unguarded
    }

    /// The `--protocol` word of `wasm-hooks hook`.
    pub(crate) fn word(self) -> &'static str {
        self.0.word()
    }

    /// The settings file under a project (`.claude/settings.json`).
    pub(crate) fn file_in(self, dir: &Path) -> PathBuf {
        self.0.facts().settings_in(dir)
    }

    /// The uncommitted file beside a project's `settings` the agent also
    /// reads, where it has one (for a machine's absolute path).
    pub(crate) fn local_file(self, settings: &Path) -> Option<PathBuf> {
        self.0.facts().local_settings_beside(settings)
    }

    /// What the person still has to do before the agent runs the hooks.
    fn next_step(self, user: bool) -> &'static str {
        let (project, user_install) = self.0.facts().next_step;
        if user { user_install } else { project }
    }
}

/// The agent's settings file in the user's home (or where `$CODEX_HOME`,
/// `$COPILOT_HOME`, `$XDG_CONFIG_HOME` move it).
pub(crate) fn user_file(agent: Agent) -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME").context("--user: HOME is not set")?;
    Ok(agent.0.facts().user_settings_in(Path::new(&home), |name| {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }))
}

/// Where the hook goes and what it runs.
struct Plan {
    file: PathBuf,
    hook: InstalledHook,
    /// Why the file is not the usual one, if it is not.
    because: Option<String>,
}

impl InstallArgs {
    /// The install `import` ends with: the command hook, in this scope.
    pub(crate) fn for_import(agent: Agent, user: bool, project_dir: Option<PathBuf>) -> Self {
        Self {
            agent,
            project: !user,
            user,
            http: None,
            project_dir,
        }
    }

    fn project(&self) -> anyhow::Result<PathBuf> {
        match &self.project_dir {
            Some(dir) => Ok(dir.clone()),
            None => std::env::current_dir().context("finding the current directory"),
        }
    }

    fn home(&self) -> anyhow::Result<PathBuf> {
        user_file(self.agent)
    }

    /// The settings files this install may have written, for uninstall.
    fn files(&self) -> anyhow::Result<Vec<PathBuf>> {
        if self.user {
            return Ok(vec![self.home()?]);
        }
        let file = self.agent.file_in(&self.project()?);
        let local = self.agent.local_file(&file);
        Ok(std::iter::once(file).chain(local).collect())
    }

    /// Where to install and what: the absolute path of this program
    /// (never a bare name: the agent may run its hooks with a
    /// repository's `PATH`, which would then choose what answers for
    /// wasm-hooks), in the file that is not committed where the agent has
    /// one. Check that this install can be made (`import` asks before it
    /// moves anything: hooks moved out of the agent's settings with no
    /// wasm-hooks entry in their place would run nowhere).
    pub(crate) fn check(&self) -> anyhow::Result<()> {
        self.plan().map(|_| ())
    }

    fn plan(&self) -> anyhow::Result<Plan> {
        let agent = self.agent;
        if let Some(url) = &self.http {
            if !agent.0.facts().http_hooks {
                bail!(
                    "{} has no HTTP hooks: install the command hook",
                    agent.name()
                );
            }
            let file = self.files()?.remove(0);
            return Ok(Plan {
                file,
                hook: InstalledHook::Http(url.clone()),
                because: None,
            });
        }
        let exe = std::env::current_exe().context("finding the wasm-hooks executable")?;
        let program = Program::for_exe(&exe);
        let path = program
            .path
            .to_str()
            .context("the executable's path is not UTF-8")?;
        let quoted = shlex::try_quote(path).context("quoting the executable's path")?;
        let hook = InstalledHook::Command(format!(
            "{quoted}{} --protocol {}",
            program.subcommand,
            agent.word()
        ));
        if self.user {
            return Ok(Plan {
                file: self.home()?,
                hook,
                because: None,
            });
        }
        let shared = agent.file_in(&self.project()?);
        Ok(match agent.local_file(&shared) {
            Some(file) => Plan {
                file,
                hook,
                because: Some(
                    "it holds this machine's path to wasm-hooks, which a committed file must not (each teammate runs `wasm-hooks install` once)".to_owned(),
                ),
            },
            None => Plan {
                file: shared,
                hook,
                because: None,
            },
        })
    }
}

/// The program an installed command hook runs.
struct Program {
    /// Where it is.
    path: PathBuf,
    /// What follows the program: ` hook` for `wasm-hooks`.
    subcommand: &'static str,
}

impl Program {
    /// The small client `wasm-hooks-hook` when it sits beside `exe` and
    /// `$XDG_RUNTIME_DIR` is set, so that a warm daemon answers (it costs
    /// a third of `wasm-hooks hook` per event); else `wasm-hooks hook`
    /// itself (without a daemon the client would only start it).
    fn for_exe(exe: &Path) -> Self {
        let client = exe.with_file_name("wasm-hooks-hook");
        if super::daemon::place::runtime_dir().is_some() && is_executable(&client) {
            return Self {
                path: client,
                subcommand: "",
            };
        }
        Self {
            path: exe.to_owned(),
            subcommand: " hook",
        }
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

pub(crate) fn install(args: InstallArgs) -> anyhow::Result<Exit> {
    let plan = args.plan()?;
    let protocol = args.agent.protocol();
    let text = read(&plan.file)?;
    let mut message = match installed(args.agent, &text, &plan.hook)
        .with_context(|| plan.file.display().to_string())?
    {
        Some(new) => {
            let backup = write(&plan.file, &text, &new)?;
            let what = match args.agent {
                Agent(Protocol::OpenCode) => "a plugin".to_owned(),
                _ => format!("{} events", protocol.installed_events().len()),
            };
            format!(
                "installed wasm-hooks on {what} in {}{}\n",
                plan.file.display(),
                backup_note(backup.as_deref())
            )
        }
        None => format!("already installed in {}\n", plan.file.display()),
    };
    message.push_str(&leave_one_copy(&args, &plan)?);
    if let Some(because) = &plan.because {
        message.push_str(&format!(
            "note: the uncommitted settings, because {because}\n"
        ));
        message.push_str(&git_ignore(&args.project()?, &plan.file)?);
    }
    if !protocol.entries_fail_closed() {
        message.push_str(&format!(
            "warning: {} has no setting that blocks a tool when its hook fails: should wasm-hooks-hook go missing or crash, {} runs the tool anyway (keep wasm-hooks where the installed command finds it; `wasm-hooks explain` says this too)\n",
            args.agent.name(),
            args.agent.name()
        ));
    }
    if let Some(unguarded) = args.agent.unguarded() {
        message.push_str(&format!("note: no guard sees these: {unguarded}\n"));
    }
    message.push_str(args.agent.next_step(args.user));
    message.push('\n');
    if args.http.is_some() {
        message.push_str(&format!(
            "next: start the server with a token, and set the same variable where Claude Code runs: `export {var}=$(openssl rand -hex 16); wasm-hooks serve --token-env {var}`\n",
            var = wasm_hooks::agents::TOKEN_VARIABLE
        ));
    }
    if !args.user {
        message.push_str(&hook_files_note(&args.project()?));
    }
    report::print(&message)?;
    // The plugins its first events would load, compiled now.
    let files = HookFileArgs::for_project(args.project()?, false, CacheArgs::default());
    compile::engine_ahead(&files)?;
    Ok(Exit::GoOn)
}

/// Where wasm-hooks is installed in `project`'s agent settings, one line
/// each for `explain`: the file, the events, and whether the agent blocks
/// an action when the hook fails (never silence about one that does not).
pub(crate) fn installs_in(project: &Path) -> Vec<String> {
    let ours = InstalledHook::Command("wasm-hooks hook".to_owned());
    let mut lines = Vec::new();
    for (agent, file, text) in agent_settings(project) {
        let Ok(Some((_, count))) = removed(agent, &text, &ours) else {
            continue;
        };
        // Entry by entry: an older install, or a command told to fail
        // open, is named, never vouched for.
        let open = wasm_hooks::agents::failing_open(&text, agent.protocol()).unwrap_or_default();
        let failing = if !agent.protocol().entries_fail_closed() {
            format!(
                "a failing or missing wasm-hooks lets the tool run: {} has no setting to block on a hook's failure",
                agent.name()
            )
        } else if open.is_empty() {
            "a failing or missing wasm-hooks blocks the action".to_owned()
        } else {
            format!(
                "a failing or missing wasm-hooks lets {} through: `wasm-hooks install {}` again brings these entries up to date",
                open.join(", "),
                agent.word()
            )
        };
        let what = match agent {
            Agent(Protocol::OpenCode) => "a plugin".to_owned(),
            _ => format!("{count} events"),
        };
        lines.push(format!(
            "{:<12} {} ({what}): {failing}",
            agent.name(),
            file.display()
        ));
        lines.extend(
            agent
                .unguarded()
                .map(|unguarded| format!("{:<12} note: no guard sees these: {unguarded}", "")),
        );
        lines.extend(
            install_problems(agent, &text)
                .into_iter()
                .map(|problem| format!("{:<12} warning: {problem}", "")),
        );
    }
    lines
}

/// Every agent settings file of `project` there is: its agent, path and
/// text (read bounded, as [`read`] does: a planted FIFO or an endless
/// file is skipped, not waited on).
fn agent_settings(project: &Path) -> Vec<(Agent, PathBuf, String)> {
    let mut found = Vec::new();
    for agent in Agent::value_variants() {
        let file = agent.file_in(project);
        for file in std::iter::once(file.clone()).chain(agent.local_file(&file)) {
            if let Ok(text) = read(&file)
                && !text.is_empty()
            {
                found.push((*agent, file, text));
            }
        }
    }
    found
}

/// What is wrong with the programs `agent`'s settings `text` run for
/// wasm-hooks, each with the command that mends it.
fn install_problems(agent: Agent, text: &str) -> Vec<String> {
    wasm_hooks::agents::installed_programs(text, agent.protocol())
        .unwrap_or_default()
        .iter()
        .filter_map(|program| installed_program_problem(program))
        .map(|problem| {
            format!(
                "{problem}: `wasm-hooks install {}` writes this wasm-hooks' path",
                agent.word()
            )
        })
        .collect()
}

/// What is wrong with wasm-hooks' entries in `project`'s agent settings
/// (see [`installed_program_problem`]), naming each file: `validate`'s
/// warnings.
pub(crate) fn install_warnings(project: &Path) -> Vec<String> {
    agent_settings(project)
        .into_iter()
        .flat_map(|(agent, file, text)| {
            install_problems(agent, &text)
                .into_iter()
                .map(move |problem| format!("{}: {problem}", file.display()))
        })
        .collect()
}

/// What is wrong with `program`, the program an installed entry runs, if
/// anything: a bare name (found through `PATH`, which a repository's
/// settings can set for the agent's hooks), a path that is gone or not
/// executable, or another wasm-hooks than this one.
pub(crate) fn installed_program_problem(program: &str) -> Option<String> {
    let path = Path::new(program);
    if !path.is_absolute() {
        return Some(format!(
            "installed as `{program}`, found through PATH, which a repository's settings can change for the agent's hooks"
        ));
    }
    if !is_executable(path) {
        return Some(format!(
            "the installed program {program} is not there (or not executable)"
        ));
    }
    let this = std::env::current_exe().ok()?;
    let ours = [this.clone(), this.with_file_name("wasm-hooks-hook")];
    let same = |a: &Path, b: &Path| {
        a.canonicalize()
            .ok()
            .zip(b.canonicalize().ok())
            .is_some_and(|(a, b)| a == b)
    };
    if ours.iter().any(|o| same(o, path)) {
        None
    } else {
        Some(format!(
            "the installed program {program} is another wasm-hooks than this one ({})",
            this.display()
        ))
    }
}

/// Remove our entries from the scope's other file (the committed one when
/// installing into the uncommitted one, or the other way round), so that
/// no event is hooked twice; what was done, for the message.
fn leave_one_copy(args: &InstallArgs, plan: &Plan) -> anyhow::Result<String> {
    if args.user || args.http.is_some() {
        return Ok(String::new());
    }
    let ours = InstalledHook::Command("wasm-hooks hook".to_owned());
    let mut message = String::new();
    for file in args.files()?.into_iter().filter(|f| *f != plan.file) {
        let text = read(&file)?;
        if text.is_empty() {
            continue;
        }
        if let Some((new, removed)) =
            removed(args.agent, &text, &ours).with_context(|| file.display().to_string())?
        {
            let backup = write(&file, &text, &new)?;
            message.push_str(&format!(
                "removed {removed} older wasm-hooks entries from {}, so that no event runs twice{}\n",
                file.display(),
                backup_note(backup.as_deref())
            ));
            if file == args.agent.file_in(&args.project()?) {
                message.push_str("note: that file is committed: leave this change out of a commit if your team runs wasm-hooks from PATH\n");
            }
        }
    }
    Ok(message)
}

/// Make the project's `.gitignore` list `file` (an uncommitted settings
/// file holding this machine's path), when the project is in a git
/// repository and the file is not listed yet; what was done.
pub(crate) fn git_ignore(project: &Path, file: &Path) -> anyhow::Result<String> {
    if !project.ancestors().any(|dir| dir.join(".git").exists()) {
        return Ok(String::new());
    }
    let Ok(relative) = file.strip_prefix(project) else {
        return Ok(String::new());
    };
    let line = format!("/{}", relative.display());
    let ignore = project.join(".gitignore");
    if std::fs::symlink_metadata(&ignore).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(format!(
            "warning: {} is a symbolic link, left alone: add {line} to it yourself\n",
            ignore.display()
        ));
    }
    let text = read(&ignore)?;
    let bare = line.trim_start_matches('/');
    if text.lines().map(str::trim).any(|l| l == line || l == bare) {
        return Ok(String::new());
    }
    let mut new = text.clone();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str(&line);
    new.push('\n');
    write_new(&ignore, &new)?;
    Ok(format!(
        "added {line} to {}, so that this machine's path is never committed\n",
        ignore.display()
    ))
}

/// Whether the project's own hook files load: a broken one would block
/// tool calls and prompts from the first event on.
fn hook_files_note(project: &Path) -> String {
    let mut builder = HookEngineBuilder::new();
    builder.project_dir(project).strict_project(true);
    if builder.files().is_empty() {
        return format!(
            "note: {} has no hook files yet (`.wasm-hooks/hooks.json`; `wasm-hooks new` makes a plugin with one)\n",
            project.display()
        );
    }
    match builder.build() {
        Ok(_) => String::new(),
        Err(e) => format!(
            "warning: the project's hook files do not load, so their hooks are left out until they do:\n{e}\n"
        ),
    }
}

pub(crate) fn uninstall(args: InstallArgs) -> anyhow::Result<Exit> {
    let hook = match &args.http {
        Some(url) => InstalledHook::Http(url.clone()),
        // Any command running `wasm-hooks hook` or `wasm-hooks-hook` is
        // ours, wherever it is.
        None => InstalledHook::Command("wasm-hooks hook".to_owned()),
    };
    let mut message = String::new();
    for file in args.files()? {
        let text = read(&file)?;
        if text.is_empty() {
            continue;
        }
        if let Some((new, removed)) =
            removed(args.agent, &text, &hook).with_context(|| file.display().to_string())?
        {
            let backup = write(&file, &text, &new)?;
            message.push_str(&format!(
                "removed {removed} wasm-hooks entries from {}{}\n",
                file.display(),
                backup_note(backup.as_deref())
            ));
        }
    }
    if message.is_empty() {
        message = format!(
            "no wasm-hooks entries in the {} settings\n",
            args.agent.name()
        );
    }
    report::print(&message)?;
    Ok(Exit::GoOn)
}

/// `text`, the agent's settings (or OpenCode's plugin), with `hook`
/// installed; `None` when it already is.
fn installed(agent: Agent, text: &str, hook: &InstalledHook) -> anyhow::Result<Option<String>> {
    if let Agent(Protocol::OpenCode) = agent {
        if !text.is_empty() && !opencode_plugin::is_ours(text) {
            bail!(
                "a plugin of that name that `wasm-hooks install` did not write is there: left alone"
            );
        }
        let plugin = opencode_plugin::text(hook)?;
        return Ok((plugin != text).then_some(plugin));
    }
    Ok(wasm_hooks::agents::install(text, agent.protocol(), hook)?)
}

/// `text` without `hook`'s entries (OpenCode's plugin: nothing, when it is
/// ours), and how many; `None` when there were none.
fn removed(
    agent: Agent,
    text: &str,
    hook: &InstalledHook,
) -> anyhow::Result<Option<(String, usize)>> {
    if let Agent(Protocol::OpenCode) = agent {
        return Ok(opencode_plugin::is_ours(text).then(|| (String::new(), 1)));
    }
    Ok(wasm_hooks::agents::uninstall(text, hook)?)
}

fn backup_note(backup: Option<&Path>) -> String {
    backup
        .map(|b| format!(" (the previous version is in {})", b.display()))
        .unwrap_or_default()
}

/// Write `text` to a new file at `path`, replacing what is there only when
/// it is a file of its own: never through a symbolic link a repository
/// placed there (to have `install` write into another file).
fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            bail!("{} is a symbolic link: not written through", path.display())
        }
        Ok(_) => {
            std::fs::remove_file(path).with_context(|| format!("replacing {}", path.display()))?;
        }
        Err(_) => {}
    }
    super::new::create_file(path, text)
}

/// The settings text; empty when the file does not exist yet.
pub(crate) fn read(file: &Path) -> anyhow::Result<String> {
    let bytes = match wasm_hooks::cli_support::read_regular_file(file, MAX_SETTINGS_BYTES) {
        Ok(bytes) => bytes,
        Err(wasm_hooks::cli_support::ReadRefused::Io(e))
            if e.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(String::new());
        }
        Err(e @ wasm_hooks::cli_support::ReadRefused::TooLarge { .. }) => {
            bail!(
                "{}: {e} an agent's settings file may have (MAX_SETTINGS_BYTES)",
                file.display()
            )
        }
        Err(e) => bail!("reading {}: {e}", file.display()),
    };
    String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", file.display()))
}

/// The largest agent settings file `install`, `uninstall` and `import`
/// read (`MAX_SETTINGS_BYTES`): 4 MiB, far above any agent's own; a
/// larger (or endless) file is refused unread, not taken into memory.
const MAX_SETTINGS_BYTES: u64 = 4 << 20;

/// Keep the old text in `<file>.bak` (when there was one), then replace
/// the file atomically (a temporary file renamed over it), or remove it
/// when the new text is empty (an OpenCode plugin uninstalled). Returns
/// the backup's path.
pub(crate) fn write(file: &Path, old: &str, new: &str) -> anyhow::Result<Option<PathBuf>> {
    let dir = file
        .parent()
        .context("the settings file has no directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let beside = |suffix: &str| {
        let mut name = file.file_name().unwrap_or_default().to_owned();
        name.push(suffix);
        file.with_file_name(name)
    };
    let backup = if old.is_empty() {
        None
    } else {
        let backup = beside(".bak");
        write_new(&backup, old)?;
        Some(backup)
    };
    if new.is_empty() {
        std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
        return Ok(backup);
    }
    let temporary = beside(&format!(".tmp-{}", std::process::id()));
    write_new(&temporary, new)?;
    std::fs::rename(&temporary, file).with_context(|| format!("replacing {}", file.display()))?;
    Ok(backup)
}
