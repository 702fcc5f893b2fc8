"""wasm-hooks in Amplifier, tested against the real `amplifier-core` from
PyPI: its coordinator and session run our module, and our registry speaks
its hook API."""

from __future__ import annotations

import asyncio
import sys
import textwrap

import pytest
from amplifier_core import AmplifierSession, ModuleCoordinator
from amplifier_core.models import HookResult

from conftest import bash
from wasm_hooks import EventError
from wasm_hooks.amplifier import HookRegistry, mount

SHELL_CALLS = [{"command": "rm -rf /"}, {"command": "echo fine"}]

MODULES = {
    # An orchestrator as Amplifier's loop-basic treats a tool call: emit
    # tool:pre, let the coordinator process the result, run or refuse.
    "amplifier_module_loop_guarded": """
        class Loop:
            async def execute(self, prompt, context, providers, tools, hooks, coordinator=None, **kw):
                provider = next(iter(providers.values()))
                response = await provider.complete({"prompt": prompt})
                said = []
                for call in response.tool_calls or []:
                    data = {"tool_name": call.name, "tool_input": call.arguments, "parallel_group_id": "g1"}
                    pre = await hooks.emit("tool:pre", data)
                    pre = await coordinator.process_hook_result(pre, "tool:pre", call.name)
                    if pre.action == "deny":
                        said.append(f"Denied by hook: {pre.reason}")
                        continue
                    result = await tools[call.name].execute(call.arguments)
                    said.append(f"ran: {result.output}")
                return "\\n".join(said)

        async def mount(coordinator, config):
            await coordinator.mount("orchestrator", Loop())
    """,
    # The model: asks for two shell commands.
    "amplifier_module_provider_scripted": """
        from amplifier_core.message_models import ChatResponse, TextBlock, ToolCall

        class Scripted:
            name = "scripted"
            async def complete(self, request, **kw):
                return ChatResponse(content=[TextBlock(text="cleaning up")], tool_calls=[
                    ToolCall(id="1", name="bash", arguments={"command": "rm -rf /"}),
                    ToolCall(id="2", name="bash", arguments={"command": "echo fine"}),
                ])

        async def mount(coordinator, config):
            await coordinator.mount("providers", Scripted(), name="scripted")
    """,
    "amplifier_module_tool_shell": """
        from amplifier_core.models import ToolResult
        RAN = []

        class Bash:
            name = "bash"
            description = "runs a shell command (recorded, not run)"
            input_schema = {"type": "object"}
            async def execute(self, input):
                RAN.append(input["command"])
                return ToolResult(success=True, output=input["command"])

        async def mount(coordinator, config):
            await coordinator.mount("tools", Bash(), name="bash")
    """,
    "amplifier_module_context_plain": """
        from amplifier_core.testing import MockContextManager

        async def mount(coordinator, config):
            await coordinator.mount("context", MockContextManager())
    """,
}


@pytest.fixture
def amplifier_modules(tmp_path, monkeypatch):
    """The session's other modules, importable by id."""
    for name, source in MODULES.items():
        package = tmp_path / "modules" / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path / "modules"))
    yield
    for name in MODULES:
        sys.modules.pop(name, None)


def test_an_amplifier_sessions_tool_call_is_denied_by_the_wasm_guard(
    amplifier_modules, hook_file, tmp_path, cache_dir
):
    config = {
        "session": {"orchestrator": "loop-guarded", "context": "context-plain"},
        "providers": [{"module": "provider-scripted"}],
        "tools": [{"module": "tool-shell"}],
        # Found by its entry point `hooks-wasm` (group `amplifier.modules`).
        "hooks": [{"module": "hooks-wasm", "config": {
            "files": [str(hook_file())], "project_dir": str(tmp_path), "cache_dir": str(cache_dir)}}],
    }

    async def run():
        session = AmplifierSession(config)
        await session.initialize()
        try:
            return await session.execute("clean the disk"), session.coordinator.hooks.list_handlers()
        finally:
            await session.cleanup()

    said, handlers = asyncio.run(run())
    from amplifier_module_tool_shell import RAN

    assert RAN == ["echo fine"], "the guard stopped rm -rf; the other command ran"
    assert "Denied by hook: " in said and "rm -rf /" in said and "ran: echo fine" in said
    assert "wasm-hooks:tool:pre" in handlers["tool:pre"]


