//! The fail-closed property (#30), fuzzed: whatever the hook files of every
//! layer, the settings, a plugin's config schema and the event say, the
//! engine answers — it never panics, never answers later than the event's
//! deadline, and never lets a guard event through with an empty answer
//! when a hook denied it or the hooks could not be loaded.
//!
//! A few hundred cases run with the tests; `scripts/fuzz` runs a million
//! (`WASM_HOOKS_FUZZ_CASES`), and `docs/security.md` records the run.
//! Only kinds that run nothing outside the process are generated (inline
//! rules, and wasm or command hooks whose program does not exist): a
//! fuzzer writing `rm -rf` into a command hook must not run it.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use wasm_hooks_core::{CATALOGUE, DispatchLimits, Verdict};

use crate::engine::HookEngine;
use crate::protocol::Protocol;
use crate::trust::UntrustedProjects;

/// One wasm runtime and one async runtime for every case (making them is
/// most of a case's time otherwise).
static WASM: std::sync::LazyLock<wasm_hooks_wasm::WasmRuntime> = std::sync::LazyLock::new(|| {
    let mut options = wasm_hooks_wasm::WasmRuntime::builder();
    options.no_cache().pooling(false);
    options.build().expect("a wasm runtime")
});
static ASYNC: std::sync::LazyLock<tokio::runtime::Runtime> = std::sync::LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("an async runtime")
});

/// The event deadline the fuzzed engines keep.
const DEADLINE_MS: u64 = 2_000;

/// How many cases: `WASM_HOOKS_FUZZ_CASES`, else a CI-sized budget.
fn cases() -> u32 {
    std::env::var("WASM_HOOKS_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(384)
}

/// Text that is sometimes ordinary, sometimes hostile: control characters,
/// regex bombs, long runs, template markers.
fn text() -> impl Strategy<Value = String> {
    // A pattern that compiles to megabytes costs milliseconds each time
    // (as it should: it is not kept); rarer than the rest, so that a run
    // covers many cases.
    prop_oneof![
        40 => "[a-zA-Z0-9 _./*|-]{0,16}",
        4 => Just("rm -rf /".to_owned()),
        4 => Just("\u{1b}[2J\u{7}\u{202e}".to_owned()),
        4 => Just(r"(a+)+$".to_owned()),
        1 => Just(r"\w{400}".to_owned()),
        4 => Just("{{tool_args.command}}".to_owned()),
        4 => (1usize..5000).prop_map(|n| "x".repeat(n)),
        8 => ".{0,24}",
    ]
}

/// Any JSON value, a few levels deep, its strings from [`text`].
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_$]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// One inline rule, mostly well-formed.
fn rule() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just("tool_input.command"),
            Just("tool_name"),
            Just("prompt"),
            Just("tool_input.file_path"),
            Just("nope.nothing"),
        ],
        prop_oneof![
            Just("contains"),
            Just("regex"),
            Just("equals"),
            Just("glob"),
            Just("starts_with"),
            Just("in"),
            Just("bogus"),
        ],
        json_value(),
        prop_oneof![
            Just("deny"),
            Just("ask"),
            Just("allow"),
            Just("context"),
            Just("x")
        ],
    )
        .prop_map(|(field, operator, value, action)| {
            json!({"field": field, "operator": operator, "value": value,
                "action": action, "reason": "fuzz"})
        })
}

/// One hook entry: inline rules, a plugin or a program that is not there,
/// or arbitrary fields.
fn hook_entry() -> impl Strategy<Value = Value> {
    let common = (
        prop::option::of(text()),
        prop::option::of(prop_oneof![Just("warn"), Just("block"), Just("ignore")]),
        any::<bool>(),
    );
    (
        prop_oneof![
            prop::collection::vec(rule(), 0..6)
                .prop_map(|rules| json!({"type": "inline", "rules": rules})),
            text().prop_map(
                |p| json!({"type": "wasm", "plugin": format!("/nonexistent/{p}.wasm"),
                "config": {"x": 1}})
            ),
            text().prop_map(|c| json!({"type": "command",
                "args": [format!("/nonexistent/fuzz-{}", c.len()), c]})),
            json_value().prop_map(harmless),
        ],
        common,
    )
        .prop_map(|(mut entry, (name, on_failure, disabled))| {
            if let Value::Object(fields) = &mut entry {
                if let Some(name) = name {
                    fields.insert("name".into(), Value::from(name));
                }
                if let Some(policy) = on_failure {
                    fields.insert("on_failure".into(), Value::from(policy));
                }
                if disabled {
                    fields.insert("enabled".into(), Value::from(false));
                }
            }
            entry
        })
}

