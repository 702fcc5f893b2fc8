//! Plugins from an OCI registry (#32): `publish` (signed cosign's way),
//! `add` / `pull` / `update` and `wasm-hooks.lock`, a teammate's clone
//! whose first event pulls what the lock pins, and every way a registry, a
//! lock or a signature can be wrong — against a real CNCF distribution
//! registry on 127.0.0.1, with `skopeo` and `openssl` as independent
//! clients.

use crate::support::{self, registry::Registry};

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use wasm_hooks_core::sha256_hex;

/// One person: a home of their own (config, plugin store, trust), and
/// the tests' compile cache, or one of their own on a new machine.
struct Person {
    home: tempfile::TempDir,
    own_cache: bool,
}

impl Person {
    fn new() -> Self {
        let person = Self {
            home: tempfile::tempdir().unwrap(),
            own_cache: false,
        };
        std::fs::create_dir_all(person.config_dir()).unwrap();
        person
    }

    /// A person on a machine where nothing was compiled yet: a compile
    /// cache of their own, empty.
    fn on_a_new_machine() -> Self {
        Self {
            own_cache: true,
            ..Self::new()
        }
    }

    /// Their compile cache.
    fn compile_cache(&self) -> PathBuf {
        if self.own_cache {
            self.home.path().join(".cache/wasm-hooks")
        } else {
            support::toolchain_cache()
        }
    }

    fn config_dir(&self) -> PathBuf {
        self.home.path().join(".config/wasm-hooks")
    }

    /// Their settings file (`config.yaml`).
    fn settings(&self, yaml: &str) {
        std::fs::write(self.config_dir().join("config.yaml"), yaml).unwrap();
    }

    /// Trust `key` (a public key file) as a signer of plugins.
    fn trusts_signer(&self, key: &Path) {
        self.settings(&format!("plugin_signers: [{}]\n", key.display()));
    }

    /// Their plugin store.
    fn store(&self) -> PathBuf {
        self.home.path().join(".cache/wasm-hooks/plugins")
    }

    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
        command
            .current_dir(dir)
            .args(args)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("XDG_CACHE_HOME", self.home.path().join(".cache"))
            .env("XDG_STATE_HOME", self.home.path().join(".state"))
            .env("WASM_HOOKS_CACHE_DIR", self.compile_cache())
            .env("WASM_HOOKS_DAEMON", "off")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("WASM_HOOKS_PLUGIN_STORE")
            .env_remove("CLAUDE_PROJECT_DIR");
        command
    }

    fn run(&self, dir: &Path, args: &[&str]) -> Output {
        self.command(dir, args).output().unwrap()
    }

    /// `wasm-hooks hook` in `dir` with `event`.
    fn hook(&self, dir: &Path, event: &Value) -> Output {
        fed(self.command(dir, &["hook"]), event.to_string().as_bytes())
    }
}

/// What `command` does with `input` on its stdin.
fn fed(mut command: Command, input: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ok(what: &str, out: Output) -> String {
    assert!(out.status.success(), "{what} failed: {}", text(&out));
    text(&out)
}

fn failed(what: &str, out: Output) -> String {
    assert!(
        !out.status.success(),
        "{what} should have failed: {}",
        text(&out)
    );
    text(&out)
}

/// `wasm-hooks add REFERENCE` in a project of its own, which must fail:
/// what it said.
fn add_fails(reference: &str) -> String {
    let project = project(&[]);
    failed(
        "add",
        Person::new().run(project.path(), &["add", reference]),
    )
}

/// A Bash PreToolUse event in `dir`.
fn bash(dir: &Path, command: &str) -> Value {
    json!({
        "session_id": "s1",
        "transcript_path": "/dev/null",
        "cwd": dir,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    })
}

/// What the answer to a PreToolUse decided: `deny`, `ask`, or `allow`
/// for no decision; and its reason.
fn decision(out: &Output) -> (String, String) {
    let answer: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("not JSON: {}", text(out)));
    let specific = &answer["hookSpecificOutput"];
    (
        specific["permissionDecision"]
            .as_str()
            .unwrap_or("allow")
            .to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// A key pair made by `keygen` in `dir`: (private, public).
fn keygen(person: &Person, dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    ok("keygen", person.run(dir, &["keygen", name]));
    (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.pub")),
    )
}

/// `publish WASM REF [--key KEY]`: the manifest digest it printed.
fn publish(person: &Person, wasm: &Path, reference: &str, key: Option<&Path>) -> String {
    let mut args = vec!["publish", wasm.to_str().unwrap(), reference];
    if let Some(key) = key {
        args.extend(["--key", key.to_str().unwrap()]);
    }
    let printed = ok("publish", person.run(Path::new("/"), &args));
    printed
        .lines()
        .find_map(|l| l.trim().strip_prefix("digest:"))
        .expect("publish prints the digest")
        .trim()
        .to_owned()
}

/// A project (a git repository) whose hook file puts each `(plugin,
/// config)` on PreToolUse `Bash`, failing closed.
fn project(plugins: &[(&str, Value)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let hooks: Vec<Value> = plugins
        .iter()
        .map(|(plugin, config)| {
            json!({"type": "wasm", "plugin": plugin, "config": config, "on_failure": "block"})
        })
        .collect();
    write_hooks(
        dir.path(),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}),
    );
    git(dir.path(), &["init", "-q", "."]);
    dir
}

fn write_hooks(dir: &Path, doc: &Value) {
    std::fs::create_dir_all(dir.join(".wasm-hooks")).unwrap();
    std::fs::write(
        dir.join(".wasm-hooks/hooks.json"),
        serde_json::to_vec_pretty(doc).unwrap(),
    )
    .unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out));
}

