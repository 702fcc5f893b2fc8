//! `wasm-hooks install|uninstall claude`: add (or remove) wasm-hooks as
//! the hook of every event in Claude Code's settings, editing the file in
//! place, with a backup of the previous version.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use wasm_hooks::{CLAUDE_EVENTS, InstalledHook};

use super::{Exit, report};

/// Arguments of `wasm-hooks install` and `uninstall`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The agent.
    agent: Agent,

    /// The project's settings, `.claude/settings.json` (the default).
    #[arg(long, conflicts_with = "user")]
    project: bool,

    /// The user's settings, `~/.claude/settings.json`.
    #[arg(long)]
    user: bool,

    /// An HTTP hook posting to this URL (`wasm-hooks serve`) instead of the
    /// command hook.
    #[arg(long, value_name = "URL")]
    http: Option<String>,

    /// The project [default: the current directory].
    #[arg(long, value_name = "DIR")]
    project_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Agent {
    /// Claude Code.
    Claude,
}

impl InstallArgs {
    fn settings_file(&self) -> anyhow::Result<PathBuf> {
        let Agent::Claude = self.agent;
        if self.user {
            let home = std::env::var_os("HOME").context("--user: HOME is not set")?;
            return Ok(PathBuf::from(home).join(".claude/settings.json"));
        }
        let project = match &self.project_dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("finding the current directory")?,
        };
        Ok(project.join(".claude/settings.json"))
    }

    fn hook(&self) -> anyhow::Result<InstalledHook> {
        if let Some(url) = &self.http {
            return Ok(InstalledHook::Http(url.clone()));
        }
        let exe = std::env::current_exe().context("finding the wasm-hooks executable")?;
        let exe = exe.to_str().context("the executable's path is not UTF-8")?;
        let quoted = shlex::try_quote(exe).context("quoting the executable's path")?;
        Ok(InstalledHook::Command(format!(
            "{quoted} hook --protocol claude"
        )))
    }
}

pub(crate) fn install(args: InstallArgs) -> anyhow::Result<Exit> {
    let file = args.settings_file()?;
    let text = read(&file)?;
    let message = match wasm_hooks::install_claude_hooks(&text, &args.hook()?)
        .with_context(|| file.display().to_string())?
    {
        Some(new) => {
            let backup = write(&file, &text, &new)?;
            format!(
                "installed wasm-hooks on {} events in {}{}\n",
                CLAUDE_EVENTS.len(),
                file.display(),
                backup_note(backup.as_deref())
            )
        }
        None => format!("already installed in {}\n", file.display()),
    };
    report::print(&message)?;
    Ok(Exit::GoOn)
}

pub(crate) fn uninstall(args: InstallArgs) -> anyhow::Result<Exit> {
    let file = args.settings_file()?;
    let text = read(&file)?;
    let message = match wasm_hooks::uninstall_claude_hooks(&text, &args.hook()?)
        .with_context(|| file.display().to_string())?
    {
        Some((new, removed)) => {
            let backup = write(&file, &text, &new)?;
            format!(
                "removed {removed} wasm-hooks entries from {}{}\n",
                file.display(),
                backup_note(backup.as_deref())
            )
        }
        None => format!("no wasm-hooks entries in {}\n", file.display()),
    };
    report::print(&message)?;
    Ok(Exit::GoOn)
}

fn backup_note(backup: Option<&Path>) -> String {
    backup
        .map(|b| format!(" (the previous version is in {})", b.display()))
        .unwrap_or_default()
}

/// The settings text; empty when the file does not exist yet.
fn read(file: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// Keep the old text in `<file>.bak` (when there was one), then replace
/// the file atomically (a temporary file renamed over it). Returns the
/// backup's path.
fn write(file: &Path, old: &str, new: &str) -> anyhow::Result<Option<PathBuf>> {
    let dir = file
        .parent()
        .context("the settings file has no directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let backup = if old.is_empty() {
        None
    } else {
        let backup = file.with_extension("json.bak");
        std::fs::write(&backup, old).with_context(|| format!("writing {}", backup.display()))?;
        Some(backup)
    };
    let temporary = file.with_extension(format!("json.tmp-{}", std::process::id()));
    std::fs::write(&temporary, new).with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, file).with_context(|| format!("replacing {}", file.display()))?;
    Ok(backup)
}
