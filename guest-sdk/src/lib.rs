//! `wasm-hooks-guest`: write a wasm-hooks plugin in plain Rust.
//!
//! A plugin is a `cdylib` crate built with
//! `cargo build --release --target wasm32-wasip2`; the output `.wasm` is a
//! WebAssembly component the host runs in a sandbox, on a fresh instance for
//! every event. Start from the [`Hook`] trait: implement the methods for the
//! events you care about (every one defaults to [`Outcome::proceed`]) and
//! register the type with [`export_hook!`].
//!
//! ```no_run
//! use wasm_hooks_guest::{export_hook, Event, Hook, Outcome, Result};
//!
//! struct NoSudo;
//!
//! impl Hook for NoSudo {
//!     fn pre_tool_use(event: &Event) -> Result<Outcome> {
//!         #[derive(serde::Deserialize)]
//!         struct Input { command: Option<String> }
//!         let input: Input = event.tool_input()?;
//!         match input.command {
//!             Some(c) if c.starts_with("sudo ") => Ok(Outcome::deny("no sudo here")),
//!             _ => Ok(Outcome::proceed()),
//!         }
//!     }
//! }
//!
//! export_hook!(NoSudo);
//! # fn main() {}
//! ```
//!
//! The WIT contract (`wit/0.2.0/hook.wit`) sits in this crate, so that a copy
//! of it builds anywhere; the repository's `wit/` points here, and the host
//! reads the same files. The generated bindings
//! stay in a hidden module: plugin authors never touch them.
#![deny(missing_docs)]

mod error;
mod event;
mod hook;
mod outcome;
#[cfg(not(target_family = "wasm"))]
pub mod testing;
pub mod tools;

pub use error::{Error, Result};
pub use event::Event;
pub use hook::Hook;
pub use outcome::{Approval, Outcome, Role, Severity};
pub use tools::Tool;

/// The JSON Schema of the config type `T` (derive `schemars::JsonSchema`;
/// `#[serde(deny_unknown_fields)]` makes a misspelt key an error), as
/// pretty JSON text. Write it to the plugin's `config.schema.json` from a
/// native test; `wasm-hooks build` carries that file in the component, and
/// the host then refuses, at load, a hook whose `config` it does not fit,
/// at the hook file's line:
///
/// ```no_run
/// # #[cfg(feature = "schema")] {
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct Config { patterns: Vec<String> }
///
/// let schema = wasm_hooks_guest::config_schema::<Config>();
/// std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/config.schema.json"), schema).unwrap();
/// # }
/// ```
#[cfg(feature = "schema")]
pub fn config_schema<T: schemars::JsonSchema>() -> String {
    let schema = schemars::schema_for!(T);
    serde_json::to_string_pretty(&schema).expect("a schema is JSON") + "\n"
}

/// schemars, for `#[derive(schemars::JsonSchema)]` on a config type.
#[cfg(feature = "schema")]
pub use schemars;

use __private::bindings;

/// The WIT package this SDK implements, stamped into every plugin so that the
/// host can refuse an incompatible plugin before compiling it.
pub const WIT_PACKAGE: &str = "wasm-hooks:hook@0.2.0";

/// Severity of a line written with [`log`].
pub use bindings::wasm_hooks::hook::types::Level;

/// Write a line to the host's log; the host tags it with the hook's name.
pub fn log(level: Level, message: &str) {
    #[cfg(target_family = "wasm")]
    bindings::wasm_hooks::hook::host::log(level, message);
    #[cfg(not(target_family = "wasm"))]
    testing::log(level, message);
}

/// A small key-value store the host keeps for this plugin and session, so
/// that a plugin can remember things between events (each event still runs
/// on a fresh instance). Values are strings; store JSON for anything else.
/// Bounded by the host: keys up to 256 bytes, values up to 16 KiB, 256 keys.
/// A plugin that uses it needs a host of WIT 0.1.1 or later (any host of
/// 0.2.0 has it).
pub mod kv {
    use super::Result;
    #[cfg(target_family = "wasm")]
    use super::{Error, bindings};

