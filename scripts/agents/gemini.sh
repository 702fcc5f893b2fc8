#!/usr/bin/env bash
# Gemini CLI 0.61 against the fake model, offline.
#
#   scripts/agents/gemini.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/gemini.sh capture    one payload per event into
#                                       tests/fixtures/gemini-cli-0.61/ and hook-environment.md
#   scripts/agents/gemini.sh probe      what Gemini CLI does with chosen answers
#
# KEEP=1 keeps the temporary directory.
set -uo pipefail
AGENT=gemini
VERSION=0.61.0
. "$(dirname "$0")/common.sh"

GEMINI=$(install_agent @google/gemini-cli "$VERSION" gemini) || exit 1
isolate_network "$0" "$@"
FIXTURES=$REPO/tests/fixtures/gemini-cli-0.61

EVENTS=(BeforeTool AfterTool BeforeAgent AfterAgent BeforeModel AfterModel
  BeforeToolSelection SessionStart SessionEnd PreCompress Notification)

# gemini_setup: ~/.gemini/settings.json (API-key auth, no telemetry, no
# update checks), the project a trusted folder; the agents' environment.
gemini_setup() {
  mkdir -p "$HOME/.gemini"
  gemini_settings '{}'
  printf '{"%s": "TRUST_FOLDER"}\n' "$PROJ" >"$HOME/.gemini/trustedFolders.json"
  agent_env GEMINI_API_KEY=fake GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$FM_PORT" \
    GEMINI_CLI_NO_RELAUNCH=true
}

