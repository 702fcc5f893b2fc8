//! The integration tests: one binary (one link of wasmtime), one module per
//! concern. They drive the `wasm-hooks` binary and the library with real
//! guest plugins built from `example-plugins/` and `tests/hostile/`, real
//! subprocesses and real servers on 127.0.0.1.
//!
//! Run one concern with `cargo test -p wasm-hooks-cli --test integration
//! wasm_runtime::`.

// Tests read as one scenario each, however long.
#![allow(clippy::too_many_lines)]

mod support;

mod agent_hook;
mod audit_cli;
mod bench;
mod built_examples;
mod cli;
mod command_hooks;
mod compile_cache;
mod daemon;
mod docs_commands;
mod doctor;
mod dry_run;
mod every_agent;
mod example_agent;
mod explain;
mod fleet_soak;
mod guest_languages;
mod hook_files;
mod hook_templates;
mod hostile;
mod http_hooks;
mod import;
mod init;
mod inspect;
mod install;
mod layer_state;
mod layers;
mod mcp_hooks;
mod neutral_api;
mod observe;
mod oci_plugins;
mod policy_tests;
mod prompt_hooks;
mod quick_start;
mod sandboxed_agent_hooks;
mod scaffold;
mod schema;
mod serve;
mod serve_fleet;
mod session;
mod shell_paths;
mod silencing;
mod soak;
mod trust;
mod trust_holds;
mod validate;
mod wasm_runtime;
mod what_runs;
mod wit_versions;