/// `entry` without the fields that would start a program, call a model or
/// a server (a fuzzer must not run what it writes), or pick their kind.
fn harmless(mut entry: Value) -> Value {
    if let Value::Object(fields) = &mut entry {
        for field in [
            "type", "command", "args", "url", "server", "prompt", "shell",
        ] {
            fields.remove(field);
        }
    }
    entry
}

/// A hook file: groups of entries under event keys (known, aliased,
/// patterns, unknown), with matchers.
fn hook_file() -> impl Strategy<Value = Value> {
    let names: Vec<String> = CATALOGUE
        .iter()
        .flat_map(|(e, aliases)| {
            std::iter::once(e.as_str().to_owned()).chain(aliases.iter().map(|a| (*a).to_owned()))
        })
        .chain([
            "*".to_owned(),
            "PreToolUse,Stop".to_owned(),
            "Bogus".to_owned(),
        ])
        .collect();
    let group = (
        prop::option::of(text()),
        prop::collection::vec(hook_entry(), 0..5),
    )
        .prop_map(|(matcher, hooks)| {
            let mut group = json!({"hooks": hooks});
            if let Some(m) = matcher {
                group["matcher"] = Value::from(m);
            }
            group
        });
    prop::collection::btree_map(
        prop::sample::select(names),
        prop::collection::vec(group, 0..3),
        0..4,
    )
    .prop_map(|events| json!({"hooks": events}))
}

/// A settings file: known keys with odd values, and (for a project's,
/// `any_text`) arbitrary text; never an audit log a fuzzer would append to
/// anywhere.
fn settings(any_text: bool) -> impl Strategy<Value = String> {
    let text = if any_text { ".{0,40}" } else { "" };
    prop_oneof![
        Just(String::new()),
        (0u64..5000, 0usize..80).prop_map(|(ms, n)| format!(
            "limits: {{event_deadline_ms: {ms}, max_hooks_per_event: {n}}}\n"
        )),
        Just("secret_env: [FUZZ_TOKEN]\n".to_owned()),
        Just("ceilings: {timeout_ms: 99999}\n".to_owned()),
        Just("allow_urls: ['https://*']\n".to_owned()),
        text.prop_filter("no audit log", |t: &String| !t.contains("audit")),
    ]
}

/// An event record for a known or unknown event.
fn event() -> impl Strategy<Value = Value> {
    let names: Vec<&'static str> = CATALOGUE.iter().map(|(e, _)| e.as_str()).collect();
    (
        prop_oneof![4 => prop::sample::select(names).prop_map(str::to_owned), 1 => "[A-Za-z]{1,10}"],
        text(),
        json_value(),
    )
        .prop_map(|(name, command, extra)| {
            json!({"hook_event_name": name, "session_id": "fuzz", "tool_name": "Bash",
                "tool_input": {"command": command, "extra": extra}, "prompt": command})
        })
}

/// A config schema: definitions that refer to each other (cycles and
/// diamonds among them) through the keywords that apply in place.
fn schema() -> impl Strategy<Value = Value> {
    let reference = (0usize..4).prop_map(|n| json!({"$ref": format!("#/$defs/d{n}")}));
    let def = (
        prop_oneof![Just("allOf"), Just("anyOf"), Just("oneOf"), Just("items")],
        prop::collection::vec(prop_oneof![reference, json_value()], 0..4),
    )
        .prop_map(|(keyword, parts)| json!({keyword: parts}));
    prop::collection::vec(def, 4).prop_map(|defs| {
        let defs: Map<String, Value> = defs
            .into_iter()
            .enumerate()
            .map(|(i, d)| (format!("d{i}"), d))
            .collect();
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    })
}

