// No secret in any log (issue 21, item 7, nginx's part). A download link's token is its
// credential: nginx logs the files location as "GET /files/<token> HTTP/1.1"
// ($market_loggable_uri, nginx/market-http.conf.template) and writes no error line for
// it (every nginx error line carries the request line); the workers never log a path.
//
// The test mints links and drives the files location through its answers (200, 206, a
// Range past the end, 410, a file missing on disk, an unknown token, a method it does not
// take, and 429 with requests held in progress from the same address up to limit_conn),
// then reads every log of the stack (STACK_DIR/log/: nginx's access and error logs, the
// pool's, the drainer's, PostgreSQL's) for the tokens: none may appear. It checks the
// FastCGI socket too: 0660, of the group nginx's workers run as, so that no other local
// user can talk to the workers behind nginx's back.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { api, holdRequests, importDoc, newKey, psql, uniqueId, BASE_URL, DOWNLOAD_BASE_URL, FILES_ROOT, STACK_DIR } from './lib/stack.mjs';
import { sleep } from './fixtures/expect.mjs';

const x = uniqueId('');
const buyer = `acct_logs_${x}`;
const bytes = randomBytes(5000);
let key;
let present; // the download whose file is on disk
let missing; // the download whose file is not

before(async () => {
  mkdirSync(join(FILES_ROOT, `logs-${x}`), { recursive: true });
  writeFileSync(join(FILES_ROOT, `logs-${x}/here.zip`), bytes);
  importDoc({
    mode: 'test',
    accounts: [{ id: `acct_logss_${x}` }, { id: buyer }],
    sellers: [{ id: `logs-${x}`, account: `acct_logss_${x}`, name: 'Quiet Logs' }],
    products: [{
      id: `prod_logs_${x}`, seller: `logs-${x}`, title: 'Quiet Font', category: 'fonts', currency: 'USD',
      status: 'published', tiers: [{ id: `tier_logs_${x}`, name: 'Personal', price: 4 }],
      files: [
        { id: `file_logs1_${x}`, filename: 'here.zip', path: `logs-${x}/here.zip`, size_bytes: bytes.length },
        { id: `file_logs2_${x}`, filename: 'gone.zip', path: `logs-${x}/gone.zip`, size_bytes: 10 },
      ],
    }],
    orders: [{ id: `ord_logs_${x}`, account: buyer, status: 'paid', items: [{ product: `prod_logs_${x}`, tier: `tier_logs_${x}` }] }],
  });
  key = newKey({ account: buyer });
  const orders = await api('/v1/orders?limit=1', { key });
  assert.equal(orders.status, 200, orders.text);
  const byName = (name) => orders.json.data[0].downloads.find((d) => d.filename === name).id;
  present = byName('here.zip');
  missing = byName('gone.zip');
});

async function mint(download) {
  const r = await api(`/v1/downloads/${download}/link`, { key, method: 'POST' });
  assert.equal(r.status, 201, r.text);
  const token = r.json.url.slice(DOWNLOAD_BASE_URL.length + 1);
  assert.match(token, /^[A-Za-z0-9_-]{40,}$/);
  return { url: r.json.url, token };
}

/** Every file under STACK_DIR/log, name -> text. */
function logs() {
  const dir = `${STACK_DIR}/log`;
  return Object.fromEntries(readdirSync(dir).filter((f) => statSync(join(dir, f)).isFile())
    .map((f) => [f, readFileSync(join(dir, f), 'latin1')]));
}

