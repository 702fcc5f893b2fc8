//! `wasm-hooks explain` (and `--explain` on `run` and `hook`): for one
//! event, which project was chosen and why, which hook files were looked
//! for and found, and why each hook ran or not, with each answer and time
//! and the decision.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use serde::Serialize;
use wasm_hooks::{Event, Explanation, Fate, HookEngineBuilder};

use super::event_args::EventArgs;
use super::hook_files::HookFileArgs;
use super::{Exit, report};

/// Arguments of `wasm-hooks explain`.
#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    #[command(flatten)]
    hook_files: HookFileArgs,

    #[command(flatten)]
    event: EventArgs,

    /// Print the explanation as JSON.
    #[arg(long)]
    json: bool,
}

/// The project whose hook files are read, and why it is that one.
#[derive(Debug, Serialize)]
pub(crate) struct ProjectChoice {
    pub(crate) dir: PathBuf,
    pub(crate) why: &'static str,
}

/// The project `dir` is in: the nearest directory at or above it with
/// hook files (`.wasm-hooks/`, `.claude/settings*.json`), else the nearest
/// with `.git` (a repository's root); never the home directory (whose
/// `~/.claude` is the person's, not a project's) nor above it. A session
/// started in a subdirectory still runs the repository's hooks.
fn project_root(dir: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let below_home = || {
        dir.ancestors()
            .take_while(|d| home.as_deref().is_none_or(|home| *d != home))
    };
    let has_hooks = |d: &Path| {
        d.join(".wasm-hooks").is_dir()
            || d.join(".claude/settings.json").is_file()
            || d.join(".claude/settings.local.json").is_file()
    };
    below_home()
        .find(|d| has_hooks(d))
        .or_else(|| below_home().find(|d| d.join(".git").exists()))
        .map(Path::to_owned)
}

impl ProjectChoice {
    /// As `hook` chooses for an agent's event: `--project-dir`, else
    /// `CLAUDE_PROJECT_DIR`, else the project the event's `cwd` is in
    /// ([`project_root`]), else the current directory.
    pub(crate) fn for_agent_event(args: &HookFileArgs, event: &Event) -> anyhow::Result<Self> {
        if let Some(dir) = args.project_dir() {
            return Ok(Self {
                dir: dir.to_owned(),
                why: "--project-dir",
            });
        }
        if let Some(dir) = std::env::var_os("CLAUDE_PROJECT_DIR") {
            return Ok(Self {
                dir: dir.into(),
                why: "$CLAUDE_PROJECT_DIR (the agent's project)",
            });
        }
        if let Some(cwd) = event.cwd() {
            let cwd = PathBuf::from(cwd);
            return Ok(match project_root(&cwd) {
                Some(root) if root != cwd => Self {
                    dir: root,
                    why: "the project the event's `cwd` is in (no $CLAUDE_PROJECT_DIR)",
                },
                _ => Self {
                    dir: cwd,
                    why: "the event's `cwd` (no $CLAUDE_PROJECT_DIR)",
                },
            });
        }
        Self::current("the current directory (the event has no `cwd`)")
    }

    /// As `run` chooses: `--project-dir`, else the current directory.
    pub(crate) fn given(args: &HookFileArgs) -> anyhow::Result<Self> {
        match args.project_dir() {
            Some(dir) => Ok(Self {
                dir: dir.to_owned(),
                why: "--project-dir",
            }),
            None => {
                Self::current("the current directory (`run` does not follow the event's `cwd`)")
            }
        }
    }

    fn current(why: &'static str) -> anyhow::Result<Self> {
        Ok(Self {
            dir: std::env::current_dir().context("finding the current directory")?,
            why,
        })
    }
}

