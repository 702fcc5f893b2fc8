#!/usr/bin/env bash
# Codex 0.169 (0.171 for `sessions`) against the fake model, offline.
#
#   scripts/agents/codex.sh            the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/codex.sh capture    one payload per event into
#                                      tests/fixtures/codex-X.Y/ (0.169 unless
#                                      CODEX_VERSION) and hook-environment.md
#   scripts/agents/codex.sh probe      what Codex does with chosen answers (0.171+:
#                                      PreModelRequest and PostModelRequest too, run
#                                      through `codex app-server`)
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
FIXTURES=$REPO/tests/fixtures/codex-${VERSION%.*}

EVENTS=(PreToolUse PermissionRequest PostToolUse UserPromptSubmit Stop SessionStart
  SessionEnd PreCompact PostCompact SubagentStart SubagentStop Interrupt)
# Codex 0.171 added two events around each request to the model.
version_at_least() { [ "$(printf '%s\n%s\n' "$1" "$VERSION" | sort -V | head -n1)" = "$1" ]; }
if version_at_least 0.171.0; then EVENTS+=(PreModelRequest PostModelRequest); fi

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

  if version_at_least 0.171.0; then capture_model_requests; fi

  fixtures_reset
  save_session 1
  save_session 3 PermissionRequest
  if version_at_least 0.171.0; then
    rm -rf "$FIXTURES/model-unreachable" "$FIXTURES/compaction"
    say "session 4: $(save_captures "$FIXTURES/model-unreachable" "$WORK/session4" PreModelRequest PostModelRequest)"
    say "session 5: $(save_captures "$FIXTURES/compaction" "$WORK/session5" \
      PreCompact PostCompact PreModelRequest PostModelRequest)"
  fi
  fixtures_done "Codex $VERSION"
}

# capture_model_requests: sessions 4 and 5 (Codex 0.171+), with
# config.toml changed for each and put back after.
#  4: the model unreachable (a closed loopback port): Codex retries (it
#     waits for the network whatever request_max_retries says) until the
#     deadline; PreModelRequest and PostModelRequest fire for every attempt.
#  5: model_auto_compact_token_limit below the fake model's 15 tokens; a
#     first session says hello (discarded), `codex exec resume --last`
#     compacts before its turn (auto): PreCompact, PostCompact, and the
#     model-request events of the compaction request. (Compaction within a
#     turn that has tool calls loops: the compacted history has no tool
#     result, so the fake model asks for the tool again.)
capture_model_requests() {
  local config=$CODEX_HOME/config.toml
  cp "$config" "$WORK/config.saved"
  sed -i -e "s|^base_url = .*|base_url = \"http://127.0.0.1:$(free_port)/v1\"|" "$config"
  RUN_AGENT_SECS=8 capture_session session4 "say hello" "$TEXT_ONLY"
  cp "$WORK/config.saved" "$config"
  sed -i 's/^model_provider = .*/&\nmodel_auto_compact_token_limit = 12/' "$config"
  capture_session session5-first "say hello" "$TEXT_ONLY"
  capture_session session5 "say hello again" "$TEXT_ONLY" resume --last
  cp "$WORK/config.saved" "$config"
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
  if version_at_least 0.171.0; then probe_model_requests; fi
}

# codex_app_turn NAME PROMPT: one turn of a new thread in $PROJ through
# `codex app-server` (JSON-RPC on stdio, as the TUI and IDEs drive Codex),
# which reports every hook run (hook/started, hook/completed: status and
# the entries Codex made of the hook's answer) where `codex exec` prints
# only "hook: EVENT STATUS". Every message it got, one a line, in
# $WORK/NAME.out (run_agent, 40 s at most); its log (RUST_LOG
# codex_hooks=debug) in $WORK/NAME.log.
codex_app_turn() {
  cat >"$WORK/app-turn.py" <<'EOF'
import json, os, subprocess, sys
codex, proj, prompt, log = sys.argv[1:]
p = subprocess.Popen([codex, "app-server"], cwd=proj, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=open(log, "w"), text=True,
                     env=dict(os.environ, RUST_LOG="codex_hooks=debug"))
def send(obj):
    p.stdin.write(json.dumps(obj) + "\n")
    p.stdin.flush()
def wait(id_=None, method=None):
    for line in p.stdout:
        print(line.rstrip("\n"), flush=True)
        msg = json.loads(line)
        if (id_ is not None and msg.get("id") == id_ and "method" not in msg) \
                or (method and msg.get("method") == method):
            return msg
    sys.exit("codex app-server ended")
send({"id": 1, "method": "initialize",
      "params": {"clientInfo": {"name": "wasm-hooks-agents", "title": None, "version": "1"}}})
wait(1)
send({"method": "initialized"})
send({"id": 2, "method": "thread/start", "params": {"cwd": proj}})
thread = wait(2)["result"]["thread"]["id"]
send({"id": 3, "method": "turn/start",
      "params": {"threadId": thread, "input": [{"type": "text", "text": prompt}]}})
wait(method="turn/completed")
p.terminate()
p.wait(timeout=10)
EOF
  run_agent 40 "$1" python3 "$WORK/app-turn.py" "$CODEX" "$PROJ" "$2" "$WORK/$1.log"
}

