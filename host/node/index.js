'use strict'
// wasm-hooks inside a Node.js agent: the native addon (native.js, built by
// napi-rs) with its JavaScript face: errors as classes, and every function
// the engine calls back (a hook, an approval, a display) made async, so a
// throw is a rejection the engine reads as the function's failure.

const native = require('./native.js')

/** Anything the engine refuses. */
class WasmHooksError extends Error {
  constructor(message) {
    super(message)
    this.name = new.target.name
  }
}

/** Hook files that do not load: `problems` names each file, line and field. */
class HookFileError extends WasmHooksError {
  constructor(message, problems = []) {
    super(message)
    this.problems = problems
  }
}

/** An event that cannot be read: the message names the field. */
class EventError extends WasmHooksError {}

/** A function registered with an event, matcher or failure policy that does not read. */
class RegistrationError extends WasmHooksError {}

const KINDS = { WasmHooksError, HookFileError, EventError, RegistrationError }
const MARKER = 'wasm-hooks-error:'
const NATIVE = Symbol('native')

/** The addon's error as the package's class. */
function translate(error) {
  if (error instanceof Error && error.message.startsWith(MARKER)) {
    const { kind, message, problems } = JSON.parse(error.message.slice(MARKER.length))
    return new KINDS[kind](message, problems)
  }
  return error
}

/** `call()`, its errors (thrown or rejected) translated. */
function guarded(call) {
  try {
    const result = call()
    return result instanceof Promise ? result.catch((error) => Promise.reject(translate(error))) : result
  } catch (error) {
    throw translate(error)
  }
}

/** `fn` as the addon calls it: async, `undefined` answered as `null`. */
function asAsync(fn, what) {
  if (typeof fn !== 'function') throw new RegistrationError(`${what} must be a function`)
  return async (value) => {
    const answer = await fn(value)
    return answer === undefined ? null : answer
  }
}

/**
 * A hooks engine: hook files (`files`, or the project's and the person's
 * as the CLI reads them), their plugins compiled, and the functions
 * registered on it.
 */
class Engine {
  constructor(options = {}) {
    this[NATIVE] = guarded(() => new native.Engine(options))
  }

  /** Run the hooks for `event` (canonical, or `agent`'s own payload). */
  decide(event, agent) {
    return guarded(() => this[NATIVE].decide(event, agent))
  }

  /** `decide`, blocking: only for an engine without JavaScript functions. */
  decideSync(event, agent) {
    return guarded(() => this[NATIVE].decideSync(event, agent))
  }

  /** Decide `agent`'s own payload and answer in its dialect. */
  answer(payload, agent) {
    return guarded(() => this[NATIVE].answer(payload, agent))
  }

  /**
   * Run `fn(event)` (sync or async) as a hook on `event`, folded with the
   * files' hooks; it answers `undefined`/`null` (no opinion) or an answer
   * in any shape hook files know. One that throws, or answers what does
   * not read, denies unless `onFailure` is `warn` or `ignore`.
   */
  register(event, fn, options = {}) {
    const hook = asAsync(fn, 'the hook')
    const name = options.name ?? (fn.name || 'function')
    return guarded(() => this[NATIVE].register(event, hook, { ...options, name }))
  }

  /** `register` as a decorator-like helper: `engine.hook('PreToolUse', { matcher: 'Bash' })(fn)`. */
  hook(event, options = {}) {
    return (fn) => {
      this.register(event, fn, options)
      return fn
    }
  }

  /** What the lints found in the hook files, one line each. */
  get warnings() {
    return this[NATIVE].warnings
  }

  /** The hooks that run, in order. */
  hooks() {
    return this[NATIVE].hooks()
  }
}

/**
 * One agent session over an engine: approvals to `approve(request)`,
 * context kept until `flushContext()`, messages to `display(message)`.
 */
class Session {
  constructor(engine, sessionId, { approve, display, ...options } = {}) {
    this[NATIVE] = guarded(
      () =>
        new native.Session(
          engine[NATIVE],
          sessionId,
          approve ? asAsync(approve, 'approve') : null,
          display ? asAsync(display, 'display') : null,
          options,
        ),
    )
  }

  get id() {
    return this[NATIVE].id
  }

  /** Run the hooks for `event` and route the outcome. */
  dispatch(event, agent) {
    return guarded(() => this[NATIVE].dispatch(event, agent))
  }

  /** PreToolUse for a call the agent is about to make. */
  beforeTool(toolName, toolInput, fields = {}) {
    return this.dispatch({ hook_event_name: 'PreToolUse', tool_name: toolName, tool_input: toolInput, ...fields })
  }

  /** PostToolUse for a call that ran. */
  afterTool(toolName, toolInput, toolResponse, fields = {}) {
    return this.dispatch({
      hook_event_name: 'PostToolUse',
      tool_name: toolName,
      tool_input: toolInput,
      tool_response: toolResponse,
      ...fields,
    })
  }

  /** A new turn: the person's prompt (UserPromptSubmit). */
  promptSubmitted(prompt) {
    this[NATIVE].beginTurn()
    return this.dispatch({ hook_event_name: 'UserPromptSubmit', prompt })
  }

  beginTurn() {
    this[NATIVE].beginTurn()
  }

  /** The context queued since the last call, one message per role. */
  flushContext() {
    return this[NATIVE].flushContext()
  }

  /** The first request to end the turn since the last call, if any. */
  takeStop() {
    return this[NATIVE].takeStop()
  }
}

module.exports = {
  Engine,
  Session,
  WasmHooksError,
  HookFileError,
  EventError,
  RegistrationError,
  PROTOCOLS: native.protocols(),
}