pub(crate) fn run(args: ExplainArgs) -> anyhow::Result<Exit> {
    let event = args.event.event()?;
    let place = ProjectChoice::for_agent_event(&args.hook_files, &event)?;
    let builder = args.hook_files.builder_in(&[], Some(place.dir.clone()))?;
    let engine = builder.build()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let explanation = runtime.block_on(engine.explain(event));
    let mut text = render(&place, &builder, &explanation, args.json)?;
    if !args.json {
        let installs = super::install::installs_in(&place.dir);
        if !installs.is_empty() {
            text.push_str("installed in the agents' project settings:\n");
            for line in installs {
                let _ = writeln!(text, "  {line}");
            }
        }
    }
    report::print(&text)?;
    runtime.block_on(engine.wait_for_background());
    Ok(Exit::of_outcome(&explanation.outcome))
}

/// The explanation for a person, or as JSON.
pub(crate) fn render(
    place: &ProjectChoice,
    builder: &HookEngineBuilder,
    explanation: &Explanation,
    json: bool,
) -> anyhow::Result<String> {
    let files = builder.searched_files();
    if json {
        #[derive(Serialize)]
        struct File<'a> {
            path: &'a std::path::Path,
            found: bool,
        }
        #[derive(Serialize)]
        struct Report<'a> {
            project: &'a ProjectChoice,
            files: Vec<File<'a>>,
            #[serde(flatten)]
            explanation: &'a Explanation,
        }
        let report = Report {
            project: place,
            files: files
                .iter()
                .map(|(path, found)| File {
                    path,
                    found: *found,
                })
                .collect(),
            explanation,
        };
        return Ok(serde_json::to_string_pretty(&report)? + "\n");
    }
    let mut out = String::new();
    let subject = explanation.subject.as_deref().map_or(String::new(), |s| {
        format!(" (`{}`)", wasm_hooks::cli_support::Shown(s))
    });
    let _ = writeln!(out, "event:    {}{subject}", explanation.event);
    let _ = writeln!(out, "project:  {}", place.dir.display());
    let _ = writeln!(out, "          chosen by {}", place.why);
    let _ = writeln!(out, "hook files, highest layer first:");
    if files.is_empty() {
        let _ = writeln!(out, "  (none looked for)");
    }
    for (path, found) in &files {
        let word = if *found { "read" } else { "not there" };
        let _ = writeln!(out, "  {word:<10} {}", path.display());
    }
    write_hooks(&mut out, explanation);
    let outcome = &explanation.outcome;
    let _ = write!(out, "decision: {}", outcome.verdict.word());
    if let Some(by) = &outcome.decided_by {
        let _ = write!(out, ", by {by}");
    }
    out.push('\n');
    Ok(out)
}

/// Each hook's line (what became of it, and what its answer carried),
/// with where it is declared.
fn write_hooks(out: &mut String, explanation: &Explanation) {
    let _ = writeln!(out, "hooks, in the order they run:");
    if explanation.hooks.is_empty() {
        let _ = writeln!(out, "  (no hooks loaded)");
    }
    for hook in &explanation.hooks {
        let mut produced = Vec::new();
        let (word, detail) = match &hook.fate {
            Fate::Ran {
                answer,
                elapsed_us,
                produced: carried,
            } => {
                produced = carried.lines();
                (
                    "ran",
                    format!("{answer} in {:.2} ms", *elapsed_us as f64 / 1000.0),
                )
            }
            Fate::NotReached => ("not run", "a hook before it decided".to_owned()),
            Fate::Skipped { detail, .. } => ("skipped", detail.clone()),
            Fate::LeftOut { why, detail, .. } => (
                "left out",
                match detail {
                    Some(detail) => format!("{detail}; and it would be left out: {why}"),
                    None => format!("it fits, but is left out: {why}"),
                },
            ),
        };
        let _ = writeln!(
            out,
            "  {word:<9} {}: {}",
            hook.hook,
            wasm_hooks::cli_support::Shown(&detail)
        );
        for line in produced {
            let _ = writeln!(out, "            {}", wasm_hooks::cli_support::Shown(&line));
        }
        let _ = writeln!(out, "            ({})", hook.source);
    }
}
