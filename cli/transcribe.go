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

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/usererr"
	"github.com/harkapp/hark/internal/vocab"
)

// transcribeOptions is what `hark transcribe` was asked.
type transcribeOptions struct {
	files          []string
	model          string
	format         string
	temperature    float32
	beam           int
	noFallback     bool
	language       string
	translate      bool
	prompt         string
	vocabulary     string
	vocabBias      float32
	vocabTokens    int
	wordTimestamps bool
	outputDir      string
	threads        int
}

// newTranscribeCmd builds the command; runF, when not nil, replaces
// runTranscribe (tests).
func newTranscribeCmd(runF func(*cobra.Command, *transcribeOptions) error) *cobra.Command {
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
			fl.files = args
			if err := fl.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd, &fl)
			}
			return runTranscribe(cmd, &fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.model, "model", "", "Whisper model: a whisper.cpp .bin file or the name of a model in the models folder")
	f.StringVar(&fl.format, "format", whisper.FormatTXT, "output format: "+strings.Join(whisper.Formats, ", "))
	f.IntVar(&fl.beam, "beam", 5, "beam size for temperature-0 decoding (1 = greedy)")
	f.Float32Var(&fl.temperature, "temperature", 0, "sampling temperature of the first attempt (0 = greedy)")
	f.BoolVar(&fl.noFallback, "no-fallback", false, "do not retry a window at higher temperatures when it looks wrong")
	f.StringVar(&fl.language, "language", "", "spoken language code (multilingual models; detected when empty)")
	f.BoolVar(&fl.translate, "translate", false, "translate into English (multilingual models)")
	f.StringVar(&fl.prompt, "prompt", "", "initial prompt: context or custom vocabulary for the first window")
	f.StringVar(&fl.vocabulary, "vocabulary", "", "vocabulary file: one term a line, optionally \"Term = sounds like, ...\" (see README)")
	f.IntVar(&fl.vocabTokens, "vocabulary-tokens", vocab.PromptTokens, fmt.Sprintf("most prompt tokens the vocabulary takes of Whisper's %d (0 = no prompt: bias and replacements only)", vocab.ContextTokens))
	f.Float32Var(&fl.vocabBias, "vocabulary-bias", 0, "logit bias on each vocabulary term's first token (0 = none; 2 is mild)")
	f.BoolVar(&fl.wordTimestamps, "word-timestamps", false, "time every word (json output includes them)")
	f.StringVar(&fl.outputDir, "output-dir", "", "write NAME.FORMAT files into this directory instead of stdout")
	f.IntVar(&fl.threads, "threads", 0, "worker threads (0 = one per physical core)")
	addBackendFlag(cmd)
	return cmd
}

// validate checks the flags before anything is opened.
func (fl *transcribeOptions) validate() error {
	if !slices.Contains(whisper.Formats, fl.format) {
		return fmt.Errorf("unknown --format %q (want one of %s)", fl.format, strings.Join(whisper.Formats, ", "))
	}
	if fl.model == "" {
		return errors.New("no model: pass --model with a whisper.cpp .bin file or a model's name")
	}
	if fl.temperature < 0 || fl.temperature > 1 {
		return fmt.Errorf("--temperature %g is outside [0, 1]", fl.temperature)
	}
	if fl.beam < 1 || fl.beam > maxBeam {
		return fmt.Errorf("--beam %d is outside [1, %d]", fl.beam, maxBeam)
	}
	return nil
}

// runTranscribe transcribes fl.files (cmd carries the models-folder and
// backend flags, the output streams and the context).
func runTranscribe(cmd *cobra.Command, fl *transcribeOptions) error {
	files := fl.files
	if fl.outputDir != "" {
		if err := os.MkdirAll(fl.outputDir, 0o755); err != nil {
			return err
		}
	}
	stderr := cmd.ErrOrStderr()
	path, err := resolveModel(cmd, fl.model)
	if err != nil {
		return err
	}
	rt, err := newRuntime(cmd, runtime.Options{Threads: fl.threads, WhisperBeams: fl.beam})
	if err != nil {
		return err
	}
	defer rt.Close()
	sm, err := rt.Speech(cmd.Context(), path, runtime.Interactive)
	if err != nil {
		return err
	}
	defer sm.Release()
	mf, model := sm.File, sm.Model

	opt := whisper.DefaultTranscribeOptions()
	opt.Temperatures = whisper.FallbackTemperatures(fl.temperature)
	if fl.noFallback {
		opt.Temperatures = []float32{fl.temperature}
	}
	opt.WordTimestamps = fl.wordTimestamps
	opt.BeamSize = fl.beam
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

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	failed := 0
	for i, path := range files {
		if err := transcribeOne(ctx, cmd, mf, model, opt, fix, *fl, path, i, len(files)); err != nil {
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

func transcribeOne(ctx context.Context, cmd *cobra.Command, mf *whisper.File, model *whisper.Model, opt whisper.TranscribeOptions, fix *rewrite.Rewriter, fl transcribeOptions, path string, idx, total int) error {
	stderr := cmd.ErrOrStderr()
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions(1000, progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(filepath.Base(path)), progressbar.OptionClearOnFinish())
		opt.OnProgress = func(done float64) { bar.Set(int(done * 1000)) }
		defer bar.Finish()
	}
	res, err := mf.TranscribeFile(ctx, model, path, opt)
	if err != nil {
		return err
	}
	if fix != nil {
		fix.ApplyResult(res)
	}
	if fl.outputDir != "" {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + "." + fl.format
		return writeFileAtomic(filepath.Join(fl.outputDir, name), func(w io.Writer) error {
			return whisper.Write(w, res, fl.format)
		})
	}
	out := cmd.OutOrStdout()
	if total > 1 {
		if idx > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "==> %s <==\n", path)
	}
	return whisper.Write(out, res, fl.format)
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
