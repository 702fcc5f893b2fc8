//! The command handler: hooks that are programs, run as Claude Code runs
//! them.
//!
//! [`CommandHook`] runs `command` under `sh -c` (or `args` directly, without
//! a shell) in the hook's `working_dir` or the event's `cwd`, in a process
//! group of its own, with the event JSON on stdin and the event's fields in
//! `<PREFIX>_*` environment variables (plus `CLAUDE_PROJECT_DIR`);
//! `{{…}}` templates in the command are filled in, shell-quoted. Stdout
//! and stderr are read while the program runs, each capped. When the
//! deadline passes the whole group is killed and reaped; when the program
//! exits, what it left running in its group is killed too, so no orphan
//! outlives a hook (use `async: true` for slow work). What the exit status
//! and output mean is `answer`'s business.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use wasm_hooks_core::{
    Event, Handler, HandlerFuture, HookError, HookId, HookOutput, HookResult, Reply, plain_text,
};

use super::answer;
use super::defaults::CommandDefaults;
use super::kind::{
    BuildContext, Built, HookKind, HookProblem, refuse_code_loading, string_list, string_map,
};
use super::runs::Runs;
use super::setup::SetupError;
use crate::RequestEnv;
use crate::template::Template;

/// What runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A command line for `sh -c`.
    Shell(String),
    /// A program and its arguments, run without a shell.
    Argv(Vec<String>),
}

/// The shell that runs a [`Program::Shell`] line (Claude Code's `shell`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    /// `sh -c` (the default).
    #[default]
    Sh,
    /// `bash -c`.
    Bash,
    /// `pwsh -NoProfile -NonInteractive -Command` (PowerShell 7, where it
    /// is installed); no `{{…}}` templates, which are quoted for POSIX
    /// shells.
    #[serde(alias = "pwsh")]
    Powershell,
}

impl Shell {
    /// The program and the arguments before the line.
    fn argv(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Shell::Sh => ("sh", &["-c"]),
            Shell::Bash => ("bash", &["-c"]),
            Shell::Powershell => ("pwsh", &["-NoProfile", "-NonInteractive", "-Command"]),
        }
    }
}

/// A command hook: a [`Handler`] that runs a program per event.
#[derive(Debug, Clone)]
pub struct CommandHook {
    program: Program,
    shell: Shell,
    compiled: Compiled,
    working_dir: Option<PathBuf>,
    env: Vec<(String, String)>,
    timeout_ms: u64,
    max_output: usize,
    env_prefix: Arc<str>,
    /// The request's own variables (a daemon's caller's), over the
    /// process's environment.
    request_env: RequestEnv,
    /// The event variables its command or scripts name: one of them left
    /// out (over [`MAX_VARIABLE_BYTES`]) fails it closed.
    variables_read: Vec<String>,
    /// The project the engine answers for: `CLAUDE_PROJECT_DIR` (as
    /// Claude Code sets it: the project's root, not the `cwd`, which
    /// follows the agent's `cd`).
    project: Option<PathBuf>,
    /// Whether it runs from the project's root (a project's own hook:
    /// what trust pinned is what its relative paths name there), not from
    /// the event's `cwd`.
    runs_from_project: bool,
}

/// The program with its templates compiled.
#[derive(Debug, Clone)]
enum Compiled {
    Shell(Template),
    Argv(Vec<Template>),
}

/// How long readers may take to see the end of output after the process
/// group is gone (only a process that left the group can hold a pipe open).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

