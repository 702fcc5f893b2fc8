// Types of the wasm-hooks JavaScript SDK (index.js).

export class HookError extends Error {}

export interface Host {
  config(): string;
  log(level: 'trace' | 'debug' | 'info' | 'warn' | 'error', message: string): void;
  kvGet(key: string): string | undefined;
  kvSet(key: string, value: string): void;
}

export function setHost(next: Host | null): Host | null;

export class Event {
  constructor(fields: { name: string; payload: string; sessionId?: string; timestamp?: string; cwd?: string; toolName?: string });
  static fromRecord(record: Record<string, unknown>): Event;
  readonly name: string;
  readonly payload: string;
  readonly sessionId: string;
  readonly timestamp: string;
  readonly cwd?: string;
  readonly toolName?: string;
  readonly json: Record<string, unknown>;
  field<T = unknown>(name: string, dflt?: T): T;
  readonly projectDir?: string;
  readonly toolInput: Record<string, unknown>;
  readonly toolResponse: unknown;
  /** The tool and its input in one shape whatever the agent; undefined without a tool. */
  tool(): Tool | undefined;
}

/** One replacement of an edit. */
export interface Edit {
  old: string;
  new: string;
  replaceAll: boolean;
}

/** A tool call, the same whatever the agent named it (as the Rust SDK's `Tool`). */
export type Tool =
  | { kind: 'shell'; command: string }
  | { kind: 'read'; path: string }
  | { kind: 'write'; path: string; content: string }
  | { kind: 'edit'; path: string; edits: Edit[] }
  | { kind: 'glob'; pattern: string; path?: string }
  | { kind: 'grep'; pattern: string; path?: string }
  | { kind: 'webFetch'; url?: string; prompt?: string }
  | { kind: 'webSearch'; query: string }
  | { kind: 'other'; name: string; input: Record<string, unknown> };

export type Role = 'system' | 'user' | 'assistant';
export type Severity = 'info' | 'warning' | 'error';

export class Outcome {
  readonly decision: 'proceed' | 'allow' | 'deny' | 'ask' | 'modify' | 'modifyOutput';
  readonly reason?: string;
  /** What `ask` asks. */
  readonly approval?: { prompt: string; options: string[]; timeoutMs?: number; defaultAllow: boolean };
  /** The new tool input (`modify`) or output (`modifyOutput`). */
  readonly rewrite?: unknown;
  /** Context added for the model, and whom it speaks as. */
  readonly context?: string;
  readonly contextRole: Role;
  /** A message shown to the person, and how serious it is. */
  readonly userMessage?: string;
  readonly userSeverity: Severity;
  readonly systemMessage?: string;
  /** Why the agent is stopped, if it is. */
  readonly stopReason?: string;
  readonly suppressOutput: boolean;
  readonly metadata?: unknown;
  static proceed(): Outcome;
  static allow(reason?: string): Outcome;
  static deny(reason: string): Outcome;
  static ask(prompt: string, options?: { options?: string[]; timeoutMs?: number; defaultAllow?: boolean }): Outcome;
  static modify(toolInput: Record<string, unknown>): Outcome;
  static modifyOutput(output: unknown): Outcome;
  static stop(reason: string): Outcome;
  withContext(text: string, role?: Role): Outcome;
  withUserMessage(text: string, severity?: Severity): Outcome;
  withSystemMessage(text: string): Outcome;
  withStop(reason: string): Outcome;
  withSuppressedOutput(): Outcome;
  withMetadata(metadata: unknown): Outcome;
}

export class Hook {
  dispatch(event: Event): Outcome;
  other(event: Event): Outcome;
  preToolUse(event: Event): Outcome;
  postToolUse(event: Event): Outcome;
  postToolUseFailure(event: Event): Outcome;
  userPromptSubmit(event: Event): Outcome;
  permissionRequest(event: Event): Outcome;
  notification(event: Event): Outcome;
  stop(event: Event): Outcome;
  subagentStop(event: Event): Outcome;
  sessionStart(event: Event): Outcome;
  sessionEnd(event: Event): Outcome;
}

export function config<T = Record<string, unknown>>(): T;
export const kv: { get(key: string): string | undefined; set(key: string, value: string): void };
export const log: Record<'trace' | 'debug' | 'info' | 'warn' | 'error', (message: string) => void>;
export function exportHook(handler: new () => Hook): { handle(event: unknown): unknown };
