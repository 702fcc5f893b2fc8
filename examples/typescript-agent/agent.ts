// A small agent loop with wasm-hooks inside, in TypeScript: a scripted
// model on 127.0.0.1, a shell tool, and three guards that each stop an
// `rm -rf` (the deny-dangerous-commands wasm plugin, an inline rule, a
// TypeScript function), an approval answered by a callback, and a context
// injection within the turn's budget. The guards are the Python example
// agent's hook file, plus a function of this language.
//
//   npm install && npm run build && node dist/agent.js --approve allow
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { Engine, Session } from 'wasm-hooks'

type Turn = { tool: string; input: { command: string } } | { text: string }
type Message = { role: string; content: string }

/** What the scripted model asks for, one turn at a time. */
const SCRIPT: Turn[] = [
  { tool: 'Bash', input: { command: 'rm -rf /' } },
  { tool: 'Bash', input: { command: 'rm -rf .git' } },
  { tool: 'Bash', input: { command: 'sudo rm -rf build' } },
  { tool: 'Bash', input: { command: 'git push' } },
  { tool: 'Bash', input: { command: 'echo done > notes.txt' } },
  { text: 'All done.' },
]

/** A model on 127.0.0.1 answering from SCRIPT, keeping what it was sent. */
function fakeModel(received: Array<{ messages: Message[] }>) {
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      received.push(JSON.parse(body))
      const turn = SCRIPT[Math.min(received.length, SCRIPT.length) - 1]
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify(turn))
    })
  })
}

async function askModel(url: string, messages: Message[]): Promise<Turn> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify({ messages }), headers: { 'Content-Type': 'application/json' } })
  return (await response.json()) as Turn
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const approve = args[args.indexOf('--approve') + 1] === 'allow' ? 'allow' : 'deny'
  const work = args.includes('--work-dir') ? args[args.indexOf('--work-dir') + 1] : mkdtempSync(join(tmpdir(), 'ts-agent-'))
  mkdirSync(join(work, '.git'), { recursive: true })
  mkdirSync(join(work, 'build'), { recursive: true })

  const received: Array<{ messages: Message[] }> = []
  const model = fakeModel(received).listen(0, '127.0.0.1')
  await new Promise((resolve) => model.once('listening', resolve))
  const url = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1/messages`

  const engine = new Engine({ files: [join(__dirname, '..', '..', 'python-agent', 'hooks.yaml')], projectDir: work })
  // A guard of the agent's own, in TypeScript, folded with the file's hooks.
  engine.register('PreToolUse', function noSudo(event: { tool_input: { command: string } }) {
    if (event.tool_input.command.startsWith('sudo ')) return { decision: 'deny', reason: 'the agent does not run sudo' }
    return undefined
  }, { matcher: 'Bash' })
  // Context for the model, within the turn's budget.
  engine.register('UserPromptSubmit', () => ({ action: 'inject_context', context_injection: 'Conventions: notes go in notes.txt.' }), { name: 'conventions' })

  const record: Array<Record<string, unknown>> = []
  const session = new Session(engine, 'typescript-agent-1', { approve: async () => (approve === 'allow' ? 'Allow once' : 'Deny') })
  const prompt = 'Tidy the repository and push.'
  await session.promptSubmitted(prompt)
  const messages: Message[] = [{ role: 'user', content: prompt }]
  for (let step = 0; step < SCRIPT.length; step += 1) {
    messages.push(...session.flushContext().map((m) => ({ role: m.role, content: m.text })))
    const turn = await askModel(url, messages)
    if ('text' in turn) {
      record.push({ model: turn.text })
      break
    }
    const resolved = await session.beforeTool(turn.tool, turn.input)
    const command = ((resolved.outcome.updatedInput as { command?: string } | null)?.command) ?? turn.input.command
    if (resolved.outcome.denied) {
      record.push({ command, denied_by: resolved.outcome.decidedBy, reason: resolved.outcome.reason })
      messages.push({ role: 'tool', content: `denied: ${resolved.outcome.reason}` })
      continue
    }
    const ran = spawnSync('sh', ['-c', command], { cwd: work, encoding: 'utf8' })
    await session.afterTool(turn.tool, turn.input, { stdout: ran.stdout, exit_code: ran.status })
    const entry: Record<string, unknown> = { command, ran: ran.status }
    if (resolved.approval) entry.approved_by = (resolved.approval as { decided_by: string }).decided_by
    record.push(entry)
    messages.push({ role: 'tool', content: ran.stdout + ran.stderr })
  }
  model.close()
  record.push({ context_sent: received[0].messages.filter((m) => m.role === 'system').map((m) => m.content) })
  if (args.includes('--json')) console.log(JSON.stringify(record))
  else for (const step of record) console.log(Object.entries(step).map(([k, v]) => `${k}=${String(v)}`).join(' '))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
