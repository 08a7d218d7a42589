// The dashboard: the server's /metrics polled every second (?interval=MS changes it) and drawn
// over the last five minutes; /props for the model, engine and machine at the top.
import { getJson } from './api.js';
import { LineChart } from './charts.js';
import { buckets, parseMetrics, quantile, total } from './metrics.js';

const WINDOW_S = 300;
const RATE_S = 5; // tokens/s over the last few seconds, smoother than one poll
const LATENCY_S = 60; // percentiles over the last minute
const interval = Math.max(200, Number(new URLSearchParams(location.search).get('interval')) || 1000);
const samples = [];

const $ = (id) => document.getElementById(id);
const count = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toFixed(2)).toString());
const percent = (v) => `${v.toFixed(v < 10 && v > 0 ? 1 : 0)}%`;
const seconds = (v) => (v >= 1 ? `${v.toFixed(2)} s` : v >= 0.001 || v === 0 ? `${(v * 1000).toFixed(v >= 0.01 ? 0 : 1)} ms` : `${(v * 1e6).toFixed(0)} µs`);
const bytes = (v) => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) (v /= 1024), ++i;
  return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
};

function chart(key, title, series, format) {
  const c = new LineChart($('charts'), { title, series: series.map((name) => ({ name })), format, windowSeconds: WINDOW_S });
  c.root.dataset.testid = `chart-${key}`;
  return c;
}

const charts = {
  requests: chart('requests', 'Requests', ['running', 'waiting'], count),
  cache: chart('cache', 'KV cache use and prefix-cache hit rate', ['KV cache used', 'prefix hits (last minute)'], percent),
  tokens: chart('tokens', 'Tokens per second', ['prompt', 'generation'], count),
  ttft: chart('ttft', 'Time to first token (last minute)', ['p50', 'p90', 'p99'], seconds),
  itl: chart('itl', 'Inter-token latency (last minute)', ['p50', 'p90', 'p99'], seconds),
};

function facts(id, rows) {
  $(id).replaceChildren(
    ...rows.flatMap(([k, v]) => {
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = v;
      return [dt, dd];
    }),
  );
}

async function refreshProps() {
  const p = await getJson('/props');
  const m = p.model;
  const e = p.engine;
  const h = p.machine;
  $('model-name').textContent = m.name;
  document.title = `${m.name} · brisk dashboard`;
  facts('facts-model', [
    ['name', m.name],
    ['file', `${m.path} (${m.format}, ${bytes(m.file_bytes)})`],
    ['shape', `${m.arch}, ${m.n_layer} layers, ${m.n_embd} wide, ${m.n_head}/${m.n_head_kv} heads, ${m.n_vocab} tokens`],
    ['max model length', String(m.max_model_len)],
    ['chat template', m.chat_template],
    ['tool calls / reasoning', `${m.tool_call_parser} / ${m.reasoning_parser}`],
  ]);
  facts('facts-engine', [
    ['max sequences', String(e.max_seqs)],
    ['max batched tokens', String(e.max_batched_tokens)],
    ['KV cache', `${e.kv_blocks} blocks × ${e.block_size} tokens = ${e.kv_capacity_tokens} tokens`],
    ['KV memory', `${bytes(e.kv_cache_bytes)}, ${e.kv_cache_type}`],
    ['prefix caching', e.prefix_caching ? 'on' : 'off'],
    ['speculative decoding', e.speculative],
  ]);
  facts('facts-machine', [
    ['kernels', h.kernels],
    ['threads', `${h.threads} of ${h.cpus} CPUs`],
    ['memory', `${bytes(h.resident_bytes)} resident of ${bytes(h.memory_total_bytes)}`],
    ['brisk', p.version],
  ]);
}

function sample(text) {
  const m = parseMetrics(text);
  return {
    t: Date.now(),
    running: total(m, 'vllm:num_requests_running'),
    waiting: total(m, 'vllm:num_requests_waiting'),
    kv: total(m, 'vllm:kv_cache_usage_perc'),
    hits: total(m, 'vllm:prefix_cache_hits_total'),
    queries: total(m, 'vllm:prefix_cache_queries_total'),
    prompt: total(m, 'vllm:prompt_tokens_total'),
    generation: total(m, 'vllm:generation_tokens_total'),
    ttft: buckets(m, 'vllm:time_to_first_token_seconds'),
    itl: buckets(m, 'vllm:inter_token_latency_seconds'),
  };
}

// The sample `ago` seconds before samples[i] (or the oldest kept).
function before(i, ago) {
  let j = i;
  while (j > 0 && samples[i].t - samples[j - 1].t <= ago * 1000) --j;
  return j < i ? samples[j] : null;
}

function derived(i) {
  const s = samples[i];
  const r = before(i, RATE_S);
  const l = before(i, LATENCY_S);
  const rate = (k) => (r ? Math.max(0, ((s[k] - r[k]) * 1000) / (s.t - r.t)) : null);
  const dq = l ? s.queries - l.queries : 0;
  const percentiles = (k) => [0.5, 0.9, 0.99].map((q) => quantile(q, s[k], l ? l[k] : null));
  return {
    t: s.t,
    requests: [s.running, s.waiting],
    cache: [s.kv === null ? null : s.kv * 100, dq > 0 ? ((s.hits - l.hits) / dq) * 100 : null],
    tokens: [rate('prompt'), rate('generation')],
    ttft: percentiles('ttft'),
    itl: percentiles('itl'),
  };
}

// Each sample's chart values, computed once when it arrives (they look only backwards).
const points = [];

function redraw() {
  for (const [key, c] of Object.entries(charts)) c.update(points.map((p) => ({ t: p.t, values: p[key] })));
}

async function poll() {
  try {
    const res = await fetch('/metrics', { cache: 'no-store' });
    if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
    samples.push(sample(await res.text()));
    points.push(derived(samples.length - 1));
    while (samples[samples.length - 1].t - samples[0].t > (WINDOW_S + LATENCY_S) * 1000) {
      samples.shift();
      points.shift();
    }
    redraw();
    $('status').textContent = `updated ${new Date().toLocaleTimeString()} · every ${interval / 1000} s`;
  } catch (e) {
    $('status').textContent = `no metrics: ${e.message}`;
  }
  setTimeout(poll, interval);
}

async function start() {
  try {
    await refreshProps();
  } catch (e) {
    $('status').textContent = `no /props: ${e.message}`;
  }
  setInterval(() => refreshProps().catch(() => {}), 10000);
  poll();
}

start();
