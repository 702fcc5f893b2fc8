//! `Engine`: hook files loaded the way the CLI loads them (or named
//! files), events decided in the canonical vocabulary or an agent's
//! dialect, JavaScript functions registered beside the files' hooks.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use napi::bindgen_prelude::{block_on, within_runtime_if_available};
use napi_derive::napi;
use serde_json::{Value, json};
use wasm_hooks::{
    Event, EventName, EventPattern, HookEngine, HookHandle, HookSpec, OnFailure, Protocol,
    ToolMatcher, WasmRuntime,
};

use crate::errors::{engine_error, event_error, load_error, registration_error};
use crate::functions::{JsFunction, function_hook};
use crate::outcome::{Answer, Outcome};

/// How to load an engine; every field may be left out.
#[napi(object)]
#[derive(Default)]
pub struct EngineOptions {
    /// Hook files to read (they replace the search list).
    pub files: Option<Vec<String>>,
    /// The project whose `.wasm-hooks/` files and settings are read
    /// [default: the current directory].
    pub project_dir: Option<String>,
    /// Also read the project's `.claude/settings*.json` hooks.
    pub claude_settings: Option<bool>,
    /// Append a hash-chained record of every dispatch to this file.
    pub audit_log: Option<String>,
    /// Seal the audit log with the key in this file.
    pub audit_key: Option<String>,
    /// The person's wasm-hooks config directory [default: the XDG one].
    pub user_config_dir: Option<String>,
    /// The organisation's managed layer [default: /etc/wasm-hooks].
    pub managed_dir: Option<String>,
    /// Where compiled plugins are kept [default: the user's cache].
    pub cache_dir: Option<String>,
}

/// How a function is registered.
#[napi(object)]
#[derive(Default)]
pub struct RegisterOptions {
    /// The tools it applies to (a matcher: `Bash`, `Write|Edit`, a regex).
    pub matcher: Option<String>,
    /// Lower runs first [default: 0].
    pub priority: Option<i32>,
    /// Its name in traces [default: the function's name].
    pub name: Option<String>,
    /// What its failure does: `block` (the default), `warn`, `ignore`.
    pub on_failure: Option<String>,
}

/// One of the engine's hooks.
#[napi(object)]
pub struct HookInfo {
    /// Its name.
    pub name: String,
    /// The events it is on.
    pub events: Vec<String>,
    /// The tools it applies to.
    pub matcher: String,
    /// Lower runs first.
    pub priority: i32,
    /// `wasm`, `command`, `inline`…, or `function`.
    pub kind: String,
}

/// A hooks engine: hook files, their plugins compiled, and the functions
/// registered on it.
#[napi]
pub struct Engine {
    pub(crate) engine: HookEngine,
    /// How many JavaScript functions are registered: a blocking decision
    /// would wait for the event loop it blocks.
    functions: Arc<AtomicUsize>,
}

#[napi]
impl Engine {
    /// Load hook files: `files` when given, else the project's and the
    /// person's under the managed layer, with trust as the CLI applies it.
    /// Throws a `HookFileError` naming each problem's file and line.
    #[napi(constructor)]
    pub fn new(options: Option<EngineOptions>) -> napi::Result<Self> {
        let options = options.unwrap_or_default();
        let mut builder = HookEngine::builder();
        for file in options.files.into_iter().flatten() {
            builder.hook_file(file);
        }
        let project = match options.project_dir {
            Some(dir) => dir.into(),
            None => std::env::current_dir().map_err(|e| engine_error(e.to_string()))?,
        };
        builder
            .project_dir(project)
            .claude_settings(options.claude_settings.unwrap_or(false));
        if let Some(path) = options.audit_log {
            builder.audit_log(path);
        }
        if let Some(path) = options.audit_key {
            builder.audit_key(path);
        }
        if let Some(dir) = options.user_config_dir {
            builder.user_config_dir(dir);
        }
        if let Some(dir) = options.managed_dir {
            builder.managed_dir(Some(dir.into()));
        }
        if let Some(dir) = options.cache_dir {
            let mut runtime = WasmRuntime::builder();
            runtime.cache_dir(dir);
            builder.runtime_options(runtime);
        }
        let engine = within_runtime_if_available(|| builder.build()).map_err(|e| load_error(&e))?;
        Ok(Self {
            engine,
            functions: Arc::default(),
        })
    }

    /// Decide `event` (the canonical record, or `agent`'s own payload):
    /// the folded outcome. The event loop stays free while hooks run.
    #[napi]
    pub async fn decide(&self, event: Value, agent: Option<String>) -> napi::Result<Outcome> {
        let (_, event) = read_event(event, agent.as_deref())?;
        Ok(Outcome::new(self.engine.dispatch(event).await))
    }

