//! Python and JavaScript plugins (#19): `wasm-hooks new --lang python|js`,
//! each SDK's native tests (unittest with `wasm_hooks.testing`, `node
//! --test` with `wasm_hooks/testing.js`), `wasm-hooks build`
//! (componentize-py and componentize-js, installed once into the cache
//! directory), and the built components answering through `wasm-hooks
//! test` and `run` — for a scaffold of each language and the example
//! plugins `conventional-commits-py`, `destructive-sql-py` (with sqlparse
//! from PyPI) and `new-dependencies-js` (with shell-quote from npm).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wasm_hooks(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .current_dir(dir)
        .args(args)
        .env("WASM_HOOKS_CACHE_DIR", support::toolchain_cache())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap()
}

fn succeeded(what: &str, out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed: {text}");
    text
}

/// `wasm-hooks build` in `dir`: what it printed. Builds run at once, as
/// a person's may: the first installs the toolchain while the others wait
/// for it, and the same sources are built once.
fn build(dir: &Path) -> String {
    succeeded("wasm-hooks build", &wasm_hooks(dir, &["build"]))
}

/// The plugin's native tests, with the SDK at `sdk` (none: its own copy).
fn unittest(dir: &Path, sdk: Option<&Path>) -> String {
    let mut command = Command::new("python3");
    command.current_dir(dir).args(["-m", "unittest", "-v"]);
    if let Some(sdk) = sdk {
        command.env("PYTHONPATH", sdk);
    }
    succeeded("python3 -m unittest", &command.output().unwrap())
}

/// The README's way to native tests with dependencies from PyPI: a venv
/// in `dir`, `pip install -e .`, then unittest in it (with the SDK at
/// `sdk`, else the plugin's own copy): what they said.
fn unittest_in_a_venv(dir: &Path, sdk: Option<&Path>) -> String {
    let run = |program: &str, args: &[&str]| {
        let mut command = Command::new(program);
        command.current_dir(dir).args(args);
        if let Some(sdk) = sdk {
            command.env("PYTHONPATH", sdk);
        }
        succeeded(
            &format!("{program} {}", args.join(" ")),
            &command.output().unwrap(),
        )
    };
    run("python3", &["-m", "venv", ".venv"]);
    let quiet = ["--quiet", "--disable-pip-version-check"];
    run(
        ".venv/bin/pip",
        &[&["install", "-e", "."][..], &quiet].concat(),
    );
    run(".venv/bin/python", &["-m", "unittest"])
}

/// The plugin's native tests under node's test runner.
fn node_test(dir: &Path) -> String {
    let out = Command::new("node")
        .current_dir(dir)
        .arg("--test")
        .output()
        .unwrap();
    succeeded("node --test", &out)
}

/// A new plugin in `lang`, named `no-sudo`: its folder.
fn scaffold(parent: &Path, lang: &str) -> PathBuf {
    let dir = parent.join("no-sudo");
    let args = [
        "new",
        "--lang",
        lang,
        "no-sudo",
        "--dir",
        dir.to_str().unwrap(),
    ];
    succeeded("new", &wasm_hooks(parent, &args));
    dir
}

/// `run` of a PreToolUse Bash `command` through the hook file in `dir`.
fn run_bash(dir: &Path, command: &str) -> Output {
    let input = serde_json::json!({ "command": command }).to_string();
    let args = [
        "run",
        "-c",
        "hooks.json",
        "--event",
        "PreToolUse",
        "--tool",
        "Bash",
    ];
    let mut all = args.to_vec();
    all.extend(["--input", &input]);
    wasm_hooks(dir, &all)
}

