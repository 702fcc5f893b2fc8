#!/usr/bin/env bash
# Codex 0.169 against the fake model, offline.
#
#   scripts/agents/codex.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/codex.sh capture    one payload per event into
#                                      tests/fixtures/codex-0.169/ and hook-environment.md
#   scripts/agents/codex.sh probe      what Codex does with chosen answers
#
# KEEP=1 keeps the temporary directory.
set -uo pipefail
AGENT=codex
VERSION=0.169.0
. "$(dirname "$0")/common.sh"

CODEX=$(install_agent @openai/codex "$VERSION" codex) || exit 1
isolate_network "$0" "$@"
FIXTURES=$REPO/tests/fixtures/codex-0.169

EVENTS=(PreToolUse PermissionRequest PostToolUse UserPromptSubmit Stop SessionStart
  SessionEnd PreCompact PostCompact SubagentStart SubagentStop Interrupt)

# codex_setup: CODEX_HOME with a config that points at the fake model, the
# project trusted, no update checks; the agents' environment for it.
codex_setup() {
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
  new_workdir codex-capture
  start_fake_model
  codex_setup
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

  set_script '{"tool_calls": [
    {"name": "exec_command", "input": {"cmd": "echo hi"}},
    {"name": "exec_command", "input": {"cmd": "ls /nonexistent-wasm-hooks"}}],
    "final_text": "done"}'
  codex_exec session1 "run two commands"
  end_session session1
  set_script '{"tool_calls": [{"name": "exec_command", "input": {"cmd": "echo again"}}], "final_text": "done"}'
  codex_exec session2 "run one command"
  end_session session2
  # Session 3: a command that asks for escalation (PermissionRequest fires
  # under --approve-for-me; `codex exec` otherwise rejects it: policy never).
  set_script '{"tool_calls": [{"name": "exec_command", "input": {"cmd": "touch approved-file",
    "sandbox_permissions": "require_escalated", "justification": "the test needs it"}}], "final_text": "done"}'
  codex_exec session3 "touch a file" --approve-for-me
  end_session session3

  rm -f "$FIXTURES"/*.json
  mkdir -p "$FIXTURES"
  say "session 1: $(save_captures "$FIXTURES" "$WORK/session1")"
  say "session 3: $(save_captures "$FIXTURES" "$WORK/session3" PermissionRequest)"
  env_report "Codex $VERSION" "$WORK/session1.launch-env" \
    "$WORK/session1" "$WORK/session2" >"$FIXTURES/hook-environment.md"
  say "wrote $FIXTURES"
}

# ---------------------------------------------------------------- probe

# cprobe LABEL EVENT HOOK-ENTRY PROMPT SCRIPT: one session with one user hook
# (trusted); prints a table row of what happened.
cprobe() {
  local label=$1 event=$2 entry=$3 prompt=$4 script=$5
  rm -f "$WORK"/answers.* "$PROJ/original-ran" "$PROJ/rewritten-ran"
  printf '{"hooks": {"%s": [{"hooks": [%s]}]}}\n' "$event" "$entry" >"$CODEX_HOME/hooks.json"
  sed -i '/^\[hooks\.state\./,$d' "$CODEX_HOME/config.toml"
  codex_trust_hooks >/dev/null
  set_script "$script"
  codex_exec "probe-$label" "$prompt"
  python3 - "$WORK" "$label" "$PROJ" <<'EOF'
import glob, json, os, sys
work, label, proj = sys.argv[1:]
reqs = [json.loads(l) for l in open(os.path.join(work, "model-log.jsonl"))]
reqs = [r for r in reqs if (r.get("reply") or {}).get("kind") in ("tool", "text")]
saw = []
for r in reqs[-1:]:
    for it in r["body"].get("input", []):
        if it.get("type") == "function_call_output":
            saw.append("tool output: " + str(it.get("output"))[:160])
prompt_seen = any("PROBE-PROMPT" in json.dumps(r["body"]) for r in reqs)
files = [f for f in ("original-ran", "rewritten-ran") if os.path.exists(os.path.join(proj, f))]
out = open(os.path.join(work, f"probe-{label}.out")).read()
hooklines = [l.strip() for l in out.splitlines() if l.startswith("hook:")][:6]
fired = len(glob.glob(os.path.join(work, "answers.*")))
cell = lambda t: t.replace("|", "\\|").replace("\n", " ")[:200]
print(f"| {label} | {' '.join(files) or '-'} | {fired} | {len(reqs)} | {'yes' if prompt_seen else 'no'} | "
      f"{cell(' / '.join(saw) or '-')} | {cell(' / '.join(hooklines))} |")
EOF
}

probe() {
  new_workdir codex-probe
  start_fake_model
  codex_setup
  write_answer_hook
  local H=$WORK/answer-hook.sh
  local MISSING='{"type": "command", "command": "/nonexistent/wasm-hooks-hook"}'
  local TOUCH='{"tool_calls": [{"name": "exec_command", "input": {"cmd": "touch original-ran"}}], "final_text": "done"}'
  local TEXT='{"tool_calls": [], "final_text": "done"}'
  echo "| probe | files made | hook ran | model requests | prompt reached the model | the model got | codex said |"
  echo "|---|---|---|---|---|---|---|"
  local m
  for m in none deny allow exit2 exit1 block touch-rewrite touch-rewrite-allow; do
    cprobe "pretooluse-$m" PreToolUse "{\"type\": \"command\", \"command\": \"$H PreToolUse $m\"}" "PROBE-PROMPT" "$TOUCH"
  done
  cprobe pretooluse-missing PreToolUse "$MISSING" "PROBE-PROMPT" "$TOUCH"
  for m in exit2 block; do
    cprobe "prompt-$m" UserPromptSubmit "{\"type\": \"command\", \"command\": \"$H UserPromptSubmit $m\"}" "PROBE-PROMPT" "$TEXT"
  done
  cprobe prompt-missing UserPromptSubmit "$MISSING" "PROBE-PROMPT" "$TEXT"
}

# ---------------------------------------------------------------- scenarios

agent_run() { codex_exec "$@"; }
shell_call() {
  python3 -c 'import json, sys; print(json.dumps({"name": "exec_command", "input": {"cmd": sys.argv[1]}}))' "$1"
}
# The project's .codex/hooks.json (Codex runs it: the project is trusted in
# config.toml), each hook trusted by hash as /hooks would.
install_hooks() {
  (cd "$PROJ" && wasm-hooks install codex >"$WORK/install.out" 2>&1) ||
    { cat "$WORK/install.out" >&2; return 1; }
  local n
  n=$(codex_trust_hooks) || return 1
  [ "$n" -gt 0 ] || { say "codex: no hook to trust"; return 1; }
}

scenarios() {
  new_workdir codex
  start_fake_model
  codex_setup
  run_scenarios
}

# ---------------------------------------------------------------- main

case "${1:-scenarios}" in
  capture) capture ;;
  probe) probe ;;
  scenarios) scenarios ;;
  *) die "usage: $0 [scenarios|capture|probe]" ;;
esac
