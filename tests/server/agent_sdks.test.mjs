// Agent loops as application developers write them, against brisk serve on the reference
// template of each tool family (and on templates that know no tools, forbid a system message or
// the tool role, or take one call per turn): the official openai SDK's runTools, the Vercel AI
// SDK's multi-step generateText and LangChain.js's bindTools loop, three rounds each, the SDKs
// sending the assistant's tool-call turns back with null content. Also what their helpers call:
// models.retrieve, a named tool_choice (one call) and the legacy functions / function_call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { generateText, isStepCount, tool, jsonSchema } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { startServer, postJson } from './harness.mjs';

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 12 } },
  required: ['city'],
  additionalProperties: false,
};
const weather = ({ city }) => ({ city, temperature: 21 });
const prompt = 'What is the weather in Paris?';
const ROUNDS = 3;
// Generous: a tiny model's call under the family's grammar, with the tools in the prompt.
const MAX = 300;

// The stories model's 512-token context is too short for a prompt that describes tools and holds
// three rounds; -c 4096 lengthens it (the text is nonsense either way: the loop is the test).
async function withServer(template, body) {
  const args = ['-c', '4096'];
  if (template) args.push('--chat-template', `tests/chat/jinja/templates/${template}.jinja`);
  const srv = await startServer(args);
  try {
    await body(srv);
  } finally {
    const { code } = await srv.stop();
    assert.equal(code, 0, srv.log());
  }
}

async function openaiRunTools(url) {
  const client = new OpenAI({ baseURL: url + '/v1', apiKey: 'unused', maxRetries: 0 });
  let calls = 0;
  const runner = client.chat.completions.runTools(
    {
      model: 'stories260K',
      messages: [{ role: 'user', content: prompt }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      max_tokens: MAX,
      tools: [{
        type: 'function',
        function: {
          name: 'get_weather', description: 'Current weather', parameters: WEATHER, parse: JSON.parse,
          function: async (args) => (++calls, weather(args)),
        },
      }],
    },
    { maxChatCompletions: ROUNDS },
  );
  await runner.done();
  assert.equal(calls, ROUNDS);
  // Each assistant turn went back with null content beside its call.
  const turns = runner.messages.filter((m) => m.role === 'assistant');
  assert.equal(turns.length, ROUNDS);
  assert.ok(turns.every((m) => m.tool_calls?.length === 1 && m.content === null), JSON.stringify(turns));
}

async function vercelSteps(url) {
  const provider = createOpenAICompatible({ name: 'brisk', baseURL: url + '/v1', apiKey: 'unused' });
  let calls = 0;
  const r = await generateText({
    model: provider.chatModel('stories260K'),
    tools: {
      get_weather: tool({
        description: 'Current weather', inputSchema: jsonSchema(WEATHER),
        execute: async (args) => (++calls, weather(args)),
      }),
    },
    toolChoice: { type: 'tool', toolName: 'get_weather' },
    stopWhen: isStepCount(ROUNDS),
    maxOutputTokens: MAX,
    maxRetries: 0,
    prompt,
  });
  assert.equal(r.steps.length, ROUNDS);
  assert.equal(calls, ROUNDS);
  assert.deepEqual(r.steps.map((s) => s.finishReason), Array(ROUNDS).fill('tool-calls'));
}

async function langchainLoop(url) {
  const model = new ChatOpenAI({ model: 'stories260K', apiKey: 'unused', maxRetries: 0, maxTokens: MAX, configuration: { baseURL: url + '/v1' } });
  const bound = model.bindTools(
    [{ type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: WEATHER } }],
    { tool_choice: 'required', parallel_tool_calls: false },
  );
  const messages = [{ role: 'user', content: prompt }];
  for (let round = 0; round < ROUNDS; ++round) {
    const reply = await bound.invoke(messages);
    assert.equal(reply.tool_calls.length, 1, JSON.stringify(reply));
    messages.push(reply);
    for (const call of reply.tool_calls)
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(weather(call.args)) });
  }
}

