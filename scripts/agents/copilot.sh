#!/usr/bin/env bash
# GitHub Copilot CLI 1.0.102 against the fake model, offline.
#
#   scripts/agents/copilot.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/copilot.sh capture    one payload per event into
#                                        tests/fixtures/copilot-1.0.102/ (its own
#                                        format, and claude-format/ for the
#                                        repository's .claude/settings.json),
#                                        and hook-environment.md
#   scripts/agents/copilot.sh probe      what Copilot CLI does with chosen answers
#   scripts/agents/copilot.sh sessions   one session with a wasm-hooks guard; Copilot
#                                        CLI's own session history into
#                                        tests/fixtures/sessions/copilot-1.0.102/
#
# KEEP=1 keeps the temporary directory. Copilot CLI is run as
#   COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:PORT/v1
#   COPILOT_PROVIDER_TYPE=openai COPILOT_MODEL=gpt-4.1
#   GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true   (repo hooks in -p mode)
#   copilot -p PROMPT --allow-all-tools --no-auto-update
# with HOME and COPILOT_HOME in the temporary directory; it speaks OpenAI
# Chat Completions (streamed) to the fake model.
AGENT=copilot
VERSION=1.0.102
. "$(dirname "$0")/common.sh"

agent_install LOADER @github/copilot copilot "$@"
FIXTURES=$REPO/tests/fixtures/copilot-$VERSION

# The native binary itself (the npm loader only finds and starts it).
ARCH=$(npm_arch)
COPILOT="$AGENTS_CACHE/@github/copilot@$VERSION/node_modules/@github/copilot-linux-$ARCH/copilot"
[ -x "$COPILOT" ] || COPILOT=$LOADER

EVENTS=(sessionStart sessionEnd userPromptSubmitted userPromptTransformed preToolUse
  preMcpToolCall postToolUse postToolUseFailure errorOccurred agentStop subagentStart
  subagentStop preCompact permissionRequest notification)
CLAUDE_EVENTS=(SessionStart SessionEnd UserPromptSubmit PreToolUse PostToolUse
  PostToolUseFailure PermissionRequest Notification Stop SubagentStart SubagentStop PreCompact)

# agent_setup: a git repository (repository hooks are read from its root),
# COPILOT_HOME in the temporary home, and the environment that points
# Copilot CLI at the fake model. The binary unpacks its JavaScript (235 MB)
# on first start; COPILOT_PKG_CACHE_HOME keeps that out of every temporary
# home.
agent_setup() {
  git -C "$PROJ" init -q 2>/dev/null
  mkdir -p "$HOME/.copilot" "$PROJ/.github/hooks"
  agent_env COPILOT_HOME="$HOME/.copilot" COPILOT_PKG_CACHE_HOME="$AGENTS_CACHE/copilot-pkg" \
    COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false \
    COPILOT_PROVIDER_BASE_URL="${COPILOT_BASE_URL:-http://127.0.0.1:$FM_PORT/v1}" \
    COPILOT_PROVIDER_TYPE=openai COPILOT_MODEL=gpt-4.1 \
    GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true
}

# copilot_run NAME PROMPT [ARGS...]: one `copilot -p` run in $PROJ (90 s at
# most), every tool allowed unless ARGS is `--ask` (then no --allow-all-tools).
copilot_run() {
  local name=$1 prompt=$2
  shift 2
  local allow=(--allow-all-tools)
  if [ "${1:-}" = --ask ]; then allow=(); shift; fi
  run_agent 90 "$name" "$COPILOT" -p "$prompt" "${allow[@]}" --no-auto-update "$@"
}

# The repository's hook file with one capture hook per event (Copilot CLI's
# own format), or the Claude Code format in .claude/settings.json.
write_capture_hooks() {
  python3 - "$WORK/capture-hook.sh" "${EVENTS[@]}" >"$PROJ/.github/hooks/capture.json" <<'EOF'
import json, sys
hook = sys.argv[1]
print(json.dumps({"version": 1, "hooks": {ev: [{"type": "command", "bash": f"{hook} {ev}", "timeoutSec": 30}]
                                          for ev in sys.argv[2:]}}, indent=2))
EOF
}
write_claude_capture_hooks() {
  mkdir -p "$PROJ/.claude"
  python3 - "$WORK/capture-hook.sh" "${CLAUDE_EVENTS[@]}" >"$PROJ/.claude/settings.json" <<'EOF'
import json, sys
hook = sys.argv[1]
tools = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"}
print(json.dumps({"hooks": {ev: [dict({"matcher": "*"} if ev in tools else {},
                                      hooks=[{"type": "command", "command": f"{hook} {ev}"}])]
                            for ev in sys.argv[2:]}}, indent=2))
EOF
}

