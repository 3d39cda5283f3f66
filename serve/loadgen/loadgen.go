// Package loadgen is `hark bench serve`: a load generator for a running
// server speaking the OpenAI API. Each level runs C concurrent streams of
// streamed chat completions of a fixed length (Hark's ignore_eos) and
// reports the aggregate generation speed, the time to first token and the
// per-token latency, as serving benchmarks (vLLM's, llama.cpp's) do.
package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options is one benchmark: the server, the model and the request shape.
type Options struct {
	URL    string // the server's base URL (http://127.0.0.1:8080)
	APIKey string // sent as a Bearer token when set
	Model  string
	// PromptTokens is the prompt's length as the server counts it (chat
	// template included); Calibrate finds the text that has it.
	PromptTokens int
	MaxTokens    int // generated tokens per request (exact: ignore_eos)
	// Requests is how many requests each stream sends, one after another
	// (0: 1).
	Requests    int
	Temperature float64
	Client      *http.Client // nil: http.DefaultClient
	// LongPrompt, when positive, is the length of one more request each
	// level sends once every stream has its first LongAfter tokens (a
	// long prompt arriving while the streams run, issue #38); its own
	// prompt comes from Calibrate (CalibrateLong) and it generates one
	// token. The level then reports how long the running streams waited
	// (Level.Long).
	LongPrompt int
	LongAfter  int // 0: 16, at most MaxTokens/2
	// PerToken asks every request for logprobs, whose entries say how
	// many tokens each streamed chunk carries (a token whose text the
	// server holds back, a partial character, comes with the next): a
	// chunk of n tokens after a gap g counts n gaps of g/n, so the gaps
	// are the tokens' and not the chunks' (the long prompt's effect on
	// the engine, without the text's). The server then also computes the
	// logprobs.
	PerToken bool
	// Trace, when set, gets a line a finished request: "tokens SEED
	// FIRST END..." (Unix µs of its first token and of each later one's
	// arrival), to place a stream's gaps in a server's step trace.
	Trace io.Writer
}

// longAfter is how many tokens every stream has before the long prompt
// goes out.
func (o Options) longAfter() int {
	n := o.LongAfter
	if n <= 0 {
		n = 16
	}
	return max(1, min(n, o.MaxTokens/2))
}

// Level is the result of one concurrency level.
type Level struct {
	Concurrency  int
	Requests     int
	PromptTokens int // as the server counted them (each request's)
	Generated    int // tokens, all requests
	Wall         time.Duration
	// TTFT is the time from sending a request to its first token, and
	// TokenLatency the time between successive tokens of a stream
	// (chunks: the server streams one token a chunk unless it holds text
	// back, a stop string's prefix or a split character).
	TTFT, TokenLatency Percentiles
	// Long is the long prompt's effect (Options.LongPrompt), zero without.
	Long LongPromptEffect
}

// Long is a level's long request: the calibrated Options.LongPrompt and
// the seed of its word order (a level's own, so that no level finds the
// last one's long prompt in the server's prefix cache).
type Long struct {
	Prompt Prompt
	Seed   uint64
}

// LongPromptEffect is what one long prompt did to the streams running
// beside it: its own time to first token (its prefill, as the server
// interleaves it), and the longest gap between two tokens of any running
// stream that ended after the long prompt was sent, against the level's
// median gap (Level.TokenLatency.P50).
type LongPromptEffect struct {
	PromptTokens int // as the server counted them
	TTFT         time.Duration
	LongestGap   time.Duration
	// Gaps is how many token gaps of the running streams ended after the
	// long prompt was sent (0: it came after they had all finished, and
	// LongestGap says nothing).
	Gaps int
	// Sent is when the long prompt went out, and LongestGapEnd when the
	// longest gap ended (to place them in a server's step trace,
	// $HARK_BATCH_TRACE).
	Sent, LongestGapEnd time.Time
}

// GapRatio is LongestGap over the level's median token gap.
func (l Level) GapRatio() float64 {
	if l.TokenLatency.P50 <= 0 {
		return 0
	}
	return float64(l.Long.LongestGap) / float64(l.TokenLatency.P50)
}

// TokensPerSecond is the aggregate generation speed: every stream's tokens
// over the level's wall time.
func (l Level) TokensPerSecond() float64 { return float64(l.Generated) / l.Wall.Seconds() }

// Percentiles summarises durations.
type Percentiles struct{ Mean, P50, P95 time.Duration }

func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	// Nearest rank: the smallest value with at least p of the samples at
	// or below it.
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Percentiles{Mean: sum / time.Duration(len(s)), P50: rank(0.50), P95: rank(0.95)}
}

// maxPromptWords bounds the calibrated prompt (a server's context is
// far smaller).
const maxPromptWords = 1 << 16

// Prompt is a calibrated prompt: words whose order each request shuffles
// (the words are tokenized one by one, so every order has the same
// length, and no two requests share more than the chat template's prefix,
// as real clients do not), after a fixed first one.
type Prompt struct {
	Words  []string
	Tokens int // as the server counts them
}

