// What the package's tests share: the guest plugins built from the
// checkout (as the Rust tests build them, into target/plugins) and engines
// that read only the files a test names.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import wasmHooks from '../index.js'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
export const PLUGINS = join(ROOT, 'target', 'plugins', 'wasm32-wasip2', 'release')
export const CLI = join(ROOT, 'target', 'debug', 'wasm-hooks')

let built = false
/** The guest plugins the tests use, built from source (cached). */
export function plugins() {
  if (!built) {
    const env = { ...process.env, CARGO_TARGET_DIR: join(ROOT, 'target', 'plugins') }
    delete env.RUSTC_WORKSPACE_WRAPPER
    delete env.CLIPPY_ARGS
    execFileSync('cargo', ['build', '--release', '--target', 'wasm32-wasip2', '--quiet',
      '-p', 'deny-dangerous-commands', '-p', 'hostile-trap'], { cwd: ROOT, env, stdio: 'inherit' })
    built = true
  }
  return PLUGINS
}

/** A shared hook file of tests/fixtures/embedding (both packages' tests use them). */
export function hooksText(name) {
  return readFileSync(join(ROOT, 'tests', 'fixtures', 'embedding', name), 'utf8')
}

export const cacheDir = mkdtempSync(join(tmpdir(), 'wasm-hooks-node-cache-'))

/** A folder of the test's own. */
export function folder() {
  return mkdtempSync(join(tmpdir(), 'wasm-hooks-node-'))
}

/** Write a hook file (`{plugins}` is the plugins' folder) into `dir`. */
export function hookFile(dir, text = hooksText('guards.yaml'), name = 'hooks.yaml') {
  const path = join(dir, name)
  writeFileSync(path, text.replaceAll('{plugins}', plugins()))
  return path
}

/** An engine of exactly these hook files. */
export function engineOf(dir, files, options = {}) {
  return new wasmHooks.Engine({
    files,
    projectDir: dir,
    userConfigDir: join(dir, 'user-config'),
    managedDir: join(dir, 'managed'),
    cacheDir,
    ...options,
  })
}

/** A canonical PreToolUse record of a shell command. */
export function bash(command) {
  return { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } }
}
