"""The Python example agent (examples/python-agent): each of its three
guards stops an `rm -rf`, an approval is answered by its callback, and
the hooks' context reaches its model within budget."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

AGENT = ROOT / "examples" / "python-agent" / "agent.py"


def run_agent(tmp_path, approve):
    ran = subprocess.run(
        [sys.executable, str(AGENT), "--json", "--approve", approve, "--work-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_each_guard_stops_an_rm_rf_and_the_approval_decides_the_push(tmp_path, plugins):
    record = run_agent(tmp_path, "allow")
    denied = {step["command"]: step["denied_by"] for step in record if "denied_by" in step}
    assert denied == {
        "rm -rf /": "deny-dangerous-commands",
        "rm -rf .git": "keep-git-history",
        "sudo rm -rf build": "no-sudo",
    }
    assert (tmp_path / ".git").is_dir() and (tmp_path / "build").is_dir()
    push = next(step for step in record if step.get("command") == "git push")
    assert push["approved_by"] == "person"
    assert (tmp_path / "notes.txt").read_text() == "done\n"
    assert record[-1]["context_sent"] == ["Conventions: notes go in notes.txt."]


def test_a_refused_approval_stops_the_push(tmp_path, plugins):
    record = run_agent(tmp_path, "deny")
    push = next(step for step in record if step.get("command") == "git push")
    assert push["denied_by"] == "confirm-push"
