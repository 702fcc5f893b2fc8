//! `Engine`: hook files loaded the way the CLI loads them (or named
//! files), events decided in the canonical vocabulary or an agent's
//! dialect, Python functions registered beside the files' hooks.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pythonize::depythonize;
use serde_json::{Value, json};
use wasm_hooks::{
    Event, EventName, EventPattern, HookEngine, HookHandle, HookSpec, OnFailure, Protocol,
    ToolMatcher, WasmRuntime,
};

use crate::calls::{awaitable, blocking};
use crate::errors::{event_error, load_error, registration_error};
use crate::functions::{function_hook, label_of};
use crate::outcome::{Outcome, answer_dict};

/// The names `agent=` takes: every agent's dialect, and `canonical`.
#[pyfunction]
pub(crate) fn protocols() -> Vec<&'static str> {
    Protocol::ALL.iter().map(|p| p.word()).collect()
}

/// A hooks engine: hook files, their plugins compiled, and the functions
/// registered on it. Cheap to share between threads.
#[pyclass(frozen, module = "wasm_hooks._wasm_hooks")]
pub(crate) struct Engine {
    pub(crate) engine: HookEngine,
}

#[pymethods]
impl Engine {
    /// Load hook files: `files` when given (they replace the search
    /// list), else the project's and the person's, under the managed
    /// layer, with trust as the CLI applies it.
    #[new]
    #[pyo3(signature = (
        files = None, *, project_dir = None, claude_settings = false, audit_log = None,
        audit_key = None, user_config_dir = None, managed_dir = None, cache_dir = None,
    ))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn new(
        py: Python<'_>,
        files: Option<Vec<PathBuf>>,
        project_dir: Option<PathBuf>,
        claude_settings: bool,
        audit_log: Option<PathBuf>,
        audit_key: Option<PathBuf>,
        user_config_dir: Option<PathBuf>,
        managed_dir: Option<PathBuf>,
        cache_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let mut builder = HookEngine::builder();
        for file in files.into_iter().flatten() {
            builder.hook_file(file);
        }
        let project = match project_dir {
            Some(dir) => dir,
            None => std::env::current_dir()?,
        };
        builder
            .project_dir(project)
            .claude_settings(claude_settings);
        if let Some(path) = audit_log {
            builder.audit_log(path);
        }
        if let Some(path) = audit_key {
            builder.audit_key(path);
        }
        if let Some(dir) = user_config_dir {
            builder.user_config_dir(dir);
        }
        if let Some(dir) = managed_dir {
            builder.managed_dir(Some(dir));
        }
        if let Some(dir) = cache_dir {
            let mut options = WasmRuntime::builder();
            options.cache_dir(dir);
            builder.runtime_options(options);
        }
        let built = py.detach(|| {
            let _entered = crate::calls::runtime().enter();
            builder.build()
        });
        built
            .map(|engine| Self { engine })
            .map_err(|e| load_error(py, &e))
    }

    /// Decide `event` (a dict: the canonical record, or `agent`'s own
    /// payload) with the GIL released: the folded outcome.
    #[pyo3(signature = (event, agent = None))]
    fn decide(
        &self,
        py: Python<'_>,
        event: &Bound<'_, PyAny>,
        agent: Option<&str>,
    ) -> PyResult<Outcome> {
        let (_, event) = read_event(py, event, agent)?;
        Ok(Outcome::new(blocking(py, self.engine.dispatch(event))?))
    }

    /// [`Engine::decide`] as an awaitable.
    #[pyo3(signature = (event, agent = None))]
    fn decide_async<'py>(
        &self,
        py: Python<'py>,
        event: &Bound<'_, PyAny>,
        agent: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (_, event) = read_event(py, event, agent)?;
        let engine = self.engine.clone();
        awaitable(
            py,
            async move { Ok(Outcome::new(engine.dispatch(event).await)) },
        )
    }

    /// Decide `agent`'s own payload and answer in its dialect: a dict
    /// with `body` (its JSON answer), `stderr` (lines) and `exit_code`.
    fn answer(&self, py: Python<'_>, event: &Bound<'_, PyAny>, agent: &str) -> PyResult<Py<PyAny>> {
        let (protocol, event) = read_event(py, event, Some(agent))?;
        let outcome = blocking(py, self.engine.dispatch(&event))?;
        answer_dict(py, &protocol.encode(&event, &outcome))
    }

    /// [`Engine::answer`] as an awaitable.
    fn answer_async<'py>(
        &self,
        py: Python<'py>,
        event: &Bound<'_, PyAny>,
        agent: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (protocol, event) = read_event(py, event, Some(agent))?;
        let engine = self.engine.clone();
        awaitable(py, async move {
            let outcome = engine.dispatch(&event).await;
            let answer = protocol.encode(&event, &outcome);
            Python::attach(|py| answer_dict(py, &answer))
        })
    }

    /// Register `function` as a hook on `event` (a name or pattern:
    /// `PreToolUse`, `tool:pre`, `PreToolUse,PostToolUse`, `*`), for the
    /// subjects `matcher` fits, at `priority` (lower runs first), folded
    /// with the files' hooks; a failure (it raised, or answered what does
    /// not read) does what `on_failure` says (`block` unless told).
    #[pyo3(signature = (event, function, *, matcher = None, priority = 0, name = None, on_failure = "block"))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn register(
        &self,
        py: Python<'_>,
        event: &str,
        function: Bound<'_, PyAny>,
        matcher: Option<&str>,
        priority: i32,
        name: Option<String>,
        on_failure: &str,
    ) -> PyResult<Registration> {
        if !function.is_callable() {
            return Err(registration_error(py, "the hook must be callable"));
        }
        let events = EventPattern::parse(event)
            .map_err(|e| registration_error(py, format!("event {event:?}: {e}")))?;
        let matcher = match matcher {
            Some(pattern) => ToolMatcher::parse(pattern)
                .map_err(|e| registration_error(py, format!("matcher {pattern:?}: {e}")))?,
            None => ToolMatcher::Any,
        };
        let on_failure: OnFailure = serde_json::from_value(json!(on_failure)).map_err(|_| {
            registration_error(
                py,
                format!("on_failure {on_failure:?}: expected `block`, `warn` or `ignore`"),
            )
        })?;
        let name = name.unwrap_or_else(|| label_of(&function));
        let hook = function_hook(function.unbind(), name.clone());
        let spec = HookSpec::new(&name, events, Arc::new(hook))
            .with_matcher(matcher)
            .with_priority(priority)
            .with_on_failure(on_failure);
        Ok(Registration {
            engine: self.engine.clone(),
            handle: self.engine.register(spec),
            name,
        })
    }

    /// What the lints found in the hook files (entries that load but may
    /// never do what they say), one line each.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.engine
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The hooks the engine runs, in order: name, events, matcher,
    /// priority and kind of each.
    fn hooks(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.engine
            .hooks()
            .iter()
            .map(|spec| {
                let dict = PyDict::new(py);
                dict.set_item("name", spec.id.as_str())?;
                let events: Vec<&str> = spec.events.events().map(EventName::as_str).collect();
                dict.set_item("events", events)?;
                dict.set_item("matcher", spec.matcher.to_string())?;
                dict.set_item("priority", spec.priority)?;
                dict.set_item("kind", self.engine.kind_of(&spec.id).unwrap_or("function"))?;
                Ok(dict.into_any().unbind())
            })
            .collect()
    }
}