/// The checks of one case: the engine built from these files answers
/// `record` in time, and a guard event is never let through silently.
fn answers_fail_closed(
    project_hooks: &Value,
    user_hooks: &Value,
    (project_settings, user_settings): (&str, &str),
    record: &Value,
    trust_all: bool,
) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let user = dir.path().join("user");
    std::fs::create_dir_all(project.join(".wasm-hooks")).unwrap();
    std::fs::create_dir_all(user.join("wasm-hooks")).unwrap();
    std::fs::write(
        project.join(".wasm-hooks/hooks.json"),
        project_hooks.to_string(),
    )
    .unwrap();
    std::fs::write(project.join(".wasm-hooks/config.yaml"), project_settings).unwrap();
    std::fs::write(user.join("wasm-hooks/hooks.json"), user_hooks.to_string()).unwrap();
    std::fs::write(user.join("wasm-hooks/config.yaml"), user_settings).unwrap();
    let Ok((protocol, event)) = Protocol::Claude.read(record.clone()) else {
        return Ok(());
    };
    let guards = event.name().guards_action();
    let mut builder = HookEngine::builder();
    builder
        .project_dir(&project)
        .user_config_dir(&user)
        .managed_dir(None)
        .trust_store(None)
        .lints(false)
        .dispatch_limits(DispatchLimits::DEFAULT.event_deadline_ms(DEADLINE_MS));
    if trust_all {
        builder.untrusted_projects(UntrustedProjects::TrustAll);
    }
    builder.runtime(WASM.clone());
    let engine = match builder.build() {
        Ok(engine) => engine,
        Err(e) => {
            // Files that do not load are answered by `Protocol::failure`,
            // whose answer depends only on the event (the CLI's tests and
            // `fallback_answer`'s hold it); here only that the failure is
            // said, never empty.
            prop_assert!(!e.errors.is_empty(), "a load error naming nothing");
            return Ok(());
        }
    };
    let started = Instant::now();
    let outcome = ASYNC.block_on(engine.dispatch(&event));
    let took = started.elapsed();
    prop_assert!(
        took <= Duration::from_millis(DEADLINE_MS + 1_000),
        "answered in {took:?}, past the {DEADLINE_MS} ms deadline"
    );
    let answer = protocol.encode(&event, &outcome);
    if guards && matches!(outcome.verdict, Verdict::Deny { .. }) {
        // The agent's own word for it: a deny or a block, or exit code 2.
        let body = answer.body.to_string();
        prop_assert!(
            answer.exit_code == 2 || body.contains("\"deny\"") || body.contains("\"block\""),
            "a denied guard event not answered with a deny: {body}"
        );
    }
    Ok(())
}

/// A command line from the shell reader's own vocabulary: shells and
/// their option forms, interpreters, wrappers, re-parsers, arithmetic,
/// quotes, substitutions, here-documents and templates, in any order.
fn command_line() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("sh"),
        Just("bash"),
        Just("-c"),
        Just("-e"),
        Just("-o"),
        Just("--"),
        Just("-lc"),
        Just("eval"),
        Just("builtin"),
        Just("env"),
        Just("-S"),
        Just("timeout"),
        Just("5"),
        Just("xargs"),
        Just("find"),
        Just("-exec"),
        Just(";"),
        Just("sudo"),
        Just("runuser"),
        Just("-u"),
        Just("su"),
        Just("watch"),
        Just("ssh"),
        Just("trap"),
        Just("python3"),
        Just("-Ic"),
        Just("-m"),
        Just("node"),
        Just("-pe"),
        Just("perl"),
        Just("-lne"),
        Just("-0777"),
        Just("awk"),
        Just("-f"),
        Just("sed"),
        Just("let"),
        Just("declare"),
        Just("-i"),
        Just("printf"),
        Just("-v"),
        Just("read"),
        Just("[["),
        Just("]]"),
        Just("-eq"),
        Just("["),
        Just("]"),
        Just("{{tool_input.command}}"),
        Just("{{x}}"),
        Just("'"),
        Just("\""),
        Just("$("),
        Just(")"),
        Just("${"),
        Just("}"),
        Just("(("),
        Just("`"),
        Just("|"),
        Just("&&"),
        Just("||"),
        Just("\n"),
        Just("<<EOF"),
        Just("EOF"),
        Just("#"),
        Just("\\"),
        Just("a=1"),
        Just("./x.sh"),
        Just("source"),
        Just("."),
        Just("cargo"),
        Just("run"),
        Just("git"),
        Just("core.hooksPath=h"),
        Just("npx"),
    ];
    prop::collection::vec(
        prop_oneof![8 => word.prop_map(str::to_owned), 1 => text()],
        0..24,
    )
    .prop_map(|words| words.join(" "))
}