/// The scaffold's hook, built, passes the fixtures every language shares
/// and denies `sudo` through `run`.
fn builds_and_decides(dir: &Path) {
    let built = build(dir);
    assert!(built.contains("build/no_sudo.wasm"), "{built}");
    assert!(built.contains("world:  wasm-hooks:hook@0.2.0"), "{built}");
    assert!(built.contains("config: checked at load"), "{built}");
    let valid = succeeded(
        "wasm-hooks validate --deny-warnings",
        &wasm_hooks(dir, &["validate", "--deny-warnings", "hooks.json"]),
    );
    assert!(valid.contains("ok: 1 hook in 1 file"), "{valid}");
    let tested = succeeded("wasm-hooks test", &wasm_hooks(dir, &["test"]));
    assert!(tested.contains("3 tests: 3 passed, 0 failed"), "{tested}");
    let ran = run_bash(dir, "sudo shutdown now");
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");
    assert!(String::from_utf8_lossy(&ran.stdout).contains("`sudo` is not allowed"));
}

#[test]
fn a_python_plugin_from_new_passes_its_native_tests_builds_and_decides() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "python");
    let native = unittest(&dir, None);
    assert!(native.contains("Ran 2 tests"), "{native}");
    builds_and_decides(&dir);
}

/// Two builds of the same sources at once (two checkouts, two agents'
/// sessions): one builds, the other waits for it and takes its component
/// (the same bytes, so the same sha256 for a lock or trust); neither
/// installs the toolchain a second time.
#[test]
fn two_builds_of_the_same_sources_at_once_build_them_once() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "python");
    // Sources no run built before (the build cache outlives the test).
    let word = parent.path().file_name().unwrap().to_string_lossy();
    let app = dir.join("app.py");
    let text = std::fs::read_to_string(&app).unwrap();
    std::fs::write(&app, format!("{text}\nBUILT_FOR = {word:?}\n")).unwrap();
    let twin = tempfile::tempdir().unwrap();
    let copy = Command::new("cp")
        .arg("-r")
        .arg(&dir)
        .arg(twin.path())
        .status()
        .unwrap();
    assert!(copy.success());
    let other = twin.path().join("no-sudo");
    let said: Vec<String> = std::thread::scope(|s| {
        let builds = [&dir, &other].map(|d| s.spawn(move || build(d)));
        builds.map(|b| b.join().unwrap()).to_vec()
    });
    let waited = said.iter().filter(|s| s.contains("built before")).count();
    assert_eq!(waited, 1, "one builds, the other takes it: {said:#?}");
    let component = |d: &Path| std::fs::read(d.join("build/no_sudo.wasm")).unwrap();
    assert!(component(&dir) == component(&other), "the same component");
}

#[test]
fn a_js_plugin_from_new_passes_its_native_tests_builds_and_decides() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "js");
    let native = node_test(&dir);
    assert!(native.contains("# pass 2"), "{native}");
    builds_and_decides(&dir);
}

/// `npm ARGS` in `dir`: what it said.
fn npm(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("npm")
        .current_dir(dir)
        .args(args)
        .args(["--no-audit", "--no-fund"])
        .output()
        .unwrap();
    succeeded(&format!("npm {}", args.join(" ")), &out)
}

/// A TypeScript plugin from `new`, outside this checkout, with an npm
/// dependency (`shell-quote`, which calls `Math.random()` when imported:
/// the build seeds it): `npm install`, `npm test` (strict `tsc`, then
/// `node --test` on TypeScript), `build` bundles it, and the fixtures,
/// `validate --deny-warnings` and `run` pass on the component.
#[test]
fn a_typescript_plugin_with_an_npm_dependency_installs_tests_builds_and_decides() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "ts");
    npm(&dir, &["install"]);
    let native = npm(&dir, &["test"]);
    assert!(native.contains("# pass 2"), "{native}");
    builds_and_decides(&dir);
    // Quoting does not hide a word from a parser (`shell-quote`).
    let ran = run_bash(&dir, "'sudo' ls");
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");
}

