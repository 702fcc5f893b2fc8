// The engine from Node: dialects, functions as hooks, errors, the event loop.
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import wasmHooks from '../index.js'
import { ROOT, bash, engineOf, folder, hookFile, hooksText } from './support.mjs'

const { EventError, HookFileError, RegistrationError } = wasmHooks
const fixture = (agent, name) => JSON.parse(readFileSync(join(ROOT, 'tests', 'fixtures', agent, `${name}.json`), 'utf8'))

test('the wasm guard denies rm -rf and lets ls by', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir)])
  const denied = await engine.decide(bash('rm -rf /'))
  assert.equal(denied.denied, true)
  assert.equal(denied.decidedBy, 'deny-dangerous-commands')
  assert.match(denied.reason, /rm -rf \//)
  const allowed = await engine.decide(bash('ls -la'))
  assert.equal(allowed.decision, 'proceed')
  assert.deepEqual(allowed.trace.map((t) => t.hook), ['deny-dangerous-commands'])
  const write = { hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: 'a/.env', content: 'K=1' } }
  assert.equal((await engine.decide(write)).decidedBy, 'no-env-writes')
  assert.equal(engine.decideSync(bash('rm -rf /')).decidedBy, 'deny-dangerous-commands')
})

test("each agent's dialect is read and answered", async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir)])
  const claude = fixture('claude-code-2.1.330', 'PreToolUse')
  claude.tool_input.command = 'rm -rf /'
  assert.equal((await engine.decide(claude, 'claude')).denied, true)
  const answer = await engine.answer(claude, 'claude')
  assert.equal(answer.body.hookSpecificOutput.permissionDecision, 'deny')
  assert.equal(answer.exitCode, 0)
  const gemini = fixture('gemini-cli-0.61', 'BeforeTool')
  gemini.tool_input.command = 'rm -rf /'
  assert.equal((await engine.answer(gemini, 'gemini')).body.decision, 'deny')
  assert.deepEqual(new Set(wasmHooks.PROTOCOLS), new Set(['claude', 'codex', 'gemini', 'copilot', 'cursor', 'opencode', 'canonical']))
})

test('a JavaScript function is a hook folded with the files, sync or async', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir)])
  const seen = []
  engine.register('PreToolUse', function noSudo(event) {
    seen.push(event.tool_input.command)
    if (event.tool_input.command.startsWith('sudo')) return { decision: 'deny', reason: 'no sudo here' }
  }, { matcher: 'Bash' })
  engine.hook('tool:pre', { name: 'careful', priority: 5 })(async (event) => {
    await new Promise((resolve) => setTimeout(resolve, 1))
    return event.tool_input.command === 'make clean' ? { action: 'deny', reason: 'async says no' } : null
  })
  const sudo = await engine.decide(bash('sudo ls'))
  assert.equal(sudo.decidedBy, 'noSudo')
  assert.equal(sudo.reason, 'no sudo here')
  assert.equal((await engine.decide(bash('make clean'))).reason, 'async says no')
  assert.equal((await engine.decide(bash('ls'))).decision, 'proceed')
  await engine.decide({ hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'a' } })
  assert.deepEqual(seen, ['sudo ls', 'make clean', 'ls'], 'the matcher keeps it to Bash')
  assert.deepEqual(engine.hooks().map((h) => h.name), ['deny-dangerous-commands', 'no-env-writes', 'noSudo', 'careful'])
  assert.throws(() => engine.decideSync(bash('ls')), /decideSync cannot run JavaScript function hooks/)
})

test('rewrites chain in priority order and a deny short-circuits', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir, 'hooks: {}')])
  const append = (flag) => (e) => ({ action: 'modify', modified_args: { command: `${e.tool_input.command} ${flag}` } })
  engine.register('PreToolUse', append('--b'), { priority: 2, name: 'b' })
  engine.register('PreToolUse', append('--a'), { priority: 1, name: 'a' })
  assert.deepEqual((await engine.decide(bash('ls'))).updatedInput, { command: 'ls --a --b' })
  const later = []
  engine.register('PreToolUse', () => ({ decision: 'deny', reason: 'first' }), { priority: -1, name: 'first' })
  engine.register('PreToolUse', (e) => { later.push(e) }, { priority: 5, name: 'later' })
  const outcome = await engine.decide(bash('ls'))
  assert.equal(outcome.decidedBy, 'first')
  assert.deepEqual(later, [], 'a deny short-circuits the hooks after it')
})

test('a function that throws blocks unless its onFailure says otherwise', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir, 'hooks: {}')])
  const broken = () => { throw new TypeError('the guard is broken') }
  const registration = engine.register('PreToolUse', broken, { name: 'broken' })
  const denied = await engine.decide(bash('ls'))
  assert.equal(denied.denied, true)
  assert.match(denied.reason, /the guard is broken/)
  assert.equal(registration.unregister(), true)
  assert.equal(registration.unregister(), false)
  engine.register('PreToolUse', broken, { name: 'broken', onFailure: 'warn' })
  const warned = await engine.decide(bash('ls'))
  assert.equal(warned.decision, 'proceed')
  assert.match(warned.systemMessages[0].value, /the guard is broken/)
  engine.register('PreToolUse', () => ({ action: 'explode' }), { name: 'odd', priority: -1 })
  const odd = await engine.decide(bash('ls'))
  assert.match(odd.reason, /invalid answer.*action/)
})

test('the event loop stays free while hooks run', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir, hooksText('slow-command.yaml'))])
  let ticks = 0
  const timer = setInterval(() => { ticks += 1 }, 10)
  const outcome = await engine.decide(bash('ls'))
  clearInterval(timer)
  assert.equal(outcome.decision, 'proceed')
  assert.ok(ticks > 1, `the loop ran timers while the hook slept (${ticks})`)
})

test('many decisions at once', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir)])
  const commands = Array.from({ length: 200 }, (_, i) => (i % 2 ? 'rm -rf /' : `echo ${i}`))
  const outcomes = await Promise.all(commands.map((c) => engine.decide(bash(c))))
  outcomes.forEach((o, i) => assert.equal(o.denied, commands[i] === 'rm -rf /'))
})

test('a broken hook file throws naming the file and line', () => {
  const dir = folder()
  const broken = join(dir, 'hooks.yaml')
  writeFileSync(broken, 'hooks:\n  PreToolUse:\n    - hooks:\n        - type: wasm\n          plugin: 12\n          fuel: x\n')
  assert.throws(() => engineOf(dir, [broken]), (error) => {
    assert.ok(error instanceof HookFileError)
    assert.equal(error.problems[0].file, broken)
    assert.notEqual(error.problems[0].line, null)
    return true
  })
})

test('events and registrations that do not read throw naming the field', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir, 'hooks: {}')])
  await assert.rejects(engine.decide({ hook_event_name: 'PreToolUze' }), (e) => e instanceof EventError && /PreToolUze/.test(e.message))
  await assert.rejects(engine.decide({ hook_event_name: 'PreToolUse', tool_name: 5 }), /tool_name/)
  await assert.rejects(engine.decide(bash('ls'), 'vim'), EventError)
  assert.throws(() => engine.register('PreToolUze', () => null), (e) => e instanceof RegistrationError && /PreToolUse/.test(e.message))
  assert.throws(() => engine.register('PreToolUse', () => null, { matcher: '(' }), /matcher/)
  assert.throws(() => engine.register('PreToolUse', () => null, { onFailure: 'maybe' }), /onFailure/)
  assert.throws(() => engine.register('PreToolUse', 'not a function'), RegistrationError)
})
