package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/harkapp/hark/serve"
	"github.com/harkapp/hark/serve/loadgen"
	"github.com/spf13/cobra"
)

// BenchServeOptions is what `hark bench serve` was asked.
type BenchServeOptions struct {
	loadgen.Options
	Concurrency []int
	TokenTrace  string // a file each request's token times are appended to (loadgen.Options.Trace)
}

func newBenchServeCmd() *cobra.Command {
	o := &BenchServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve --model NAME [flags]",
		Short: "Load-test a running server: aggregate tok/s, time to first token, per-token latency",
		Long: `Send streamed chat completions to a running server speaking the OpenAI API
(hark serve, or another) from --concurrency streams at once, each request
--prompt-tokens long (as the server counts them, chat template included:
the prompt is calibrated with one-token requests first) and generating
exactly --max-tokens tokens (Hark's ignore_eos extension, so no request ends
early). For each concurrency level it prints the aggregate generation speed
(all streams' tokens over the wall time), the time to first token and the
time between tokens (p50 and p95), and the speed-up over the first level.
With --long-prompt N each level also sends one request of an N-token prompt
(one generated token) once every stream has --long-after tokens, and prints
its time to first token and the running streams' longest token gap after it
was sent, against their median gap (issue #38: a long prompt arriving beside
running streams should not stall them).
The gaps are between streamed chunks as they arrive: run hark serve with
--stream-interval 0, or they measure its write interval, not the decode.
A token whose text the server holds back (a partial character) comes in the
next chunk, whose gap then spans two tokens: --per-token asks for logprobs,
whose entries count each chunk's tokens, and counts a gap a token (the
chunk's wait shared among them). --token-trace FILE appends each request's
token arrival times (Unix µs), to place its gaps in the server's step trace
($HARK_BATCH_TRACE).
The API key is --api-key, else $` + serve.EnvAPIKey + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Model == "" {
				return errors.New("bench serve: --model is required")
			}
			if len(o.Concurrency) == 0 {
				return errors.New("bench serve: --concurrency needs at least one level")
			}
			for _, c := range o.Concurrency {
				if c < 1 || c > 1024 {
					return fmt.Errorf("bench serve: --concurrency %d is outside 1..1024", c)
				}
			}
			if o.LongPrompt < 0 || (o.LongPrompt > 0 && o.MaxTokens < 2) {
				return errors.New("bench serve: --long-prompt needs a positive length and --max-tokens of at least 2")
			}
			if o.PromptTokens < 1 || o.MaxTokens < 1 || o.Requests < 1 {
				return errors.New("bench serve: --prompt-tokens, --max-tokens and --requests must be at least 1")
			}
			if o.APIKey == "" {
				o.APIKey = os.Getenv(serve.EnvAPIKey)
			}
			return runBenchServe(envOf(cmd), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.URL, "url", "http://127.0.0.1:8080", "the server's base URL")
	fl.StringVar(&o.APIKey, "api-key", "", "API key (default $"+serve.EnvAPIKey+")")
	fl.StringVar(&o.Model, "model", "", "model name, as the server lists it")
	fl.IntSliceVar(&o.Concurrency, "concurrency", []int{1, 4, 16}, "concurrent streams, one level each")
	fl.IntVar(&o.PromptTokens, "prompt-tokens", 128, "prompt tokens per request")
	fl.IntVar(&o.MaxTokens, "max-tokens", 128, "generated tokens per request")
	fl.IntVar(&o.Requests, "requests", 1, "requests each stream sends, one after another")
	fl.Float64Var(&o.Temperature, "temperature", 0.7, "sampling temperature (each request has its own seed)")
	fl.IntVar(&o.LongPrompt, "long-prompt", 0, "also send one request of this many prompt tokens while each level's streams run (0: none)")
	fl.IntVar(&o.LongAfter, "long-after", 16, "tokens every stream has before the long prompt goes out (at most --max-tokens/2)")
	fl.StringVar(&o.TokenTrace, "token-trace", "", "append each request's token arrival times (Unix µs) to this file")
	fl.BoolVar(&o.PerToken, "per-token", false, "ask for logprobs and count each chunk's tokens, so a chunk carrying several (text held back) counts a gap a token")
	return cmd
}