# save_tool_variants OUTDIR SRCDIR EVENT...: besides <event>.json, one
# <event>_<tool>.json for each other tool the event was seen with.
save_tool_variants() {
  py "$@" <<'EOF'
outdir, src, *events = sys.argv[2:]
done = set()
for f in sorted(glob.glob(os.path.join(src, "*.json")), key=lambda p: int(os.path.basename(p).split(".")[1])):
    ev = os.path.basename(f).split(".")[0]
    if ev not in events:
        continue
    obj = json.loads(clean(open(f).read()))
    tool = obj.get("toolName") or obj.get("tool_name")
    if not tool or (ev, tool) in done:
        continue
    first = not any(e == ev for e, _ in done)
    done.add((ev, tool))
    if first:
        continue  # that one is <event>.json
    name = f"{ev}_{tool.replace('/', '-')}.json"
    with open(os.path.join(outdir, name), "w") as out:
        out.write(json.dumps(obj, indent=2, ensure_ascii=False))
    print(name, end=" ")
EOF
}

# ---------------------------------------------------------------- capture

capture() {
  begin copilot-capture
  write_capture_hook
  write_capture_hooks
  write_mcp_server
  echo hello >"$PROJ/README.md"

  # Session 1: the shell, view, create, edit, and a view that fails.
  local calls task
  calls="$(tool_call bash command "echo hi" description "say hi"),$(tool_call view path "$PROJ/README.md")"
  calls+=",$(tool_call create path "$PROJ/new.txt" file_text $'one\n')"
  calls+=",$(tool_call edit path "$PROJ/new.txt" old_str one new_str two),$(tool_call view path "$PROJ/missing.txt")"
  task=$(tool_call task name helper prompt "look around" agent_type explore description "a sub task")
  capture_session session1 "run a command and edit a file" "$(script_of "$calls")"
  # Session 2: the same environment, for hook-environment.md.
  capture_session session2 "run one command" "$(script_of "$(tool_call bash command "echo again" description "say again")")"
  # Session 3: a subagent (the explore agent has no `task` tool: its own
  # first call of the script fails, then it answers).
  capture_session session3 "use a subagent" "$(script_of "$task")"
  # Session 4: an MCP tool.
  capture_session session4 "use the echo tool" "$(script_of "$(tool_call echosrv-echo text hi)")" \
    --additional-mcp-config "@$WORK/mcp-config.json"
  # Session 5: no --allow-all-tools: nobody can approve, so Copilot notifies.
  capture_session session5 "run a command" \
    "$(script_of "$(tool_call bash command "rm -f no-such-file" description remove)")" --ask
  # Session 6: /compact.
  copilot_run session6 "/compact"
  end_session session6
  # Session 7: the model cannot be reached (a closed loopback port).
  agent_env COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:9/v1
  copilot_run session7 "say hi"
  agent_env COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$FM_PORT/v1"
  end_session session7
  # Session 8: the Claude Code format, from the repository's .claude/settings.json.
  rm -f "$PROJ/.github/hooks/capture.json" "$PROJ/new.txt"
  write_claude_capture_hooks
  capture_session session8 "run a command and edit a file" "$(script_of "$calls" "$task")"

  rm -rf "$FIXTURES/claude-format"
  fixtures_reset
  mkdir -p "$FIXTURES/claude-format"
  local s
  save_session 1
  say "  variants: $(save_tool_variants "$FIXTURES" "$WORK/session1" preToolUse postToolUse permissionRequest)"
  save_session 3 subagentStart subagentStop
  save_session 4 preMcpToolCall
  save_session 5 notification
  save_session 6 preCompact
  save_session 7 errorOccurred
  say "claude format: $(save_captures "$FIXTURES/claude-format" "$WORK/session8")"
  say "  variants: $(save_tool_variants "$FIXTURES/claude-format" "$WORK/session8" PreToolUse PostToolUse)"
  for s in 1 2 3 4 5 6 7 8; do say "session $s: exit $(cat "$WORK/session$s.rc")"; done
  fixtures_done "Copilot CLI $VERSION"
}

