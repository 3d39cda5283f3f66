package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/usererr"
	"github.com/harkapp/hark/internal/vocab"
)

// transcribeOptions is what `hark transcribe` was asked.
type transcribeOptions struct {
	Env
	speechFlags
	files          []string
	format         string
	temperature    float32
	beam           int
	chainTokens    int
	noFallback     bool
	translate      bool
	vocabulary     string
	vocabBias      float32
	vocabTokens    int
	wordTimestamps bool
	outputDir      string
	channels       string
	timings        *timings // HARK_TIMINGS (set by runTranscribe)
}

// newTranscribeCmd builds the command; runF, when not nil, replaces
// runTranscribe (tests).
func newTranscribeCmd(runF func(*transcribeOptions) error) *cobra.Command {
	var fl transcribeOptions
	cmd := &cobra.Command{
		Use:   "transcribe --model PATH [flags] FILE...",
		Short: "Transcribe audio or video files with a Whisper model",
		Long: `Transcribe audio or video files with a Whisper model (a whisper.cpp .bin file).

WAV, FLAC, MP3 and Ogg Vorbis are decoded directly; other formats (m4a, mp4,
mkv, webm, ...) need ffmpeg on PATH. Without --output-dir results go to
stdout, preceded by "==> FILE <==" when there are several files.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.Env, fl.files = envOf(cmd), args
			if err := fl.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(&fl)
			}
			return runTranscribe(&fl)
		},
	}
	addSpeechFlags(cmd, &fl.speechFlags)
	f := cmd.Flags()
	f.StringVar(&fl.format, "format", whisper.FormatTXT, "output format: "+strings.Join(whisper.Formats, ", "))
	f.IntVar(&fl.beam, "beam", 5, "beam size for temperature-0 decoding (1 = greedy)")
	f.IntVar(&fl.chainTokens, "chain-tokens", 0, fmt.Sprintf("tokens (greedy) or search steps (beam) decoded on the backend between two read-backs of the window's state (0: %d (beam: %d) on a GPU, 1 on the CPU)", whisper.DefaultChainTokens, whisper.DefaultBeamChainSteps))
	f.Float32Var(&fl.temperature, "temperature", 0, "sampling temperature of the first attempt (0 = greedy)")
	f.BoolVar(&fl.noFallback, "no-fallback", false, "do not retry a window at higher temperatures when it looks wrong")
	f.BoolVar(&fl.translate, "translate", false, "translate into English (multilingual models)")
	f.StringVar(&fl.vocabulary, "vocabulary", "", "vocabulary file: one term a line, optionally \"Term = sounds like, ...\" (see README)")
	f.IntVar(&fl.vocabTokens, "vocabulary-tokens", vocab.PromptTokens, fmt.Sprintf("most prompt tokens the vocabulary takes of Whisper's %d (0 = no prompt: bias and replacements only)", vocab.ContextTokens))
	f.Float32Var(&fl.vocabBias, "vocabulary-bias", 0, "logit bias on each vocabulary term's first token (0 = none; 2 is mild)")
	f.BoolVar(&fl.wordTimestamps, "word-timestamps", false, "time every word (json output includes them)")
	f.StringVar(&fl.outputDir, "output-dir", "", "write NAME.FORMAT files into this directory instead of stdout")
	f.StringVar(&fl.channels, "channels", "", "transcribe each channel of a two-channel file as a speaker, in channel order: you,others (a meeting recording); each channel gated as a meeting's final pass is (silence and the other side's echo are not transcribed); adds --format md")
	return cmd
}

// validate checks the flags before anything is opened.
func (fl *transcribeOptions) validate() error {
	formats := whisper.Formats
	if fl.channels != "" {
		if err := fl.validateChannels(); err != nil {
			return err
		}
		formats = meeting.Formats
	}
	if !slices.Contains(formats, fl.format) {
		return fmt.Errorf("unknown --format %q (want one of %s)", fl.format, strings.Join(formats, ", "))
	}
	if err := fl.speechFlags.validate(); err != nil {
		return err
	}
	if fl.chainTokens < 0 {
		return fmt.Errorf("--chain-tokens must not be negative, got %d", fl.chainTokens)
	}
	if fl.temperature < 0 || fl.temperature > 1 {
		return fmt.Errorf("--temperature %g is outside [0, 1]", fl.temperature)
	}
	if fl.beam < 1 || fl.beam > maxBeam {
		return fmt.Errorf("--beam %d is outside [1, %d]", fl.beam, maxBeam)
	}
	return nil
}

// runTranscribe transcribes fl.files.
func runTranscribe(fl *transcribeOptions) error {
	files := fl.files
	if fl.outputDir != "" {
		if err := os.MkdirAll(fl.outputDir, 0o755); err != nil {
			return err
		}
	}
	stderr := fl.ErrOut
	tm := newTimings(stderr)
	fl.timings = tm
	path, err := resolveModel(fl.Env, fl.model)
	if err != nil {
		return err
	}
	var pre <-chan spectrogramResult // the first file's log-mel, beside the backend's start
	if fl.channels == "" && len(files) > 0 {
		pre = prefetchSpectrogram(path, files[0])
		defer func() {
			if pre != nil {
				discardSpectrogram(pre)
			}
		}()
	}
	rt, err := newRuntime(fl.Env, runtime.Options{Threads: fl.threads, WhisperBeams: fl.beam})
	if err != nil {
		return err
	}
	defer tm.report() // after the deferred closes below
	defer tm.mark("close")
	if fl.ProcessExits {
		defer rt.CloseForExit()
	} else {
		defer rt.Close()
	}
	tm.mark("start")
	sm, err := rt.Speech(fl.Ctx, path, runtime.Interactive)
	if err != nil {
		return err
	}
	defer sm.Release()
	tm.mark("backend and model")
	mf, model := sm.File, sm.Model

	opt := whisper.DefaultTranscribeOptions()
	opt.Temperatures = whisper.FallbackTemperatures(fl.temperature)
	if fl.noFallback {
		opt.Temperatures = []float32{fl.temperature}
	}
	opt.WordTimestamps = fl.wordTimestamps
	opt.BeamSize = fl.beam
	opt.ChainTokens = fl.chainTokens
	opt.Language = fl.language
	if fl.translate {
		if !mf.H.Multilingual() {
			return errors.New("--translate needs a multilingual model; this one is English-only")
		}
		opt.Task = "translate"
	}
	if !mf.H.Multilingual() {
		if fl.language != "" && fl.language != "en" {
			fmt.Fprintf(stderr, "hark: the model is English-only; ignoring --language %s\n", fl.language)
		}
		opt.Language = "en"
	}
	if p := strings.TrimSpace(fl.prompt); p != "" {
		opt.InitialPrompt = mf.Vocab.Encode(" " + p)
	}
	fix, err := loadVocabulary(stderr, *fl, mf, &opt)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(fl.Ctx, os.Interrupt)
	defer stop()
	failed := 0
	for i, path := range files {
		first := pre
		pre = nil // received here (or by the deferred discard if the loop never starts)
		err := transcribeOne(ctx, mf, model, opt, fix, *fl, path, i, len(files), first)
		tm.mark(filepath.Base(path))
		if err != nil {
			err = fmt.Errorf("%s: %w", path, err)
			if len(files) == 1 {
				return err // the one line run prints
			}
			fmt.Fprintln(stderr, "hark:", usererr.Message(err, usererr.Options{}))
			failed++
			if ctx.Err() != nil {
				break
			}
		}
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d files failed", failed, len(files))}
	}
	return nil
}

// maxBeam bounds --beam: each beam holds a self-attention cache.
const maxBeam = 16

// pre, when not nil, delivers path's spectrogram, computed ahead.
func transcribeOne(ctx context.Context, mf *whisper.File, model *whisper.Model, opt whisper.TranscribeOptions, fix *rewrite.Rewriter, fl transcribeOptions, path string, idx, total int, pre <-chan spectrogramResult) error {
	stderr := fl.ErrOut
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions(1000, progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(filepath.Base(path)), progressbar.OptionClearOnFinish())
		// The bar only draws on stderr: a failed draw loses nothing.
		opt.OnProgress = func(done float64) { _ = bar.Set(int(done * 1000)) }
		defer func() { _ = bar.Finish() }()
	}
	if fl.channels != "" {
		return transcribeChannels(ctx, mf, model, opt, fix, fl, path, idx, total)
	}
	var res *whisper.Result
	var err error
	var r spectrogramResult
	if pre != nil {
		t0 := time.Now()
		r = <-pre
		fl.timings.note(fmt.Sprintf("spectrogram %.3f (waited %.3f)", r.took.Seconds(), time.Since(t0).Seconds()))
	}
	switch {
	case r.err != nil:
		return r.err
	case r.spec != nil:
		defer r.spec.Close()
		res, err = mf.TranscribeMel(ctx, model, r.spec, opt)
	default:
		res, err = mf.TranscribeFile(ctx, model, path, opt)
	}
	if err != nil {
		return err
	}
	if fix != nil {
		fix.ApplyResult(res)
	}
	return writeResult(fl, path, idx, total, func(w io.Writer) error { return whisper.Write(w, res, fl.format) })
}

// writeResult writes one file's result to NAME.FORMAT in --output-dir, or
// to stdout (headed by the file's name when there are several).
func writeResult(fl transcribeOptions, path string, idx, total int, write func(io.Writer) error) error {
	if fl.outputDir != "" {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + "." + fl.format
		return writeFileAtomic(filepath.Join(fl.outputDir, name), write)
	}
	out := fl.Out
	if total > 1 {
		if idx > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "==> %s <==\n", path)
	}
	return write(out)
}

// writeFileAtomic writes through a temporary file renamed into place, so
// a failure (a full disk) never leaves a truncated result behind.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