/// `dir` committed and cloned into a new directory.
fn clone(dir: &Path) -> tempfile::TempDir {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "hooks"]);
    let to = tempfile::tempdir().unwrap();
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(dir)
        .arg(to.path().join("clone"))
        .output()
        .unwrap();
    assert!(out.status.success(), "git clone: {}", text(&out));
    to
}

/// A registry holding `deny-dangerous-commands` at `REPO:TAG`, published
/// unsigned by `author`, and a project whose hook file names it and whose
/// lock `add` wrote.
struct Pinned {
    registry: Registry,
    author: Person,
    reference: String,
    project: tempfile::TempDir,
}

fn pinned_guard(repo_and_tag: &str) -> Pinned {
    let registry = Registry::start();
    let author = Person::new();
    let reference = registry.reference(repo_and_tag);
    publish(
        &author,
        &support::plugin("deny-dangerous-commands"),
        &reference,
        None,
    );
    let project = project(&[(&reference, json!({}))]);
    ok("add", author.run(project.path(), &["add", &reference]));
    Pinned {
        registry,
        author,
        reference,
        project,
    }
}

/// A Read PreToolUse event in `dir`: no plugin of these tests is on it.
fn read(dir: &Path) -> Value {
    json!({"session_id": "s1", "cwd": dir, "hook_event_name": "PreToolUse",
        "tool_name": "Read", "tool_input": {"file_path": "/etc/hostname"}})
}

fn lock_of(dir: &Path) -> Value {
    support::read_json(&dir.join(".wasm-hooks/wasm-hooks.lock"))
}

