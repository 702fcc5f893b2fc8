// Every JavaScript snippet of docs/embedding.md, run in a reader's folder
// where `require('wasm-hooks')` finds this package.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { ROOT, cacheDir, folder } from './support.mjs'

test('every JavaScript snippet of the embedding page runs', () => {
  const page = join(ROOT, 'docs', 'embedding.md')
  const blocks = [...readFileSync(page, 'utf8').matchAll(/^```js\n([\s\S]*?)^```/gm)].map((m) => m[1])
  assert.ok(blocks.length >= 1, 'the page has JavaScript snippets')
  const dir = folder()
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(join(ROOT, 'host', 'node'), join(dir, 'node_modules', 'wasm-hooks'))
  for (const block of blocks) {
    execFileSync('node', ['-e', block], { cwd: dir, env: { ...process.env, WASM_HOOKS_CACHE_DIR: cacheDir }, stdio: 'inherit' })
  }
})
