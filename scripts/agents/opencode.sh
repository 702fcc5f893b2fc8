#!/usr/bin/env bash
# OpenCode 1.18.33 against the fake model, offline.
#
#   scripts/agents/opencode.sh           the scenarios (PASS/FAIL; exit 1 on a FAIL)
#   scripts/agents/opencode.sh capture   what a plugin's hooks get, one file per
#                                        hook (and per event type) into
#                                        tests/fixtures/opencode-1.18.33/
#   scripts/agents/opencode.sh probe     what OpenCode does with chosen plugin behaviour
#
# KEEP=1 keeps the temporary directory. OpenCode has no command hooks: a
# plugin (.opencode/plugin/*.js) is the hook. It is run as
#   OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1
#   opencode run --model fake/fake-model PROMPT
# with opencode.json's provider "fake" (@ai-sdk/openai-compatible, bundled in
# the binary) at http://127.0.0.1:PORT/v1 (Chat Completions, streamed), and
# HOME and the XDG directories in the temporary directory. Scenario 6 (a
# session that goes on after it went idle) runs `opencode serve` and
# `opencode run --attach`: a plain `opencode run` exits at the first
# session.idle, before a plugin's follow-up prompt is answered.
AGENT=opencode
VERSION=1.18.33
. "$(dirname "$0")/common.sh"

agent_install LOADER opencode-ai opencode "$@"
FIXTURES=$REPO/tests/fixtures/opencode-$VERSION

# The native binary itself (the npm package's postinstall would link it).
ARCH=$(npm_arch)
OPENCODE="$AGENTS_CACHE/opencode-ai@$VERSION/node_modules/opencode-linux-$ARCH/bin/opencode"
[ -x "$OPENCODE" ] || OPENCODE=$LOADER

# agent_setup: the project's opencode.json (the fake provider, every
# permission allowed, no sharing or updates), XDG data in the temporary home.
agent_setup() {
  git -C "$PROJ" init -q 2>/dev/null
  mkdir -p "$THOME/.local/share" "$PROJ/.opencode/plugin" "$XDG_CONFIG_HOME/opencode"
  cat >"$PROJ/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fake",
      "options": { "baseURL": "http://127.0.0.1:$FM_PORT/v1", "apiKey": "fake" },
      "models": { "fake-model": { "name": "Fake model", "tool_call": true } }
    }
  },
  "model": "fake/fake-model",
  "small_model": "fake/fake-model",
  "autoupdate": false,
  "share": "disabled",
  "permission": { "*": "allow" }
}
EOF
  agent_env XDG_DATA_HOME="$THOME/.local/share" \
    OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1
  skip_plugin_install
}

# skip_plugin_install: for every config directory (the project's .opencode,
# ~/.config/opencode) OpenCode runs an npm install of @opencode-ai/plugin
# unless the directory already has node_modules/ and a package-lock.json
# whose root lists every dependency of its package.json and the plugin.
# Offline that install retries for about 70 s before it gives up, and
# plugins load only after it; say it is done. Call again after anything
# writes a package.json there.
skip_plugin_install() {
  local d
  for d in "$PROJ/.opencode" "$XDG_CONFIG_HOME/opencode"; do
    mkdir -p "$d/node_modules"
    python3 - "$d" <<'EOF'
import json, os, sys
d = sys.argv[1]
deps = {"@opencode-ai/plugin": "*"}
try:
    pkg = json.load(open(os.path.join(d, "package.json")))
    for k in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps.update(pkg.get(k) or {})
except (OSError, ValueError):
    pass
json.dump({"name": "opencode-config", "lockfileVersion": 3,
           "packages": {"": {"dependencies": deps}}},
          open(os.path.join(d, "package-lock.json"), "w"), indent=2)
EOF
  done
}

# opencode_run NAME PROMPT [ARGS...]: one `opencode run` in $PROJ (90 s at most).
opencode_run() {
  local name=$1 prompt=$2
  shift 2
  run_agent 90 "$name" "$OPENCODE" run --model fake/fake-model "$@" "$prompt"
}

