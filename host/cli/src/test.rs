//! `wasm-hooks test`: run policy tests (fixture files holding an event and
//! the outcome it must get) against hook files, report each failure with
//! both sides, exit 1 if any fails.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use wasm_hooks::policy::Mismatch;
use wasm_hooks::policy::PolicyTest;
use wasm_hooks::policy::read_fixtures;
use wasm_hooks::{Event, Explanation, Fate, HookEngine, Misfit};

use super::hook_files::HookFileArgs;
use super::{Exit, report};

/// Arguments of `wasm-hooks test`.
#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    /// Fixture files, or directories: a directory means the .yaml, .yml and
    /// .json files under its `fixtures/` folder, or in it when it has none
    /// (files named `hooks.*` are hook files, not fixtures).
    #[arg(value_name = "DIR|FILE", default_value = ".")]
    paths: Vec<PathBuf>,

    /// Print the results as JSON.
    #[arg(long)]
    json: bool,

    /// Also say which hooks of each hook file no test ran (like `opa test
    /// --coverage`).
    #[arg(long)]
    coverage: bool,

    /// Which hook files a test runs against, unless its fixture says
    /// (`hooks:`); without `-c`, the nearest `hooks.json` (or `.yaml`,
    /// `.yml`) in the fixture's folder or above it.
    #[command(flatten)]
    hook_files: HookFileArgs,
}

