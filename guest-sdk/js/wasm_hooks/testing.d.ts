// Types of the wasm-hooks JavaScript SDK's test host (testing.js).

import { Event, Host } from './index.js';

/** The host, in a test: `config` as the hook file would give it, a `kv` Map, and `logs` as [level, message] pairs. */
export class MockHost implements Host {
  constructor(options?: { config?: Record<string, unknown>; kv?: Record<string, string> });
  readonly kv: Map<string, string>;
  readonly logs: Array<[string, string]>;
  /** Use this host from now on; returns it. */
  install(): this;
  /** Go back to the host before. */
  uninstall(): void;
  config(): string;
  log(level: 'trace' | 'debug' | 'info' | 'warn' | 'error', message: string): void;
  kvGet(key: string): string | undefined;
  kvSet(key: string, value: string): void;
}

/** An event named `name` with these record fields. */
export function event(name: string, fields?: Record<string, unknown>): Event;

/** Claude Code's PreToolUse for its Bash tool running `command`. */
export function bash(command: string): Event;
