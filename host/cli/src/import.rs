//! `wasm-hooks import claude|codex|gemini`: move a project's (or the
//! user's) existing command hooks out of the agent's settings into a
//! wasm-hooks hook file, where they behave as before (matchers, timeouts,
//! `if`, `async`), and leave wasm-hooks' own entry in the agent's
//! settings. The diff of every file is shown first and nothing is written
//! until the person says so. The moved hooks ran with the person's rights
//! in the agent's settings: the import trusts exactly them, as moved (the
//! version of the project the person trusts gains them, before anything is
//! written), so there is no moment at which they are off; nothing else of
//! the project's hook files becomes trusted by it.
//!
//! Claude Code's shared `settings.json` goes to `.wasm-hooks/hooks.json`,
//! its uncommitted `settings.local.json` to the uncommitted
//! `.wasm-hooks/hooks.local.json`; the user's settings to the user's
//! `hooks.json` in wasm-hooks' config directory.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;

use super::install::{self, Agent, InstallArgs};
use super::trust;
use super::{Exit, report};

/// Arguments of `wasm-hooks import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The agent whose hooks to move: claude, codex or gemini.
    agent: Agent,

    /// The user's settings (`~/.claude/settings.json`, …) instead of the
    /// project's.
    #[arg(long)]
    user: bool,

    /// The project [default: the current directory].
    #[arg(long, value_name = "DIR", conflicts_with = "user")]
    project_dir: Option<PathBuf>,

    /// Move them without asking.
    #[arg(long, short)]
    yes: bool,

    /// Only show what would change.
    #[arg(long, conflicts_with = "yes")]
    dry_run: bool,
}

/// One move: the agent's settings file, and the hook file its hooks go to.
struct Move {
    from: PathBuf,
    to: PathBuf,
}

impl ImportArgs {
    /// The import `init` offers for `agent`'s project settings in
    /// `project`: asked about (the diff shown first) unless `yes`.
    pub(crate) fn offered_by_init(agent: Agent, project: PathBuf, yes: bool) -> Self {
        Self {
            agent,
            user: false,
            project_dir: Some(project),
            yes,
            dry_run: false,
        }
    }

    /// Whether this import would move any command hook.
    pub(crate) fn would_move(&self) -> bool {
        self.plan().is_ok_and(|plan| plan.moved > 0)
    }

    fn project(&self) -> anyhow::Result<PathBuf> {
        match &self.project_dir {
            Some(dir) => Ok(dir.clone()),
            None => std::env::current_dir().context("finding the current directory"),
        }
    }

    /// The settings files to read, each with the hook file it goes to.
    fn moves(&self) -> anyhow::Result<Vec<Move>> {
        if !self.agent.0.facts().importable {
            bail!(
                "{} keeps no command hooks wasm-hooks can import; `import` reads Claude Code, Codex and Gemini CLI",
                self.agent.name()
            );
        }
        if self.user {
            let config = wasm_hooks::cli_support::xdg_dir("XDG_CONFIG_HOME", ".config")
                .context("no config directory: neither XDG_CONFIG_HOME nor HOME is set")?;
            return Ok(vec![Move {
                from: install::user_file(self.agent)?,
                to: config.join("wasm-hooks/hooks.json"),
            }]);
        }
        let project = self.project()?;
        let shared = self.agent.file_in(&project);
        let hooks = project.join(".wasm-hooks");
        let mut moves = vec![Move {
            from: shared.clone(),
            to: hooks.join("hooks.json"),
        }];
        if let Some(local) = self.agent.local_file(&shared) {
            moves.push(Move {
                from: local,
                to: hooks.join("hooks.local.json"),
            });
        }
        Ok(moves)
    }
}

/// A file's new text, beside its old one.
struct Change {
    file: PathBuf,
    old: String,
    new: String,
    /// For a project's hook file: the hooks moved into it, which the
    /// import trusts as they are (they ran with the person's rights).
    moved: Option<serde_json::Map<String, serde_json::Value>>,
}

/// What an import would change: every file's new text, notes on what
/// stays, and how many hooks move.
struct Plan {
    changes: Vec<Change>,
    notes: String,
    moved: usize,
}

