// Usage: node client.mjs BASE_URL AUDIO_FILE WHISPER_MODEL CHAT_MODEL
// Prints one JSON object with what the official client got back.
import OpenAI from 'openai';
import fs from 'node:fs';

const [base, audio, whisperModel, chatModel] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base + '/v1', apiKey: 'unused-on-loopback' });
const out = {};
out.models = (await client.models.list()).data.map((m) => m.id);
const tr = await client.audio.transcriptions.create({ file: fs.createReadStream(audio), model: whisperModel });
out.transcription = tr.text;
const stream = await client.chat.completions.create({
  model: chatModel, messages: [{ role: 'user', content: 'Once upon a time' }],
  stream: true, max_tokens: 16, temperature: 0,
});
out.chunks = 0;
out.chat = '';
for await (const c of stream) {
  out.chunks++;
  out.chat += c.choices[0]?.delta?.content ?? '';
}
// Logprobs, non-streamed: at temperature 0 each token is its position's
// most likely one. Informational fields are accepted.
const lp = await client.chat.completions.create({
  model: chatModel, messages: [{ role: 'user', content: 'Once upon a time' }],
  max_tokens: 8, temperature: 0, logprobs: true, top_logprobs: 3, seed: 7,
  user: 'test-user', metadata: { purpose: 'test' }, store: false, service_tier: 'auto', parallel_tool_calls: false,
});
out.logprobs = {
  content: lp.choices[0].message.content,
  tokens: lp.choices[0].logprobs.content.map((t) => t.token),
  logprobs: lp.choices[0].logprobs.content.map((t) => t.logprob),
  top: lp.choices[0].logprobs.content.map((t) => t.top_logprobs.map((x) => x.token)),
  topLogprobs: lp.choices[0].logprobs.content.map((t) => t.top_logprobs.map((x) => x.logprob)),
};
// Logprobs, streamed, with the usage chunk.
const ls = await client.chat.completions.create({
  model: chatModel, messages: [{ role: 'user', content: 'Once upon a time' }],
  max_tokens: 8, temperature: 0, logprobs: true, top_logprobs: 2, stream: true, stream_options: { include_usage: true },
});
out.streamLogprobs = { content: '', tokens: [], usage: null };
for await (const c of ls) {
  if (c.usage) out.streamLogprobs.usage = c.usage;
  const ch = c.choices[0];
  if (!ch) continue;
  out.streamLogprobs.content += ch.delta?.content ?? '';
  for (const t of ch.logprobs?.content ?? []) out.streamLogprobs.tokens.push(t.token);
}
// Completions: legacy logprobs, logit_bias, and the penalties.
const cmpl = (extra) => client.completions.create({ model: chatModel, prompt: 'Once upon a time', max_tokens: 48, temperature: 0, ...extra });
const plain = await cmpl({ logprobs: 2 });
out.completions = {
  text: plain.choices[0].text,
  tokens: plain.choices[0].logprobs.tokens,
  top: plain.choices[0].logprobs.top_logprobs.map((m) => Object.keys(m).length),
  offsets: plain.choices[0].logprobs.text_offset,
};
// A bias of +100 on one token id makes it every token at temperature 0.
const boosted = await cmpl({ logit_bias: { 100: 100 }, logprobs: 0, max_tokens: 6 });
out.boosted = { text: boosted.choices[0].text, tokens: boosted.choices[0].logprobs.tokens };
out.penalized = (await cmpl({ frequency_penalty: 2, presence_penalty: 2 })).choices[0].text;
// A field that would change the output and is not supported is refused,
// naming it.
try {
  await client.chat.completions.create({
    model: chatModel, messages: [{ role: 'user', content: 'x' }],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
  });
} catch (e) {
  out.tools = { status: e.status, param: e.param, message: e.message };
}
try {
  await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] });
} catch (e) {
  out.unknownModel = { status: e.status, message: e.message };
}
console.log(JSON.stringify(out));