impl CommandHook {
    /// A hook running `program` with these defaults; `timeout_ms`,
    /// `working_dir` and `env` as the hook entry gives them. Templates
    /// (`{{tool_args.file_path}}`, …) in the command or arguments are
    /// compiled now; in a shell command every value is shell-quoted.
    ///
    /// # Errors
    /// When a template names nothing known.
    pub fn new(
        program: Program,
        working_dir: Option<PathBuf>,
        env: Vec<(String, String)>,
        timeout_ms: Option<u64>,
        defaults: &CommandDefaults,
    ) -> Result<Self, SetupError> {
        let reparsed = match &program {
            Program::Shell(line) => {
                crate::shell::check_quoting(line)?;
                crate::shell::templates::reread_in_line(line)
            }
            Program::Argv(argv) => crate::shell::templates::reread_in_argv(argv),
        };
        if let Some(by) = reparsed {
            return Err(SetupError::ReparsedTemplate { by });
        }
        let compiled = match &program {
            Program::Shell(line) => Compiled::Shell(Template::parse(line)?),
            Program::Argv(argv) => Compiled::Argv(
                argv.iter()
                    .map(|a| Template::parse(a))
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Self {
            program,
            shell: Shell::default(),
            compiled,
            working_dir,
            env,
            timeout_ms: timeout_ms.unwrap_or(defaults.timeout_ms),
            max_output: usize::try_from(defaults.max_output_kb.saturating_mul(1024))
                .unwrap_or(usize::MAX),
            env_prefix: Arc::from(defaults.env_prefix.as_str()),
            request_env: RequestEnv::default(),
            variables_read: Vec::new(),
            project: None,
            runs_from_project: false,
        })
    }

    /// This hook, answering for `project` (its `CLAUDE_PROJECT_DIR`),
    /// and run from there when `runs_from_project` (a project's own
    /// hook, whose scripts trust pinned as found from the project's root:
    /// an agent that `cd`s into a folder holding a script of the same
    /// name does not swap it).
    pub fn in_project(mut self, project: PathBuf, runs_from_project: bool) -> Self {
        self.project = Some(project);
        self.runs_from_project = runs_from_project;
        self
    }

    /// This hook, started with the request's own variables.
    pub fn with_request_env(mut self, env: RequestEnv) -> Self {
        self.request_env = env;
        self
    }

    /// This hook, told which event variables it reads (`$WASM_HOOKS_TOOL_ARGS`
    /// in its command or its scripts): an event that leaves one of them out
    /// for size fails it closed instead of letting it see an empty value.
    #[must_use]
    pub fn reading_variables(mut self, names: Vec<String>) -> Self {
        self.variables_read = names;
        self
    }

    /// The event variables named in `texts` (a command line, its scripts).
    fn variables_named<'t>(&self, texts: impl IntoIterator<Item = &'t str>) -> Vec<String> {
        let pattern = format!(r"\b{}_[A-Z_]+\b", regex::escape(&self.env_prefix));
        let Ok(named) = wasm_hooks_core::compile_regex(&pattern) else {
            return Vec::new();
        };
        let mut found: Vec<String> = texts
            .into_iter()
            .flat_map(|text| {
                named
                    .find_iter(text)
                    .map(|m| m.as_str().to_owned())
                    .collect::<Vec<_>>()
            })
            .collect();
        found.sort();
        found.dedup();
        found
    }

    /// The record fields its templates read (see [`Template::fields_read`]).
    pub(crate) fn fields_read(&self) -> Vec<String> {
        match &self.compiled {
            Compiled::Shell(line) => line.fields_read().collect(),
            Compiled::Argv(argv) => argv.iter().flat_map(Template::fields_read).collect(),
        }
    }

    /// This hook, its command line run by `shell`.
    ///
    /// # Errors
    /// PowerShell with `{{…}}` templates, whose values are quoted for POSIX
    /// shells only.
    pub fn with_shell(mut self, shell: Shell) -> Result<Self, SetupError> {
        if shell == Shell::Powershell
            && matches!(&self.compiled, Compiled::Shell(line) if line.has_values())
        {
            return Err(SetupError::ShellTemplates);
        }
        self.shell = shell;
        Ok(self)
    }