/// A Python plugin's dependencies come from PyPI, as its `pyproject.toml`
/// names them (`bashlex`, a pure-Python shell parser: a quoted `'sudo'`
/// is still the word sudo), and the README's `pip install -e .` gives the
/// native tests the same; a package the machine has installed but the
/// plugin does not declare is not bundled (the build fails naming it,
/// where it used to bundle it silently); a package with native code is
/// refused by name.
#[test]
fn a_python_plugin_bundles_its_pypi_dependencies_and_nothing_else_from_the_machine() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "python");
    let app = dir.join("app.py");
    let text = std::fs::read_to_string(&app).unwrap();
    let parsed = text
        .replace("from wasm_hooks import", "import bashlex\nfrom wasm_hooks import")
        .replace(
            r#"words = event.tool_input.get("command", "").split()"#,
            r#"words = [p.word for p in bashlex.parse(event.tool_input.get("command", ""))[0].parts if p.kind == "word"]"#,
        );
    std::fs::write(&app, &parsed).unwrap();
    let manifest = dir.join("pyproject.toml");
    let declared = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("dependencies = []", "dependencies = [\"bashlex\"]");
    std::fs::write(&manifest, &declared).unwrap();
    // The README's steps: the native tests in a venv with the dependency
    // (`sudo rm -rf build` is parsed by bashlex there too).
    let native = unittest_in_a_venv(&dir, None);
    assert!(
        native.contains("Ran 2 tests") && native.contains("OK"),
        "{native}"
    );
    build(&dir);
    let tested = succeeded("wasm-hooks test", &wasm_hooks(&dir, &["test"]));
    assert!(tested.contains("3 tests: 3 passed, 0 failed"), "{tested}");
    let ran = run_bash(&dir, "'sudo' ls");
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");

    // A package only this machine has (in the user's site-packages, which
    // componentize-py would search on its own) is not bundled.
    let user_base = tempfile::tempdir().unwrap();
    let site = Command::new("python3")
        .args(["-c", "import site; print(site.getusersitepackages())"])
        .env("PYTHONUSERBASE", user_base.path())
        .output()
        .unwrap();
    let site = PathBuf::from(String::from_utf8_lossy(&site.stdout).trim());
    std::fs::create_dir_all(site.join("machine_only")).unwrap();
    std::fs::write(site.join("machine_only/__init__.py"), "WORD = 'sudo'\n").unwrap();
    std::fs::write(&app, format!("import machine_only\n{parsed}")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .current_dir(&dir)
        .arg("build")
        .env("WASM_HOOKS_CACHE_DIR", support::toolchain_cache())
        .env("PYTHONUSERBASE", user_base.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "bundled a package the machine has");
    assert!(
        said.contains("No module named 'machine_only'")
            && said.contains("`[project] dependencies`"),
        "{said}"
    );

    // A package with native code only.
    std::fs::write(&app, &parsed).unwrap();
    std::fs::write(
        &manifest,
        declared.replace("[\"bashlex\"]", "[\"bashlex\", \"pyyaml\"]"),
    )
    .unwrap();
    let out = wasm_hooks(&dir, &["build"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && said.contains(
                "pyproject.toml: `[project] dependencies`: `pyyaml`: no pure-Python wheel found on PyPI"
            ),
        "{said}"
    );
}

/// A JavaScript plugin's build cache is keyed by its bundle: a change to a
/// test file needs no new build for `test`, and is the same component
/// again (its sha256, pinned in locks and trust, stays); a change to a module it imports from outside its
/// folder builds it again (the sources' digest could not see one).
#[test]
fn a_js_build_is_built_again_for_what_it_imports_and_only_that() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "js");
    let sha = |dir: &Path| {
        use sha2::Digest as _;
        sha2::Sha256::digest(std::fs::read(dir.join("build/no_sudo.wasm")).unwrap())
    };
    build(&dir);
    let first = sha(&dir);
    let test = dir.join("app.test.js");
    let text = std::fs::read_to_string(&test).unwrap();
    std::fs::write(&test, text + "\n// another test, one day\n").unwrap();
    // Nor is the build older than the plugin for `test`.
    succeeded("wasm-hooks test", &wasm_hooks(&dir, &["test"]));
    let again = build(&dir);
    assert!(again.contains("built before"), "{again}");
    assert_eq!(sha(&dir), first, "a test file is not in the component");

    std::fs::write(
        parent.path().join("words.js"),
        "export const WORD = 'sudo';\n",
    )
    .unwrap();
    let app = dir.join("app.js");
    let text = std::fs::read_to_string(&app).unwrap();
    std::fs::write(
        &app,
        format!("import {{ WORD }} from '../words.js';\nglobalThis.word = WORD;\n{text}"),
    )
    .unwrap();
    build(&dir);
    let importing = sha(&dir);
    // A word no run built before (the build cache outlives the test).
    let word = parent.path().file_name().unwrap().to_string_lossy();
    std::fs::write(
        parent.path().join("words.js"),
        format!("export const WORD = '{word}';\n"),
    )
    .unwrap();
    let rebuilt = build(&dir);
    assert!(!rebuilt.contains("built before"), "{rebuilt}");
    assert_ne!(sha(&dir), importing);
}

