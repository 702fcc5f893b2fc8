// The addon beside V8's own WebAssembly, and in worker threads: a trap in
// each is that engine's error, and the process lives on.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'

import { bash, engineOf, folder, hookFile, hooksText } from './support.mjs'

const TRAP = hooksText('trap.yaml')

// (module (func (export "boom") unreachable))
const V8_TRAP = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 7, 8, 1, 4, 98, 111, 111, 109, 0, 0, 10, 5, 1, 3, 0, 0, 11])

test("a trap in V8's WebAssembly and one in wasmtime are each their own engine's error", async () => {
  const dir = folder()
  const engine = engineOf(dir, [hookFile(dir, TRAP)])
  const v8 = new WebAssembly.Instance(new WebAssembly.Module(V8_TRAP))
  for (let round = 0; round < 2; round += 1) {
    assert.throws(() => v8.exports.boom(), WebAssembly.RuntimeError)
    const outcome = await engine.decide(bash('ls'))
    assert.equal(outcome.denied, true)
    assert.match(outcome.reason.toLowerCase(), /trap|unreachable/)
  }
})

test('workers each load the addon and decide at once', async () => {
  const dir = folder()
  const hooks = hookFile(dir)
  const source = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { Engine } = require(workerData.index)
    const engine = new Engine({ files: [workerData.hooks], projectDir: workerData.dir })
    Promise.all([engine.decide(${JSON.stringify(bash('rm -rf /'))}), engine.decide(${JSON.stringify(bash('ls'))})])
      .then(([a, b]) => parentPort.postMessage([a.denied, b.denied]))
  `
  const index = new URL('../index.js', import.meta.url).pathname
  const results = await Promise.all([0, 1].map(() => new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { index, hooks, dir } })
    worker.once('message', resolve)
    worker.once('error', reject)
  })))
  assert.deepEqual(results, [[true, false], [true, false]])
})
