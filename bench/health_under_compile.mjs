// /health while a server compiles many new JSON schemas: sends N chat requests at once, each with a
// schema the server has not seen, polls /health every 10 ms until they are answered, and prints
// the health latencies' median, p99 and worst, and how many constraints were compiled (each schema
// once: the compiled grammar travels with its request).
//   node bench/health_under_compile.mjs MODEL.gguf [N=64] [BRISK=build/brisk]
// A model with a large vocabulary makes each compile cost what a real one does, e.g.
//   build/brisk-genmodel --preset llama-3.2-1b --layers 1 --type q4_0 -o /tmp/l3.gguf
import { spawn } from 'node:child_process';

const [model, nArg, briskArg] = process.argv.slice(2);
if (!model) {
  console.error('usage: node bench/health_under_compile.mjs MODEL.gguf [N] [BRISK]');
  process.exit(2);
}
const N = Number(nArg || 64);
const BRISK = briskArg || 'build/brisk';
const FIELDS = Number(process.env.BRISK_FIELDS || 48);  // properties per schema: its weight

// A schema of some weight (nested objects, enums, bounded numbers and strings), made distinct by
// its property names.
function schema(i) {
  const props = {};
  for (let k = 0; k < FIELDS; k++) {
    props[`field_${i}_${k}`] = k % 3 === 0
      ? { type: 'string', maxLength: 40 + k }
      : k % 3 === 1
        ? { type: 'integer', minimum: -k, maximum: 1000 + i }
        : { type: 'object', properties: { [`name_${i}`]: { type: 'string' }, kind: { enum: ['a', 'b', `c${i}`] } },
            required: [`name_${i}`], additionalProperties: false };
  }
  return { type: 'object', properties: props, required: Object.keys(props).slice(0, 6), additionalProperties: false };
}

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function compiled(url) {
  const text = await (await fetch(url + '/metrics')).text();
  const m = /^brisk:constraints_compiled_total\{[^}]*\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : NaN;
}

const proc = spawn(BRISK, ['serve', '-m', model, '--port', '0', '-t', '2', '-c', '512'], { stdio: ['ignore', 'ignore', 'pipe'] });
let log = '';
const port = await new Promise((resolve, reject) => {
  proc.stderr.on('data', (d) => {
    log += d;
    const m = /listening on http:\/\/[^:]+:(\d+)/.exec(log);
    if (m) resolve(Number(m[1]));
  });
  proc.on('exit', () => reject(new Error('server exited:\n' + log)));
});
const url = `http://127.0.0.1:${port}`;
try {
  const before = await compiled(url);
  let done = false;
  const start = performance.now();
  const health = [];
  const poll = (async () => {
    while (!done) {
      const t0 = performance.now();
      const r = await fetch(url + '/health');
      await r.text();
      health.push(performance.now() - t0);
      if (process.env.BRISK_SLOW_MS && health.at(-1) > Number(process.env.BRISK_SLOW_MS))
        console.log(`slow /health: ${health.at(-1).toFixed(1)} ms at ${(t0 - start).toFixed(0)} ms`);
      await new Promise((res) => setTimeout(res, 10));
    }
  })();
  await new Promise((res) => setTimeout(res, 100));  // polls first, on an idle server
  const t0 = performance.now();
  const replies = await Promise.all(Array.from({ length: N }, (_, i) => fetch(url + '/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      messages: [{ role: 'user', content: 'Fill the form.' }],
      max_tokens: 2,
      ...(process.env.BRISK_PLAIN ? {} : { response_format: { type: 'json_schema', json_schema: { name: `s${i}`, schema: schema(i) } } }),
    }),
  }).then((r) => r.status)));
  const wall = performance.now() - t0;
  done = true;
  await poll;
  const after = await compiled(url);
  const ok = replies.filter((s) => s === 200).length;
  console.log(`${N} requests with distinct schemas: ${ok} answered 200 in ${(wall / 1000).toFixed(2)} s; ` +
    `constraints compiled: ${after - before}`);
  console.log(`/health over ${health.length} polls: median ${percentile(health, 50).toFixed(1)} ms, ` +
    `p99 ${percentile(health, 99).toFixed(1)} ms, worst ${Math.max(...health).toFixed(1)} ms`);
} finally {
  proc.kill('SIGTERM');
}