/// Code run at import time (at build, before the snapshot) may ask for
/// random numbers and the time: the build works. What it got is the
/// snapshot's, the same on every instance; a hook method gets the real
/// `Math.random` back (two fresh instances, two values).
#[test]
fn randomness_and_the_clock_at_import_time_build_and_events_get_real_randomness() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "js");
    let app = dir.join("app.js");
    let text = std::fs::read_to_string(&app).unwrap();
    let text = format!("const AT_IMPORT = `${{Math.random()}} ${{Date.now()}}`;\n{text}").replace(
        "return Outcome.proceed();",
        "return Outcome.proceed().withContext(`${AT_IMPORT} | ${Math.random()}`);",
    );
    std::fs::write(&app, text).unwrap();
    build(&dir);
    let said = || {
        let out = run_bash(&dir, "ls");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text
            .lines()
            .find(|l| l.starts_with("context"))
            .unwrap_or_default();
        let (import, event) = line.split_once(" | ").unwrap_or_else(|| panic!("{text}"));
        (import.to_owned(), event.to_owned())
    };
    let (first_import, first_event) = said();
    let (second_import, second_event) = said();
    assert_eq!(
        first_import, second_import,
        "the snapshot's, on every instance"
    );
    assert_ne!(
        first_event, second_event,
        "the real Math.random in a hook method"
    );
}

/// A hook method declared `async` is refused at build, naming the file and
/// line; and a Promise answered at run time is a hook failure that says
/// why (not "returned object, not an Outcome").
#[test]
fn an_async_handler_is_refused_at_build_with_one_sentence_naming_its_line() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "js");
    let app = dir.join("app.js");
    let text = std::fs::read_to_string(&app).unwrap();
    std::fs::write(
        &app,
        text.replace("  preToolUse(event) {", "  async preToolUse(event) {"),
    )
    .unwrap();
    let out = wasm_hooks(&dir, &["build"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        said.contains("app.js:9: `preToolUse` is async: a hook answers at once"),
        "{said}"
    );
    let probe = "import { Hook, Outcome, Event } from './wasm_hooks/index.js';
class H extends Hook { preToolUse() { return Promise.resolve(Outcome.proceed()); } }
try { new H().dispatch(Event.fromRecord({hook_event_name: 'PreToolUse', tool_name: 'Bash'})); }
catch (e) { console.log(e.message); }";
    let out = Command::new("node")
        .current_dir(&dir)
        .args(["--input-type=module", "-e", probe])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("H.preToolUse is async (it returned a Promise)"),
        "{out:?}"
    );
}

/// `files` of the example plugin `name` copied into a temporary folder of
/// the same name: the folder (kept while the first lives).
fn example(name: &str, files: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let source = support::workspace_root().join("example-plugins").join(name);
    let copy = tempfile::tempdir().unwrap();
    let dir = copied(&source, copy.path(), files);
    (copy, dir)
}

