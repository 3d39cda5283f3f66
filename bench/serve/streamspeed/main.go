// Command streamspeed is issue 33's serve-speed client for machines without
// Node (the GPU machine): it streams chat completions from a running
// hark serve at temperature 0.7 and reports tokens per second from the first
// streamed token to the last, as bench/serve/speed-cpu.sh's official-client
// script does.
//
//	streamspeed -url http://127.0.0.1:18089 -model NAME [-reps 5] [-n 128]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/harkapp/hark/serve/loadgen"
)

// run streams one chat completion and returns its completion tokens and
// the time from the first content chunk to the last.
func run(url, model string, n, seed int) (int, time.Duration, error) {
	body, _ := json.Marshal(map[string]any{
		"model": model, "messages": []map[string]string{{"role": "user", "content": "Once upon a time"}},
		"stream": true, "max_tokens": n, "temperature": 0.7, "seed": seed,
		"stream_options": map[string]bool{"include_usage": true},
	})
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("status %s", resp.Status)
	}
	var first, last time.Time
	tokens := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c loadgen.Chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return 0, 0, fmt.Errorf("chunk %q: %w", data, err)
		}
		if c.Usage != nil {
			tokens = c.Usage.CompletionTokens
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil {
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			last = now
		}
	}
	return tokens, last.Sub(first), sc.Err()
}

func main() {
	url := flag.String("url", "http://127.0.0.1:18089", "hark serve's base URL")
	model := flag.String("model", "", "chat model name")
	reps := flag.Int("reps", 5, "measured runs (after one warm-up)")
	n := flag.Int("n", 128, "max_tokens")
	flag.Parse()
	var tps []float64
	for r := 0; r <= *reps; r++ {
		tokens, d, err := run(*url, *model, *n, r+1)
		if err != nil {
			fmt.Fprintln(os.Stderr, "streamspeed:", err)
			os.Exit(1)
		}
		v := float64(tokens-1) / d.Seconds()
		if r > 0 {
			tps = append(tps, v)
		}
		fmt.Printf("run %d: %d tokens, first to last %.1f ms, %.2f tok/s\n", r, tokens, float64(d.Microseconds())/1000, v)
	}
	var mean, sd float64
	for _, v := range tps {
		mean += v / float64(len(tps))
	}
	for _, v := range tps {
		sd += (v - mean) * (v - mean) / math.Max(float64(len(tps)-1), 1)
	}
	fmt.Printf("{\"model\":%q,\"reps\":%d,\"maxTokens\":%d,\"tokPerSec\":%.2f,\"sd\":%.2f}\n", *model, *reps, *n, mean, math.Sqrt(sd))
}