impl ImportArgs {
    /// Take the command hooks out of each settings file and into its hook
    /// file, in memory.
    fn plan(&self) -> anyhow::Result<Plan> {
        let protocol = self.agent.protocol();
        let mut plan = Plan {
            changes: Vec::new(),
            notes: String::new(),
            moved: 0,
        };
        for Move { from, to } in self.moves()? {
            let text = install::read(&from)?;
            let Some(imported) = wasm_hooks::agents::take_command_hooks(&text, protocol)
                .with_context(|| from.display().to_string())?
            else {
                continue;
            };
            for why in &imported.left {
                plan.notes
                    .push_str(&format!("note: {}: {why}\n", from.display()));
            }
            if imported.moved == 0 {
                continue;
            }
            if self.agent.0 == wasm_hooks::Protocol::Gemini {
                plan.notes.push_str(&format!(
                    "warning: {}: the moved hooks will see Claude Code's names (`hook_event_name: \"PreToolUse\"`, `tool_name: \"Bash\"`), not Gemini CLI's (`BeforeTool`, `run_shell_command`; those stay in `agent_event_name` and `agent_tool_name`): check that their scripts do not test the old names\n",
                    from.display()
                ));
            }
            plan.moved += imported.moved;
            let hook_file = install::read(&to)?;
            let with_hooks = wasm_hooks::agents::add_hook_groups(&hook_file, &imported.hooks)
                .with_context(|| {
                    format!("{}: import writes into a JSON hook file", to.display())
                })?;
            plan.changes.push(Change {
                file: from,
                old: text,
                new: imported.settings,
                moved: None,
            });
            plan.changes.push(Change {
                file: to,
                old: hook_file,
                new: with_hooks,
                moved: (!self.user).then_some(imported.hooks),
            });
        }
        Ok(plan)
    }
}

pub(crate) fn run(args: ImportArgs) -> anyhow::Result<Exit> {
    let Plan {
        changes,
        notes,
        moved,
    } = args.plan()?;
    if moved == 0 {
        report::print(&format!(
            "{notes}no command hooks to import from {}'s settings\n",
            args.agent.name()
        ))?;
        return Ok(Exit::GoOn);
    }
    let mut shown = notes;
    for change in &changes {
        shown.push_str(&diff(change));
    }
    let hooks = if moved == 1 {
        "hook moves"
    } else {
        "hooks move"
    };
    shown.push_str(&format!(
        "{moved} command {hooks} into wasm-hooks' hook files; {} keeps only wasm-hooks' own entry.\n",
        args.agent.name()
    ));
    report::print(&shown)?;
    let install = InstallArgs::for_import(args.agent, args.user, args.project_dir.clone());
    install
        .check()
        .context("nothing was moved: wasm-hooks could not be installed in their place")?;
    let refusal = "no terminal to ask on: add --yes to move them without asking, or --dry-run";
    if args.dry_run || !(args.yes || trust::confirmed("Move them?", refusal)?) {
        report::print("nothing written\n")?;
        return Ok(Exit::GoOn);
    }
    // The moved hooks ran with the person's rights: they are trusted as
    // moved, before anything is written, so that no event between the
    // move and a `trust` finds them off. Nothing else of the project is.
    if !args.user {
        trust_moved(&args.project()?, &changes)?;
    }
    for change in &changes {
        install::write(&change.file, &change.old, &change.new)?;
        if change.file.ends_with(".wasm-hooks/hooks.local.json") {
            report::print(&install::git_ignore(&args.project()?, &change.file)?)?;
        }
    }
    install::install(install)?;
    if args.user {
        return Ok(Exit::GoOn);
    }
    report::print(
        "the moved hooks run as before (trusted as they were moved); the rest of the project's hook files as your trust of them says (`wasm-hooks trust --show`)\n",
    )?;
    Ok(Exit::GoOn)
}

/// Trust the hooks each change moved into a project hook file, as moved:
/// the version of the file the person trusted (nothing when none) with
/// them added.
fn trust_moved(project: &std::path::Path, changes: &[Change]) -> anyhow::Result<()> {
    let mut builder = wasm_hooks::HookEngineBuilder::new();
    builder.project_dir(project);
    let record = wasm_hooks::TrustStore::user().and_then(|store| store.record(project));
    for change in changes {
        let Some(moved) = &change.moved else {
            continue;
        };
        let trusted = record
            .as_ref()
            .and_then(|r| r.text(&change.file))
            .unwrap_or_default();
        let text = wasm_hooks::agents::add_hook_groups(trusted, moved)
            .with_context(|| format!("{}: the version you trusted", change.file.display()))?;
        builder
            .trust_hook_file_as(&change.file, &text)
            .with_context(|| format!("trusting the hooks moved into {}", change.file.display()))?;
    }
    Ok(())
}

/// A unified diff of one file's change, with its name.
fn diff(change: &Change) -> String {
    let name = change.file.display().to_string();
    let old_name = if change.old.is_empty() {
        "/dev/null".to_owned()
    } else {
        format!("{name} (now)")
    };
    similar::TextDiff::from_lines(&change.old, &change.new)
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &format!("{name} (after the import)"))
        .to_string()
}
