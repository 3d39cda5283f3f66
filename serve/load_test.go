package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// TestLoad sends 200 mixed requests from 8 concurrent clients: good ones
// (chat, streamed completions, transcriptions, model lists) among
// malformed JSON, wrong content types, oversized bodies and uploads,
// unknown models and clients leaving mid-stream. Every good request must
// get the right answer, every bad one a 4xx with a message, and memory
// must settle.
func TestLoad(t *testing.T) {
	const clients, perClient = 8, 25
	_, url := startServer(t, Config{MaxBody: 64 << 10, MaxUpload: 1 << 20})
	wav, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	wavType, wavBuf := audioForm(t, wav, "model", "tiny", "response_format", "text")
	bigType, bigBuf := audioForm(t, bytes.Repeat([]byte{1}, 3<<20), "model", "tiny")
	wavForm, bigForm := wavBuf.Bytes(), bigBuf.Bytes()
	const chatBody = `{"model":"stories","messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":24,"temperature":0}`
	const streamBody = `{"model":"stories","prompt":"Once upon a time","max_tokens":24,"temperature":0,"stream":true}`

	// First requests: the answers to expect, and the memory baseline with
	// both models loaded.
	answer := chatCall(t, url+"/v1/chat/completions", chatBody).Choices[0].Message.Content
	require.NotEmpty(t, answer)
	st, b := postForm(t, url+"/v1/audio/transcriptions", wav, "model", "tiny")
	require.Equal(t, 200, st, "%s", b)
	runtime.GC()
	debug.FreeOSMemory()
	rss0 := shared.ProcStatusBytes(t, "VmRSS")

	kinds := []string{"chat", "stream", "malformed", "content-type", "big-upload", "unknown-model", "disconnect", "models", "bad-param", "big-json"}
	type sample struct {
		kind string
		d    time.Duration
	}
	var (
		mu      sync.Mutex
		samples []sample
		errs    []string
	)
	fail := func(format string, a ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	// checkError: a 4xx with OpenAI's error shape and a message.
	checkError := func(kind string, resp *http.Response, want int) {
		b, _ := io.ReadAll(resp.Body)
		var e struct{ Error apiError }
		if resp.StatusCode != want || json.Unmarshal(b, &e) != nil || e.Error.Message == "" {
			fail("%s: status %d (want %d): %s", kind, resp.StatusCode, want, b)
		}
	}
	do := func(kind string) {
		var (
			resp *http.Response
			err  error
		)
		switch kind {
		case "transcribe":
			resp, err = http.Post(url+"/v1/audio/transcriptions", wavType, bytes.NewReader(wavForm))
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || string(b) != jfkText+"\n" {
					fail("transcribe: %d %q", resp.StatusCode, b)
				}
			}
		case "chat":
			resp, err = http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody))
			if err == nil {
				var r chatResponse
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || len(r.Choices) != 1 || r.Choices[0].Message.Content != answer {
					fail("chat: %d %s", resp.StatusCode, b)
				}
			}
		case "stream":
			resp, err = http.Post(url+"/v1/completions", "application/json", strings.NewReader(streamBody))
			if err == nil {
				// Parsed by hand: require must not run off the test's goroutine.
				b, _ := io.ReadAll(resp.Body)
				var text strings.Builder
				events := strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n")
				done := len(events) > 0 && events[len(events)-1] == "data: [DONE]"
				for _, ev := range events[:max(len(events)-1, 0)] {
					var c struct{ Choices []struct{ Text string } }
					data, ok := strings.CutPrefix(ev, "data: ")
					if !ok || json.Unmarshal([]byte(data), &c) != nil || len(c.Choices) != 1 {
						fail("stream: bad event %q", ev)
						break
					}
					text.WriteString(c.Choices[0].Text)
				}
				if resp.StatusCode != 200 || !done || text.String() != answer {
					fail("stream: %d done=%v %q", resp.StatusCode, done, text.String())
				}
			}
		case "malformed":
			resp, err = http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"stories","messages":[`))
			if err == nil {
				checkError(kind, resp, 400)
			}
		case "content-type":
			resp, err = http.Post(url+"/v1/chat/completions", "text/plain", strings.NewReader(chatBody))
			if err == nil {
				checkError(kind, resp, 415)
			}
		case "big-upload":
			resp, err = http.Post(url+"/v1/audio/transcriptions", bigType, bytes.NewReader(bigForm))
			if err == nil {
				checkError(kind, resp, 413)
			}
		case "unknown-model":
			resp, err = http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(strings.Replace(chatBody, "stories", "llama-70b", 1)))
			if err == nil {
				checkError(kind, resp, 404)
			}
		case "disconnect":
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions",
				strings.NewReader(`{"model":"stories","prompt":"The cat","max_tokens":400,"stream":true}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err = http.DefaultClient.Do(req)
			if err == nil {
				buf := make([]byte, 32)
				if _, rerr := io.ReadFull(resp.Body, buf); rerr != nil || !bytes.HasPrefix(buf, []byte("data: ")) {
					fail("disconnect: %v %q", rerr, buf)
				}
			}
			cancel()
		case "models":
			resp, err = http.Get(url + "/v1/models")
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"stories"`) || !strings.Contains(string(b), `"id":"tiny"`) {
					fail("models: %d %s", resp.StatusCode, b)
				}
			}
		case "bad-param":
			resp, err = http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"stories","prompt":"x","temperature":-1}`))
			if err == nil {
				checkError(kind, resp, 400)
			}
		case "big-json":
			resp, err = http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"stories","prompt":"`+strings.Repeat("a", 70<<10)+`"}`))
			if err == nil {
				checkError(kind, resp, 413)
			}
		}
		if err != nil {
			fail("%s: %v", kind, err)
			return
		}
		resp.Body.Close()
	}

	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for j := range perClient {
				kind := "transcribe"
				if j != c%perClient { // one transcription per client, at different times
					kind = kinds[(c+j)%len(kinds)]
				}
				t0 := time.Now()
				do(kind)
				mu.Lock()
				samples = append(samples, sample{kind, time.Since(t0)})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	require.Empty(t, errs)
	require.Len(t, samples, clients*perClient)

	// The server still answers right after the storm.
	require.Equal(t, answer, chatCall(t, url+"/v1/chat/completions", chatBody).Choices[0].Message.Content)
	runtime.GC()
	debug.FreeOSMemory()
	rss1 := shared.ProcStatusBytes(t, "VmRSS")

	byKind := map[string][]time.Duration{}
	var all []time.Duration
	for _, s := range samples {
		byKind[s.kind] = append(byKind[s.kind], s.d)
		all = append(all, s.d)
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		slices.Sort(d)
		return d[min(len(d)-1, int(float64(len(d))*p))]
	}
	t.Logf("%d requests from %d clients in %v: %.1f req/s; latency p50 %v p95 %v max %v",
		len(all), clients, wall.Round(time.Millisecond), float64(len(all))/wall.Seconds(),
		pct(all, 0.5).Round(time.Millisecond), pct(all, 0.95).Round(time.Millisecond), pct(all, 1).Round(time.Millisecond))
	for _, k := range append([]string{"transcribe"}, kinds...) {
		d := byKind[k]
		t.Logf("  %-13s n=%3d p50 %8v p95 %8v max %8v", k, len(d), pct(d, 0.5).Round(100*time.Microsecond),
			pct(d, 0.95).Round(100*time.Microsecond), pct(d, 1).Round(100*time.Microsecond))
	}
	t.Logf("RSS after the first requests %.1f MiB, after the load %.1f MiB (%+.1f%%)",
		float64(rss0)/(1<<20), float64(rss1)/(1<<20), 100*float64(rss1-rss0)/float64(rss0))
	require.Less(t, float64(rss1), 1.2*float64(rss0), "resident memory grew by more than 20%%")
}
