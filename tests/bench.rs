//! `wasm-hooks bench` runs every case side by side and reports each with
//! its count and percentiles (a smoke test with tiny counts: the figures
//! themselves are for docs/benchmarks.md, never asserted).

use crate::support;

use assert_cmd::Command;
use serde_json::Value;
use support::plugin;

#[test]
fn every_case_is_measured_and_reported() {
    let out = Command::cargo_bin("wasm-hooks")
        .unwrap()
        .args([
            "bench",
            "--json",
            "--events",
            "20",
            "--processes",
            "2",
            "--compile-runs",
            "1",
            "--plugin",
        ])
        .arg(plugin("deny-dangerous-commands"))
        .arg("--spin")
        .arg(plugin("hostile-spin"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let cases: Vec<Value> = serde_json::from_slice(&out).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for expected in [
        "wasm hook, fresh instance (engine.dispatch)",
        "inline rule hook",
        "Rust closure hook (the floor)",
        "command hook: /bin/true",
        "command hook: python3 json.load(stdin)",
        "process: wasm-hooks hook, wasm plugin, warm cache",
        "process: wasm-hooks hook, inline rule",
        "process: python3 json.load(stdin)",
        "serve: HTTP round trip, keep-alive",
        "plugin load: compile",
        "plugin load: from the compile cache",
        "infinite loop: run time past its 100 ms deadline",
        "compile, cranelift: Rust guest",
        "compile, winch: Rust guest",
        "first event, process, fresh cache (winch now, cranelift detached): Rust guest",
        "first event, process, after compile-ahead: Rust guest",
        "per call, cranelift's code: Rust guest",
        "per call, winch's code: Rust guest",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:#?}"
        );
    }
    assert!(names.iter().any(|n| n.starts_with("throughput: wasm hook")));
    // Page faults per event: counted where the hook runs on the measuring
    // thread, left out where it runs in another process.
    let faults = |name: &str| {
        let case = cases.iter().find(|c| c["name"] == name).unwrap();
        case.get("faults_per_event").cloned()
    };
    assert!(faults("wasm hook, fresh instance (engine.dispatch)").is_some_and(|f| f.is_f64()));
    assert!(faults("inline rule hook").is_some_and(|f| f.is_f64()));
    for elsewhere in [
        "command hook: /bin/true",
        "serve: HTTP round trip, keep-alive",
    ] {
        assert_eq!(faults(elsewhere), None, "{elsewhere}");
    }
    // Each compile's peak memory, from its process.
    for compiler in ["cranelift", "winch"] {
        let name = format!("compile, {compiler}: Rust guest");
        let case = cases.iter().find(|c| c["name"] == name.as_str()).unwrap();
        assert!(case["peak_kb"].as_u64().unwrap() > 0, "{case}");
    }
    for case in &cases {
        assert!(case["n"].as_u64().unwrap() > 0, "{case}");
        assert!(case["p50_us"].as_f64().unwrap() > 0.0, "{case}");
        assert!(
            case["p99_us"].as_f64().unwrap() >= case["p50_us"].as_f64().unwrap(),
            "{case}"
        );
    }
}