# ---------------------------------------------------------------- probe

# cprobe LABEL EVENT ENTRY PROMPT SCRIPT [ARGS]: one session with one hook
# (Copilot's own format unless EVENT is PascalCase) in the repository;
# prints a table row of what happened.
cprobe() {
  local label=$1 event=$2 entry=$3 prompt=$4 script=$5
  shift 5
  probe_reset "$PROJ/.github/hooks/"*.json
  printf '{"version": 1, "hooks": {"%s": [%s]}}\n' "$event" "$entry" >"$PROJ/.github/hooks/probe.json"
  probe_run "$label" "$prompt" "$script" "$@"
  probe_py "$label" <<'EOF'
for r in reqs[1:2]:
    for m in r["body"].get("messages", [])[2:]:
        if m.get("role") in ("tool", "user"):
            saw.append(f"{m['role']}: " + str(m.get("content"))[:140])
said = [l.strip() for l in out.splitlines() if l.strip().startswith(("!", "✗", "└"))][:3]
row(saw, " / ".join(said), 220)
EOF
}

probe() {
  probe_begin "files made" "hook ran" "model requests" "prompt reached the model" "the model got (2nd request)" "copilot said"
  local H=$WORK/answer-hook.sh m TEXT=$TEXT_ONLY TOUCH
  TOUCH=$(script_of "$(tool_call bash command "touch original-ran" description touch)")
  # Copilot's own answers: a hook that records its input and prints one file.
  local ANS='{"type": "command", "bash": "cat >'$WORK'/answers.$$; cat '$WORK'/probe-answer.json", "timeoutSec": 30}'
  own() { printf '%s\n' "$1" >"$WORK/probe-answer.json"; printf '%s' "$ANS"; }
  cat >"$WORK/slow-hook.sh" <<EOF
#!/bin/sh
cat >"$WORK/answers.\$\$"
sleep 5
echo '{"permissionDecision": "deny", "decision": "block", "reason": "late"}'
EOF
  chmod +x "$WORK/slow-hook.sh"
  cprobe pre-deny preToolUse "$(own '{"permissionDecision":"deny","permissionDecisionReason":"probe-deny-reason"}')" PROBE-PROMPT "$TOUCH"
  cprobe pre-ask preToolUse "$(own '{"permissionDecision":"ask","permissionDecisionReason":"probe-ask-reason"}')" PROBE-PROMPT "$TOUCH"
  cprobe pre-allow-noflag preToolUse "$(own '{"permissionDecision":"allow"}')" PROBE-PROMPT "$TOUCH" --ask
  cprobe pre-modifiedArgs preToolUse "$(own '{"modifiedArgs":{"command":"touch rewritten-ran","description":"t"}}')" PROBE-PROMPT "$TOUCH"
  cprobe pre-hookSpecificOutput preToolUse "$(own '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}')" PROBE-PROMPT "$TOUCH"
  cprobe pre-context preToolUse "$(own '{"additionalContext":"probe-context"}')" PROBE-PROMPT "$TOUCH"
  cprobe post-modifiedResult postToolUse "$(own '{"modifiedResult":{"resultType":"success","textResultForLlm":"probe-modified-result"}}')" PROBE-PROMPT "$TOUCH"
  cprobe post-block postToolUse "$(own '{"decision":"block","reason":"probe-block-reason"}')" PROBE-PROMPT "$TOUCH"
  cprobe perm-deny permissionRequest "$(own '{"behavior":"deny","message":"probe-deny-reason"}')" PROBE-PROMPT "$TOUCH"
  cprobe perm-allow-over-deny-rule permissionRequest "$(own '{"behavior":"allow"}')" PROBE-PROMPT "$TOUCH" --deny-tool 'shell(touch)'
  cprobe prompt-block userPromptSubmitted "$(own '{"decision":"block","reason":"probe-block-reason"}')" PROBE-PROMPT "$TEXT"
  cprobe prompt-deny userPromptSubmitted "$(own '{"permissionDecision":"deny","permissionDecisionReason":"probe-deny-reason"}')" PROBE-PROMPT "$TEXT"
  cprobe prompt-modifiedPrompt userPromptSubmitted "$(own '{"modifiedPrompt":"a replaced prompt"}')" PROBE-PROMPT "$TEXT"
  cprobe stop-block agentStop "$(own '{"decision":"block","reason":"probe-block-reason"}')" PROBE-PROMPT "$TEXT"
  for m in exit2 exit1; do
    cprobe "pre-$m" preToolUse "{\"type\": \"command\", \"bash\": \"$H preToolUse $m\", \"timeoutSec\": 30}" PROBE-PROMPT "$TOUCH"
    cprobe "prompt-$m" userPromptSubmitted "{\"type\": \"command\", \"bash\": \"$H userPromptSubmitted $m\", \"timeoutSec\": 30}" PROBE-PROMPT "$TEXT"
  done
  for m in preToolUse userPromptSubmitted; do
    local s=$TOUCH
    [ "$m" = userPromptSubmitted ] && s=$TEXT
    cprobe "$m-missing-bash" "$m" '{"type": "command", "bash": "/nonexistent/wasm-hooks-hook", "timeoutSec": 30}' PROBE-PROMPT "$s"
    cprobe "$m-missing-exec" "$m" '{"type": "command", "exec": "/nonexistent/wasm-hooks-hook", "args": ["x"], "timeoutSec": 30}' PROBE-PROMPT "$s"
    cprobe "$m-timeout" "$m" "{\"type\": \"command\", \"bash\": \"$WORK/slow-hook.sh\", \"timeoutSec\": 1}" PROBE-PROMPT "$s"
  done
}

