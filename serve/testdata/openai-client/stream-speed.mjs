// Usage: node stream-speed.mjs BASE_URL CHAT_MODEL REPS MAX_TOKENS
// Issue 33's serve-speed check: streamed chat through the official client at
// temperature 0.7, timed from the first streamed token to the last. Prints
// one line per run and a JSON summary (tokens per second over the tokens
// after the first, which is what a chained tg128 measures). Each run's line
// also gives the client's own CPU time (user+sys of this process, all its
// threads) from the first streamed token to the last: on a machine whose
// cores the server fills, that time is taken from the server.
import OpenAI from 'openai';
import { readdirSync, readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

// The client's garbage collections (V8's, as perf_hooks reports them), to
// tell a run that collected from one that did not.
const gcs = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) gcs.push(e); }).observe({ entryTypes: ['gc'] });
const gcIn = (from, to) => {
  const in_ = gcs.filter((e) => e.startTime >= from && e.startTime <= to);
  return `${in_.length} (${in_.reduce((a, e) => a + e.duration, 0).toFixed(1)} ms)`;
};

// With HARK_PID set (the server's process id, Linux), each run's line also
// gives, first token to last, the server's threads' time on a CPU and time
// runnable but waiting for one (/proc/PID/task/*/schedstat), and the same for
// this client: what the two took from each other on a machine they share.
const sched = (pid) => {
  let run = 0, wait = 0;
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      try {
        const [r, w] = readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ').map(Number);
        run += r; wait += w;
      } catch { /* the thread ended */ }
    }
  } catch { return null; }
  return { run, wait };
};
const serverPid = process.env.HARK_PID;
// the server's minor page faults (/proc/PID/stat's minflt, all threads)
const minflt = (pid) => {
  try { return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[7]); } catch { return NaN; }
};
const schedDelta = (a, b) => a && b ? `${((b.run - a.run) / 1e6).toFixed(1)} ms on CPU, ${((b.wait - a.wait) / 1e6).toFixed(1)} ms waiting` : 'n/a';

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
  let s0, s1, c0, c1, f0, f1; // schedstat of the server and the client at the first token and the stream's end
  for await (const c of stream) {
    if (c.usage) tokens = c.usage.completion_tokens;
    if (c.choices?.[0]?.delta?.content || c.choices?.[0]?.delta?.content === '') {
      const t = performance.now();
      if (!first) {
        first = t; cpu0 = process.cpuUsage();
        if (serverPid) { s0 = sched(serverPid); c0 = sched(process.pid); f0 = minflt(serverPid); }
      }
      last = t;
      cpu = process.cpuUsage(cpu0);
    }
  }
  // read after the stream (not at each token, which would add to the
  // client's work): the usage chunk and [DONE] come within a millisecond
  if (serverPid) { s1 = sched(serverPid); c1 = sched(process.pid); f1 = minflt(serverPid); }
  await new Promise((resolve) => setImmediate(resolve)); // the observer's entries of this run
  const tps = (tokens - 1) / ((last - first) / 1000);
  if (r > 0) runs.push(tps);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(`run ${r}${r ? '' : ' (warm-up)'}: ${tokens} tokens, first to last ${(last - first).toFixed(1)} ms, ` +
    `client CPU ${cpuMs.toFixed(1)} ms (${(cpuMs / Math.max(tokens - 1, 1)).toFixed(3)} ms a token), ` +
    `client GCs ${gcIn(first, last)}, ` +
    (serverPid ? `server ${schedDelta(s0, s1)}, ${f1 - f0} page faults, client ${schedDelta(c0, c1)}, ` : '') +
    `${tps.toFixed(2)} tok/s`); // last: speed-cpu.sh and split.sh read the field before it
}
const mean = runs.reduce((a, b) => a + b, 0) / runs.length;
const sd = Math.sqrt(runs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(runs.length - 1, 1));
console.log(JSON.stringify({ model, reps, maxTokens, tokPerSec: +mean.toFixed(2), sd: +sd.toFixed(2) }));