/// Refuse to test a plugin folder whose `build/` is older than one of its
/// sources: its fixtures would run the old component and pass or fail for
/// code that is no longer there.
fn refuse_a_stale_build(paths: &[PathBuf]) -> anyhow::Result<()> {
    for dir in paths.iter().filter(|p| p.is_dir()) {
        let plugin = ["Cargo.toml", "app.py", "app.js", "app.ts"]
            .iter()
            .any(|file| dir.join(file).is_file());
        if let Some((source, component)) = plugin
            .then(|| super::build::inputs::newer_than_build(dir))
            .flatten()
        {
            anyhow::bail!(
                "{} changed after {} was built: the tests would run the old build; run `wasm-hooks build {}` first",
                source.display(),
                component.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

/// One test's result.
#[derive(Debug, Serialize)]
struct Ran {
    file: PathBuf,
    name: String,
    passed: bool,
    mismatches: Vec<Mismatch>,
    error: Option<String>,
}

/// Every result, and the counts.
#[derive(Debug, Serialize)]
struct Summary {
    passed: usize,
    failed: usize,
    tests: Vec<Ran>,
    /// With `--coverage`: per hook file, the hooks no test ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<Vec<Coverage>>,
}

/// Which hooks of one hook file the tests ran, and which rules of them
/// decided.
#[derive(Debug, Serialize)]
struct Coverage {
    /// The hook file (`-` for the `-c` files and layers together).
    hooks: String,
    /// How many hooks it has.
    total: usize,
    /// Those no test ran: name and where it is declared.
    not_run: Vec<(String, String)>,
    /// Rules (of hooks that have them, inline rules) no test made decide:
    /// the hook's name and the rule in words.
    rules_never_decided: Vec<(String, String)>,
}

/// What the tests reached of one hook file: the hooks that ran, and the
/// rules (hook, index) that decided.
#[derive(Default)]
struct Reached {
    /// By where each is declared (names need not be unique).
    hooks: HashSet<String>,
    rules: HashSet<(String, usize)>,
}

pub(crate) fn run(args: TestArgs) -> anyhow::Result<Exit> {
    refuse_a_stale_build(&args.paths)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut engines: HashMap<Option<PathBuf>, Result<HookEngine, String>> = HashMap::new();
    let mut ran: HashMap<Option<PathBuf>, Reached> = HashMap::new();
    let mut tests = Vec::new();
    for file in fixture_files(&args.paths)? {
        let read = match read_fixtures(&file) {
            Ok(read) => read,
            Err(e) => {
                tests.push(broken(&file, String::new(), e.to_string()));
                continue;
            }
        };
        for test in read {
            let hooks = hook_file_for(&args, &file, &test);
            let engine = engines
                .entry(hooks.clone())
                .or_insert_with(|| engine_for(&args.hook_files, hooks.as_deref()));
            tests.push(match engine {
                Ok(engine) => {
                    let (result, reached) = run_one(&rt, engine, &file, test);
                    let seen = ran.entry(hooks.clone()).or_default();
                    seen.hooks.extend(reached.hooks);
                    seen.rules.extend(reached.rules);
                    result
                }
                Err(e) => broken(&file, test.name, e.clone()),
            });
        }
    }
    if tests.is_empty() {
        anyhow::bail!("no fixtures found in {}", shown(&args.paths));
    }
    let failed = tests.iter().filter(|t| !t.passed).count();
    let coverage = args.coverage.then(|| coverage(&engines, &ran));
    let summary = Summary {
        passed: tests.len() - failed,
        failed,
        tests,
        coverage,
    };
    if args.json {
        report::print(&(serde_json::to_string_pretty(&summary)? + "\n"))?;
    } else {
        report::print(&human(&summary))?;
    }
    Ok(if failed > 0 { Exit::Failed } else { Exit::GoOn })
}

fn shown(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The fixture files the arguments name, sorted within each directory.
fn fixture_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let fixtures = path.join("fixtures");
            let mut found = Vec::new();
            if fixtures.is_dir() {
                collect(&fixtures, true, &mut found)?;
            } else {
                collect(path, false, &mut found)?;
            }
            found.retain(|f| !is_hook_file(f));
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn collect(dir: &Path, recurse: bool, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            if recurse {
                collect(&path, true, found)?;
            }
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        ) {
            found.push(path);
        }
    }
    Ok(())
}

fn is_hook_file(path: &Path) -> bool {
    path.file_stem().is_some_and(|s| s == "hooks")
}

/// The hook file a test runs against: its fixture's `hooks`, else none
/// (the `-c` files), else the nearest `hooks.*` at or above the fixture.
fn hook_file_for(args: &TestArgs, fixture: &Path, test: &PolicyTest) -> Option<PathBuf> {
    if let Some(hooks) = &test.hooks {
        return Some(hooks.clone());
    }
    if !args.hook_files.configs().is_empty() {
        return None;
    }
    let start = fixture.parent().unwrap_or(Path::new("."));
    start.ancestors().take(4).find_map(|dir| {
        ["hooks.json", "hooks.yaml", "hooks.yml"]
            .iter()
            .map(|name| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

fn engine_for(args: &HookFileArgs, hooks: Option<&Path>) -> Result<HookEngine, String> {
    let extra: Vec<PathBuf> = hooks.into_iter().map(Path::to_owned).collect();
    if extra.is_empty() && args.configs().is_empty() {
        return Err(
            "no hook file: give the fixture `hooks:`, pass -c, or put a hooks.json \
                    beside the fixtures"
                .into(),
        );
    }
    let mut builder = if extra.is_empty() {
        args.builder(&[])
    } else {
        args.builder_only(&extra)
    }
    .map_err(|e| format!("{e:#}"))?;
    if let Some(beside) = extra.first().and_then(|file| file.parent()) {
        // Found beside the fixtures (maybe a cloned repository's), not
        // named with -c: the project is the folder it is in, and its
        // hooks run only as far as they are sandboxed in it.
        builder
            .project_dir(beside)
            .named_files_are_the_projects(true)
            .sandboxed_answer_in_full(true)
            .strict_project(true);
    }
    let engine = builder.build().map_err(|e| e.to_string())?;
    let untrusted: Vec<_> = engine.skipped().iter().filter(|s| s.for_trust()).collect();
    if let [first, ..] = untrusted.as_slice() {
        return Err(format!(
            "{} hook(s) of the fixtures' hook file would run outside the sandbox (`{}`, {}), so they were left out: name the file with -c to run them as yours",
            untrusted.len(),
            first.spec.id,
            first.kind
        ));
    }
    Ok(engine)
}

fn run_one(
    rt: &tokio::runtime::Runtime,
    engine: &HookEngine,
    file: &Path,
    test: PolicyTest,
) -> (Ran, Reached) {
    let event = match Event::from_json(test.event) {
        Ok(event) => event,
        Err(e) => {
            let why = format!("the event: {e}");
            return (broken(file, test.name, why), Reached::default());
        }
    };
    let explanation = rt.block_on(engine.explain(event.clone()));
    let hooks_ran = reached(engine, &explanation, &event);
    if let Some(why) = nothing_on_the_event(&explanation) {
        return (broken(file, test.name, why), hooks_ran);
    }
    let mut mismatches = test.expect.check(&explanation.outcome);
    if let Some(hook) = &test.hook {
        match named_hook(&explanation, hook) {
            Ok(mismatch) => mismatches.extend(mismatch),
            Err(why) => return (broken(file, test.name, why), hooks_ran),
        }
    }
    let result = Ran {
        file: file.to_owned(),
        name: test.name,
        passed: mismatches.is_empty(),
        mismatches,
        error: None,
    };
    (result, hooks_ran)
}

/// The hooks that ran on `event`, and the rule each that has rules
/// decided by.
fn reached(engine: &HookEngine, explanation: &Explanation, event: &Event) -> Reached {
    let hooks: HashSet<String> = explanation
        .hooks
        .iter()
        .filter(|h| matches!(h.fate, Fate::Ran { .. }))
        .map(|h| h.source.clone())
        .collect();
    let rules = engine
        .hooks()
        .iter()
        .filter_map(|spec| {
            let source = spec.source.to_string();
            if !hooks.contains(&source) {
                return None;
            }
            let at = spec.handler.deciding_rule(event)?;
            Some((source, at))
        })
        .collect();
    Reached { hooks, rules }
}

/// For each hook file that loaded, the hooks no test ran and the rules no
/// test made decide.
fn coverage(
    engines: &HashMap<Option<PathBuf>, Result<HookEngine, String>>,
    ran: &HashMap<Option<PathBuf>, Reached>,
) -> Vec<Coverage> {
    let mut all: Vec<Coverage> = engines
        .iter()
        .filter_map(|(file, engine)| {
            let engine = engine.as_ref().ok()?;
            let seen = ran.get(file);
            let hooks = engine.hooks();
            let not_run = hooks
                .iter()
                .filter(|spec| seen.is_none_or(|s| !s.hooks.contains(&spec.source.to_string())))
                .map(|spec| (spec.id.to_string(), spec.source.to_string()))
                .collect();
            let rules_never_decided = hooks
                .iter()
                .flat_map(|spec| {
                    let source = spec.source.to_string();
                    spec.handler
                        .rules()
                        .into_iter()
                        .enumerate()
                        .filter(|(at, _)| {
                            seen.is_none_or(|s| !s.rules.contains(&(source.clone(), *at)))
                        })
                        .map(|(_, rule)| (spec.id.to_string(), rule))
                        .collect::<Vec<_>>()
                })
                .collect();
            Some(Coverage {
                hooks: file
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |f| f.display().to_string()),
                total: hooks.len(),
                not_run,
                rules_never_decided,
            })
        })
        .collect();
    all.sort_by(|a, b| a.hooks.cmp(&b.hooks));
    all
}

/// Why the test cannot show anything of the hook file: no hook of it is
/// on the event (a fixture that passes then would pass with any file).
fn nothing_on_the_event(explanation: &Explanation) -> Option<String> {
    // Each hook's part that does not fit the event, when it is the event
    // (left-out hooks too: one on another event would not run either).
    let off_the_event = |fate: &Fate| match fate {
        Fate::Skipped {
            because: Misfit::Event,
            detail,
        }
        | Fate::LeftOut {
            because: Some(Misfit::Event),
            detail: Some(detail),
            ..
        } => Some(detail.clone()),
        _ => None,
    };
    let mut details = explanation
        .hooks
        .iter()
        .map(|h| off_the_event(&h.fate))
        .collect::<Option<Vec<String>>>()?;
    details.sort_unstable();
    details.dedup();
    let on = if details.is_empty() {
        "it has no hooks".to_owned()
    } else {
        format!("its hooks: {}", details.join("; "))
    };
    Some(format!(
        "no hook of this file is on {} ({on}): the test would pass or fail whatever the hooks do",
        explanation.event
    ))
}

/// What a test that names `hook` got wrong: it did not run, or another
/// hook decided. An error when no hook has that name.
fn named_hook(explanation: &Explanation, hook: &str) -> Result<Option<Mismatch>, String> {
    let Some(found) = explanation.hooks.iter().find(|h| h.hook.as_str() == hook) else {
        let names: Vec<&str> = explanation.hooks.iter().map(|h| h.hook.as_str()).collect();
        return Err(format!(
            "no hook named `{hook}` in this file (its hooks: {})",
            names.join(", ")
        ));
    };
    let mismatch = |got: String| Mismatch {
        field: "hook".to_owned(),
        expected: format!("`{hook}` runs, and no other hook decides"),
        got,
    };
    let got = match &found.fate {
        Fate::Ran { .. } => match &explanation.outcome.decided_by {
            Some(by) if by.as_str() != hook => format!("`{by}` decided"),
            _ => return Ok(None),
        },
        Fate::NotReached => "it was not reached: a hook before it decided".to_owned(),
        Fate::Skipped { detail, .. } => format!("it did not run: {detail}"),
        Fate::LeftOut { why, .. } => format!("it was left out: {why}"),
    };
    Ok(Some(mismatch(got)))
}

fn broken(file: &Path, name: String, error: String) -> Ran {
    Ran {
        file: file.to_owned(),
        name,
        passed: false,
        mismatches: Vec::new(),
        error: Some(error),
    }
}

fn human(summary: &Summary) -> String {
    let mut out = String::new();
    for t in &summary.tests {
        let status = if t.passed { "ok  " } else { "FAIL" };
        let _ = writeln!(out, "{status} {}: {}", t.file.display(), t.name);
        if let Some(error) = &t.error {
            let _ = writeln!(out, "     error: {error}");
        }
        for m in &t.mismatches {
            let _ = writeln!(out, "     {}", m.field);
            let _ = writeln!(out, "       - expected: {}", m.expected);
            let _ = writeln!(out, "       + got:      {}", m.got);
        }
    }
    for c in summary.coverage.iter().flatten() {
        let _ = writeln!(
            out,
            "coverage: {}: {} of {} hooks ran",
            c.hooks,
            c.total - c.not_run.len(),
            c.total
        );
        for (hook, source) in &c.not_run {
            let _ = writeln!(out, "     not run by any test: {hook} ({source})");
        }
        for (hook, rule) in &c.rules_never_decided {
            let _ = writeln!(out, "     {hook}: {rule} decided no test");
        }
    }
    let total = summary.passed + summary.failed;
    let _ = writeln!(
        out,
        "{total} test{}: {} passed, {} failed",
        if total == 1 { "" } else { "s" },
        summary.passed,
        summary.failed
    );
    out
}
