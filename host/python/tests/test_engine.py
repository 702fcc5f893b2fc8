"""The engine from Python: dialects, functions as hooks, errors, threads."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import subprocess
import threading
from collections.abc import Mapping

import pytest

import wasm_hooks
from conftest import CLI, ROOT, bash, hooks_text
from wasm_hooks import Engine, EventError, HookFileError, RegistrationError

FIXTURES = ROOT / "tests" / "fixtures"


def fixture(agent_dir: str, name: str) -> dict:
    return json.loads((FIXTURES / agent_dir / f"{name}.json").read_text())


def test_the_wasm_guard_denies_rm_rf_and_lets_ls_by(hook_file, engine_of):
    engine = engine_of(hook_file())
    denied = engine.decide(bash("rm -rf /"))
    assert denied.denied and denied.decided_by == "deny-dangerous-commands"
    assert "rm -rf /" in denied.reason
    allowed = engine.decide(bash("ls -la"))
    assert allowed.decision == "proceed" and not allowed.denied
    assert [t["hook"] for t in allowed.trace] == ["deny-dangerous-commands"]


def test_the_inline_rule_denies_writes_to_env(hook_file, engine_of):
    engine = engine_of(hook_file())
    write = {"hook_event_name": "PreToolUse", "tool_name": "Write",
             "tool_input": {"file_path": "app/.env", "content": "KEY=1"}}
    outcome = engine.decide(write)
    assert outcome.denied and outcome.decided_by == "no-env-writes"


def test_each_agents_dialect_is_read_and_answered(hook_file, engine_of):
    engine = engine_of(hook_file())
    claude = fixture("claude-code-2.1.330", "PreToolUse")
    claude["tool_input"]["command"] = "rm -rf /"
    assert engine.decide(claude, agent="claude").denied
    answer = engine.answer(claude, "claude")
    assert answer.body["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answer.exit_code == 0
    gemini = fixture("gemini-cli-0.61", "BeforeTool")
    gemini["tool_input"]["command"] = "rm -rf /"
    assert engine.decide(gemini, agent="gemini").decided_by == "deny-dangerous-commands"
    assert engine.answer(gemini, "gemini").body["decision"] == "deny"
    canonical = engine.answer(bash("rm -rf /"), "canonical").body
    assert canonical["decision"] == "deny" and canonical["trace"]
    assert set(wasm_hooks.PROTOCOLS) == {"claude", "codex", "gemini", "copilot", "cursor", "opencode", "canonical"}


def test_a_python_function_is_a_hook_folded_with_the_files(hook_file, engine_of):
    engine = engine_of(hook_file())
    seen = []

    @engine.hook("PreToolUse", matcher="Bash", name="no-sudo")
    def no_sudo(event):
        seen.append(event["tool_input"]["command"])
        if event["tool_input"]["command"].startswith("sudo"):
            return {"decision": "deny", "reason": "no sudo here"}
        return None

    outcome = engine.decide(bash("sudo ls"))
    assert outcome.denied and outcome.decided_by == "no-sudo" and outcome.reason == "no sudo here"
    assert engine.decide(bash("ls")).decision == "proceed"
    engine.decide({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "a"}})
    assert seen == ["sudo ls", "ls"], "the matcher keeps it to Bash"
    assert [h["name"] for h in engine.hooks()] == ["deny-dangerous-commands", "no-env-writes", "no-sudo"]


def test_a_function_reads_the_record_as_a_read_only_mapping(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    seen = {}

    def look(event):
        seen.update(
            mapping=isinstance(event, Mapping), tool=event["tool_name"], got=event.get("nope", "dflt"),
            has="tool_input" in event and "nope" not in event and 3 not in event,
            plain=dict(event), as_json=json.loads(json.dumps(event.to_dict())),
            equal=event == event.to_dict(), length=len(event), keys=sorted(event),
        )
        event["tool_input"]["command"] = "changed"  # a copy: the call is changed by answers only
        with pytest.raises(KeyError):
            event["nope"]
        with pytest.raises(TypeError):
            event["tool_name"] = "Read"

    engine.register("PreToolUse", look, name="look")
    outcome = engine.decide(bash("ls"))
    assert outcome.decision == "proceed" and outcome.updated_input is None
    assert seen["mapping"] and seen["tool"] == "Bash" and seen["got"] == "dflt" and seen["has"]
    assert seen["plain"]["tool_input"] == {"command": "ls"} == seen["as_json"]["tool_input"]
    assert seen["equal"] and seen["length"] == len(seen["keys"]) and "hook_event_name" in seen["keys"]


def test_every_answer_shape_a_hook_file_knows_is_read_from_a_function(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    shapes = [
        {"decision": "deny", "reason": "no"},
        {"action": "deny", "reason": "no"},
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                "permissionDecisionReason": "no"}},
    ]
    for shape in shapes:
        registration = engine.register("tool:pre", lambda event, shape=shape: shape)
        outcome = engine.decide(bash("ls"))
        assert outcome.denied and outcome.reason == "no", shape
        assert registration.unregister() and not registration.unregister()
    assert engine.decide(bash("ls")).decision == "proceed", "every function was taken back"


def test_rewrites_chain_in_priority_order_and_a_deny_short_circuits(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    engine.register("PreToolUse", lambda e: {"action": "modify",
                    "modified_args": {"command": e["tool_input"]["command"] + " --b"}}, priority=2, name="b")
    engine.register("PreToolUse", lambda e: {"action": "modify",
                    "modified_args": {"command": e["tool_input"]["command"] + " --a"}}, priority=1, name="a")
    outcome = engine.decide(bash("ls"))
    assert outcome.updated_input == {"command": "ls --a --b"}
    later = []
    engine.register("PreToolUse", lambda e: {"decision": "deny", "reason": "first"}, priority=-1, name="first")
    engine.register("PreToolUse", lambda e: later.append(e), priority=5, name="later")
    outcome = engine.decide(bash("ls"))
    assert outcome.denied and outcome.decided_by == "first"
    assert later == [], "a deny short-circuits the hooks after it"


def test_a_function_that_raises_blocks_unless_its_on_failure_says_otherwise(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))

    def broken(event):
        raise ValueError("the guard is broken")

    registration = engine.register("PreToolUse", broken, name="broken")
    outcome = engine.decide(bash("ls"))
    assert outcome.denied and "ValueError: the guard is broken" in outcome.reason
    registration.unregister()
    engine.register("PreToolUse", broken, name="broken", on_failure="warn")
    outcome = engine.decide(bash("ls"))
    assert outcome.decision == "proceed"
    assert "the guard is broken" in outcome.system_messages[0]["value"]
    assert outcome.failures and outcome.failures[0]["hook"] == "broken"


def test_an_answer_that_does_not_read_is_a_failure_naming_the_field(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    engine.register("PreToolUse", lambda e: {"action": "explode"}, name="odd")
    outcome = engine.decide(bash("ls"))
    assert outcome.denied and "invalid answer" in outcome.reason and "action" in outcome.reason
    engine.register("PreToolUse", lambda e: {"x": object()}, name="not-json", priority=-1)
    assert "not JSON" in engine.decide(bash("ls")).reason


def test_async_functions_run_on_the_callers_loop_and_sync_decide_runs_them_too(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    loops = []

    async def careful(event):
        await asyncio.sleep(0)
        loops.append(asyncio.get_running_loop())
        return {"decision": "deny", "reason": "async says no"}

    engine.register("PreToolUse", careful)

    async def agent():
        outcome = await engine.decide_async(bash("ls"))
        return outcome, asyncio.get_running_loop()

    outcome, caller_loop = asyncio.run(agent())
    assert outcome.reason == "async says no"
    assert loops == [caller_loop]
    assert engine.decide(bash("ls")).reason == "async says no", "sync decide runs it on a loop of its own"


def test_the_event_loop_stays_free_while_hooks_run(engine_of, hook_file):
    engine = engine_of(hook_file(hooks_text("slow-command.yaml")))

    async def agent():
        ticks = 0
        decided = asyncio.ensure_future(engine.decide_async(bash("ls")))
        while not decided.done():
            ticks += 1
            await asyncio.sleep(0.01)
        return await decided, ticks

    outcome, ticks = asyncio.run(agent())
    assert outcome.decision == "proceed"
    assert ticks > 1, "the loop ran other work while the hook slept"


def test_the_gil_is_released_while_hooks_run(engine_of, hook_file):
    engine = engine_of(hook_file(hooks_text("slow-command.yaml")))
    counted = [0]
    started, finished = threading.Event(), threading.Event()

    def count():
        started.set()
        while not finished.is_set():
            counted[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    started.wait()
    before = counted[0]
    engine.decide(bash("ls"))
    during = counted[0] - before
    finished.set()
    counter.join()
    assert during > 1000, "another Python thread ran while the hook slept"


def test_threads_decide_at_once(hook_file, engine_of):
    engine = engine_of(hook_file())
    results = []

    def agent(n):
        for i in range(25):
            command = "rm -rf /" if (n + i) % 2 else f"echo {n}"
            results.append((command, engine.decide(bash(command)).denied))

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 200
    assert all(denied == (command == "rm -rf /") for command, denied in results)


def test_a_broken_hook_file_raises_naming_the_file_and_line(engine_of, tmp_path):
    broken = tmp_path / "hooks.yaml"
    broken.write_text("hooks:\n  PreToolUse:\n    - hooks:\n        - type: wasm\n          plugin: 12\n          fuel: x\n")
    with pytest.raises(HookFileError) as raised:
        engine_of(broken)
    problem = raised.value.problems[0]
    assert problem.file == str(broken) and problem.line is not None
    assert str(broken) in str(raised.value)


def test_events_that_do_not_read_raise_naming_the_field(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    with pytest.raises(EventError, match="PreToolUze"):
        engine.decide({"hook_event_name": "PreToolUze"})
    with pytest.raises(EventError, match="tool_name"):
        engine.decide({"hook_event_name": "PreToolUse", "tool_name": 5})
    with pytest.raises(EventError, match="agent"):
        engine.decide(bash("ls"), agent="vim")
    with pytest.raises(ValueError):
        engine.decide("not an object")


def test_registrations_that_do_not_read_raise(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    with pytest.raises(RegistrationError, match="PreToolUse"):
        engine.register("PreToolUze", lambda e: None)
    with pytest.raises(RegistrationError, match="matcher"):
        engine.register("PreToolUse", lambda e: None, matcher="(")
    with pytest.raises(RegistrationError, match="on_failure"):
        engine.register("PreToolUse", lambda e: None, on_failure="maybe")
    with pytest.raises(RegistrationError, match="callable"):
        engine.register("PreToolUse", "not a function")


def test_a_blocking_call_from_inside_a_hook_is_refused_not_a_deadlock(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    engine.register("PreToolUse", lambda e: engine.decide(bash("ls")) and None, name="reentrant")
    outcome = engine.decide(bash("ls"))
    assert outcome.denied and "_async" in outcome.reason


def test_without_files_the_engine_reads_layers_and_trust_as_the_cli_does(tmp_path, monkeypatch, cache_dir):
    # The person's layer (their config dir) always runs; the project's
    # command hook only once the person trusted the project (`wasm-hooks
    # trust`, recorded in their state dir, which the engine reads too).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    user = tmp_path / "config"
    (user / "wasm-hooks").mkdir(parents=True)
    (user / "wasm-hooks" / "hooks.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - hooks:\n        - type: inline\n          name: persons-rule\n"
        "          rules: [{field: tool_input.command, operator: contains, value: sudo, action: deny,"
        " reason: no sudo}]\n")
    project = tmp_path / "project"
    (project / ".wasm-hooks").mkdir(parents=True)
    (project / ".wasm-hooks" / "hooks.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          name: projects-guard\n"
        "          command: \"printf '{\\\"decision\\\": \\\"deny\\\", \\\"reason\\\": \\\"project says no\\\"}'\"\n")

    def engine():
        return Engine(project_dir=project, user_config_dir=user, managed_dir=tmp_path / "managed",
                      cache_dir=cache_dir)

    untrusted = engine()
    assert untrusted.decide(bash("sudo ls")).decided_by == "persons-rule"
    assert untrusted.decide(bash("ls")).decision == "proceed", "an untrusted project's command does not run"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    subprocess.run([str(CLI), "trust", "--yes", "--project-dir", str(project)], env=env, check=True,
                   capture_output=True)
    trusted = engine().decide(bash("ls"))
    assert trusted.decided_by == "projects-guard" and trusted.reason == "project says no"
