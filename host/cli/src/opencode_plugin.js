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
import { spawnSync } from "node:child_process";

const COMMAND = __COMMAND__;
const TIMEOUT_MS = __TIMEOUT_MS__;
const GUARDS = new Set(["tool.execute.before", "chat.message"]);
const SESSION_EVENTS = ["session.created", "session.idle", "session.deleted", "session.compacted", "session.error"];

/** Context for a session's first prompt, from its session.created. */
const startContext = new Map();

/** Ask wasm-hooks about one hook call; its answer, or `{failed}`. */
function ask(event) {
  const run = spawnSync(COMMAND[0], COMMAND.slice(1), {
    input: JSON.stringify(event),
    encoding: "utf8",
    timeout: TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.stderr) console.error(run.stderr.trimEnd());
  if (run.error) return { failed: `wasm-hooks did not answer: ${run.error.message}` };
  if (run.status !== 0) {
    return { failed: (run.stderr || "").trim() || `wasm-hooks exited with ${run.status}` };
  }
  try {
    return JSON.parse(run.stdout || "{}") ?? {};
  } catch {
    return { failed: `wasm-hooks answered what is not JSON: ${run.stdout.slice(0, 200)}` };
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
function decide(hook, event) {
  const answer = ask({ hook_event_name: hook, ...event });
  if (answer.failed) {
    if (GUARDS.has(hook)) throw new Error(answer.failed);
    console.error(`wasm-hooks: ${answer.failed}`);
    return {};
  }
  for (const message of answer.messages ?? []) console.error(`wasm-hooks: ${message}`);
  if (answer.block) throw new Error(answer.block);
  return answer;
}

export const WasmHooks = async ({ client, directory }) => ({
  "tool.execute.before": async (input, output) => {
    const answer = decide("tool.execute.before", { cwd: directory, input, output });
    if (answer.args) {
      for (const key of Object.keys(output.args)) delete output.args[key];
      Object.assign(output.args, answer.args);
    }
  },
  "tool.execute.after": async (input, output) => {
    const answer = decide("tool.execute.after", { cwd: directory, input, output });
    if (typeof answer.output === "string") output.output = answer.output;
    if (answer.context) output.output = `${output.output}\n\n${answer.context}`;
  },
  "chat.message": async (input, output) => {
    const answer = decide("chat.message", { cwd: directory, input, output });
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
    const said = event.type === "session.idle" && sessionID ? await lastAssistantMessage(client, sessionID) : undefined;
    const answer = decide(event.type, { cwd: directory, event, last_assistant_message: said });
    if (answer.context && event.type === "session.created") startContext.set(sessionID, answer.context);
    if (answer.prompt && event.type === "session.idle" && sessionID) {
      await client.session.prompt({ path: { id: sessionID }, body: { parts: [{ type: "text", text: answer.prompt }] } });
    }
  },
});
