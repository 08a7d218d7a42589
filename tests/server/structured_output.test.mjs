// Structured output through the official OpenAI client: response_format json_schema and
// json_object, streamed and not, sampled with many seeds and n > 1 while free requests run beside
// them; every finished output is checked by python3-jsonschema (tests/engine/validate_outputs.py)
// and its properties come in the schema's order. vLLM's and llama.cpp's spellings of the same
// requests, and refusals: a 400 naming the keyword or the field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer, postJson, waitIdle, validateOutputs } from './harness.mjs';

let srv, client;
before(async () => {
  srv = await startServer();
  client = new OpenAI({ baseURL: srv.url + '/v1', apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  const { code } = await srv.stop();
  assert.equal(code, 0, srv.log());
});

const PET = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 10 },
    kind: { enum: ['cat', 'dog', 'bird'] },
    age: { type: 'integer', minimum: 0, maximum: 30 },
    born: { type: 'string', format: 'date' },
  },
  required: ['name', 'kind', 'age'],
  additionalProperties: false,
};
const messages = [{ role: 'user', content: 'Describe a pet.' }];


// The keys of the parsed object follow the schema's property order.
function assertSchemaOrder(text, schema) {
  const order = Object.keys(schema.properties);
  const keys = Object.keys(JSON.parse(text)).map((k) => order.indexOf(k));
  assert.deepEqual(keys, [...keys].sort((a, b) => a - b), text);
}

test('json_schema: sampled outputs with many seeds and n > 1 are valid, beside free requests', async () => {
  const response_format = { type: 'json_schema', json_schema: { name: 'pet', schema: PET, strict: true } };
  const calls = [];
  for (let seed = 1; seed <= 8; ++seed) {
    calls.push(client.chat.completions.create({ messages, response_format, seed, n: 2, max_tokens: 400, temperature: 1 }));
    calls.push(client.completions.create({ prompt: 'Once upon a time', seed, max_tokens: 20, temperature: 0 }));
  }
  const outputs = [];
  let finished = 0;
  for (const r of await Promise.all(calls)) {
    if (r.object !== 'chat.completion') continue;
    for (const c of r.choices) {
      if (c.finish_reason !== 'stop') continue;
      ++finished;
      assertSchemaOrder(c.message.content, PET);
      outputs.push({ kind: 'json_schema', schema: PET, text: c.message.content });
    }
  }
  assert.ok(finished >= 12, `only ${finished} of 16 finished`);
  validateOutputs(outputs);
  await waitIdle(srv.url);
});

test('json_schema streamed: the deltas add up to a valid document', async () => {
  const outputs = [];
  for (let seed = 1; seed <= 4; ++seed) {
    const stream = await client.chat.completions.create({
      messages, seed, max_tokens: 400, temperature: 1, stream: true,
      response_format: { type: 'json_schema', json_schema: { name: 'pet', schema: PET } },
    });
    let text = '';
    let finish = null;
    for await (const c of stream)
      for (const ch of c.choices) {
        text += ch.delta.content ?? '';
        if (ch.finish_reason) finish = ch.finish_reason;
      }
    if (finish === 'stop') outputs.push({ kind: 'json_schema', schema: PET, text });
  }
  validateOutputs(outputs);
});

test('json_object, streamed and not, is one JSON object', async () => {
  const response_format = { type: 'json_object' };
  // This small model would write stories inside the strings: a bias towards '"' and '}' (byte
  // tokens 0x22 and 0x7D), applied on top of the mask, lets objects end.
  const logit_bias = { 37: 6, 128: 6 };
  const outputs = [];
  for (let seed = 1; seed <= 4; ++seed) {
    const r = await client.chat.completions.create({ messages, response_format, logit_bias, seed, max_tokens: 300, temperature: 0.7 });
    if (r.choices[0].finish_reason === 'stop') outputs.push({ kind: 'json_object', text: r.choices[0].message.content });
  }
  const stream = await client.chat.completions.create({ messages, response_format, logit_bias, max_tokens: 300, temperature: 0, stream: true });
  let text = '';
  for await (const c of stream) for (const ch of c.choices) text += ch.delta.content ?? '';
  const plain = await client.chat.completions.create({ messages, response_format, logit_bias, max_tokens: 300, temperature: 0 });
  assert.equal(text, plain.choices[0].message.content);
  if (plain.choices[0].finish_reason === 'stop') outputs.push({ kind: 'json_object', text });
  validateOutputs(outputs);
});

