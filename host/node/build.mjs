// `npm install`'s build of the addon: napi-rs's CLI writes the addon, its
// loader (native.js) and its TypeScript types (native.d.ts), with cargo
// reached through ./cargo-host so the build reuses the workspace's
// target/debug (the dev profile; WASM_HOOKS_RELEASE=1 for release).
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const args = ['build', '--platform', '--js', 'native.js', '--dts', 'native.d.ts', '--target-dir', join(here, '.napi-target')]
if (process.env.WASM_HOOKS_RELEASE === '1') args.push('--release')
const built = spawnSync(join(here, 'node_modules', '.bin', 'napi'), args, {
  cwd: here,
  stdio: 'inherit',
  env: { ...process.env, CARGO: join(here, 'cargo-host') },
})
process.exit(built.status ?? 1)
