//! Checks on a plugin file before it is compiled: is it a component, and
//! which WIT package does it say it was built against (the custom section
//! `wasm-hooks:wit` that the guest SDK stamps into every plugin).

use wasmparser::{Parser, Payload};

/// The custom section the guest SDK writes its WIT package into.
pub(crate) const WIT_SECTION: &str = "wasm-hooks:wit";

/// The custom section carrying the JSON Schema of a plugin's `config`
/// (`wasm-hooks build` writes it from the plugin's `config.schema.json`).
pub const CONFIG_SCHEMA_SECTION: &str = "wasm-hooks:config-schema";

/// Carry `schema` (JSON Schema text) in `component` as the schema of the
/// plugin's `config`.
pub fn embed_config_schema(component: &mut Vec<u8>, schema: &str) {
    use wasm_encoder::ComponentSection;
    wasm_encoder::CustomSection {
        name: CONFIG_SCHEMA_SECTION.into(),
        data: schema.as_bytes().into(),
    }
    .append_to_component(component);
}

/// What kind of file a plugin path holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    Component,
    CoreModule,
    NotWasm,
}

pub(crate) fn file_kind(bytes: &[u8]) -> FileKind {
    if Parser::is_component(bytes) {
        FileKind::Component
    } else if Parser::is_core_wasm(bytes) {
        FileKind::CoreModule
    } else {
        FileKind::NotWasm
    }
}

/// `Ok` for a component; otherwise what the file is instead, as a message
/// that follows the file's name.
pub(crate) fn require_component(bytes: &[u8]) -> Result<(), String> {
    match file_kind(bytes) {
        FileKind::Component => Ok(()),
        FileKind::CoreModule => Err("is a core wasm module, not a component (build plugins \
             with `cargo build --target wasm32-wasip2`)"
            .into()),
        FileKind::NotWasm => Err("is not a WebAssembly file".into()),
    }
}

/// Stamp `package` (e.g. [`crate::WIT_PACKAGE`]) into `component` as the
/// guest SDK would: for components built without it, by a tool that knows
/// which WIT they were built against (`wasm-hooks build` for Python).
pub fn stamp_wit(component: &mut Vec<u8>, package: &str) {
    use wasm_encoder::ComponentSection;
    wasm_encoder::CustomSection {
        name: WIT_SECTION.into(),
        data: package.as_bytes().into(),
    }
    .append_to_component(component);
}

/// What a component says of itself in custom sections.
#[derive(Debug, Default)]
pub(crate) struct Sections {
    /// Every WIT package stamp (outer and nested).
    pub(crate) wit_stamps: Vec<String>,
    /// The JSON Schema of its `config`, if it carries one (the last one).
    pub(crate) config_schema: Option<String>,
}

/// The custom sections of the component that wasm-hooks reads.
pub(crate) fn sections(bytes: &[u8]) -> Result<Sections, wasmparser::BinaryReaderError> {
    let mut found = Sections::default();
    for payload in Parser::new(0).parse_all(bytes) {
        if let Payload::CustomSection(section) = payload? {
            let text = || String::from_utf8_lossy(section.data()).into_owned();
            match section.name() {
                WIT_SECTION => found.wit_stamps.push(text()),
                CONFIG_SCHEMA_SECTION => found.config_schema = Some(text()),
                _ => {}
            }
        }
    }
    Ok(found)
}

/// Whether a plugin stamped `found` can run on a host implementing
/// `supported`: the same package, and the same version up to the first
/// non-zero component (semver compatibility, as wasmtime links imports).
pub(crate) fn compatible(found: &str, supported: &str) -> bool {
    fn split(s: &str) -> Option<(&str, Vec<u64>)> {
        let (package, version) = s.split_once('@')?;
        let parts = version
            .split('.')
            .map(str::parse)
            .collect::<Result<Vec<u64>, _>>()
            .ok()?;
        Some((package, parts))
    }
    let (Some((fp, fv)), Some((sp, sv))) = (split(found), split(supported)) else {
        return false;
    };
    if fp != sp || fv.len() != 3 || sv.len() != 3 {
        return false;
    }
    let significant = sv.iter().position(|&n| n != 0).unwrap_or(2);
    fv[..=significant] == sv[..=significant]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_compatibility_follows_the_first_non_zero_component() {
        let host = "wasm-hooks:hook@0.1.1";
        assert!(compatible("wasm-hooks:hook@0.1.0", host));
        assert!(compatible("wasm-hooks:hook@0.1.7", host));
        assert!(!compatible("wasm-hooks:hook@0.2.0", host));
        assert!(!compatible("wasm-hooks:hook@1.1.0", host));
        assert!(!compatible("other:hook@0.1.0", host));
        assert!(!compatible("garbage", host));
        assert!(compatible("a:b@1.4.2", "a:b@1.0.0"));
        assert!(!compatible("a:b@2.0.0", "a:b@1.0.0"));
    }

    #[test]
    fn file_kinds_are_told_apart() {
        assert_eq!(file_kind(b"\0asm\x01\0\0\0"), FileKind::CoreModule);
        assert_eq!(file_kind(b"\0asm\x0d\0\x01\0"), FileKind::Component);
        assert_eq!(file_kind(b"#!/bin/sh\n"), FileKind::NotWasm);
    }
}
