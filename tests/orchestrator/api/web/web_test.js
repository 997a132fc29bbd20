// The dashboard in a real browser (issue 20, "Tests in a real browser"):
// headless Debian chromium driven by puppeteer-core, against a real daemon
// (`trench serve`) on the store and repository a real `trench demo` left.
//
//   node web_test.js TRENCH SOURCE_DIR OUT_DIR NODE_MODULES
//
// TRENCH: the trench binary; SOURCE_DIR: the checkout (config/demo.json);
// OUT_DIR: where the demo's log, the daemon's config and log, and the
// screenshots (OUT_DIR/screenshots/*.png) go (the demo itself runs in a
// new directory under $TMPDIR); NODE_MODULES: where
// `npm ci` put puppeteer-core (tests/orchestrator/api/web/package.json).
// TRENCH_WEB_DEMO_DIR=D reuses a finished demo in D instead of running one
// (for quick reruns while developing; its bug must still be proposed);
// TRENCH_WEB_REUSE=BUILDER_DIR passes `--reuse` to the demo (an earlier
// demo's var/builder: an incremental target build). Exit status 0 when every check
// passed; each check prints "ok" or "FAIL" with the reason.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {spawn, spawnSync} = require('child_process');

const [trench, sourceDir, outDir, nodeModules] = process.argv.slice(2);
if (!trench || !sourceDir || !outDir || !nodeModules) {
  console.error('usage: node web_test.js TRENCH SOURCE_DIR OUT_DIR ' +
                'NODE_MODULES');
  process.exit(2);
}
const puppeteer = require(path.join(path.resolve(nodeModules),
                                    'puppeteer-core'));

const TOKEN = 'web-test-' + Math.random().toString(36).slice(2);
const shots = path.join(outDir, 'screenshots');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const results = [];

function log(...a) {
  console.log('[' + new Date().toISOString().slice(11, 19) + ']', ...a);
}

async function check(name, fn) {
  const start = Date.now();
  try {
    await fn();
    results.push([name, true]);
    log('ok  ', name, '(' + ((Date.now() - start) / 1000).toFixed(1) + ' s)');
  } catch (e) {
    results.push([name, false]);
    log('FAIL', name + ':', e && e.stack || e);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// Polls fn until it returns a truthy value (transient errors are
// retried); throws with `what` after `seconds`.
async function until(what, seconds, fn, everyMs = 500) {
  const end = Date.now() + seconds * 1000;
  let last = null;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      throw new Error('timed out after ' + seconds + ' s waiting for ' + what +
                      (last ? ' (last error: ' + last.message + ')' : ''));
    }
    await sleep(everyMs);
  }
}

// ---- The demo and the daemon ----
let ownDemo = null;  // The demo directory this run made, if any.
function runDemo() {
  const reuse = process.env.TRENCH_WEB_DEMO_DIR;
  if (reuse && fs.existsSync(path.join(reuse, 'var', 'store.db'))) {
    log('reusing the demo in', reuse);
    return reuse;
  }
  // Outside the build tree: the sandbox mounts the tools' directory (the
  // build tree) read-only and refuses a var/ inside it. Removed when every
  // check passed; kept (and named) otherwise.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trench-web-demo-'));
  ownDemo = dir;
  log('running trench demo --bug 07 --dir', dir, '(a few minutes)');
  const args = ['demo', '--bug', '07', '--history', 'short', '--dir', dir,
                '--source', sourceDir];
  if (process.env.TRENCH_WEB_REUSE) {
    args.push('--reuse', process.env.TRENCH_WEB_REUSE);
  }
  const r = spawnSync(trench, args,
                      {encoding: 'utf8', timeout: 20 * 60 * 1000,
                       maxBuffer: 64 << 20});
  fs.writeFileSync(path.join(outDir, 'demo.log'),
                   (r.stdout || '') + (r.stderr || ''));
  if (r.status !== 0) {
    throw new Error('trench demo failed (status ' + r.status + '); see ' +
                    path.join(outDir, 'demo.log'));
  }
  return dir;
}