/// `files` of the plugin folder `source` copied into a folder of the same
/// name under `parent` (the build writes beside them): that folder.
fn copied(source: &Path, parent: &Path, files: &[&str]) -> PathBuf {
    let dir = parent.join(source.file_name().unwrap());
    for file in files {
        let to = dir.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(source.join(file), to).unwrap();
    }
    dir
}

/// The hook file in `dir` with `from` replaced by `to` (a misspelt config
/// key), and the hook's failure when `command` runs: blocked (the hook
/// file says `on_failure: block`), with what the plugin raised.
fn misconfigured(dir: &Path, (from, to): (&str, &str), command: &str) -> String {
    let hooks = std::fs::read_to_string(dir.join("hooks.json")).unwrap();
    std::fs::write(dir.join("hooks.json"), hooks.replace(from, to)).unwrap();
    let ran = run_bash(dir, command);
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");
    String::from_utf8_lossy(&ran.stdout).into_owned()
}

#[test]
fn the_python_example_passes_its_native_and_policy_tests_and_fails_loudly() {
    let source = support::workspace_root().join("example-plugins/conventional-commits-py");
    let sdk = support::workspace_root().join("guest-sdk/python");
    let native = unittest(&source, Some(&sdk));
    assert!(native.contains("OK"), "{native}");
    // The example keeps no copy of the SDK: the build uses the one
    // `wasm-hooks` carries.
    let copy = tempfile::tempdir().unwrap();
    let files = ["app.py", "hooks.json", "fixtures/commits.yaml"];
    let dir = copied(&source, copy.path(), &files);
    build(&dir);
    let tested = succeeded("wasm-hooks test", &wasm_hooks(&dir, &["test"]));
    assert!(tested.contains("6 tests: 6 passed, 0 failed"), "{tested}");
    // A Python exception is a hook failure with its message: a misspelt
    // config key stops the commit instead of letting every message through.
    let said = misconfigured(
        &dir,
        ("max_subject", "max_subjet"),
        "git commit -m 'fix: x'",
    );
    assert!(
        said.contains("HookError: unknown config keys ['max_subjet']"),
        "{said}"
    );
    // With the example's config schema built in, the same mistake is
    // refused at load, at the hook file's line, with the near name.
    std::fs::copy(
        source.join("config.schema.json"),
        dir.join("config.schema.json"),
    )
    .unwrap();
    let built = build(&dir);
    assert!(
        built.contains("config: checked at load against config.schema.json"),
        "{built}"
    );
    let (code, said) = support::validate(&dir.join("hooks.json"));
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("hooks.json:10:")
            && said.contains(
                "`config.max_subjet`: unknown key `max_subjet` (did you mean `max_subject`?)"
            ),
        "{said}"
    );
    let shown = succeeded(
        "wasm-hooks inspect",
        &wasm_hooks(&dir, &["inspect", "build/conventional_commits_py.wasm"]),
    );
    assert!(
        shown.contains("config schema:") && shown.contains("\"require_scope\""),
        "{shown}"
    );
}

