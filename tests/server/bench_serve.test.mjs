// brisk bench serve against a real brisk server: every request completes, the token counts are
// the ones asked for, the latency figures are filled in, --plot draws them, and a failing server
// is reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BRISK, startServer, metrics, waitIdle } from './harness.mjs';

test('bench serve reports every request, token counts and latencies, as text and JSON', async () => {
  const srv = await startServer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-bench-'));
  try {
    const out = path.join(dir, 'r.json');
    const plot = path.join(dir, 'serve.svg');
    const text = execFileSync(BRISK, ['bench', 'serve', '--base-url', srv.url + '/v1', '--num-prompts', '12',
      '--max-concurrency', '4', '--input-len', '16', '--output-len', '8', '--result-file', out, '--plot', plot],
    { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    // --plot: an SVG document with the series it claims.
    const svg = spawnSync('python3', ['tests/cli/check_svg.py', plot, 'TTFT', 'ITL', 'output tokens/s'], { encoding: 'utf8' });
    assert.equal(svg.status, 0, svg.stdout + svg.stderr);
    assert.match(text, /Successful requests:\s+12\n/);
    assert.match(text, /Median TTFT \(ms\):/);
    const r = JSON.parse(fs.readFileSync(out, 'utf8'));
    assert.equal(r.model, 'stories260K');
    assert.equal(r.completed, 12);
    assert.equal(r.failed, 0);
    assert.equal(r.total_input_tokens, 12 * 16);
    assert.equal(r.total_output_tokens, 12 * 8);
    assert.ok(r.ttft_ms.median > 0 && r.tpot_ms.median > 0 && r.itl_ms.p99 > 0 && r.e2el_ms.mean > 0);
    assert.ok(r.e2el_ms.median >= r.ttft_ms.median);
    const m = await waitIdle(srv.url);
    assert.equal(m.get('vllm:e2e_request_latency_seconds_count'), 12);

    // A dataset file and a Poisson arrival rate.
    const data = path.join(dir, 'prompts.jsonl');
    fs.writeFileSync(data, '{"prompt": "Once upon a time"}\nThe little dog\n');
    const t2 = execFileSync(BRISK, ['bench', 'serve', '--base-url', srv.url, '--num-prompts', '6',
      '--request-rate', '20', '--dataset', data, '--output-len', '4'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    assert.match(t2, /Successful requests:\s+6\n/);
    assert.match(t2, /Total generated tokens:\s+24\n/);

    // Requests the server refuses are counted as failures and the exit status says so.
    const bad = spawnSync(BRISK, ['bench', 'serve', '--base-url', srv.url, '--model', 'nope',
      '--num-prompts', '2', '--output-len', '2'], { encoding: 'utf8' });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stdout, /Failed requests:\s+2\n/);
    assert.match(bad.stderr, /404/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await srv.stop();
  }
});
