//! The compile cache (hits, damaged entries, concurrent writers and their
//! lock, the `compile` command, `--no-cache`), the two compilers (Winch's
//! code answering until Cranelift's replaces it, in a process and in a
//! long-lived host), plugin integrity (`sha256`) and hot reload, with real
//! components and real cache files.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::json;
use support::plugin;
use wasm_hooks::{Compiler, Event, HookEngine, Tiering, Verdict, WasmRuntime};

/// A runtime that compiles with Cranelift at load, into the cache in
/// `dir` (the cache's own mechanics, one compiler).
fn runtime_with_cache(dir: &Path) -> WasmRuntime {
    WasmRuntime::builder()
        .cache_dir(dir)
        .tiering(Tiering::Off)
        .build()
        .unwrap()
}

/// The compiled entries of the cache in `dir` (not its digest records,
/// nor its entries' lock files and checked marks).
fn entries_in(dir: &Path) -> Vec<PathBuf> {
    let digests = dir.join("digests");
    files_in(dir)
        .into_iter()
        .filter(|f| {
            !f.starts_with(&digests) && f.extension().is_none_or(|e| e != "lock" && e != "checked")
        })
        .collect()
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_in(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_second_runtime_loads_the_plugin_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let first = runtime_with_cache(cache.path())
        .load(&plugin("deny-dangerous-commands"))
        .unwrap();
    assert!(!first.from_cache());
    let runtime = runtime_with_cache(cache.path());
    let entry = runtime.cache_entry(&first.sha256()).unwrap();
    assert_eq!(
        entries_in(cache.path()),
        std::slice::from_ref(&entry),
        "one entry, nothing else"
    );
    assert!(entry.starts_with(cache.path()));
    let second = runtime.load(&plugin("deny-dangerous-commands")).unwrap();
    assert!(second.from_cache());
    assert_eq!(second.sha256(), first.sha256());
}

#[test]
fn a_known_plugin_file_is_not_read_again_and_a_changed_one_always_is() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.wasm");
    std::fs::copy(plugin("deny-dangerous-commands"), &path).unwrap();
    // A file is recorded only once it has been left alone for a second.
    std::thread::sleep(Duration::from_millis(1100));
    let deny = runtime_with_cache(cache.path())
        .load(&path)
        .unwrap()
        .sha256();
    let records = files_in(&cache.path().join("digests"));
    assert_eq!(records.len(), 1, "{records:?}");
    let record = std::fs::read_to_string(&records[0]).unwrap();
    let lines: Vec<&str> = record.lines().collect();
    assert!(lines[0].ends_with(&deny), "{record}");
    assert_eq!(
        lines[1],
        path.to_str().unwrap(),
        "the record names its file"
    );

    // A later load trusts the record (like a cache entry: it is this
    // user's own): pointed at another cached plugin, it is used without
    // reading the file.
    let other = runtime_with_cache(cache.path())
        .load(&plugin("protect-paths"))
        .unwrap()
        .sha256();
    std::fs::write(&records[0], record.replace(&deny, &other)).unwrap();
    let trusted = runtime_with_cache(cache.path()).load(&path).unwrap();
    assert_eq!((trusted.sha256(), trusted.from_cache()), (other, true));
    // A record others may write is not trusted: the file is read.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&records[0], std::fs::Permissions::from_mode(0o666)).unwrap();
    let untrusted = runtime_with_cache(cache.path()).load(&path).unwrap();
    assert_eq!(untrusted.sha256(), deny);

    // Any write moves the file's change time, so the record stops
    // matching and the file is read again, even with the same bytes.
    std::fs::copy(plugin("deny-dangerous-commands"), &path).unwrap();
    let reread = runtime_with_cache(cache.path()).load(&path).unwrap();
    assert_eq!(reread.sha256(), deny);
}

