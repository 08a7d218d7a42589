// The official OpenAI client against a real brisk server: every endpoint, streamed and not.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer, runGreedy, postJson, metrics, waitIdle } from './harness.mjs';

let srv, client;
before(async () => {
  srv = await startServer(['--served-model-name', 'stories']);
  client = new OpenAI({ baseURL: srv.url + '/v1', apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  const { code } = await srv.stop();
  assert.equal(code, 0, srv.log());
});

test('models lists the served model', async () => {
  const page = await client.models.list();
  assert.deepEqual(page.data.map((m) => m.id), ['stories']);
  assert.equal(page.data[0].object, 'model');
});

test('a greedy completion is the text brisk run gives', async () => {
  const prompt = 'Once upon a time';
  const r = await client.completions.create({ model: 'stories', prompt, max_tokens: 40, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.choices[0].text, runGreedy(prompt, 40));
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 40);
  assert.equal(r.usage.prompt_tokens, 5);
  assert.equal(r.usage.total_tokens, 45);
});

test('streamed completion chunks add up to the same text, with usage at the end', async () => {
  const prompt = 'The little dog';
  const stream = await client.completions.create({
    prompt, max_tokens: 30, temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const c of stream) {
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      text += ch.text;
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  assert.equal(text, runGreedy(prompt, 30));
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 30);
});

test('chat, plain and streamed, with string and list-of-parts content', async () => {
  const messages = [{ role: 'system', content: 'Tell a story.' }, { role: 'user', content: 'Lily and the cat' }];
  const a = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 24, temperature: 0 });
  assert.equal(a.object, 'chat.completion');
  assert.equal(a.choices[0].message.role, 'assistant');
  assert.ok(a.choices[0].message.content.length > 0);
  const parts = [messages[0], { role: 'user', content: [{ type: 'text', text: 'Lily and the cat' }] }];
  const b = await client.chat.completions.create({ messages: parts, max_tokens: 24, temperature: 0 });
  assert.equal(b.choices[0].message.content, a.choices[0].message.content);
  const stream = await client.chat.completions.create({ messages, max_tokens: 24, temperature: 0, stream: true });
  let text = '';
  let role = null;
  let finish = null;
  for await (const c of stream) {
    assert.equal(c.object, 'chat.completion.chunk');
    for (const ch of c.choices) {
      if (ch.delta.role) role = ch.delta.role;
      text += ch.delta.content ?? '';
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  assert.equal(role, 'assistant');
  assert.equal(text, a.choices[0].message.content);
  assert.equal(finish, a.choices[0].finish_reason);
  assert.ok(a.usage.prompt_tokens > 10);
});

test('n > 1 gives n choices; a seed reproduces sampled text; another seed changes it', async () => {
  const req = { prompt: 'Once upon a time', max_tokens: 30, temperature: 1.0, seed: 42, n: 3 };
  const a = await client.completions.create(req);
  const b = await client.completions.create(req);
  const c = await client.completions.create({ ...req, seed: 43 });
  assert.deepEqual(a.choices.map((x) => x.index), [0, 1, 2]);
  assert.deepEqual(a.choices.map((x) => x.text), b.choices.map((x) => x.text));
  assert.notDeepEqual(a.choices.map((x) => x.text), c.choices.map((x) => x.text));
  assert.ok(new Set(a.choices.map((x) => x.text)).size > 1, 'the completions differ');
  assert.equal(a.usage.completion_tokens, 90);
  assert.equal(a.usage.prompt_tokens, 5);
});

test('stop strings end the text before them', async () => {
  const full = runGreedy('Once upon a time', 40);
  const stopAt = full.indexOf('Lily');
  assert.ok(stopAt > 0, full);
  const r = await client.completions.create({ prompt: 'Once upon a time', max_tokens: 40, temperature: 0, stop: ['Lily', 'zzz'] });
  assert.equal(r.choices[0].text, full.slice(0, stopAt));
  assert.equal(r.choices[0].finish_reason, 'stop');
});

test('logprobs in the completions and chat shapes', async () => {
  const r = await client.completions.create({ prompt: 'Once upon a time', max_tokens: 5, temperature: 0, logprobs: 3 });
  const lp = r.choices[0].logprobs;
  assert.equal(lp.tokens.length, 5);
  assert.equal(lp.token_logprobs.length, 5);
  assert.equal(lp.top_logprobs.length, 5);
  for (let i = 0; i < 5; i++) {
    assert.ok(lp.token_logprobs[i] <= 0);
    const top = Object.values(lp.top_logprobs[i]);
    assert.equal(top.length, 3);
    // Greedy: the chosen token is the most likely one.
    assert.equal(Math.max(...top), lp.token_logprobs[i]);
  }
  assert.equal(lp.tokens.join(''), r.choices[0].text);
  const c = await client.chat.completions.create({
    messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, temperature: 0, logprobs: true, top_logprobs: 2,
  });
  const content = c.choices[0].logprobs.content;
  assert.equal(content.length, 4);
  for (const e of content) {
    assert.equal(typeof e.token, 'string');
    assert.ok(Array.isArray(e.bytes));
    assert.equal(e.top_logprobs.length, 2);
    assert.equal(e.top_logprobs[0].logprob, e.logprob);
  }
});

test('echo, several prompts, token-id prompts, logit_bias', async () => {
  const r = await client.completions.create({ prompt: ['Once upon a time', 'The sun'], max_tokens: 8, temperature: 0, echo: true });
  assert.equal(r.choices.length, 2);
  assert.ok(r.choices[0].text.startsWith('Once upon a time'));
  assert.equal(r.choices[0].text, 'Once upon a time' + runGreedy('Once upon a time', 8));
  assert.ok(r.choices[1].text.startsWith('The sun'));
  const tok = await postJson(srv.url, '/tokenize', { prompt: 'Once upon a time' });
  assert.equal(tok.status, 200);
  assert.equal(tok.json.count, 5);
  const byIds = await client.completions.create({ prompt: tok.json.tokens, max_tokens: 8, temperature: 0 });
  assert.equal(byIds.choices[0].text, runGreedy('Once upon a time', 8));
  const detok = await postJson(srv.url, '/detokenize', { tokens: tok.json.tokens });
  assert.equal(detok.json.prompt, 'Once upon a time');
  // A large negative bias on the greedy first token changes it.
  const first = await client.completions.create({ prompt: 'Once upon a time', max_tokens: 1, temperature: 0, logprobs: 0 });
  const ids = (await postJson(srv.url, '/tokenize', { prompt: 'Once upon a time' + first.choices[0].text, add_special_tokens: true })).json.tokens;
  const banned = ids[ids.length - 1];
  const biased = await client.completions.create({
    prompt: 'Once upon a time', max_tokens: 1, temperature: 0, logit_bias: { [banned]: -100 },
  });
  assert.notEqual(biased.choices[0].text, first.choices[0].text);
});

test('chat tokenize applies the template; health and metrics answer', async () => {
  const t = await postJson(srv.url, '/tokenize', { messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(t.status, 200);
  assert.ok(t.json.count > 5);
  assert.equal((await fetch(srv.url + '/health')).status, 200);
  await waitIdle(srv.url);
  const m = await metrics(srv.url);
  assert.ok(m.get('vllm:generation_tokens_total') > 0);
  assert.ok(m.get('vllm:prompt_tokens_total') > 0);
  assert.ok(m.get('vllm:time_to_first_token_seconds_count') > 0);
  assert.ok(m.text.includes('vllm:e2e_request_latency_seconds_bucket'));
  assert.ok(m.text.includes('vllm:request_queue_time_seconds_sum'));
  assert.ok(m.text.includes('vllm:inter_token_latency_seconds_count'));
  assert.equal(m.get('vllm:kv_cache_usage_perc'), 0);
});

test('an API key is required when set, compared exactly; /health stays open', async () => {
  const keyed = await startServer(['--api-key', 'sekret']);
  try {
    const ok = new OpenAI({ baseURL: keyed.url + '/v1', apiKey: 'sekret', maxRetries: 0 });
    assert.equal((await ok.models.list()).data.length, 1);
    for (const key of ['wrong', 'sekre', 'sekrett']) {
      const bad = new OpenAI({ baseURL: keyed.url + '/v1', apiKey: key, maxRetries: 0 });
      await assert.rejects(bad.completions.create({ prompt: 'x', max_tokens: 1 }), (e) => e.status === 401);
    }
    assert.equal((await fetch(keyed.url + '/health')).status, 200);
  } finally {
    await keyed.stop();
  }
});
