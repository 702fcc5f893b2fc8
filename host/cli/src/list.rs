//! `wasm-hooks list`: which hooks would run, in order, and where each was
//! declared; optionally only those for one event and tool.

use std::fmt::Write as _;

use anyhow::Context;
use clap::Args;
use wasm_hooks::cli_support::Shown;
use wasm_hooks::{Event, EventName};

use super::hook_files::HookFileArgs;
use super::{Exit, report};

/// Arguments of `wasm-hooks list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only hooks for this event (canonical name or alias).
    #[arg(short, long, value_name = "NAME")]
    event: Option<String>,

    /// Only hooks for this tool (with --event).
    #[arg(short, long, value_name = "NAME", requires = "event")]
    tool: Option<String>,

    #[command(flatten)]
    hook_files: HookFileArgs,
}

pub(crate) fn run(args: ListArgs) -> anyhow::Result<Exit> {
    let engine = args.hook_files.builder(&[])?.strict_project(true).build()?;
    let probe = match &args.event {
        Some(name) => {
            let mut event = Event::new(EventName::parse(name).context("--event")?);
            if let Some(tool) = &args.tool {
                event = event.with("tool_name", tool.as_str());
            }
            Some(event)
        }
        None => None,
    };
    let mut out = String::new();
    let mut shown = 0;
    for hook in engine.hooks() {
        if probe.as_ref().is_some_and(|e| !hook.applies_to(e)) {
            continue;
        }
        shown += 1;
        let events: Vec<&str> = hook.events.events().map(EventName::as_str).collect();
        let _ = writeln!(
            out,
            "{shown:>3}. {}  [{}]  matcher {}  priority {}{}",
            hook.id,
            events.join(", "),
            hook.matcher,
            hook.priority,
            if hook.background { "  async" } else { "" }
        );
        let _ = writeln!(out, "     from {}", hook.source);
        for line in hook.handler.details() {
            let _ = writeln!(out, "     {}", Shown(&line));
        }
        if !hook.trusted {
            let _ = writeln!(
                out,
                "     untrusted project: sandboxed, may deny, ask or add context, not allow or rewrite"
            );
        }
        for caveat in &hook.caveats {
            let _ = writeln!(out, "     caveat: {}", Shown(caveat));
        }
        if let Some(description) = &hook.description {
            let _ = writeln!(out, "     {}", Shown(description));
        }
    }
    // The hooks left out (untrusted, or switched off by a higher layer),
    // by the same filters: one that would not apply to the event is not
    // listed for it.
    let left_out: Vec<_> = engine
        .not_run()
        .filter(|s| probe.as_ref().is_none_or(|e| s.spec.applies_to(e)))
        .collect();
    for skipped in &left_out {
        let _ = writeln!(
            out,
            "  -  {}  ({})  not run: {}\n     from {}",
            skipped.spec.id, skipped.kind, skipped.why, skipped.spec.source
        );
    }
    if shown == 0 && left_out.is_empty() {
        out.push_str("no hooks\n");
    }
    report::print(&out)?;
    Ok(Exit::GoOn)
}
