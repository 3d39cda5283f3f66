package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/llm/bench"
	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/harkapp/hark/internal/shareddir"
	"github.com/spf13/cobra"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure inference speed",
	}
	cmd.AddCommand(newBenchLLMCmd(nil), newBenchWhisperCmd(nil), newBenchServeCmd())
	return cmd
}

// BenchLLMOptions is what `hark bench llm` was asked, and its streams.
type BenchLLMOptions struct {
	IOStreams
	Models    []string // GGUF files; none: write SmolLM2-shaped ones
	Types     []string // file types to write (f16, q8_0, q4_0)
	Dir       string   // where written files are kept
	Tokenizer string   // SmolLM2 tokenizer folder ("" = the shared kit's)
	Shape     string   // shape of the written files (bench.Shapes)
	Layers    int      // 0: the shape's
	Depth     int      // cached tokens before pp and tg (llama-bench -d)
	PP, TG    int      // prompt and generated tokens
	Reps      int
	Threads   int
	GPU       int
	Backend   string
	Chain     bool // also tg with on-backend greedy selection, chained
	// Temp samples the chained tg at this temperature (0: greedy), as a
	// chat request without top-k or top-p does.
	Temp float32
	// Ctx is the loaded context (0: what the tests need); `hark serve`
	// loads chat models at up to llm.DefaultContext.
	Ctx int
}

