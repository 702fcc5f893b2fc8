#!/usr/bin/env bash
# Claude Code 2.1.332 against the fake model, offline.
#
#   scripts/agents/claude.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/claude.sh capture    capture one payload per event into
#                                       tests/fixtures/claude-code-2.1.332/ and
#                                       the hook environment (hook-environment.md)
#   scripts/agents/claude.sh probe      what Claude Code does with chosen answers
#                                       (PreSkillShellCommand, onFailure, updatedInput)
#
# KEEP=1 keeps the temporary directory.
set -uo pipefail
AGENT=claude
VERSION=2.1.332
. "$(dirname "$0")/common.sh"

CLAUDE=$(install_agent @anthropic-ai/claude-code "$VERSION" claude) || exit 1
isolate_network "$0" "$@"
FIXTURES=$REPO/tests/fixtures/claude-code-$VERSION

EVENTS=(PreToolUse PostToolUse PostToolUseFailure PostToolBatch Notification
  UserPromptSubmit UserPromptExpansion SessionStart SessionEnd Stop StopFailure
  SubagentStart SubagentStop PreCompact PostCompact PreModelSwitch PostModelSwitch
  PermissionRequest PermissionDenied Setup TeammateIdle TaskCreated TaskCompleted
  Elicitation ElicitationResult ConfigChange WorktreeCreate WorktreeRemove
  InstructionsLoaded CwdChanged FileChanged DirectoryAdded MessageDisplay
  PreSkillShellCommand)

# claude_env: the environment of an offline run (on top of new_workdir's).
claude_env() {
  agent_env ANTHROPIC_BASE_URL="http://127.0.0.1:$FM_PORT" ANTHROPIC_API_KEY=fake \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
    DISABLE_ERROR_REPORTING=1 DISABLE_BUG_COMMAND=1 CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1
}

# claude_p NAME PROMPT [ARGS...]: one `claude -p` run in $PROJ (60 s at
# most), with `--allowedTools Bash` unless ARGS name other tools.
claude_p() {
  local name=$1 prompt=$2
  shift 2
  local allowed=(--allowedTools Bash)
  case " $* " in *" --allowedTools "*) allowed=() ;; esac
  run_agent 60 "$name" "$CLAUDE" -p "$prompt" --output-format json "${allowed[@]}" "$@"
}

# The project's slash command with an inline shell command.
make_clean_command() {
  mkdir -p "$PROJ/.claude/commands"
  cat >"$PROJ/.claude/commands/clean.md" <<'EOF'
---
description: Clean up
allowed-tools: Bash(rm:*)
---
Cleaning: !`rm -rf victim`
EOF
}

# hooks_settings FILE JSON-OF-HOOKS: write a settings file with these hooks.
hooks_settings() {
  mkdir -p "$(dirname "$1")"
  printf '{"hooks": %s}\n' "$2" >"$1"
}

# ---------------------------------------------------------------- capture

