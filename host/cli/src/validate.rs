//! `wasm-hooks validate`: read hook files (compiling their plugins) and
//! report every problem, or how many hooks they hold.

use std::path::PathBuf;

use clap::Args;

use super::hook_files::HookFileArgs;
use super::{Exit, report};

/// Arguments of `wasm-hooks validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Hook files to check [default: the search list].
    files: Vec<PathBuf>,

    /// Fail on warnings too (entries that load but may never do what they
    /// say), as CI should.
    #[arg(long)]
    deny_warnings: bool,

    #[command(flatten)]
    hook_files: HookFileArgs,
}

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

pub(crate) fn run(args: ValidateArgs) -> anyhow::Result<Exit> {
    let mut builder = args.hook_files.builder(&args.files)?;
    builder.strict_project(true);
    let files = builder.files();
    // What the agents' settings run for wasm-hooks, checked too.
    let installs = match args.hook_files.project_dir() {
        Some(dir) => super::install::install_warnings(dir),
        None => super::install::install_warnings(&std::env::current_dir()?),
    };
    if files.is_empty() {
        let mut text: String = installs.iter().map(|w| format!("warning: {w}\n")).collect();
        text.push_str("no hook files found\n");
        report::print(&text)?;
        let failed = args.deny_warnings && !installs.is_empty();
        return Ok(if failed { Exit::Failed } else { Exit::GoOn });
    }
    match builder.build() {
        Ok(engine) => {
            let warnings = engine.warnings();
            let failed = args.deny_warnings && (!warnings.is_empty() || !installs.is_empty());
            let mut text = String::new();
            for warning in warnings {
                text.push_str(&format!("warning: {warning}\n"));
            }
            for warning in &installs {
                text.push_str(&format!("warning: {warning}\n"));
            }
            // Every hook the files hold is counted, and those that will
            // not run are said apart, by why (an untrusted project's).
            let left_out: Vec<_> = engine.not_run().collect();
            let (hooks, n) = (engine.hooks().len() + left_out.len(), files.len());
            text.push_str(&format!(
                "{}: {} in {}",
                if failed { "failed" } else { "ok" },
                count(hooks, "hook"),
                count(n, "file")
            ));
            let mut whys = std::collections::BTreeMap::<&str, usize>::new();
            for hook in &left_out {
                *whys.entry(hook.why).or_default() += 1;
            }
            for (why, many) in whys {
                text.push_str(&format!(" ({many} left out: {why})"));
            }
            if !warnings.is_empty() {
                text.push_str(&format!(", {}", count(warnings.len(), "warning")));
            }
            text.push('\n');
            for hook in engine.hooks() {
                for caveat in &hook.caveats {
                    text.push_str(&format!(
                        "warning: {}: hook `{}`: {caveat}\n",
                        hook.source, hook.id
                    ));
                }
            }
            report::print(&text)?;
            Ok(if failed { Exit::Failed } else { Exit::GoOn })
        }
        Err(err) => {
            let mut text = String::new();
            for e in &err.errors {
                text.push_str(&format!("{e}\n"));
            }
            for warning in &err.warnings {
                text.push_str(&format!("warning: {warning}\n"));
            }
            text.push_str(&count(err.errors.len(), "problem"));
            if !err.warnings.is_empty() {
                text.push_str(&format!(", {}", count(err.warnings.len(), "warning")));
            }
            text.push('\n');
            report::print(&text)?;
            Ok(Exit::Failed)
        }
    }
}
