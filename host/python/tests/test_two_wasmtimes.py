"""Two wasmtimes in one process: ours (48) and amplifier-core's (44),
each with its signal handlers, installed in either order. Each runs a
component that traps: in ours a hook failure (the guard denies), in
amplifier's a RuntimeError, and the process lives on. Each order runs in
a process of its own: signal handlers are process-wide and stay."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, hooks_text

TRAP = ROOT / "host" / "python" / "tests" / "amplifier_trap"

SCRIPT = textwrap.dedent("""
    import asyncio, json, os, pathlib, sys
    import amplifier_core
    import amplifier_core._engine as amplifier
    from wasm_hooks import Engine

    order, hooks, module, work = sys.argv[1], sys.argv[2], sys.argv[3], pathlib.Path(sys.argv[4])
    report = {"amplifier": [], "ours": []}

    def amplifier_runs_its_trap():
        # amplifier-core's own wasmtime loads the component (running its
        # get-spec), then its execute traps.
        coordinator = amplifier_core.ModuleCoordinator()
        amplifier.load_and_mount_wasm(coordinator, module)
        tool = coordinator.get("tools")["trap"]

        async def execute():
            try:
                await tool.execute({"x": 1})
                report["amplifier"].append("ran")
            except RuntimeError as error:
                report["amplifier"].append(str(error))

        asyncio.run(execute())

    def ours_run_its_trap(engine):
        outcome = engine.decide({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                                 "tool_input": {"command": "ls"}})
        report["ours"].append([outcome.decision, outcome.reason])

    if order == "amplifier-first":
        amplifier_runs_its_trap()
    engine = Engine([hooks], project_dir=work, cache_dir=work / "cache")
    ours_run_its_trap(engine)
    amplifier_runs_its_trap()
    ours_run_its_trap(engine)
    print(json.dumps(report), flush=True)
    # amplifier-core 2.0.2 may crash in interpreter finalization after an
    # async tool call (PyO3/pyo3-async-runtimes#40), trap or none: end here.
    os._exit(0)
""")


@pytest.fixture(scope="session")
def amplifier_trap_module(tmp_path_factory):
    """Amplifier's module of a tool whose `execute` traps, from its WAT
    (wasmtime-py's wat2wasm reads component text; it starts no engine)."""
    import wasmtime

    module = tmp_path_factory.mktemp("amplifier-trap")
    (module / "amplifier.toml").write_text((TRAP / "amplifier.toml").read_text())
    (module / "trap.wasm").write_bytes(bytes(wasmtime.wat2wasm((TRAP / "trap.wat").read_text())))
    return module


@pytest.mark.parametrize("order", ["amplifier-first", "ours-first"])
def test_both_wasmtimes_run_a_component_and_trap_cleanly(order, hook_file, tmp_path, amplifier_trap_module):
    hooks = hook_file(hooks_text("trap.yaml"))
    ran = subprocess.run([sys.executable, "-c", SCRIPT, order, str(hooks), str(amplifier_trap_module), str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, f"the process died ({ran.returncode}):\n{ran.stderr}"
    report = json.loads(ran.stdout)
    assert len(report["amplifier"]) == (2 if order == "amplifier-first" else 1)
    assert len(report["ours"]) == 2, "ours ran before and after amplifier's"
    for error in report["amplifier"]:
        assert "WASM execute failed" in error and "wasm backtrace" in error, error
    for decision, reason in report["ours"]:
        assert decision == "deny" and "trap" in reason.lower(), reason