async function startDaemon(demoDir) {
  const varJson = JSON.parse(fs.readFileSync(path.join(demoDir, 'var.json'),
                                             'utf8'));
  const config = JSON.parse(fs.readFileSync(path.join(sourceDir, 'config',
                                                      'demo.json'), 'utf8'));
  Object.assign(config, {
    var_dir: varJson.var_dir, repo: varJson.repo, tools_dir: varJson.tools_dir,
    regression: varJson.regression, max_draft_rounds: 5,
  });
  config.fuzz = Object.assign({}, config.fuzz, {corpus: '', continuous: false});
  config.http = {address: '127.0.0.1', port: 0, token_env: 'TRENCH_WEB_TOKEN'};
  config.log = {format: 'human', level: 'info'};
  const configPath = path.join(outDir, 'serve.json');
  fs.writeFileSync(configPath, JSON.stringify(config, null, 2));
  const info = path.join(varJson.var_dir, 'daemon.json');
  fs.rmSync(info, {force: true});
  const logFile = fs.openSync(path.join(outDir, 'serve.log'), 'w');
  const child = spawn(trench, ['serve', '--config', configPath], {
    env: Object.assign({}, process.env, {TRENCH_WEB_TOKEN: TOKEN}),
    stdio: ['ignore', logFile, logFile],
  });
  let exited = null;
  child.on('exit', (code, signal) => { exited = code ?? signal; });
  const port = await until('the daemon to write ' + info, 120, () => {
    if (exited !== null) {
      throw new Error('trench serve exited (' + exited + '); see serve.log');
    }
    const d = JSON.parse(fs.readFileSync(info, 'utf8'));
    return d.pid === child.pid ? d.port : null;
  });
  return {child, base: 'http://127.0.0.1:' + port};
}

// ---- API calls from the test itself (Node's fetch) ----
async function api(base, method, p, body, token = TOKEN) {
  const headers = {};
  if (token) headers['Authorization'] = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + p, {method, headers,
      body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* not JSON */ }
  return {status: res.status, json, text, headers: res.headers};
}

async function getBug(base, id) {
  const r = await api(base, 'GET', '/api/v1/bugs/' + id);
  assert(r.status === 200, 'GET bug ' + id + ': ' + r.status + ' ' + r.text);
  return r.json.bug;
}

// ---- Browser helpers ----
async function newPage(browser, base) {
  const page = await browser.newPage();
  await page.setViewport({width: 1280, height: 900});
  page.dialogs = [];
  page.on('dialog', async (d) => {
    page.dialogs.push(d.message());
    await d.dismiss();
  });
  page.consoleErrors = [];
  // Script errors (a failed request is the page's to show, not one).
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) {
      page.consoleErrors.push(m.text());
    }
  });
  page.on('pageerror', (e) => page.consoleErrors.push(String(e)));
  // A script from data would call alert() or set window.__xss: hook both
  // before any of the page's scripts run.
  await page.evaluateOnNewDocument(() => {
    window.__alerts = 0;
    window.alert = () => { window.__alerts++; };
  });
  page.base = base;
  return page;
}

async function shot(page, name) {
  const file = path.join(shots, name + '.png');
  await page.screenshot({path: file, fullPage: true});
  log('screenshot', file);
}

// Fills the page's token form (it must be showing) and submits it.
async function giveToken(page, token) {
  await page.waitForSelector('#token-form:not([hidden])', {timeout: 10000});
  await page.$eval('#token-input', (e, t) => { e.value = t; }, token);
  await page.click('#token-submit');
}

async function xssClean(page) {
  const r = await page.evaluate(() => ({
    alerts: window.__alerts,
    xss: window.__xss,
    imgs: [...document.querySelectorAll('img')].filter((i) =>
        i.id !== 'graph').length,
    scripts: [...document.scripts].filter((s) =>
        !/^\/static\/[a-z]+\.js$/.test(new URL(s.src || 'x:',
                                               location.href).pathname))
        .length,
    onerror: document.querySelectorAll('[onerror]').length,
  }));
  assert(r.alerts === 0 && r.xss === undefined, 'a script from data ran: ' +
         JSON.stringify(r));
  assert(r.imgs === 0 && r.scripts === 0 && r.onerror === 0,
         'markup from data became elements: ' + JSON.stringify(r));
  assert(page.dialogs.length === 0, 'dialogs: ' + page.dialogs.join(', '));
}

async function main() {
  fs.mkdirSync(shots, {recursive: true});
  const demoDir = runDemo();
  const {child, base} = await startDaemon(demoDir);
  log('daemon at', base);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'trench-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    userDataDir: profile,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
           '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync',
           '--disable-dev-shm-usage'],
  });
  try {
    await runChecks(browser, base);
  } finally {
    await browser.close().catch(() => {});
    child.kill('SIGTERM');
    await until('the daemon to stop', 60, () => child.exitCode !== null ||
                                                child.signalCode !== null)
        .catch(() => child.kill('SIGKILL'));
    fs.rmSync(profile, {recursive: true, force: true});
  }
}

