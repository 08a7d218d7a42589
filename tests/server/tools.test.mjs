// Tool calling through the official OpenAI client on stories260K with a Hermes-family template:
// tool_choice required and a named function at several temperatures and seeds give calls whose
// arguments python3-jsonschema accepts, streamed and not (the joined deltas equal the whole
// reply of the same seed); auto with an output that makes no call is plain content; a call sent
// back reaches the template with its arguments parsed; tools keep the client's key order; bad
// tools and tool_choice get a 400 naming the field; the docs' agent loop runs; text in an open
// <think> block is reasoning_content.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import OpenAI from 'openai';
import { startServer, postJson, validateOutputs } from './harness.mjs';

let srv, client;
before(async () => {
  srv = await startServer(['--chat-template', 'tests/server/templates/hermes_small.jinja']);
  client = new OpenAI({ baseURL: srv.url + '/v1', apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  const { code } = await srv.stop();
  assert.equal(code, 0, srv.log());
});

const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string', maxLength: 16 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    unit: { enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city', 'days'],
  additionalProperties: false,
};
const TIME = { type: 'object', properties: { tz: { type: 'string', maxLength: 8 } }, required: ['tz'], additionalProperties: false };
const tools = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: WEATHER } },
  { type: 'function', function: { name: 'get_time', parameters: TIME, strict: true } },
];
const schemas = { get_weather: WEATHER, get_time: TIME };
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];


// The calls of a streamed reply, joined from their deltas.
async function joinStream(stream) {
  const calls = [];
  let content = '', finish = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      if (c.delta.content) content += c.delta.content;
      for (const tc of c.delta.tool_calls ?? []) {
        if (tc.id !== undefined) {
          assert.equal(tc.index, calls.length);
          assert.equal(tc.type, 'function');
          assert.equal(tc.function.arguments, '');
          calls.push({ id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } });
        } else {
          calls[tc.index].function.arguments += tc.function.arguments;
        }
      }
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  return { content, calls, finish };
}

for (const [label, tool_choice] of [
  ['required', 'required'],
  ['a named function', { type: 'function', function: { name: 'get_time' } }],
]) {
  test(`tool_choice ${label}: valid calls at several temperatures and seeds, streamed the same`, async () => {
    const outputs = [];
    let made = 0;
    for (const temperature of [0.6, 1.0, 1.3]) {
      for (let seed = 1; seed <= 4; ++seed) {
        const req = { messages, tools, tool_choice, seed, temperature, max_tokens: 300 };
        const r = await client.chat.completions.create(req);
        const c = r.choices[0];
        if (c.finish_reason === 'length') continue;
        assert.equal(c.finish_reason, 'tool_calls', JSON.stringify(c));
        assert.equal(c.message.content, null);
        assert.ok(c.message.tool_calls.length >= 1);
        for (const call of c.message.tool_calls) {
          assert.match(call.id, /^call_[A-Za-z0-9]{24}$/);
          if (typeof tool_choice === 'object') assert.equal(call.function.name, 'get_time');
          outputs.push({ kind: 'json_schema', schema: schemas[call.function.name], text: call.function.arguments });
          ++made;
        }
        const s = await joinStream(await client.chat.completions.create({ ...req, stream: true }));
        assert.equal(s.finish, 'tool_calls');
        assert.equal(s.content, '');
        assert.deepEqual(s.calls.map((x) => x.function), c.message.tool_calls.map((x) => x.function));
      }
    }
    assert.ok(made >= 8, `only ${made} calls finished`);
    validateOutputs(outputs);
  });
}

test('parallel_tool_calls false: exactly one call', async () => {
  for (let seed = 1; seed <= 4; ++seed) {
    const r = await client.chat.completions.create({ messages, tools, tool_choice: 'required', parallel_tool_calls: false, seed, max_tokens: 300 });
    if (r.choices[0].finish_reason === 'length') continue;
    assert.equal(r.choices[0].message.tool_calls.length, 1);
  }
});