    /// `decide`, blocking the thread: for an engine without JavaScript
    /// functions (their calls would wait for the blocked event loop).
    #[napi]
    pub fn decide_sync(&self, event: Value, agent: Option<String>) -> napi::Result<Outcome> {
        if self.functions.load(Ordering::SeqCst) > 0 {
            return Err(engine_error(
                "decideSync cannot run JavaScript function hooks (they need the event loop it \
                 blocks): use decide",
            ));
        }
        let (_, event) = read_event(event, agent.as_deref())?;
        Ok(Outcome::new(block_on(self.engine.dispatch(event))))
    }

    /// Decide `agent`'s own payload and answer in its dialect.
    #[napi]
    pub async fn answer(&self, event: Value, agent: String) -> napi::Result<Answer> {
        let (protocol, event) = read_event(event, Some(&agent))?;
        let outcome = self.engine.dispatch(&event).await;
        Ok(protocol.encode(&event, &outcome).into())
    }

    /// Register `function` (made async by `index.js`) as a hook on `event`,
    /// folded with the files' hooks; its failure (a throw, an answer that
    /// does not read) does what `onFailure` says (`block` unless told).
    #[napi(
        ts_args_type = "event: string, func: (event: any) => Promise<any>, options?: RegisterOptions"
    )]
    pub fn register(
        &self,
        event: String,
        function: JsFunction,
        options: Option<RegisterOptions>,
    ) -> napi::Result<Registration> {
        let options = options.unwrap_or_default();
        let events = EventPattern::parse(&event)
            .map_err(|e| registration_error(format!("event {event:?}: {e}")))?;
        let matcher = match &options.matcher {
            Some(pattern) => ToolMatcher::parse(pattern)
                .map_err(|e| registration_error(format!("matcher {pattern:?}: {e}")))?,
            None => ToolMatcher::Any,
        };
        let on_failure = options.on_failure.as_deref().unwrap_or("block");
        let on_failure: OnFailure = serde_json::from_value(json!(on_failure)).map_err(|_| {
            registration_error(format!(
                "onFailure {on_failure:?}: expected `block`, `warn` or `ignore`"
            ))
        })?;
        let name = options.name.unwrap_or_else(|| "function".to_owned());
        let spec = HookSpec::new(
            &name,
            events,
            Arc::new(function_hook(function, name.clone())),
        )
        .with_matcher(matcher)
        .with_priority(options.priority.unwrap_or(0))
        .with_on_failure(on_failure);
        let handle = self.engine.register(spec);
        self.functions.fetch_add(1, Ordering::SeqCst);
        Ok(Registration {
            engine: self.engine.clone(),
            handle,
            functions: Arc::clone(&self.functions),
            name,
        })
    }

    /// What the lints found in the hook files, one line each.
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<String> {
        self.engine
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The hooks that run, in order.
    #[napi]
    pub fn hooks(&self) -> Vec<HookInfo> {
        self.engine
            .hooks()
            .iter()
            .map(|spec| HookInfo {
                name: spec.id.as_str().to_owned(),
                events: spec
                    .events
                    .events()
                    .map(|e| EventName::as_str(e).to_owned())
                    .collect(),
                matcher: spec.matcher.to_string(),
                priority: spec.priority,
                kind: self
                    .engine
                    .kind_of(&spec.id)
                    .unwrap_or("function")
                    .to_owned(),
            })
            .collect()
    }
}

/// One function's registration.
#[napi]
pub struct Registration {
    engine: HookEngine,
    handle: HookHandle,
    functions: Arc<AtomicUsize>,
    name: String,
}

#[napi]
impl Registration {
    /// Take the hook back; false when it was already taken back.
    #[napi]
    pub fn unregister(&self) -> bool {
        let taken = self.engine.unregister(self.handle);
        if taken {
            self.functions.fetch_sub(1, Ordering::SeqCst);
        }
        taken
    }

    /// The hook's name in traces.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }
}

/// The names `agent` takes: every agent's dialect, and `canonical`.
#[napi]
pub fn protocols() -> Vec<String> {
    Protocol::ALL.iter().map(|p| p.word().to_owned()).collect()
}

/// The protocol `agent` names (the canonical one when `None`), and the
/// event read in it.
pub(crate) fn read_event(event: Value, agent: Option<&str>) -> napi::Result<(Protocol, Event)> {
    let protocol = match agent {
        None => Protocol::Canonical,
        Some(word) => Protocol::from_word(word).ok_or_else(|| {
            event_error(format!(
                "agent {word:?}: expected one of {}",
                protocols().join(", ")
            ))
        })?,
    };
    let (protocol, event) = protocol
        .read(event)
        .map_err(|e| event_error(format!("the event ({}): {e}", protocol.word())))?;
    Ok((protocol, event))
}
