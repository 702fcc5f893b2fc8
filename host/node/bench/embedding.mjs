// What deciding an event costs from Node, in the same run as the Python
// and Rust figures (`scripts/bench --embedding` runs it with the release
// addon through NAPI_RS_NATIVE_LIBRARY_PATH). Prints JSON: one summary per case.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'

import wasmHooks from '../index.js'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const [plugin, events = '20000', cache] = process.argv.slice(2)
const n = Number(events)
const EVENT = { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls -la' }, session_id: 'bench', cwd: '/tmp' }
const dir = mkdtempSync(join(tmpdir(), 'bench-node-'))
const fixture = (name) => readFileSync(join(ROOT, 'tests', 'fixtures', 'embedding', name), 'utf8').replaceAll('{plugins}/deny_dangerous_commands.wasm', plugin)
writeFileSync(join(dir, 'wasm.yaml'), fixture('wasm-guard.yaml'))
writeFileSync(join(dir, 'inline.yaml'), fixture('inline-no-sudo.yaml'))
writeFileSync(join(dir, 'empty.yaml'), 'hooks: {}\n')

const engine = (name) => new wasmHooks.Engine({
  files: [join(dir, name)], projectDir: dir, cacheDir: cache ?? join(dir, 'cache'),
  managedDir: join(dir, 'managed'), userConfigDir: join(dir, 'user'),
})

function summary(name, samples) {
  const us = samples.map((s) => s / 1000).sort((a, b) => a - b)
  const mean = us.reduce((a, b) => a + b, 0) / us.length
  return { name, n: us.length, p50_us: us[Math.floor(us.length / 2)], p99_us: us[Math.min(us.length - 1, Math.floor(us.length * 0.99))], mean_us: mean }
}

async function timed(name, call) {
  for (let i = 0; i < Math.min(200, n); i += 1) await call()
  const samples = []
  for (let i = 0; i < n; i += 1) {
    const start = process.hrtime.bigint()
    await call()
    samples.push(Number(process.hrtime.bigint() - start))
  }
  return summary(name, samples)
}

function workers(count, perWorker) {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { Engine } = require(workerData.index)
    const engine = new Engine(workerData.options)
    for (let i = 0; i < 200; i += 1) engine.decideSync(workerData.event)
    parentPort.postMessage('ready')
    parentPort.once('message', () => {
      for (let i = 0; i < workerData.n; i += 1) engine.decideSync(workerData.event)
      parentPort.postMessage('done')
    })`
  const index = fileURLToPath(new URL('../index.js', import.meta.url))
  const options = { files: [join(dir, 'wasm.yaml')], projectDir: dir, cacheDir: cache ?? join(dir, 'cache'), managedDir: join(dir, 'managed'), userConfigDir: join(dir, 'user') }
  const started = Array.from({ length: count }, () => new Worker(source, { eval: true, workerData: { index, options, event: EVENT, n: perWorker } }))
  const once = (w, what) => new Promise((resolve) => w.once('message', (m) => m === what && resolve()))
  return Promise.all(started.map((w) => once(w, 'ready'))).then(async () => {
    const start = process.hrtime.bigint()
    started.forEach((w) => w.postMessage('go'))
    await Promise.all(started.map((w) => once(w, 'done')))
    const seconds = Number(process.hrtime.bigint() - start) / 1e9
    started.forEach((w) => w.terminate())
    return { name: `Node: wasm guard, ${count} worker${count > 1 ? 's' : ''} (decideSync)`, n: count * perWorker, events_per_s: (count * perWorker) / seconds }
  })
}

const wasm = engine('wasm.yaml')
const inline = engine('inline.yaml')
const functions = engine('empty.yaml')
functions.register('PreToolUse', function proceed() {}, { name: 'proceed' })
const both = engine('wasm.yaml')
both.register('PreToolUse', function proceed() {}, { name: 'proceed' })

const results = [
  await timed('Node: wasm guard (await engine.decide)', () => wasm.decide(EVENT)),
  await timed('Node: wasm guard (engine.decideSync)', () => wasm.decideSync(EVENT)),
  await timed('Node: inline rule (engine.decideSync)', () => inline.decideSync(EVENT)),
  await timed('Node: a registered JavaScript function (await engine.decide)', () => functions.decide(EVENT)),
  await timed('Node: wasm guard + a registered function (await engine.decide)', () => both.decide(EVENT)),
  await workers(1, n),
  await workers(2, n),
]
console.log(JSON.stringify(results))
