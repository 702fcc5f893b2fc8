// Run a plugin's Hook natively, under `node --test`: a mock host with the
// hook's config, a key-value store and the log lines written.
//
//   const host = new MockHost({ config: { blocked: ['sudo'] } }).install();
//   assert.equal(new Handler().dispatch(bash('sudo ls')).decision, 'deny');
//   host.uninstall();

import { Event, HookError, setHost } from './index.js';

/** The host, in a test: `config` as the hook file would give it, a `kv` Map, and `logs` as [level, message] pairs. */
export class MockHost {
  constructor({ config = {}, kv = {} } = {}) {
    this._config = config;
    this.kv = new Map(Object.entries(kv));
    this.logs = [];
    this._before = null;
  }
  /** Use this host from now on; returns it. */
  install() { this._before = setHost(this); return this; }
  /** Go back to the host before. */
  uninstall() { setHost(this._before); }
  config() { return JSON.stringify(this._config); }
  log(level, message) { this.logs.push([level, message]); }
  kvGet(key) { return this.kv.get(key); }
  kvSet(key, value) {
    if (typeof value !== 'string') throw new HookError('kv values are strings');
    this.kv.set(key, value);
  }
}

/** An event named `name` with these record fields. */
export function event(name, fields = {}) {
  return Event.fromRecord({ hook_event_name: name, session_id: 'test-session', cwd: '/project', ...fields });
}

/** Claude Code's PreToolUse for its Bash tool running `command`. */
export function bash(command) {
  return event('PreToolUse', { tool_name: 'Bash', tool_input: { command } });
}