# ---------------------------------------------------------------- sessions
#
# One session recorded for `wasm-hooks replay`: wasm-hooks installed with
# a guard that denies shell commands containing `rm -rf`; the model calls
# bash `ls` (runs), bash `rm -rf build` (denied by the guard), create
# `.env` (runs), create `notes.txt` (runs), then answers. Copilot CLI's own
# history under ~/.copilot (COPILOT_HOME) is copied as written into
# tests/fixtures/sessions/copilot-1.0.102/ (the layout below ~/.copilot
# kept).
#
# The home is really /home/dev (not mapped to it afterwards): the run is in
# a private mount namespace where the temporary home is bind-mounted on
# /home/dev, so the records hold the paths a user's would.

SESSIONS=$REPO/tests/fixtures/sessions/copilot-$VERSION
SESSION_DENY="rm -rf is not allowed in this project (wasm-hooks guard no-rm-rf)"

# sessions_mntns, sessions_workdir and sessions_guard: common.sh.

sessions() {
  sessions_mntns
  sessions_workdir copilot-sessions
  start_fake_model
  agent_setup
  sessions_guard
  mkdir -p "$PROJ/build" && echo "keep me" >"$PROJ/build/keep"

  set_script "$(script_of "$(tool_call bash command ls description "list the files")" \
    "$(tool_call bash command "rm -rf build" description "clean the build")" \
    "$(tool_call create path "$PROJ/.env" file_text TOKEN=abc)" \
    "$(tool_call create path "$PROJ/notes.txt" file_text $'remember the milk\n')")"
  copilot_run session "list the files, clean the build, then write .env and notes.txt"
  say "copilot: exit $(cat "$WORK/session.rc"); build/: $([ -d "$PROJ/build" ] && echo kept || echo REMOVED);" \
    ".env: $(cat "$PROJ/.env" 2>/dev/null || echo MISSING); notes.txt: $([ -e "$PROJ/notes.txt" ] && echo written || echo MISSING)"
  say "$(audit_summary)"
  say "files under ~/.copilot:"
  (cd "$HOME/.copilot" && find . -type f | sort | sed 's/^/  /') >&2
  sessions_save
}

# sessions_save: Copilot CLI's history as written (session-state/, the
# session-store.db index with its -wal and -shm, logs/; not the empty lock
# files nor config.json) into $SESSIONS, then sessions_check.
sessions_save() {
  local c=$HOME/.copilot
  rm -rf "$SESSIONS"
  mkdir -p "$SESSIONS"
  (cd "$c" && find session-state session-store.db* logs -type f ! -name '*.lock' -print0 |
    xargs -0 cp --parents -p -t "$SESSIONS")
  say "saved into $SESSIONS:"
  (cd "$SESSIONS" && find . -type f | sort | sed 's/^/  /') >&2
  sessions_check
}

