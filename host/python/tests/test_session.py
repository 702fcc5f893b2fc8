"""The session layer from Python: approvals by callback, context within
its budget, messages, the audit log."""

from __future__ import annotations

import asyncio
import json
import subprocess

from conftest import CLI, bash, hooks_text
from wasm_hooks import Session

ASK_ON_PUSH = hooks_text("ask-on-push.yaml")


def test_an_ask_is_answered_by_the_approval_callback(engine_of, hook_file):
    engine = engine_of(hook_file(ASK_ON_PUSH))
    asked = []

    def approve(request):
        asked.append(request)
        return answers.pop(0)

    session = Session(engine, "s1", approve=approve)
    answers = ["Allow once", "Deny", False, None]
    allowed = session.before_tool("Bash", {"command": "git push"})
    assert allowed.outcome.decision == "allow"
    assert allowed.approval["decided_by"] == "person" and allowed.approval["choice"] == "allow_once"
    assert asked[0]["prompt"] == "The agent wants to push. Allow it?" and asked[0]["hook"] == "confirm-push"
    assert session.before_tool("Bash", {"command": "git push"}).denied
    assert session.before_tool("Bash", {"command": "git push"}).denied
    unanswered = session.before_tool("Bash", {"command": "git push"})
    assert unanswered.denied and unanswered.approval["decided_by"] == "unanswered"
    assert len(asked) == 4
    assert not session.before_tool("Bash", {"command": "ls"}).denied


def test_allow_always_is_remembered_and_an_async_callback_runs_on_the_loop(engine_of, hook_file):
    engine = engine_of(hook_file(ASK_ON_PUSH))
    asked = []

    async def approve(request):
        await asyncio.sleep(0)
        asked.append(asyncio.get_running_loop())
        return "allow_always"

    session = Session(engine, "s2", approve=approve)

    async def agent():
        first = await session.dispatch_async(bash("git push"))
        second = await session.dispatch_async(bash("git push"))
        return first, second, asyncio.get_running_loop()

    first, second, loop = asyncio.run(agent())
    assert first.approval["decided_by"] == "person" and second.approval["decided_by"] == "cache"
    assert asked == [loop]


def test_an_approval_callback_that_raises_denies(engine_of, hook_file):
    engine = engine_of(hook_file(ASK_ON_PUSH))

    def approve(request):
        raise RuntimeError("no terminal")

    assert Session(engine, "s3", approve=approve).before_tool("Bash", {"command": "git push"}).denied
    assert Session(engine, "s4").before_tool("Bash", {"command": "git push"}).denied, "no callback: the default"


def test_context_is_kept_within_the_cap_and_the_turns_budget(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    engine.register("UserPromptSubmit", lambda e: {"action": "inject_context",
                    "context_injection": "remember: " + e["prompt"]}, name="memory")
    session = Session(engine, "s5", max_injection_bytes=64, turn_budget_tokens=8)
    first = session.prompt_submitted("tests first")
    assert first.injections[0]["status"]["status"] == "queued"
    over = session.dispatch({"hook_event_name": "UserPromptSubmit", "prompt": "and lint after"})
    assert over.injections[0]["status"]["status"] == "over_budget"
    refused = session.dispatch({"hook_event_name": "UserPromptSubmit", "prompt": "x" * 100})
    assert refused.injections[0]["status"]["status"] == "refused"
    messages = session.flush_context()
    assert len(messages) == 1 and messages[0]["role"] == "system"
    assert "remember: tests first" in messages[0]["text"] and "and lint after" in messages[0]["text"]
    assert "x" * 100 not in messages[0]["text"]
    assert messages[0]["sources"][0]["hook"] == "memory"
    assert session.flush_context() == []
    session.begin_turn()
    assert session.prompt_submitted("again").injections[0]["status"]["status"] == "queued"


def test_messages_go_to_the_display_callback(engine_of, hook_file):
    engine = engine_of(hook_file("hooks: {}"))
    engine.register("PreToolUse", lambda e: {"action": "continue", "user_message": "careful",
                    "user_message_level": "warning"}, name="nanny")
    shown = []
    session = Session(engine, "s6", display=lambda kind, source, payload: shown.append((kind, source, payload)))
    session.before_tool("Bash", {"command": "ls"})
    assert ("message", "nanny", {"severity": "warning", "text": "careful"}) in shown


def test_every_step_is_in_the_audit_log(engine_of, hook_file, tmp_path):
    log = tmp_path / "audit.jsonl"
    engine = engine_of(hook_file(), audit_log=log)
    session = Session(engine, "s7")
    assert session.before_tool("Bash", {"command": "rm -rf /"}).denied
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert any("deny-dangerous-commands" in json.dumps(r) for r in records)
    verified = subprocess.run([str(CLI), "audit", "verify", str(log)], capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