#[test]
fn a_teammates_clone_is_answered_by_the_rust_python_and_js_plugins_pulled_and_verified() {
    let registry = Registry::start();
    let author = Person::new();
    let keys = tempfile::tempdir().unwrap();
    let (private, public) = keygen(&author, keys.path(), "team");
    author.trusts_signer(&public);
    let plugins = [
        (
            "hooks/deny-dangerous",
            support::plugin("deny-dangerous-commands"),
            json!({}),
        ),
        (
            "hooks/commits-py",
            crate::built_examples::built_example("conventional-commits-py"),
            json!({"max_subject": 60}),
        ),
        (
            "hooks/deps-js",
            crate::built_examples::built_example("new-dependencies-js"),
            json!({"allowed": ["serde", "requests"]}),
        ),
    ];
    let mut named = Vec::new();
    for (repo, wasm, config) in &plugins {
        let reference = format!("{}:1.0.0", registry.reference(repo));
        publish(&author, wasm, &reference, Some(&private));
        named.push((reference, config.clone()));
    }
    let refs: Vec<(&str, Value)> = named.iter().map(|(r, c)| (r.as_str(), c.clone())).collect();
    let project = project(&refs);
    for (reference, _) in &named {
        let printed = ok("add", author.run(project.path(), &["add", reference]));
        assert!(printed.contains("signed by sha256:"), "{printed}");
    }
    let lock = lock_of(project.path());
    assert_eq!(lock["plugins"].as_object().unwrap().len(), 3, "{lock}");

    // The teammate: a home of their own, an empty store and an empty
    // compile cache (a new machine), the team's key. Trusting pulls what
    // the lock pins and compiles it for this machine, saying so.
    let teammate = Person::on_a_new_machine();
    teammate.trusts_signer(&public);
    let clone = clone(project.path());
    let clone = clone.path().join("clone");
    let trusted = ok("trust", teammate.run(&clone, &["trust", "--yes"]));
    for (reference, _) in &named {
        assert!(
            trusted.contains(&format!("{reference}: pulled")),
            "{trusted}"
        );
    }
    for (reference, _) in &named {
        assert!(
            trusted.contains(&format!("compiling {reference} (")),
            "{trusted}"
        );
    }
    // No event waits on the registry or the compiler: each plugin loads
    // Cranelift's code from the cache.
    let first = fed(
        teammate.command(&clone, &["-vv", "hook"]),
        bash(&clone, "rm -rf /").to_string().as_bytes(),
    );
    let (verdict, why) = decision(&first);
    assert_eq!(verdict, "deny", "{}", text(&first));
    assert!(
        why.contains("dangerous pattern"),
        "the pulled plugin answered: {why}"
    );
    let mut said = String::from_utf8_lossy(&first.stderr).into_owned();
    for (event, reason) in [
        ("git commit -am 'Fixed the parser'", "Conventional Commits"),
        ("pip install reqests", "typosquat"),
    ] {
        let out = teammate.hook(&clone, &bash(&clone, event));
        let (verdict, why) = decision(&out);
        assert_eq!(verdict, "deny", "{event}: {}", text(&out));
        assert!(why.contains(reason), "{event}: {why}");
        said.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let out = teammate.hook(&clone, &bash(&clone, "ls"));
    assert_eq!(decision(&out).0, "allow", "{}", text(&out));
    said.push_str(&String::from_utf8_lossy(&out.stderr));
    assert!(!said.contains("pulling"), "{said}");
    assert_eq!(
        said.matches("from_cache=true compiler=cranelift").count(),
        3,
        "{said}"
    );
    for (_, entry) in lock["plugins"].as_object().unwrap() {
        let component = entry["component"]
            .as_str()
            .unwrap()
            .trim_start_matches("sha256:");
        assert!(
            teammate
                .store()
                .join(format!("sha256/{component}.wasm"))
                .is_file()
        );
    }
}

#[test]
fn a_tampered_blob_is_refused_and_nothing_is_stored() {
    let Pinned {
        registry,
        author: _author,
        reference,
        project,
    } = pinned_guard("hooks/deny:1");
    let component = lock_of(project.path())["plugins"][&reference]["component"]
        .as_str()
        .unwrap()
        .to_owned();
    // Someone with write access to the registry's storage swaps bytes.
    let blob = registry.blob_file(&component);
    let mut bytes = std::fs::read(&blob).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();

    let teammate = Person::new();
    let said = failed("pull", teammate.run(project.path(), &["pull"]));
    assert!(
        said.contains(&reference) && said.contains("refused"),
        "{said}"
    );
    let stored = teammate.store().join("sha256");
    assert!(
        !stored.exists() || std::fs::read_dir(&stored).unwrap().next().is_none(),
        "nothing half-written in the store"
    );
    // The hook it is on blocks, naming the command; other tools go on.
    ok("trust", teammate.run(project.path(), &["trust", "--yes"]));
    let out = teammate.hook(project.path(), &bash(project.path(), "ls"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(why.contains("wasm-hooks pull"), "{why}");
    let read = read(project.path());
    let out = teammate.hook(project.path(), &read);
    assert_eq!(decision(&out).0, "allow", "{}", text(&out));
}

#[test]
fn an_unsigned_plugin_and_one_signed_by_an_unknown_key_are_refused() {
    let registry = Registry::start();
    let author = Person::new();
    let keys = tempfile::tempdir().unwrap();
    let (_, team) = keygen(&author, keys.path(), "team");
    let (stranger, _) = keygen(&author, keys.path(), "stranger");
    let unsigned = format!("{}:1", registry.reference("hooks/unsigned"));
    let foreign = format!("{}:1", registry.reference("hooks/foreign"));
    let wasm = support::plugin("deny-dangerous-commands");
    publish(&author, &wasm, &unsigned, None);
    publish(&author, &wasm, &foreign, Some(&stranger));
    let person = Person::new();
    person.trusts_signer(&team);
    let project = project(&[]);
    let said = failed(
        "add unsigned",
        person.run(project.path(), &["add", &unsigned]),
    );
    assert!(
        said.contains("is not signed") && said.contains(&unsigned),
        "{said}"
    );
    let said = failed(
        "add foreign",
        person.run(project.path(), &["add", &foreign]),
    );
    assert!(said.contains("none by a key you trust"), "{said}");
    assert!(
        !project.path().join(".wasm-hooks/wasm-hooks.lock").exists(),
        "no lock written"
    );
}

#[test]
fn a_tag_that_moved_changes_nothing_until_update() {
    let registry = Registry::start();
    let author = Person::new();
    let reference = format!("{}:stable", registry.reference("hooks/guard"));
    let first = publish(
        &author,
        &support::plugin("deny-dangerous-commands"),
        &reference,
        None,
    );
    let project = project(&[(&reference, json!({}))]);
    ok("add", author.run(project.path(), &["add", &reference]));
    ok("trust", author.run(project.path(), &["trust", "--yes"]));
    // The tag now names another plugin (one that denies nothing here).
    let moved = publish(&author, &support::plugin("protect-paths"), &reference, None);
    assert_ne!(first, moved);
    let out = author.hook(project.path(), &bash(project.path(), "rm -rf /"));
    assert_eq!(
        decision(&out).0,
        "deny",
        "still the locked plugin: {}",
        text(&out)
    );
    assert_eq!(
        lock_of(project.path())["plugins"][&reference]["digest"],
        first.as_str()
    );

    let said = ok(
        "update",
        author.run(project.path(), &["update", &reference]),
    );
    assert!(said.contains(&format!("{first} -> {moved}")), "{said}");
    assert_eq!(
        lock_of(project.path())["plugins"][&reference]["digest"],
        moved.as_str()
    );
    // Trust recorded the lock: moving it asks for trust again.
    let shown = text(&author.run(project.path(), &["trust", "--show"]));
    assert!(
        shown.contains("changed since it was trusted") && shown.contains("wasm-hooks.lock"),
        "{shown}"
    );
}

#[test]
fn a_reference_the_lock_does_not_pin_fails_its_hook_alone_naming_wasm_hooks_add() {
    let registry = Registry::start();
    let reference = format!("{}:1", registry.reference("hooks/guard"));
    let project = project(&[(&reference, json!({}))]);
    let person = Person::new();
    let said = text(&person.run(project.path(), &["validate"]));
    assert!(
        said.contains("warning:") && said.contains(&format!("wasm-hooks add {reference}")),
        "{said}"
    );
    ok("trust", person.run(project.path(), &["trust", "--yes"]));
    let out = person.hook(project.path(), &bash(project.path(), "ls"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "the guard fails closed: {}", text(&out));
    assert!(
        why.contains(&format!("wasm-hooks add {reference}")),
        "{why}"
    );
    let out = person.hook(project.path(), &read(project.path()));
    assert_eq!(
        decision(&out).0,
        "allow",
        "other tools go on: {}",
        text(&out)
    );
}

/// What the store says was signed counts, not what it holds: a plugin
/// pulled while no signature was asked for does not run once one is.
#[test]
fn a_plugin_pulled_unsigned_does_not_run_once_signatures_are_required() {
    let Pinned {
        registry: _registry,
        author,
        reference,
        project,
    } = pinned_guard("hooks/deny:1");
    ok("trust", author.run(project.path(), &["trust", "--yes"]));
    let out = author.hook(project.path(), &bash(project.path(), "rm -rf /"));
    assert!(
        decision(&out).1.contains("dangerous pattern"),
        "{}",
        text(&out)
    );
    let keys = tempfile::tempdir().unwrap();
    let (_, team) = keygen(&author, keys.path(), "team");
    author.trusts_signer(&team);
    let out = author.hook(project.path(), &bash(project.path(), "rm -rf /"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(
        why.contains("is not signed")
            && why.contains(&reference)
            && !why.contains("dangerous pattern"),
        "the stored unsigned plugin did not run: {why}"
    );
}

/// A cloned repository's `require_signed_plugins` is about its own hooks:
/// the person's own unsigned plugin goes on running.
#[test]
fn a_projects_require_signed_plugins_does_not_touch_the_persons_own_hooks() {
    let Pinned {
        registry: _registry,
        author,
        reference,
        project: _project,
    } = pinned_guard("hooks/deny:1");
    // The person's own hook file names the plugin, with the lock beside it.
    let config = author.config_dir();
    std::fs::write(
        config.join("hooks.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "plugin": reference, "on_failure": "block"}]}]}})
        .to_string(),
    )
    .unwrap();
    ok(
        "add",
        author.run(
            Path::new("/"),
            &["add", &reference, "--lock", config.to_str().unwrap()],
        ),
    );
    let hostile = tempfile::tempdir().unwrap();
    write_hooks(hostile.path(), &json!({"hooks": {}}));
    std::fs::write(
        hostile.path().join(".wasm-hooks/config.yaml"),
        "require_signed_plugins: true\n",
    )
    .unwrap();
    let out = author.hook(hostile.path(), &bash(hostile.path(), "rm -rf /"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(
        why.contains("dangerous pattern"),
        "the person's guard ran: {why}"
    );
}

#[test]
fn a_lock_edited_by_hand_is_refused_naming_the_reference() {
    let registry = Registry::start();
    let author = Person::new();
    let reference = format!("{}:1", registry.reference("hooks/guard"));
    publish(
        &author,
        &support::plugin("deny-dangerous-commands"),
        &reference,
        None,
    );
    let other = format!("{}:1", registry.reference("hooks/other"));
    publish(&author, &support::plugin("protect-paths"), &other, None);
    let project = project(&[(&reference, json!({}))]);
    ok("add", author.run(project.path(), &["add", &reference]));
    ok("add", author.run(project.path(), &["add", &other]));
    // Point the guard's pin at the other plugin's bytes.
    let path = project.path().join(".wasm-hooks/wasm-hooks.lock");
    let mut lock = lock_of(project.path());
    lock["plugins"][&reference]["component"] = lock["plugins"][&other]["component"].clone();
    lock["plugins"][&reference]["size"] = lock["plugins"][&other]["size"].clone();
    std::fs::write(&path, serde_json::to_vec_pretty(&lock).unwrap()).unwrap();
    let teammate = Person::new();
    let said = failed("pull", teammate.run(project.path(), &["pull"]));
    assert!(
        said.contains("edited by hand") && said.contains(&reference),
        "{said}"
    );
    // A digest that is not one is named with its file and line.
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replacen("sha256:", "sha256:zz", 1),
    )
    .unwrap();
    let said = failed("pull", teammate.run(project.path(), &["pull"]));
    assert!(
        said.contains("wasm-hooks.lock:") && said.contains("64 lowercase hex"),
        "{said}"
    );
}

/// A fake registry's answer: status, content type, body.
type Answer = (u16, &'static str, Vec<u8>);

/// A registry that answers every request by `respond(its head)`, or never
/// answers when it gives `None`.
fn fake_registry(respond: fn(&str) -> Option<Answer>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut request = [0u8; 4096];
                let n = stream.read(&mut request).unwrap_or(0);
                let head = String::from_utf8_lossy(&request[..n]).into_owned();
                match respond(&head) {
                    Some((status, kind, body)) => {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = stream.write_all(&body);
                    }
                    None => std::thread::sleep(std::time::Duration::from_secs(60)),
                }
            });
        }
    });
    addr.to_string()
}

/// A wasm manifest whose one layer claims `size` bytes.
fn manifest_claiming(size: u64) -> Vec<u8> {
    json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.wasm.config.v0+json", "digest": format!("sha256:{}", "c".repeat(64)), "size": 2},
        "layers": [{"mediaType": "application/wasm", "digest": format!("sha256:{}", "d".repeat(64)), "size": size}],
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_2_gb_layer_is_refused_before_a_byte_of_it_is_fetched() {
    let host = fake_registry(|path| {
        if path.contains("/manifests/") {
            Some((
                200,
                "application/vnd.oci.image.manifest.v1+json",
                manifest_claiming(2 << 30),
            ))
        } else if path.contains("/blobs/") {
            panic!("the blob was asked for");
        } else {
            Some((200, "application/json", b"{}".to_vec()))
        }
    });
    let reference = format!("oci://{host}/hooks/huge:1");
    let said = add_fails(&reference);
    assert!(
        said.contains("2147483648 bytes, over the") && said.contains(&reference),
        "{said}"
    );
}

/// Credentials are for the registry `WASM_HOOKS_REGISTRY_HOST` names:
/// a hook file or lock naming another host gets none of them.
#[test]
fn registry_credentials_never_go_to_a_registry_a_repository_names() {
    static SAW_CREDENTIALS: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);
    let host = fake_registry(|head| {
        if head.to_ascii_lowercase().contains("\nauthorization:") {
            SAW_CREDENTIALS.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        Some((
            401,
            "application/json",
            br#"{"errors":[{"code":"UNAUTHORIZED","message":"who are you"}]}"#.to_vec(),
        ))
    });
    let reference = format!("oci://{host}/hooks/x:1");
    let project = project(&[]);
    let out = Person::new()
        .command(project.path(), &["add", &reference])
        .env("WASM_HOOKS_REGISTRY_HOST", "registry.example.com")
        .env("WASM_HOOKS_REGISTRY_USERNAME", "alice")
        .env("WASM_HOOKS_REGISTRY_PASSWORD", "s3cret")
        .output()
        .unwrap();
    let said = failed("add", out);
    assert!(
        said.contains("refused") && !said.contains("s3cret"),
        "{said}"
    );
    assert!(
        !SAW_CREDENTIALS.load(std::sync::atomic::Ordering::SeqCst),
        "no credentials were sent to {host}"
    );
}

#[test]
fn a_registry_that_answers_garbage_or_an_image_is_a_clear_error() {
    let garbage = fake_registry(|path| {
        Some(if path.contains("/manifests/") {
            (200, "text/html", b"<html>login</html>".to_vec())
        } else {
            (200, "application/json", b"{}".to_vec())
        })
    });
    let reference = format!("oci://{garbage}/hooks/x:1");
    let said = add_fails(&reference);
    assert!(said.contains(&reference), "{said}");
    assert!(said.contains("not JSON"), "{said}");

    // A real image in a real registry, pushed by skopeo from an OCI layout.
    let registry = Registry::start();
    let layout = tempfile::tempdir().unwrap();
    let layer = b"not a component";
    let config =
        br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#;
    let blob = |bytes: &[u8]| {
        let hex = sha256_hex(bytes);
        std::fs::create_dir_all(layout.path().join("blobs/sha256")).unwrap();
        std::fs::write(layout.path().join("blobs/sha256").join(&hex), bytes).unwrap();
        format!("sha256:{hex}")
    };
    let manifest = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": blob(config), "size": config.len()},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": blob(layer), "size": layer.len()}]})
        .to_string();
    let manifest_digest = blob(manifest.as_bytes());
    std::fs::write(
        layout.path().join("oci-layout"),
        r#"{"imageLayoutVersion":"1.0.0"}"#,
    )
    .unwrap();
    std::fs::write(
        layout.path().join("index.json"),
        json!({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest_digest, "size": manifest.len(),
            "annotations": {"org.opencontainers.image.ref.name": "1"}}]})
        .to_string(),
    )
    .unwrap();
    let out = Command::new("skopeo")
        .args(["copy", "--quiet", "--dest-tls-verify=false"])
        .arg(format!("oci:{}:1", layout.path().display()))
        .arg(format!("docker://{}/hooks/image:1", registry.host_port))
        .output()
        .unwrap();
    assert!(out.status.success(), "skopeo copy: {}", text(&out));
    let reference = format!("{}:1", registry.reference("hooks/image"));
    let said = add_fails(&reference);
    assert!(
        said.contains("not a wasm component") && said.contains(&reference),
        "{said}"
    );
}

