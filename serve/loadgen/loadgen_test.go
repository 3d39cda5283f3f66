package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// Nearest-rank percentiles of 1..100 ms.
func TestPercentiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	p := percentiles(d)
	require.Equal(t, 50*time.Millisecond, p.P50)
	require.Equal(t, 95*time.Millisecond, p.P95)
	require.Equal(t, 50500*time.Microsecond, p.Mean)
	require.Equal(t, Percentiles{}, percentiles(nil))
}

// A server that stops short of max_tokens (one that does not take
// ignore_eos) fails the level rather than skewing it.
func TestRunRefusesShortGenerations(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer hs.Close()
	o := Options{URL: hs.URL, Model: "m", MaxTokens: 5}
	_, err := Run(context.Background(), o, Prompt{Words: []string{"a"}}, 2, nil)
	require.ErrorContains(t, err, "generated 1 tokens, not 5")
	o.MaxTokens = 1
	lv, err := Run(context.Background(), o, Prompt{Words: []string{"a"}}, 2, nil)
	require.NoError(t, err)
	require.Equal(t, 2, lv.Generated)
	require.Equal(t, 7, lv.PromptTokens)
}

// The long prompt goes out once every stream has its first LongAfter
// tokens, while they run: the server here holds each stream after those
// tokens until the long request has arrived, so a run that sent it late,
// or never, would not finish; the streams' later gaps all end after it
// was sent and are the ones counted.
func TestRunLongPromptBesideStreams(t *testing.T) {
	const streams, maxTokens, after = 3, 8, 2
	arrived := make(chan struct{})
	var once sync.Once
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		flush := func(s string) {
			fmt.Fprint(w, s)
			w.(http.Flusher).Flush()
		}
		prompt := 7
		if req.MaxTokens == 1 { // the long request
			once.Do(func() { close(arrived) })
			prompt = 4000
		}
		for i := range req.MaxTokens {
			if req.MaxTokens > 1 && i == after {
				select {
				case <-arrived:
				case <-r.Context().Done():
					return
				}
			}
			flush("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
		}
		flush(fmt.Sprintf("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\n", prompt, req.MaxTokens))
		flush("data: [DONE]\n\n")
	}))
	defer hs.Close()
	o := Options{URL: hs.URL, Model: "m", MaxTokens: maxTokens, LongPrompt: 4000, LongAfter: after}
	ctx, cancel := context.WithTimeout(context.Background(), shared.Wait(t, time.Minute))
	defer cancel()
	lv, err := Run(ctx, o, Prompt{Words: []string{"a"}}, streams, &Long{Prompt: Prompt{Words: []string{"b"}}, Seed: 1 << 32})
	require.NoError(t, err)
	require.Equal(t, streams*maxTokens, lv.Generated)
	require.Equal(t, 4000, lv.Long.PromptTokens)
	// tokens after..maxTokens-1 of every stream came after the long
	// request was sent: their gaps, and perhaps the one before
	require.GreaterOrEqual(t, lv.Long.Gaps, streams*(maxTokens-after))
	require.LessOrEqual(t, lv.Long.Gaps, streams*(maxTokens-1))
	require.Positive(t, lv.Long.LongestGap)
	require.GreaterOrEqual(t, lv.Long.LongestGap, lv.TokenLatency.P50)
}

// With PerToken the requests ask for logprobs, and a chunk carrying two
// tokens' text (a token the server held back, sent with the next) counts
// two gaps of half its wait, where the chunk count sees one gap fewer.
func TestPerTokenGaps(t *testing.T) {
	var asked sync.Map
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Logprobs bool `json:"logprobs"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		asked.Store(req.Logprobs, true)
		w.Header().Set("Content-Type", "text/event-stream")
		// 5 tokens in 4 chunks: the third chunk carries tokens 3 and 4
		for _, n := range []int{1, 1, 2, 1} {
			entries := `{"token":"x","logprob":-1}`
			if n == 2 {
				entries += `,{"token":"y","logprob":-1}`
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"logprobs\":{\"content\":[%s]}}]}\n\n", entries)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":5}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer hs.Close()
	o := Options{URL: hs.URL, Model: "m", MaxTokens: 5}
	p := Prompt{Words: []string{"a"}}
	r, err := o.request(context.Background(), p.Text(1), 5, 1, nil, nil)
	require.NoError(t, err)
	require.Len(t, r.gaps, 3, "chunks: 4, so 3 gaps")
	_, plain := asked.Load(false)
	require.True(t, plain, "no logprobs asked without PerToken")
	o.PerToken = true
	var counts []int
	r, err = o.request(context.Background(), p.Text(1), 5, 1, nil, func(n int) { counts = append(counts, n) })
	require.NoError(t, err)
	_, lp := asked.Load(true)
	require.True(t, lp, "logprobs asked with PerToken")
	require.Len(t, r.gaps, 4, "tokens: 5, so 4 gaps")
	require.Equal(t, r.gaps[1], r.gaps[2], "the two-token chunk's wait, halved for each")
	require.Equal(t, r.ends[1], r.ends[2])
	require.Equal(t, []int{1, 2, 4, 5}, counts, "onToken counts tokens, not chunks")

	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer bare.Close()
	o.URL = bare.URL
	_, err = o.request(context.Background(), p.Text(1), 5, 1, nil, nil)
	require.ErrorContains(t, err, "without logprobs", "a server that sends none cannot be counted by token")
}