# gemini_settings HOOKS-JSON: the user settings, with these hooks.
gemini_settings() {
  python3 - "$HOME/.gemini/settings.json" "$1" <<'EOF'
import json, sys
path, hooks = sys.argv[1], json.loads(sys.argv[2])
settings = {
    "security": {"auth": {"selectedType": "gemini-api-key"},
                 "folderTrust": {"enabled": True}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "hooks": hooks,
}
open(path, "w").write(json.dumps(settings, indent=2))
EOF
}

# gemini_p NAME PROMPT [ARGS...]: one headless run in $PROJ (90 s at most).
gemini_p() {
  local name=$1 prompt=$2
  shift 2
  run_agent 90 "$name" "$GEMINI" -p "$prompt" --approval-mode yolo -o json "$@"
}

# ---------------------------------------------------------------- capture

capture() {
  new_workdir gemini-capture
  start_fake_model
  gemini_setup
  write_capture_hook
  gemini_settings "$(python3 - "$WORK/capture-hook.sh" "${EVENTS[@]}" <<'EOF'
import json, sys
hook = sys.argv[1]
print(json.dumps({ev: [{"matcher": "*", "hooks": [{"type": "command", "command": f"{hook} {ev}",
                                                   "timeout": 30000}]}]
                  for ev in sys.argv[2:]}))
EOF
)"
  git -C "$PROJ" init -q 2>/dev/null

  set_script '{"tool_calls": [
    {"name": "run_shell_command", "input": {"command": "echo hi"}},
    {"name": "run_shell_command", "input": {"command": "ls /nonexistent-wasm-hooks"}}],
    "final_text": "done"}'
  gemini_p session1 "run two commands"
  end_session session1
  set_script '{"tool_calls": [{"name": "run_shell_command", "input": {"command": "echo again"}}], "final_text": "done"}'
  gemini_p session2 "run one command"
  end_session session2

  rm -f "$FIXTURES"/*.json
  mkdir -p "$FIXTURES"
  say "session 1: $(save_captures "$FIXTURES" "$WORK/session1")"
  env_report "Gemini CLI $VERSION" "$WORK/session1.launch-env" \
    "$WORK/session1" "$WORK/session2" >"$FIXTURES/hook-environment.md"
  say "wrote $FIXTURES"
}

# ---------------------------------------------------------------- probe

# gprobe LABEL EVENT HOOK-ENTRY PROMPT SCRIPT: one session with one user hook;
# prints a table row of what happened.
gprobe() {
  local label=$1 event=$2 entry=$3 prompt=$4 script=$5
  rm -f "$WORK"/answers.* "$PROJ/original-ran" "$PROJ/rewritten-ran"
  gemini_settings "{\"$event\": [{\"matcher\": \"*\", \"hooks\": [$entry]}]}"
  set_script "$script"
  gemini_p "probe-$label" "$prompt"
  python3 - "$WORK" "$label" "$PROJ" <<'EOF'
import glob, json, os, sys
work, label, proj = sys.argv[1:]
reqs = [json.loads(l) for l in open(os.path.join(work, "model-log.jsonl"))]
reqs = [r for r in reqs if (r.get("reply") or {}).get("kind") in ("tool", "text")]
saw = []
for r in reqs[-1:]:
    for c in r["body"].get("contents", []):
        for p in c.get("parts", []):
            if "functionResponse" in p:
                saw.append("tool: " + json.dumps(p["functionResponse"].get("response"))[:180])
prompt_seen = any("PROBE-PROMPT" in json.dumps(r["body"]) for r in reqs)
files = [f for f in ("original-ran", "rewritten-ran") if os.path.exists(os.path.join(proj, f))]
out = open(os.path.join(work, f"probe-{label}.out")).read()
try:
    j = json.loads(out[out.index("{"):])
    said = j.get("error", {}).get("message") or ("response: " + str(j.get("response")))
except Exception:
    said = out.strip().splitlines()[-1] if out.strip() else ""
fired = len(glob.glob(os.path.join(work, "answers.*")))
cell = lambda t: t.replace("|", "\\|").replace("\n", " ")[:200]
print(f"| {label} | {' '.join(files) or '-'} | {fired} | {len(reqs)} | {'yes' if prompt_seen else 'no'} | "
      f"{cell(' / '.join(saw) or '-')} | {cell(said)} |")
EOF
}

probe() {
  new_workdir gemini-probe
  start_fake_model
  gemini_setup
  write_answer_hook
  local H=$WORK/answer-hook.sh
  local MISSING='{"type": "command", "command": "/nonexistent/wasm-hooks-hook", "timeout": 30000}'
  local TOUCH='{"tool_calls": [{"name": "run_shell_command", "input": {"command": "touch original-ran"}}], "final_text": "done"}'
  local TEXT='{"tool_calls": [], "final_text": "done"}'
  echo "| probe | files made | hook ran | model requests | prompt reached the model | the model got | gemini -p said |"
  echo "|---|---|---|---|---|---|---|"
  local m
  for m in none gdeny block exit2 exit1; do
    gprobe "beforetool-$m" BeforeTool "{\"type\": \"command\", \"command\": \"$H BeforeTool $m\"}" "PROBE-PROMPT" "$TOUCH"
  done
  gprobe beforetool-missing BeforeTool "$MISSING" "PROBE-PROMPT" "$TOUCH"
  for m in gdeny exit2; do
    gprobe "beforeagent-$m" BeforeAgent "{\"type\": \"command\", \"command\": \"$H BeforeAgent $m\"}" "PROBE-PROMPT" "$TEXT"
  done
  gprobe beforeagent-missing BeforeAgent "$MISSING" "PROBE-PROMPT" "$TEXT"
}

# ---------------------------------------------------------------- scenarios

agent_run() { gemini_p "$@"; }
shell_call() {
  python3 -c 'import json, sys; print(json.dumps({"name": "run_shell_command", "input": {"command": sys.argv[1]}}))' "$1"
}
# The project's .gemini/settings.json (Gemini CLI runs it: the project is a
# trusted folder in ~/.gemini/trustedFolders.json).
install_hooks() {
  (cd "$PROJ" && wasm-hooks install gemini >"$WORK/install.out" 2>&1) ||
    { cat "$WORK/install.out" >&2; return 1; }
}

scenarios() {
  new_workdir gemini
  start_fake_model
  gemini_setup
  run_scenarios
}

# ---------------------------------------------------------------- main

case "${1:-scenarios}" in
  capture) capture ;;
  probe) probe ;;
  scenarios) scenarios ;;
  *) die "usage: $0 [scenarios|capture|probe]" ;;
esac
