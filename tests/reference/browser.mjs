// tests/reference/browser.mjs: opens the HTML API reference in a real headless browser
// (Debian's chromium) and checks what a reader would get. tests/reference/run starts a
// stack and runs it against the stack's nginx; it can also be pointed at any URL:
//
//   node tests/reference/browser.mjs URL [OPENAPI.json]      (default: docs/openapi.json)
//
// Environment: CHROMIUM (default: chromium), REFERENCE_TIMEOUT (seconds, default 60),
// REFERENCE_DUMP=FILE (writes what was read from the page as JSON), CDP_DEBUG=1 (prints
// the protocol messages on stderr).
//
// Checks, each printed as ok/FAIL:
//   * the page answers 200 text/html with a Content-Security-Policy header;
//   * nothing goes wrong while it loads and runs: no console.error or failed
//     console.assert, no uncaught exception, no error the browser itself logs (a
//     resource the Content-Security-Policy refused, a failed load...), no request that
//     failed or answered 4xx/5xx, and no request to anywhere but the page's own origin
//     (data: and blob: URLs aside: Redoc's search worker is a blob:);
//   * the rendered page (document.body.innerText once Redoc has hydrated it: what is
//     shown, not the JSON the page carries in its scripts) holds every route of the
//     OpenAPI document as "METHOD path" and every event name of its `webhooks`, both
//     read from the document here, not written down in the test;
//   * every operation that belongs to an extension (`x-market-extension` in the document,
//     e.g. webhook-management) shows the badge "Extension: NAME" in its heading (the
//     document's `x-badges`), and no other operation shows such a badge.
// Console warnings are printed but do not fail the test.
//
// How: chromium --headless with --remote-debugging-pipe, the Chrome DevTools Protocol
// over the two pipes it reads and writes on fds 3 and 4 (JSON messages ended by a NUL
// byte), so no port, no WebSocket and no package. The browser runs with a temporary
// profile that is removed afterwards, and --no-sandbox when run as root (CI): Chromium's
// sandbox refuses root. The last line is "N passed, M failed"; exit status 0 only when
// none failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const url = process.argv[2];
const specFile = process.argv[3] ?? join(REPO, 'docs/openapi.json');
if (!url) {
    process.stderr.write('usage: node tests/reference/browser.mjs URL [OPENAPI.json]\n');
    process.exit(2);
}
const timeoutMs = Number(process.env.REFERENCE_TIMEOUT ?? 60) * 1000;

let passed = 0;
let failed = 0;
function ok(name) {
    passed++;
    console.log(`ok    ${name}`);
}
function bad(name, detail) {
    failed++;
    console.log(`FAIL  ${name}`);
    if (detail) console.log(String(detail).replace(/^/gm, '      | '));
}
function check(name, cond, detail) {
    if (cond) ok(name);
    else bad(name, detail);
}

// What the reference must show, from the OpenAPI document.
const spec = JSON.parse(readFileSync(specFile, 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const routes = [];
// Each operation with the badge its heading must show: "Extension: NAME" for one of an
// extension, none for the others.
const operations = [];
for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const method of METHODS) {
        if (!item[method]) continue;
        const route = `${method.toUpperCase()} ${path}`;
        routes.push(route);
        const extension = item[method]['x-market-extension'];
        operations.push({ route, id: item[method].operationId, badge: extension ? `Extension: ${extension}` : null });
    }
}
const events = Object.keys(spec.webhooks ?? {});

// --- the browser and a minimal CDP client ------------------------------------------------
const profile = mkdtempSync(join(tmpdir(), 'market-reference-chromium.'));
const args = [
    '--headless=new', '--remote-debugging-pipe', `--user-data-dir=${profile}`,
    '--no-first-run', '--no-default-browser-check', '--disable-gpu', '--disable-dev-shm-usage',
    '--disable-extensions', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--metrics-recording-only', '--mute-audio', '--window-size=1280,900',
    'about:blank',
];
if (process.getuid?.() === 0) args.unshift('--no-sandbox');
// A process group of its own: the browser's helpers (zygote, renderers, crashpad) are
// killed with it, by that group's id, and none writes into the profile once it is removed.
const browser = spawn(process.env.CHROMIUM ?? 'chromium', args, {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    detached: true,
});
let browserLog = '';
browser.stderr.on('data', (d) => {
    browserLog = (browserLog + d).slice(-4000);
});
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];