    fn command(&self, event: &Event, variables: Vec<(String, String)>) -> Command {
        let mut cmd = match &self.compiled {
            Compiled::Shell(line) => {
                let (program, before) = self.shell.argv();
                let mut cmd = Command::new(program);
                cmd.args(before).arg(line.render_quoted(event));
                cmd
            }
            Compiled::Argv(argv) => {
                let mut words = argv.iter().map(|a| a.render(event));
                let mut cmd = Command::new(words.next().unwrap_or_default());
                cmd.args(words);
                cmd
            }
        };
        // A relative `working_dir` is relative to where the hook runs from
        // (the event's cwd, or a project's hook's project); a missing
        // directory falls back to this process's own.
        let base = match (&self.project, self.runs_from_project) {
            (Some(project), true) => Some(project.clone()),
            _ => event.cwd().map(PathBuf::from),
        };
        let dir = match (&self.working_dir, base) {
            (Some(dir), Some(project)) if dir.is_relative() => Some(project.join(dir)),
            (Some(dir), _) => Some(dir.clone()),
            (None, project) => project,
        }
        .filter(|d| d.is_dir());
        if let Some(dir) = dir {
            cmd.current_dir(dir);
        }
        self.request_env.apply(&mut cmd);
        cmd.envs(variables)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        cmd
    }

    fn program_name(&self) -> String {
        match &self.program {
            Program::Shell(line) => line.clone(),
            Program::Argv(argv) => argv[0].clone(),
        }
    }

    async fn call(&self, hook: &HookId, event: &Event) -> Reply {
        let early = |error: HookError| Reply {
            result: Err(error),
            output: HookOutput::default(),
        };
        let variables = event_variables(&self.env_prefix, event, self.project.as_deref());
        let omitted = format!("{}_OMITTED", self.env_prefix);
        let cut = variables
            .iter()
            .find(|(name, _)| *name == omitted)
            .and_then(|(_, names)| {
                names
                    .split(',')
                    .find(|name| self.variables_read.iter().any(|read| read == name))
            });
        if let Some(variable) = cut {
            return early(HookError::VariableTooLarge {
                hook: hook.clone(),
                variable: variable.to_owned(),
            });
        }
        let mut child = match self.command(event, variables).spawn() {
            Ok(child) => child,
            Err(e) => return early(self.spawn_error(hook, &e)),
        };
        let mut group = GroupKiller(child.id().and_then(|id| i32::try_from(id).ok()));
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return early(HookError::Failed {
                hook: hook.clone(),
                message: "the hook's standard streams could not be opened".into(),
            });
        };
        let payload = event.to_json_string();
        // A hook that does not read its stdin closes the pipe: not an error.
        let feeder = tokio::spawn(async move {
            let _ = stdin.write_all(payload.as_bytes()).await;
        });
        let out = tokio::spawn(read_capped(stdout, self.max_output));
        let err = tokio::spawn(read_capped(stderr, self.max_output));