// Text is the prompt of request seed.
func (p Prompt) Text(seed uint64) string {
	w := slices.Clone(p.Words)
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	r.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
	return "Text: " + strings.Join(w, " ")
}

// Calibrate finds a prompt the server counts as o.PromptTokens tokens
// (chat template included), or the nearest below it: the template's
// tokens are the server's to know, so the length is measured (one-token
// requests) rather than guessed. Ordinary words come first, stepping by
// the difference; " a", a token in every vocabulary, fills the rest.
func Calibrate(ctx context.Context, o Options) (Prompt, error) {
	return calibrate(ctx, o, o.PromptTokens)
}

// CalibrateLong is Calibrate for the long prompt (Options.LongPrompt).
func CalibrateLong(ctx context.Context, o Options) (Prompt, error) {
	return calibrate(ctx, o, o.LongPrompt)
}

func calibrate(ctx context.Context, o Options, tokens int) (Prompt, error) {
	o.PromptTokens = tokens
	if o.PromptTokens < 1 {
		return Prompt{}, errors.New("loadgen: the prompt needs at least one token")
	}
	count := func(words, fill int) (Prompt, error) {
		p := Prompt{Words: promptWords(words, fill)}
		r, err := o.request(ctx, p.Text(0), 1, 0, nil, nil)
		p.Tokens = r.promptTokens
		return p, err
	}
	var best Prompt
	words := o.PromptTokens / 2
	for range 8 {
		p, err := count(words, 0)
		if err != nil {
			return Prompt{}, err
		}
		if p.Tokens <= o.PromptTokens && p.Tokens > best.Tokens {
			best = p
		}
		next := min(max(words+(o.PromptTokens-p.Tokens)/2, 0), maxPromptWords)
		if p.Tokens == o.PromptTokens || next == words {
			break
		}
		words = next
	}
	words = len(best.Words)
	for fill := o.PromptTokens - best.Tokens; fill > 0 && best.Tokens < o.PromptTokens; {
		p, err := count(words, fill)
		if err != nil {
			return Prompt{}, err
		}
		if p.Tokens <= o.PromptTokens && p.Tokens > best.Tokens {
			best = p
		} else {
			break // a filler that is not one token: keep the nearest below
		}
		fill += o.PromptTokens - p.Tokens
	}
	if best.Tokens == 0 {
		return Prompt{}, fmt.Errorf("loadgen: the server counts even the shortest prompt as more than %d tokens", o.PromptTokens)
	}
	return best, nil
}

// promptWords is n ordinary words, then fill fillers.
func promptWords(n, fill int) []string {
	vocab := strings.Fields("the cat sat on a mat and the dog ran to the park where kids play with a red ball every day")
	w := make([]string, 0, n+fill)
	for i := range n {
		w = append(w, vocab[i%len(vocab)])
	}
	for range fill {
		w = append(w, "a")
	}
	return w
}