/// One function's registration: `unregister()` takes it back.
#[pyclass(frozen, module = "wasm_hooks._wasm_hooks")]
pub(crate) struct Registration {
    engine: HookEngine,
    handle: HookHandle,
    /// The hook's name in traces.
    #[pyo3(get)]
    name: String,
}

#[pymethods]
impl Registration {
    /// Take the hook back; false when it was already taken back.
    fn unregister(&self) -> bool {
        self.engine.unregister(self.handle)
    }

    /// Amplifier's unregister functions are called: so is this.
    fn __call__(&self) -> bool {
        self.unregister()
    }

    fn __repr__(&self) -> String {
        format!("<registration {:?}>", self.name)
    }
}

/// The protocol `agent` names (the canonical one when `None`), and the
/// event read in it.
pub(crate) fn read_event(
    py: Python<'_>,
    event: &Bound<'_, PyAny>,
    agent: Option<&str>,
) -> PyResult<(Protocol, Event)> {
    let protocol = match agent {
        None => Protocol::Canonical,
        Some(word) => Protocol::from_word(word).ok_or_else(|| {
            event_error(
                py,
                format!("agent {word:?}: expected one of {}", protocols().join(", ")),
            )
        })?,
    };
    let value: Value = depythonize(event)
        .map_err(|e| event_error(py, format!("the event is not JSON data: {e}")))?;
    let (protocol, event) = protocol
        .read(value)
        .map_err(|e| event_error(py, format!("the event ({}): {e}", protocol.word())))?;
    Ok((protocol, event))
}
