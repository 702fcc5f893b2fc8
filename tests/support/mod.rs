//! Shared helpers for the integration tests: building the guest plugins for
//! wasm32-wasip2 (once per test binary, into `target/plugins` so the build
//! never waits on the lock of the `cargo test` running it) and writing hook
//! files into temporary directories.

pub mod http;
pub mod redis;
pub mod registry;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

/// Every guest crate the tests use, by package name.
const GUEST_PACKAGES: &[&str] = &[
    "deny-dangerous-commands",
    "protect-paths",
    "inject-project-context",
    "require-tests-before-stop",
    "rate-limit-tools",
    "redact-secrets",
    "hostile-spin",
    "hostile-grow-memory",
    "hostile-panic",
    "hostile-bad-answer",
    "hostile-other-world",
    "hostile-snoop",
    "hostile-recurse",
    "hostile-trap",
    "hostile-alloc-loop",
    "hostile-log-flood",
    "hostile-fd-hoard",
    "hostile-remember",
    "compat-sdk-0-1-plugin",
];

/// The tests' compile cache (`WASM_HOOKS_CACHE_DIR`), where `build` also
/// installs componentize-py and componentize-js and keeps Python and JS
/// builds: kept between runs, so each is downloaded once per machine, and
/// each component compiled ahead once (by the `build` that makes it).
/// Outside the checkout, in a folder of this user's own: wasm-hooks
/// honours the variable only for such a directory (a repository's own
/// folder must not hold the native code its hooks run).
///
/// Its builds are emptied once per test run, at first use: a build kept
/// from an earlier run would answer for one that no longer works.
pub fn toolchain_cache() -> PathBuf {
    static CACHE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CACHE
        .get_or_init(|| {
            use std::os::unix::fs::DirBuilderExt as _;
            let checkout =
                wasm_hooks_core::sha256_hex(workspace_root().as_os_str().as_encoded_bytes());
            let cache = std::env::temp_dir().join(format!("wasm-hooks-tests-{}", &checkout[..12]));
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&cache)
                .unwrap();
            let _ = std::fs::remove_dir_all(cache.join("builds"));
            cache
        })
        .clone()
}

/// A directory for a managed layer: one only root can write, under
/// `/etc/wasm-hooks` when the tests run as root (as in CI; root's own
/// folders elsewhere are no managed layer: a repository root cloned is
/// root's too), a plain temporary one otherwise (which wasm-hooks does not
/// take for the organisation's).
pub fn managed_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    // SAFETY: geteuid has no preconditions.
    let dir = if unsafe { libc::geteuid() } == 0 {
        std::fs::create_dir_all(wasm_hooks::MANAGED_DIR).unwrap();
        tempfile::tempdir_in(wasm_hooks::MANAGED_DIR).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("a host crate sits two levels below the workspace root")
        .to_owned()
}

/// A real Claude Code payload, from `tests/fixtures/claude-code-2.1.197/`
/// (captured from Claude Code 2.1.197).
pub fn fixture(name: &str) -> Value {
    fixture_of("2.1.197", name)
}

/// Every payload of Claude Code `version`, by name, sorted.
pub fn fixtures_of(version: &str) -> Vec<(String, Value)> {
    let dir = workspace_root().join(format!("tests/fixtures/claude-code-{version}"));
    let mut all: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            (stem, serde_json::from_str(&text).unwrap())
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// A real payload of Claude Code `version`, from
/// `tests/fixtures/claude-code-<version>/`.
pub fn fixture_of(version: &str, name: &str) -> Value {
    let path = workspace_root()
        .join(format!("tests/fixtures/claude-code-{version}"))
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The compiled component of guest package `package` (e.g. `hostile-spin`).
pub fn plugin(package: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(build_guests);
    let path = dir.join(format!("{}.wasm", package.replace('-', "_")));
    assert!(
        path.exists(),
        "no component for {package} at {}",
        path.display()
    );
    path
}

/// Cargo for a build the tests start themselves (guests, the MCP server,
/// a scaffolded plugin): without the clippy wrapper `scripts/test` lints
/// the host build with, so that these builds are the same whoever runs
/// the tests, and share `target/plugins` with a plain `cargo test`.
pub fn cargo() -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS");
    cmd
}

fn build_guests() -> PathBuf {
    let root = workspace_root();
    let target_dir = root.join("target").join("plugins");
    let mut cmd = cargo();
    cmd.current_dir(&root)
        .args(["build", "--release", "--target", "wasm32-wasip2", "--quiet"])
        .env("CARGO_TARGET_DIR", &target_dir);
    for p in GUEST_PACKAGES {
        cmd.args(["-p", p]);
    }
    let out = cmd
        .output()
        .expect("running cargo to build the guest plugins");
    assert!(
        out.status.success(),
        "building the guest plugins failed (is the wasm32-wasip2 target installed? \
         `rustup target add wasm32-wasip2`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target_dir.join("wasm32-wasip2").join("release")
}

/// The MCP server of `tests/mcp-server` (stdio), built once per test
/// binary for this machine into `target/plugins`, beside the guests.
pub fn mcp_server() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let target_dir = workspace_root().join("target").join("plugins");
            let out = cargo()
                .current_dir(workspace_root())
                .args([
                    "build",
                    "--release",
                    "--quiet",
                    "-p",
                    "hook-test-mcp-server",
                ])
                .env("CARGO_TARGET_DIR", &target_dir)
                .output()
                .expect("running cargo to build the test MCP server");
            assert!(
                out.status.success(),
                "building the test MCP server failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            target_dir.join("release").join("hook-test-mcp-server")
        })
        .clone()
}

