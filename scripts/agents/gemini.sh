#!/usr/bin/env bash
# Gemini CLI 0.61 against the fake model, offline.
#
#   scripts/agents/gemini.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/gemini.sh capture    one payload per event into
#                                       tests/fixtures/gemini-cli-0.61/ and hook-environment.md
#   scripts/agents/gemini.sh probe      what Gemini CLI does with chosen answers
#   scripts/agents/gemini.sh sessions   one session with a wasm-hooks guard; Gemini
#                                       CLI's own session history into
#                                       tests/fixtures/sessions/gemini-cli-0.61/
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

# ---------------------------------------------------------------- sessions
#
# One session recorded for `wasm-hooks replay`: wasm-hooks installed with
# a guard that denies shell commands containing `rm -rf`; the model calls
# run_shell_command `ls` (runs), run_shell_command `rm -rf build` (denied
# by the guard), write_file `.env` (refused by Gemini CLI itself: 0.61
# blocks every path with a `.env` segment, before any hook), write_file
# `notes.txt` (runs), then answers. Gemini CLI's own history under ~/.gemini is copied as
# written into tests/fixtures/sessions/gemini-cli-0.61/ (the layout below
# ~/.gemini kept).
#
# The home is really /home/dev (not mapped to it afterwards): the run is in
# a private mount namespace where the temporary home is bind-mounted on
# /home/dev, so the records hold the paths a user's would
# (/home/dev/project, and the names Gemini CLI derives from it).

SESSIONS=$REPO/tests/fixtures/sessions/gemini-cli-0.61
SESSION_DENY="rm -rf is not allowed in this project (wasm-hooks guard no-rm-rf)"

# sessions_mntns, sessions_workdir and sessions_guard: common.sh.

sessions() {
  sessions_mntns
  sessions_workdir gemini-sessions
  start_fake_model
  agent_setup
  # Checkpointing (a snapshot before each file write) is off by default.
  python3 - "$HOME/.gemini/settings.json" <<'EOF'
import json, sys
p = sys.argv[1]
s = json.load(open(p))
s["general"]["checkpointing"] = {"enabled": True}
open(p, "w").write(json.dumps(s, indent=2))
EOF
  git -C "$PROJ" init -q 2>/dev/null
  sessions_guard
  mkdir -p "$PROJ/build" && echo "keep me" >"$PROJ/build/keep"

  set_script "$(script_of "$(shell_call ls)" "$(shell_call "rm -rf build")" \
    "$(tool_call write_file file_path "$PROJ/.env" content TOKEN=abc)" \
    "$(tool_call write_file file_path "$PROJ/notes.txt" content $'remember the milk\n')")"
  gemini_p session "list the files, clean the build, then write .env and notes.txt"
  say "gemini: exit $(cat "$WORK/session.rc"); build/: $([ -d "$PROJ/build" ] && echo kept || echo REMOVED);" \
    ".env: $(cat "$PROJ/.env" 2>/dev/null || echo MISSING); notes.txt: $([ -e "$PROJ/notes.txt" ] && echo written || echo MISSING)"
  say "$(audit_summary)"
  say "files under ~/.gemini:"
  (cd "$HOME/.gemini" && find . -type f | sort | sed 's/^/  /') >&2
  sessions_save
}

# sessions_save: Gemini CLI's history as written (projects.json, tmp/,
# history/ but its shadow git repository, which git cannot hold inside this
# one) into $SESSIONS, then sessions_check.
sessions_save() {
  local g=$HOME/.gemini
  rm -rf "$SESSIONS"
  mkdir -p "$SESSIONS"
  (cd "$g" && find projects.json tmp history -type f ! -path '*/.git/*' ! -name '*.lock' -print0 |
    xargs -0 cp --parents -p -t "$SESSIONS")
  say "saved into $SESSIONS:"
  (cd "$SESSIONS" && find . -type f | sort | sed 's/^/  /') >&2
  if [ -d "$g/history/project/.git" ]; then
    say "not saved: the checkpoint's shadow git repository history/project/.git:"
    git --git-dir="$g/history/project/.git" log --stat --format='  %h %an: %s' 2>&1 | sed 's/^/  /' >&2
  fi
  sessions_check
}

# sessions_check: the saved chat record holds the four tool calls, and the
# rm -rf call's result is the wasm-hooks denial.
sessions_check() {
  local out
  out=$(python3 - "$SESSIONS" "$SESSION_DENY" <<'EOF'
import glob, json, sys
root, deny = sys.argv[1:]
files = glob.glob(f"{root}/tmp/*/chats/*.jsonl")
if len(files) != 1:
    print(f"FAIL one chat record: {files}")
    sys.exit()
calls = {}
for line in open(files[0]):
    r = json.loads(line)
    for c in r.get("toolCalls") or []:
        calls[c["id"]] = c          # a later record of the same message wins
calls = list(calls.values())
for c in calls:
    res = ((c.get("result") or [{}])[0].get("functionResponse") or {}).get("response")
    print(f"  {c['name']} {json.dumps(c['args'])[:70]} -> {c.get('status')}: {json.dumps(res)[:110]}")
want = [("run_shell_command", "ls"), ("run_shell_command", "rm -rf build"),
        ("write_file", "/home/dev/project/.env"), ("write_file", "/home/dev/project/notes.txt")]
got = [(c["name"], c["args"].get("command") or c["args"].get("file_path")) for c in calls]
print(("PASS" if got == want else f"FAIL") + f" the four tool calls: {got}")
rm = [c for c in calls if c["args"].get("command") == "rm -rf build"]
print(("PASS" if rm and deny in json.dumps(rm[0].get("result")) else "FAIL")
      + " rm -rf build denied by wasm-hooks in the record")
EOF
)
  say "$out"
  grep -q '^FAIL' <<<"$out" && return 1
  return 0
}

# ---------------------------------------------------------------- scenarios

agent_run() { gemini_p "$@"; }
shell_call() { tool_call run_shell_command command "$1"; }

if [ "${1:-}" = sessions ]; then sessions; else agent_main "$@"; fi
