// What the package's tests share: the guest plugins built from the
// checkout (as the Rust tests build them, into target/plugins) and engines
// that read only the files a test names.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
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

/** The guard file of the package tests: the wasm guard and an inline rule. */
export const GUARDS = `
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: wasm
          name: deny-dangerous-commands
          plugin: {plugins}/deny_dangerous_commands.wasm
          on_failure: block
    - matcher: Write|Edit
      hooks:
        - type: inline
          name: no-env-writes
          rules:
            - field: tool_input.file_path
              operator: regex
              value: '(^|/)\\.env$'
              action: deny
              reason: "secrets live in .env: the agent may not write it"
`

export const cacheDir = mkdtempSync(join(tmpdir(), 'wasm-hooks-node-cache-'))

/** A folder of the test's own. */
export function folder() {
  return mkdtempSync(join(tmpdir(), 'wasm-hooks-node-'))
}

/** Write a hook file (`{plugins}` is the plugins' folder) into `dir`. */
export function hookFile(dir, text = GUARDS, name = 'hooks.yaml') {
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