/// `wasm-hooks validate --config <file>`: its exit code, and what it said
/// on stdout and stderr.
pub fn validate(file: &Path) -> (Option<i32>, String) {
    let out = assert_cmd::Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .args(["validate", "--config"])
        .arg(file)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    (out.status.code(), said.into_owned())
}

/// `wasm-hooks run` of a PreToolUse Bash `ls` through the hook file at
/// `file`, with no user settings.
pub fn run_bash_ls(file: &Path) -> std::process::Output {
    assert_cmd::Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .args(["run", "--event", "PreToolUse", "--tool", "Bash"])
        .args(["--input", r#"{"command": "ls"}"#, "--config"])
        .arg(file)
        .output()
        .unwrap()
}

/// A JSON file's value.
pub fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A hook file in a fresh temporary directory.
pub struct HookFile {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

/// A hook file with one group on `event` running `plugin` with this hook
/// entry's extra fields (`config`, `limits`, `on_failure`…).
pub fn hook_file(event: &str, matcher: &str, plugin: &Path, extra: Value) -> HookFile {
    let mut entry = json!({"type": "wasm", "plugin": plugin});
    if let (Value::Object(e), Value::Object(x)) = (&mut entry, extra) {
        e.extend(x);
    }
    write_hook_file(&json!({"hooks": {event: [{"matcher": matcher, "hooks": [entry]}]}}))
}

/// An engine reading `file`, running its wasm hooks on `runtime`.
pub fn engine_on(runtime: wasm_hooks::WasmRuntime, file: &HookFile) -> wasm_hooks::HookEngine {
    wasm_hooks::HookEngine::builder()
        .hook_file(&file.path)
        .runtime(runtime)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// An engine of one PreToolUse hook: `entry` with `extra`'s fields over
/// it, which may send the key in the variable `secret` (a model hook's).
pub fn engine_of_one_hook(mut entry: Value, extra: &Value, secret: &str) -> wasm_hooks::HookEngine {
    entry
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let file = write_hook_file(&serde_json::json!({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}));
    wasm_hooks::HookEngine::builder()
        .hook_file(&file.path)
        .hook_secrets([secret.to_owned()])
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A hook file with exactly this JSON.
pub fn write_hook_file(doc: &Value) -> HookFile {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("hooks.json");
    std::fs::write(&path, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
    HookFile { dir, path }
}

/// A running `wasm-hooks serve` child process, killed when dropped, and
/// the address it announced (`http://127.0.0.1:PORT` or `unix:PATH`).
pub struct Served {
    pub child: std::process::Child,
    pub address: String,
}

impl Served {
    /// Start `command` (a `wasm-hooks serve …`, its stdout left to this)
    /// and read where it listens from its first line.
    pub fn start(mut command: Command) -> Self {
        use std::io::BufRead;
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_owned();
        Served { child, address }
    }

    /// The `HOST:PORT` of a TCP server.
    pub fn host_port(&self) -> &str {
        self.address.strip_prefix("http://").unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A project whose command hook (which runs a program, so only while the
/// project is trusted) blocks commands that mention `make`.
pub fn project_blocking_make() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".wasm-hooks")).unwrap();
    std::fs::write(
        project.path().join(".wasm-hooks/hooks.json"),
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "name": "no-make",
            "command": "grep -q make && echo '{\"decision\": \"block\", \"reason\": \"no make\"}' || true"}]}]}})
        .to_string(),
    )
    .unwrap();
    project
}

/// Start `command` with its stdin, stdout and stderr piped, and feed it
/// `stdin` (closed after).
pub fn spawn_fed(command: &mut std::process::Command, stdin: &str) -> std::process::Child {
    use std::io::Write as _;
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child
}

/// [`spawn_fed`], waited for.
pub fn output_fed(command: &mut std::process::Command, stdin: &str) -> std::process::Output {
    spawn_fed(command, stdin).wait_with_output().unwrap()
}

/// `npm ci` in `dir` (a plugin with a `package-lock.json`): its npm
/// dependencies installed as locked.
pub fn npm_ci(dir: &Path) {
    let out = Command::new("npm")
        .current_dir(dir)
        .args(["ci", "--no-audit", "--no-fund"])
        .output()
        .unwrap();
    assert!(out.status.success(), "npm ci in {}: {out:?}", dir.display());
}