// newBenchLLMCmd builds the command; runF, when not nil, replaces
// runBenchLLM (tests).
func newBenchLLMCmd(runF func(*BenchLLMOptions) error) *cobra.Command {
	o := &BenchLLMOptions{}
	cmd := &cobra.Command{
		Use:   "llm [flags]",
		Short: "Prompt-processing and generation speed of an LLM, as llama-bench reports them",
		Long: `Measure pp (one batched prefill of --pp tokens) and tg (--tg single-token
decodes) in tokens per second, averaged over --reps repetitions after a
warm-up, like llama.cpp's llama-bench.

Without --model it writes GGUF files of --shape (smollm2-135m: SmolLM2-135M;
llama-1b: Llama-3.2-1B's layers with SmolLM2's vocabulary) with random
weights and the real SmolLM2 tokenizer from --tokenizer, of each --type,
into --dir, reusing files already there, and measures them.

--depth N measures pp and tg after N cached tokens (llama-bench -d), and
--chain's tg after N untimed ones (a chat prompt's). Each
tg row also gives the achieved bandwidth: the weight bytes a token reads
over the time per token. On CUDA the device-to-device copy bandwidth
(1 GiB copied, bytes read plus written, the mean of 10 after 3 warm-ups)
is printed first, the ceiling to compare it with.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.PP < 0 || o.TG < 0 || o.PP+o.TG == 0 {
				return errors.New("bench: --pp and --tg must be >= 0 and not both 0")
			}
			if o.Reps <= 0 {
				return fmt.Errorf("bench: --reps must be positive, got %d", o.Reps)
			}
			if err := backends.ValidGPU(o.GPU); err != nil {
				return err
			}
			if o.Threads <= 0 {
				return fmt.Errorf("bench: --threads must be positive, got %d", o.Threads)
			}
			if len(o.Models) == 0 && (o.Layers < 0 || cmd.Flags().Changed("layers") && o.Layers == 0) {
				return fmt.Errorf("bench: --layers must be positive, got %d", o.Layers)
			}
			if _, ok := bench.Shapes[o.Shape]; !ok && len(o.Models) == 0 {
				return fmt.Errorf("bench: unknown --shape %q (%s)", o.Shape, strings.Join(shapeNames(), ", "))
			}
			if o.Depth < 0 {
				return fmt.Errorf("bench: --depth must be >= 0, got %d", o.Depth)
			}
			if o.Temp != 0 && (!o.Chain || !(o.Temp > 0 && o.Temp <= 2)) {
				return fmt.Errorf("bench: --temp takes --chain and a temperature in (0, 2], got %g", o.Temp)
			}
			if o.Ctx < 0 {
				return fmt.Errorf("bench: --ctx must be >= 0, got %d", o.Ctx)
			}
			o.IOStreams = envOf(cmd).IOStreams
			if runF != nil {
				return runF(o)
			}
			return runBenchLLM(o.Out, o.ErrOut, o)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&o.Models, "model", nil, "GGUF model to measure (repeatable; default: write SmolLM2-135M-shaped files)")
	fl.StringSliceVar(&o.Types, "type", []string{"f16", "q8_0", "q4_0"}, "file types to write and measure")
	fl.StringVar(&o.Dir, "dir", filepath.Join(os.TempDir(), "hark-bench"), "where the written models are kept")
	fl.StringVar(&o.Tokenizer, "tokenizer", "", "SmolLM2 tokenizer directory (default: the shared llm-kit's)")
	fl.StringVar(&o.Shape, "shape", bench.SmolLM2.Stem, "shape of the written models: "+strings.Join(shapeNames(), ", "))
	fl.IntVar(&o.Layers, "layers", 0, "layers of the written models (default: the shape's)")
	fl.IntVar(&o.Depth, "depth", 0, "cached tokens before each test, like llama-bench -d")
	fl.IntVar(&o.PP, "pp", 512, "prompt tokens (0: skip)")
	fl.IntVar(&o.TG, "tg", 128, "generated tokens (0: skip)")
	fl.IntVarP(&o.Reps, "reps", "r", 5, "repetitions")
	fl.IntVarP(&o.Threads, "threads", "t", 2, "CPU threads")
	fl.StringVar(&o.Backend, backendFlag, backends.Auto, "inference backend: "+strings.Join(backends.Names(), ", "))
	fl.IntVar(&o.GPU, gpuFlag, 0, gpuHelp)
	fl.BoolVar(&o.Chain, "chain", false, "also measure tg as generation runs: greedy, the token chosen on the backend, steps chained (only ids read back)")
	fl.Float32Var(&o.Temp, "temp", 0, "with --chain: sample the chained tg at this temperature (seed 1, no top-k or top-p, as an OpenAI chat request) instead of greedy")
	fl.IntVar(&o.Ctx, "ctx", 0, "context of the loaded model (0: what the tests need; hark serve loads up to 4096)")
	return cmd
}

// runBenchLLM measures o's models (writing them first when none is given)
// and prints llama-bench's table to out; progress goes to errOut.
func runBenchLLM(out, errOut io.Writer, o *BenchLLMOptions) error {
	models := o.Models
	if len(models) == 0 {
		shape := bench.Shapes[o.Shape]
		if o.Layers > 0 {
			shape.Layers = o.Layers
		}
		tokDir := o.Tokenizer
		if tokDir == "" {
			root, err := shareddir.Root()
			if err != nil {
				return fmt.Errorf("bench: no --tokenizer given and %w", err)
			}
			tokDir = filepath.Join(root, "llm-kit", "tokenizers", "smollm2")
		}
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return err
		}
		for _, name := range o.Types {
			ftype, ok := bench.Types[name]
			if !ok {
				return fmt.Errorf("bench: unknown --type %q (f16, q8_0, q4_0)", name)
			}
			path := filepath.Join(o.Dir, fmt.Sprintf("%s-shape-v1-L%d-%s.gguf", shape.Stem, shape.Layers, name))
			if note := shape.OutputNote(ftype); note != "" {
				fmt.Fprintf(errOut, "note: %s\n", note)
			}
			if _, err := os.Stat(path); err != nil {
				fmt.Fprintf(errOut, "writing %s\n", path)
				if err := bench.WriteFile(path, shape, ftype, tokDir, 1); err != nil {
					return err
				}
			}
			models = append(models, path)
		}
	}
	fmt.Fprintln(errOut, loadAverage())
	fmt.Fprintln(out, "| model | size | params | backend | threads | test | t/s | GB/s |")
	fmt.Fprintln(out, "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
	for _, path := range models {
		if err := benchModel(out, errOut, o, path); err != nil {
			return err
		}
	}
	fmt.Fprintln(errOut, loadAverage())
	return nil
}

func benchModel(out, errOut io.Writer, o *BenchLLMOptions, path string) error {
	backend, gpu, pp, tg, reps, threads := o.Backend, o.GPU, o.PP, o.TG, o.Reps, o.Threads
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	be, reason, err := backends.Open(backend, backends.Options{Threads: threads, GPU: gpu, Log: errOut})
	if err != nil {
		return err
	}
	if reason != "" {
		fmt.Fprintln(errOut, "hark:", reason)
	}
	defer be.Close()
	ctxLen := max(pp, tg) + o.Depth
	if o.Chain {
		ctxLen = max(pp, tg+1) + o.Depth // the prompt token, then tg generated
	}
	if o.Ctx > 0 {
		if o.Ctx < ctxLen {
			return fmt.Errorf("bench: --ctx %d is below the %d tokens the tests need", o.Ctx, ctxLen)
		}
		ctxLen = o.Ctx
	}
	m, err := llm.Load(be, f, llm.Options{Context: ctxLen, Batch: max(pp, 1)})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer m.Close()
	// What the prefill batch costs in memory (issue 35's pp2048: one batch).
	fmt.Fprintf(errOut, "plan: prefill batch %d tokens, context %d; %s\n", m.Batch(), m.Context(), m.Footprint())
	var size, params int64
	types := map[string]int64{}
	for _, t := range f.Tensors {
		size += t.Bytes
		params += t.Elements()
		if t.Name != "token_embd.weight" && t.Name != "output.weight" {
			types[t.Type.String()] += t.Elements()
		}
	}
	// Name the model by the dominant type of its layers' weights (the
	// embedding/output often keep a larger type), as llama-bench does by
	// file type.
	main, most := "", int64(-1)
	for name, n := range types {
		if n > most || (n == most && name < main) {
			main, most = name, n
		}
	}
	label := fmt.Sprintf("%s %s %s", f.Architecture(), paramsLabel(params), strings.ToUpper(main))
	var results []bench.Result
	if pp > 0 {
		r, err := bench.PromptAt(m, pp, o.Depth, reps)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	// On CUDA, the host's launches per generated token (kernels launched
	// one by one plus graph replays) over the measured repetitions.
	cs, onCUDA := be.(cudaStats)
	// the memory ceiling the tg rows' GB/s is measured against
	if onCUDA {
		if err := printCopyBandwidth(errOut, cs); err != nil {
			return err
		}
	}
	measure := func() {
		if onCUDA {
			cs.ResetStats()
		}
	}
	launches := func(r bench.Result) {
		if onCUDA {
			printCUDA(errOut, cs, r.Test, float64(r.Tokens*len(r.TokS)), "token")
		}
	}
	if tg > 0 {
		r, err := bench.GenerateAt(m, tg, o.Depth, reps, measure)
		if err != nil {
			return err
		}
		launches(r)
		results = append(results, r)
	}
	if tg > 0 && o.Chain {
		tk, err := tokenizer.FromGGUFFile(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		r, err := bench.GenerateChained(llm.NewGenerator(m, tk), tg, o.Depth, reps, llm.Sampler{Temperature: o.Temp, Seed: 1}, measure)
		if err != nil {
			return err
		}
		launches(r)
		results = append(results, r)
	}
	wbytes := bench.WeightBytesPerToken(f)
	for _, r := range results {
		// a decoded token reads every weight once; a prompt batch reads
		// them once for all its tokens, so only tg has a bandwidth
		bw := "-"
		if strings.HasPrefix(r.Test, "tg") {
			bw = fmt.Sprintf("%.1f", float64(wbytes)*r.Mean()/1e9)
		}
		fmt.Fprintf(out, "| %s | %.2f MiB | %.2f M | %s | %d | %s | %.2f ± %.2f | %s |\n",
			label, float64(size)/(1<<20), float64(params)/1e6, strings.ToUpper(be.Name()), threads, r.Test, r.Mean(), r.Stddev(), bw)
		// every repetition, for medians (llama-bench's -o json has them too)
		fmt.Fprintf(errOut, "samples %s %s t=%d t/s:", label, r.Test, threads)
		for _, v := range r.TokS {
			fmt.Fprintf(errOut, " %.2f", v)
		}
		fmt.Fprintln(errOut)
	}
	// On Metal, the GPU's own busy time (GPUStartTime..GPUEndTime of every
	// command buffer, warm-up included) tells encode overhead from kernels.
	if g, ok := be.(interface{ Stats() backends.MetalStats }); ok {
		st := g.Stats()
		fmt.Fprintf(errOut, "metal: %d command buffers, %d dispatches, GPU busy %.1f ms\n", st.CommandBuffers, st.Dispatches, st.GPUSeconds*1e3)
	}
	return nil
}

// cudaStats is what the CUDA backend reports beyond plan.Backend.
type cudaStats interface {
	Stats() backends.CUDAStats
	ResetStats()
	Profile() []backends.KernelTime
	CopyBandwidth(n int64, warm, reps int) (float64, error)
}

// printCopyBandwidth prints the device-to-device copy bandwidth, the
// memory ceiling of decode.
func printCopyBandwidth(errOut io.Writer, cs cudaStats) error {
	bw, err := cs.CopyBandwidth(1<<30, 3, 10)
	if err != nil {
		return err
	}
	fmt.Fprintf(errOut, "cuda: device-to-device copy %.1f GB/s (1 GiB, bytes read plus written, mean of 10 after 3 warm-ups)\n", bw/1e9)
	return nil
}

// printCUDA prints a test's host launches per unit (kernels launched one
// by one plus graph replays) since the last ResetStats and, with
// $HARK_CUDA_PROFILE=1, the GPU time per kernel (the 15 costliest).
func printCUDA(errOut io.Writer, cs cudaStats, test string, units float64, unit string) {
	st := cs.Stats()
	fmt.Fprintf(errOut, "cuda %s: %d steps, %d kernel launches, %d graph launches (%d graphs recorded), %.4f host launches per %s, %d host synchronizations (%.4f per %s)\n",
		test, st.Steps, st.KernelLaunches, st.GraphLaunches, st.GraphsBuilt, float64(st.HostLaunches())/units, unit, st.Syncs, float64(st.Syncs)/units, unit)
	prof := cs.Profile()
	var total float64
	for _, k := range prof {
		total += k.Seconds
	}
	for i, k := range prof[:min(len(prof), 15)] {
		if i == 0 {
			fmt.Fprintf(errOut, "cuda %s profile: %.3f ms of kernels per %s\n", test, total*1e3/units, unit)
		}
		fmt.Fprintf(errOut, "  %-28s %8d launches %9.3f ms %5.1f%% %8.2f us/launch\n",
			k.Function, k.Launches, k.Seconds*1e3, 100*k.Seconds/total, k.Seconds*1e6/float64(k.Launches))
	}
}

// shapeNames lists bench.Shapes' names, sorted.
func shapeNames() []string {
	names := make([]string, 0, len(bench.Shapes))
	for n := range bench.Shapes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func paramsLabel(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	}
	return fmt.Sprintf("%dM", (n+500_000)/1_000_000)
}

// loadAverage reports the machine's load (Linux), since speeds on a shared
// machine mean little without it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average: unknown"
	}
	fields := strings.Fields(string(b))
	if len(fields) < 3 {
		return "load average: unknown"
	}
	return "load average: " + strings.Join(fields[:3], " ")
}
