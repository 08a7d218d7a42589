// The chat page (/) and the dashboard (/dashboard) in a real headless browser: Debian's Chromium
// driven by puppeteer-core against real brisk servers. Screenshots of both pages at desktop and
// phone width go to $BRISK_SCREENSHOTS (build/screenshots by default); docs/images keeps copies.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { metrics, postJson, startServer, waitIdle } from './harness.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM))
  throw new Error(`missing ${CHROMIUM}: Debian's chromium package (scripts/install-deps.sh installs it)`);
const GENMODEL = process.env.BRISK_GENMODEL || path.resolve('build/brisk-genmodel');
const SHOTS = process.env.BRISK_SCREENSHOTS || path.resolve('build/screenshots');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

let browser;
let stories; // brisk serve on stories260K
let slow; // on a random-weight model slow enough to stop mid-reply
let tmp;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-browser-'));
  // One TinyLlama-wide layer in F32: ~150 tokens/s on one thread, 2,048 tokens of context.
  const slowModel = path.join(tmp, 'slow.gguf');
  execFileSync(GENMODEL, ['--preset', 'tinyllama-1.1b', '--type', 'f32', '--layers', '1', '--vocab', '1000',
    '-o', slowModel], { stdio: 'ignore' });
  [stories, slow, browser] = await Promise.all([
    startServer(['-t', '1']),
    startServer(['-t', '1'], slowModel),
    puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    }),
  ]);
  fs.mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await Promise.all([stories?.stop(), slow?.stop()]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

// A page in a browser context of its own (its own localStorage), whose console errors, uncaught
// exceptions and failed loads are collected.
async function open(url, viewport = DESKTOP) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  // Waits get three times puppeteer's default: ctest runs this beside the heavy suites on two
  // cores, where the browser alone once took longer than 30 s for a step.
  page.setDefaultTimeout(90000);
  page.on('close', () => context.close().catch(() => {}));
  const problems = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    // A stream the page itself aborted is not a problem.
    if (!r.url().endsWith('/v1/chat/completions')) problems.push(`failed: ${r.url()}`);
  });
  await page.setViewport(viewport);
  // The dashboard polls without pause, so the network never goes idle there.
  await page.goto(url, { waitUntil: url.includes('/dashboard') ? 'load' : 'networkidle0' });
  return { page, problems };
}

// The last message (a reply, once one has been asked for) and the one before it.
const lastAssistant = '#messages > article:last-child';
const lastUser = '#messages > article:nth-last-child(2)';

const repliesSoFar = (page) => page.evaluate(() => Number(document.body.dataset.replies || 0));

// Types a message and sends it with the button; returns the replies finished before it.
async function send(page, text) {
  const n = await repliesSoFar(page);
  await page.click('[data-testid=prompt]');
  await page.keyboard.type(text);
  await page.click('[data-testid=send]');
  return n;
}

// Waits until the reply after the first `n` has finished; returns its text.
async function replyDone(page, n, timeout = 60000) {
  await page.waitForFunction((k) => Number(document.body.dataset.replies || 0) > k, { timeout }, n);
  return page.$eval(`${lastAssistant} .body`, (e) => e.textContent);
}

async function setSetting(page, name, value) {
  await page.click('[data-testid=settings]');
  await page.waitForSelector('#settings-dialog[open]');
  await page.$eval(`#settings-form [name=${name}]`, (e, v) => (e.value = v), String(value));
  await page.click('[data-testid=settings-save]');
  await page.waitForSelector('#settings-dialog[open]', { hidden: true });
}