let nextId = 1;
const pending = new Map();
const listeners = [];
let buffer = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    let end;
    while ((end = buffer.indexOf(0)) >= 0) {
        const message = JSON.parse(buffer.subarray(0, end).toString('utf8'));
        if (process.env.CDP_DEBUG) process.stderr.write(`<- ${JSON.stringify(message).slice(0, 200)}\n`);
        buffer = buffer.subarray(end + 1);
        if (message.id && pending.has(message.id)) {
            const { resolve: done, reject } = pending.get(message.id);
            pending.delete(message.id);
            if (message.error) reject(new Error(`${message.error.message} (${message.error.code})`));
            else done(message.result);
        } else if (message.method) {
            for (const listener of listeners) listener(message);
        }
    }
});
function send(method, params = {}, sessionId) {
    const id = nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    toBrowser.write(`${JSON.stringify(message)}\0`);
    return new Promise((done, reject) => pending.set(id, { resolve: done, reject }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let finished = false;
const watchdog = setTimeout(() => {
    bad(`the page did not load and settle within ${timeoutMs / 1000} s`, browserLog);
    finish();
}, timeoutMs);
// Stops the browser and its helpers (KILL: the profile is thrown away), waits for it to be gone so that it
// writes no more into the profile, removes the profile and exits with the verdict.
async function finish() {
    if (finished) return;
    finished = true;
    clearTimeout(watchdog);
    if (browser.pid) {
        const gone = browser.exitCode === null && browser.signalCode === null
            ? new Promise((r) => browser.once('exit', r)) : Promise.resolve();
        try {
            process.kill(-browser.pid, 'SIGKILL');
        } catch {
            // the group is gone already
        }
        await Promise.race([gone, sleep(5000)]);
        await sleep(200); // its helpers, killed with it, are reaped by init
    }
    try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (err) {
        console.log(`note  could not remove ${profile}: ${err.message}`);
    }
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed === 0 ? 0 : 1);
}
browser.on('exit', (code, signal) => {
    if (finished) return;
    bad(`chromium exited (${code ?? signal}) before the test ended`, browserLog);
    finish();
});
browser.on('error', (err) => {
    if (finished) return;
    bad(`chromium did not start: ${err.message}`);
    finish();
});

// --- the test -----------------------------------------------------------------------------
const problems = []; // everything that fails "nothing goes wrong"
const warnings = [];
const origin = new URL(url).origin;
let mainResponse = null;
let loaded = false;
let lastNetwork = Date.now();
const inflight = new Set();

function text(args) {
    return args.map((a) => a.value ?? a.description ?? a.unserializableValue ?? a.type).join(' ');
}

async function main() {
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    listeners.push((m) => {
        if (m.sessionId !== sessionId) return;
        const p = m.params;
        switch (m.method) {
        case 'Runtime.consoleAPICalled':
            if (p.type === 'error' || p.type === 'assert') problems.push(`console.${p.type}: ${text(p.args)}`);
            else if (p.type === 'warning') warnings.push(`console.warn: ${text(p.args)}`);
            break;
        case 'Runtime.exceptionThrown':
            problems.push(`uncaught exception: ${p.exceptionDetails.exception?.description ?? p.exceptionDetails.text}`);
            break;
        case 'Log.entryAdded':
            // What the browser logs itself: CSP refusals, failed loads, deprecations.
            if (p.entry.level === 'error') problems.push(`browser log (${p.entry.source}): ${p.entry.text} ${p.entry.url ?? ''}`);
            else if (p.entry.level === 'warning') warnings.push(`browser log (${p.entry.source}): ${p.entry.text}`);
            break;
        case 'Network.requestWillBeSent': {
            lastNetwork = Date.now();
            const u = p.request.url;
            // A worker's blob: or a data: URL may never report its end.
            if (u.startsWith('http')) inflight.add(p.requestId);
            if (!u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin) {
                problems.push(`a request to another origin: ${u}`);
            }
            break;
        }
        case 'Network.responseReceived':
            lastNetwork = Date.now();
            if (p.type === 'Document' && p.response.url === url) mainResponse = p.response;
            if (p.response.status >= 400) problems.push(`${p.response.status} for ${p.response.url}`);
            break;
        case 'Network.loadingFinished':
            lastNetwork = Date.now();
            inflight.delete(p.requestId);
            break;
        case 'Network.loadingFailed':
            lastNetwork = Date.now();
            inflight.delete(p.requestId);
            problems.push(`a request failed: ${p.errorText}${p.blockedReason ? ` (${p.blockedReason})` : ''}`);
            break;
        case 'Page.loadEventFired':
            loaded = true;
            break;
        default:
        }
    });
    for (const domain of ['Runtime', 'Log', 'Network', 'Page']) await send(`${domain}.enable`, {}, sessionId);
    const nav = await send('Page.navigate', { url }, sessionId);
    if (nav.errorText) problems.push(`navigation failed: ${nav.errorText}`);

    // Loaded, then quiet: no request for 1.5 s and Redoc's hydration done (it fills the
    // side menu and the operations in #redoc).
    const evaluate = async (expression) => {
        const r = await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId);
        if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
        return r.result.value;
    };
    while (!(loaded && inflight.size === 0 && Date.now() - lastNetwork > 1500)) await sleep(100);
    await sleep(1000); // what runs after load (Redoc starts its search worker)

    check('the page answers 200', mainResponse?.status === 200, `status ${mainResponse?.status}`);
    const headers = Object.fromEntries(Object.entries(mainResponse?.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    check('Content-Type text/html; charset=utf-8', /^text\/html;\s*charset=utf-8$/i.test(headers['content-type'] ?? ''),
        headers['content-type']);
    check('a Content-Security-Policy header', /default-src 'none'/.test(headers['content-security-policy'] ?? ''),
        headers['content-security-policy']);
    check('no console error, exception, refused resource or failed request', problems.length === 0,
        problems.join('\n'));
    for (const w of [...new Set(warnings)]) console.log(`note  ${w}`);

    // What Redoc rendered, read from the DOM as a reader sees it (elements that are
    // visible), not from the JSON state the page carries in a script:
    //   * each operation's endpoint bar: <span class="http-verb get">get</span> then a
    //     <span> with the path (http-verb is Redoc's own class name, not a generated one);
    //   * each operation's heading, <h2>, where a webhook shows its summary (the
    //     document's summaries name the event: "sale.completed event");
    //   * the badges of each operation's heading (x-badges: <span type="primary"> in the
    //     <h2> of the section "operation/ID"), by operationId;
    //   * the whole visible text (innerText), for the dump and a sanity check.
    const shown = await evaluate(`(() => {
        const root = document.getElementById('redoc');
        if (!root) return null;
        const visible = (e) => e.checkVisibility({ visibilityProperty: true, opacityProperty: true });
        return {
            endpoints: [...root.querySelectorAll('.http-verb')].filter(visible)
                .map((e) => e.textContent.trim().toUpperCase() + ' ' + (e.nextElementSibling?.textContent.trim() ?? '')),
            headings: [...root.querySelectorAll('[data-section-id^="operation/"] h2')].filter(visible)
                .map((e) => e.textContent.replace(/\\s+/g, ' ').trim()),
            badges: Object.fromEntries([...root.querySelectorAll('[data-section-id^="operation/"]')]
                .map((s) => [s.dataset.sectionId.slice('operation/'.length),
                    [...s.querySelectorAll('h2 span[type="primary"]')].filter(visible).map((e) => e.textContent.trim())])),
            text: document.body.innerText,
        };
    })()`);
    if (process.env.REFERENCE_DUMP) writeFileSync(process.env.REFERENCE_DUMP, JSON.stringify(shown, null, 1));
    check('Redoc rendered the page', shown !== null && shown.text.length > 1000,
        shown === null ? 'no #redoc element' : `innerText of ${shown.text.length} characters`);
    const endpoints = new Set(shown?.endpoints ?? []);
    const missingRoutes = routes.filter((r) => !endpoints.has(r));
    check(`every route of the document is shown (${routes.length})`, routes.length > 0 && missingRoutes.length === 0,
        `missing: ${missingRoutes.join(', ')}\nshown: ${[...endpoints].join(', ')}`);
    const token = (name) => new RegExp(`(^|[^\\w.])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w.]|$)`);
    const missingEvents = events.filter((e) => !(shown?.headings ?? []).some((h) => token(e).test(h)));
    check(`every webhook event is shown (${events.length})`, events.length > 0 && missingEvents.length === 0,
        events.length ? `missing: ${missingEvents.join(', ')}` : 'the document has no webhooks');
    const badges = shown?.badges ?? {};
    const wrongBadges = operations.flatMap((o) => {
        const have = badges[o.id] ?? [];
        if (o.badge) return have.includes(o.badge) ? [] : [`missing badge "${o.badge}": ${o.route}`];
        return have.filter((b) => b.startsWith('Extension:')).map((b) => `a badge "${b}" it does not belong to: ${o.route}`);
    });
    const extensionOps = operations.filter((o) => o.badge).length;
    check(`every operation of an extension shows its badge (${extensionOps}), no other does`, wrongBadges.length === 0,
        `${wrongBadges.join('\n')}\nbadges shown: ${JSON.stringify(Object.fromEntries(Object.entries(badges).filter(([, b]) => b.length)))}`);
    finish();
}
main().catch((err) => {
    bad(`the test broke: ${err.stack ?? err}`, browserLog);
    finish();
});