# opencode_served NAME PROMPT: `opencode serve` in $PROJ and one
# `opencode run --attach` against it; the server is kept until the model
# has had no request for 3 s (15 s at most), then stopped.
opencode_served() {
  local name=$1 prompt=$2 i n last
  start_opencode_server "$name"
  run_agent 90 "$name" "$OPENCODE" run --attach "http://127.0.0.1:$OC_PORT" --dir "$PROJ" \
    --model fake/fake-model "$prompt"
  last=-1
  for i in $(seq 1 15); do
    n=$(wc -l <"$FM_LOG")
    [ "$n" = "$last" ] && break
    last=$n
    sleep 3
  done
  kill "$OC_PID" 2>/dev/null
  wait "$OC_PID" 2>/dev/null
  return 0
}

# start_opencode_server NAME: `opencode serve` in $PROJ on a free loopback
# port (OC_PORT; its pid OC_PID, its output $WORK/NAME.serve.out), once it
# says it listens (15 s at most).
start_opencode_server() {
  local i
  OC_PORT=$(free_port)
  (cd "$PROJ" && exec env -i "${AGENT_ENV[@]}" "$OPENCODE" serve --port "$OC_PORT" --hostname 127.0.0.1 \
    </dev/null >"$WORK/$1.serve.out" 2>&1) &
  OC_PID=$!
  _PIDS+=("$OC_PID")
  for i in $(seq 1 150); do
    grep -q "listening on" "$WORK/$1.serve.out" 2>/dev/null && break
    sleep 0.1
  done
}

# ---------------------------------------------------------------- plugins

