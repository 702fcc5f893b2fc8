//! The guest-language cases: a Python and a JavaScript plugin (folders
//! made by `wasm-hooks new --lang python|js` and built), each as a wasm
//! hook on a fresh instance and on a warm one (`instance: reuse`), against
//! its twin: the same hook class run
//! natively by python3 or node as a command hook, with the SDK's testing
//! host.

use std::path::Path;

use serde_json::json;
use wasm_hooks::Event;

use super::BenchArgs;
use super::harness::{check, command_case, engine, hook_file, measure, measure_between};
use super::stats::Summary;

/// The Python twin: `app.py`'s `Handler` on the event from stdin.
const PYTHON_TWIN: &str = "import sys, json; sys.path[:0] = [sys.argv[1]]; \
from app import Handler; from wasm_hooks import Event; from wasm_hooks.testing import MockHost; \
MockHost().__enter__(); \
o = Handler().dispatch(Event.from_record(json.load(sys.stdin))); \
print(json.dumps({} if o.decision == 'proceed' else {'decision': o.decision, 'reason': o.reason}))";

/// The JavaScript twin: `app.js`'s default export on the event from stdin.
const NODE_TWIN: &str = "const dir = process.argv[1]; \
const { default: Handler } = await import(`${dir}/app.js`); \
const { Event } = await import(`${dir}/wasm_hooks/index.js`); \
const { MockHost } = await import(`${dir}/wasm_hooks/testing.js`); \
let text = ''; for await (const chunk of process.stdin) text += chunk; \
new MockHost().install(); \
const o = new Handler().dispatch(Event.fromRecord(JSON.parse(text))); \
console.log(JSON.stringify(o.decision === 'proceed' ? {} : { decision: o.decision, reason: o.reason }));";

/// Both languages' cases, for the plugins given.
pub(super) fn cases(
    rt: &tokio::runtime::Runtime,
    args: &BenchArgs,
    dir: &Path,
    cache: &Path,
    event: &Event,
) -> anyhow::Result<Vec<Summary>> {
    let mut out = Vec::new();
    let languages = [
        (
            "Python",
            &args.python_plugin,
            "python3",
            vec!["-c", PYTHON_TWIN],
        ),
        (
            "JS",
            &args.js_plugin,
            "node",
            vec!["--input-type=module", "-e", NODE_TWIN],
        ),
    ];
    for (language, plugin, program, twin) in languages {
        let Some(plugin) = plugin else { continue };
        let plugin = std::path::absolute(plugin)?;
        let name = crate::build::name(&plugin)?;
        let wasm_file = hook_file(
            dir,
            &format!("{language}-wasm"),
            json!({"type": "wasm", "plugin": plugin.join(format!("build/{name}.wasm"))}),
        )?;
        let wasm = engine(&wasm_file, cache)?;
        check(rt, &wasm, event)?;
        let label = format!("wasm hook, {language} guest, fresh instance");
        out.push(measure(rt, &label, args.events, || wasm.dispatch(event)));
        let label =
            format!("wasm hook, {language} guest, fresh instance made between events (the daemon)");
        let between = || wasm.prepare();
        out.push(measure_between(rt, &label, args.events, between, || {
            wasm.dispatch(event)
        }));
        let warm_file = hook_file(
            dir,
            &format!("{language}-warm"),
            json!({"type": "wasm", "plugin": plugin.join(format!("build/{name}.wasm")),
                "instance": "reuse"}),
        )?;
        let warm = engine(&warm_file, cache)?;
        check(rt, &warm, event)?;
        let label = format!("wasm hook, {language} guest, warm instance (instance: reuse)");
        out.push(measure(rt, &label, args.events, || warm.dispatch(event)));
        let mut argv = vec![program];
        argv.extend(twin);
        argv.push(plugin.to_str().unwrap_or_default());
        out.push(command_case(
            rt,
            (dir, cache, event),
            &format!("{language}-twin"),
            &format!("command hook: {program} running the same {language} hook"),
            json!(argv),
            args.processes,
        )?);
    }
    Ok(out)
}
