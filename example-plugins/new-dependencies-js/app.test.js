// Native tests of the plugin's logic: `node --test` (CI runs them, after
// `wasm-hooks build` has written this plugin's wasm_hooks/). The
// component's policy tests are in fixtures/ (`wasm-hooks test`).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import Handler, { addedPackages, oneOff } from './app.js';
import { HookError } from './wasm_hooks/index.js';
import { MockHost, bash, event } from './wasm_hooks/testing.js';

function decide(command, config = {}) {
  const host = new MockHost({ config }).install();
  try {
    return new Handler().dispatch(bash(command));
  } finally {
    host.uninstall();
  }
}

test('the packages of every manager are read, versions and flags left out', () => {
  assert.deepEqual(addedPackages('npm install -D left-pad@1.3.0 && pip install requests==2.31'), [
    { manager: 'npm', name: 'left-pad' },
    { manager: 'pip', name: 'requests' },
  ]);
  assert.deepEqual(addedPackages('cargo add serde --features derive'), [{ manager: 'cargo', name: 'serde' }]);
  assert.deepEqual(addedPackages('pip install -r requirements.txt'), []);
  assert.deepEqual(addedPackages('python3 -m pip install @scope/pkg'), [{ manager: 'pip', name: '@scope/pkg' }]);
  assert.deepEqual(addedPackages('npm test'), []);
});

test('the command line is read as the shell reads it (shell-quote)', () => {
  assert.deepEqual(addedPackages("npm install 'left-pad'"), [{ manager: 'npm', name: 'left-pad' }]);
  assert.deepEqual(addedPackages('echo "npm install x && pip install y"'), []);
  assert.deepEqual(addedPackages('cd web&&npm i react # and more'), [{ manager: 'npm', name: 'react' }]);
  assert.deepEqual(addedPackages('x=$(pip install "$PKG")'), [{ manager: 'pip', name: '$PKG' }]);
});

test('one edit apart, and no more', () => {
  assert.ok(oneOff('requests', 'reqests'));
  assert.ok(oneOff('lodash', 'lodahs'));
  assert.ok(oneOff('react', 'reactt'));
  assert.ok(!oneOff('react', 'preact2'));
  assert.ok(!oneOff('serde', 'serde'));
});

test('new packages are asked about, allowed ones proceed, near misses are denied', () => {
  const asked = decide('npm install left-pad');
  assert.equal(asked.decision, 'ask');
  assert.equal(asked.approval.prompt, 'Add new dependencies: left-pad (npm)?');
  assert.equal(decide('npm install react', { allowed: ['react'] }).decision, 'proceed');
  const typo = decide('pip install reqests', { allowed: ['requests'] });
  assert.equal(typo.decision, 'deny');
  assert.match(typo.reason, /typosquat/);
});

test('other tools are not looked at, and a misspelt config key fails loudly', () => {
  const host = new MockHost({ config: { allow: [] } }).install();
  try {
    const write = event('PreToolUse', { tool_name: 'Write', tool_input: { content: 'npm install x' } });
    assert.equal(new Handler().dispatch(write).decision, 'proceed');
    assert.throws(() => new Handler().dispatch(bash('npm install x')), HookError);
  } finally {
    host.uninstall();
  }
});