test('pages and their files over HTTP: types, a policy, revalidation, only GET', async () => {
  const res = await fetch(`${stories.url}/`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
  const csp = res.headers.get('content-security-policy');
  assert.match(csp, /script-src 'self';/);
  assert.match(csp, /connect-src 'self'/);
  assert.doesNotMatch(csp, /script-src[^;]*unsafe/);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  const html = await res.text();
  assert.doesNotMatch(html, /<script>|<script[^>]*>[^<]|\son\w+=/, 'no inline script or handler');
  for (const src of html.matchAll(/(?:src|href)="(\/static\/[^"]+)"/g)) {
    const r = await fetch(stories.url + src[1]);
    assert.equal(r.status, 200, src[1]);
  }
  const dash = await fetch(`${stories.url}/dashboard`);
  assert.equal(dash.status, 200);
  const etag = dash.headers.get('etag');
  const again = await fetch(`${stories.url}/dashboard`, { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), '');
  const js = await fetch(`${stories.url}/static/vendor/marked.min.js`);
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.equal((await fetch(`${stories.url}/static/../../etc/passwd`)).status, 404);
  assert.equal((await fetch(`${stories.url}/static/nothing.js`)).status, 404);
  const post = await fetch(`${stories.url}/`, { method: 'POST', body: '{}' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET');
  // What the dashboard shows at the top, and llama-server's timings beside usage.
  const props = await (await fetch(`${stories.url}/props`)).json();
  assert.equal(props.model.name, 'stories260K');
  assert.equal(props.model.max_model_len, 512);
  assert.equal(props.machine.threads, 1);
  assert.ok(props.engine.kv_blocks > 0 && props.machine.resident_bytes > 0);
  const r = await postJson(stories.url, '/v1/completions', { prompt: 'Once', max_tokens: 16, temperature: 0 });
  assert.equal(r.json.timings.predicted_n, 16);
  assert.equal(r.json.timings.prompt_n, r.json.usage.prompt_tokens);
  assert.ok(r.json.timings.predicted_per_second > 0);
});

test('the chat page answers, shows timing, keeps the conversation over a reload', async () => {

  const { page, problems } = await open(`${stories.url}/`);
  await page.waitForFunction(() => document.querySelector('[data-testid=model-name]').textContent === 'stories260K');
  await setSetting(page, 'max_tokens', 64);
  const text = await replyDone(page, await send(page, 'Once upon a time'));
  assert.ok(text.length > 20, text);
  const stats = await page.$eval(`${lastAssistant} .stats`, (e) => e.textContent);
  assert.match(stats, /^TTFT \d+ ms · [\d.]+ tokens\/s · \d+ tokens$/);

  await page.reload({ waitUntil: 'networkidle0' });
  const titles = await page.$$eval('.conv-title', (bs) => bs.map((b) => b.textContent));
  assert.deepEqual(titles, ['Once upon a time']);
  assert.equal(await page.$eval('[data-testid=message-user]', (e) => e.querySelector('.body').textContent), 'Once upon a time');
  assert.equal(await page.$eval(`${lastAssistant} .body`, (e) => e.textContent), text);

  // Regenerate replaces the reply; a second turn continues the conversation.
  const n = await repliesSoFar(page);
  await page.click(`${lastAssistant} .actions button`);
  await replyDone(page, n);
  assert.equal((await page.$$('[data-testid=message-assistant]')).length, 1);
  // The keyboard alone: Enter in the message box sends.
  const n2 = await repliesSoFar(page);
  await page.click('[data-testid=prompt]');
  await page.keyboard.type('The end.');
  await page.keyboard.press('Enter');
  await replyDone(page, n2);
  assert.equal((await page.$$('[data-testid=message-user]')).length, 2);

  // Rename, then a second conversation, then delete the first.
  await page.click('.conv button[aria-label^="Rename"]');
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.type('A story');
  await page.keyboard.press('Enter');
  await page.click('[data-testid=new-chat]');
  await replyDone(page, await send(page, 'Once there was a cat'));
  assert.deepEqual(await page.$$eval('.conv-title', (bs) => bs.map((b) => b.textContent)), ['Once there was a cat', 'A story']);
  page.once('dialog', (d) => d.accept());
  await page.click('.conv button[aria-label="Delete A story"]');
  await page.reload({ waitUntil: 'networkidle0' });
  assert.deepEqual(await page.$$eval('.conv-title', (bs) => bs.map((b) => b.textContent)), ['Once there was a cat']);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a reply streams in token by token, and stop ends it and frees its KV blocks', async () => {
  const { page, problems } = await open(`${slow.url}/`);
  await setSetting(page, 'max_tokens', 48);
  // Greedy: the unlimited reply below then runs 905 tokens before this model's end-of-text, every
  // time, so a busy machine's slow click still lands mid-reply (sampled, it could end at any token).
  await setSetting(page, 'temperature', 0);
  // Every length the reply's text had while it streamed.
  await page.evaluate(() => {
    window.lengths = [];
    new MutationObserver(() => {
      const b = document.querySelector('#messages > article:last-child .body');
      if (b) window.lengths.push(b.textContent.length);
    }).observe(document.getElementById('messages'), { childList: true, subtree: true, characterData: true });
  });
  await replyDone(page, await send(page, 'Tell me a long story'));
  const lengths = await page.evaluate(() => window.lengths);
  const distinct = [...new Set(lengths)];
  assert.ok(distinct.length >= 5, `the reply arrived in ${distinct.length} pieces: ${lengths}`);
  assert.deepEqual([...lengths].sort((a, b) => a - b), lengths, 'the text only grew');
  await waitIdle(slow.url);

  // No token limit: the reply would run until the context (2,048 tokens) is full.
  await setSetting(page, 'max_tokens', '');
  await send(page, 'Tell me a longer story');
  await page.waitForFunction((sel) => {
    const b = document.querySelector(`${sel} .body`);
    return b && b.textContent.length > 20;
  }, {}, lastAssistant);
  await page.click('[data-testid=stop]');
  await replyDone(page, 1);
  assert.match(await page.$eval(`${lastAssistant} .stats`, (e) => e.textContent), /stopped$/);
  const m = await waitIdle(slow.url, 5000);
  assert.equal(m.get('brisk:kv_blocks_in_use'), 0);
  assert.equal(m.get('vllm:request_success_total', 'finished_reason="abort"'), 1);
  assert.ok(m.get('vllm:generation_tokens_total') < 48 + 1024, 'stopped long before the context was full');
  // The prompt box has the focus back: the next message needs no mouse.
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'prompt');
  assert.deepEqual(problems, []);
  await page.close();
});

const HOSTILE = [
  '<img src=x onerror="window.pwned=1">',
  '[a link](javascript:window.pwned=2)',
  '<a href="javascript:window.pwned=3" id="bad">click</a>',
  '<script>window.pwned=4</script>',
  '<iframe src="javascript:window.pwned=5"></iframe>',
  '<svg onload="window.pwned=6"><circle r="5"/></svg>',
  '<div style="position:fixed;inset:0;background:red" onclick="window.pwned=7">cover</div>',
  '<form action="https://example.com"><button>submit</button></form>',
  '$\\href{javascript:window.pwned=8}{math link}$',
].join('\n\n');

// Everything a sanitizer must have removed from the rendered messages.
function inertReport() {
  const bodies = [...document.querySelectorAll('#messages .body')];
  const bad = [];
  for (const b of bodies)
    for (const e of b.querySelectorAll('*')) {
      if (['SCRIPT', 'IFRAME', 'IMG', 'FORM', 'BUTTON', 'STYLE'].includes(e.tagName.toUpperCase()) && !e.closest('.code-bar'))
        bad.push(e.tagName);
      for (const a of e.attributes) {
        if (/^on/i.test(a.name)) bad.push(`${e.tagName}[${a.name}]`);
        if (a.name === 'style' && !e.closest('.katex')) bad.push(`${e.tagName}[style]`);
        if (/^\s*javascript:/i.test(a.value)) bad.push(`${e.tagName}[${a.name}=${a.value}]`);
      }
    }
  return { pwned: window.pwned ?? null, bad };
}

test('hostile text from a user or a model renders inert', async () => {
  const { page, problems } = await open(`${stories.url}/`);
  await page.click('[data-testid=new-chat]');
  await setSetting(page, 'max_tokens', 8);
  // (stories260K's context is 512 tokens: three of the attacks at a time.)
  const typed = HOSTILE.split('\n\n').slice(0, 3).join(' ');
  await replyDone(page, await send(page, typed));
  const user = await page.$eval(`${lastUser} .body`, (e) => ({ text: e.textContent, children: e.children.length }));
  assert.equal(user.text, typed, 'a user message is shown as the text it is');
  assert.equal(user.children, 0);

  // A model's reply is Markdown: imported here, as a conversation file, to control every byte.
  const file = path.join(tmp, 'hostile.json');
  fs.writeFileSync(file, JSON.stringify([{
    title: 'hostile',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: `**bold** and \`code\`\n\n\`\`\`python\nprint("hi")\n\`\`\`\n\nmath: $x^2 + 1$\n\n${HOSTILE}` },
    ],
  }]));
  const [chooser] = await Promise.all([page.waitForFileChooser(), page.click('#import')]);
  await chooser.accept([file]);
  await page.waitForFunction(() => document.querySelector('.conv-title').textContent === 'hostile');
  await page.waitForSelector(`${lastAssistant} strong`);
  // Markdown, code and math are rendered...
  assert.ok(await page.$(`${lastAssistant} pre code.hljs`), 'code is highlighted');
  assert.ok(await page.$(`${lastAssistant} .katex`), 'math is typeset');
  // ...and nothing of the attack survives, even when clicked.
  const pages = (await browser.pages()).length;
  for (const a of await page.$$(`${lastAssistant} .body a`)) await a.click();
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(await page.evaluate(inertReport), { pwned: null, bad: [] });
  assert.equal((await browser.pages()).length, pages, 'no page was opened by a link');
  // Chromium reports each event-handler attribute it parses (even in the sanitizer's inert
  // document) as a Content-Security-Policy violation: the policy's second line of defence.
  const csp = /^console: Executing inline event handler violates the following Content Security Policy/;
  assert.deepEqual(problems.filter((p) => !csp.test(p)), []);
  await page.close();
});

