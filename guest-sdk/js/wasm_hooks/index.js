// wasm-hooks for JavaScript: a hook for AI coding agents, sandboxed.
//
// Export a class deriving from `Hook` as the default export of `app.js`,
// overriding the events it cares about; `wasm-hooks build`
// (componentize-js) makes it a component. Every other event proceeds.
//
//   import { Hook, Outcome } from './wasm_hooks/index.js';
//   export default class Handler extends Hook {
//     preToolUse(event) {
//       if ((event.toolInput.command ?? '').includes('rm -rf')) return Outcome.deny('no rm -rf');
//       return Outcome.proceed();
//     }
//   }
//
// An exception thrown by a method is a hook failure: the host applies the
// hook's `on_failure` policy and shows the message. The same class runs
// natively under `node --test` with `./testing.js`.

/** A failure with a message for the person (any thrown error is one). */
export class HookError extends Error {
  constructor(message) {
    super(message);
    this.name = 'HookError';
  }
}

let host = null;

/** Talk to `next` from now on (the component's imports, or a test's mock); the one before. */
export function setHost(next) {
  const before = host;
  host = next;
  return before;
}

function current() {
  if (host === null) throw new HookError('no host: inside a component the build sets it; in a test use MockHost');
  return host;
}

/** One event from the agent: the common fields, and the whole record (parsed when asked for). */
export class Event {
  constructor({ name, payload, sessionId = '', timestamp = '', cwd, toolName }) {
    this.name = name;
    this.payload = payload;
    this.sessionId = sessionId;
    this.timestamp = timestamp;
    this.cwd = cwd;
    this.toolName = toolName;
    this._json = undefined;
  }

  /** An event from a record as an agent sends it (Claude Code's field names), for tests. */
  static fromRecord(record) {
    return new Event({
      name: record.hook_event_name ?? '',
      payload: JSON.stringify(record),
      sessionId: record.session_id ?? '',
      timestamp: record.timestamp ?? '',
      cwd: record.cwd,
      toolName: record.tool_name,
    });
  }

  /** The whole record, parsed once. */
  get json() {
    if (this._json === undefined) {
      const parsed = JSON.parse(this.payload);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new HookError("the event's payload is not a JSON object");
      }
      this._json = parsed;
    }
    return this._json;
  }

  /** A top-level field of the record, or `dflt`. */
  field(name, dflt = undefined) {
    return name in this.json ? this.json[name] : dflt;
  }

  /** The agent's project directory (`project_dir`, which `wasm-hooks hook` and `serve` add), else the working directory. */
  get projectDir() {
    return this.field('project_dir') ?? this.cwd;
  }

  /** The tool's input (`{}` when the event has none). */
  get toolInput() {
    const input = this.field('tool_input');
    return input !== null && typeof input === 'object' && !Array.isArray(input) ? input : {};
  }

  /** The tool's output, after it ran (undefined before). */
  get toolResponse() {
    return this.field('tool_response');
  }
}

const ROLES = ['system', 'user', 'assistant'];
const SEVERITIES = ['info', 'warning', 'error'];

/** What the hook wants done: make one with a static method, add to it with the `with` methods. */
export class Outcome {
  constructor(decision = 'proceed', fields = {}) {
    this.decision = decision;
    this.reason = fields.reason;
    this.approval = fields.approval;
    this.rewrite = fields.rewrite;
    this.context = undefined;
    this.contextRole = 'system';
    this.userMessage = undefined;
    this.userSeverity = 'info';
    this.systemMessage = undefined;
    this.stopReason = fields.stopReason;
    this.suppressOutput = false;
    this.metadata = undefined;
  }

  /** No opinion: the next hook, or the agent's default, decides. */
  static proceed() { return new Outcome(); }
  /** Allow, with an optional reason. */
  static allow(reason) { return new Outcome('allow', { reason }); }
  /** Block, with a reason the agent (and the model) will see. */
  static deny(reason) { return new Outcome('deny', { reason: String(reason) }); }
  /** Ask the person before going on. */
  static ask(prompt, { options = [], timeoutMs, defaultAllow = false } = {}) {
    return new Outcome('ask', { approval: { prompt, options: [...options], timeoutMs, defaultAllow } });
  }
  /** Go on with this tool input instead (before the tool runs). */
  static modify(toolInput) {
    if (toolInput === null || typeof toolInput !== 'object' || Array.isArray(toolInput)) {
      throw new HookError('modify takes the new tool input as an object');
    }
    return new Outcome('modify', { rewrite: toolInput });
  }
  /** Replace the tool's output (after it ran). */
  static modifyOutput(output) { return new Outcome('modifyOutput', { rewrite: output }); }
  /** No opinion on the operation, but end the agent's turn. */
  static stop(reason) { return new Outcome('proceed', { stopReason: reason }); }

