#!/usr/bin/env bash
# Gemini CLI 0.61 against the fake model, offline.
#
#   scripts/agents/gemini.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/gemini.sh capture    one payload per event into
#                                       tests/fixtures/gemini-cli-0.61/ and hook-environment.md
#
# KEEP=1 keeps the temporary directory.
set -uo pipefail
AGENT=gemini
VERSION=0.61.0
. "$(dirname "$0")/common.sh"

GEMINI=$(install_agent @google/gemini-cli "$VERSION" gemini) || exit 1
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

# ---------------------------------------------------------------- main

case "${1:-scenarios}" in
  capture) capture ;;
  scenarios) scenarios ;;
  *) die "usage: $0 [scenarios|capture]" ;;
esac