// Run runs one level: c streams, each sending o.Requests requests of
// p, one after another, each with its own seed and word order. Any request that fails, or that does not
// generate exactly o.MaxTokens tokens, fails the level. With long (nil:
// none) one more request goes out once every stream's first request has
// o.longAfter() tokens.
func Run(ctx context.Context, o Options, p Prompt, c int, long *Long) (Level, error) {
	if c < 1 || o.MaxTokens < 1 {
		return Level{}, errors.New("loadgen: concurrency and max tokens must be at least 1")
	}
	reqs := max(o.Requests, 1)
	lv := Level{Concurrency: c, Requests: c * reqs}
	var (
		mu        sync.Mutex
		ttft, itl []time.Duration
		firstErr  error
		ends      []time.Time // each gap's end, beside itl
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	var wg sync.WaitGroup
	// the streams' first requests count down warm as each reaches
	// longAfter tokens; the long request waits for zero
	var warm sync.WaitGroup
	var longSent time.Time
	if long != nil {
		warm.Add(c)
		wg.Go(func() {
			ready := make(chan struct{})
			go func() { warm.Wait(); close(ready) }()
			select {
			case <-ready:
			case <-ctx.Done():
				return
			}
			mu.Lock()
			longSent = time.Now()
			mu.Unlock()
			r, err := o.request(ctx, long.Prompt.Text(long.Seed), 1, long.Seed, &o.Temperature, nil)
			if err != nil {
				fail(fmt.Errorf("loadgen: the long prompt: %w", err))
				return
			}
			mu.Lock()
			lv.Long.PromptTokens, lv.Long.TTFT = r.promptTokens, r.ttft
			mu.Unlock()
		})
	}
	start := time.Now()
	for s := range c {
		wg.Go(func() {
			for i := range reqs {
				seed := uint64(s*reqs + i + 1)
				var onToken func(int)
				counted := long == nil || i > 0
				if !counted {
					onToken = func(n int) {
						if !counted && n >= o.longAfter() {
							counted = true
							warm.Done()
						}
					}
				}
				r, err := o.request(ctx, p.Text(seed), o.MaxTokens, seed, &o.Temperature, onToken)
				if !counted { // it failed first: the long request must not wait on it
					warm.Done()
				}
				if err == nil && r.generated != o.MaxTokens {
					err = fmt.Errorf("loadgen: a request generated %d tokens, not %d (does the server take ignore_eos?)", r.generated, o.MaxTokens)
				}
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				if o.Trace != nil {
					traceTokens(o.Trace, seed, r)
				}
				lv.Generated += r.generated
				lv.PromptTokens = r.promptTokens
				ttft = append(ttft, r.ttft)
				itl = append(itl, r.gaps...)
				ends = append(ends, r.ends...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	lv.Wall = time.Since(start)
	if firstErr != nil {
		return lv, firstErr
	}
	lv.TTFT, lv.TokenLatency = percentiles(ttft), percentiles(itl)
	if long != nil {
		lv.Long.Sent = longSent
		for i, e := range ends {
			if e.After(longSent) {
				lv.Long.Gaps++
				if itl[i] > lv.Long.LongestGap {
					lv.Long.LongestGap, lv.Long.LongestGapEnd = itl[i], e
				}
			}
		}
	}
	return lv, nil
}

// traceTokens writes r's line to Options.Trace (a failed write is left
// alone: a trace never fails a level).
func traceTokens(w io.Writer, seed uint64, r result) {
	var b strings.Builder
	fmt.Fprintf(&b, "tokens %d %d", seed, r.first.UnixMicro())
	for _, e := range r.ends {
		fmt.Fprintf(&b, " %d", e.UnixMicro())
	}
	b.WriteByte('\n')
	_, _ = io.WriteString(w, b.String()) // a trace never fails a level
}

// Chunk is what a load generator reads of a streamed chat completion's
// event: the content delta, the usage and an error.
type Chunk struct {
	Choices []struct {
		Delta struct {
			Content *string `json:"content"`
		} `json:"delta"`
		// Logprobs has an entry a token of the chunk (asked for by
		// Options.PerToken)
		Logprobs *struct {
			Content []json.RawMessage `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// result is one request's measurements.
type result struct {
	promptTokens, generated int
	ttft                    time.Duration
	gaps                    []time.Duration // between successive content chunks
	ends                    []time.Time     // when each gap ended
	first                   time.Time       // the first content chunk's arrival
}

// maxLine bounds one server-sent event line.
const maxLine = 1 << 20

// request sends one streamed chat completion and times its chunks.
// temperature nil asks for greedy decoding (calibration); onToken, when
// set, is told the count of content chunks after each.
func (o Options) request(ctx context.Context, text string, maxTokens int, seed uint64, temperature *float64,
	onToken func(int)) (result, error) {
	var r result
	temp := 0.0
	if temperature != nil {
		temp = *temperature
	}
	fields := map[string]any{
		"model": o.Model, "stream": true, "max_tokens": maxTokens, "ignore_eos": true,
		"temperature": temp, "seed": seed, "stream_options": map[string]bool{"include_usage": true},
		"messages": []map[string]string{{"role": "user", "content": text}},
	}
	if o.PerToken {
		fields["logprobs"] = true
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return r, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.URL, "/")+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return r, err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	client := o.Client
	if client == nil {
		client = http.DefaultClient
	}
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return r, fmt.Errorf("loadgen: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var last time.Time
	done := false
	tokens := 0 // content tokens so far (chunks, or their logprobs entries: PerToken)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			break
		}
		now := time.Now()
		var c Chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return r, fmt.Errorf("loadgen: a chunk is not JSON: %w", err)
		}
		if c.Error != nil {
			return r, fmt.Errorf("loadgen: the stream failed: %s", c.Error.Message)
		}
		if c.Usage != nil {
			r.promptTokens, r.generated = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
		if len(c.Choices) == 0 || c.Choices[0].Delta.Content == nil || *c.Choices[0].Delta.Content == "" {
			continue // the role chunk, the finish chunk, the usage chunk
		}
		n := 1 // the tokens the chunk carries
		if o.PerToken {
			lp := c.Choices[0].Logprobs
			if lp == nil || len(lp.Content) == 0 {
				return r, errors.New("loadgen: a chunk without logprobs: the server does not count its tokens (PerToken)")
			}
			n = len(lp.Content)
		}
		if last.IsZero() {
			// the first chunk's wait is the TTFT (any other token of it
			// came with the first: no gap)
			r.ttft, r.first = now.Sub(sent), now
		} else {
			for range n {
				r.gaps = append(r.gaps, now.Sub(last)/time.Duration(n))
				r.ends = append(r.ends, now)
			}
		}
		last = now
		tokens += n
		if onToken != nil {
			onToken(tokens)
		}
	}
	if err := sc.Err(); err != nil {
		return r, err
	}
	if !done {
		return r, errors.New("loadgen: the stream ended without [DONE]")
	}
	return r, nil
}