// '' is the model's own (none: the ChatML fallback, which knows no tools). gpt-oss is left to
// tests/chat/tool_prompt_test.cpp: its calls come after a free-text analysis channel, which a
// random-weight model never closes.
const TEMPLATES = ['', 'gemma', 'mistral_instruct', 'llama2_chat', 'qwen2_5', 'qwen3', 'qwen3_coder', 'llama3_1',
  'llama3_2', 'llama4', 'mistral_nemo', 'mistral_v11', 'deepseek_v3', 'granite', 'command_r7b', 'firefunction_v2',
  'phi3'];
for (const template of TEMPLATES) {
  test(`agent loops of three SDKs, three rounds each: ${template || 'no template (ChatML)'}`, async () => {
    await withServer(template, async (srv) => {
      await openaiRunTools(srv.url);
      await vercelSteps(srv.url);
      await langchainLoop(srv.url);
    });
  });
}

test('the generic layout shows the model its own calls and their results', async () => {
  await withServer('', async (srv) => {
    const tok = await postJson(srv.url, '/tokenize', {
      messages: [
        { role: 'user', content: prompt },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '{"temperature": 21}' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER } }],
    });
    assert.equal(tok.status, 200, tok.text);
    const text = (await postJson(srv.url, '/detokenize', { tokens: tok.json.tokens })).json.prompt;
    assert.ok(text.includes('{"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris"}}]}'), text);
    assert.ok(text.includes('{"temperature": 21}'), text);
  });
});

test('models.retrieve, a named tool_choice, and the legacy functions fields', async () => {
  await withServer('qwen2_5', async (srv) => {
    const client = new OpenAI({ baseURL: srv.url + '/v1', apiKey: 'unused', maxRetries: 0 });
    const list = await client.models.list();
    const id = list.data[0].id;
    const one = await client.models.retrieve(id);
    assert.equal(one.id, id);
    assert.equal(one.object, 'model');
    await assert.rejects(client.models.retrieve('no-such-model'), (e) => e.status === 404);
    // A named function is called once, parallel_tool_calls or not.
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER } }];
    for (let seed = 1; seed <= 3; ++seed) {
      const r = await client.chat.completions.create({
        messages: [{ role: 'user', content: prompt }], tools, seed, temperature: 1, max_tokens: MAX,
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      });
      if (r.choices[0].finish_reason === 'length') continue;
      assert.equal(r.choices[0].message.tool_calls.length, 1, JSON.stringify(r.choices[0]));
    }
    // functions / function_call: mapped to tools, answered in their own shape, streamed too.
    const legacy = {
      messages: [{ role: 'user', content: prompt }], max_tokens: MAX,
      functions: [{ name: 'get_weather', parameters: WEATHER }], function_call: { name: 'get_weather' },
    };
    const r = await postJson(srv.url, '/v1/chat/completions', legacy);
    assert.equal(r.status, 200, r.text);
    const c = r.json.choices[0];
    assert.equal(c.finish_reason, 'function_call', r.text);
    assert.equal(c.message.function_call.name, 'get_weather');
    assert.equal(JSON.parse(c.message.function_call.arguments).city.length <= 12, true);
    assert.equal(c.message.tool_calls, undefined);
    const stream = await client.chat.completions.create({ ...legacy, stream: true });
    let name = '', args = '', finish = null;
    for await (const chunk of stream)
      for (const ch of chunk.choices) {
        if (ch.delta.function_call?.name) name += ch.delta.function_call.name;
        args += ch.delta.function_call?.arguments ?? '';
        assert.equal(ch.delta.tool_calls, undefined);
        if (ch.finish_reason) finish = ch.finish_reason;
      }
    assert.equal(name, 'get_weather');
    assert.equal(finish, 'function_call');
    JSON.parse(args);
    const both = await postJson(srv.url, '/v1/chat/completions', { ...legacy, tools });
    assert.equal(both.status, 400, both.text);
    assert.equal(both.json.error.param, 'functions');
  });
});