# The capture plugin: every hook's input and output, as JSON, one file per
# call in $CAPTURES (<hook>.<n>.json; events as event~<type>).
write_capture_plugin() {
  CAPTURES=$WORK/captures
  mkdir -p "$CAPTURES"
  cat >"$PROJ/.opencode/plugin/capture.js" <<EOF
import fs from "fs";
const dir = "$CAPTURES";
let n = 0;
function safe(obj) {
  const seen = new WeakSet();
  return JSON.stringify(obj, (k, v) => {
    if (typeof v === "function") return "[function]";
    if (v && typeof v === "object") { if (seen.has(v)) return "[circular]"; seen.add(v); }
    return v;
  });
}
function dump(name, obj) {
  const seq = String(Date.now()) + String(n++).padStart(4, "0");
  fs.writeFileSync(\`\${dir}/\${name.replace(/\\./g, "~")}.\${seq}.json\`, safe(obj));
}
const short = (s) => (typeof s === "string" && s.length > 400 ? s.slice(0, 400) + "…" : s);
export const Capture = async (input) => {
  dump("plugin-input", { keys: Object.keys(input), project: input.project, directory: input.directory,
    worktree: input.worktree, serverUrl: String(input.serverUrl) });
  const hook = (name) => async (inp, out) => dump(name, { input: inp, output: out });
  return {
    event: async ({ event }) => dump("event." + event.type, { event }),
    config: async (cfg) => dump("config", { keys: Object.keys(cfg) }),
    "chat.message": hook("chat.message"),
    "chat.params": async (inp, out) => dump("chat.params", { input: { ...inp, model: inp.model && inp.model.id,
      provider: inp.provider && inp.provider.info && inp.provider.info.id }, output: out }),
    "chat.headers": async (inp, out) => dump("chat.headers", { input: { sessionID: inp.sessionID, agent: inp.agent }, output: out }),
    "experimental.chat.system.transform": async (inp, out) => dump("experimental.chat.system.transform",
      { input: { ...inp, model: inp.model && inp.model.id }, output: { system: out.system.map(short) } }),
    "experimental.chat.messages.transform": async (inp, out) => dump("experimental.chat.messages.transform",
      { input: inp, output: { messages: out.messages.map((m) => ({ info: { role: m.info.role, id: m.info.id }, parts: m.parts.map((p) => ({ type: p.type, text: short(p.text) })) })) } }),
    "tool.execute.before": hook("tool.execute.before"),
    "tool.execute.after": hook("tool.execute.after"),
    "tool.definition": async (inp, out) => dump("tool.definition", { input: inp, output: { description: short(out.description) } }),
    "permission.ask": hook("permission.ask"),
    "shell.env": hook("shell.env"),
    "command.execute.before": hook("command.execute.before"),
  };
};
EOF
}

# save_plugin_captures OUTDIR SRCDIR [HOOK...]: the first call of each hook
# (or of those named) as OUTDIR/<hook>.json, the temporary home as /home/dev.
save_plugin_captures() {
  py "$@" <<'EOF'
outdir, src, *only = sys.argv[2:]
seen = set()
for f in sorted(glob.glob(os.path.join(src, "*.json")), key=lambda p: int(os.path.basename(p).rsplit(".", 2)[1])):
    name = os.path.basename(f).rsplit(".", 2)[0].replace("~", ".")
    if (only and name not in only) or name in seen:
        continue
    seen.add(name)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, name + ".json"), "w") as out:
        out.write(json.dumps(json.loads(clean(open(f).read())), indent=2, ensure_ascii=False))
print(" ".join(sorted(seen)))
EOF
}

# ---------------------------------------------------------------- capture

capture() {
  begin opencode-capture
  write_capture_plugin
  echo hello >"$PROJ/README.md"

  # Session 1: bash, read, write, edit, and a read that fails.
  capture_session session1 "run a command and edit a file" "$(script_of \
    "$(tool_call bash command "echo hi" description "say hi")" \
    "$(tool_call read filePath "$PROJ/README.md")" \
    "$(tool_call write filePath "$PROJ/new.txt" content $'one\n')" \
    "$(tool_call edit filePath "$PROJ/new.txt" oldString one newString two)" \
    "$(tool_call read filePath "$PROJ/missing.txt")")"
  # Session 2: bash asks; `opencode run` rejects what it cannot ask.
  python3 - "$PROJ/opencode.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1])); c["permission"] = {"*": "allow", "bash": "ask"}
json.dump(c, open(sys.argv[1], "w"), indent=2)
EOF
  capture_session session2 "remove a file" \
    "$(script_of "$(tool_call bash command "rm -f no-such-file" description remove)")"
  # Session 3: the model cannot be reached (a closed loopback port).
  sed -i "s#http://127.0.0.1:$FM_PORT/v1#http://127.0.0.1:9/v1#" "$PROJ/opencode.json"
  opencode_run session3 "say hi"
  end_session session3

  fixtures_reset
  say "session 1: $(save_plugin_captures "$FIXTURES" "$WORK/session1")"
  say "session 2: $(save_plugin_captures "$FIXTURES" "$WORK/session2" event.permission.asked event.permission.replied)"
  say "session 3: $(save_plugin_captures "$FIXTURES" "$WORK/session3" event.session.error)"
  # The other tools' tool.execute.before/after as tool.execute.before_<tool>.json.
  py "$FIXTURES" "$WORK/session1" <<'EOF'
outdir, src = sys.argv[2:]
seen = set()
for f in sorted(glob.glob(os.path.join(src, "tool~execute~*.json")), key=lambda p: int(os.path.basename(p).rsplit(".", 2)[1])):
    hook = os.path.basename(f).rsplit(".", 2)[0].replace("~", ".")
    obj = json.loads(clean(open(f).read()))
    tool = obj["input"]["tool"]
    if (hook, tool) in seen or tool == "bash":
        continue
    seen.add((hook, tool))
    with open(os.path.join(outdir, f"{hook}_{tool}.json"), "w") as out:
        out.write(json.dumps(obj, indent=2, ensure_ascii=False))
EOF
  for s in 1 2 3; do say "session $s: exit $(cat "$WORK/session$s.rc")"; done
  say "wrote $FIXTURES"
}

# ---------------------------------------------------------------- probe

# A plugin that behaves as $PLUGIN_MODE (JSON) says; see the keys below.
write_probe_plugin() {
  cat >"$PROJ/.opencode/plugin/probe.js" <<'EOF'
import fs from "fs";
import { spawnSync } from "child_process";
const mode = JSON.parse(process.env.PLUGIN_MODE || "{}");
const note = (s) => fs.appendFileSync(process.env.PROBE_NOTES, s + "\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const Probe = async ({ client }) => {
  let idles = 0;
  return {
    event: async ({ event }) => {
      if (event.type === "session.idle" && mode.promptOnIdle && idles++ < 1) {
        const r = await client.session.prompt({ path: { id: event.properties.sessionID },
          body: { parts: [{ type: "text", text: "PROBE-CONTINUE please go on" }] } }).catch((e) => ({ error: String(e) }));
        note(`prompt on idle: ${r.error || (r.response && r.response.status)}`);
      }
    },
    "chat.message": async (inp, out) => {
      const text = out.parts.map((p) => p.text || "").join(" ");
      if (mode.throwOnPrompt) throw new Error("PROBE-BLOCKED the prompt");
      if (mode.rewritePrompt) for (const p of out.parts) if (p.type === "text") p.text = p.text.replace("PROBE-PROMPT", "PROBE-REPLACED");
      if (mode.addPart) out.parts.push({ ...out.parts[0], id: out.parts[0].id + "ctx", text: "PROBE-CONTEXT", synthetic: true });
      if (mode.addPartNoId) out.parts.push({ type: "text", text: "PROBE-CONTEXT", synthetic: true });
    },
    "experimental.chat.system.transform": async (inp, out) => {
      if (mode.system) out.system.push("PROBE-CONTEXT");
    },
    "tool.execute.before": async (inp, out) => {
      const t0 = Date.now();
      if (mode.spawn) {
        const r = spawnSync("sh", ["-c", "cat; echo; echo spawned; exit 3"], { input: JSON.stringify(inp), encoding: "utf8" });
        note(`spawnSync: status ${r.status}, stdout ${JSON.stringify(r.stdout)}, error ${r.error}`);
      }
      if (mode.sleep) { await sleep(mode.sleep); note(`slept ${Date.now() - t0} ms`); }
      if (mode.throw) throw new Error("PROBE-DENIED by the plugin");
      if (mode.mutate) out.args.command = "touch rewritten-ran";
      if (mode.replace) out.args = { ...out.args, command: "touch rewritten-ran" };
    },
    "tool.execute.after": async (inp, out) => {
      if (mode.after) out.output = "PROBE-MODIFIED-OUTPUT";
      if (mode.throwAfter) throw new Error("PROBE-AFTER-ERROR");
    },
  };
};
EOF
}

# oprobe LABEL MODE-JSON PROMPT SCRIPT [served]: one session; a table row.
oprobe() {
  local label=$1 mode=$2 prompt=$3 script=$4 how=${5:-run}
  probe_reset
  : >"$WORK/probe-notes"
  set_script "$script"
  agent_env PLUGIN_MODE="$mode" PROBE_NOTES="$WORK/probe-notes"
  if [ "$how" = served ]; then opencode_served "probe-$label" "$prompt"; else opencode_run "probe-$label" "$prompt"; fi
  probe_py "$label" <<'EOF'
body = json.dumps([r["body"] for r in reqs])
marks = [m for m in ("PROBE-PROMPT", "PROBE-REPLACED", "PROBE-CONTEXT", "PROBE-CONTINUE", "PROBE-DENIED", "PROBE-MODIFIED-OUTPUT", "PROBE-AFTER-ERROR") if m in body]
tools = []
for r in reqs:
    for m in r["body"].get("messages", []):
        if m.get("role") == "tool":
            tools.append(str(m.get("content"))[:80])
notes = open(os.path.join(work, "probe-notes")).read().strip().replace("\n", " / ")
rc = open(os.path.join(work, f"probe-{label}.rc")).read().strip()
print(f"| {label} | {rc} | {made()} | {len(reqs)} | {' '.join(marks) or '-'} | {cell(' / '.join(dict.fromkeys(tools)) or '-')} | {cell(notes) or '-'} |")
EOF
}

probe() {
  begin opencode-probe
  write_probe_plugin
  local TEXT=$TEXT_ONLY TOUCH
  TOUCH=$(script_of "$(tool_call bash command "touch original-ran" description touch)")
  table_head probe exit "files made" "model requests" "markers the model saw" "tool results" "plugin notes"
  oprobe none '{}' PROBE-PROMPT "$TOUCH"
  oprobe before-throw '{"throw": true}' PROBE-PROMPT "$TOUCH"
  oprobe before-mutate-args '{"mutate": true}' PROBE-PROMPT "$TOUCH"
  oprobe before-replace-args '{"replace": true}' PROBE-PROMPT "$TOUCH"
  oprobe after-output '{"after": true}' PROBE-PROMPT "$TOUCH"
  oprobe after-throw '{"throwAfter": true}' PROBE-PROMPT "$TOUCH"
  oprobe prompt-throw '{"throwOnPrompt": true}' PROBE-PROMPT "$TEXT"
  oprobe prompt-rewrite '{"rewritePrompt": true}' PROBE-PROMPT "$TEXT"
  oprobe prompt-add-part '{"addPart": true}' PROBE-PROMPT "$TEXT"
  oprobe prompt-add-part-no-id '{"addPartNoId": true}' PROBE-PROMPT "$TEXT"
  oprobe system-transform '{"system": true}' PROBE-PROMPT "$TEXT"
  oprobe idle-prompt-run '{"promptOnIdle": true}' PROBE-PROMPT "$TEXT"
  oprobe idle-prompt-served '{"promptOnIdle": true}' PROBE-PROMPT "$TEXT" served
  oprobe spawnSync '{"spawn": true}' PROBE-PROMPT "$TOUCH"
  oprobe slow-45s '{"sleep": 45000}' PROBE-PROMPT "$TOUCH"
}

# ---------------------------------------------------------------- scenarios

agent_run() {
  # A plain `opencode run` exits at the first session.idle: the Stop
  # scenario needs a server that lives on.
  if [ "$1" = s6-stop ]; then opencode_served "$@"; else opencode_run "$@"; fi
}
shell_call() { tool_call bash command "$1" description "run it"; }
# `wasm-hooks install opencode`: the plugin in .opencode/plugin/.
install_hooks() {
  wasm_hooks_install || return 1
  ls "$PROJ"/.opencode/plugin*/*.[jt]s >/dev/null 2>&1 || { say "opencode: install wrote no plugin"; return 1; }
  skip_plugin_install
}

# (14) OpenCode's session shell (the TUI's `!`, `opencode run -i`: `POST
# /session/{id}/shell`), which fires no `tool.execute.before`, meets the
# PreToolUse `Bash` guard through `shell.env` (#43): `rm -rf victim` is
# not run; a harmless command there runs (the control).
# (15) an MCP matcher written the Claude Code way (`mcp__echosrv__echo`)
# fires on OpenCode's `echosrv_echo`.
extra_scenarios() {
  write_mcp_server
  python3 - "$PROJ/opencode.json" "$WORK/mcp-echo.py" <<'PY'
import json, sys
path, server = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
doc["mcp"] = {"echosrv": {"type": "local", "command": ["python3", server], "enabled": True}}
json.dump(doc, open(path, "w"), indent=2)
PY
  cp "$REPO/target/plugins/wasm32-wasip2/release/protect_paths.wasm" "$PROJ/.wasm-hooks/protect.wasm"
  add_guards_for_tools_and_mcp
  set_script "$(script_of "$(tool_call echosrv_echo text "the secret")")"
  audit_mark
  agent_run s15-mcp "use the echo tool"
  expect "15 a Claude Code MCP matcher fires on echosrv_echo" "the model saw: $(model_saw)" \
    log_has_after_tool MCP-MATCHER-DENIED

  echo "keep me" >"$PROJ/victim"
  audit_mark
  session_shell s14 "echo control >shell-control" "rm -rf victim"
  if [ ! -e "$PROJ/shell-control" ]; then
    record "14 the session shell's rm -rf is stopped" FAIL "the control command did not run: $(cat "$WORK/s14.shell.out")"
  else
    expect "14 the session shell's rm -rf is stopped" "victim removed: $(cat "$WORK/s14.shell.out")" \
      test -e "$PROJ/victim"
  fi
}

# session_shell NAME COMMAND...: `opencode serve` in $PROJ, one session,
# and each COMMAND through its shell endpoint (what the TUI's `!` calls);
# the answers in $WORK/NAME.shell.out.
session_shell() {
  local name=$1
  shift
  start_opencode_server "$name"
  python3 - "http://127.0.0.1:$OC_PORT" "$PROJ" "$@" >"$WORK/$name.shell.out" 2>&1 <<'PY'
import json, sys, urllib.request
base, directory, *commands = sys.argv[1:]
def post(path, body):
    req = urllib.request.Request(base + path + "?directory=" + directory, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
status, text = post("/session", {})
print("session", status, text[:200])
sid = json.loads(text)["id"]
for command in commands:
    status, text = post(f"/session/{sid}/shell", {"agent": "build", "command": command,
                        "model": {"providerID": "fake", "modelID": "fake-model"}})
    print(command, "->", status, text[:400])
PY
  kill "$OC_PID" 2>/dev/null
  wait "$OC_PID" 2>/dev/null
  return 0
}

agent_main "$@"
