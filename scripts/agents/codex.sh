#!/usr/bin/env bash
# Codex 0.169 (0.171 for `sessions`) against the fake model, offline.
#
#   scripts/agents/codex.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/codex.sh capture    one payload per event into
#                                      tests/fixtures/codex-0.169/ and hook-environment.md
#   scripts/agents/codex.sh probe      what Codex does with chosen answers
#   scripts/agents/codex.sh sessions   record one session's own log (Codex 0.171) into
#                                      tests/fixtures/sessions/codex-0.171/
#
# KEEP=1 keeps the temporary directory; CODEX_VERSION=X.Y.Z runs another
# version of Codex (any mode).
AGENT=codex
VERSION=0.169.0
[ "${1:-}" = sessions ] && VERSION=0.171.0
VERSION=${CODEX_VERSION:-$VERSION}
. "$(dirname "$0")/common.sh"

agent_install CODEX @openai/codex codex "$@"
FIXTURES=$REPO/tests/fixtures/codex-0.169

EVENTS=(PreToolUse PermissionRequest PostToolUse UserPromptSubmit Stop SessionStart
  SessionEnd PreCompact PostCompact SubagentStart SubagentStop Interrupt)

# agent_setup: CODEX_HOME with a config that points at the fake model, the
# project trusted, no update checks; the agents' environment for it.
agent_setup() {
  CODEX_HOME=$HOME/.codex
  mkdir -p "$CODEX_HOME"
  cat >"$CODEX_HOME/config.toml" <<EOF
model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$FM_PORT/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

# Features that reach out on their own (plugin marketplace on github.com,
# apps and remote plugins on chatgpt.com).
[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
in_app_updates = false
tool_suggest = false
skill_mcp_dependency_install = false
workspace_dependencies = false

[projects."$PROJ"]
trust_level = "trusted"
EOF
  agent_env CODEX_HOME="$CODEX_HOME"
}

# codex_exec NAME PROMPT [ARGS...]: one `codex exec` run in $PROJ (60 s at
# most), approvals and sandbox bypassed unless ARGS set a sandbox (-s) or
# --approve-for-me.
codex_exec() {
  local name=$1 prompt=$2
  shift 2
  local bypass=(--dangerously-bypass-approvals-and-sandbox)
  case " $* " in *" -s "* | *" --approve-for-me "*) bypass=() ;; esac
  run_agent 60 "$name" "$CODEX" exec --skip-git-repo-check "${bypass[@]}" "$@" "$prompt"
}