async function runChecks(browser, base) {
  // The demo's bug: the one that got furthest (a proposed patch).
  const list = await api(base, 'GET', '/api/v1/bugs?limit=1000');
  assert(list.status === 200, 'GET /api/v1/bugs: ' + list.text);
  const demoBug = list.json.bugs.find((b) => b.state === 'proposed') ||
                  list.json.bugs[0];
  assert(demoBug, 'the demo left no bug');
  log('demo bug', demoBug.id, demoBug.state);

  await check('headers: CSP, nosniff, types, no traversal', async () => {
    const page = await api(base, 'GET', '/', undefined, null);
    assert(page.status === 200, '/ -> ' + page.status);
    const csp = page.headers.get('content-security-policy') || '';
    assert(/default-src 'self'/.test(csp) && !/unsafe-inline/.test(csp),
           'CSP: ' + csp);
    assert(page.headers.get('x-content-type-options') === 'nosniff', 'nosniff');
    const js = await api(base, 'GET', '/static/common.js', undefined, null);
    assert(/javascript/.test(js.headers.get('content-type')), 'js type');
    const bad = await api(base, 'GET', '/static/%2e%2e/store.db', undefined,
                          null);
    assert(bad.status === 404, 'traversal -> ' + bad.status);
  });

  await check('overview lists commits', async () => {
    const page = await newPage(browser, base);
    await page.goto(base + '/', {waitUntil: 'domcontentloaded'});
    await page.waitForSelector('#commits tr.commit', {timeout: 30000});
    const n = await page.$$eval('#commits tr.commit', (r) => r.length);
    assert(n >= 1, 'no commit rows');
    const repo = await page.$eval('#repo', (e) => e.textContent);
    assert(repo.includes('main'), 'repo section: ' + repo);
    await page.waitForSelector('#plots canvas');
    await shot(page, 'overview');
    assert(page.consoleErrors.length === 0,
           'console errors: ' + page.consoleErrors.join(' | '));
    await page.close();
  });

  await check('bug page shows the highlighted instruction, the graph and ' +
              'the error map',
              async () => {
    const page = await newPage(browser, base);
    await page.goto(base + '/bugs/' + demoBug.id,
                    {waitUntil: 'domcontentloaded'});
    await page.waitForSelector('#hlo .hl-instruction', {timeout: 30000});
    const hl = await page.$eval('#hlo .hl-instruction', (e) => e.textContent);
    assert(hl.includes('='), 'highlighted line: ' + hl);
    await page.waitForFunction(() => {
      const g = document.getElementById('graph');
      return g && g.complete && g.naturalWidth > 0;
    }, {timeout: 30000});
    await page.waitForSelector('#localization li.level');
    await page.waitForSelector('#patches table.sbs');
    // The reproduction's error map, drawn by hlo-diff in the sandbox.
    await page.waitForSelector('#heatmaps canvas.heatmap', {timeout: 30000});
    await shot(page, 'bug');
    await page.close();
  });

  let xssId = 0;
  const XSS = '<script>window.__xss=1</script>"><img src=x ' +
              'onerror="window.__xss=2;alert(1)">\x1b[31mred\x1b[0m';
  await check('a report with markup renders as text', async () => {
    const r = await api(base, 'POST', '/api/v1/reports',
                        {title: 'XSS ' + XSS, text: 'body ' + XSS});
    assert(r.status === 201, 'report: ' + r.status + ' ' + r.text);
    xssId = r.json.id;
    const page = await newPage(browser, base);
    await page.goto(base + '/bugs', {waitUntil: 'domcontentloaded'});
    await page.waitForSelector('#bugs tr[data-bug="' + xssId + '"]',
                               {timeout: 30000});
    const title = await page.$eval('#bugs tr[data-bug="' + xssId +
                                   '"] td.title', (e) => e.textContent);
    assert(title.includes('<script>') && title.includes('<img src=x'),
           'title not shown as text: ' + title);
    await xssClean(page);
    await shot(page, 'bugs');
    await page.goto(base + '/bugs/' + xssId, {waitUntil: 'domcontentloaded'});
    await page.waitForSelector('#report pre.report-text', {timeout: 30000});
    const text = await page.$eval('#report pre.report-text',
                                  (e) => e.textContent);
    assert(text.includes('<script>window.__xss=1</script>') &&
           text.includes('onerror=') && text.includes('\\x1b[31m'),
           'report text: ' + JSON.stringify(text));
    const h1 = await page.$eval('#bug-title', (e) => e.textContent);
    assert(h1.includes('<script>'), 'title: ' + h1);
    await xssClean(page);
    await shot(page, 'bug-xss');
    await page.close();
  });

  await check('an SSE update appears without reload', async () => {
    const page = await newPage(browser, base);
    await page.goto(base + '/bugs', {waitUntil: 'domcontentloaded'});
    await page.waitForSelector('#bugs tr.bug', {timeout: 30000});
    await page.waitForFunction(() => /live/.test(
        document.getElementById('status').textContent), {timeout: 30000});
    await page.evaluate(() => { window.__sameDocument = true; });
    const r = await api(base, 'POST', '/api/v1/reports',
                        {title: 'live update', text: 'filed by web_test.js'});
    assert(r.status === 201, 'report: ' + r.text);
    await page.waitForSelector('#bugs tr[data-bug="' + r.json.id + '"]',
                               {timeout: 60000});
    const same = await page.evaluate(() => window.__sameDocument === true);
    assert(same, 'the page reloaded');
    const last = await page.$eval('#status', (e) => e.dataset.lastEvent);
    assert(last && Number(last) > 0, 'no event id in #status: ' + last);
    // Through the event stream, not the long-poll fallback.
    const status = await page.$eval('#status', (e) => e.textContent);
    assert(!/polling/.test(status), 'no event stream: ' + status);
    await shot(page, 'bugs-live');
    await page.close();
  });

  const hint = 'web-test hint ' + Math.random().toString(36).slice(2, 8);
  const page = await newPage(browser, base);
  await check('approve without the token is refused', async () => {
    await page.goto(base + '/bugs/' + demoBug.id,
                    {waitUntil: 'domcontentloaded'});
    await page.waitForSelector('#verb-approve', {timeout: 30000});
    // No token in the request at all: 401 from the API.
    const status = await page.evaluate(async (id) => (await fetch(
        '/api/v1/bugs/' + id + '/triage', {method: 'POST',
        headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({verb: 'approve'})})).status, demoBug.id);
    assert(status === 401, 'without a token: ' + status);
    // A wrong token through the page's form: refused and shown.
    await page.click('#verb-approve');
    await giveToken(page, 'not-the-token');
    await page.waitForFunction(() => /40[13]/.test(
        document.getElementById('verb-error').textContent), {timeout: 15000});
    const bug = await getBug(base, demoBug.id);
    assert(bug.state === 'proposed', 'state changed to ' + bug.state);
    await shot(page, 'bug-refused');
  });

  await check('re-draft with a hint reaches the drafter', async () => {
    await page.$eval('#verb-hint', (e, h) => { e.value = h; }, hint);
    await page.click('#verb-redraft');
    await giveToken(page, TOKEN);  // The wrong one was forgotten.
    await page.waitForFunction(() => {
      const s = document.getElementById('bug-state');
      return s && s.textContent !== 'proposed';
    }, {timeout: 30000});
    // The new drafter session's task carries the hint; the page refreshes
    // on the bug's events (and is reloaded now and then as a fallback).
    let n = 0;
    await until('a patch_drafter session showing the hint', 420, async () => {
      const found = await page.evaluate((h) => [...document.querySelectorAll(
          '#sessions article[data-role="patch_drafter"]')].some((a) =>
          a.textContent.includes(h)), hint);
      if (!found && ++n % 20 === 0) {
        await page.reload({waitUntil: 'domcontentloaded'});
      }
      return found;
    }, 1000);
    await shot(page, 'bug-redraft');
  });

  await check('approve with the token changes the state', async () => {
    await until('the bug to be proposed again', 600, async () =>
        (await getBug(base, demoBug.id)).state === 'proposed', 2000);
    await page.reload({waitUntil: 'domcontentloaded'});
    await page.waitForSelector('#verb-approve', {timeout: 30000});
    await page.click('#verb-approve');
    await page.waitForFunction(() => document.getElementById('bug-state')
        .textContent === 'approved', {timeout: 30000});
    const bug = await getBug(base, demoBug.id);
    assert(bug.state === 'approved', 'state ' + bug.state);
    await shot(page, 'bug-approved');
  });
  await page.close();

  if (xssId) {
    // The token form is the only way a token enters; none lasts beyond
    // the session (sessionStorage only, no cookie).
    await check('no cookie holds a token', async () => {
      const p = await newPage(browser, base);
      await p.goto(base + '/bugs/' + xssId, {waitUntil: 'domcontentloaded'});
      const cookies = await p.cookies();
      assert(cookies.length === 0, 'cookies: ' + JSON.stringify(cookies));
      await p.close();
    });
  }
}

main().then(() => {
  const failed = results.filter(([, ok]) => !ok);
  log(results.length - failed.length + ' of ' + results.length +
      ' checks passed; screenshots in ' + shots);
  const ok = failed.length === 0 && results.length > 0;
  if (ownDemo && ok) fs.rmSync(ownDemo, {recursive: true, force: true});
  if (ownDemo && !ok) log('the demo is kept in', ownDemo);
  process.exit(ok ? 0 : 1);
}, (e) => {
  log('FAIL set-up:', e && e.stack || e);
  if (ownDemo) log('the demo is kept in', ownDemo);
  process.exit(1);
});