#[test]
fn a_registry_that_hangs_blocks_only_the_hook_it_is_on_within_its_timeout() {
    let host = fake_registry(|_| None);
    let reference = format!("oci://{host}/hooks/slow:1");
    let project = tempfile::tempdir().unwrap();
    write_hooks(
        project.path(),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "plugin": reference, "on_failure": "block", "timeout": 2}]}]}}),
    );
    // A lock as `add` wrote it on a machine that reached the registry.
    std::fs::write(
        project.path().join(".wasm-hooks/wasm-hooks.lock"),
        json!({"version": 1, "plugins": {reference.clone(): {
            "digest": format!("sha256:{}", "a".repeat(64)),
            "component": format!("sha256:{}", "b".repeat(64)), "size": 10}}})
        .to_string(),
    )
    .unwrap();
    let person = Person::new();
    ok("trust", person.run(project.path(), &["trust", "--yes"]));
    let read = read(project.path());
    let out = person.hook(project.path(), &read);
    assert_eq!(
        decision(&out).0,
        "allow",
        "a Read waits for nothing: {}",
        text(&out)
    );
    let out = person.hook(project.path(), &bash(project.path(), "ls"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(
        why.contains("wasm-hooks pull") && why.contains("2 s"),
        "{why}"
    );
}

#[test]
fn an_untrusted_project_never_makes_wasm_hooks_reach_its_registry() {
    let Pinned {
        registry: _registry,
        author: _author,
        reference: _reference,
        project,
    } = pinned_guard("hooks/guard:1");
    let stranger = Person::new();
    stranger.settings("untrusted_projects: sandboxed_only\n");
    let out = stranger.hook(project.path(), &bash(project.path(), "rm -rf /"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(
        why.contains("untrusted project's registry") && why.contains("wasm-hooks pull"),
        "{why}"
    );
    assert!(!stranger.store().exists(), "nothing was pulled");
    // Pulled on purpose, it runs sandboxed like a local plugin.
    ok("pull", stranger.run(project.path(), &["pull"]));
    let out = stranger.hook(project.path(), &bash(project.path(), "rm -rf /"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(why.contains("dangerous pattern"), "{why}");
}

#[test]
fn a_project_cannot_add_plugin_signers_for_itself() {
    let project = project(&[]);
    std::fs::write(
        project.path().join(".wasm-hooks/config.yaml"),
        "plugin_signers: [evil.pub]\n",
    )
    .unwrap();
    let person = Person::new();
    let said = text(&person.run(project.path(), &["validate"]));
    assert!(
        said.contains("`plugin_signers` may only be set in the user's config"),
        "{said}"
    );
}

#[test]
fn the_organisation_can_require_every_plugin_signed_by_its_keys() {
    let registry = Registry::start();
    let admin = Person::new();
    let managed = support::managed_dir();
    let (org_key, org_pub) = keygen(&admin, managed.path(), "org");
    let (user_key, user_pub) = keygen(&admin, managed.path(), "user");
    std::fs::write(
        managed.path().join("config.yaml"),
        "plugin_signers: [org.pub]\nrequire_signed_plugins: true\n",
    )
    .unwrap();
    let wasm = support::plugin("deny-dangerous-commands");
    let by_org = format!("{}:1", registry.reference("hooks/org"));
    let by_user = format!("{}:1", registry.reference("hooks/user"));
    publish(&admin, &wasm, &by_org, Some(&org_key));
    publish(&admin, &wasm, &by_user, Some(&user_key));
    let person = Person::new();
    // The person's own key does not count when the organisation requires
    // its own.
    person.trusts_signer(&user_pub);
    let project = project(&[]);
    let under_org = |dir: &Path, args: &[&str]| {
        person
            .command(dir, args)
            .env("WASM_HOOKS_MANAGED_DIR", managed.path())
            .output()
            .unwrap()
    };
    let said = failed("add by_user", under_org(project.path(), &["add", &by_user]));
    assert!(said.contains("none by a key you trust"), "{said}");
    let said = ok("add by_org", under_org(project.path(), &["add", &by_org]));
    let org_key = std::fs::read_to_string(&org_pub).unwrap();
    assert!(
        said.contains("signed by sha256:") && !org_key.is_empty(),
        "{said}"
    );
    // A local plugin file does not run.
    let local = tempfile::tempdir().unwrap();
    write_hooks(
        local.path(),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "plugin": wasm, "on_failure": "block"}]}]}}),
    );
    let said = text(&under_org(local.path(), &["validate"]));
    assert!(
        said.contains("requires every wasm plugin to come from a registry"),
        "{said}"
    );
    ok("trust", under_org(local.path(), &["trust", "--yes"]));
    let mut hook = person.command(local.path(), &["hook"]);
    hook.env("WASM_HOOKS_MANAGED_DIR", managed.path());
    let out = fed(hook, bash(local.path(), "rm -rf /").to_string().as_bytes());
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(
        why.contains("requires every wasm plugin") && !why.contains("dangerous pattern"),
        "the local plugin did not run: {why}"
    );
}

