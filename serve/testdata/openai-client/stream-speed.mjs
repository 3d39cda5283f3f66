// Usage: node stream-speed.mjs BASE_URL CHAT_MODEL REPS MAX_TOKENS
// Issue 33's serve-speed check: streamed chat through the official client at
// temperature 0.7, timed from the first streamed token to the last. Prints
// one line per run and a JSON summary (tokens per second over the tokens
// after the first, which is what a chained tg128 measures). Each run's line
// also gives the client's own CPU time (user+sys of this process, all its
// threads) from the first streamed token to the last: on a machine whose
// cores the server fills, that time is taken from the server.
import OpenAI from 'openai';

const [base, model, repsArg, maxArg] = process.argv.slice(2);
const reps = Number(repsArg ?? 5), maxTokens = Number(maxArg ?? 128);
const client = new OpenAI({ baseURL: base + '/v1', apiKey: 'unused-on-loopback' });
const runs = [];
for (let r = 0; r <= reps; r++) { // run 0 warms the model and is not counted
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Once upon a time' }],
    stream: true, max_tokens: maxTokens, temperature: 0.7, seed: r + 1,
    stream_options: { include_usage: true },
  });
  let first = 0, last = 0, tokens = 0, cpu0, cpu = { user: 0, system: 0 };
  for await (const c of stream) {
    if (c.usage) tokens = c.usage.completion_tokens;
    if (c.choices?.[0]?.delta?.content || c.choices?.[0]?.delta?.content === '') {
      const t = performance.now();
      if (!first) { first = t; cpu0 = process.cpuUsage(); }
      last = t;
      cpu = process.cpuUsage(cpu0);
    }
  }
  const tps = (tokens - 1) / ((last - first) / 1000);
  if (r > 0) runs.push(tps);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(`run ${r}${r ? '' : ' (warm-up)'}: ${tokens} tokens, first to last ${(last - first).toFixed(1)} ms, ` +
    `client CPU ${cpuMs.toFixed(1)} ms (${(cpuMs / Math.max(tokens - 1, 1)).toFixed(3)} ms a token), ${tps.toFixed(2)} tok/s`);
}
const mean = runs.reduce((a, b) => a + b, 0) / runs.length;
const sd = Math.sqrt(runs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(runs.length - 1, 1));
console.log(JSON.stringify({ model, reps, maxTokens, tokPerSec: +mean.toFixed(2), sd: +sd.toFixed(2) }));
