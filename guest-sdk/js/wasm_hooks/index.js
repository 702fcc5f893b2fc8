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

  /**
   * The tool and its input in one shape whatever the agent: `{ kind: 'shell', command }` for Claude Code's and
   * Codex's `Bash` and Gemini CLI's `run_shell_command`, `read`, `write`, `edit` (with `MultiEdit` and `replace`),
   * `glob`, `grep`, `webFetch`, `webSearch`, and `{ kind: 'other', name, input }` for the rest; undefined without a
   * tool. A known tool whose input lacks a field it needs is a HookError naming the tool and field.
   */
  tool() {
    const name = this.toolName ?? this.field('tool_name');
    if (typeof name !== 'string') return undefined;
    const input = this.toolInput;
    const text = (field, ...aliases) => {
      for (const f of [field, ...aliases]) if (typeof input[f] === 'string') return input[f];
      throw new HookError(`\`${name}\` input: \`${field}\` is missing or not a string`);
    };
    const optional = (...fields) => fields.map((f) => input[f]).find((v) => typeof v === 'string');
    const edit = (e) => ({ old: e.old_string, new: e.new_string, replaceAll: e.replace_all === true });
    switch (name) {
      case 'Bash': case 'run_shell_command': return { kind: 'shell', command: text('command') };
      case 'Read': case 'read_file': return { kind: 'read', path: text('file_path', 'absolute_path') };
      case 'Write': case 'write_file': return { kind: 'write', path: text('file_path'), content: text('content') };
      case 'Edit': case 'replace': return { kind: 'edit', path: text('file_path'), edits: [edit(input)] };
      case 'MultiEdit':
        return { kind: 'edit', path: text('file_path'), edits: (Array.isArray(input.edits) ? input.edits : []).map(edit) };
      case 'Glob': case 'glob': return { kind: 'glob', pattern: text('pattern'), path: optional('path', 'dir_path') };
      case 'Grep': case 'search_file_content': case 'grep':
        return { kind: 'grep', pattern: text('pattern'), path: optional('path', 'dir_path') };
      case 'WebFetch': case 'web_fetch': return { kind: 'webFetch', url: optional('url'), prompt: optional('prompt') };
      case 'WebSearch': case 'google_web_search': return { kind: 'webSearch', query: text('query') };
      default: return { kind: 'other', name, input };
    }
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
  // A shell command run another way (the inline `!cmd` of a skill) is a Bash call to a guard.
  PreSkillShellCommand: 'preToolUse',
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
    if (outcome !== null && typeof outcome === 'object' && typeof outcome.then === 'function') {
      throw new HookError(
        `${this.constructor.name}.${method} is async (it returned a Promise): a hook answers at once, there is no event loop to wait in; make it a plain method`,
      );
    }
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