#[test]
fn cache_prune_removes_only_what_this_build_cannot_use() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (kept, gone) = (dir.path().join("kept.wasm"), dir.path().join("gone.wasm"));
    std::fs::copy(plugin("deny-dangerous-commands"), &kept).unwrap();
    std::fs::copy(plugin("protect-paths"), &gone).unwrap();
    // Files are recorded once they have been left alone for a second.
    std::thread::sleep(Duration::from_millis(1100));
    let runtime = runtime_with_cache(cache.path());
    runtime.load(&kept).unwrap();
    runtime.load(&gone).unwrap();
    std::fs::remove_file(&gone).unwrap();
    // Another wasmtime build's directory, and a write that never finished.
    let other = cache.path().join("0123456789abcdef");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("x.cwasm"), b"old").unwrap();
    let abandoned = cache.path().join("digests/.tmpXYZ");
    std::fs::write(&abandoned, b"half").unwrap();
    let two_hours_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
    std::fs::File::options()
        .write(true)
        .open(&abandoned)
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();
    let in_flight = cache.path().join("digests/.tmpNOW");
    std::fs::write(&in_flight, b"being written").unwrap();

    let survey = runtime.survey_cache().unwrap().unwrap();
    assert_eq!(survey.entries, 2);
    assert_eq!(survey.other_engines, std::slice::from_ref(&other));
    assert_eq!((survey.records, survey.stale_records.len()), (2, 1));
    assert_eq!(
        survey.temporary,
        std::slice::from_ref(&abandoned),
        "a fresh one is a write in progress"
    );
    let out = stdout_of(["cache", "--cache-dir", cache.path().to_str().unwrap()]);
    assert!(out.contains("this build: 2 compiled plugins"), "{out}");
    assert!(out.contains("digest records: 2, of which 1 stale"), "{out}");

    let out = stdout_of([
        "cache",
        "--prune",
        "--cache-dir",
        cache.path().to_str().unwrap(),
    ]);
    assert!(
        out.contains("other builds: 1 directory, 0.0 MB (removed)"),
        "{out}"
    );
    assert!(!other.exists() && !abandoned.exists() && in_flight.exists());
    let after = runtime.survey_cache().unwrap().unwrap();
    assert!(after.is_clean(), "{after:?}");
    assert_eq!((after.entries, after.records), (2, 1));
    assert!(
        runtime_with_cache(cache.path())
            .load(&kept)
            .unwrap()
            .from_cache()
    );
}

#[test]
fn corrupt_or_foreign_entries_are_recompiled_and_replaced() {
    let cache = tempfile::tempdir().unwrap();
    let path = plugin("deny-dangerous-commands");
    let sha256 = runtime_with_cache(cache.path())
        .load(&path)
        .unwrap()
        .sha256();
    let entry = runtime_with_cache(cache.path())
        .cache_entry(&sha256)
        .unwrap();
    let good = std::fs::read(&entry).unwrap();

    // A flipped byte, a cut-off file, and bytes with a valid checksum that
    // are not wasmtime's: each is recompiled, and the entry made good again.
    let mut flipped = good.clone();
    flipped[good.len() / 3] ^= 0xff;
    let forged_artifact = b"not compiled code";
    let mut forged = forged_artifact.to_vec();
    forged.extend_from_slice(b"WHCACHE2");
    forged.extend_from_slice(&(forged_artifact.len() as u64).to_le_bytes());
    forged.extend_from_slice(&crc32(forged_artifact).to_le_bytes());
    for damaged in [flipped, good[..good.len() / 2].to_vec(), forged] {
        std::fs::write(&entry, &damaged).unwrap();
        let plugin = runtime_with_cache(cache.path()).load(&path).unwrap();
        assert!(!plugin.from_cache(), "a damaged entry is not trusted");
        assert!(
            runtime_with_cache(cache.path())
                .load(&path)
                .unwrap()
                .from_cache()
        );
    }
}

/// CRC-32 (IEEE) of `bytes`, bit by bit: an independent implementation.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn concurrent_first_loads_all_succeed_and_leave_one_whole_entry() {
    let cache = tempfile::tempdir().unwrap();
    let path = plugin("hostile-snoop");
    let loads: Vec<_> = (0..4)
        .map(|_| {
            let (dir, path) = (cache.path().to_owned(), path.clone());
            std::thread::spawn(move || runtime_with_cache(&dir).load(&path).map(|p| p.sha256()))
        })
        .collect();
    for load in loads {
        load.join().unwrap().unwrap();
    }
    let entries = entries_in(cache.path());
    assert_eq!(entries.len(), 1, "no temporary files left: {entries:?}");
    assert!(
        runtime_with_cache(cache.path())
            .load(&path)
            .unwrap()
            .from_cache()
    );
}

fn wasm_hooks() -> Command {
    Command::cargo_bin("wasm-hooks").unwrap()
}