test('download tokens appear in no log: nginx access and error logs, the workers, PostgreSQL', async (t) => {
  const accessBefore = readFileSync(`${STACK_DIR}/log/nginx-access.log`, 'latin1').length;
  const tokens = [];
  const rid = `logs-${x}`;
  // Every answer, in order: the limit_conn case may take several tries, each logged.
  const answers = [];
  const get = async (name, url, opts = {}) => {
    const r = await api(url, { ...opts, headers: { 'X-Request-Id': `${rid}-${name}`, ...(opts.headers ?? {}) } });
    answers.push([name, r.status]);
    return r;
  };

  const ok = await mint(present);
  tokens.push(ok.token);
  assert.ok((await get('ok', ok.url)).body.equals(bytes), 'the file downloads');
  assert.equal((await get('range', ok.url, { headers: { Range: 'bytes=0-9' } })).status, 206);
  assert.equal((await get('unsatisfiable', ok.url, { headers: { Range: 'bytes=999999-' } })).status, 416);
  assert.equal((await get('method', ok.url, { method: 'DELETE' })).status, 405);

  // A file missing on disk: nginx's own 404 after the worker's X-Accel-Redirect, which it
  // would log as an error with the request line.
  const gone = await mint(missing);
  tokens.push(gone.token);
  assert.equal((await get('missing', gone.url)).status, 404);

  const old = await mint(present);
  tokens.push(old.token);
  // The newest link of that download is this one (by id; never by its token, which
  // would put it into a statement).
  psql(`UPDATE download_tokens SET expires_at = now() - interval '1 second'
         WHERE id = (SELECT max(id) FROM download_tokens WHERE download_id = '${present}')`);
  assert.equal((await get('expired', old.url)).status, 410);

  const forged = `${ok.token.slice(0, -4)}AAAA`;
  tokens.push(forged);
  assert.equal((await get('forged', `${DOWNLOAD_BASE_URL}/${forged}`)).status, 404);

  // A download refused by limit_conn, which nginx logs at warn (the stack's error log
  // level) with the request line: requests from this address held in progress up to
  // the limit, bodies that never come.
  const limit = Number(/^\s*limit_conn market_conn_per_addr (\d+);/m.exec(readFileSync(`${STACK_DIR}/nginx/market-server.conf`, 'utf8'))[1]);
  const head = `POST /v1/webhooks HTTP/1.1\r\nHost: ${new URL(BASE_URL).host}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n`;
  const held = await holdRequests(limit, head);
  try {
    // nginx counts a held connection once it has read its headers: on a busy machine that
    // takes a moment for hundreds of them (well within client_body_timeout, 10 s).
    let limited;
    for (let i = 0; i < 60; i++) {
      await held.topUp();
      limited = await get('limited', ok.url);
      if (limited.status === 429) break;
      await sleep(100);
    }
    assert.equal(limited.status, 429, 'a download over limit_conn');
  } finally {
    held.release();
  }
  t.diagnostic(`answers: ${JSON.stringify(answers)}`);

  // The access log flushes its buffer every second.
  await sleep(1500);
  const all = logs();
  const found = [];
  for (const [file, text] of Object.entries(all)) {
    for (const token of tokens) {
      const n = text.split(token).length - 1;
      if (n > 0) found.push(`${file}: ${n} × ${token.slice(0, 6)}…`);
    }
  }
  console.log(`logs: ${tokens.length} tokens looked for in ${Object.keys(all).length} log files, found ${found.length} (bound 0)`);
  assert.deepEqual(found, [], 'no token in any log');

  // The requests were logged, without their token (a file nginx streams carries no
  // X-Request-Id: those lines are found by their status).
  const lines = all['nginx-access.log'].slice(accessBefore).split('\n').filter((l) => l.includes('/files/'));
  for (const l of lines) assert.match(l, /"[A-Z]+ \/files\/<token> HTTP\/1\.1" \d{3} /, l);
  const logged = lines.map((l) => Number(/" (\d{3}) /.exec(l)[1]));
  assert.deepEqual(logged.sort(), answers.map(([, s]) => s).sort(), 'one access log line per request, each with its status');
});

test('the FastCGI socket is 0660, of the group nginx\'s workers run as', () => {
  const sock = statSync(`${STACK_DIR}/run/api.sock`);
  assert.ok(sock.isSocket());
  assert.equal((sock.mode & 0o777).toString(8), '660');
  const master = readFileSync(`${STACK_DIR}/run/nginx.pid`, 'utf8').trim();
  const workers = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/);
  assert.ok(workers.length >= 1, 'nginx has workers');
  for (const w of workers) {
    const [, , egid] = /^Gid:\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${w}/status`, 'utf8'));
    assert.equal(Number(egid), sock.gid, `nginx worker ${w} runs as the socket's group`);
  }
});