/// A JSON text as agents write it: any value, with lone surrogate
/// escapes and NULs put into its strings.
fn agent_json() -> impl Strategy<Value = String> {
    (
        json_value(),
        prop::collection::vec(
            prop_oneof![
                Just(r"\ud800"),
                Just(r"\udfff"),
                Just(r"\u0000"),
                Just(r"\ud83d\ude00"),
                Just(r"\\ud800"),
                Just(r"\u006d"),
            ],
            0..4,
        ),
    )
        .prop_map(|(value, escapes)| {
            let mut text = value.to_string();
            for escape in escapes {
                // Into the first string there is, after its opening quote.
                if let Some(at) = text.find(":\"").or_else(|| text.find('"')) {
                    let at = text[at..].find('"').map_or(at, |q| at + q + 1);
                    text.insert_str(at, escape);
                }
            }
            text
        })
}

/// Whether a string or key of `value` holds a NUL.
fn holds_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(holds_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_hook_files_settings_and_event_are_answered_fail_closed(
        project_hooks in hook_file(),
        user_hooks in hook_file(),
        project_settings in settings(true),
        user_settings in settings(false),
        record in event(),
        trust_all in any::<bool>(),
    ) {
        let settings = (project_settings.as_str(), user_settings.as_str());
        answers_fail_closed(&project_hooks, &user_hooks, settings, &record, trust_all)?;
    }

    #[test]
    fn any_command_line_is_read_by_the_one_shell_reader_in_bounded_time(line in command_line()) {
        let started = Instant::now();
        let _ = crate::shell::check_quoting(&line);
        let _ = crate::shell::templates::reread_in_line(&line);
        for simple in crate::shell::simple_commands(&line) {
            if let Some(words) = simple.words {
                let _ = crate::shell::commands(&words, simple.conditional);
            }
        }
        let nowhere = std::path::Path::new("/nonexistent-wasm-hooks-fuzz");
        let _ = crate::handlers::runs::Runs::of_shell(&line, nowhere, nowhere, &[]);
        prop_assert!(started.elapsed() < Duration::from_secs(2), "{line}");
    }

    #[test]
    fn any_agent_json_is_read_the_same_way_or_refused(text in agent_json()) {
        // Read, it holds no NUL and no lone surrogate (JSON text again
        // reads back to the same value); or the text was not JSON at all.
        if let Ok(value) = crate::protocol::event_json(&text) {
            let again = value.to_string();
            prop_assert!(!holds_nul(&value), "{text} -> {again}");
            prop_assert_eq!(crate::protocol::event_json(&again).ok(), Some(value));
        } else {
            prop_assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
        }
    }

    #[test]
    fn any_config_schema_is_checked_or_refused_in_bounded_time(schema in schema(), config in json_value()) {
        let started = Instant::now();
        let _ = crate::handlers::config_schema::problems(&schema.to_string(), &config);
        prop_assert!(started.elapsed() < Duration::from_secs(2), "{schema}");
    }
}