#[test]
fn skopeo_and_openssl_read_what_publish_wrote() {
    let registry = Registry::start();
    let author = Person::new();
    let keys = tempfile::tempdir().unwrap();
    let (private, public) = keygen(&author, keys.path(), "team");
    let reference = format!("{}:1.0.0", registry.reference("hooks/deny"));
    let wasm = support::plugin("deny-dangerous-commands");
    let digest = publish(&author, &wasm, &reference, Some(&private));
    let docker = format!("docker://{}/hooks/deny", registry.host_port);
    let skopeo = |args: &[&str]| {
        let out = Command::new("skopeo").args(args).output().unwrap();
        assert!(out.status.success(), "skopeo {args:?}: {}", text(&out));
        out.stdout
    };
    let manifest = skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--raw",
        &format!("{docker}:1.0.0"),
    ]);
    assert_eq!(format!("sha256:{}", sha256_hex(&manifest)), digest);
    let manifest: Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    let config: Value = serde_json::from_slice(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--config",
        "--raw",
        &format!("{docker}:1.0.0"),
    ]))
    .unwrap();
    assert_eq!(config["os"], "wasip2");
    assert_eq!(config["layerDigests"][0], manifest["layers"][0]["digest"]);
    // The component, pulled by skopeo, is the file.
    let out = tempfile::tempdir().unwrap();
    skopeo(&[
        "copy",
        "--quiet",
        "--src-tls-verify=false",
        &format!("{docker}@{digest}"),
        &format!("dir:{}", out.path().display()),
    ]);
    let layer = manifest["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:");
    assert_eq!(
        std::fs::read(out.path().join(layer)).unwrap(),
        std::fs::read(&wasm).unwrap()
    );
    // The signature: cosign's tag and payload, verified by openssl.
    let tag = format!("{}.sig", digest.replace(':', "-"));
    let signature: Value = serde_json::from_slice(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--raw",
        &format!("{docker}:{tag}"),
    ]))
    .unwrap();
    let layer = &signature["layers"][0];
    assert_eq!(
        layer["mediaType"],
        "application/vnd.dev.cosign.simplesigning.v1+json"
    );
    let payload = std::fs::read(registry.blob_file(layer["digest"].as_str().unwrap())).unwrap();
    let claims: Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(
        claims["critical"]["image"]["docker-manifest-digest"],
        digest.as_str()
    );
    assert_eq!(
        claims["critical"]["type"],
        "cosign container image signature"
    );
    let der = base64_decode(
        layer["annotations"]["dev.cosignproject.cosign/signature"]
            .as_str()
            .unwrap(),
    );
    std::fs::write(keys.path().join("payload.json"), &payload).unwrap();
    std::fs::write(keys.path().join("sig.der"), der).unwrap();
    let out = Command::new("openssl")
        .current_dir(keys.path())
        .args(["dgst", "-sha256", "-verify"])
        .arg(&public)
        .args(["-signature", "sig.der", "payload.json"])
        .output()
        .unwrap();
    assert!(text(&out).contains("Verified OK"), "{}", text(&out));
}