        let waited =
            tokio::time::timeout(Duration::from_millis(self.timeout_ms), child.wait()).await;
        group.kill();
        let timed_out = waited.is_err();
        let status = match waited {
            Ok(status) => status,
            Err(_) => child.wait().await,
        };
        feeder.abort();
        let (stdout, out_cut) = finish(out).await;
        let (stderr, err_cut) = finish(err).await;
        let output = HookOutput {
            stdout,
            stderr,
            logs: Vec::new(),
            truncated: out_cut || err_cut,
        };
        let result = match status {
            _ if timed_out => Err(HookError::Timeout {
                hook: hook.clone(),
                limit_ms: self.timeout_ms,
            }),
            Err(e) => Err(HookError::Failed {
                hook: hook.clone(),
                message: format!("waiting for the hook: {e}"),
            }),
            Ok(status) => self.interpret(hook, event, status, &output),
        };
        Reply { result, output }
    }

    /// Why the program could not be started.
    fn spawn_error(&self, hook: &HookId, e: &std::io::Error) -> HookError {
        let (hook, command) = (hook.clone(), self.program_name());
        if e.raw_os_error() == Some(libc::E2BIG) {
            return HookError::ArgumentsTooLarge { hook, command };
        }
        match e.kind() {
            std::io::ErrorKind::NotFound => HookError::CommandNotFound { hook, command },
            std::io::ErrorKind::PermissionDenied => HookError::NotExecutable { hook, command },
            _ => HookError::Failed {
                message: format!("cannot start `{command}`: {e}"),
                hook,
            },
        }
    }

    fn interpret(
        &self,
        hook: &HookId,
        event: &Event,
        status: std::process::ExitStatus,
        output: &HookOutput,
    ) -> Result<HookResult, HookError> {
        let hook = hook.clone();
        match status.code() {
            Some(0) => answer::on_success(event.name(), &output.stdout).map_err(|message| {
                HookError::BadResult {
                    hook,
                    message: message.to_string(),
                }
            }),
            Some(2) => Ok(answer::on_block(&output.stderr)),
            Some(127) if matches!(self.program, Program::Shell(_)) => {
                Err(HookError::CommandNotFound {
                    hook,
                    command: self.program_name(),
                })
            }
            Some(126) if matches!(self.program, Program::Shell(_)) => {
                Err(HookError::NotExecutable {
                    hook,
                    command: self.program_name(),
                })
            }
            Some(code) => Err(HookError::ExitCode {
                hook,
                code,
                stderr: last_line(&output.stderr),
            }),
            None => Err(HookError::Signal {
                hook,
                signal: status.signal().unwrap_or_default(),
            }),
        }
    }
}

impl Handler for CommandHook {
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        Box::pin(self.call(hook, event))
    }

    fn details(&self) -> Vec<String> {
        let mut details = vec![match &self.program {
            Program::Shell(line) => format!("command ({}): {line}", self.shell.argv().0),
            Program::Argv(argv) => format!("command (no shell): {}", argv.join(" ")),
        }];
        if let Some(dir) = &self.working_dir {
            details.push(format!("runs in {}", dir.display()));
        }
        if !self.env.is_empty() {
            let names: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
            details.push(format!("sets variables: {}", names.join(", ")));
        }
        details.push(format!("timeout {} ms", self.timeout_ms));
        details
    }
}

/// The process group of a running hook, killed when it is dropped: an
/// event's deadline that drops the hook mid-wait leaves none of its
/// processes behind.
struct GroupKiller(Option<i32>);

impl GroupKiller {
    /// Kill every process left in the hook's group (none, usually), once:
    /// after that the group's id may name another group.
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take().filter(|g| *g > 0) {
            // SAFETY: kill(2) with a negative pid signals the process group
            // we created for this hook; it touches no memory of ours.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Read a stream to its end, keeping the first `cap` bytes and discarding
/// the rest (so the writer never blocks on a full pipe).
async fn read_capped(mut stream: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
                truncated |= n > room;
            }
        }
    }
    (kept, truncated)
}

async fn finish(reader: tokio::task::JoinHandle<(Vec<u8>, bool)>) -> (String, bool) {
    let abort = reader.abort_handle();
    match tokio::time::timeout(DRAIN_GRACE, reader).await {
        Ok(Ok((bytes, cut))) => (String::from_utf8_lossy(&bytes).into_owned(), cut),
        _ => {
            abort.abort();
            (String::new(), true)
        }
    }
}

fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_owned()
}

/// The largest value put in one event variable. Linux refuses to start a
/// program with any one environment string over 128 KiB (`E2BIG`), and an
/// event is whatever the agent sends: above this, a variable is left out
/// (and named in `<PREFIX>_OMITTED`), so that no event can keep a guard
/// from starting. The whole event is always on stdin.
const MAX_VARIABLE_BYTES: usize = 32 * 1024;