def test_mount_answers_through_amplifiers_coordinator(hook_file, tmp_path, cache_dir):
    async def run():
        coordinator = ModuleCoordinator()
        cleanup = await mount(coordinator, {"files": [str(hook_file())], "project_dir": str(tmp_path),
                                            "cache_dir": str(cache_dir)})
        results = []
        for command in ("rm -rf /", "ls"):
            result = await coordinator.hooks.emit("tool:pre", {"tool_name": "bash", "tool_input": {"command": command}})
            results.append(await coordinator.process_hook_result(result, "tool:pre", "bash"))
        write = await coordinator.hooks.emit(
            "tool:pre", {"tool_name": "write_file", "tool_input": {"file_path": ".env", "content": "K=1"}})
        cleanup()
        after = await coordinator.hooks.emit("tool:pre", {"tool_name": "bash", "tool_input": {"command": "rm -rf /"}})
        return results, write, after

    (denied, allowed), write, after = asyncio.run(run())
    assert denied.action == "deny" and "rm -rf /" in denied.reason
    assert allowed.action == "continue"
    assert write.action == "deny" and "secrets" in write.reason, "write_file is the catalogue's Write"
    assert after.action == "continue", "cleanup unregistered every handler"


def test_a_failure_of_wasm_hooks_denies_a_guarded_call_in_amplifier(hook_file, tmp_path, cache_dir):
    # An event wasm-hooks cannot read raises inside mount's handler; Amplifier
    # would skip a raising handler (the call goes by): ours answers instead.
    async def run():
        coordinator = ModuleCoordinator()
        cleanup = await mount(coordinator, {"files": [str(hook_file())], "project_dir": str(tmp_path),
                                            "cache_dir": str(cache_dir)})
        unreadable = {"tool_name": 5, "tool_input": {"command": "rm -rf /"}}
        guarded = await coordinator.hooks.emit("tool:pre", unreadable)
        unguarded = await coordinator.hooks.emit("session:start", {"cwd": 7})
        cleanup()
        return guarded, unguarded

    guarded, unguarded = asyncio.run(run())
    assert guarded.action == "deny" and "EventError" in guarded.reason and "tool_name" in guarded.reason
    # Not a guarded event: it goes on (Amplifier's fold keeps no message of a
    # `continue`; the warning `_failure` writes is checked directly).
    assert unguarded.action == "continue"
    from wasm_hooks.amplifier import _failure

    assert "EventError" in _failure("session:start", EventError("x")).user_message


def test_the_registry_speaks_amplifiers_hook_api(hook_file, engine_of):
    registry = HookRegistry(engine_of(hook_file()))
    calls = []

    def audit(event, data):
        calls.append((event, data["tool_name"], data["tool_input"]["command"]))

    async def rewrite(event, data):
        return HookResult(action="modify", data={**data, "tool_input": {"command": data["tool_input"]["command"] + " -v"}})

    def context(event, data):
        return {"action": "inject_context", "context_injection": "lint is clean"}

    registry.register("tool:pre", audit, priority=-10, name="audit")
    unregister = registry.register(registry.TOOL_PRE, rewrite, priority=5, name="verbose")
    registry.register("prompt:submit", context, name="ctx")
    assert registry.list_handlers() == {"tool:pre": ["audit", "verbose"], "prompt:submit": ["ctx"]}

    async def run():
        return [
            await registry.emit("tool:pre", {"tool_name": "bash", "tool_input": {"command": "rm -rf /"}}),
            await registry.emit("tool:pre", {"tool_name": "bash", "tool_input": {"command": "ls"}}),
            await registry.emit("prompt:submit", {"prompt": "hi"}),
        ]

    denied, modified, injected = asyncio.run(run())
    assert isinstance(denied, HookResult) and denied.action == "deny"
    assert modified.action == "modify" and modified.data["tool_input"] == {"command": "ls -v"}
    assert modified.data["tool_name"] == "bash", "Amplifier's tool name comes back"
    assert injected.action == "inject_context" and injected.context_injection == "lint is clean"
    # The rewrite is shown again to the hooks before it: a guard sees what will run.
    assert calls == [("tool:pre", "bash", "rm -rf /"), ("tool:pre", "bash", "ls"), ("tool:pre", "bash", "ls -v")]
    unregister()
    assert registry.list_handlers("tool:pre") == {"tool:pre": ["audit"]}


def test_an_amplifier_handler_that_raises_denies_instead_of_being_skipped(hook_file, engine_of):
    registry = HookRegistry(engine_of(hook_file("hooks: {}")))

    def broken(event, data):
        raise KeyError("tool_input")

    registry.register("tool:pre", broken, name="broken")
    result = asyncio.run(registry.emit("tool:pre", {"tool_name": "bash", "tool_input": {"command": "ls"}}))
    assert result.action == "deny" and "KeyError" in result.reason


def test_ask_user_carries_the_approval_amplifier_asks_for(hook_file, engine_of):
    registry = HookRegistry(engine_of(hook_file("hooks: {}")))
    registry.register("tool:pre", lambda e, d: HookResult(
        action="ask_user", approval_prompt="Push?", approval_options=["Allow", "Deny"], approval_default="deny"))
    result = asyncio.run(registry.emit("tool:pre", {"tool_name": "bash", "tool_input": bash("git push")["tool_input"]}))
    assert result.action == "ask_user" and result.approval_prompt == "Push?"
    assert result.approval_options == ["Allow", "Deny"] and result.approval_default == "deny"
