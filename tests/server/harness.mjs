// Starts a real brisk server on a free loopback port and stops it; raw HTTP helpers.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import os from 'node:os';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';

export const BRISK = process.env.BRISK_BIN || path.resolve('build/brisk');
export const SHARED = path.resolve('../shared');
export const STORIES = path.join(SHARED, 'models/stories260K/stories260K.gguf');
if (!fs.existsSync(STORIES)) throw new Error(`missing ${STORIES}: ../shared must sit beside the checkout`);

// Resolves once the server prints its address (serving stories260K unless `model` is given). The
// caller stops it with stop().
export async function startServer(args = [], model = STORIES) {
  const threads = args.includes('-t') ? [] : ['-t', '2'];
  const proc = spawn(BRISK, ['serve', '-m', model, '--port', '0', ...threads, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 60000);
    proc.stderr.on('data', (d) => {
      log += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${log}`)));
  });
  const exited = new Promise((resolve) => proc.on('exit', (code, sig) => resolve({ code, sig })));
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    proc,
    exited,
    log: () => log,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

// Sends raw bytes, returns everything the server sent back until it closed the connection or
// `idleMs` passed without data (`firstMs` before the first byte).
export function rawRequest(port, bytes, idleMs = 3000, firstMs = idleMs) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = '';
    let timer;
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(data);
    };
    const arm = (ms) => {
      clearTimeout(timer);
      timer = setTimeout(done, ms);
    };
    sock.on('connect', () => {
      sock.write(bytes);
      arm(firstMs);
    });
    sock.on('data', (d) => {
      data += d;
      arm(idleMs);
    });
    sock.on('error', done);
    sock.on('close', done);
  });
}

export function status(response) {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(response);
  return m ? Number(m[1]) : 0;
}

export async function postJson(base, route, body, headers = {}) {
  const r = await fetch(base + route, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, headers: r.headers, json, text };
}

export async function metrics(base) {
  const text = await (await fetch(base + '/metrics')).text();
  const get = (name, labels = '') => {
    const re = new RegExp(`^${name.replace(/[:.]/g, '\\$&')}\\{[^}]*${labels}[^}]*\\} (\\S+)$`, 'm');
    const m = re.exec(text);
    return m ? Number(m[1]) : NaN;
  };
  return { text, get };
}

// Waits until the engine holds no blocks for running sequences (prefix-cached blocks may stay).
export async function waitIdle(base, timeoutMs = 20000) {
  const t0 = Date.now();
  for (;;) {
    const m = await metrics(base);
    if (m.get('brisk:kv_blocks_in_use') === 0 && m.get('vllm:num_requests_running') === 0) return m;
    if (Date.now() - t0 > timeoutMs) throw new Error(`engine still busy:\n${m.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The text `brisk run` gives for a prompt, greedy, without the echoed prompt.
export function runGreedy(prompt, n) {
  const out = execFileSync(BRISK, ['run', '-m', STORIES, '-p', prompt, '-n', String(n), '--temp', '0',
    '--no-display-prompt', '-t', '1'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  return out.endsWith('\n') ? out.slice(0, -1) : out;
}

// Runs the Python checker (tests/engine/validate_outputs.py: python3-jsonschema and friends) over
// [{kind, text, schema?}]; fails the test on any invalid output.
export function validateOutputs(outputs) {
  assert.ok(outputs.length > 0, 'no outputs to check');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-outputs-')), 'outputs.jsonl');
  fs.writeFileSync(file, outputs.map((o) => JSON.stringify(o)).join('\n') + '\n');
  const r = spawnSync('python3', ['tests/engine/validate_outputs.py', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
}
