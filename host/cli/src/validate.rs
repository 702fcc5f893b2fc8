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

    #[command(flatten)]
    hook_files: HookFileArgs,
}

pub(crate) fn run(args: ValidateArgs) -> anyhow::Result<Exit> {
    let builder = args.hook_files.builder(&args.files)?;
    let files = builder.files();
    if files.is_empty() {
        report::print("no hook files found\n")?;
        return Ok(Exit::GoOn);
    }
    match builder.build() {
        Ok(engine) => {
            let (hooks, n) = (engine.hooks().len(), files.len());
            let mut text = format!(
                "ok: {hooks} hook{} in {n} file{}\n",
                if hooks == 1 { "" } else { "s" },
                if n == 1 { "" } else { "s" }
            );
            for hook in engine.hooks() {
                if let Some(why) = hook.handler.unsupported() {
                    text.push_str(&format!(
                        "warning: {}: hook `{}` will not run: {why}\n",
                        hook.source, hook.id
                    ));
                }
                for caveat in &hook.caveats {
                    text.push_str(&format!(
                        "warning: {}: hook `{}`: {caveat}\n",
                        hook.source, hook.id
                    ));
                }
            }
            report::print(&text)?;
            Ok(Exit::GoOn)
        }
        Err(err) => {
            let mut text = String::new();
            for e in &err.errors {
                text.push_str(&format!("{e}\n"));
            }
            let n = err.errors.len();
            text.push_str(&format!("{n} problem{}\n", if n == 1 { "" } else { "s" }));
            report::print(&text)?;
            Ok(Exit::Failed)
        }
    }
}
