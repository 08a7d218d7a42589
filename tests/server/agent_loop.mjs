// The agent loop of docs/server-api.md: the openai client calls a local function for the model
// and sends the result back, until the model answers in text. Run against a brisk server:
//   node tests/server/agent_loop.mjs http://127.0.0.1:8080/v1
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.argv[2] ?? 'http://127.0.0.1:8080/v1', apiKey: 'unused' });
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 24 }, unit: { enum: ['celsius', 'fahrenheit'] } },
      required: ['city'],
      additionalProperties: false,
    },
  },
}];
const local = { get_weather: ({ city, unit = 'celsius' }) => ({ city, unit, temperature: 21, sky: 'clear' }) };

const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
for (let turn = 0; turn < 4; ++turn) {
  // The first turn must call a tool; later ones may answer.
  const r = await client.chat.completions.create({
    messages, tools, tool_choice: turn === 0 ? 'required' : 'none', max_tokens: turn === 0 ? 200 : 40, temperature: 0.7, seed: 1,
  });
  const msg = r.choices[0].message;
  if (r.choices[0].finish_reason === 'length' && msg.tool_calls) throw new Error('a call ran out of max_tokens');
  messages.push(msg);
  if (!msg.tool_calls?.length) {
    console.log(`assistant: ${msg.content}`);
    break;
  }
  for (const call of msg.tool_calls) {
    const args = JSON.parse(call.function.arguments);
    const result = local[call.function.name](args);
    console.log(`call ${call.function.name}(${call.function.arguments}) -> ${JSON.stringify(result)}`);
    messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
  }
}