test('auto: an output without a call is plain content, streamed the same', async () => {
  const req = { messages: [{ role: 'user', content: 'Once upon a time' }], tools, seed: 3, temperature: 0, max_tokens: 30 };
  const r = await client.chat.completions.create(req);
  const c = r.choices[0];
  assert.equal(c.message.tool_calls, undefined);
  assert.ok(c.message.content.length > 10, JSON.stringify(c));
  assert.equal(c.finish_reason, 'length');
  const s = await joinStream(await client.chat.completions.create({ ...req, stream: true }));
  assert.equal(s.content, c.message.content);
  assert.deepEqual(s.calls, []);
});

test('a call sent back reaches the template with its arguments parsed; tools keep their key order', async () => {
  const turn = [
    ...messages,
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris", "days": 2}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp": 21}' },
  ];
  const tok = await postJson(srv.url, '/tokenize', {
    messages: turn,
    tools: [{ type: 'function', function: { name: 'zeta', parameters: { type: 'object', properties: { b: {}, a: {} } } } }],
    chat_template_kwargs: { show_tools: true },
  });
  assert.equal(tok.status, 200, tok.text);
  const text = (await postJson(srv.url, '/detokenize', { tokens: JSON.parse(tok.text).tokens })).json.prompt;
  assert.ok(text.includes('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}</tool_call>'), text);
  assert.ok(text.includes('[{"type": "function", "function": {"name": "zeta", "parameters": {"type": "object", "properties": {"b": {}, "a": {}}}}}]'), text);
  const r = await client.chat.completions.create({ messages: turn, tools, max_tokens: 20, temperature: 0 });
  assert.ok(['stop', 'length', 'tool_calls'].includes(r.choices[0].finish_reason));
});

test('bad tools and tool_choice: a 400 naming the field', async () => {
  const cases = [
    [{ tools: [{ type: 'function', function: {} }] }, 'tools[0].function.name'],
    [{ tools: [{ type: 'retrieval' }] }, 'tools[0].type'],
    [{ tools, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice'],
    [{ tools, tool_choice: 'sometimes' }, 'tool_choice'],
    [{ tool_choice: 'required' }, 'tool_choice'],
    [{ tools, parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
    [{ tools: [{ type: 'function', function: { name: 'f', strict: true, parameters: { type: 'object', properties: { n: { type: 'number', multipleOf: 3 } } } } }], tool_choice: 'required' }, 'tools'],
    [{ tools, tool_choice: 'required', response_format: { type: 'json_object' } }, 'tool_choice'],
    [{ tools: Array(129).fill(tools[0]) }, 'tools'],
  ];
  for (const [extra, param] of cases) {
    const r = await postJson(srv.url, '/v1/chat/completions', { messages, max_tokens: 5, ...extra });
    assert.equal(r.status, 400, JSON.stringify(extra) + ' ' + r.text);
    assert.equal(r.json.error.param, param, r.text);
  }
});

test("the docs' agent loop runs: a call, its result sent back, then an answer", () => {
  const r = spawnSync('node', ['tests/server/agent_loop.mjs', srv.url + '/v1'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^call get_weather\(\{[\s\S]*\}\) -> \{"city":/);
  assert.match(r.stdout, /\nassistant: /);
});

test('reasoning: text in the open <think> block is reasoning_content, streamed the same; enable_thinking false gives content', async () => {
  const think = await startServer(['--chat-template', 'tests/server/templates/think_small.jinja']);
  try {
    assert.match(think.log(), /reasoning: think/);
    const c2 = new OpenAI({ baseURL: think.url + '/v1', apiKey: 'unused', maxRetries: 0 });
    const req = { messages: [{ role: 'user', content: 'Once upon a time' }], seed: 2, temperature: 0, max_tokens: 30 };
    const r = await c2.chat.completions.create(req);
    const m = r.choices[0].message;
    assert.ok(m.reasoning_content.length > 10, JSON.stringify(m));
    assert.equal(m.content, '');
    let reasoning = '';
    for await (const chunk of await c2.chat.completions.create({ ...req, stream: true }))
      for (const c of chunk.choices) reasoning += c.delta.reasoning_content ?? '';
    assert.equal(reasoning, m.reasoning_content);
    const off = await c2.chat.completions.create({ ...req, chat_template_kwargs: { enable_thinking: false } });
    assert.equal(off.choices[0].message.reasoning_content, undefined);
    assert.ok(off.choices[0].message.content.length > 10);
  } finally {
    assert.equal((await think.stop()).code, 0);
  }
});