/// The stdout of `wasm-hooks` run with these arguments, which must succeed.
fn stdout_of<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> String {
    let out = wasm_hooks()
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn compile_warms_the_cache_that_run_then_uses() {
    let cache = tempfile::tempdir().unwrap();
    let path = plugin("deny-dangerous-commands");
    let compile = [
        "compile".as_ref(),
        "--cache-dir".as_ref(),
        cache.path().as_os_str(),
        path.as_os_str(),
    ];
    let out = stdout_of(compile);
    assert!(out.contains(": compiled\n"), "{out}");
    assert!(stdout_of(compile).contains("already cached"));

    let file = support::hook_file("PreToolUse", "Bash", &path, json!({}));
    let event = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}"#;
    let listed = stdout_of([
        "list".as_ref(),
        "--cache-dir".as_ref(),
        cache.path().as_os_str(),
        "-c".as_ref(),
        file.path.as_os_str(),
    ]);
    assert!(
        listed.contains("from the compile cache") && listed.contains("grants: nothing"),
        "{listed}"
    );
    wasm_hooks()
        .args(["hook", "--cache-dir"])
        .arg(cache.path())
        .arg("-c")
        .arg(&file.path)
        .write_stdin(event)
        .assert()
        .success()
        .stdout(predicates::str::contains("\"permissionDecision\":\"deny\""));
}

#[test]
fn compile_refuses_what_is_not_a_plugin() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("bogus.wasm");
    std::fs::write(&bogus, "not wasm").unwrap();
    wasm_hooks()
        .args(["compile", "--cache-dir"])
        .arg(cache.path())
        .arg(&bogus)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "bogus.wasm: is not a WebAssembly file",
        ));
    assert!(files_in(cache.path()).is_empty());
}

#[test]
fn no_cache_writes_nothing() {
    let cache = tempfile::tempdir().unwrap();
    let file = support::hook_file(
        "PreToolUse",
        "Bash",
        &plugin("deny-dangerous-commands"),
        json!({}),
    );
    let listed = wasm_hooks()
        .env("WASM_HOOKS_CACHE_DIR", cache.path())
        .env_remove("RUST_LOG")
        .args(["list", "-v", "--no-cache", "-c"])
        .arg(&file.path)
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(
        String::from_utf8(listed.stdout)
            .unwrap()
            .contains(", compiled by winch)")
    );
    let said = String::from_utf8(listed.stderr).unwrap();
    assert!(
        said.contains("wasm runtime: on-demand allocation"),
        "{said}"
    );
    assert!(files_in(cache.path()).is_empty());
    wasm_hooks()
        .env("WASM_HOOKS_CACHE_DIR", cache.path())
        .args(["list", "-c"])
        .arg(&file.path)
        .assert()
        .success();
    assert!(
        !entries_in(cache.path()).is_empty(),
        "the variable names the default"
    );
}

#[test]
fn a_pinned_sha256_must_match() {
    let path = plugin("deny-dangerous-commands");
    let runtime = WasmRuntime::builder().no_cache().build().unwrap();
    let actual = runtime.load(&path).unwrap().sha256();
    assert_eq!(actual.len(), 64);
    runtime
        .load_pinned(&path, Some(&actual.to_uppercase()))
        .unwrap();
    let wrong = "0".repeat(64);
    let err = runtime
        .load_pinned(&path, Some(&wrong))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("deny_dangerous_commands.wasm")
            && err.contains(&format!("expects {wrong}"))
            && err.contains(&format!("the file is {actual}")),
        "{err}"
    );
    let file = support::hook_file("PreToolUse", "Bash", &path, json!({"sha256": "abc"}));
    let err = HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`sha256` must be the plugin's sha256"),
        "{err}"
    );
}

/// Copy `package`'s component over `to` the way a build would: a new file
/// renamed into place.
fn install(package: &str, to: &Path) {
    let staged = to.with_extension("staged");
    std::fs::copy(plugin(package), &staged).unwrap();
    std::fs::rename(&staged, to).unwrap();
}

fn bash(command: &str) -> Event {
    Event::pre_tool_use("Bash", json!({ "command": command }))
}

#[tokio::test]
async fn a_changed_plugin_is_swapped_in_and_a_pinned_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.wasm");
    install("deny-dangerous-commands", &live);
    let runtime = WasmRuntime::builder().no_cache().build().unwrap();
    let file = support::hook_file("PreToolUse", "Bash", &live, json!({}));
    let engine = support::engine_on(runtime.clone(), &file);
    let pinned = runtime
        .load_pinned(&live, Some(&runtime.load(&live).unwrap().sha256()))
        .unwrap();
    assert!(matches!(
        engine.dispatch(bash("rm -rf /")).await.verdict,
        Verdict::Deny { .. }
    ));
    assert_eq!(runtime.reload_changed(), 0, "nothing changed yet");
    install("deny-dangerous-commands", &live);
    assert_eq!(
        runtime.reload_changed(),
        0,
        "the same bytes again: touched, not changed"
    );

    install("hostile-snoop", &live);
    let err = pinned.reload_if_changed().unwrap_err().to_string();
    assert!(err.contains("sha256 mismatch"), "{err}");
    assert_eq!(runtime.reload_changed(), 1, "the unpinned plugin reloads");
    let outcome = engine.dispatch(bash("rm -rf /")).await;
    assert_eq!(outcome.verdict, Verdict::Proceed, "{outcome:#?}");
    assert!(outcome.contexts[0].value.text.contains("read_passwd"));

    // A broken file keeps the working version.
    std::fs::write(&live, "half a build").unwrap();
    assert_eq!(runtime.reload_changed(), 0);
    assert_eq!(engine.dispatch(bash("ls")).await.verdict, Verdict::Proceed);
}

