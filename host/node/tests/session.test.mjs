// The session layer from Node: approvals by a function, context within
// its budget, messages, the audit log.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import wasmHooks from '../index.js'
import { CLI, bash, engineOf, folder, hookFile, hooksText } from './support.mjs'

const { Session } = wasmHooks
const ASK_ON_PUSH = hooksText('ask-on-push.yaml')

test('an ask is answered by the approval function', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir, ASK_ON_PUSH)])
  const answers = ['Allow once', 'Deny', false, null]
  const asked = []
  const session = new Session(engine, 's1', { approve: async (request) => { asked.push(request); return answers.shift() } })
  const allowed = await session.beforeTool('Bash', { command: 'git push' })
  assert.equal(allowed.outcome.decision, 'allow')
  assert.equal(allowed.approval.decided_by, 'person')
  assert.equal(asked[0].prompt, 'The agent wants to push. Allow it?')
  assert.equal((await session.beforeTool('Bash', { command: 'git push' })).outcome.denied, true)
  assert.equal((await session.beforeTool('Bash', { command: 'git push' })).outcome.denied, true)
  const unanswered = await session.beforeTool('Bash', { command: 'git push' })
  assert.equal(unanswered.approval.decided_by, 'unanswered')
  assert.equal(unanswered.outcome.denied, true)
  assert.equal((await session.beforeTool('Bash', { command: 'ls' })).outcome.denied, false)
  const throwing = new Session(engine, 's2', { approve: () => { throw new Error('no terminal') } })
  assert.equal((await throwing.beforeTool('Bash', { command: 'git push' })).outcome.denied, true)
})

test('context is kept within the cap and the turn budget', async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir, 'hooks: {}')])
  engine.register('UserPromptSubmit', (e) => ({ action: 'inject_context', context_injection: `remember: ${e.prompt}` }), { name: 'memory' })
  const session = new Session(engine, 's3', { maxInjectionBytes: 64, turnBudgetTokens: 8 })
  assert.equal((await session.promptSubmitted('tests first')).injections[0].status.status, 'queued')
  assert.equal((await session.dispatch({ hook_event_name: 'UserPromptSubmit', prompt: 'and lint after' })).injections[0].status.status, 'over_budget')
  assert.equal((await session.dispatch({ hook_event_name: 'UserPromptSubmit', prompt: 'x'.repeat(100) })).injections[0].status.status, 'refused')
  const messages = session.flushContext()
  assert.equal(messages.length, 1)
  assert.match(messages[0].text, /remember: tests first[\s\S]*and lint after/)
  assert.deepEqual(session.flushContext(), [])
})

test('messages go to the display function and every step to the audit log', async () => {
  const dir = folder()
  const log = join(dir, 'audit.jsonl')
  const engine = engineOf(dir, [hookFile(dir)], { auditLog: log })
  engine.register('PreToolUse', () => ({ action: 'continue', user_message: 'careful', user_message_level: 'warning' }), { name: 'nanny' })
  const shown = []
  const session = new Session(engine, 's4', { display: (message) => { shown.push(message) } })
  assert.equal((await session.beforeTool('Bash', { command: 'rm -rf /' })).outcome.denied, true)
  await session.beforeTool('Bash', { command: 'ls' })
  await new Promise((resolve) => setImmediate(resolve))
  assert.ok(shown.some((m) => m.kind === 'message' && m.source === 'nanny' && m.text === 'careful'), JSON.stringify(shown))
  assert.match(readFileSync(log, 'utf8'), /deny-dangerous-commands/)
  execFileSync(CLI, ['audit', 'verify', log])
})
