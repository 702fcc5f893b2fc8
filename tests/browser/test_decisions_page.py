"""The live decisions page in a real browser (#45): Debian's Chromium,
driven by Playwright for Python through `executable_path` (Playwright
downloads no browser). A real `wasm-hooks serve` on 127.0.0.1 decides
events posted to it; the page shows each as it comes, its filters narrow
them, a dry run's would-deny is marked, what an event holds is shown as
text (never run as HTML), the replay report it was given is shown, and
the page and its stream need the token.

Run by the README's test command:
    WASM_HOOKS_BIN=target/debug/wasm-hooks pytest tests/browser
The screenshot is kept in target/browser/decisions-page.png (the docs'
copy is docs/images/decisions-page.png).
"""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import subprocess
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect, sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("WASM_HOOKS_BIN", str(ROOT / "target" / "debug" / "wasm-hooks"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SESSION = ROOT / "tests" / "fixtures" / "sessions" / "claude-code-2.1.332"
# What a headless Chromium needs on a machine with no network but
# loopback: no background traffic, no first-run, no sandbox as root.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

HOOKS = {
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "inline", "name": "no-rm-rf", "on_failure": "block", "rules": [
                    {"field": "tool_input.command", "operator": "contains", "value": "rm -rf",
                     "action": "deny", "reason": "no rm -rf here"}]}]},
            {"matcher": "Write|Edit", "hooks": [
                {"type": "inline", "name": "env-guard-trial", "enforcement": "dryrun", "rules": [
                    {"field": "tool_input.file_path", "operator": "ends_with", "value": ".env",
                     "action": "deny", "reason": "no writes to .env"}]}]},
        ]
    }
}


class Served:
    """A `wasm-hooks serve` on a free loopback port, stopped at the end."""

    def __init__(self, folder: pathlib.Path):
        hooks = folder / "hooks.json"
        hooks.write_text(json.dumps(HOOKS))
        self.token = secrets.token_hex(16)
        env = {**os.environ, "PAGE_TOKEN": self.token, "XDG_CONFIG_HOME": str(folder / "config"),
               "XDG_STATE_HOME": str(folder / "state"), "WASM_HOOKS_DAEMON": "off"}
        # The same hooks over Claude Code's recorded session, for the page.
        report = folder / "replay.json"
        report.write_text(subprocess.run(
            [BIN, "replay", "--json", "--config", str(hooks), "--agent", "claude", str(SESSION)],
            env=env, check=True, capture_output=True, text=True).stdout)
        self.process = subprocess.Popen(
            [BIN, "serve", "--listen", "127.0.0.1:0", "--token-env", "PAGE_TOKEN", "--config", str(hooks),
             "--project-dir", str(folder), "--replay", str(report)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        line = self.process.stdout.readline().strip()
        assert line.startswith("listening on http://"), line
        self.address = line.removeprefix("listening on ")

    def decide(self, session: str, tool: str, tool_input: dict) -> dict:
        event = {"hook_event_name": "PreToolUse", "session_id": session, "cwd": "/work/app",
                 "tool_name": tool, "tool_input": tool_input}
        request = urllib.request.Request(
            self.address + "/v1/decide", data=json.dumps(event).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture()
def served(tmp_path):
    server = Served(tmp_path)
    yield server
    server.stop()


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


def test_the_page_and_its_stream_need_the_token(served):
    assert status_of(served.address + "/ui") == 401
    assert status_of(served.address + "/v1/decisions") == 401
    assert status_of(served.address + "/ui?token=" + "0" * 32) == 401


def test_decisions_appear_live_filters_narrow_them_and_a_dry_run_is_marked(served):
    assert served.decide("s-1", "Bash", {"command": "ls -la"})["decision"] == "proceed"
    assert served.decide("s-1", "Bash", {"command": "rm -rf build"})["decision"] == "deny"
    # The dry run would deny, and does not.
    assert served.decide("s-2", "Write", {"file_path": "/work/app/.env", "content": "T=1"})["decision"] == "proceed"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(served.address + "/ui?token=" + served.token)
        assert "token" not in page.url, "the token leaves the address bar"
        rows = page.get_by_test_id("decision")
        expect(rows).to_have_count(3)
        # A decision made while the page is open appears.
        hostile = '<img src=x onerror="document.title=\'pwned\'">'
        served.decide("s-2", "Bash", {"command": hostile})
        expect(rows).to_have_count(4)
        expect(page.get_by_text(hostile)).to_have_count(1)
        assert page.title() != "pwned", "what an event holds is text, never HTML"
        # Filters narrow.
        page.get_by_test_id("filter-decision").select_option("deny")
        expect(rows).to_have_count(2)  # the deny, and the dry run's would-deny
        page.get_by_test_id("filter-decision").select_option("")
        page.get_by_test_id("filter-session").select_option("s-1")
        expect(rows).to_have_count(2)
        page.get_by_test_id("filter-session").select_option("")
        page.get_by_test_id("filter-dryrun").check()
        expect(rows).to_have_count(1)
        expect(rows.first.get_by_test_id("dryrun-badge")).to_have_text("dry run: would deny")
        expect(rows.first).to_contain_text(".env")
        page.get_by_test_id("filter-dryrun").uncheck()
        page.get_by_test_id("filter-hook").select_option("env-guard-trial")
        expect(rows).to_have_count(1)
        page.get_by_test_id("filter-hook").select_option("")
        # Per hook: the would-deny counted apart from the deny.
        trial = page.get_by_test_id("hook-row").filter(has_text="env-guard-trial")
        expect(trial.locator("td").nth(2)).to_have_text("0")
        expect(trial.locator("td").nth(3)).to_have_text("1")
        guard = page.get_by_test_id("hook-row").filter(has_text="no-rm-rf")
        expect(guard.locator("td").nth(2)).to_have_text("1")
        # The replay the server was given: the .env write ran in the
        # recorded session, and the trial guard would have denied it.
        expect(page.get_by_test_id("replay")).to_be_visible()
        replayed = page.get_by_test_id("replay-row").filter(has_text="env-guard-trial")
        expect(replayed.locator("td").nth(2)).to_have_text("1")
        expect(replayed.locator("td").nth(3)).to_have_text("1")
        shots = ROOT / "target" / "browser"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "decisions-page.png"), full_page=True)
        browser.close()
