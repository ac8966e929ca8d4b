// The examples of README.md and SNIPPETS.md: every JavaScript block parses, every
// market.<resource>.<method>( they call exists, and SNIPPETS.md has the sections docs/api.md
// takes them from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

import { Market } from '@markethq/market';

const read = (name) => readFileSync(new URL(`../../${name}`, import.meta.url), 'utf8');
const blocks = (md) => [...md.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

function parses(code, t) {
  const dir = mkdtempSync(join(tmpdir(), 'market-js-doc-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'snippet.mjs');
  writeFileSync(file, code);
  const r = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `does not parse:\n${code}\n${r.stderr}`);
}

function callsExist(code) {
  const market = new Market({ apiKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:1' });
  for (const [, resource, method] of code.matchAll(/\bmarket\.(\w+)\.(\w+)\(/g)) {
    assert.equal(typeof market[resource]?.[method], 'function', `market.${resource}.${method} does not exist`);
  }
}

test('README.md: every block parses and calls what exists', (t) => {
  const all = blocks(read('README.md'));
  assert.ok(all.length >= 10);
  for (const code of all) {
    parses(code, t);
    callsExist(code);
  }
  const text = all.join('\n');
  for (const call of [
    'products.list', 'products.all', 'products.get', 'sellers.get', 'orders.list', 'orders.all', 'downloads.createLink',
    'webhooks.create', 'webhooks.list', 'webhooks.all', 'webhooks.get', 'webhooks.update', 'webhooks.rotateSecret',
    'webhooks.test', 'webhooks.delete', 'events.list', 'events.all', 'events.get', 'verifyWebhook(',
  ]) {
    assert.ok(text.includes(`${call.endsWith('(') ? call : `market.${call}(`}`), `README shows ${call}`);
  }
  const md = read('README.md');
  assert.ok(md.includes('\n## Catching up on missed events\n'), 'README has the catch-up section');
  const catchUp = blocks(md.slice(md.indexOf('## Catching up on missed events'))).at(0);
  assert.ok(catchUp.includes('market.events.all({ createdGte'), 'the catch-up loop iterates events.all from a time');
});

// The calls each section shows, when not just market.<heading>(.
const SHOWS = {
  verify: ['verifyWebhook('],
  'webhooks.manage': ['webhooks.list', 'webhooks.get', 'webhooks.update', 'webhooks.rotateSecret', 'webhooks.test', 'webhooks.delete']
    .map((c) => `market.${c}(`).concat(['disabled: true', 'expireOldIn:']),
  'events.all': ['market.events.all(', 'createdGte', 'market.events.get(', '.deliveries'],
};

test('SNIPPETS.md: the nine sections, each one block that parses after the preamble', (t) => {
  const md = read('SNIPPETS.md');
  const headings = [...md.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(headings, [
    'products.list', 'products.get', 'sellers.get', 'orders.list', 'downloads.createLink', 'webhooks.create', 'verify',
    'webhooks.manage', 'events.all',
  ]);
  const [preamble] = blocks(md.slice(0, md.indexOf('\n## ')));
  assert.ok(preamble.includes('new Market('));
  for (const section of md.split(/^## /m).slice(1)) {
    const [name] = section.split('\n');
    const codes = blocks(section);
    assert.equal(codes.length, 1, `one block under ${name}`);
    parses(`${preamble}\n${codes[0]}`, t);
    callsExist(codes[0]);
    for (const shown of SHOWS[name] ?? [`market.${name}(`]) assert.ok(codes[0].includes(shown), `${name} shows ${shown}`);
    assert.ok(codes[0].split('\n').length <= 21, `${name} is short enough for docs/api.md`);
  }
});