#[test]
fn the_js_example_passes_its_policy_and_native_tests_and_fails_loudly() {
    let files = [
        "app.js",
        "app.test.js",
        "package.json",
        "package-lock.json",
        "hooks.json",
        "fixtures/dependencies.yaml",
    ];
    let (_copy, dir) = example("new-dependencies-js", &files);
    // Its npm dependency (shell-quote) is not installed yet: the build
    // says so, and what to run.
    let out = wasm_hooks(&dir, &["build"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && said.contains("package.json: `shell-quote` is a dependency, but it is not installed in node_modules/: run `npm install` (or `npm ci`)"),
        "{said}"
    );
    support::npm_ci(&dir);
    // The example keeps no copy of the SDK: the build writes this one's.
    let built = build(&dir);
    assert!(built.contains("writing the SDK"), "{built}");
    let native = node_test(&dir);
    assert!(native.contains("# fail 0"), "{native}");
    let tested = succeeded("wasm-hooks test", &wasm_hooks(&dir, &["test"]));
    assert!(tested.contains("6 tests: 6 passed, 0 failed"), "{tested}");
    // A thrown error is a hook failure with its message.
    let said = misconfigured(&dir, ("\"allowed\":", "\"allow\":"), "npm install left-pad");
    assert!(
        said.contains("HookError: unknown config keys: allow"),
        "{said}"
    );
}

/// The example with a dependency from PyPI (sqlparse), outside this
/// checkout, as its README says: the native tests in a venv that `pip
/// install -e .` gave the dependency, then the build (which bundles it,
/// pinned) and the fixtures on the component.
#[test]
fn the_python_example_with_a_pypi_dependency_follows_its_readme() {
    let files = [
        "app.py",
        "test_app.py",
        "pyproject.toml",
        "hooks.json",
        "config.schema.json",
        "fixtures/sql.yaml",
    ];
    let (copy, dir) = example("destructive-sql-py", &files);
    let sdk = support::workspace_root().join("guest-sdk/python");
    let native = unittest_in_a_venv(&dir, Some(&sdk));
    assert!(
        native.contains("Ran 6 tests") && native.contains("OK"),
        "{native}"
    );
    // Sources of this run's own (another test builds the same example),
    // so pip runs and fetches the pinned version.
    let app = dir.join("app.py");
    let text = std::fs::read_to_string(&app).unwrap();
    let run = copy
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::fs::write(&app, format!("{text}\n# {run}\n")).unwrap();
    let built = build(&dir);
    assert!(
        built.contains("fetching sqlparse==0.6.1 from PyPI"),
        "{built}"
    );
    let tested = succeeded("wasm-hooks test", &wasm_hooks(&dir, &["test"]));
    assert!(tested.contains("6 tests: 6 passed, 0 failed"), "{tested}");
    let valid = wasm_hooks(&dir, &["validate", "--deny-warnings", "hooks.json"]);
    succeeded("wasm-hooks validate --deny-warnings", &valid);
}

/// Claude Code's Bash PreToolUse for `command`, from `dir`.
fn claude_bash(dir: &Path, command: &str) -> serde_json::Value {
    let mut event = support::fixture_of("2.1.330", "PreToolUse");
    event["tool_name"] = "Bash".into();
    event["tool_input"] = serde_json::json!({ "command": command });
    event["cwd"] = dir.to_str().unwrap().into();
    event
}

/// The `permissionDecision` the plugin folder's hook file gives `command`
/// through `wasm-hooks hook` (a command hook) and through `serve` (an HTTP
/// hook): both, which must agree.
fn decided_as_an_agent_would_ask(dir: &Path, command: &str) -> String {
    use std::io::{Read, Write};
    let event = claude_bash(dir, command);
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .current_dir(dir)
        .args(["hook", "--config", "hooks.json"])
        .env("WASM_HOOKS_CACHE_DIR", support::toolchain_cache())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let by_hook = answer["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
        .to_owned();
    let mut command = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
    command
        .current_dir(dir)
        .args(["serve", "--config", "hooks.json", "--no-token"])
        .args(["--listen", "127.0.0.1:0", "--project"])
        .arg(dir)
        .env("WASM_HOOKS_CACHE_DIR", support::toolchain_cache())
        .env("XDG_CONFIG_HOME", "/nonexistent");
    let serve = support::Served::start(command);
    let address = serve.host_port().to_owned();
    let body = event.to_string();
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    write!(
        stream,
        "POST /hook HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    drop(serve);
    let json = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    let answer: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    let by_serve = answer["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
        .to_owned();
    assert_eq!(by_hook, by_serve, "hook and serve disagree: {response}");
    by_hook
}

/// A Bash command and the `permissionDecision` it must get (`none`: no
/// opinion).
type Expected = (&'static str, &'static str);

#[test]
fn the_python_and_js_examples_decide_through_hook_and_serve() {
    let root = support::workspace_root().join("example-plugins");
    let copy = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &[Expected]); 3] = [
        (
            "conventional-commits-py",
            &["app.py", "hooks.json"],
            &[
                ("git commit -m 'Fixed it'", "deny"),
                ("git commit -m 'fix: it'", "none"),
            ],
        ),
        (
            "new-dependencies-js",
            &["app.js", "package.json", "package-lock.json", "hooks.json"],
            &[
                ("npm install left-pad", "ask"),
                ("pip install 'reqests'", "deny"),
                ("cargo add serde", "none"),
            ],
        ),
        (
            "destructive-sql-py",
            &[
                "app.py",
                "pyproject.toml",
                "hooks.json",
                "config.schema.json",
            ],
            &[
                ("psql -c 'SELECT 1; DROP TABLE users'", "deny"),
                ("psql -c \"SELECT 'DROP TABLE users'\"", "none"),
            ],
        ),
    ];
    for (example, files, decisions) in cases {
        let dir = copied(&root.join(example), copy.path(), files);
        if dir.join("package-lock.json").is_file() {
            support::npm_ci(&dir);
        }
        build(&dir);
        for (command, expected) in decisions {
            let decided = decided_as_an_agent_would_ask(&dir, command);
            assert_eq!(&decided, expected, "{example}: {command}");
        }
    }
}

/// Building someone's Python plugin runs nothing of theirs on this
/// machine (#42): a dependency that is a local path (or a URL, or a VCS
/// checkout) would be built by its own build backend, so it is refused,
/// unless the person passes `--allow-local-dependencies`, which says what
/// then runs.
#[test]
fn a_local_python_dependency_is_refused_before_its_build_backend_runs() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "python");
    let evil = dir.join("evilpkg");
    std::fs::create_dir_all(&evil).unwrap();
    let stolen = parent.path().join("stolen");
    std::fs::write(
        evil.join("setup.py"),
        format!(
            "open({:?}, 'w').write('the build backend ran')\nfrom setuptools import setup\nsetup(name='evilpkg', version='1')\n",
            stolen.display().to_string()
        ),
    )
    .unwrap();
    let manifest = dir.join("pyproject.toml");
    for dependency in [
        "./evilpkg",
        "evilpkg @ file:///tmp/evilpkg",
        "git+https://example.com/x.git",
    ] {
        let declared = std::fs::read_to_string(&manifest).unwrap().replace(
            "dependencies = []",
            &format!("dependencies = [{}]", serde_json::json!(dependency)),
        );
        let original = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, &declared).unwrap();
        let out = wasm_hooks(&dir, &["build"]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{dependency}: {said}");
        assert!(
            said.contains("pyproject.toml")
                && said.contains(dependency)
                && said.contains("--allow-local-dependencies"),
            "{dependency}: {said}"
        );
        std::fs::write(&manifest, original).unwrap();
    }
    assert!(!stolen.exists(), "nothing of the plugin's ran");
}

/// A Rust plugin with a build script of its own is said before it is
/// built: cargo runs it on this machine, with the person's rights.
#[test]
fn a_rust_plugins_build_script_is_said_before_it_runs() {
    let parent = tempfile::tempdir().unwrap();
    let dir = scaffold(parent.path(), "rust");
    std::fs::write(dir.join("build.rs"), "fn main() {}\n").unwrap();
    // A dependency cargo cannot find: it stops before compiling anything.
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace(
        "[dependencies]",
        "[dependencies]\nnot-here = { path = \"not-here\" }",
    );
    std::fs::write(&manifest, text).unwrap();
    let out = wasm_hooks(&dir, &["build"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("has a build script (build.rs)") && said.contains("with your rights"),
        "{said}"
    );
}
