package runtime

import (
	"context"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// A dictation and a chat running at once share the runtime's one CPU
// pool: there are never more CPU workers than cores, and each gets the
// answer it gets alone.
func TestOnePoolForSpeechAndChat(t *testing.T) {
	cores := goruntime.NumCPU()
	before := cpu.LiveWorkers()
	r := newRT(t, Options{Threads: cores, WhisperBeams: 1})
	jfk, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	opt := whisper.DefaultTranscribeOptions()
	opt.BeamSize, opt.Temperatures = 1, []float32{0}
	gen := llm.GenerateOptions{MaxTokens: 48}

	chatAlone := func(l *LLMModel) []int32 {
		require.NoError(t, l.M.Truncate(0))
		res, err := l.Gen.Generate(context.Background(), l.Gen.PromptTokens("Once upon a time", true), gen, nil)
		require.NoError(t, err)
		return res.Tokens
	}
	l, err := r.LLM(context.Background(), storiesPath(t), Interactive)
	require.NoError(t, err)
	want := chatAlone(l)
	l.Release()

	var mu sync.Mutex
	most := 0
	sample := func() {
		mu.Lock()
		most = max(most, cpu.LiveWorkers()-before)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	var text string
	var terr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		d, err := r.Speech(context.Background(), kitPath(t), Dictation)
		if err != nil {
			terr = err
			return
		}
		defer d.Release()
		o := opt
		o.BeforeWindow = func(context.Context) error { sample(); return nil }
		res, err := d.File.TranscribeSamples(context.Background(), d.Model, jfk, o)
		if err == nil {
			text = res.Text
		}
		terr = err
		sample()
	}()
	l, err = r.LLM(context.Background(), storiesPath(t), Interactive)
	require.NoError(t, err)
	require.NoError(t, l.M.Truncate(0))
	res, err := l.Gen.Generate(context.Background(), l.Gen.PromptTokens("Once upon a time", true), gen,
		func(string) error { sample(); return nil })
	l.Release()
	require.NoError(t, err)
	wg.Wait()
	require.NoError(t, terr)
	sample()

	require.Len(t, r.Loaded(), 2, "both models were loaded at once")
	require.LessOrEqual(t, most, cores, "CPU workers of the loaded models")
	require.Positive(t, most)
	require.Equal(t, want, res.Tokens, "the chat's tokens next to a dictation")
	require.Contains(t, strings.ToLower(text), "ask not what your country can do for you")
}

// The runtime's priorities reach the shared CPU pool: each model's passes
// take it at its holder's priority (cpu's TestPassAdmissionByPriority
// counts what the pool does with them), so a dictation's passes go before
// a chat's and a file job's.
func TestDictationFirstOnTheSharedPool(t *testing.T) {
	r := newRT(t, Options{Threads: 2, WhisperBeams: 1})
	ctx := context.Background()
	d, err := r.Speech(ctx, kitPath(t), Dictation)
	require.NoError(t, err)
	l, err := r.LLM(ctx, storiesPath(t), Interactive)
	require.NoError(t, err)
	view := func(path string) *cpu.Backend {
		r.mu.Lock()
		defer r.mu.Unlock()
		var be any
		switch m := r.entries[key{path, r.backend}].model.(type) {
		case *speechModel:
			be = m.be
		case *llmModel:
			be = m.be
		}
		c, ok := be.(*cpu.Backend)
		require.True(t, ok, "%s runs on a CPU backend", path)
		return c
	}
	sv, lv := view(kitPath(t)), view(storiesPath(t))
	require.Same(t, sv.Pool(), lv.Pool(), "one pool")
	require.Equal(t, int32(Dictation), sv.Priority())
	require.Equal(t, int32(Interactive), lv.Priority())
	d.Release()
	l.Release()

	// the next holder's priority is the passes' priority
	b, err := r.Speech(ctx, kitPath(t), Batch)
	require.NoError(t, err)
	require.Equal(t, int32(Batch), sv.Priority())
	b.Release()
}