fn base64_decode(text: &str) -> Vec<u8> {
    let mut base64 = Command::new("base64");
    base64.arg("-d");
    fed(base64, text.as_bytes()).stdout
}

#[test]
fn a_missing_local_plugin_blocks_only_its_hooks_and_names_the_build_command() {
    let project = tempfile::tempdir().unwrap();
    write_hooks(
        project.path(),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "plugin": "../my-guard/build/my_guard.wasm", "on_failure": "block"}]}]}}),
    );
    std::fs::create_dir_all(project.path().join("my-guard")).unwrap();
    let person = Person::new();
    ok("trust", person.run(project.path(), &["trust", "--yes"]));
    let read = read(project.path());
    let out = person.hook(project.path(), &read);
    assert_eq!(decision(&out).0, "allow", "{}", text(&out));
    let prompt = json!({"session_id": "s1", "cwd": project.path(), "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    let out = person.hook(project.path(), &prompt);
    assert!(out.status.success(), "{}", text(&out));
    let out = person.hook(project.path(), &bash(project.path(), "ls"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(
        why.contains("wasm-hooks build") && why.contains("my-guard"),
        "{why}"
    );
}

/// componentize-py and componentize-js write other bytes on every run;
/// unchanged sources must still build the same component (the build
/// cache), named after the manifest, not the folder.
#[test]
fn rebuilding_unchanged_python_and_js_sources_gives_the_same_sha256_named_by_the_manifest() {
    for (example, component) in [
        ("conventional-commits-py", "conventional_commits_py.wasm"),
        ("new-dependencies-js", "new_dependencies_js.wasm"),
    ] {
        let first = std::fs::read(crate::built_examples::built_example(example)).unwrap();
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("a-folder-of-another-name");
        crate::built_examples::example_copy(example, &dir);
        let out = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
            .current_dir(&dir)
            .arg("build")
            .env("WASM_HOOKS_CACHE_DIR", support::toolchain_cache())
            .output()
            .unwrap();
        let said = ok("wasm-hooks build", out);
        assert!(said.contains("built before"), "{example}: {said}");
        let again = std::fs::read(dir.join("build").join(component)).unwrap();
        assert_eq!(sha256_hex(&first), sha256_hex(&again), "{example}");
    }
}

/// A teammate's daemon and `serve` pull on first use too: the same engine.
/// (`trust` pulls what it trusts: the store is emptied after it, as a
/// cleared cache would be.)
#[test]
fn the_daemon_and_serve_pull_a_locked_plugin_on_first_use() {
    let Pinned {
        registry: _registry,
        author: _author,
        reference: _reference,
        project,
    } = pinned_guard("hooks/deny:1");

    // Through the daemon: the first event (a Read, no plugin) starts it,
    // the second reaches the plugin there.
    let teammate = Person::new();
    ok("trust", teammate.run(project.path(), &["trust", "--yes"]));
    std::fs::remove_dir_all(teammate.store()).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let through_daemon = |event: &Value| {
        let mut command = teammate.command(project.path(), &["hook"]);
        command
            .env_remove("WASM_HOOKS_DAEMON")
            .env("XDG_RUNTIME_DIR", runtime.path());
        fed(command, event.to_string().as_bytes())
    };
    let read = read(project.path());
    assert_eq!(decision(&through_daemon(&read)).0, "allow");
    assert!(!teammate.store().exists(), "a Read pulls nothing");
    let socket_appears = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::fs::read_dir(runtime.path()).is_ok_and(|mut d| d.next().is_some())
    });
    assert!(socket_appears, "hook started a daemon");
    let out = through_daemon(&bash(project.path(), "rm -rf /"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(
        why.contains("dangerous pattern"),
        "the pulled plugin answered: {why}"
    );
    assert!(
        teammate.store().join("sha256").is_dir(),
        "pulled into the store"
    );

    // Through serve, for a third person.
    let third = Person::new();
    ok("trust", third.run(project.path(), &["trust", "--yes"]));
    std::fs::remove_dir_all(third.store()).unwrap();
    let mut serve = third.command(
        project.path(),
        &[
            "serve",
            "--no-token",
            "--listen",
            "127.0.0.1:0",
            "--project",
        ],
    );
    serve.arg(project.path());
    let served = support::Served::start(serve);
    let mut curl = Command::new("curl");
    curl.args(["-s", "-X", "POST", "-H", "content-type: application/json"])
        .args(["--data-binary", "@-"])
        .arg(format!("{}/hook", served.address));
    let posted = fed(
        curl,
        bash(project.path(), "rm -rf /").to_string().as_bytes(),
    );
    let answer: Value =
        serde_json::from_slice(&posted.stdout).unwrap_or_else(|_| panic!("{}", text(&posted)));
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
    assert!(
        answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .is_some_and(|why| why.contains("dangerous pattern")),
        "the pulled plugin answered: {answer}"
    );
    assert!(
        third.store().join("sha256").is_dir(),
        "serve pulled into the store"
    );
}

/// A project that requires signed plugins, cloned by a teammate who has
/// not added the team's signer key yet (#42): `pull` and the hook's
/// failure both name the missing key, not "run `wasm-hooks pull`".
#[test]
fn a_teammate_missing_the_signer_key_is_told_so_at_pull_and_by_the_hook() {
    let registry = Registry::start();
    let author = Person::new();
    let keys = tempfile::tempdir().unwrap();
    let (private, public) = keygen(&author, keys.path(), "team");
    author.trusts_signer(&public);
    let reference = registry.reference("hooks/deny:1");
    publish(
        &author,
        &support::plugin("deny-dangerous-commands"),
        &reference,
        Some(&private),
    );
    let project = project(&[(&reference, json!({}))]);
    std::fs::write(
        project.path().join(".wasm-hooks/config.yaml"),
        "require_signed_plugins: true\n",
    )
    .unwrap();
    ok("add", author.run(project.path(), &["add", &reference]));

    let teammate = Person::new();
    let pulled = failed("pull", teammate.run(project.path(), &["pull"]));
    assert!(
        pulled.contains("you have no signer keys") && pulled.contains("plugin_signers"),
        "{pulled}"
    );
    let trusted = ok("trust", teammate.run(project.path(), &["trust", "--yes"]));
    assert!(trusted.contains("you have no signer keys"), "{trusted}");
    let out = teammate.hook(project.path(), &bash(project.path(), "rm -rf /"));
    let (verdict, why) = decision(&out);
    assert_eq!(verdict, "deny", "{}", text(&out));
    assert!(
        why.contains("you have no signer keys") && !why.contains("run `wasm-hooks pull` to fetch"),
        "{why}"
    );
    // With the key, all is well.
    teammate.trusts_signer(&public);
    ok("pull", teammate.run(project.path(), &["pull"]));
    let out = teammate.hook(project.path(), &bash(project.path(), "rm -rf /"));
    assert!(
        decision(&out).1.contains("dangerous pattern"),
        "{}",
        text(&out)
    );
}
