// Bad requests over raw HTTP: each gets OpenAI's error body with the right status, and none of
// them — nor a few thousand malformed, truncated or oversized ones — harms the server or the
// block accounting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, rawRequest, status, postJson, waitIdle, runGreedy } from './harness.mjs';

let srv;
before(async () => {
  srv = await startServer(['--max-body-size', '64KiB', '--read-timeout', '2']);
});
after(async () => {
  const { code } = await srv.stop();
  assert.equal(code, 0, srv.log());
});

function assertError(r, code, param) {
  assert.equal(r.status, code, r.text);
  assert.equal(typeof r.json.error.message, 'string');
  assert.equal(typeof r.json.error.type, 'string');
  assert.ok('param' in r.json.error && 'code' in r.json.error);
  if (param !== undefined) assert.equal(r.json.error.param, param, r.text);
}

test('malformed JSON, wrong types and out-of-range values get 400 naming the field', async () => {
  const u = srv.url;
  assertError(await postJson(u, '/v1/completions', '{"prompt": "x",'), 400);
  assertError(await postJson(u, '/v1/completions', '[1, 2]'), 400);
  assertError(await postJson(u, '/v1/completions', {}), 400, 'prompt');
  assertError(await postJson(u, '/v1/completions', { prompt: 5 }), 400, 'prompt');
  assertError(await postJson(u, '/v1/completions', { prompt: [] }), 400, 'prompt');
  assertError(await postJson(u, '/v1/completions', { prompt: [1, 99999] }), 400, 'prompt');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', temperature: 'hot' }), 400, 'temperature');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', temperature: 7 }), 400, 'temperature');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', max_tokens: 0 }), 400, 'max_tokens');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', max_tokens: 1.5 }), 400, 'max_tokens');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', n: 1000 }), 400, 'n');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', stop: [1] }), 400, 'stop');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', logprobs: 50 }), 400, 'logprobs');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', logit_bias: { abc: 1 } }), 400, 'logit_bias');
  assertError(await postJson(u, '/v1/completions', { prompt: 'x', stream_options: { include_usage: true } }), 400, 'stream_options');
  assertError(await postJson(u, '/v1/chat/completions', { messages: [] }), 400, 'messages');
  assertError(await postJson(u, '/v1/chat/completions', { messages: [{ role: 'wizard', content: 'x' }] }), 400, 'messages');
  assertError(await postJson(u, '/v1/chat/completions', { messages: [{ role: 'user', content: [{ type: 'image_url' }] }] }), 400, 'messages');
  assertError(await postJson(u, '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], top_logprobs: 2 }), 400, 'top_logprobs');
  assertError(await postJson(u, '/v1/completions', '['.repeat(50000)), 400);
});

test('a prompt longer than the context and an unknown model are refused', async () => {
  const long = 'Once upon a time '.repeat(200);
  assertError(await postJson(srv.url, '/v1/completions', { prompt: long }), 400, 'prompt');
  assertError(await postJson(srv.url, '/v1/completions', { prompt: 'x', max_tokens: 600 }), 400, 'max_tokens');
  const r = await postJson(srv.url, '/v1/completions', { prompt: 'x', model: 'gpt-9' });
  assertError(r, 404, 'model');
  assert.equal(r.json.error.code, 'model_not_found');
});

test('unknown routes, wrong methods, oversized bodies and broken HTTP', async () => {
  assert.equal((await fetch(srv.url + '/v2/nothing')).status, 404);
  const m = await fetch(srv.url + '/v1/chat/completions');
  assert.equal(m.status, 405);
  assert.equal(m.headers.get('allow'), 'POST');
  const big = await postJson(srv.url, '/v1/completions', { prompt: 'x'.repeat(100 * 1024) });
  assert.equal(big.status, 413);
  assert.equal(status(await rawRequest(srv.port, 'NONSENSE\r\n\r\n')), 400);
  assert.equal(status(await rawRequest(srv.port, 'GET /health HTTP/1.1\r\nContent-Length: zz\r\n\r\n')), 400);
  // A slow client: half a request, then nothing; the connection is closed after the read timeout.
  const t0 = Date.now();
  const slow = await rawRequest(srv.port, 'POST /v1/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{"pro', 10000);
  assert.ok(Date.now() - t0 < 8000, 'closed by the read timeout');
  assert.ok(!slow.includes('200 OK'));
});

test('a few thousand malformed, truncated or oversized requests leave the server sound', async () => {
  let seed = 12345;
  const rnd = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const good = JSON.stringify({ prompt: 'Once upon a time', max_tokens: 3, temperature: 0 });
  const bodies = [
    () => good.slice(0, rnd(good.length)),
    () => good.replace(/"/g, () => (rnd(5) === 0 ? '' : '"')),
    () => JSON.stringify({ prompt: [rnd(600) - 50], max_tokens: rnd(4) - 1 }),
    () => JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(rnd(50)) }] }], max_tokens: 2, n: rnd(3) }),
    () => JSON.stringify({ prompt: 'x', stop: 'x'.repeat(rnd(100)), logit_bias: { [rnd(600)]: rnd(300) - 150 }, max_tokens: 2 }),
    () => '{'.repeat(rnd(200)) + '}'.repeat(rnd(200)),
    () => String.fromCharCode(...Array.from({ length: rnd(200) }, () => rnd(256))),
  ];
  const heads = [
    (b) => `POST /v1/completions HTTP/1.1\r\nContent-Length: ${b.length}\r\n\r\n${b}`,
    (b) => `POST /v1/chat/completions HTTP/1.1\r\nContent-Length: ${b.length}\r\nConnection: close\r\n\r\n${b}`,
    (b) => `POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`,
    (b) => `POST /v1/completions HTTP/1.1\r\nContent-Length: ${b.length + rnd(3)}\r\n\r\n${b}`.slice(0, rnd(200) + 10),
    (b) => `POST /tokenize HTTP/1.1\r\nContent-Length: ${b.length}\r\n\r\n${b}`,
    (b) => `${'GET'.slice(0, rnd(4))} /${'a'.repeat(rnd(40000))} HTTP/1.1\r\n\r\n`,
  ];
  // Requests whose framing is whole (a head other than the cut or the bare request line) must be
  // answered, however long a busy machine takes; the others may wait for bytes that never come.
  let whole = 0;
  let answered = 0;
  const total = 2000;
  for (let i = 0; i < total; i += 50) {
    const batch = [];
    for (let k = 0; k < 50; k++) {
      const h = rnd(heads.length);
      const req = heads[h](bodies[rnd(bodies.length)]());
      const framed = h !== 3 && h !== 5;
      if (framed) whole++;
      batch.push(rawRequest(srv.port, req, 300, framed ? 30000 : 300).then((r) => {
        const s = status(r);
        assert.ok(s === 0 || (s >= 200 && s < 500), `status ${s}: ${r.slice(0, 200)}`);
        if (s && framed) answered++;
      }));
    }
    await Promise.all(batch);
  }
  assert.equal(answered, whole, `${answered} of ${whole} whole requests answered`);
  const m = await waitIdle(srv.url);
  assert.equal(m.get('brisk:kv_blocks_in_use'), 0);
  const r = await postJson(srv.url, '/v1/completions', { prompt: 'Once upon a time', max_tokens: 20, temperature: 0 });
  assert.equal(r.json.choices[0].text, runGreedy('Once upon a time', 20));
});
