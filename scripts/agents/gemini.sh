#!/usr/bin/env bash
# Gemini CLI 0.61 against the fake model, offline.
#
#   scripts/agents/gemini.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/gemini.sh capture    one payload per event into
#                                       tests/fixtures/gemini-cli-0.61/ and hook-environment.md
#   scripts/agents/gemini.sh probe      what Gemini CLI does with chosen answers
#
# KEEP=1 keeps the temporary directory.
AGENT=gemini
VERSION=0.61.0
. "$(dirname "$0")/common.sh"

agent_install GEMINI @google/gemini-cli gemini "$@"
FIXTURES=$REPO/tests/fixtures/gemini-cli-0.61

EVENTS=(BeforeTool AfterTool BeforeAgent AfterAgent BeforeModel AfterModel
  BeforeToolSelection SessionStart SessionEnd PreCompress Notification)

# agent_setup: ~/.gemini/settings.json (API-key auth, no telemetry, no
# update checks), the project a trusted folder; the agents' environment.
# `wasm-hooks install gemini` writes the project's .gemini/settings.json,
# which Gemini CLI runs because of that trust.
agent_setup() {
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
  begin gemini-capture
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

  capture_session session1 "run two commands" \
    "$(script_of "$(shell_call "echo hi")" "$(shell_call "ls /nonexistent-wasm-hooks")")"
  capture_session session2 "run one command" "$(script_of "$(shell_call "echo again")")"

  fixtures_reset
  save_session 1
  fixtures_done "Gemini CLI $VERSION"
}

# ---------------------------------------------------------------- probe

# gprobe LABEL EVENT HOOK-ENTRY PROMPT SCRIPT: one session with one user hook;
# prints a table row of what happened.
gprobe() {
  local label=$1 event=$2 entry=$3 prompt=$4 script=$5
  probe_reset
  gemini_settings "{\"$event\": [{\"matcher\": \"*\", \"hooks\": [$entry]}]}"
  probe_run "$label" "$prompt" "$script"
  probe_py "$label" <<'EOF'
for r in reqs[-1:]:
    for c in r["body"].get("contents", []):
        for p in c.get("parts", []):
            if "functionResponse" in p:
                saw.append("tool: " + json.dumps(p["functionResponse"].get("response"))[:180])
try:
    j = json.loads(out[out.index("{"):])
    said = j.get("error", {}).get("message") or ("response: " + str(j.get("response")))
except Exception:
    said = out.strip().splitlines()[-1] if out.strip() else ""
row(saw, said)
EOF
}

probe() {
  probe_begin "files made" "hook ran" "model requests" "prompt reached the model" "the model got" "gemini -p said"
  local MISSING='{"type": "command", "command": "/nonexistent/wasm-hooks-hook", "timeout": 30000}'
  probe_guard gprobe beforetool BeforeTool "$(touch_script)" "$MISSING" none gdeny block exit2 exit1
  probe_guard gprobe beforeagent BeforeAgent "$TEXT_ONLY" "$MISSING" gdeny exit2
}

# ---------------------------------------------------------------- scenarios

agent_run() { gemini_p "$@"; }
shell_call() { tool_call run_shell_command command "$1"; }

agent_main "$@"