test("vLLM's and llama.cpp's fields constrain the same way", async () => {
  const u = srv.url;
  const cases = [
    [{ structured_outputs: { choice: ['left', 'right'] } }, { kind: 'choice', choices: ['left', 'right'] }],
    [{ guided_choice: ['up', 'down'] }, { kind: 'choice', choices: ['up', 'down'] }],
    [{ structured_outputs: { regex: '[a-c]{2}-[0-9]{2}' } }, { kind: 'regex', pattern: '[a-c]{2}-[0-9]{2}' }],
    [{ guided_regex: '(yes|no)!' }, { kind: 'regex', pattern: '(yes|no)!' }],
    [{ guided_json: PET }, { kind: 'json_schema', schema: PET }],
    [{ guided_json: JSON.stringify(PET) }, { kind: 'json_schema', schema: PET }],
    [{ structured_outputs: { json: PET, disable_any_whitespace: true } }, { kind: 'json_schema', schema: PET }],
    [{ json_schema: PET }, { kind: 'json_schema', schema: PET }],
    [{ response_format: { type: 'json_object', schema: PET } }, { kind: 'json_schema', schema: PET }],
    [{ grammar: 'root ::= "<" [a-z]{1,6} ">"' }, { kind: 'regex', pattern: '<[a-z]{1,6}>' }],
    [{ structured_outputs: { grammar: 'root ::= "x" | "y"' } }, { kind: 'choice', choices: ['x', 'y'] }],
  ];
  const outputs = [];
  for (const [fields, check] of cases)
    for (const route of ['/v1/completions', '/v1/chat/completions']) {
      const body = { max_tokens: 440, temperature: 0.8, seed: 5, ...fields };
      if (route === '/v1/completions') body.prompt = 'The cat';
      else body.messages = messages;
      const r = await postJson(u, route, body);
      assert.equal(r.status, 200, r.text);
      const c = r.json.choices[0];
      const text = c.text ?? c.message.content;
      if (c.finish_reason === 'stop') outputs.push({ ...check, text });
    }
  assert.ok(outputs.length >= 18, `only ${outputs.length} of 22 finished`);
  validateOutputs(outputs);
  const compact = await postJson(u, '/v1/completions', {
    prompt: 'The cat', max_tokens: 300, seed: 2, structured_outputs: { json: PET, disable_any_whitespace: true },
  });
  assert.ok(!/\s(?=(?:[^"]*"[^"]*")*[^"]*$)/.test(compact.json.choices[0].text), compact.text);
});

test('unenforceable schemas and bad constraints get a 400 naming the keyword or field', async () => {
  const u = srv.url;
  const refuse = async (fields, param, word) => {
    const r = await postJson(u, '/v1/chat/completions', { messages, max_tokens: 5, ...fields });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.param, param, r.text);
    if (word) assert.ok(r.json.error.message.includes(word), r.text);
  };
  const rf = (schema) => ({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
  await refuse(rf({ type: 'string', not: { pattern: '^a' } }), 'response_format', 'not');
  await refuse(rf({ type: 'array', uniqueItems: true }), 'response_format', 'uniqueItems');
  await refuse(rf({ $ref: 'https://example.com/x.json' }), 'response_format', '$ref');
  await refuse(rf({ type: 'array', contains: { type: 'string' } }), 'response_format', 'contains');
  await refuse({ response_format: { type: 'xml' } }, 'response_format', 'xml');
  await refuse({ response_format: { type: 'json_schema' } }, 'response_format', 'json_schema');
  await refuse({ guided_json: '{"type": ' }, 'guided_json', 'JSON');
  await refuse({ guided_regex: '(a' }, 'guided_regex');
  await refuse({ grammar: 'root ::= root "a"' }, 'grammar', 'recurs');
  await refuse({ guided_choice: [] }, 'guided_choice');
  await refuse({ structured_outputs: { regex: 'a', choice: ['b'] } }, 'structured_outputs');
  await refuse({ guided_regex: 'a', json_schema: PET }, 'guided_regex', 'both');
  // Through the client: its error carries the status and message.
  await assert.rejects(
    client.chat.completions.create({ messages, ...rf({ type: 'integer', multipleOf: 3 }) }),
    (e) => e.status === 400 && e.message.includes('multipleOf'),
  );
  // The server is unharmed: a constrained request still runs.
  const ok = await client.chat.completions.create({ messages, max_tokens: 50, ...rf({ enum: ['fine'] }) });
  assert.equal(JSON.parse(ok.choices[0].message.content), 'fine');
});

// Shapes that once killed the server (a parent type beside closed object branches read a freed
// value in the merger), and hostile ones: each is answered (200 or a 400 naming the field), and
// the server keeps serving everyone else.
test('schemas that once crashed the server are answered, and the server keeps serving', async () => {
  const rf = (schema) => ({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
  const branch = (name) => ({ properties: { [name]: { type: 'string', maxLength: 5 } }, required: [name], additionalProperties: false });
  const compiled = [
    { type: 'object', oneOf: [branch('a'), branch('b')] },
    { type: 'object', anyOf: [branch('a'), branch('b')] },
    { type: 'object', required: ['a'], allOf: [branch('a'), { properties: { a: { maxLength: 3 } } }] },
  ];
  const outputs = [];
  for (const schema of compiled) {
    // Without whitespace (vLLM's option beside response_format), so the tiny model finishes.
    const r = await postJson(srv.url, '/v1/chat/completions', {
      messages, max_tokens: 100, temperature: 0, structured_outputs: { disable_any_whitespace: true }, ...rf(schema),
    });
    assert.equal(r.status, 200, r.text);
    const text = r.json.choices[0].message.content;
    assert.ok(!/\s/.test(text.replace(/"[^"]*"/g, '')), text);
    if (r.json.choices[0].finish_reason === 'stop') outputs.push({ kind: 'json_schema', schema, text });
  }
  assert.ok(outputs.length >= 2, `only ${outputs.length} of 3 finished`);
  validateOutputs(outputs);
  const defs = {};
  for (let i = 0; i < 40; ++i)
    defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }], properties: { [`p${i}`]: { type: 'integer' } } };
  defs.d40 = { type: 'object' };
  const refused = [
    { type: 'object', oneOf: [{ properties: 3, additionalProperties: false }, branch('b')] },
    { type: 'object', anyOf: [{ required: 'a' }, branch('b')], required: ['b'] },
    { allOf: [{ type: 3 }, { type: 'string' }] },
    { $defs: defs, $ref: '#/$defs/d0', required: ['p0'] },
  ];
  for (const schema of refused) {
    const r = await postJson(srv.url, '/v1/chat/completions', { messages, max_tokens: 5, ...rf(schema) });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.param, 'response_format', r.text);
  }
  const ok = await client.chat.completions.create({ messages, max_tokens: 50, ...rf({ enum: ['fine'] }) });
  assert.equal(JSON.parse(ok.choices[0].message.content), 'fine');
});
