// The TypeScript example agent (examples/typescript-agent), type-checked
// against the package's types and run: each of its three guards stops an
// `rm -rf`, an approval is answered by its callback, and the hooks'
// context reaches its model.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { before, test } from 'node:test'

import { ROOT, folder, plugins } from './support.mjs'

const AGENT = join(ROOT, 'examples', 'typescript-agent')

before(() => {
  plugins()
  // Its dependencies: this package (a link) and the compiler; the addon is already built.
  execFileSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: AGENT, stdio: 'inherit' })
  execFileSync(join(AGENT, 'node_modules', '.bin', 'tsc'), ['-p', AGENT], { stdio: 'inherit' })
})

function runAgent(dir, approve) {
  const out = execFileSync('node', [join(AGENT, 'dist', 'agent.js'), '--json', '--approve', approve, '--work-dir', dir],
    { encoding: 'utf8', timeout: 300_000 })
  return JSON.parse(out)
}

test('each guard stops an rm -rf and the approval decides the push', () => {
  const dir = folder()
  const record = runAgent(dir, 'allow')
  const denied = Object.fromEntries(record.filter((s) => s.denied_by).map((s) => [s.command, s.denied_by]))
  assert.deepEqual(denied, { 'rm -rf /': 'deny-dangerous-commands', 'rm -rf .git': 'keep-git-history', 'sudo rm -rf build': 'noSudo' })
  assert.ok(existsSync(join(dir, '.git')) && existsSync(join(dir, 'build')))
  assert.equal(record.find((s) => s.command === 'git push').approved_by, 'person')
  assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'done\n')
  assert.deepEqual(record.at(-1).context_sent, ['Conventions: notes go in notes.txt.'])
})

test('a refused approval stops the push', () => {
  const record = runAgent(folder(), 'deny')
  assert.equal(record.find((s) => s.command === 'git push').denied_by, 'confirm-push')
})