#[tokio::test]
async fn the_watcher_reloads_without_being_asked() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.wasm");
    install("deny-dangerous-commands", &live);
    let runtime = WasmRuntime::builder()
        .no_cache()
        .hot_reload(Duration::from_millis(20))
        .build()
        .unwrap();
    let file = support::hook_file("PreToolUse", "Bash", &live, json!({}));
    let engine = support::engine_on(runtime, &file);
    assert!(matches!(
        engine.dispatch(bash("rm -rf /")).await.verdict,
        Verdict::Deny { .. }
    ));
    install("hostile-snoop", &live);
    // Not a timing assertion: a bound on how long to wait for it at all.
    let give_up = Instant::now() + Duration::from_secs(30);
    loop {
        let verdict = engine.dispatch(bash("rm -rf /")).await.verdict;
        if verdict == Verdict::Proceed {
            break;
        }
        assert!(Instant::now() < give_up, "never reloaded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_projects_plugin_is_not_hot_reloaded_into_bytes_its_grants_were_not_weighed_for() {
    // Trusted (here: trust_all) with these bytes and its grants; other
    // bytes must be weighed again (they untrust the project), not swapped
    // in under the old grants.
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.wasm");
    install("deny-dangerous-commands", &live);
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "wasm", "plugin": live, "allow_read": ["/etc"]}]}]}});
    std::fs::create_dir_all(dir.path().join(".wasm-hooks")).unwrap();
    std::fs::write(dir.path().join(".wasm-hooks/hooks.json"), hooks.to_string()).unwrap();
    let runtime = WasmRuntime::builder().no_cache().build().unwrap();
    let engine = HookEngine::builder()
        .project_dir(dir.path())
        .untrusted_projects(wasm_hooks::UntrustedProjects::TrustAll)
        .managed_dir(None)
        .runtime(runtime.clone())
        .build()
        .unwrap();
    assert!(matches!(
        engine.dispatch(bash("rm -rf /")).await.verdict,
        Verdict::Deny { .. }
    ));
    install("hostile-snoop", &live);
    assert_eq!(
        runtime.reload_changed(),
        0,
        "a project's plugin is not watched"
    );
    assert!(matches!(
        engine.dispatch(bash("rm -rf /")).await.verdict,
        Verdict::Deny { .. }
    ));
}

/// A plugin the cache does not hold answers at once on Winch's code; a
/// thread compiles it with Cranelift, caches that and swaps it in, and the
/// answers stay the same. The cache keeps each compiler's artifacts apart,
/// and Winch's, once superseded, is pruned.
#[tokio::test]
async fn a_plugin_the_cache_lacks_answers_on_winchs_code_until_cranelifts_replaces_it() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = WasmRuntime::builder()
        .cache_dir(cache.path())
        .tiering(Tiering::Background)
        .build()
        .unwrap();
    let path = plugin("deny-dangerous-commands");
    let file = support::hook_file("PreToolUse", "Bash", &path, json!({}));
    let plugin = runtime.load(&path).unwrap();
    assert_eq!(
        plugin.compiler(),
        Compiler::Winch,
        "answers before Cranelift"
    );
    let engine = support::engine_on(runtime.clone(), &file);
    let on_winch = engine.dispatch(bash("rm -rf /")).await;
    assert!(
        matches!(on_winch.verdict, Verdict::Deny { .. }),
        "{on_winch:?}"
    );

    let entry = runtime.cache_entry(&plugin.sha256()).unwrap();
    wait_for("cranelift's code to be swapped in", || {
        plugin.compiler() == Compiler::Cranelift
    });
    assert!(entry.is_file(), "cached for the next process too");
    assert!(
        entry
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("cranelift-"),
        "{}",
        entry.display()
    );
    let on_cranelift = engine.dispatch(bash("rm -rf /")).await;
    assert_eq!(
        on_cranelift.verdict, on_winch.verdict,
        "the same component, the same answer"
    );
    assert_eq!(engine.dispatch(bash("ls")).await.verdict, Verdict::Proceed);

    let survey = runtime.survey_cache().unwrap().unwrap();
    assert_eq!(survey.superseded.len(), 1, "{survey:?}");
    assert!(
        survey.superseded[0]
            .parent()
            .unwrap()
            .to_string_lossy()
            .contains("winch-"),
        "{survey:?}"
    );
    survey.prune().unwrap();
    let after = runtime.survey_cache().unwrap().unwrap();
    assert!(after.is_clean() && after.entries == 1, "{after:?}");
    let next = WasmRuntime::builder()
        .cache_dir(cache.path())
        .build()
        .unwrap()
        .load(&path)
        .unwrap();
    assert_eq!(
        (next.compiler(), next.from_cache()),
        (Compiler::Cranelift, true)
    );
}