test('with --api-key the page asks for the key and keeps it in the tab only', async () => {
  const srv = await startServer(['-t', '1', '--api-key', 'sesame-42']);
  try {
    assert.equal((await fetch(`${srv.url}/`)).status, 200, 'the page itself is open');
    assert.equal((await fetch(`${srv.url}/props`)).status, 401);
    const { page, problems } = await open(`${srv.url}/`);
    await page.waitForSelector('#key-dialog[open]');
    await page.type('[data-testid=api-key]', 'wrong');
    await page.click('[data-testid=api-key-submit]');
    await page.waitForSelector('#key-dialog[open] [data-role=key-error]:not([hidden])');
    await page.$eval('[data-testid=api-key]', (e) => (e.value = ''));
    await page.type('[data-testid=api-key]', 'sesame-42');
    await page.click('[data-testid=api-key-submit]');
    await page.waitForFunction(() => document.querySelector('[data-testid=model-name]').textContent === 'stories260K');
    assert.ok((await replyDone(page, await send(page, 'Once upon a time'))).length > 0);
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('brisk.apiKey'),
      local: JSON.stringify({ ...localStorage }),
    }));
    assert.equal(stored.session, 'sesame-42');
    assert.ok(!stored.local.includes('sesame-42'), 'the key is not in localStorage');
    // The refused first try is the only error the browser reports.
    assert.ok(problems.every((p) => p.includes('401')), problems.join('\n'));
    await page.close();
  } finally {
    await srv.stop();
  }
});

