#!/usr/bin/env bash
# Codex 0.169 against the fake model, offline.
#
#   scripts/agents/codex.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/codex.sh capture    one payload per event into
#                                      tests/fixtures/codex-0.169/ and hook-environment.md
#   scripts/agents/codex.sh probe      what Codex does with chosen answers
#
# KEEP=1 keeps the temporary directory.
AGENT=codex
VERSION=0.169.0
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

agent_main "$@"