// runBenchServe calibrates the prompt, then runs each level and prints
// one table row per level to out; the load average goes to errOut.
func runBenchServe(e Env, o *BenchServeOptions) error {
	ctx, out, errOut := e.Ctx, e.Out, e.ErrOut
	if o.TokenTrace != "" {
		f, err := os.OpenFile(o.TokenTrace, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("bench serve: --token-trace: %w", err)
		}
		defer f.Close()
		o.Trace = f
	}
	p, err := loadgen.Calibrate(ctx, o.Options)
	if err != nil {
		return err
	}
	if p.Tokens != o.PromptTokens {
		fmt.Fprintf(errOut, "note: the nearest prompt found has %d tokens, not %d\n", p.Tokens, o.PromptTokens)
	}
	var long *loadgen.Long
	if o.LongPrompt > 0 {
		lp, err := loadgen.CalibrateLong(ctx, o.Options)
		if err != nil {
			return err
		}
		if lp.Tokens != o.LongPrompt {
			fmt.Fprintf(errOut, "note: the nearest long prompt found has %d tokens, not %d\n", lp.Tokens, o.LongPrompt)
		}
		long = &loadgen.Long{Prompt: lp}
	}
	fmt.Fprintln(errOut, loadAverage())
	fmt.Fprintln(out, "| streams | requests | prompt | generated | wall s | tok/s | × first | TTFT p50 ms | TTFT p95 ms | token p50 ms | token p95 ms |")
	fmt.Fprintln(out, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var first float64
	var longs []loadgen.Level
	for i, c := range o.Concurrency {
		if long != nil {
			long.Seed = uint64(i+1) << 32 // past every stream's seed
		}
		lv, err := loadgen.Run(ctx, o.Options, p, c, long)
		if err != nil {
			return err
		}
		longs = append(longs, lv)
		tps := lv.TokensPerSecond()
		if first == 0 {
			first = tps
		}
		ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
		fmt.Fprintf(out, "| %d | %d | %d | %d | %.2f | %.1f | %.2f | %s | %s | %s | %s |\n", c, lv.Requests, lv.PromptTokens, lv.Generated,
			lv.Wall.Seconds(), tps, tps/first, ms(lv.TTFT.P50), ms(lv.TTFT.P95), ms(lv.TokenLatency.P50), ms(lv.TokenLatency.P95))
	}
	if long != nil {
		printLong(out, longs)
	}
	fmt.Fprintln(errOut, loadAverage())
	return nil
}

// printLong prints each level's long-prompt row: its TTFT and the running
// streams' longest token gap after it was sent, against their median.
func printLong(out io.Writer, levels []loadgen.Level) {
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| streams | long prompt | long TTFT ms | gaps after it | longest gap ms | median gap ms | longest ÷ median |")
	fmt.Fprintln(out, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, lv := range levels {
		ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
		fmt.Fprintf(out, "| %d | %d | %s | %d | %s | %s | %.2f |\n", lv.Concurrency, lv.Long.PromptTokens, ms(lv.Long.TTFT),
			lv.Long.Gaps, ms(lv.Long.LongestGap), ms(lv.TokenLatency.P50), lv.GapRatio())
	}
	// when, to place them in the server's step trace ($HARK_BATCH_TRACE)
	for _, lv := range levels {
		if lv.Long.Gaps > 0 {
			fmt.Fprintf(out, "\n%d streams: long prompt sent at %d µs (Unix), longest gap ended at %d µs", lv.Concurrency,
				lv.Long.Sent.UnixMicro(), lv.Long.LongestGapEnd.UnixMicro())
		}
	}
	fmt.Fprintln(out)
}
