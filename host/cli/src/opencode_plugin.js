// wasm-hooks for OpenCode: written by `wasm-hooks install opencode`,
// removed by `wasm-hooks uninstall opencode`. Edit the hooks in
// .wasm-hooks/hooks.json, not here.
//
// OpenCode has no command hooks, so this plugin hands each hook's arguments
// to wasm-hooks and applies its answer: a tool call or a prompt it blocks
// throws (OpenCode then does not run the tool, or send the prompt); a
// rewrite replaces the tool's arguments or output; added context goes to
// the model; a Stop it blocks sends the session on with the reason. When
// wasm-hooks cannot answer (missing, failing, slower than the timeout), a
// tool call or a prompt is blocked: a guard never fails open.
import { spawn } from "node:child_process";

const COMMAND = __COMMAND__;
const TIMEOUT_MS = __TIMEOUT_MS__;
const GUARDS = new Set(["tool.execute.before", "chat.message"]);
const SESSION_EVENTS = ["session.created", "session.idle", "session.deleted", "session.compacted", "session.error"];

/** Context for a session's first prompt, from its session.created. */
const startContext = new Map();

/** How many times in a row a session was sent on after it stopped: past
 * wasm-hooks' own stop-loop limit, it is let stop (OpenCode has no cap). */
const goneOn = new Map();
const STOP_LOOP_LIMIT = 8;

/** Run wasm-hooks on `input`: its stdout, stderr and exit status, or the error. */
function run(input) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      return resolve({ error });
    }
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ error: new Error(`no answer within ${TIMEOUT_MS} ms`) });
    }, TIMEOUT_MS);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ error });
    });
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, status });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

/** Ask wasm-hooks about one hook call; its answer, or `{failed}`. */
async function ask(event) {
  const done = await run(JSON.stringify(event));
  if (done.stderr) console.error(done.stderr.trimEnd());
  if (done.error) return { failed: `wasm-hooks did not answer: ${done.error.message}` };
  if (done.status !== 0) {
    return { failed: done.stderr.trim() || `wasm-hooks exited with ${done.status}` };
  }
  try {
    return JSON.parse(done.stdout || "{}") ?? {};
  } catch {
    return { failed: `wasm-hooks answered what is not JSON: ${done.stdout.slice(0, 200)}` };
  }
}

/** The text of the session's last assistant message, if it can be had. */
async function lastAssistantMessage(client, sessionID) {
  try {
    const { data } = await client.session.messages({ path: { id: sessionID } });
    const last = (data ?? []).filter((m) => m.info?.role === "assistant").at(-1);
    return last?.parts?.filter((p) => p.type === "text").map((p) => p.text).join("\n");
  } catch {
    return undefined;
  }
}

/** The answer for a hook; throws where a failure or a block must stop it. */
async function decide(hook, event) {
  const answer = await ask({ hook_event_name: hook, ...event });
  if (answer.failed) {
    if (GUARDS.has(hook)) throw new Error(answer.failed);
    console.error(`wasm-hooks: ${answer.failed}`);
    return {};
  }
  for (const message of answer.messages ?? []) console.error(`wasm-hooks: ${message}`);
  if ("block" in answer) throw new Error(String(answer.block) || `blocked by wasm-hooks on ${hook}`);
  return answer;
}

export const WasmHooks = async ({ client, directory }) => ({
  "tool.execute.before": async (input, output) => {
    const answer = await decide("tool.execute.before", { cwd: directory, input, output });
    if (answer.args) {
      for (const key of Object.keys(output.args)) delete output.args[key];
      Object.assign(output.args, answer.args);
    }
  },
  "tool.execute.after": async (input, output) => {
    const answer = await decide("tool.execute.after", { cwd: directory, input, output });
    if (typeof answer.output === "string") output.output = answer.output;
    if (answer.context) output.output = `${output.output}\n\n${answer.context}`;
  },
  "chat.message": async (input, output) => {
    const answer = await decide("chat.message", { cwd: directory, input, output });
    const { id: messageID, sessionID } = output.message;
    const context = [startContext.get(sessionID), answer.context].filter(Boolean);
    startContext.delete(sessionID);
    context.forEach((text, n) => {
      // A part needs an id of its own, or OpenCode refuses the message.
      output.parts.push({ type: "text", text, synthetic: true, messageID, sessionID, id: `prt_wasmhooks_${Date.now()}_${n}` });
    });
  },
  event: async ({ event }) => {
    if (!SESSION_EVENTS.includes(event.type)) return;
    const sessionID = event.properties?.sessionID ?? event.properties?.info?.id;
    const idle = event.type === "session.idle" && sessionID;
    const said = idle ? await lastAssistantMessage(client, sessionID) : undefined;
    const times = goneOn.get(sessionID) ?? 0;
    const answer = await decide(event.type, {
      cwd: directory,
      event,
      last_assistant_message: said,
      stop_hook_active: times > 0,
    });
    if (answer.context && event.type === "session.created") startContext.set(sessionID, answer.context);
    if (!idle) return;
    if (!answer.prompt || times >= STOP_LOOP_LIMIT) {
      if (answer.prompt) console.error(`wasm-hooks: ${times} stops in a row sent on; this one goes through`);
      goneOn.delete(sessionID);
      return;
    }
    goneOn.set(sessionID, times + 1);
    await client.session.prompt({ path: { id: sessionID }, body: { parts: [{ type: "text", text: answer.prompt }] } });
  },
});