test('the dashboard draws live charts from /metrics', async () => {
  const { page, problems } = await open(`${stories.url}/dashboard?interval=250`);
  await page.waitForFunction(() => document.getElementById('facts-model').textContent.includes('stories260K'));
  const body = { model: 'stories260K', prompt: 'Once upon a time', max_tokens: 48 };
  for (let i = 0; i < 6; ++i) {
    await Promise.all([postJson(stories.url, '/v1/completions', body), postJson(stories.url, '/v1/completions', body)]);
    await new Promise((r) => setTimeout(r, 150));
  }
  const charts = ['requests', 'cache', 'tokens', 'ttft', 'itl'];
  await page.waitForFunction((names) => names.every((n) => {
    const c = document.querySelector(`[data-testid=chart-${n}]`);
    return c && Number(c.dataset.points) >= 3 && !c.querySelector('.legend').textContent.startsWith('p50: –');
  }), { timeout: 60000 }, charts);
  const legends = await page.$$eval('.chart .legend', (ls) => ls.map((l) => l.textContent));
  assert.match(legends[3], /p50: [\d.]+ (µs|ms|s)/, legends[3]);
  // The canvas has been drawn on (not blank).
  const inked = await page.$eval('[data-testid=chart-tokens] canvas', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) n += d[i] > 0;
    return n;
  });
  assert.ok(inked > 1000, `${inked} pixels drawn`);
  assert.deepEqual(problems, []);
  await page.close();
});

