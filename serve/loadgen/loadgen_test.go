package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	_, err := Run(context.Background(), o, Prompt{Words: []string{"a"}}, 2)
	require.ErrorContains(t, err, "generated 1 tokens, not 5")
	o.MaxTokens = 1
	lv, err := Run(context.Background(), o, Prompt{Words: []string{"a"}}, 2)
	require.NoError(t, err)
	require.Equal(t, 2, lv.Generated)
	require.Equal(t, 7, lv.PromptTokens)
}
