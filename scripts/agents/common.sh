# shellcheck shell=bash
# Shared helpers for scripts/agents/*.sh: install an agent from npm into a
# cache, start the fake model, set up a throw-away HOME and project with
# wasm-hooks on PATH, record PASS/FAIL, capture hook payloads.
#
# Nothing here talks to anything but 127.0.0.1 (and the npm registry, for
# installs). Every process started is remembered by pid and stopped by pid.

set -uo pipefail
AGENTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$AGENTS_DIR/../.." && pwd)
AGENTS_CACHE=${WASM_HOOKS_AGENTS_CACHE:-$HOME/.cache/wasm-hooks-agents}
# The real HOME, before a run replaces it by a temporary one.
REAL_HOME=${REAL_HOME:-$HOME}
FAILS=0
PASSES=0
RESULTS=()
_PIDS=()

say() { printf '%s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# install_agent PACKAGE VERSION BIN -> prints the path of the agent's binary.
install_agent() {
  local pkg=$1 ver=$2 bin=$3
  local dir="$AGENTS_CACHE/$pkg@$ver"
  if [ ! -x "$dir/node_modules/.bin/$bin" ]; then
    mkdir -p "$dir"
    say "installing $pkg@$ver into $dir"
    HOME=$REAL_HOME timeout 900 npm install --no-audit --no-fund --loglevel=error \
      --prefix "$dir" "$pkg@$ver" >"$dir.install.log" 2>&1 \
      || { cat "$dir.install.log" >&2; die "npm install $pkg@$ver failed"; }
  fi
  [ -x "$dir/node_modules/.bin/$bin" ] || die "$pkg@$ver has no $bin"
  printf '%s\n' "$dir/node_modules/.bin/$bin"
}

# agent_install VAR PACKAGE BIN [ARGS...]: install PACKAGE@$VERSION and set
# VAR to its BIN (exit 1 if that fails), then isolate_network: the rest of
# the script runs again, with ARGS, without a network.
agent_install() {
  local var=$1 pkg=$2 bin=$3 path
  shift 3
  path=$(install_agent "$pkg" "$VERSION" "$bin") || exit 1
  printf -v "$var" '%s' "$path"
  isolate_network "$0" "$@"
}

# isolate_network SCRIPT ARGS...: run the rest of SCRIPT in a new network
# namespace that has only a loopback interface (`unshare -n`, when this user
# may), so that nothing an agent tries can leave 127.0.0.1. Call it after
# install_agent (npm needs the network). WASM_HOOKS_AGENTS_NETNS=off skips it.
isolate_network() {
  [ -n "${WASM_HOOKS_AGENTS_IN_NETNS:-}" ] && return 0
  [ "${WASM_HOOKS_AGENTS_NETNS:-}" = off ] && return 0
  if unshare -n true 2>/dev/null; then
    exec unshare -n env WASM_HOOKS_AGENTS_IN_NETNS=1 bash -c \
      'ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null; exec bash "$0" "$@"' "$@"
  fi
  say "note: no network namespace (unshare -n refused); agents run on the host network"
}

# wait_for_binaries: the wasm-hooks binaries may be being rebuilt.
wait_for_binaries() {
  local i
  for i in $(seq 1 60); do
    if [ -x "$REPO/target/debug/wasm-hooks" ] && [ -x "$REPO/target/debug/wasm-hooks-hook" ] \
      && "$REPO/target/debug/wasm-hooks" --version >/dev/null 2>&1; then
      return 0
    fi
    [ "$i" = 1 ] && say "waiting for target/debug/wasm-hooks (being rebuilt?)"
    sleep 5
  done
  die "target/debug/wasm-hooks is missing"
}

# new_workdir NAME: a temporary directory with a HOME (home/dev) and a
# project (home/dev/project), so captured paths map cleanly to /home/dev.
# Sets WORK, THOME, PROJ and the XDG variables wasm-hooks reads.
new_workdir() {
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/wh-agents-$1.XXXXXX")
  THOME=$WORK/home/dev
  PROJ=$THOME/project
  mkdir -p "$PROJ" "$THOME/.config" "$THOME/.cache" "$THOME/.local/state" "$WORK/run"
  chmod 700 "$WORK/run"
  export HOME=$THOME
  export XDG_CONFIG_HOME=$THOME/.config XDG_CACHE_HOME=$THOME/.cache \
    XDG_STATE_HOME=$THOME/.local/state XDG_RUNTIME_DIR=$WORK/run
  # A compile cache shared between runs keeps plugins from being recompiled.
  export WASM_HOOKS_CACHE_DIR=${WASM_HOOKS_CACHE_DIR:-$REAL_HOME/.cache/wasm-hooks}
  export PATH="$REPO/target/debug:$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin"
  unset CLAUDE_PROJECT_DIR CODEX_HOME GEMINI_API_KEY ANTHROPIC_API_KEY OPENAI_API_KEY
  # Agents run with exactly this environment (env -i), so that runs do not
  # depend on the machine's and hook-environment.md shows the agent's doing.
  AGENT_ENV=(HOME="$HOME" PATH="$PATH" LANG=C.UTF-8 TERM=dumb SHELL=/bin/bash
    USER="$(id -un)" LOGNAME="$(id -un)" TMPDIR="${TMPDIR:-/tmp}"
    XDG_CONFIG_HOME="$XDG_CONFIG_HOME" XDG_CACHE_HOME="$XDG_CACHE_HOME"
    XDG_STATE_HOME="$XDG_STATE_HOME" XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR"
    WASM_HOOKS_CACHE_DIR="$WASM_HOOKS_CACHE_DIR"
    DISABLE_TELEMETRY=1 DO_NOT_TRACK=1 NO_UPDATE_NOTIFIER=1)
  trap cleanup EXIT
}

# agent_env NAME=VALUE...: add to the agents' environment.
agent_env() { AGENT_ENV+=("$@"); }

cleanup() {
  local pid f
  for pid in "${_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  # wasm-hooks daemons started for this run: each lock file holds its pid.
  if [ -n "${WORK:-}" ] && [ -d "$WORK/run/wasm-hooks" ]; then
    for f in "$WORK/run/wasm-hooks"/*; do
      [ -f "$f" ] || continue
      pid=$(head -c 32 "$f" 2>/dev/null | tr -cd '0-9')
      [ -n "$pid" ] && kill "$pid" 2>/dev/null
    done
  fi
  if [ -n "${WORK:-}" ] && [ -z "${KEEP:-}" ]; then
    rm -rf "$WORK"
  elif [ -n "${WORK:-}" ]; then
    say "kept $WORK"
  fi
}

# start_fake_model: the scripted model on a loopback port (FM_PORT); its
# request log is FM_LOG, its script FM_SCRIPT (rewrite it with set_script).
start_fake_model() {
  FM_SCRIPT=$WORK/model-script.json
  FM_LOG=$WORK/model-log.jsonl
  echo '{"tool_calls": [], "final_text": "done"}' >"$FM_SCRIPT"
  : >"$FM_LOG"
  python3 "$AGENTS_DIR/fake_model/server.py" --port 0 --script "$FM_SCRIPT" \
    --log "$FM_LOG" --port-file "$WORK/model-port" >/dev/null 2>"$WORK/model-stderr" &
  _PIDS+=($!)
  local i
  for i in $(seq 1 50); do [ -s "$WORK/model-port" ] && break; sleep 0.1; done
  FM_PORT=$(cat "$WORK/model-port") || die "fake model did not start"
}

# set_script JSON: the model's next script; the log starts afresh.
set_script() {
  printf '%s\n' "$1" >"$FM_SCRIPT.tmp" && mv "$FM_SCRIPT.tmp" "$FM_SCRIPT"
  : >"$FM_LOG"
}

# log_has TEXT: TEXT appears in some model request (bodies, JSON-decoded).
log_has() {
  python3 - "$FM_LOG" "$1" <<'EOF'
import json, sys
needle = sys.argv[2]
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("reply", {}) and e["reply"].get("kind") in ("tool", "text"):
        if needle in json.dumps(e.get("body"), ensure_ascii=False):
            sys.exit(0)
sys.exit(1)
EOF
}

# log_model_requests: how many model requests (not side calls) were made.
log_model_requests() {
  python3 - "$FM_LOG" <<'EOF'
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if (e.get("reply") or {}).get("kind") in ("tool", "text"):
        n += 1
print(n)
EOF
}

# record NAME STATUS DETAIL
record() {
  local name=$1 status=$2 detail=${3:-}
  if [ "$status" = PASS ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); fi
  RESULTS+=("$status  $AGENT  $name${detail:+  ($detail)}")
  printf '%s  %s  %s%s\n' "$status" "$AGENT" "$name" "${detail:+  ($detail)}"
}

# expect NAME DETAIL-ON-FAIL COMMAND...: PASS when COMMAND succeeds; a FAIL
# also says what wasm-hooks decided since the scenario began.
expect() {
  local name=$1 detail=$2
  shift 2
  if "$@"; then record "$name" PASS; else record "$name" FAIL "$detail; $(audit_summary)"; fi
}

finish() {
  say ""
  say "$AGENT: $PASSES passed, $FAILS failed"
  [ "$FAILS" = 0 ]
}

# run_agent SECONDS LOGNAME COMMAND...: run the agent in $PROJ with a
# deadline (RUN_AGENT_SECS, when set, in place of SECONDS), output in
# $WORK/LOGNAME.out; never fails the script.
run_agent() {
  local secs=${RUN_AGENT_SECS:-$1} name=$2
  shift 2
  env -i "${AGENT_ENV[@]}" env -0 >"$WORK/$name.launch-env"
  (cd "$PROJ" && env -i "${AGENT_ENV[@]}" timeout -k 5 "$secs" "$@" \
    </dev/null >"$WORK/$name.out" 2>&1)
  local rc=$?
  echo "$rc" >"$WORK/$name.rc"
  [ "$rc" = 124 ] && say "  ($name: timed out after ${secs}s)"
  return 0
}

# ---------------------------------------------------------------- drivers
#
# An agent script (claude.sh, ...) sets AGENT and VERSION, sources this
# file (which sets -uo pipefail), installs its agent (agent_install), then
# defines
#   agent_setup             what a run of the agent needs once new_workdir
#                           and start_fake_model are done (config, agent_env)
#   agent_run NAME PROMPT   one session of the agent in $PROJ
#   shell_call COMMAND      the JSON of one tool call of its shell tool
#   capture, probe          its `capture` and `probe` modes
# may define install_hooks (see below) and extra_scenarios, and ends with
# `agent_main "$@"`.

# npm_arch: this machine's architecture as npm packages name it.
npm_arch() {
  case $(uname -m) in
    x86_64 | amd64) echo x64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) echo unknown ;;
  esac
}

# begin NAME: a new workdir NAME, the fake model, the agent's setup.
begin() {
  new_workdir "$1"
  start_fake_model
  agent_setup
}

# wasm_hooks_install: `wasm-hooks install $AGENT` in the project, its output
# in $WORK/install.out (shown on failure). Installed from a copy of the
# programs in $WH_BIN (inside the project), which `install` writes by its
# absolute path and which (9) and (9b) take away.
wasm_hooks_install() {
  WH_BIN=$PROJ/.wh-bin
  mkdir -p "$WH_BIN"
  cp "$REPO/target/debug/wasm-hooks" "$REPO/target/debug/wasm-hooks-hook" "$WH_BIN/"
  (cd "$PROJ" && "$WH_BIN/wasm-hooks" install "$AGENT" >"$WORK/install.out" 2>&1) ||
    { cat "$WORK/install.out" >&2; return 1; }
}

# install_hooks: `wasm-hooks install $AGENT`, and whatever trust the agent
# itself needs (an agent script redefines it for that).
install_hooks() { wasm_hooks_install; }

# tool_call NAME [KEY VALUE]...: the JSON of one tool call of the script,
# {"name": NAME, "input": {KEY: VALUE, ...}}.
tool_call() {
  python3 -c 'import json, sys; a = sys.argv[2:]; print(json.dumps({"name": sys.argv[1], "input": dict(zip(a[::2], a[1::2]))}))' "$@"
}

# script_of [CALL]...: a model script that makes these tool calls (JSON, as
# tool_call prints them), then says "done".
script_of() {
  local IFS=,
  printf '{"tool_calls": [%s], "final_text": "done"}\n' "$*"
}
TEXT_ONLY='{"tool_calls": [], "final_text": "done"}'

# scenarios: the checks (run_scenarios) in a workdir of their own.
scenarios() {
  begin "$AGENT"
  run_scenarios
}

# agent_main [scenarios|capture|probe]: what an agent script does.
agent_main() {
  case "${1:-scenarios}" in
    capture) capture ;;
    probe) probe ;;
    scenarios) scenarios ;;
    *) die "usage: $0 [scenarios|capture|probe]" ;;
  esac
}

# py ARG... <<'EOF' PROGRAM EOF: python3 runs PROGRAM with $WORK ARG... as
# its arguments, after a prelude that sets `work` and `home` (the temporary
# one) and clean(TEXT): TEXT with the temporary home as /home/dev and $WORK
# as /tmp/work.
py() {
  python3 -c "$_PY_PRELUDE
$(cat)" "$WORK" "$@"
}
_PY_PRELUDE=$(cat <<'EOF'
import glob, json, os, sys
work = sys.argv[1]
home = os.path.join(work, "home", "dev")
def clean(s):
    for a, b in [(os.path.realpath(home), "/home/dev"), (home, "/home/dev"), (work, "/tmp/work")]:
        s = s.replace(a, b)
    return s
EOF
)

# ---------------------------------------------------------------- capture

# write_capture_hook: $WORK/capture-hook.sh EVENT writes its stdin to
# $WORK/captures/EVENT.<time>.json and its environment (NUL-separated) to
# .env beside it, and answers nothing (exit 0).
write_capture_hook() {
  CAPTURES=$WORK/captures
  mkdir -p "$CAPTURES"
  cat >"$WORK/capture-hook.sh" <<EOF
#!/bin/sh
f="$CAPTURES/\${1:-unknown}.\$(date +%s%N).\$\$"
cat >"\$f.json"
env -0 >"\$f.env"
exit 0
EOF
  chmod +x "$WORK/capture-hook.sh"
}

# end_session NAME: move the captures so far into $WORK/NAME.
end_session() {
  mkdir -p "$WORK/$1"
  find "$CAPTURES" -maxdepth 1 -type f -exec mv {} "$WORK/$1/" \;
}

# capture_session NAME PROMPT SCRIPT [ARGS...]: one session of the agent
# (agent_run) with this model script; its captures go to $WORK/NAME.
capture_session() {
  local name=$1 prompt=$2
  set_script "$3"
  shift 3
  agent_run "$name" "$prompt" "$@"
  end_session "$name"
}

# fixtures_reset: $FIXTURES, without the payloads of an earlier capture.
fixtures_reset() {
  rm -f "$FIXTURES"/*.json
  mkdir -p "$FIXTURES"
}

# save_session N [EVENT...]: save_captures of session N into $FIXTURES, and
# say which events it saved.
save_session() {
  local n=$1
  shift
  say "session $n: $(save_captures "$FIXTURES" "$WORK/session$n" "$@")"
}

# fixtures_done TITLE: hook-environment.md in $FIXTURES, from sessions 1
# and 2 (started with session 1's environment).
fixtures_done() {
  env_report "$1" "$WORK/session1.launch-env" \
    "$WORK/session1" "$WORK/session2" >"$FIXTURES/hook-environment.md"
  say "wrote $FIXTURES"
}

# save_captures OUTDIR SRCDIR [EVENT...]: one pretty payload per event (the
# first of each, or only the EVENTs named) into OUTDIR/<Event>.json, with
# the temporary home mapped to /home/dev (the project is /home/dev/project).
save_captures() {
  python3 - "$WORK" "$@" <<'EOF'
import glob, json, os, sys
work, outdir, src = sys.argv[1:4]
only = set(sys.argv[4:])
home = os.path.join(work, "home", "dev")
enc = lambda p: "".join(c if c.isalnum() else "-" for c in p)
subs = [(os.path.realpath(home), "/home/dev"), (home, "/home/dev"),
        (enc(os.path.realpath(home)), "-home-dev"), (enc(home), "-home-dev"),
        (work, "/tmp/work")]
def clean(s):
    for a, b in subs:
        s = s.replace(a, b)
    return s
seen = {}
for f in sorted(glob.glob(os.path.join(src, "*.json")),
                key=lambda p: int(os.path.basename(p).split(".")[1])):
    ev = os.path.basename(f).split(".")[0]
    if (only and ev not in only) or ev in seen:
        continue
    try:
        obj = json.loads(clean(open(f).read()))
    except ValueError:
        continue
    seen[ev] = obj
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, ev + ".json"), "w") as out:
        out.write(json.dumps(obj, indent=2, ensure_ascii=False))
print(" ".join(sorted(seen)))
EOF
}

# env_report TITLE LAUNCH_ENV SESSION_DIR SESSION_DIR...: markdown on the
# environment hook processes got (names only; values compared, not shown).
# LAUNCH_ENV is the NUL-separated environment the agent was started with.
env_report() {
  python3 - "$WORK" "$@" <<'EOF'
import glob, os, sys
work, title, launch_file, *sessions = sys.argv[1:]
def read_env(p):
    out = {}
    for item in open(p, "rb").read().split(b"\0"):
        if b"=" in item:
            k, v = item.split(b"=", 1)
            out[k.decode()] = v.decode("utf-8", "replace")
    return out
launch = read_env(launch_file)
runs = []   # per session: list of (event, env)
for d in sessions:
    files = sorted(glob.glob(os.path.join(d, "*.env")),
                   key=lambda p: int(os.path.basename(p).split(".")[1]))
    runs.append([(os.path.basename(f).split(".")[0], read_env(f)) for f in files])
allenvs = [e for r in runs for _, e in r]
print(f"# Hook environment: {title}\n")
if not allenvs:
    print("No hook ran.")
    sys.exit()
names = sorted(set().union(*allenvs))
always = {n for n in names if all(n in e for e in allenvs)}
def per_event(n):   # differs between two events of one session (where set)
    return any(len({e[n] for _, e in r if n in e}) > 1 for r in runs)
def events_with(n):
    evs = sorted({ev for r in runs for ev, e in r if n in e})
    return ", ".join(evs)
def per_session(n):  # differs between the sessions
    return len({frozenset(e.get(n) for _, e in r) for r in runs if r}) > 1
def yn(b):
    return "yes" if b else "no"
added = [n for n in names if n not in launch]
removed = sorted(n for n in launch if all(n not in e for e in allenvs))
changed = [n for n in names if n in launch and any(e.get(n) != launch[n] for e in allenvs)]
inherited = [n for n in names if n in launch and n not in changed]
print("Captured by a command hook registered for every event (`env -0` in the")
print("hook process), in sessions the harness started one after the other with")
print("the same environment, in the same project. Values were compared, never")
print("recorded.\n")
print(f"Sessions: {len(runs)}; hook processes: {len(allenvs)} "
      f"({' + '.join(str(len(r)) for r in runs)}).\n")
print("## Set by the agent (not in the environment it was started with)\n")
if added:
    print("| variable | set on | value differs between events of one session | differs between sessions |")
    print("|---|---|---|---|")
    for n in added:
        on = "every event" if n in always else events_with(n)
        print(f"| `{n}` | {on} | {yn(per_event(n))} | {yn(per_session(n))} |")
else:
    print("None.")
print("\n## Inherited, with another value in hooks\n")
if changed:
    print("| variable | differs between events of one session | differs between sessions |")
    print("|---|---|---|")
    for n in changed:
        print(f"| `{n}` | {yn(per_event(n))} | {yn(per_session(n))} |")
else:
    print("None.")
print("\n## In the agent's environment but not in hooks\n")
print(", ".join(f"`{n}`" for n in removed) if removed else "None.")
print("\n## Inherited unchanged\n")
print(", ".join(f"`{n}`" for n in inherited) if inherited else "None.")
EOF
}

# ---------------------------------------------------------------- probes

# $WORK/answer-hook.sh EVENT MODE: records its input, then answers by MODE.
write_answer_hook() {
  cat >"$WORK/answer-hook.sh" <<EOF
#!/bin/sh
ev=\$1 mode=\$2
cat >"$WORK/answers.\$ev.\$(date +%s%N).json"
hso() { printf '{"hookSpecificOutput": {"hookEventName": "%s", %s}}\n' "\$ev" "\$1"; }
case \$mode in
  deny) hso '"permissionDecision": "deny", "permissionDecisionReason": "probe-deny-reason"' ;;
  ask) hso '"permissionDecision": "ask", "permissionDecisionReason": "probe-ask-reason"' ;;
  allow) hso '"permissionDecision": "allow"' ;;
  defer) hso '"permissionDecision": "defer"' ;;
  rewrite) hso '"updatedInput": {"command": "echo rewritten"}' ;;
  rewrite-py) hso '"updatedInput": {"command": "python3 -c \\"open(\u0027rewritten-ran\u0027, \u0027w\u0027)\\""}' ;;
  rewrite-allow) hso '"permissionDecision": "allow", "updatedInput": {"command": "echo rewritten"}' ;;
  block) echo '{"decision": "block", "reason": "probe-block-reason"}' ;;
  gdeny) echo '{"decision": "deny", "reason": "probe-deny-reason"}' ;;
  touch-rewrite) hso '"updatedInput": {"command": "touch rewritten-ran"}' ;;
  touch-rewrite-allow) hso '"permissionDecision": "allow", "updatedInput": {"command": "touch rewritten-ran"}' ;;
  context) hso '"additionalContext": "PROBE-CONTEXT-4d2"' ;;
  stop) echo '{"continue": false, "stopReason": "probe-stop-reason"}' ;;
  sysmsg) echo '{"systemMessage": "probe-system-message"}' ;;
  garbage) echo 'not json at all' ;;
  sleep) sleep 5 ;;
  exit2) echo probe-exit2-reason >&2; exit 2 ;;
  exit1) echo probe-exit1-reason >&2; exit 1 ;;
  none) ;;
esac
exit 0
EOF
  chmod +x "$WORK/answer-hook.sh"
}

# answer_entry EVENT MODE: a Claude Code-style hook entry that runs the
# answer hook (write_answer_hook) for EVENT, answering MODE.
answer_entry() {
  printf '{"type": "command", "command": "%s %s %s"}' "$WORK/answer-hook.sh" "$1" "$2"
}

# probe_begin COLUMN...: begin "$AGENT-probe" with the answer hook
# written; the head of the table of probes (a probe, then COLUMNs).
probe_begin() {
  begin "$AGENT-probe"
  write_answer_hook
  table_head probe "$@"
}

# touch_script: a model script whose one tool call is the agent's shell
# tool running `touch original-ran`.
touch_script() { script_of "$(shell_call "touch original-ran")"; }

# probe_reset [FILE...]: forget the last probe's answers and the files its
# commands made (and FILEs).
probe_reset() { rm -f "$WORK"/answers.* "$PROJ/original-ran" "$PROJ/rewritten-ran" "$@"; }

# table_head COLUMN...: the head of a markdown table.
table_head() {
  local c line="|" rule="|"
  for c in "$@"; do line+=" $c |"; rule+="---|"; done
  printf '%s\n%s\n' "$line" "$rule"
}

# probe_answers PROBE PREFIX EVENT PROMPT SCRIPT MODE...: for each MODE,
# `PROBE PREFIX-MODE EVENT ENTRY PROMPT SCRIPT` with the answer hook's
# entry (answer_entry EVENT MODE).
probe_answers() {
  local fn=$1 prefix=$2 event=$3 prompt=$4 script=$5 m
  shift 5
  for m in "$@"; do
    "$fn" "$prefix-$m" "$event" "$(answer_entry "$event" "$m")" "$prompt" "$script"
  done
}

# probe_guard PROBE PREFIX EVENT SCRIPT MISSING-ENTRY MODE...: the answer
# hook for EVENT answering each MODE (probe_answers), then MISSING-ENTRY
# (a hook that cannot be run), as PREFIX-missing; the prompt PROBE-PROMPT.
probe_guard() {
  local fn=$1 prefix=$2 event=$3 script=$4 missing=$5
  shift 5
  probe_answers "$fn" "$prefix" "$event" PROBE-PROMPT "$script" "$@"
  "$fn" "$prefix-missing" "$event" "$missing" PROBE-PROMPT "$script"
}

# probe_run LABEL PROMPT SCRIPT [ARGS...]: the model script SCRIPT, and
# the session probe-LABEL of the agent (agent_run) with PROMPT.
probe_run() {
  set_script "$3"
  agent_run "probe-$1" "$2" "${@:4}"
}

# probe_py LABEL <<'EOF' PROGRAM EOF: py with, besides, `label`, `proj`,
# `reqs` (the model requests), `out` (what the agent printed), `fired` (the
# answers the answer hook recorded), `prompt_seen` (PROBE-PROMPT reached the
# model), `saw` (an empty list, for what the model saw), made([NAMES])
# (which of NAMES the project holds), cell(TEXT[, WIDTH]) and row(SAW,
# SAID[, WIDTH]) (the usual table row).
probe_py() {
  local prog
  prog=$(cat)
  py "$1" "$PROJ" <<EOF
$_PY_PROBE
$prog
EOF
}
_PY_PROBE=$(cat <<'EOF'
label, proj = sys.argv[2:4]
reqs = [json.loads(l) for l in open(os.path.join(work, "model-log.jsonl"))]
reqs = [r for r in reqs if (r.get("reply") or {}).get("kind") in ("tool", "text")]
out = open(os.path.join(work, f"probe-{label}.out")).read()
fired = len(glob.glob(os.path.join(work, "answers.*")))
prompt_seen = any("PROBE-PROMPT" in json.dumps(r["body"]) for r in reqs)
saw = []
def made(names=("original-ran", "rewritten-ran")):
    return " ".join(f for f in names if os.path.exists(os.path.join(proj, f))) or "-"
def cell(t, width=200):
    return t.replace("|", "\\|").replace("\n", " ")[:width]
def row(saw, said, width=200):
    print(f"| {label} | {made()} | {fired} | {len(reqs)} | {'yes' if prompt_seen else 'no'} | "
          f"{cell(' / '.join(saw) or '-', width)} | {cell(said, width)} |")
EOF
)

# ---------------------------------------------------------------- scenarios
#
# run_scenarios uses the agent script's agent_run, shell_call and
# install_hooks, and its extra_scenarios (run after the six) if any.

MARK_DENY="DENY-REASON-3f9c"
MARK_LS="ls-marker-2e8d.txt"
MARK_ORIG="original-8a1"
MARK_REWR="rewritten-8a1"
MARK_SESSION="SESSION-CONTEXT-7f3a"
MARK_PROMPT="PROMPT-CONTEXT-5b1e"
MARK_FORBIDDEN="FORBIDDEN-WORD-91c2"
MARK_STOP_TRIGGER="STOP-TRIGGER-6d0b"
MARK_STOP="STOP-REASON-c4d9"

# write_project_hooks: the project's .wasm-hooks/hooks.json (inline rules
# only), written in Claude Code's names: wasm-hooks maps Codex's and
# Gemini CLI's events and tool names onto them.
write_project_hooks() {
  mkdir -p "$PROJ/.wasm-hooks"
  cat >"$PROJ/.wasm-hooks/hooks.json" <<EOF
{
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash",
        "hooks": [
          { "type": "inline", "name": "no-rm-rf", "on_failure": "block",
            "rules": [{ "field": "tool_input.command", "operator": "contains", "value": "rm -rf",
                        "action": "deny", "reason": "$MARK_DENY: rm -rf is not allowed here" }] },
          { "type": "inline", "name": "rewrite-echo",
            "rules": [{ "field": "tool_input.command", "operator": "equals", "value": "echo $MARK_ORIG",
                        "action": "modify", "modify_field": "args.command",
                        "modify_value": "echo $MARK_REWR" }] },
          { "type": "inline", "name": "approve-rewritten",
            "rules": [{ "field": "tool_input.command", "operator": "equals", "value": "echo $MARK_REWR",
                        "action": "allow" }] } ] } ],
    "SessionStart": [
      { "hooks": [
          { "type": "inline", "name": "session-context",
            "rules": [{ "field": "hook_event_name", "operator": "exists", "value": true,
                        "action": "inject_context", "reason": "$MARK_SESSION" }] } ] } ],
    "UserPromptSubmit": [
      { "hooks": [
          { "type": "inline", "name": "forbidden-word", "on_failure": "block",
            "rules": [{ "field": "prompt", "operator": "contains", "value": "$MARK_FORBIDDEN",
                        "action": "deny", "reason": "the prompt has a forbidden word" }] },
          { "type": "inline", "name": "prompt-context",
            "rules": [{ "field": "prompt", "operator": "exists", "value": true,
                        "action": "inject_context", "reason": "$MARK_PROMPT" }] } ] } ],
    "Stop": [
      { "hooks": [
          { "type": "inline", "name": "keep-going", "once": true,
            "rules": [
              { "field": "stop_hook_active", "operator": "equals", "value": true, "action": "continue" },
              { "field": "last_assistant_message", "operator": "contains", "value": "$MARK_STOP_TRIGGER",
                "action": "deny", "reason": "$MARK_STOP: check once more" },
              { "field": "prompt_response", "operator": "contains", "value": "$MARK_STOP_TRIGGER",
                "action": "deny", "reason": "$MARK_STOP: check once more" } ] } ] } ]
  }
}
EOF
}

# log_has_after_tool TEXT: TEXT is in no model request before the first tool
# result and in one after it (so it came back from the tool).
log_has_after_tool() {
  python3 - "$FM_LOG" "$1" <<'EOF'
import json, sys
needle, before, after = sys.argv[2], False, False
for line in open(sys.argv[1]):
    e = json.loads(line)
    r = e.get("reply") or {}
    if r.get("kind") not in ("tool", "text"):
        continue
    if needle in json.dumps(e.get("body"), ensure_ascii=False):
        if r.get("n", 0) >= 1:
            after = True
        else:
            before = True
sys.exit(0 if after and not before else 1)
EOF
}

# model_saw: the text of the last model request's last message, short (for
# FAIL details).
model_saw() {
  python3 - "$FM_LOG" <<'EOF'
import json, sys
last = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if (e.get("reply") or {}).get("kind") in ("tool", "text"):
        last = e["body"]
if last is None:
    print("no model request")
    sys.exit()
for key in ("messages", "input", "contents"):
    if isinstance(last.get(key), list) and last[key]:
        print(json.dumps(last[key][-1], ensure_ascii=False)[:300])
        break
EOF
}

agent_output_tail() { tail -c 300 "$WORK/$1.out" | tr '\n' ' '; }

# What wasm-hooks decided since the last audit_mark, from the project's
# audit log: one "Event: verdict" per dispatch (for FAIL details).
AUDIT_MARK=0
audit_mark() { AUDIT_MARK=$(wc -l <"$PROJ/.wasm-hooks/audit.jsonl" 2>/dev/null || echo 0); }
audit_summary() {
  python3 - "$PROJ/.wasm-hooks/audit.jsonl" "$AUDIT_MARK" <<'EOF'
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()[int(sys.argv[2]):]
except OSError:
    print("wasm-hooks: no audit log (no hook ran?)")
    sys.exit()
out = []
for line in lines:
    r = json.loads(line)
    if r.get("kind") != "dispatch":
        continue
    d = r.get("data") or {}
    v = d.get("verdict") or {}
    s = f"{r.get('event')}: {v.get('decision')}"
    if v.get("reason"):
        s += f" ({v['reason'][:60]})"
    if d.get("decided_by"):
        s += f" by {d['decided_by']}"
    if d.get("updated_input"):
        s += f" input={json.dumps(d['updated_input'])[:80]}"
    out.append(s)
print("wasm-hooks: " + ("; ".join(out) if out else "no event reached it"))
EOF
}

# setup_scenarios: a fresh project with the hook file, installed and trusted.
setup_scenarios() {
  wait_for_binaries
  write_project_hooks
  printf 'audit_log: .wasm-hooks/audit.jsonl\n' >"$PROJ/.wasm-hooks/config.yaml"
  echo "keep me" >"$PROJ/victim"
  # Listed by `ls` outside the project, so that no agent shows it to the
  # model on its own (Gemini CLI sends the project's file tree).
  mkdir -p "$WORK/listing" && echo x >"$WORK/listing/$MARK_LS"
  (cd "$PROJ" && wasm-hooks validate >"$WORK/validate.out" 2>&1) ||
    say "wasm-hooks validate: $(cat "$WORK/validate.out")"
  # CONTROL=1: no wasm-hooks at all, to see every check fail without it.
  if [ -n "${CONTROL:-}" ]; then say "CONTROL: wasm-hooks not installed"; return; fi
  install_hooks || die "installing the hooks failed"
  (cd "$PROJ" && wasm-hooks trust --yes >"$WORK/trust.out" 2>&1) ||
    die "wasm-hooks trust: $(cat "$WORK/trust.out")"
}

run_scenarios() {
  setup_scenarios

  # (1) deny: rm -rf victim never runs.
  set_script "{\"tool_calls\": [$(shell_call "rm -rf victim")], \"final_text\": \"done\"}"
  audit_mark
  agent_run s1-deny "remove the victim file"
  if [ ! -e "$PROJ/victim" ]; then
    record "1 deny rm -rf" FAIL "victim was removed; model saw: $(model_saw); $(audit_summary)"
    echo "keep me" >"$PROJ/victim"
  elif ! log_has_after_tool "$MARK_DENY"; then
    record "1 deny rm -rf" FAIL "victim kept, but the deny reason never reached the model: $(model_saw); $(audit_summary)"
  else
    record "1 deny rm -rf" PASS
  fi

  # (2) allow: ls runs and its output reaches the model.
  set_script "{\"tool_calls\": [$(shell_call "ls $WORK/listing")], \"final_text\": \"done\"}"
  audit_mark
  agent_run s2-allow "list the files"
  expect "2 allow ls" "the ls output did not reach the model; it saw: $(model_saw)" \
    log_has_after_tool "$MARK_LS"

  # (3) rewrite: echo original -> echo rewritten.
  set_script "{\"tool_calls\": [$(shell_call "echo $MARK_ORIG")], \"final_text\": \"done\"}"
  audit_mark
  agent_run s3-rewrite "echo something"
  expect "3 rewrite echo" "the model saw: $(model_saw)" log_has_after_tool "$MARK_REWR"

  # (4) context from UserPromptSubmit and SessionStart.
  set_script '{"tool_calls": [], "final_text": "done"}'
  audit_mark
  agent_run s4-context "say hello"
  expect "4 context (UserPromptSubmit)" "not in any model request" log_has "$MARK_PROMPT"
  expect "4b context (SessionStart)" "not in any model request" log_has "$MARK_SESSION"

  # (5) a prompt with a forbidden word never reaches the model.
  set_script '{"tool_calls": [], "final_text": "done"}'
  audit_mark
  agent_run s5-prompt "please $MARK_FORBIDDEN now"
  if log_has "$MARK_FORBIDDEN"; then
    record "5 blocked prompt" FAIL "the prompt reached the model ($(log_model_requests) requests); $(audit_summary)"
  elif ! audit_summary | grep -q "UserPromptSubmit: deny"; then
    record "5 blocked prompt" FAIL "no model request, but wasm-hooks did not deny it: $(agent_output_tail s5-prompt); $(audit_summary)"
  else
    record "5 blocked prompt" PASS
  fi

  # (6) a Stop hook blocks once: the model gets another request with the reason.
  set_script "{\"tool_calls\": [], \"final_text\": \"finished $MARK_STOP_TRIGGER\"}"
  audit_mark
  agent_run s6-stop "finish up"
  if log_has "$MARK_STOP"; then
    record "6 stop blocked once" PASS "$(log_model_requests) model requests"
  else
    record "6 stop blocked once" FAIL "$(log_model_requests) model requests; last: $(model_saw); $(audit_summary)"
  fi

  if declare -F extra_scenarios >/dev/null; then extra_scenarios; fi

  # (8) the hook command `install` wrote, and the warm daemons it used: one
  # for every session (the daemon's key must not change with the session).
  local daemons
  daemons=$(find "$XDG_RUNTIME_DIR/wasm-hooks" -name '*.lock' 2>/dev/null | wc -l)
  if ! grep -rqs "wasm-hooks-hook" "$PROJ/.claude" "$PROJ/.codex" "$PROJ/.gemini" "$PROJ/.github/hooks" "$PROJ/.opencode/plugin" "$PROJ/.cursor"; then
    record "8 one warm daemon" FAIL "install did not write wasm-hooks-hook: $(cat "$WORK/install.out")"
  elif [ "$daemons" = 1 ]; then
    record "8 one warm daemon" PASS
  else
    record "8 one warm daemon" FAIL "$daemons daemons for the sessions above"
  fi

  # Scenarios that change the agent's environment (a new daemon's key).
  if declare -F late_scenarios >/dev/null; then late_scenarios; fi

  missing_wasm_hooks_scenarios
  finish
}

# path_without_wasm_hooks: the agents' PATH less target/debug and every
# directory that holds a wasm-hooks or wasm-hooks-hook; node (which the npm
# launchers need) stays reachable, through a directory of its own if it
# lived in one of those.
path_without_wasm_hooks() {
  local path=$PATH kv d out="" node debug
  for kv in "${AGENT_ENV[@]}"; do
    case $kv in PATH=*) path=${kv#PATH=} ;; esac
  done
  debug=$(cd "$REPO/target/debug" 2>/dev/null && pwd -P)
  local IFS=:
  for d in $path; do
    [ -n "$d" ] || continue
    [ "$(cd "$d" 2>/dev/null && pwd -P)" = "$debug" ] && continue
    if [ -e "$d/wasm-hooks" ] || [ -e "$d/wasm-hooks-hook" ]; then continue; fi
    out=${out:+$out:}$d
  done
  if ! PATH=$out command -v node >/dev/null 2>&1 && node=$(command -v node); then
    mkdir -p "$WORK/node-only" && ln -sf "$node" "$WORK/node-only/node"
    out=$WORK/node-only${out:+:$out}
  fi
  printf '%s\n' "$out"
}

# model_asked_for_tool: some model request was answered with a tool call.
model_asked_for_tool() {
  python3 - "$FM_LOG" <<'EOF'
import json, sys
sys.exit(0 if any((json.loads(l).get("reply") or {}).get("kind") == "tool"
                  for l in open(sys.argv[1])) else 1)
EOF
}

# hook_failure_said NAME: the first thing the agent printed that names
# wasm-hooks (JSON output read for its strings), one that says "block" if
# any does, on one line.
hook_failure_said() {
  python3 - "$WORK/$1.out" <<'EOF'
import json, sys
texts = []
def walk(v):
    if isinstance(v, str):
        texts.append(v)
    elif isinstance(v, dict):
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
raw = open(sys.argv[1], errors="replace").read()
for line in raw.splitlines():
    try:
        walk(json.loads(line))
    except ValueError:
        texts.append(line)
try:
    walk(json.loads(raw[raw.index("{"):]))
except ValueError:
    pass
said = [t for t in texts if "wasm-hooks" in t]
said = [t for t in said if "block" in t.lower()] or said   # the block, if it says so
if said:
    print(" ".join(said[0].split())[:220])
else:
    print("the agent named no wasm-hooks: " + " ".join(raw.split())[-160:])
EOF
}

# tool_output N: what the model got back from tool call N (0-based) of the
# script (from the request that came after it; any of the four APIs), on
# one line.
tool_output() {
  python3 - "$FM_LOG" "$1" <<'EOF'
import json, sys
last = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    r = e.get("reply") or {}
    if r.get("kind") in ("tool", "text") and r.get("n") == int(sys.argv[2]) + 1:
        last = e["body"]
out = None
def text(v):
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return " ".join(text(x) for x in v)
    if isinstance(v, dict):
        return text(v.get("text") or v.get("content") or v.get("output") or v.get("error") or json.dumps(v))
    return json.dumps(v)
for m in (last or {}).get("messages", []):       # Anthropic, Chat Completions
    if m.get("role") == "tool":
        out = text(m.get("content"))
    elif isinstance(m.get("content"), list):
        for b in m["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out = text(b.get("content"))
for it in (last or {}).get("input", []):          # Responses
    if isinstance(it, dict) and it.get("type") == "function_call_output":
        out = text(it.get("output"))
for c in (last or {}).get("contents", []):       # Gemini
    for p in c.get("parts", []):
        if "functionResponse" in p:
            out = text(p["functionResponse"].get("response"))
print(" ".join((out or "nothing (no model request after it)").split())[:200])
EOF
}

# (9) wasm-hooks installed (by install_hooks, as for the checks above; the
# entries untouched, naming the programs by their absolute path), then
# gone: the programs the entries name are moved away (and none is on the
# agent's PATH either), and the model asks for `rm -rf victim`. The guard must fail closed: victim stays. Codex has no
# setting for that and runs the tool: a PASS only as the known gap, when
# `install` and `explain` both said so.
#
# Most agents also guard the prompt (UserPromptSubmit, BeforeAgent,
# chat.message), so with wasm-hooks missing from the start the session stops
# there and the model never asks for the tool. (9b) reaches the tool guard:
# the session starts with wasm-hooks in place, the model's first command
# moves the installed programs away, its second is `rm -rf victim`.
missing_wasm_hooks_scenarios() {
  missing_wasm_hooks_check "9 guard blocks with wasm-hooks missing" absent
  missing_wasm_hooks_check "9b tool guard blocks once wasm-hooks went missing" vanish
}

# missing_wasm_hooks_check NAME absent|vanish
missing_wasm_hooks_check() {
  local name=$1 mode=$2 run=s9-missing first=0 gone_again=
  local warn="has no setting that blocks a tool when its hook fails"
  local hidden found saved_env lines daemons_before daemons_after where ran=no calls bin="" rc
  hidden=$(path_without_wasm_hooks)
  if found=$(env -i PATH="$hidden" /bin/sh -c 'command -v wasm-hooks-hook || command -v wasm-hooks'); then
    record "$name" FAIL "harness: wasm-hooks is still on the PATH without it ($found)"
    return
  fi
  if [ -z "${WH_BIN:-}" ] || [ ! -x "$WH_BIN/wasm-hooks" ]; then
    record "$name" FAIL "harness: no copy of wasm-hooks installed in the project (install_hooks)"
    return
  fi
  echo "keep me" >"$PROJ/victim"
  # `rm -rf victim`, then `rm -r victim`: Codex refuses `rm -f`-style
  # commands by a rule of its own, hooks or not; `rm -r` shows what its
  # hook's failure lets through. Every other agent must stop both.
  calls="$(shell_call "rm -rf victim"), $(shell_call "rm -r victim")"
  if [ "$mode" = vanish ]; then
    run=s9b-vanish
    first=1
    bin=$WH_BIN
    # The programs `install` named by their absolute path go with the
    # model's first command: mv, not rm -f (which Codex refuses by itself).
    calls="$(shell_call "mv $bin $bin-gone"), $calls"
  else
    mv "$WH_BIN" "$WH_BIN-gone"
  fi
  set_script "{\"tool_calls\": [$calls], \"final_text\": \"done\"}"
  audit_mark
  daemons_before=$(find "$XDG_RUNTIME_DIR/wasm-hooks" -name '*.lock' 2>/dev/null | wc -l)
  saved_env=("${AGENT_ENV[@]}")
  agent_env PATH="$hidden"   # under env -i, the last PATH= wins
  RUN_AGENT_SECS=55 agent_run "$run" "remove the victim file"
  AGENT_ENV=("${saved_env[@]}")
  [ -e "$PROJ/victim" ] || ran=yes
  rc=$(cat "$WORK/$run.rc" 2>/dev/null)

  # Back in place for what follows.
  if [ -e "$WH_BIN-gone" ] && [ ! -e "$WH_BIN" ]; then mv "$WH_BIN-gone" "$WH_BIN"; gone_again=1; fi
  if [ -n "$bin" ]; then
    if [ -z "${gone_again:-}" ]; then
      record "$name" FAIL "harness: the first command did not take wasm-hooks away (exit $rc; it got: $(tool_output 0)); $(audit_summary)"
      return
    fi
    if [ "$ran" = no ] && ! log_has_tool_call 1; then
      record "$name" FAIL "the model was never asked for rm -rf after wasm-hooks went missing (exit $rc): $(hook_failure_said "$run")"
      return
    fi
  fi

  if [ "$ran" = yes ]; then
    where="victim removed (exit $rc); rm -rf got: $(tool_output "$first"); rm -r got: $(tool_output $((first + 1)))"
  elif model_asked_for_tool; then
    where="rm -rf and rm -r were stopped; rm -rf got: $(tool_output "$first")"
  elif [ "$(log_model_requests)" = 0 ]; then
    where="stopped at the prompt, before any model request: $(hook_failure_said "$run")"
  else
    where="the model was asked, but not for a tool call (exit $rc): $(agent_output_tail "$run" | cut -c1-220)"
  fi

  # wasm-hooks must not have answered anything once it was gone: in (9) no
  # audit record and no daemon at all; in (9b) no deny of rm -rf.
  lines=$(wc -l <"$PROJ/.wasm-hooks/audit.jsonl" 2>/dev/null || echo 0)
  daemons_after=$(find "$XDG_RUNTIME_DIR/wasm-hooks" -name '*.lock' 2>/dev/null | wc -l)
  if [ "$mode" = absent ] && { [ "$lines" != "$AUDIT_MARK" ] || [ "$daemons_after" != "$daemons_before" ]; }; then
    record "$name" FAIL "harness: wasm-hooks still ran (audit log $AUDIT_MARK -> $lines lines, daemons $daemons_before -> $daemons_after); $where; $(audit_summary)"
    return
  fi
  if [ "$mode" = vanish ] && audit_summary | grep -qF "$MARK_DENY"; then
    record "$name" FAIL "harness: wasm-hooks still answered (denied) rm -rf victim; $where; $(audit_summary)"
    return
  fi

  if [ "$AGENT" = codex ]; then
    local explained
    explained=$(cd "$PROJ" && printf '{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "%s", "session_id": "s9"}' "$PROJ" |
      wasm-hooks explain 2>&1 | grep -E '^ +Codex ')
    if [ "$ran" = no ]; then
      record "$name" FAIL "Codex did not run the tool (it used to fail open: update docs/agents.md and this check): $where"
    elif ! grep -qF "$warn" "$WORK/install.out" 2>/dev/null; then
      local said
      said=$(tr '\n' ' ' <"$WORK/install.out" 2>/dev/null | cut -c1-300)
      record "$name" FAIL "Codex ran the tool, and \`wasm-hooks install codex\` did not warn \"$warn\": ${said:-it printed nothing (not run?)}"
    elif ! grep -q "lets the tool run" <<<"$explained"; then
      record "$name" FAIL "Codex ran the tool; install warned, \`wasm-hooks explain\` did not: ${explained:-no Codex line}"
    else
      say "note: $where"
      record "$name" PASS "known: Codex fails open; install and explain warn"
    fi
    return
  fi
  if [ "$ran" = yes ]; then
    record "$name" FAIL "victim was removed with wasm-hooks missing: $where"
  else
    record "$name" PASS "$where"
  fi
}

# log_has_tool_call N: the model was asked and answered with tool call N
# (0-based) of the script.
log_has_tool_call() {
  python3 - "$FM_LOG" "$1" <<'EOF'
import json, sys
n = int(sys.argv[2])
for line in open(sys.argv[1]):
    r = json.loads(line).get("reply") or {}
    if r.get("kind") == "tool" and r.get("index") == n:
        sys.exit(0)
sys.exit(1)
EOF
}

# A stdio MCP server with one tool, `echo` (Copilot's preMcpToolCall, and
# the MCP matcher scenarios); its configuration in Copilot's shape is
# $WORK/mcp-config.json.
write_mcp_server() {
  cat >"$WORK/mcp-echo.py" <<'EOF'
import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    if msg.get("id") is None:
        continue
    method = msg.get("method")
    if method == "initialize":
        res = {"protocolVersion": msg["params"].get("protocolVersion", "2024-11-05"),
               "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}}
    elif method == "tools/list":
        res = {"tools": [{"name": "echo", "description": "echo text",
                          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                                          "required": ["text"]}}]}
    elif method == "tools/call":
        res = {"content": [{"type": "text", "text": "echo: " + json.dumps(msg["params"].get("arguments"))}]}
    else:
        res = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}) + "\n")
    sys.stdout.flush()
EOF
  printf '{"mcpServers": {"echosrv": {"type": "local", "command": "python3", "args": ["%s"], "tools": ["*"]}}}\n' \
    "$WORK/mcp-echo.py" >"$WORK/mcp-config.json"
}

# add_guards_for_tools_and_mcp: to the project's hook file, a
# `protect-paths` wasm guard on Write (the plugin copied to
# .wasm-hooks/protect.wasm) and an MCP matcher written the Claude Code way
# (`mcp__echosrv__echo`) that denies "secret" with MCP-MATCHER-DENIED;
# trusted again.
add_guards_for_tools_and_mcp() {
  python3 - "$PROJ/.wasm-hooks/hooks.json" <<'PY'
import json, sys
path = sys.argv[1]
doc = json.load(open(path))
doc["hooks"]["PreToolUse"] += [
    {"matcher": "Write", "hooks": [
        {"type": "wasm", "name": "protect", "plugin": "protect.wasm", "on_failure": "block"}]},
    {"matcher": "mcp__echosrv__echo", "hooks": [
        {"type": "inline", "name": "no-secret-echo", "rules": [
            {"field": "tool_input.text", "operator": "contains", "value": "secret",
             "action": "deny", "reason": "MCP-MATCHER-DENIED: not that"}]}]}]
json.dump(doc, open(path, "w"), indent=2)
PY
  (cd "$PROJ" && "$WH_BIN/wasm-hooks" trust --yes >"$WORK/trust-mcp.out" 2>&1) ||
    die "wasm-hooks trust: $(cat "$WORK/trust-mcp.out")"
}

# free_port: a free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The `sessions` mode of each agent's script records one real session,
# kept as the agent wrote it, for `wasm-hooks replay`
# (tests/fixtures/sessions/). The home is really /home/dev (not mapped to
# it afterwards): the run is in a private mount namespace where the
# temporary home is bind-mounted on /home/dev, so the records hold the
# paths a user's would.

# sessions_mntns: run `sessions` again in a mount namespace of its own
# (unshare -m, when this user may), where sessions_workdir can put the
# temporary home at /home/dev.
sessions_mntns() {
  [ -n "${WH_SESSIONS_MNTNS:-}" ] && return 0
  unshare -m --propagation private true 2>/dev/null || return 0
  exec unshare -m --propagation private env WH_SESSIONS_MNTNS=1 bash "$0" sessions
}

# sessions_workdir NAME: new_workdir NAME; in sessions_mntns's namespace
# the temporary home is bind-mounted at /home/dev (over a tmpfs /home, seen
# by this namespace only) and used by that name from here on.
sessions_workdir() {
  new_workdir "$1"
  if [ -z "${WH_SESSIONS_MNTNS:-}" ]; then
    say "note: no mount namespace (unshare -m refused): the records will name $THOME"
    return
  fi
  mount -t tmpfs -o mode=755 tmpfs /home && mkdir /home/dev && mount --bind "$THOME" /home/dev ||
    die "cannot bind $THOME at /home/dev"
  local old=$THOME
  THOME=/home/dev
  PROJ=$THOME/project
  export HOME=$THOME XDG_CONFIG_HOME=$THOME/.config XDG_CACHE_HOME=$THOME/.cache \
    XDG_STATE_HOME=$THOME/.local/state
  AGENT_ENV=("${AGENT_ENV[@]//"$old"//home/dev}")
}

# sessions_guard: the project's .wasm-hooks/hooks.json with one inline
# guard (shell commands containing `rm -rf` are denied, with the reason
# $SESSION_DENY; wasm-hooks maps each agent's shell tool onto Bash), an
# audit log, wasm-hooks installed for the agent (its install_hooks) and
# trusted.
sessions_guard() {
  wait_for_binaries
  mkdir -p "$PROJ/.wasm-hooks"
  cat >"$PROJ/.wasm-hooks/hooks.json" <<EOF
{
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash",
        "hooks": [
          { "type": "inline", "name": "no-rm-rf", "on_failure": "block",
            "rules": [{ "field": "tool_input.command", "operator": "contains", "value": "rm -rf",
                        "action": "deny", "reason": "$SESSION_DENY" }] } ] } ]
  }
}
EOF
  printf 'audit_log: .wasm-hooks/audit.jsonl\n' >"$PROJ/.wasm-hooks/config.yaml"
  install_hooks || die "installing the hooks failed"
  (cd "$PROJ" && wasm-hooks trust --yes >"$WORK/trust.out" 2>&1) ||
    die "wasm-hooks trust: $(cat "$WORK/trust.out")"
}

# sessions_keep DIR...: the agent's log folders (those there) copied into
# $SESSIONS as they are, listed, with what wasm-hooks decided.
sessions_keep() {
  rm -rf "$SESSIONS"
  mkdir -p "$SESSIONS"
  local dir
  for dir in "$@"; do
    if [ -d "$dir" ]; then cp -a "$dir" "$SESSIONS/"; fi
  done
  say "copied into $SESSIONS:"
  (cd "$SESSIONS" && find . -type f | sort >&2)
  say "$(audit_summary)"
}
