package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/llm/bench"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shareddir"
	"github.com/spf13/cobra"
)

// BenchWhisperOptions is what `hark bench whisper` was asked.
type BenchWhisperOptions struct {
	IOStreams
	Model   string // whisper.cpp .bin ("" = the shared kit's q8_0)
	Audio   string // the window encoded ("" = the shared jfk.wav)
	Tokens  int    // decoder steps per repetition
	Chain   int    // greedy tokens between two read-backs of a chained window
	Beam    int    // beams of the beam-search window row (< 2: none)
	Reps    int
	Threads int
	GPU     int
	Backend string
}

// newBenchWhisperCmd builds the command; runF, when not nil, replaces
// runBenchWhisper (tests).
func newBenchWhisperCmd(runF func(*BenchWhisperOptions) error) *cobra.Command {
	o := &BenchWhisperOptions{}
	cmd := &cobra.Command{
		Use:   "whisper [flags]",
		Short: "Encoder and decoder speed of a Whisper model, as whisper.cpp reports them",
		Long: `Measure the encoder (ms per 30-s window: the first window of --audio) and
the decoder (ms per token: --tokens single-token steps after a 4-token
prompt, each reading its logits back, as greedy decoding does), averaged
over --reps repetitions after a warm-up of the same steps. whisper.cpp
prints the same two figures as "encode time" and "decode time".

Then a greedy window of the same audio as transcription decodes it
(chained on the backend: prompt, filters, choice and stop rules without
the host, its state read back every --chain-tokens tokens; ms per token
chosen, end of text included). With --beam N, also a beam-search window of
N beams (ms per token of the chosen sequence, end of text included; the
steps chained on the backend, their candidates ranked there, the search's
state read back every --chain-tokens steps).

Without --model it measures the shared kit's tiny.en q8_0. On CUDA it also
prints host launches and synchronizations per window and token and, with
HARK_CUDA_PROFILE=1, the GPU time per kernel.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Reps <= 0 {
				return fmt.Errorf("bench: --reps must be positive, got %d", o.Reps)
			}
			if o.Tokens <= 0 {
				return fmt.Errorf("bench: --tokens must be positive, got %d", o.Tokens)
			}
			if o.Chain < 0 {
				return fmt.Errorf("bench: --chain-tokens must not be negative, got %d", o.Chain)
			}
			if o.Beam < 0 || o.Beam > 16 {
				return fmt.Errorf("bench: --beam %d is outside [0, 16]", o.Beam)
			}
			if o.Threads <= 0 {
				return fmt.Errorf("bench: --threads must be positive, got %d", o.Threads)
			}
			if err := backends.Valid(o.Backend); err != nil {
				return err
			}
			if err := backends.ValidGPU(o.GPU); err != nil {
				return err
			}
			o.IOStreams = envOf(cmd).IOStreams
			if runF != nil {
				return runF(o)
			}
			return runBenchWhisper(o.Out, o.ErrOut, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Model, "model", "", "whisper.cpp .bin model (default: the shared kit's tiny.en q8_0)")
	fl.StringVar(&o.Audio, "audio", "", "audio whose first window is encoded (default: the shared jfk.wav)")
	fl.IntVar(&o.Tokens, "tokens", 64, "decoder steps per repetition")
	fl.IntVar(&o.Chain, "chain-tokens", 0, fmt.Sprintf("greedy and beam window: tokens (search steps) decoded on the backend between two read-backs of its state (0: %d (beam: %d) on a GPU, 1 on the CPU)", whisper.DefaultChainTokens, whisper.DefaultBeamChainSteps))
	fl.IntVar(&o.Beam, "beam", 0, "beams of a beam-search window row (0 or 1: no such row)")
	fl.IntVarP(&o.Reps, "reps", "r", 5, "repetitions")
	fl.IntVarP(&o.Threads, "threads", "t", 2, "CPU threads")
	fl.StringVar(&o.Backend, backendFlag, backends.Auto, "inference backend: "+strings.Join(backends.Names(), ", "))
	fl.IntVar(&o.GPU, gpuFlag, 0, gpuHelp)
	return cmd
}

// runBenchWhisper prints one table row per measure to out; progress and
// the CUDA figures go to errOut.
func runBenchWhisper(out, errOut io.Writer, o *BenchWhisperOptions) error {
	model, audioPath := o.Model, o.Audio
	if model == "" || audioPath == "" {
		root, err := shareddir.Root()
		if err != nil {
			return fmt.Errorf("bench: no --model or --audio given and %w", err)
		}
		if model == "" {
			model = filepath.Join(root, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
		}
		if audioPath == "" {
			audioPath = filepath.Join(root, "audio", "jfk.wav")
		}
	}
	f, err := whisper.OpenFile(model)
	if err != nil {
		return err
	}
	defer f.Close()
	spec, err := f.FileSpectrogram(audioPath, 0)
	if err != nil {
		return err
	}
	defer spec.Close()
	be, reason, err := backends.Open(o.Backend, backends.Options{Threads: o.Threads, GPU: o.GPU, Log: errOut})
	if err != nil {
		return err
	}
	if reason != "" {
		fmt.Fprintln(errOut, "hark:", reason)
	}
	defer be.Close()
	m, err := f.Load(be, whisper.Options{Beams: o.Beam})
	if err != nil {
		return fmt.Errorf("%s: %w", model, err)
	}
	defer m.Close()
	if 4+o.Tokens > m.H.NTextCtx {
		return fmt.Errorf("bench: --tokens %d beyond the decoder's context of %d", o.Tokens, m.H.NTextCtx-4)
	}
	sp, err := whisper.SpecialsFor(m.H.NVocab)
	if err != nil {
		return err
	}
	nFrames := m.H.NFrames()
	mel := make([]float32, spec.NMels*nFrames)
	if err := spec.ReadWindow(mel, 0, min(nFrames, spec.NFrames), nFrames); err != nil {
		return err
	}
	cs, onCUDA := be.(cudaStats)

	fmt.Fprintln(errOut, loadAverage())
	fmt.Fprintln(out, "| model | backend | threads | test | ms | ± |")
	fmt.Fprintln(out, "| --- | --- | ---: | --- | ---: | ---: |")
	row := func(test string, ms []float64) {
		mean, sd := bench.MeanStddev(ms)
		fmt.Fprintf(out, "| %s | %s | %d | %s | %.3f | %.3f |\n", filepath.Base(model), strings.ToUpper(be.Name()), o.Threads, test, mean, sd)
		fmt.Fprintf(errOut, "samples %s ms:", test)
		for _, v := range ms {
			fmt.Fprintf(errOut, " %.3f", v)
		}
		fmt.Fprintln(errOut)
	}

	// encoder: one window per repetition
	var enc []float64
	for i := -1; i < o.Reps; i++ {
		if i == 0 && onCUDA {
			cs.ResetStats()
		}
		t0 := time.Now()
		if err := m.Encode(mel); err != nil {
			return err
		}
		if i >= 0 {
			enc = append(enc, float64(time.Since(t0).Nanoseconds())/1e6)
		}
	}
	if onCUDA {
		printCUDA(errOut, cs, "encode", float64(o.Reps), "window")
	}
	row("encode (per window)", enc)

	// decoder: the window's prompt, then single-token steps
	prompt := []int32{sp.SOT, sp.SOT + 1, sp.Transcribe, sp.NoTimestamps}
	if m.H.NVocab == 51864 { // English-only: no language token
		prompt = []int32{sp.SOT, sp.NoTimestamps}
	}
	var dec []float64
	for i := -1; i < o.Reps; i++ {
		if _, err := m.Prompt(prompt, 0); err != nil {
			return err
		}
		// The warm-up takes every step a repetition takes: a GPU records a
		// new graph where the self-attention's key chunks change (33 and
		// 65 cached keys on CUDA), and a recording inside the timed part
		// made the first repetition the slowest (bench/cuda/20261202-wd34).
		steps := o.Tokens
		if i == 0 && onCUDA {
			cs.ResetStats()
		}
		t0 := time.Now()
		for s := range steps {
			// ordinary text tokens (their ids do not change the work)
			if _, err := m.Prompt([]int32{int32(300 + s)}, len(prompt)+s); err != nil {
				return err
			}
		}
		if i >= 0 {
			dec = append(dec, float64(time.Since(t0).Nanoseconds())/1e6/float64(steps))
		}
	}
	if onCUDA {
		printCUDA(errOut, cs, "decode", float64(o.Reps*o.Tokens), "token")
	}
	row("decode (per token)", dec)

	// a greedy window as transcription decodes it: chained on the backend,
	// the state read back every --chain-tokens tokens (the backend's
	// default when 0)
	dopt := whisper.DecodeOptions{MaxInitialTimestamp: 1, Suppress: f.Vocab.DefaultSuppress(), SuppressBlank: f.Vocab.SuppressBlank(),
		ChainTokens: o.Chain}
	read := ""
	if o.Chain > 0 {
		read = fmt.Sprintf(", read every %d", o.Chain)
	}
	if err := benchWindow(m, mel, dopt, o.Reps, cs, onCUDA, errOut, row, "greedy window", read); err != nil {
		return err
	}
	if err := benchAlign(m, mel, prompt, sp.EOT, o.Tokens, o.Reps, cs, onCUDA, errOut, row); err != nil {
		return err
	}
	if o.Beam > 1 {
		dopt.BeamSize = o.Beam
		if err := benchWindow(m, mel, dopt, o.Reps, cs, onCUDA, errOut, row, fmt.Sprintf("beam %d window", o.Beam), read); err != nil {
			return err
		}
	}
	fmt.Fprintln(errOut, loadAverage())
	return nil
}

// benchWindow times reps decodes of the window mel as opt asks (after a
// warm-up), each after its encode, and prints its row: ms per token of
// the chosen sequence, the end of text included (note ends its name).
func benchWindow(m *whisper.Model, mel []float32, opt whisper.DecodeOptions, reps int, cs cudaStats, onCUDA bool, errOut io.Writer, row func(string, []float64), name, note string) error {
	var win []float64
	chosen := 0
	for i := -1; i < reps; i++ {
		if err := m.Encode(mel); err != nil {
			return err
		}
		if i == 0 && onCUDA {
			cs.ResetStats()
		}
		t0 := time.Now()
		r, err := m.DecodeWindow(opt)
		if err != nil {
			return err
		}
		if i >= 0 {
			n := len(r.Tokens) + 1
			chosen += n
			win = append(win, float64(time.Since(t0).Nanoseconds())/1e6/float64(n))
		}
	}
	if onCUDA {
		printCUDA(errOut, cs, name, float64(chosen), "token")
	}
	row(fmt.Sprintf("%s (per token, %d a window%s)", name, chosen/reps, note), win)
	return nil
}

// benchAlign times word timing's alignment of a window (Model.AlignWords:
// the forced pass, the path and the tokens' probabilities on the backend)
// over the prompt, up to 200 ordinary text tokens and EOT, the whole
// window's frames.
func benchAlign(m *whisper.Model, mel []float32, prompt []int32, eot int32, tokens, reps int, cs cudaStats, onCUDA bool, errOut io.Writer, row func(string, []float64)) error {
	toks := slices.Clone(prompt)
	n := min(tokens, 200)
	for s := range n {
		toks = append(toks, int32(300+s))
	}
	toks = append(toks, eot)
	if err := m.Encode(mel); err != nil {
		return err
	}
	var ms []float64
	for i := -1; i < reps; i++ {
		if i == 0 && onCUDA {
			cs.ResetStats()
		}
		t0 := time.Now()
		if _, _, err := m.AlignWords(toks, len(prompt)-1, m.H.NAudioCtx); err != nil {
			return err
		}
		if i >= 0 {
			ms = append(ms, float64(time.Since(t0).Nanoseconds())/1e6)
		}
	}
	if onCUDA {
		printCUDA(errOut, cs, "word alignment", float64(reps), "window")
	}
	row(fmt.Sprintf("word alignment (per window, %d tokens)", n), ms)
	return nil
}
