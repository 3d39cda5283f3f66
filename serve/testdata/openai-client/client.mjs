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
try {
  await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] });
} catch (e) {
  out.unknownModel = { status: e.status, message: e.message };
}
console.log(JSON.stringify(out));