# mprobe LABEL EVENT HOOK-ENTRY [MATCHER]: one turn (codex_app_turn) with
# one hook (trusted) on EVENT, in a group with MATCHER if given; the model
# calls exec_command `touch original-ran`, then says done. A table row:
# the tool ran, the hook ran (times), model requests, which of the probe's
# marker strings reached which model request (1-based), how the turn
# ended, Codex's report of each hook run (status, entries, and what
# happened while it ran), and what Codex logged of the hook's answer.
MARKERS="PROBE-CONTEXT-4d2 probe-system-message probe-stop-reason probe-block-reason probe-deny-reason probe-exit2-reason probe-exit1-reason"
mprobe() {
  local label=$1 event=$2 entry=$3 matcher=${4:-}
  probe_reset
  python3 - "$event" "$entry" "$matcher" >"$CODEX_HOME/hooks.json" <<'EOF'
import json, sys
event, entry, matcher = sys.argv[1:]
group = {"hooks": [json.loads(entry)]}
if matcher:
    group["matcher"] = matcher
print(json.dumps({"hooks": {event: [group]}}))
EOF
  sed -i '/^\[hooks\.state\./,$d' "$CODEX_HOME/config.toml"
  codex_trust_hooks >/dev/null
  set_script "$(touch_script)"
  codex_app_turn "probe-$label" PROBE-PROMPT
  MARKERS=$MARKERS probe_py "$label" <<'EOF'
for i, r in enumerate(reqs, 1):
    for it in r["body"].get("input", []):
        text = json.dumps(it)
        for m in os.environ["MARKERS"].split():
            if m in text:
                saw.append(f"req {i}: {m} in a {it.get('role') or it.get('type')} item")
# What happened while each hook ran: model requests, commands started.
moments = [(r["ts"] * 1000, f"model request {i}") for i, r in enumerate(reqs, 1)]
started, runs, turn = {}, [], "no turn/completed"
msgs = []
for line in out.splitlines():
    try:
        msgs.append(json.loads(line))
    except ValueError:
        pass
for msg in msgs:
    if msg.get("method") == "item/started" and msg["params"]["item"].get("type") == "commandExecution":
        moments.append((msg["emittedAtMs"], "command started"))
for msg in msgs:
    if msg.get("method") == "hook/started":
        started[msg["params"]["run"]["id"]] = msg["emittedAtMs"]
    elif msg.get("method") == "hook/completed":
        r = msg["params"]["run"]
        s = f"{r['status']} ({r['executionMode']}, {r['durationMs']} ms)"
        if r.get("statusMessage"):
            s += f" message {r['statusMessage']!r}"
        if r.get("entries"):
            s += " " + json.dumps(r["entries"])
        t0, t1 = started.get(r["id"], 0), msg["emittedAtMs"]
        during = [what for t, what in moments if t0 <= t <= t1]
        s += "; while it ran: " + (", ".join(during) or "nothing")
        runs.append(s)
    elif msg.get("method") == "turn/completed":
        t = msg["params"]["turn"]
        turn = t["status"] + (f": {json.dumps(t['error'])}" if t.get("error") else "")
import re
logged = [re.sub(r"\x1b\[[0-9;]*m", "", l).split("codex_hooks::", 1)[1].strip()
          for l in open(os.path.join(work, f"probe-{label}.log")) if "codex_hooks::" in l]
print(f"| {label} | {made()} | {fired} | {len(reqs)} | {cell(' / '.join(saw) or '-')} | "
      f"{cell(turn)} | {cell(' / '.join(runs) or '-', 700)} | "
      f"{cell(logged[0] if logged else '-', 240)}{f' (×{len(logged)})' if len(logged) > 1 else ''} |")
EOF
}

# probe_model_requests: what Codex 0.171 does with the answers of a
# PreModelRequest and a PostModelRequest hook (mprobe).
probe_model_requests() {
  echo
  table_head probe "files made" "hook ran" "model requests" "markers the model got" "turn" "hook runs (app-server hook/completed)" "Codex's log (codex_hooks=debug)"
  local ev m sleepy
  for ev in PreModelRequest PostModelRequest; do
    for m in none exit2 block deny stop context sysmsg exit1 garbage; do
      mprobe "$ev-$m" "$ev" "$(answer_entry "$ev" "$m")"
    done
    mprobe "$ev-missing" "$ev" '{"type": "command", "command": "/nonexistent/wasm-hooks-hook"}'
    sleepy=$(answer_entry "$ev" sleep)
    mprobe "$ev-timeout1s" "$ev" "${sleepy%\}}, \"timeout\": 1}"
    mprobe "$ev-sleep5s-timeout10s" "$ev" "${sleepy%\}}, \"timeout\": 10}"
    mprobe "$ev-matcher-sampling-exit2" "$ev" "$(answer_entry "$ev" exit2)" sampling
    mprobe "$ev-matcher-nomatch-exit2" "$ev" "$(answer_entry "$ev" exit2)" nomatch
  done
  # The model unreachable (a closed loopback port; Codex retries every few
  # seconds): does either hook's exit 2 stop the retries? 12 s each.
  local config=$CODEX_HOME/config.toml
  cp "$config" "$WORK/config.saved"
  sed -i "s|^base_url = .*|base_url = \"http://127.0.0.1:$(free_port)/v1\"|" "$config"
  for ev in PreModelRequest PostModelRequest; do
    RUN_AGENT_SECS=12 mprobe "$ev-exit2-model-unreachable" "$ev" "$(answer_entry "$ev" exit2)"
  done
  cp "$WORK/config.saved" "$config"
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