capture() {
  new_workdir claude-capture
  start_fake_model
  claude_env
  write_capture_hook
  local hooks
  hooks=$(python3 - "$WORK/capture-hook.sh" "${EVENTS[@]}" <<'EOF'
import json, sys
hook = sys.argv[1]
print(json.dumps({ev: [{"hooks": [{"type": "command", "command": f"{hook} {ev}"}]}]
                  for ev in sys.argv[2:]}))
EOF
)
  hooks_settings "$HOME/.claude/settings.json" "$hooks"
  mkdir -p "$PROJ/sub"
  echo "# Project notes" >"$PROJ/CLAUDE.md"
  make_clean_command
  echo x >"$PROJ/victim"
  git -C "$PROJ" init -q 2>/dev/null

  # Session 1: three shell calls (one changes directory, one fails).
  set_script '{"tool_calls": [
    {"name": "Bash", "input": {"command": "echo hi", "description": "fake model runs a command"}},
    {"name": "Bash", "input": {"command": "cd sub && pwd", "description": "change directory"}},
    {"name": "Bash", "input": {"command": "ls /nonexistent-wasm-hooks", "description": "a failing command"}}],
    "final_text": "done"}'
  claude_p session1 "run three commands"
  end_session session1

  # Session 2: the slash command with an inline shell command.
  set_script '{"tool_calls": [], "final_text": "cleaned"}'
  claude_p session2 "/clean"
  end_session session2
  [ -e "$PROJ/victim" ] && say "note: victim survived /clean with only capture hooks"

  rm -f "$FIXTURES"/*.json
  say "session 1: $(save_captures "$FIXTURES" "$WORK/session1")"
  say "session 2: $(save_captures "$FIXTURES" "$WORK/session2" PreSkillShellCommand UserPromptExpansion)"
  env_report "Claude Code $VERSION" "$WORK/session1.launch-env" \
    "$WORK/session1" "$WORK/session2" >"$FIXTURES/hook-environment.md"
  say "wrote $FIXTURES"
}

# ---------------------------------------------------------------- probe

# probe_one LABEL EVENT HOOK-ENTRY PROMPT SCRIPT [CLAUDE-ARGS...]: one
# session with one hook entry; prints a table row of what happened.
probe_one() {
  local label=$1 event=$2 entry=$3 prompt=$4 script=$5
  shift 5
  rm -f "$WORK"/answers.* "$PROJ/original-ran" "$PROJ/rewritten-ran" && echo x >"$PROJ/victim"
  hooks_settings "$HOME/.claude/settings.json" "{\"$event\": [{\"hooks\": [$entry]}]}"
  set_script "$script"
  claude_p "probe-$label" "$prompt" "$@"
  python3 - "$WORK" "$label" "$PROJ" <<'EOF'
import glob, json, os, sys
work, label, proj = sys.argv[1:]
reqs = [json.loads(l) for l in open(os.path.join(work, "model-log.jsonl"))]
reqs = [r for r in reqs if (r.get("reply") or {}).get("kind") in ("tool", "text")]
saw = []
for r in reqs[-1:]:
    for m in r["body"].get("messages", []):
        c = m.get("content")
        for b in (c if isinstance(c, list) else [{"type": "text", "text": c}]):
            if b.get("type") == "text" and b["text"].startswith("Cleaning:"):
                saw.append(b["text"].strip())
            if b.get("type") == "tool_result":
                t = b.get("content")
                saw.append("tool_result " + (t if isinstance(t, str) else json.dumps(t)))
if not saw:
    saw = ["prompt reached the model" if reqs else "no model request"]
out = open(os.path.join(work, f"probe-{label}.out")).read()
try:
    res = json.loads(out.strip().splitlines()[-1])
    result = f"result={res.get('result')!r:.100}"
    if res.get("permission_denials"):
        result += " denials=" + json.dumps([d.get("tool_input") for d in res["permission_denials"]])
except Exception:
    result = "output: " + out.strip().replace("\n", " ")[:160]
files = [f for f in ("victim", "original-ran", "rewritten-ran") if os.path.exists(os.path.join(proj, f))]
fired = len(glob.glob(os.path.join(work, "answers.*")))
cell = lambda t: t.replace("|", "\\|").replace("\n", " ")[:220]
print(f"| {label} | {' '.join(files) or '-'} | {fired} | {len(reqs)} | {cell(' / '.join(saw))} | {cell(result)} |")
EOF
}

probe() {
  new_workdir claude-probe
  start_fake_model
  claude_env
  write_answer_hook
  make_clean_command
  local H=$WORK/answer-hook.sh
  local MISSING='{"type": "command", "command": "/nonexistent/wasm-hooks-hook", "onFailure": "block"}'
  local MISSING_DEFAULT='{"type": "command", "command": "/nonexistent/wasm-hooks-hook"}'
  local RM='{"tool_calls": [{"name": "Bash", "input": {"command": "rm -rf victim", "description": "remove"}}], "final_text": "done"}'
  local ECHO='{"tool_calls": [{"name": "Bash", "input": {"command": "echo original", "description": "echo"}}], "final_text": "done"}'
  local TEXT='{"tool_calls": [], "final_text": "done"}'
  local PY='{"tool_calls": [{"name": "Bash", "input": {"command": "python3 -c \"open(\u0027original-ran\u0027, \u0027w\u0027)\"", "description": "py"}}], "final_text": "done"}'
  echo "| probe | files left in the project | hook ran | model requests | the model saw | claude -p result |"
  echo "|---|---|---|---|---|---|"
  local m
  for m in none allow deny ask defer rewrite block exit2 exit1; do
    probe_one "skill-$m" PreSkillShellCommand "{\"type\": \"command\", \"command\": \"$H PreSkillShellCommand $m\"}" /clean "$TEXT"
  done
  probe_one skill-missing-block PreSkillShellCommand "$MISSING" /clean "$TEXT"
  probe_one skill-missing-default PreSkillShellCommand "$MISSING_DEFAULT" /clean "$TEXT"
  probe_one skill-pretooluse-deny PreToolUse "{\"type\": \"command\", \"command\": \"$H PreToolUse deny\"}" /clean "$TEXT"
  probe_one pretooluse-missing-block PreToolUse "$MISSING" "remove it" "$RM"
  probe_one pretooluse-missing-default PreToolUse "$MISSING_DEFAULT" "remove it" "$RM"
  probe_one prompt-missing-block UserPromptSubmit "$MISSING" "FORBIDDEN prompt" "$TEXT"
  probe_one prompt-missing-default UserPromptSubmit "$MISSING_DEFAULT" "FORBIDDEN prompt" "$TEXT"
  probe_one pretooluse-rewrite-nodecision PreToolUse "{\"type\": \"command\", \"command\": \"$H PreToolUse rewrite\"}" "echo" "$ECHO"
  probe_one pretooluse-none-notallowed PreToolUse "{\"type\": \"command\", \"command\": \"$H PreToolUse none\"}" "py" "$PY" --allowedTools Read
  probe_one pretooluse-rewrite-nodecision-notallowed PreToolUse "{\"type\": \"command\", \"command\": \"$H PreToolUse rewrite-py\"}" "echo" "$ECHO" --allowedTools Read
  probe_one pretooluse-rewrite-nodecision-allowed PreToolUse "{\"type\": \"command\", \"command\": \"$H PreToolUse rewrite-py\"}" "echo" "$ECHO"
}

# ---------------------------------------------------------------- scenarios

agent_run() { claude_p "$@"; }
shell_call() {
  python3 -c 'import json, sys; print(json.dumps({"name": "Bash", "input": {"command": sys.argv[1], "description": "fake model runs a command"}}))' "$1"
}
install_hooks() {
  (cd "$PROJ" && wasm-hooks install claude >"$WORK/install.out" 2>&1) ||
    { cat "$WORK/install.out" >&2; return 1; }
}

# (7) the slash command's inline `rm -rf victim` is stopped by the
# PreToolUse `Bash` guard (through PreSkillShellCommand).
extra_scenarios() {
  make_clean_command
  echo "keep me" >"$PROJ/victim"
  set_script '{"tool_calls": [], "final_text": "cleaned"}'
  audit_mark
  agent_run s7-clean "/clean"
  if [ -e "$PROJ/victim" ] && log_has "Cleaning:"; then
    record "7 /clean inline rm -rf" PASS
  elif [ -e "$PROJ/victim" ]; then
    record "7 /clean inline rm -rf" FAIL "the command was never expanded: $(agent_output_tail s7-clean)"
  else
    local events
    events=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1])).get("hooks",{}); print(",".join(sorted(h)))' \
      "$PROJ/.claude/settings.json" 2>/dev/null)
    record "7 /clean inline rm -rf" FAIL "victim removed; the model saw: $(model_saw | grep -o 'Cleaning:[^"]*' | head -1); installed events: $events; $(audit_summary)"
  fi
}

scenarios() {
  new_workdir claude
  start_fake_model
  claude_env
  run_scenarios
}

# ---------------------------------------------------------------- main

case "${1:-scenarios}" in
  capture) capture ;;
  probe) probe ;;
  scenarios) scenarios ;;
  *) die "usage: $0 [scenarios|capture|probe]" ;;
esac