    /// The value stored under `key` in this session, if any.
    pub fn get(key: &str) -> Option<String> {
        #[cfg(target_family = "wasm")]
        return bindings::wasm_hooks::hook::kv::get(key);
        #[cfg(not(target_family = "wasm"))]
        return crate::testing::kv_get(key);
    }

    /// Store `value` under `key` for the rest of this session.
    ///
    /// # Errors
    /// When a bound would be passed; nothing is stored then.
    pub fn set(key: &str, value: &str) -> Result<()> {
        #[cfg(target_family = "wasm")]
        return bindings::wasm_hooks::hook::kv::set(key, value).map_err(Error::new);
        #[cfg(not(target_family = "wasm"))]
        return crate::testing::kv_set(key, value);
    }
}

/// This hook's `config` object from the hook file, as raw JSON (`{}` when the
/// hook file gives none).
pub fn config_json() -> String {
    #[cfg(target_family = "wasm")]
    return bindings::wasm_hooks::hook::host::config();
    #[cfg(not(target_family = "wasm"))]
    return testing::config_json();
}

/// This hook's `config` object from the hook file, deserialized into `T`.
///
/// # Errors
/// When the configured JSON does not fit `T`; the message names the field.
pub fn config<T: serde::de::DeserializeOwned>() -> Result<T> {
    serde_json::from_str(&config_json()).map_err(|e| Error::new(format!("hook config: {e}")))
}

/// Used by [`export_hook!`]; not part of the public API.
#[doc(hidden)]
pub mod __private {
    /// The generated WIT bindings.
    pub mod bindings {
        wit_bindgen::generate!({
            path: "wit/0.2.0",
            world: "hook",
            pub_export_macro: true,
            export_macro_name: "__export_hook_world",
            default_bindings_module: "::wasm_hooks_guest::__private::bindings",
        });
    }

    pub use crate::hook::Adapter;
    pub use bindings::__export_hook_world;

    /// [`crate::WIT_PACKAGE`] as bytes, for the custom section the host reads.
    pub const WIT_PACKAGE_STAMP: [u8; crate::WIT_PACKAGE.len()] = {
        let src = crate::WIT_PACKAGE.as_bytes();
        let mut out = [0u8; crate::WIT_PACKAGE.len()];
        let mut i = 0;
        while i < src.len() {
            out[i] = src[i];
            i += 1;
        }
        out
    };
}

/// Export a [`Hook`] implementation as this component's hook handler.
///
/// Use it once, at the root of the plugin crate. It also stamps the SDK's
/// WIT version into the component (custom section `wasm-hooks:wit`), which
/// the host checks before compiling the plugin.
#[macro_export]
macro_rules! export_hook {
    ($hook:ty) => {
        const _: () = {
            // Only wasm has free-form custom sections; native builds (a
            // plugin's own unit tests) go without the stamp.
            #[used]
            #[cfg_attr(target_family = "wasm", unsafe(link_section = "wasm-hooks:wit"))]
            static WASM_HOOKS_WIT_PACKAGE: [u8; $crate::WIT_PACKAGE.len()] =
                $crate::__private::WIT_PACKAGE_STAMP;

            type WasmHooksAdapter = $crate::__private::Adapter<$hook>;
            $crate::__private::__export_hook_world!(
                WasmHooksAdapter with_types_in $crate::__private::bindings
            );
        };
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn wit_package_matches_the_wit_file() {
        let wit = include_str!("../wit/0.2.0/hook.wit");
        let declared = wit
            .lines()
            .find_map(|l| l.trim().strip_prefix("package "))
            .and_then(|l| l.strip_suffix(';'))
            .expect("the WIT file declares a package");
        assert_eq!(declared, super::WIT_PACKAGE);
        assert_eq!(
            &super::__private::WIT_PACKAGE_STAMP,
            super::WIT_PACKAGE.as_bytes()
        );
    }
}
