// new-dependencies: a wasm-hooks plugin in JavaScript. Before Bash adds a
// package (`npm install X`, `pnpm add`, `yarn add`, `pip install`, `cargo
// add`, `go get`), it asks the person, naming the packages, unless every
// one is in the config's `allowed` list; a package that looks like a
// misspelling of an allowed one (one letter off) is denied outright, since
// typosquatting is how malicious packages get in.
//
// It reads the command line with the npm package `shell-quote` (a
// dependency in package.json: run `npm install` before `wasm-hooks build`,
// which bundles it into the component).
//
// Config: `allowed` (package names that need no question, default []).

import { parse } from 'shell-quote';

import { Hook, HookError, Outcome, config } from './wasm_hooks/index.js';

/** The package managers, and the words after which packages are named. */
const ADDERS = [
  ['npm', ['install', 'i', 'add']],
  ['pnpm', ['add', 'install', 'i']],
  ['yarn', ['add']],
  ['pip', ['install']],
  ['pip3', ['install']],
  ['cargo', ['add']],
  ['go', ['get']],
];

/** Options whose next word is their value, not a package. */
const TAKES_VALUE = new Set(['--features', '-F', '--rename', '--git', '--path', '--branch', '--tag', '--registry', '-r', '--requirement', '-i', '--index-url', '-c', '--constraint']);

/** The words of a shell command line, split where the shell splits
 * commands (`&&`, `||`, `;`, `|`, `&`, and into `$(…)`): by `shell-quote`,
 * so `npm install 'left-pad'` names left-pad and `echo "npm install x"`
 * names nothing. */
export function commands(line) {
  const found = [[]];
  // Variables stay as written: the hook does not know their values.
  for (const part of parse(line, (name) => `$${name}`)) {
    if (typeof part === 'string') found.at(-1).push(part);
    else if (part.op === 'glob') found.at(-1).push(part.pattern);
    else if (!('comment' in part)) found.push([]);
  }
  return found.filter((words) => words.length > 0);
}

/** The packages a shell command line adds, with the manager adding each. */
export function addedPackages(line) {
  const found = [];
  for (const words of commands(line)) {
    const [manager, verb, ...rest] = words[0] === 'python3' && words[1] === '-m' ? words.slice(2) : words;
    const verbs = ADDERS.find(([name]) => name === manager)?.[1];
    if (!verbs?.includes(verb)) continue;
    for (let i = 0; i < rest.length; i += 1) {
      const word = rest[i];
      if (TAKES_VALUE.has(word)) i += 1;
      if (word.startsWith('-')) continue;
      // `left-pad@1.3.0`, `requests==2.31`, `serde@1`: the name only.
      const name = word.replace(/^(@?[^@=<>~!]+).*$/, '$1');
      found.push({ manager, name });
    }
  }
  return found;
}

/** Whether `a` and `b` differ by one edit (a letter changed, added or dropped, or two swapped). */
export function oneOff(a, b) {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  if (a.length === b.length) {
    const diff = [...a].flatMap((c, i) => (c === b[i] ? [] : [i]));
    return diff.length === 1 || (diff.length === 2 && diff[1] === diff[0] + 1 && a[diff[0]] === b[diff[1]] && a[diff[1]] === b[diff[0]]);
  }
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  for (let i = 0; i < long.length; i += 1) {
    if (long.slice(0, i) + long.slice(i + 1) === short) return true;
  }
  return false;
}

export default class Handler extends Hook {
  preToolUse(event) {
    if (event.toolName !== 'Bash') return Outcome.proceed();
    const settings = config();
    const unknown = Object.keys(settings).filter((key) => key !== 'allowed');
    if (unknown.length > 0) throw new HookError(`unknown config keys: ${unknown.join(', ')} (known: allowed)`);
    const allowed = settings.allowed ?? [];
    const added = addedPackages(String(event.toolInput.command ?? ''));
    const fresh = added.filter(({ name }) => !allowed.includes(name));
    if (fresh.length === 0) return Outcome.proceed();
    for (const { name } of fresh) {
      const near = allowed.find((known) => oneOff(known, name));
      if (near !== undefined) {
        return Outcome.deny(`\`${name}\` is one letter off the allowed \`${near}\`: a typosquat? Use \`${near}\``);
      }
    }
    const names = fresh.map(({ manager, name }) => `${name} (${manager})`).join(', ');
    return Outcome.ask(`Add new dependencies: ${names}?`).withContext(`New dependencies need the person's approval: ${names}`);
  }
}