  /** Add `text` to the agent's context (role: system, user, assistant). */
  withContext(text, role = 'system') {
    if (!ROLES.includes(role)) throw new HookError(`unknown context role ${role}`);
    this.context = text;
    this.contextRole = role;
    return this;
  }
  /** Show `text` to the person, never to the model (info, warning, error). */
  withUserMessage(text, severity = 'info') {
    if (!SEVERITIES.includes(severity)) throw new HookError(`unknown severity ${severity}`);
    this.userMessage = text;
    this.userSeverity = severity;
    return this;
  }
  /** A warning shown to the person. */
  withSystemMessage(text) { this.systemMessage = text; return this; }
  /** End the agent's turn, with this reason. */
  withStop(reason) { this.stopReason = reason; return this; }
  /** Hide this hook's own output from the transcript. */
  withSuppressedOutput() { this.suppressOutput = true; return this; }
  /** Free JSON kept in the audit record. */
  withMetadata(metadata) { this.metadata = metadata; return this; }
}

const METHODS = {
  PreToolUse: 'preToolUse',
  PostToolUse: 'postToolUse',
  PostToolUseFailure: 'postToolUseFailure',
  UserPromptSubmit: 'userPromptSubmit',
  PermissionRequest: 'permissionRequest',
  Notification: 'notification',
  Stop: 'stop',
  SubagentStop: 'subagentStop',
  SessionStart: 'sessionStart',
  SessionEnd: 'sessionEnd',
};

/** A hook plugin: override the methods of the events you care about; each defaults to `other`, which proceeds. */
export class Hook {
  /** The method for `event`'s name, or `other` (what the host calls, and what a test calls). */
  dispatch(event) {
    const method = METHODS[event.name] ?? 'other';
    const outcome = this[method](event);
    if (!(outcome instanceof Outcome)) {
      throw new HookError(`${this.constructor.name}.${method} returned ${typeof outcome}, not an Outcome`);
    }
    return outcome;
  }
  /** Every event without a method of its own: proceed. */
  other(_event) { return Outcome.proceed(); }
  /** Before a tool runs: can deny, ask or rewrite its input. */
  preToolUse(event) { return this.other(event); }
  /** After a tool succeeded: can rewrite its output or add context. */
  postToolUse(event) { return this.other(event); }
  /** After a tool failed. */
  postToolUseFailure(event) { return this.other(event); }
  /** The person submitted a prompt. */
  userPromptSubmit(event) { return this.other(event); }
  /** A permission prompt is about to be shown. */
  permissionRequest(event) { return this.other(event); }
  /** The agent notifies the person. */
  notification(event) { return this.other(event); }
  /** The agent finished answering; a deny makes it go on, with the reason. */
  stop(event) { return this.other(event); }
  /** A subagent finished. */
  subagentStop(event) { return this.other(event); }
  /** A session begins or resumes. */
  sessionStart(event) { return this.other(event); }
  /** A session ends. */
  sessionEnd(event) { return this.other(event); }
}

/** The hook's `config` from the hook file, parsed (`{}` when none). */
export function config() {
  return JSON.parse(current().config() || '{}');
}

/** The plugin's key-value store: per session, bounded by the host. */
export const kv = {
  /** The value stored under `key`, if any. */
  get: (key) => current().kvGet(key),
  /** Store `value` under `key`; a HookError when refused (over the host's budget). */
  set: (key, value) => current().kvSet(key, value),
};

/** Lines for the host's log (capped and escaped by the host). */
export const log = Object.fromEntries(
  ['trace', 'debug', 'info', 'warn', 'error'].map((level) => [level, (message) => current().log(level, String(message))]),
);

function decision(o) {
  switch (o.decision) {
    case 'allow': return { tag: 'allow', val: o.reason };
    case 'deny': return { tag: 'deny', val: o.reason ?? '' };
    case 'ask': return { tag: 'ask', val: o.approval };
    case 'modify': return { tag: 'modify', val: JSON.stringify(o.rewrite) };
    case 'modifyOutput': return { tag: 'modify-output', val: JSON.stringify(o.rewrite) };
    default: return { tag: 'proceed' };
  }
}

/** The WIT export for `HandlerClass` (the build's entry module uses it): converts, dispatches, and turns an exception into the hook failure it stands for. */
export function exportHook(HandlerClass) {
  return {
    handle(wit) {
      try {
        const o = new HandlerClass().dispatch(new Event(wit));
        return {
          decision: decision(o),
          context: o.context === undefined ? undefined : { text: o.context, role: o.contextRole },
          userMessage: o.userMessage === undefined ? undefined : [o.userSeverity, o.userMessage],
          systemMessage: o.systemMessage,
          stop: o.stopReason,
          suppressOutput: o.suppressOutput,
          metadata: o.metadata === undefined ? undefined : JSON.stringify(o.metadata),
        };
      } catch (e) {
        throw e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      }
    },
  };
}
