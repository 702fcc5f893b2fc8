"""A small agent loop with wasm-hooks inside: a scripted model on
127.0.0.1, a shell tool, and three guards that each stop an `rm -rf`
(the deny-dangerous-commands wasm plugin, an inline rule, a Python
function), an approval answered by a callback, and a context injection
within the turn's budget.

    python examples/python-agent/agent.py --approve allow

prints what happened, one line per step (`--json` for a record).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from wasm_hooks import Engine, Session

HERE = pathlib.Path(__file__).resolve().parent

#: What the scripted model asks for, one turn at a time.
SCRIPT = [
    {"tool": "Bash", "input": {"command": "rm -rf /"}},
    {"tool": "Bash", "input": {"command": "rm -rf .git"}},
    {"tool": "Bash", "input": {"command": "sudo rm -rf build"}},
    {"tool": "Bash", "input": {"command": "git push"}},
    {"tool": "Bash", "input": {"command": "echo done > notes.txt"}},
    {"text": "All done."},
]


class FakeModel(BaseHTTPRequestHandler):
    """A model on 127.0.0.1 that answers from SCRIPT and keeps what it was
    sent (the messages, the context the hooks added among them)."""

    received: list = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeModel.received.append(request)
        turn = SCRIPT[min(len(FakeModel.received), len(SCRIPT)) - 1]
        body = json.dumps(turn).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def ask_model(url: str, messages: list) -> dict:
    request = urllib.request.Request(url, json.dumps({"messages": messages}).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--approve", choices=["allow", "deny"], default="deny",
                        help="how the approval callback answers")
    parser.add_argument("--work-dir", type=pathlib.Path, help="where the shell runs [a new temporary folder]")
    parser.add_argument("--json", action="store_true", help="print the record as JSON")
    args = parser.parse_args()
    work = args.work_dir or pathlib.Path(tempfile.mkdtemp(prefix="python-agent-"))
    (work / ".git").mkdir(parents=True, exist_ok=True)
    (work / "build").mkdir(exist_ok=True)

    model = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{model.server_address[1]}/v1/messages"

    engine = Engine([HERE / "hooks.yaml"], project_dir=work)

    # A guard of the agent's own, in Python, folded with the file's hooks.
    @engine.hook("PreToolUse", matcher="Bash", name="no-sudo")
    def no_sudo(event):
        if event["tool_input"]["command"].startswith("sudo "):
            return {"decision": "deny", "reason": "the agent does not run sudo"}
        return None

    # Context for the model, within the turn's budget.
    @engine.hook("UserPromptSubmit", name="conventions")
    def conventions(event):
        return {"action": "inject_context", "context_injection": "Conventions: notes go in notes.txt."}

    record = []
    session = Session(engine, "python-agent-1",
                      approve=lambda request: "Allow once" if args.approve == "allow" else "Deny")
    prompt = "Tidy the repository and push."
    session.prompt_submitted(prompt)
    messages = [{"role": "user", "content": prompt}]
    for _ in range(len(SCRIPT)):
        messages += [{"role": m["role"], "content": m["text"]} for m in session.flush_context()]
        turn = ask_model(url, messages)
        if "text" in turn:
            record.append({"model": turn["text"]})
            break
        resolved = session.before_tool(turn["tool"], turn["input"])
        command = (resolved.outcome.updated_input or turn["input"])["command"]
        if resolved.denied:
            record.append({"command": command, "denied_by": resolved.outcome.decided_by,
                           "reason": resolved.outcome.reason})
            messages.append({"role": "tool", "content": f"denied: {resolved.outcome.reason}"})
            continue
        ran = subprocess.run(["sh", "-c", command], cwd=work, capture_output=True, text=True)
        session.after_tool(turn["tool"], turn["input"], {"stdout": ran.stdout, "exit_code": ran.returncode})
        entry = {"command": command, "ran": ran.returncode}
        if resolved.approval:
            entry["approved_by"] = resolved.approval["decided_by"]
        record.append(entry)
        messages.append({"role": "tool", "content": ran.stdout + ran.stderr})
    model.shutdown()
    context = [m["content"] for m in FakeModel.received[0]["messages"] if m["role"] == "system"]
    record.append({"context_sent": context})
    if args.json:
        print(json.dumps(record))
    else:
        for step in record:
            print(" ".join(f"{k}={v}" for k, v in step.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