/// Wait (up to ten minutes: a compile of a Python component on a busy
/// two-core machine, while the guest-language tests build beside it, took
/// 3.5 minutes) until `done`.
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(600);
    while !done() {
        assert!(Instant::now() < until, "waited ten minutes for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Two processes never compile the same plugin with the same compiler at
/// once: a `compile` that finds the entry's lock held waits for it, and
/// then takes what the holder left in the cache instead of compiling
/// again.
#[test]
fn a_compile_waits_for_the_one_under_way_and_takes_its_entry() {
    let cache = tempfile::tempdir().unwrap();
    let path = plugin("deny-dangerous-commands");
    let sha256 = WasmRuntime::builder()
        .no_cache()
        .build()
        .unwrap()
        .load(&path)
        .unwrap()
        .sha256();
    let entry = runtime_with_cache(cache.path())
        .cache_entry(&sha256)
        .unwrap();
    std::fs::create_dir_all(entry.parent().unwrap()).unwrap();
    let lock = std::fs::File::create(format!("{}.lock", entry.display())).unwrap();
    lock.lock().unwrap();

    let mut waiting = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .arg("compile")
        .arg("--cache-dir")
        .arg(cache.path())
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "it waits while the lock is held"
    );
    assert!(!entry.exists());
    // The holder's compile, finished: made elsewhere, renamed into place.
    let elsewhere = tempfile::tempdir().unwrap();
    runtime_with_cache(elsewhere.path()).load(&path).unwrap();
    let made = runtime_with_cache(elsewhere.path())
        .cache_entry(&sha256)
        .unwrap();
    std::fs::copy(&made, &entry).unwrap();
    drop(lock);
    let out = waiting.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(said.contains("already cached"), "{said}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("compiling"),
        "it compiled nothing: {out:?}"
    );
}

/// The event of a `hook` process with a fresh cache is answered on Winch's
/// code while a detached `compile --background` compiles the plugin with
/// Cranelift; that compile outlives the process, even one its deadline
/// cuts short, and the next event loads Cranelift's code from the cache.
#[test]
fn a_hooks_compile_outlives_its_process_even_one_cut_by_the_deadline() {
    let plugin = crate::built_examples::built_example("conventional-commits-py");
    let cache = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let file = support::hook_file(
        "PreToolUse",
        "Bash",
        &plugin,
        json!({"on_failure": "block"}),
    );
    let event = json!({
        "session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "cwd": project.path(),
        "tool_input": {"command": "git commit -m 'fixed the parser'"},
    })
    .to_string();
    let hook = |deadline: &str| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
        command
            .args(["-vv", "hook", "--deadline", deadline, "--cache-dir"])
            .arg(cache.path())
            .arg("-c")
            .arg(&file.path)
            .env("WASM_HOOKS_DAEMON", "off")
            .env_remove("RUST_LOG");
        support::output_fed(&mut command, &event)
    };
    let sha256 = wasm_hooks_wasm::PluginInfo::read(&plugin).unwrap().sha256;
    let entry = runtime_with_cache(cache.path())
        .cache_entry(&sha256)
        .unwrap();

    // Cut by a one-second deadline while Winch compiles (seconds for a
    // Python component): blocked, the hooks' failure.
    let cut = hook("1");
    assert_eq!(cut.status.code(), Some(2), "blocked: {cut:?}");
    assert!(
        String::from_utf8_lossy(&cut.stderr).contains("no answer within the deadline of 1 s"),
        "{cut:?}"
    );
    // Cranelift's compile goes on in its own process, and lands.
    wait_for("the background compile's cache entry", || entry.is_file());

    let warm = hook("50");
    let said = String::from_utf8_lossy(&warm.stderr);
    assert!(
        said.contains("from_cache=true compiler=cranelift"),
        "{said}"
    );
    assert!(
        String::from_utf8_lossy(&warm.stdout).contains("Conventional Commits"),
        "the plugin answered: {warm:?}"
    );
}
