//! `wasm-hooks cache`: what the compile cache holds for this build, and,
//! with `--prune`, removing what this build can never use again.

use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;

use super::hook_files::CacheArgs;
use super::{Exit, report};

/// Arguments of `wasm-hooks cache`.
#[derive(Debug, Args)]
pub(crate) struct CacheCommandArgs {
    /// Remove other wasmtime builds' entries, digest records whose plugin
    /// file is gone or changed, and abandoned temporary files (this
    /// build's entries stay).
    #[arg(long)]
    prune: bool,

    /// Print the survey as JSON.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    cache: CacheArgs,
}

pub(crate) fn run(args: CacheCommandArgs) -> anyhow::Result<Exit> {
    let runtime = args.cache.runtime_options().build()?;
    let (Some(cache), Some(survey)) = (runtime.cache(), runtime.survey_cache()) else {
        bail!("--no-cache: there is no compile cache to look at");
    };
    let dir = cache.dir().display().to_string();
    let survey = survey.with_context(|| format!("reading the compile cache {dir}"))?;
    if args.prune {
        survey
            .prune()
            .with_context(|| format!("pruning the compile cache {dir}"))?;
    }
    if args.json {
        let doc = json!({"dir": dir, "survey": &survey, "pruned": args.prune});
        report::print(&format!("{doc}\n"))?;
        return Ok(Exit::GoOn);
    }
    let mb = |bytes: u64| bytes as f64 / 1e6;
    let stale = if args.prune { "removed" } else { "stale" };
    let mut out = format!(
        "cache: {dir}\nthis build: {}, {:.1} MB\n",
        count(survey.entries as usize, "compiled plugin"),
        mb(survey.entries_bytes)
    );
    out += &format!(
        "other builds: {}, {:.1} MB ({stale})\n",
        count(survey.other_engines.len(), "directory"),
        mb(survey.other_engines_bytes)
    );
    out += &format!(
        "digest records: {}, of which {} {stale} (the plugin file is gone or changed)\n",
        survey.records,
        survey.stale_records.len()
    );
    out += &format!(
        "abandoned temporary files: {} ({stale})\n",
        survey.temporary.len()
    );
    out += &format!(
        "baseline (winch) builds that cranelift's replaced: {} ({stale})\n",
        survey.superseded.len()
    );
    if !args.prune && !survey.is_clean() {
        out += "run `wasm-hooks cache --prune` to remove what is stale\n";
    }
    report::print(&out)?;
    Ok(Exit::GoOn)
}

/// "1 directory", "2 directories", "0 compiled plugins".
fn count(n: usize, what: &str) -> String {
    match (n, what.strip_suffix('y')) {
        (1, _) => format!("1 {what}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        (_, None) => format!("{n} {what}s"),
    }
}
