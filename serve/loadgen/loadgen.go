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
	if o.PromptTokens < 1 {
		return Prompt{}, errors.New("loadgen: the prompt needs at least one token")
	}
	count := func(words, fill int) (Prompt, error) {
		p := Prompt{Words: promptWords(words, fill)}
		r, err := o.request(ctx, p.Text(0), 1, 0, nil)
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
// generate exactly o.MaxTokens tokens, fails the level.
func Run(ctx context.Context, o Options, p Prompt, c int) (Level, error) {
	if c < 1 || o.MaxTokens < 1 {
		return Level{}, errors.New("loadgen: concurrency and max tokens must be at least 1")
	}
	reqs := max(o.Requests, 1)
	lv := Level{Concurrency: c, Requests: c * reqs}
	var (
		mu        sync.Mutex
		ttft, itl []time.Duration
		firstErr  error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for s := range c {
		wg.Go(func() {
			for i := range reqs {
				seed := uint64(s*reqs + i + 1)
				r, err := o.request(ctx, p.Text(seed), o.MaxTokens, seed, &o.Temperature)
				if err == nil && r.generated != o.MaxTokens {
					err = fmt.Errorf("loadgen: a request generated %d tokens, not %d (does the server take ignore_eos?)", r.generated, o.MaxTokens)
				}
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					return
				}
				lv.Generated += r.generated
				lv.PromptTokens = r.promptTokens
				ttft = append(ttft, r.ttft)
				itl = append(itl, r.gaps...)
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
	return lv, nil
}

// Chunk is what a load generator reads of a streamed chat completion's
// event: the content delta, the usage and an error.
type Chunk struct {
	Choices []struct {
		Delta struct {
			Content *string `json:"content"`
		} `json:"delta"`
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
}

// maxLine bounds one server-sent event line.
const maxLine = 1 << 20

// request sends one streamed chat completion and times its chunks.
// temperature nil asks for greedy decoding (calibration).
func (o Options) request(ctx context.Context, text string, maxTokens int, seed uint64, temperature *float64) (result, error) {
	var r result
	temp := 0.0
	if temperature != nil {
		temp = *temperature
	}
	body, err := json.Marshal(map[string]any{
		"model": o.Model, "stream": true, "max_tokens": maxTokens, "ignore_eos": true,
		"temperature": temp, "seed": seed, "stream_options": map[string]bool{"include_usage": true},
		"messages": []map[string]string{{"role": "user", "content": text}},
	})
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
		if last.IsZero() {
			r.ttft = now.Sub(sent)
		} else {
			r.gaps = append(r.gaps, now.Sub(last))
		}
		last = now
	}
	if err := sc.Err(); err != nil {
		return r, err
	}
	if !done {
		return r, errors.New("loadgen: the stream ended without [DONE]")
	}
	return r, nil
}