# sessions_check: the saved events.jsonl holds the four tool calls, and the
# rm -rf call's result is the wasm-hooks denial.
sessions_check() {
  local out
  out=$(python3 - "$SESSIONS" "$SESSION_DENY" <<'EOF'
import glob, json, sys
root, deny = sys.argv[1:]
files = glob.glob(f"{root}/session-state/*/events.jsonl")
if len(files) != 1:
    print(f"FAIL one events.jsonl: {files}")
    sys.exit()
recs = [json.loads(l) for l in open(files[0])]
calls = [t for r in recs if r["type"] == "assistant.message" for t in r["data"].get("toolRequests") or []]
done = {r["data"]["toolCallId"]: r["data"] for r in recs if r["type"] == "tool.execution_complete"}
for c in calls:
    d = done.get(c["toolCallId"], {})
    print(f"  {c['name']} {json.dumps(c['arguments'])[:70]} -> success={d.get('success')}: "
          f"{json.dumps(d.get('result') or d.get('error'))[:110]}")
want = [("bash", "ls"), ("bash", "rm -rf build"),
        ("create", "/home/dev/project/.env"), ("create", "/home/dev/project/notes.txt")]
got = [(c["name"], c["arguments"].get("command") or c["arguments"].get("path")) for c in calls]
print(("PASS" if got == want else "FAIL") + f" the four tool calls: {got}")
rm = [done.get(c["toolCallId"]) for c in calls if c["arguments"].get("command") == "rm -rf build"]
print(("PASS" if rm and deny in json.dumps(rm[0]) else "FAIL")
      + " rm -rf build denied by wasm-hooks in the record")
EOF
)
  say "$out"
  grep -q '^FAIL' <<<"$out" && return 1
  return 0
}

# ---------------------------------------------------------------- scenarios

agent_run() { copilot_run "$@"; }
shell_call() { tool_call bash command "$1" description "run it"; }
# The repository's .github/hooks/wasm-hooks.json (read in -p mode because of
# GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true).
install_hooks() {
  wasm_hooks_install || return 1
  ls "$PROJ"/.github/hooks/*.json >/dev/null 2>&1 || { say "copilot: install wrote no hook file"; return 1; }
}

# (14) a `protect-paths` wasm guard stops Copilot's `create` of `.env`
# (#43: `create {path, file_text}` reaches guards as `Write {file_path,
# content}`); a create of another file goes through.
# (15) an MCP matcher written the Claude Code way (`mcp__echosrv__echo`)
# fires on Copilot's `echosrv-echo` (the server named in
# $COPILOT_HOME/mcp-config.json).
extra_scenarios() {
  local plugins=$REPO/target/plugins/wasm32-wasip2/release
  cp "$plugins/protect_paths.wasm" "$PROJ/.wasm-hooks/protect.wasm"
  write_mcp_server
  cp "$WORK/mcp-config.json" "$HOME/.copilot/mcp-config.json"
  add_guards_for_tools_and_mcp
  set_script "$(script_of "$(tool_call create path "$PROJ/notes.txt" file_text "plain")")"
  agent_run s14-control "write the notes"
  if [ ! -e "$PROJ/notes.txt" ]; then
    record "14 protect-paths stops create .env" FAIL "the control create did not run: $(agent_output_tail s14-control)"
  else
    set_script "$(script_of "$(tool_call create path "$PROJ/.env" file_text "SECRET=1")")"
    audit_mark
    agent_run s14-env "write the env file"
    expect "14 protect-paths stops create .env" ".env was written" test ! -e "$PROJ/.env"
  fi
  set_script "$(script_of "$(tool_call echosrv-echo text "the secret")")"
  audit_mark
  agent_run s15-mcp "use the echo tool"
  expect "15 a Claude Code MCP matcher fires on echosrv-echo" "the model saw: $(model_saw)" \
    log_has_after_tool MCP-MATCHER-DENIED
}

if [ "${1:-}" = sessions ]; then sessions; else agent_main "$@"; fi
