// Many users at once: 256 concurrent streams each get exactly the text their prompt gives alone,
// and the metrics add up; a client that leaves frees its blocks; SIGTERM lets streams finish
// within the grace period, ends the rest cleanly and exits 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, runGreedy, metrics, waitIdle, STORIES } from './harness.mjs';

// Streams one completion; returns its text, finish reason, usage and whether it ended with [DONE].
async function stream(base, body, { signal, onChunk } = {}) {
  const r = await fetch(base + '/v1/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    signal,
  });
  assert.equal(r.status, 200);
  const out = { text: '', finish: null, usage: null, done: false, error: null };
  const dec = new TextDecoder();
  let buf = '';
  for await (const part of r.body) {
    buf += dec.decode(part, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      assert.ok(ev.startsWith('data: '), ev);
      const data = ev.slice(6);
      if (data === '[DONE]') {
        out.done = true;
        continue;
      }
      const j = JSON.parse(data);
      if (j.error) out.error = j.error;
      if (j.usage) out.usage = j.usage;
      for (const c of j.choices ?? []) {
        out.text += c.text;
        if (c.finish_reason) out.finish = c.finish_reason;
      }
      if (onChunk) onChunk(out);
    }
  }
  return out;
}

const prompts = Array.from({ length: 16 }, (_, i) => `One day, in a small house by the big green tree, there was a ${['cat', 'dog', 'girl', 'boy'][i % 4]} named ${['Lily', 'Tom', 'Sue', 'Max'][i >> 2]}`);

test('256 concurrent streams: each text equals the prompt alone, metrics add up', async () => {
  const srv = await startServer(['--max-seqs', '64']);
  try {
    const want = prompts.map((p) => runGreedy(p, 48));
    const before = await metrics(srv.url);
    const results = await Promise.all(Array.from({ length: 256 }, (_, i) =>
      stream(srv.url, { prompt: prompts[i % 16], max_tokens: 48, temperature: 0 })));
    let completion = 0;
    let prompt = 0;
    results.forEach((r, i) => {
      assert.equal(r.text, want[i % 16], `request ${i}`);
      assert.ok(r.done && r.finish);
      completion += r.usage.completion_tokens;
      prompt += r.usage.prompt_tokens;
    });
    const after = await waitIdle(srv.url);
    const d = (name, labels) => after.get(name, labels) - (before.get(name, labels) || 0);
    assert.equal(d('vllm:generation_tokens_total'), completion);
    assert.equal(d('vllm:prompt_tokens_total'), prompt);
    const finished = ['stop', 'length'].map((r) => d('vllm:request_success_total', `finished_reason="${r}"`));
    assert.equal(finished[0] + finished[1], 256);
    assert.equal(d('vllm:time_to_first_token_seconds_count'), 256);
    assert.equal(d('vllm:e2e_request_latency_seconds_count'), 256);
    assert.equal(d('vllm:inter_token_latency_seconds_count'), completion - 256);
    assert.ok(d('vllm:prefix_cache_hits_total') > 0, 'repeated prompts hit the prefix cache');
  } finally {
    assert.equal((await srv.stop()).code, 0);
  }
});

test('prompt lookup (--spec ngram): every stream equals the prompt alone, and the spec metrics count', async () => {
  const srv = await startServer(['--spec', 'ngram', '--draft-fixed']);
  try {
    const want = prompts.map((p) => runGreedy(p, 64));
    const results = await Promise.all(Array.from({ length: 32 }, (_, i) =>
      stream(srv.url, { prompt: prompts[i % 16], max_tokens: 64, temperature: 0,
        ...(i % 4 === 3 ? { num_speculative_tokens: 0 } : i % 4 === 2 ? { num_speculative_tokens: 2 } : {}) })));
    results.forEach((r, i) => assert.equal(r.text, want[i % 16], `request ${i}`));
    const m = await waitIdle(srv.url);
    const drafts = m.get('vllm:spec_decode_num_drafts_total');
    const proposed = m.get('vllm:spec_decode_num_draft_tokens_total');
    const accepted = m.get('vllm:spec_decode_num_accepted_tokens_total');
    assert.ok(drafts > 0 && proposed >= drafts, `${drafts} drafts of ${proposed} tokens`);
    assert.ok(accepted >= 0 && accepted <= proposed);
    assert.equal(m.get('vllm:spec_decode_num_accepted_tokens_per_pos_total', 'position="0"') >= 0, true);
  } finally {
    assert.equal((await srv.stop()).code, 0);
  }
});

test('a draft model (-md): every stream equals the prompt alone; its own weights as the draft guess every token', async () => {
  const srv = await startServer(['-md', STORIES, '--draft-max', '4', '--draft-fixed']);
  try {
    const want = prompts.map((p) => runGreedy(p, 40));
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) =>
      stream(srv.url, { prompt: prompts[i], max_tokens: 40, temperature: 0 })));
    results.forEach((r, i) => assert.equal(r.text, want[i], `request ${i}`));
    const m = await waitIdle(srv.url);
    const proposed = m.get('vllm:spec_decode_num_draft_tokens_total');
    const accepted = m.get('vllm:spec_decode_num_accepted_tokens_total');
    // (Only drafts cut short by an end of text lose tokens.)
    assert.ok(proposed > 0 && accepted > 0.8 * proposed, `${accepted} of ${proposed} accepted`);
  } finally {
    assert.equal((await srv.stop()).code, 0);
  }
});

test('a client that disconnects mid-stream has its request aborted and its blocks freed', async () => {
  const srv = await startServer(['-t', '1']);
  try {
    const ctl = new AbortController();
    let chunks = 0;
    await assert.rejects(stream(srv.url, { prompt: 'Once upon a time', max_tokens: 450, ignore_eos: true }, {
      signal: ctl.signal,
      onChunk: () => {
        if (++chunks === 5) ctl.abort();
      },
    }));
    const m = await waitIdle(srv.url, 5000);
    assert.equal(m.get('brisk:kv_blocks_in_use'), 0);
    assert.equal(m.get('vllm:request_success_total', 'finished_reason="abort"'), 1);
    assert.ok(m.get('vllm:generation_tokens_total') < 450);
  } finally {
    await srv.stop();
  }
});

test('SIGTERM: no new connections, running streams end cleanly, exit status 0', async () => {
  const srv = await startServer(['-t', '1', '--shutdown-timeout', '0.5']);
  const streams = Array.from({ length: 32 }, (_, i) =>
    stream(srv.url, { prompt: prompts[i % 16], max_tokens: 450, ignore_eos: true }));
  await new Promise((r) => setTimeout(r, 300));
  srv.proc.kill('SIGTERM');
  const results = await Promise.all(streams);
  for (const r of results) {
    assert.ok(r.done, 'every stream ends with [DONE]');
    assert.ok(r.finish === 'length' || r.error?.code === 503, JSON.stringify(r.error));
  }
  assert.ok(results.some((r) => r.error), 'some were ended by the shutdown');
  await assert.rejects(fetch(srv.url + '/health'));
  const { code } = await srv.exited;
  assert.equal(code, 0, srv.log());
});
