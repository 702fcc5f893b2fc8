// wasm-hooks for OpenCode: written by `wasm-hooks install opencode`,
// removed by `wasm-hooks uninstall opencode`. Edit the hooks in
// .wasm-hooks/hooks.json, not here.
//
// OpenCode has no command hooks, so this plugin hands each hook's arguments
// to wasm-hooks and applies its answer: a tool call or a prompt it blocks
// throws (OpenCode then does not run the tool, or send the prompt); a
// rewrite replaces the tool's arguments or output; added context goes to
// the model; a Stop it blocks sends the session on with the reason; a
// tool's output it blocks reaches the model as the reason. The session
// shell (the TUI's `!`, `run -i`) calls no tool hook, only `shell.env`,
// which is given no command: the command is read from the session's tool
// part (recorded as OpenCode announces it, else asked for) and handed to
// wasm-hooks as a `bash` call, and a block throws there. A terminal shows
// a plugin nothing it could guard. When wasm-hooks cannot answer
// (missing, failing, slower than the timeout), a tool call, a shell
// command or a prompt is blocked: a guard never fails open.
import { spawn } from "node:child_process";

const COMMAND = __COMMAND__;
const TIMEOUT_MS = __TIMEOUT_MS__;
const GUARDS = new Set(["tool.execute.before", "shell.env", "chat.message"]);
const SESSION_EVENTS = ["session.created", "session.idle", "session.deleted", "session.compacted", "session.error"];

/** Context for a session's first prompt, from its session.created. */
const startContext = new Map();

/** How many times in a row a session was sent on after it stopped: past
 * wasm-hooks' own stop-loop limit, it is let stop (OpenCode has no cap). */
const goneOn = new Map();
const STOP_LOOP_LIMIT = 8;

/** The command of each session-shell call, by call id, as OpenCode
 * announced its tool part (before it calls `shell.env`). */
const shellCommands = new Map();

/** The bash tool's calls `tool.execute.before` already guarded: their
 * `shell.env` is not asked again. */
const guardedCalls = new Set();

/** The MCP servers' names, asked of OpenCode once. */
let mcpServers;

/** The names of OpenCode's MCP servers, for wasm-hooks to name MCP tools
 * as Claude Code does (mcp, server and tool joined by two underscores);
 * none when OpenCode does not say within a second. */
function mcpServerNames(client) {
  mcpServers ??= (async () => {
    const asked = client.config.get().then(({ data }) => Object.keys(data?.mcp ?? {}));
    const late = new Promise((resolve) => setTimeout(() => resolve([]), 1000).unref?.());
    return await Promise.race([asked, late]);
  })().catch(() => []);
  return mcpServers;
}

/** The command of session-shell call `callID`, asked of OpenCode when it
 * was not seen announced. */
async function commandOfCall(client, sessionID, callID) {
  try {
    const { data } = await client.session.messages({ path: { id: sessionID } });
    for (const message of (data ?? []).toReversed()) {
      const part = (message.parts ?? []).find((p) => p.type === "tool" && p.callID === callID);
      if (typeof part?.state?.input?.command === "string") return part.state.input.command;
    }
  } catch {}
  return undefined;
}

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
    if (input.tool === "bash") guardedCalls.add(input.callID);
    const mcp_servers = await mcpServerNames(client);
    let answer;
    try {
      answer = await decide("tool.execute.before", { cwd: directory, input, output, mcp_servers });
    } catch (error) {
      guardedCalls.delete(input.callID);
      throw error;
    }
    if (answer.args) {
      for (const key of Object.keys(output.args)) delete output.args[key];
      Object.assign(output.args, answer.args);
    }
  },
  "shell.env": async (input) => {
    // A terminal (no call id): OpenCode shows a plugin none of what is
    // typed there (docs/agents.md).
    if (!input.callID) return;
    const command = shellCommands.get(input.callID);
    shellCommands.delete(input.callID);
    if (guardedCalls.delete(input.callID)) return;
    const seen = command ?? (await commandOfCall(client, input.sessionID, input.callID));
    if (typeof seen !== "string") {
      throw new Error("wasm-hooks could not see the command this shell would run, so it does not run");
    }
    const call = { tool: "bash", sessionID: input.sessionID, callID: input.callID };
    const answer = await decide("shell.env", { cwd: input.cwd ?? directory, input: call, output: { args: { command: seen } } });
    if (answer.args && answer.args.command !== seen) {
      throw new Error(`wasm-hooks rewrote this command, which OpenCode's shell cannot take: run \`${answer.args.command}\` instead`);
    }
  },
  "tool.execute.after": async (input, output) => {
    const mcp_servers = await mcpServerNames(client);
    const answer = await decide("tool.execute.after", { cwd: directory, input, output, mcp_servers });
    // An MCP tool's result is its `content`, which OpenCode reads after this hook.
    const mcp = Array.isArray(output.content);
    const said = (text) => (mcp ? (output.content = [{ type: "text", text }]) : (output.output = text));
    const current = mcp ? output.content.filter((c) => c.type === "text").map((c) => c.text).join("\n") : output.output;
    if (typeof answer.output === "string") said(answer.output);
    if (answer.context) said(`${typeof answer.output === "string" ? answer.output : current}\n\n${answer.context}`);
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
    // Recorded before any await: OpenCode announces a session-shell call's
    // part, then calls `shell.env`, in one go.
    if (event.type === "message.part.updated") {
      const part = event.properties?.part;
      if (part?.type === "tool" && part.state?.status === "running" && typeof part.state.input?.command === "string") {
        shellCommands.set(part.callID, part.state.input.command);
      }
      return;
    }
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
