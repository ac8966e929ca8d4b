// tools/openapi-lint/reference.mjs: builds the HTML API reference from docs/openapi.json
// (what `make reference` runs, through tools/openapi-lint/reference, which installs the
// pinned Redocly CLI first).
//
//   node reference.mjs OUTPUT.html
//
// Why more than `redocly build-docs`: the page it writes loads Redoc's script from
// Redocly's CDN (and, without --disableGoogleFont, Google's fonts), and Redoc's side menu
// shows a logo fetched from another CDN. The reference must work where nothing but the
// server it comes from is reachable (CI, a provider's intranet, a file opened from
// /usr/share/doc), and must not tell a third party who reads it. So, on the page that
// build-docs renders (with reference.hbs, the theme of redocly.yaml):
//
//   1. the CDN <script src> is replaced with the same Redoc bundle inlined, read from
//      node_modules/redoc, whose version must be the one build-docs asked the CDN for
//      (both are pinned by package-lock.json);
//   2. the logo is taken out of that bundle (its one exact spot; the build fails if a new
//      Redoc moved it, rather than shipping a page that calls out);
//   3. a Content-Security-Policy <meta> goes at the top of <head>: scripts only by the
//      SHA-256 of the page's own inline scripts, nothing from anywhere else; nginx adds
//      its own header (nginx/market-site.conf.template), and a browser enforces both;
//   4. the page is checked: no external script, style, font, image or frame left in the
//      markup, and no CDN address left in the scripts.
//
// Exits non-zero, with the reason on stderr, when any step fails.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const SPEC = resolve(HERE, '../../docs/openapi.json');

function fail(message) {
    process.stderr.write(`reference: ${message}\n`);
    process.exit(1);
}

const output = process.argv[2];
if (!output || process.argv.length !== 3) fail('usage: node reference.mjs OUTPUT.html');

// --- build-docs ------------------------------------------------------------------------
const scratch = mkdtempSync(join(tmpdir(), 'market-reference.'));
const raw = join(scratch, 'raw.html');
const run = spawnSync(
    join(HERE, 'node_modules/.bin/redocly'),
    ['build-docs', SPEC, '--config', join(HERE, 'redocly.yaml'), '--template', join(HERE, 'reference.hbs'),
        '--disableGoogleFont', '--output', raw],
    {
        cwd: HERE,
        encoding: 'utf8',
        // No telemetry and no update check: the build reaches nothing.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
);
if (run.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    fail(`redocly build-docs failed (${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`);
}
let html = readFileSync(raw, 'utf8');
rmSync(scratch, { recursive: true, force: true });

// --- 1. the bundle, inlined ------------------------------------------------------------
const cdnTag = /<script src="https:\/\/cdn\.redocly\.com\/redoc\/v([^/"]+)\/bundles\/redoc\.standalone\.js"><\/script>/g;
const tags = [...html.matchAll(cdnTag)];
if (tags.length !== 1) fail(`expected one CDN <script> in build-docs' page, found ${tags.length}`);
const wanted = tags[0][1];
const redocDir = join(HERE, 'node_modules/redoc');
const have = JSON.parse(readFileSync(join(redocDir, 'package.json'), 'utf8')).version;
if (have !== wanted) fail(`build-docs asks for Redoc ${wanted}, node_modules has ${have}`);
let bundle = readFileSync(join(redocDir, 'bundles/redoc.standalone.js'), 'utf8');

// --- 2. no logo from cdn.redoc.ly --------------------------------------------------------
// The side menu's "API docs by Redocly" link keeps its text; only the <img> goes.
const logo = 'e?r.createElement("img",{alt:"redocly logo",onError:()=>t(!1),src:"https://cdn.redoc.ly/redoc/logo-mini.svg"}):null';
if (bundle.split(logo).length !== 2) fail(`Redoc ${have}: the logo's code is not where it was (update reference.mjs)`);
bundle = bundle.replace(logo, () => 'null');

// Inside an inline <script> the HTML parser only looks for "</script" and "<!--".
bundle = bundle.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
html = html.replace(cdnTag, () => `<script>${bundle}</script>`);

// --- 3. the page's own policy ----------------------------------------------------------
const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
const hashes = [];
for (const [, attrs, body] of scripts) {
    if (/\bsrc\s*=/i.test(attrs)) fail(`a <script${attrs}> is left`);
    hashes.push(`'sha256-${createHash('sha256').update(body, 'utf8').digest('base64')}'`);
}
// What Redoc needs: its inline scripts (hashes), styles it injects at run time
// (styled-components: <style> elements and style attributes, hence 'unsafe-inline'), the
// search index's Web Worker (a blob: URL), and small images and fonts as data: URLs. No
// frame-ancestors here: a <meta> policy cannot carry it (nginx's header does).
const policy = [
    "default-src 'none'",
    `script-src ${hashes.join(' ')}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    'font-src data:',
    'worker-src blob:',
    "base-uri 'none'",
    "form-action 'none'",
].join('; ');
const marker = '<!-- market:csp -->';
if (html.split(marker).length !== 2) fail(`reference.hbs must hold ${marker} once`);
html = html.replace(marker, () => `<meta http-equiv="Content-Security-Policy" content="${policy}">`);

// --- 4. nothing from elsewhere ---------------------------------------------------------
const markup = html.replace(/(<script\b[^>]*>)[\s\S]*?(<\/script>)/gi, '$1$2');
const external = [];
// Any tag but <a> with an attribute that loads an absolute or protocol-relative URL.
for (const m of markup.matchAll(/<(?!a[\s>])([a-z][a-z0-9-]*)\b[^>]*?\b(src|href|srcset|poster|data|action|background)\s*=\s*["']?\s*((?:[a-z][a-z0-9+.-]*:)?\/\/[^"'\s>]*)/gi)) {
    external.push(`<${m[1]} ${m[2]}=${m[3]}>`);
}
for (const m of markup.matchAll(/(?:url\(\s*["']?|@import\s+["']?)((?:[a-z][a-z0-9+.-]*:)?\/\/[^"')\s]*)/gi)) {
    external.push(`CSS ${m[1]}`);
}
for (const host of ['cdn.redocly.com', 'cdn.redoc.ly', 'fonts.googleapis.com', 'fonts.gstatic.com']) {
    if (html.includes(host)) external.push(`the address ${host}`);
}
if (external.length) fail(`the page would load from elsewhere:\n  ${[...new Set(external)].join('\n  ')}`);

mkdirSync(dirname(resolve(output)), { recursive: true });
writeFileSync(`${output}.new`, html);
renameSync(`${output}.new`, output);
process.stdout.write(`reference: ${output} (${Math.ceil(Buffer.byteLength(html) / 1024)} KiB, Redoc ${have}, ` +
    `${hashes.length} inline scripts)\n`);