/// The event's fields as `<PREFIX>_*` variables, and `CLAUDE_PROJECT_DIR`;
/// those over [`MAX_VARIABLE_BYTES`] are named in `<PREFIX>_OMITTED`
/// instead.
fn event_variables(prefix: &str, event: &Event, project: Option<&Path>) -> Vec<(String, String)> {
    let record = event.record();
    let text = |field: &str| record.get(field).map(|v| plain_text(v).into_owned());
    let json = |field: &str| record.get(field).map(Value::to_string);
    let cwd = event.cwd().map(str::to_owned);
    let mut vars = vec![
        ("EVENT", Some(event.name().as_str().to_owned())),
        ("SESSION_ID", Some(event.session_id().to_owned())),
        ("WORKING_DIR", cwd.clone()),
        ("TOOL_NAME", text("tool_name")),
        ("TOOL_ARGS", json("tool_input")),
        ("TOOL_RESULT", json("tool_response")),
        ("LLM_MODEL", text("model")),
        ("LLM_TOKENS", text("tokens")),
        ("PERM_LEVEL", text("permission_level")),
        ("PERM_RULE", text("permission_rule")),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((format!("{prefix}_{name}"), value?)))
    .collect::<Vec<_>>();
    let project = project.map(|dir| dir.display().to_string()).or(cwd);
    vars.extend(project.map(|dir| ("CLAUDE_PROJECT_DIR".to_owned(), dir)));
    let omitted: Vec<String> = vars
        .iter()
        .filter(|(_, value)| value.len() > MAX_VARIABLE_BYTES)
        .map(|(name, _)| name.clone())
        .collect();
    if !omitted.is_empty() {
        vars.retain(|(_, value)| value.len() <= MAX_VARIABLE_BYTES);
        vars.push((format!("{prefix}_OMITTED"), omitted.join(",")));
    }
    vars
}

/// The `command` kind; an entry with a `command` and no `type` is one too.
pub(crate) struct CommandKind;

/// A command hook's own fields.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct CommandEntry {
    /// A line run by `sh -c`.
    #[schemars(with = "Option<String>")]
    command: Option<Value>,
    /// A program and its arguments, run directly.
    #[schemars(with = "Option<Vec<String>>")]
    args: Option<Value>,
    /// Where it runs.
    #[schemars(with = "Option<String>")]
    working_dir: Option<Value>,
    /// Extra environment variables.
    #[schemars(with = "Option<std::collections::BTreeMap<String, String>>")]
    env: Option<Value>,
    /// The shell for `command`: `sh` (default), `bash` or `powershell`.
    shell: Option<Shell>,
}

