package cuda_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/cuda"
	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// TestGPUSharedByTwoModels: the runtime opens one CUDA backend and lends it
// to stories260K and the Whisper kit model; run interleaved (each in its
// own goroutine, twice), each gives what it gives alone (stories260K's
// golden greedy tokens, the kit's transcript of jfk.wav), and the kernel
// module was loaded once. An external test: it registers the CUDA driver
// itself, as drivers.Register does for the binary (drivers sits above
// this package).
func TestGPUSharedByTwoModels(t *testing.T) {
	probe, err := cuda.New(cuda.Options{})
	if errors.Is(err, cuda.ErrUnavailable) {
		t.Skipf("no GPU: %v (the GPU tests run on a machine with an NVIDIA GPU: bench/cuda/run.sh)", err)
	}
	require.NoError(t, err)
	probe.Close()
	backends.Register(backends.Driver{Name: backends.CUDA, Here: cuda.Present,
		Open: func(o backends.Options, _ bool) (backends.Backend, error) {
			return cuda.New(cuda.Options{Device: o.GPU})
		}})

	golden := shared.LoadStoriesGolden(t)
	jfk, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	r := runtime.New(runtime.Options{Backend: backends.CUDA, Threads: 2, WhisperBeams: 1})
	defer r.Close()
	ctx := context.Background()
	loads := cuda.ModuleLoads()

	l, err := r.LLM(ctx, shared.Path(t, "models", "stories260K.gguf"), runtime.Interactive)
	require.NoError(t, err)
	defer l.Release()
	d, err := r.Speech(ctx, shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), runtime.Dictation)
	require.NoError(t, err)
	defer d.Release()
	require.Equal(t, backends.CUDA, l.Backend)
	require.Equal(t, backends.CUDA, d.Backend)

	chat := func() error {
		for _, g := range golden.Results {
			if err := l.M.Truncate(0); err != nil {
				return err
			}
			res, err := l.Gen.Generate(ctx, g.PromptTokens, llm.GenerateOptions{MaxTokens: len(g.GeneratedTokens), IgnoreEOS: true}, nil)
			if err != nil {
				return err
			}
			if !slices.Equal(res.Tokens, g.GeneratedTokens) {
				return errors.New("prompt " + g.Prompt + ": not the golden tokens")
			}
		}
		return nil
	}
	opt := whisper.DefaultTranscribeOptions()
	opt.BeamSize, opt.Temperatures = 1, []float32{0}
	transcribe := func() (string, error) {
		res, err := d.File.TranscribeSamples(ctx, d.Model, jfk, opt)
		if err != nil {
			return "", err
		}
		return res.Text, nil
	}

	// alone
	require.NoError(t, chat())
	want, err := transcribe()
	require.NoError(t, err)
	require.Contains(t, strings.ToLower(want), "ask not what your country can do for you")

	// interleaved
	for round := range 2 {
		var wg sync.WaitGroup
		var text string
		var terr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, terr = transcribe()
		}()
		cerr := chat()
		wg.Wait()
		require.NoError(t, cerr, "round %d: the chat next to a dictation", round)
		require.NoError(t, terr, "round %d", round)
		require.Equal(t, want, text, "round %d: the transcript next to a chat", round)
	}
	require.Len(t, r.Loaded(), 2)
	require.Equal(t, int64(1), cuda.ModuleLoads()-loads, "kernel modules loaded for the two models")
}