// Four clients asking for stories of different lengths for `ms` milliseconds.
async function load(url, ms) {
  const end = Date.now() + ms;
  await Promise.all([0, 1, 2, 3].map(async (i) => {
    for (let k = 0; Date.now() < end; ++k) {
      await postJson(url, '/v1/completions', { prompt: 'Once upon a time', max_tokens: 40 + ((i * 7 + k * 13) % 200) });
      await new Promise((r) => setTimeout(r, 30 * i));
    }
  }));
}

test('screenshots at desktop and phone width; the phone layout hides the conversation list', async () => {
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const { page, problems } = await open(`${stories.url}/`, viewport);
    await setSetting(page, 'max_tokens', 120);
    await replyDone(page, await send(page, 'Once upon a time'));
    await page.screenshot({ path: path.join(SHOTS, `chat-${name}.png`) });
    if (name === 'desktop') {
      // What replies can hold (reasoning, Markdown, code, math, tool calls), from a fixture.
      const [chooser] = await Promise.all([page.waitForFileChooser(), page.click('#import')]);
      await chooser.accept([path.resolve('tests/server/fixtures/demo-conversation.json')]);
      await page.waitForSelector('#messages .tool-call');
      await page.click('details.reasoning summary');
      await page.setViewport({ ...DESKTOP, height: 1120 });
      await page.$eval('#messages', (e) => (e.scrollTop = e.scrollHeight));
      await page.screenshot({ path: path.join(SHOTS, 'chat-features-desktop.png') });
      await page.setViewport(DESKTOP);
    }
    if (name === 'phone') {
      const hidden = await page.$eval('#sidebar', (e) => e.getBoundingClientRect().right <= 0);
      assert.ok(hidden, 'the conversation list is off screen');
      await page.click('#toggle-sidebar');
      await page.waitForFunction(() => document.getElementById('sidebar').getBoundingClientRect().left >= 0);
    }
    const dash = await open(`${stories.url}/dashboard?interval=250`, viewport);
    await load(stories.url, 4000);
    await dash.page.waitForFunction(() => Number(document.querySelector('[data-testid=chart-tokens]').dataset.points) >= 8);
    await dash.page.screenshot({ path: path.join(SHOTS, `dashboard-${name}.png`), fullPage: true });
    assert.deepEqual([...problems, ...dash.problems], []);
    await Promise.all([page.close(), dash.page.close()]);
  }
});