impl HookKind for CommandKind {
    const TYPES: &'static [&'static str] = &["command"];
    const IMPLIED_BY: Option<&'static str> = Some("command");
    type Entry = CommandEntry;

    fn build(entry: CommandEntry, cx: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        let program = match (&entry.command, &entry.args) {
            (Some(_), Some(_)) => {
                return Err(
                    "give `command` (run by sh -c) or `args` (run directly), not both".into(),
                );
            }
            (Some(Value::String(line)), None) if !line.trim().is_empty() => {
                Program::Shell(line.clone())
            }
            (Some(_), None) => {
                return Err("`command` must be a non-empty string, run by `sh -c`".into());
            }
            (None, Some(Value::Array(items))) if !items.is_empty() => {
                Program::Argv(string_list(entry.args.as_ref(), "args")?)
            }
            (None, Some(_)) => {
                return Err(
                    "`args` must be a non-empty list of strings: the program, then its arguments"
                        .into(),
                );
            }
            (None, None) => {
                return Err(
                    "a command hook needs `command` (run by sh -c) or `args` (run directly)".into(),
                );
            }
        };
        let working_dir = match &entry.working_dir {
            None => None,
            Some(Value::String(dir)) => Some(PathBuf::from(dir)),
            Some(_) => return Err("`working_dir` must be a string".into()),
        };
        let env = string_map(entry.env.as_ref(), "env")?;
        refuse_code_loading(&env, "env", cx.is_project())?;
        let default_name = match &program {
            Program::Shell(line) => line.clone(),
            Program::Argv(argv) => argv.join(" "),
        };
        let identity = serde_json::json!({
            "command": entry.command,
            "args": entry.args,
            "working_dir": entry.working_dir,
            "env": entry.env,
            "shell": entry.shell.map(|s| s.argv().0),
            "timeout_ms": cx.timeout_ms,
        });
        if entry.shell.is_some() && matches!(program, Program::Argv(_)) {
            return Err("`shell` runs `command`; `args` run without a shell".into());
        }
        let project = &cx.settings.wasm.project_dir;
        let runs_from = project.join(working_dir.as_deref().unwrap_or(Path::new("")));
        let runs = match &program {
            Program::Shell(line) => Runs::of_shell(line, &runs_from, project, &env),
            Program::Argv(argv) => Runs::of_argv(argv, &runs_from, project, &env),
        };
        let hook = CommandHook::new(
            program,
            working_dir,
            env,
            cx.timeout_ms,
            &cx.settings.commands,
        )?
        .with_shell(entry.shell.unwrap_or_default())?
        .with_request_env(cx.settings.env.clone())
        .in_project(project.clone(), cx.is_project());
        // What it runs, as text: the command, then the scripts followed.
        let texts =
            std::iter::once(default_name.as_str()).chain(runs.texts.iter().map(String::as_str));
        let read = hook.variables_named(texts);
        let hook = hook.reading_variables(read);
        let reads = hook.fields_read();
        let mut built = Built::new(Arc::new(hook), default_name, identity)
            .executing(runs.files.into_iter().collect());
        built.reads = reads;
        built.unpinned = runs.unpinned;
        Ok(built)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn event_fields_become_prefixed_variables() {
        let event =
            Event::post_tool_use("Write", json!({"file_path": "a.rs"}), json!({"ok": true}))
                .with("session_id", "s1")
                .with("cwd", "/project");
        let vars: std::collections::HashMap<_, _> =
            event_variables("FORGE", &event, None).into_iter().collect();
        assert_eq!(vars["FORGE_EVENT"], "PostToolUse");
        assert_eq!(vars["FORGE_SESSION_ID"], "s1");
        assert_eq!(vars["FORGE_WORKING_DIR"], "/project");
        assert_eq!(vars["FORGE_TOOL_NAME"], "Write");
        assert_eq!(vars["FORGE_TOOL_ARGS"], r#"{"file_path":"a.rs"}"#);
        assert_eq!(vars["FORGE_TOOL_RESULT"], r#"{"ok":true}"#);
        assert_eq!(vars["CLAUDE_PROJECT_DIR"], "/project");
        let in_sub = event.with("cwd", "/project/sub");
        let vars: std::collections::HashMap<_, _> =
            event_variables("FORGE", &in_sub, Some(Path::new("/project")))
                .into_iter()
                .collect();
        assert_eq!(
            (
                vars["CLAUDE_PROJECT_DIR"].as_str(),
                vars["FORGE_WORKING_DIR"].as_str()
            ),
            ("/project", "/project/sub"),
            "the project's root, as Claude Code sets it, not the cwd"
        );
        assert!(
            !vars.contains_key("FORGE_LLM_MODEL"),
            "absent fields set no variable"
        );
    }

    #[test]
    fn h5_an_event_too_large_for_the_environment_leaves_those_variables_out() {
        let huge = format!("rm -rf ~ #{}", "x".repeat(140 * 1024));
        let event = Event::pre_tool_use("Bash", json!({"command": huge}));
        let vars: std::collections::HashMap<_, _> = event_variables("WASM_HOOKS", &event, None)
            .into_iter()
            .collect();
        assert!(!vars.contains_key("WASM_HOOKS_TOOL_ARGS"));
        assert_eq!(vars["WASM_HOOKS_OMITTED"], "WASM_HOOKS_TOOL_ARGS");
        assert_eq!(vars["WASM_HOOKS_TOOL_NAME"], "Bash");
    }
}