# codex_trust_hooks: Codex runs a non-managed hook only when
# config.toml's [hooks.state."<key>"] trusted_hash equals the hook's current
# hash. Ask the binary itself (`codex app-server`, method hooks/list) for the
# keys and hashes of every hook it sees from $PROJ, and record them.
codex_trust_hooks() {
  env -i "${AGENT_ENV[@]}" python3 - "$CODEX" "$PROJ" "$CODEX_HOME/config.toml" <<'EOF'
import json, subprocess, sys
codex, proj, config = sys.argv[1:]
p = subprocess.Popen([codex, "app-server"], cwd=proj, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
def send(obj):
    p.stdin.write(json.dumps(obj) + "\n")
    p.stdin.flush()
def wait(id_):
    for line in p.stdout:
        msg = json.loads(line)
        if msg.get("id") == id_:
            return msg
    sys.exit("codex app-server ended")
send({"id": 1, "method": "initialize",
      "params": {"clientInfo": {"name": "wasm-hooks-agents", "title": None, "version": "1"}}})
wait(1)
send({"method": "initialized"})
send({"id": 2, "method": "hooks/list", "params": {"cwds": [proj]}})
res = wait(2)
p.stdin.close()
p.terminate()
p.wait(timeout=10)
if "error" in res:
    sys.exit(f"hooks/list failed: {res['error']}")
lines, n = [], 0
for entry in res["result"]["data"]:
    for w in entry.get("warnings", []) + entry.get("errors", []):
        print(f"codex: {w}", file=sys.stderr)
    for h in entry["hooks"]:
        if h["trustStatus"] in ("untrusted", "modified"):
            lines.append(f'\n[hooks.state.{json.dumps(h["key"])}]\n'
                         f'trusted_hash = {json.dumps(h["currentHash"])}\n')
            n += 1
with open(config, "a") as f:
    f.writelines(lines)
print(n)
EOF
}

# ---------------------------------------------------------------- capture

capture() {
  begin codex-capture
  write_capture_hook
  python3 - "$WORK/capture-hook.sh" "${EVENTS[@]}" >"$CODEX_HOME/hooks.json" <<'EOF'
import json, sys
hook = sys.argv[1]
print(json.dumps({"hooks": {ev: [{"hooks": [{"type": "command", "command": f"{hook} {ev}"}]}]
                            for ev in sys.argv[2:]}}, indent=2))
EOF
  say "trusted $(codex_trust_hooks) hooks"
  mkdir -p "$PROJ/sub"
  git -C "$PROJ" init -q 2>/dev/null

  capture_session session1 "run two commands" \
    "$(script_of "$(shell_call "echo hi")" "$(shell_call "ls /nonexistent-wasm-hooks")")"
  capture_session session2 "run one command" "$(script_of "$(shell_call "echo again")")"
  # Session 3: a command that asks for escalation (PermissionRequest fires
  # under --approve-for-me; `codex exec` otherwise rejects it: policy never).
  capture_session session3 "touch a file" "$(script_of "$(tool_call exec_command cmd "touch approved-file" \
    sandbox_permissions require_escalated justification "the test needs it")")" --approve-for-me

  fixtures_reset
  save_session 1
  save_session 3 PermissionRequest
  fixtures_done "Codex $VERSION"
}

# ---------------------------------------------------------------- probe

# cprobe LABEL EVENT HOOK-ENTRY PROMPT SCRIPT: one session with one user hook
# (trusted); prints a table row of what happened.
cprobe() {
  local label=$1 event=$2 entry=$3 prompt=$4 script=$5
  probe_reset
  printf '{"hooks": {"%s": [{"hooks": [%s]}]}}\n' "$event" "$entry" >"$CODEX_HOME/hooks.json"
  sed -i '/^\[hooks\.state\./,$d' "$CODEX_HOME/config.toml"
  codex_trust_hooks >/dev/null
  probe_run "$label" "$prompt" "$script"
  probe_py "$label" <<'EOF'
for r in reqs[-1:]:
    for it in r["body"].get("input", []):
        if it.get("type") == "function_call_output":
            saw.append("tool output: " + str(it.get("output"))[:160])
hooklines = [l.strip() for l in out.splitlines() if l.startswith("hook:")][:6]
row(saw, " / ".join(hooklines))
EOF
}

probe() {
  probe_begin "files made" "hook ran" "model requests" "prompt reached the model" "the model got" "codex said"
  local MISSING='{"type": "command", "command": "/nonexistent/wasm-hooks-hook"}'
  probe_guard cprobe pretooluse PreToolUse "$(touch_script)" "$MISSING" \
    none deny allow exit2 exit1 block touch-rewrite touch-rewrite-allow
  probe_guard cprobe prompt UserPromptSubmit "$TEXT_ONLY" "$MISSING" exit2 block
}

# ---------------------------------------------------------------- scenarios

agent_run() { codex_exec "$@"; }
shell_call() { tool_call exec_command cmd "$1"; }
# The project's .codex/hooks.json (Codex runs it: the project is trusted in
# config.toml), each hook trusted by hash as /hooks would.
install_hooks() {
  wasm_hooks_install || return 1
  local n
  n=$(codex_trust_hooks) || return 1
  [ "$n" -gt 0 ] || { say "codex: no hook to trust"; return 1; }
}


# ---------------------------------------------------------------- sessions
#
# One recorded session, kept as the agent wrote it (for `wasm-hooks
# replay`): with wasm-hooks installed and a guard that denies Bash commands
# containing `rm -rf`, the model calls exec_command `ls` (runs),
# exec_command `rm -rf build` (denied by the guard), apply_patch adding
# `.env` (runs), apply_patch adding `notes.txt` (runs), then final text.
# The session's log (~/.codex/sessions/) is copied into $SESSIONS.
#
# The model is named `gpt-5.5` (still served by the fake model): Codex
# offers its `apply_patch` tool only to a model its catalogue says takes
# it, and `fake-model` gets fallback metadata without it.

SESSIONS=$REPO/tests/fixtures/sessions/codex-${VERSION%.*}
SESSION_DENY="rm -rf is not allowed here (wasm-hooks guard no-rm-rf)"

# sessions_mntns, sessions_workdir and sessions_guard: common.sh.

sessions() {
  sessions_mntns
  sessions_workdir codex-sessions
  start_fake_model
  agent_setup
  sed -i 's/^model = .*/model = "gpt-5.5"/' "$CODEX_HOME/config.toml"
  sessions_guard
  mkdir -p "$PROJ/build"
  echo "keep me" >"$PROJ/build/keep"
  set_script "$(script_of "$(shell_call ls)" "$(shell_call "rm -rf build")" \
    "$(tool_call apply_patch input "$(printf '*** Begin Patch\n*** Add File: .env\n+TOKEN=abc\n*** End Patch')")" \
    "$(tool_call apply_patch input "$(printf '*** Begin Patch\n*** Add File: notes.txt\n+some notes\n*** End Patch')")")"
  codex_exec session "List the files, remove the build directory, then write .env and notes.txt."

  sessions_keep "$CODEX_HOME/sessions"
  sessions_check
  finish
}

# sessions_check: the copied log holds what the session did (PASS/FAIL).
sessions_check() {
  local status name detail
  while IFS=$'\t' read -r status name detail; do
    record "$name" "$status" "$detail"
  done < <(python3 - "$SESSIONS" "$PROJ" "$SESSION_DENY" <<'EOF'
import glob, json, os, sys
root, proj, deny = sys.argv[1:]
def out(ok, name, detail=""):
    detail = " ".join(str(detail).split())
    print(f"{'PASS' if ok else 'FAIL'}\t{name}\t{detail}")
logs = glob.glob(os.path.join(root, "sessions", "*", "*", "*", "rollout-*.jsonl"))
out(len(logs) == 1, "sessions: one rollout file", f"{len(logs)} found")
if len(logs) != 1:
    sys.exit()
calls, outputs = [], {}
for line in open(logs[0]):
    r = json.loads(line)
    p = r.get("payload") or {}
    if r.get("type") != "response_item":
        continue
    if p.get("type") == "function_call":
        calls.append((p["name"], json.loads(p["arguments"]).get("cmd"), p["call_id"]))
    elif p.get("type") == "custom_tool_call":
        first = p["input"].splitlines()[1] if "\n" in p["input"] else p["input"]
        calls.append((p["name"], first, p["call_id"]))
    elif p.get("type") in ("function_call_output", "custom_tool_call_output"):
        o = p.get("output")
        outputs[p["call_id"]] = o if isinstance(o, str) else json.dumps(o)
got = [(n, a) for n, a, _ in calls]
want = [("exec_command", "ls"), ("exec_command", "rm -rf build"),
        ("apply_patch", "*** Add File: .env"), ("apply_patch", "*** Add File: notes.txt")]
out(got == want, "sessions: the rollout has the 4 tool calls in order", json.dumps(got))
ids = {(n, a): i for n, a, i in calls}
o = outputs.get(ids.get(("exec_command", "rm -rf build")), "")
out(deny in o and "blocked by PreToolUse hook" in o,
    "sessions: rm -rf build denied by the wasm-hooks guard (reason in its output)", o[:200])
o = outputs.get(ids.get(("exec_command", "ls")), "")
out("exited with code 0" in o and "build" in o, "sessions: exec_command ls ran", o[:200])
for f in (".env", "notes.txt"):
    o = outputs.get(ids.get(("apply_patch", f"*** Add File: {f}")), "")
    out("Success" in o, f"sessions: apply_patch {f} ran", o[:200])
out(os.path.isdir(os.path.join(proj, "build")), "sessions: build/ survived")
env = os.path.join(proj, ".env")
out(os.path.exists(env) and open(env).read() == "TOKEN=abc\n", "sessions: .env written")
out(os.path.exists(os.path.join(proj, "notes.txt")), "sessions: notes.txt written")
EOF
)
}

case "${1:-}" in
  sessions) sessions ;;
  *) agent_main "$@" ;;
esac
