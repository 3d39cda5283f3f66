// Usage: node raw-fetch.mjs BASE_URL MODEL REPS MAX_TOKENS
// The official client's transport without the client (node33): Node's own
// fetch (undici), the SSE body split into events and each JSON.parse'd, as
// stream-speed.mjs's run lines but without the openai package: what the
// package adds to a streamed token's client CPU is the difference.
const [base, model, reps, max] = process.argv.slice(2);
for (let r = 0; r <= +reps; r++) { // run 0 warms up and is not printed
  const res = await fetch(base + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: +max, stream: true, temperature: 0.7, seed: r + 1,
      messages: [{ role: 'user', content: 'Once upon a time' }] }),
  });
  const dec = new TextDecoder();
  let buf = '', n = 0, cpu0, cpu, first = 0, last = 0;
  for await (const b of res.body) {
    buf += dec.decode(b, { stream: true });
    for (let i; (i = buf.indexOf('\n\n')) >= 0;) {
      const ev = buf.slice(6, i); // after "data: "
      buf = buf.slice(i + 2);
      if (ev === '[DONE]') continue;
      if (JSON.parse(ev).choices?.[0]?.delta?.content !== undefined) {
        const t = performance.now();
        if (!first) { first = t; cpu0 = process.cpuUsage(); }
        last = t; cpu = process.cpuUsage(cpu0); n++;
      }
    }
  }
  const ms = (cpu.user + cpu.system) / 1000;
  if (r) console.log(`run ${r}: ${n} content events, first to last ${(last - first).toFixed(1)} ms, client CPU ${ms.toFixed(1)} ms (${(ms / (n - 1)).toFixed(3)} ms a token)`);
}
