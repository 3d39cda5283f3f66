package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// Load time and time to first output through the runtime, as the app
// sees them (BENCHMARKS.md "Model load and first output"):
//
//	go test ./engine/runtime -run '^$' -bench . -benchtime 5x

func BenchmarkLoadSpeech(b *testing.B) {
	kit := shared.Path(b, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	for b.Loop() {
		r := New(Options{Budget: -1})
		s, err := r.Speech(context.Background(), kit, Dictation)
		if err != nil {
			b.Fatal(err)
		}
		s.Release()
		r.Close()
	}
}

// BenchmarkFirstSegment is the time from handing 11 s of speech (jfk) to
// a loaded model to its first segment, greedy as dictation decodes.
func BenchmarkFirstSegment(b *testing.B) {
	kit := shared.Path(b, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	jfk, err := audio.Load16k(shared.Path(b, "audio", "jfk.wav"))
	if err != nil {
		b.Fatal(err)
	}
	r := New(Options{Budget: -1})
	defer r.Close()
	first := errors.New("first segment")
	var total time.Duration
	for b.Loop() {
		s, err := r.Speech(context.Background(), kit, Dictation)
		if err != nil {
			b.Fatal(err)
		}
		opt := whisper.DefaultTranscribeOptions()
		opt.BeamSize, opt.Language = 1, "en"
		ctx, cancel := context.WithCancelCause(context.Background())
		start := time.Now()
		opt.OnSegment = func(whisper.Segment) {
			total += time.Since(start)
			cancel(first)
		}
		s.File.TranscribeSamples(ctx, s.Model, jfk, opt)
		cancel(nil)
		s.Release()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-segment")
}

func BenchmarkLoadLLM(b *testing.B) {
	stories := shared.Path(b, "models", "stories260K.gguf")
	for b.Loop() {
		r := New(Options{Budget: -1})
		l, err := r.LLM(context.Background(), stories, Interactive)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
		r.Close()
	}
}

// BenchmarkFirstToken is the time from a 5-token prompt to the first
// generated token on a loaded model with an empty KV cache.
func BenchmarkFirstToken(b *testing.B) {
	stories := shared.Path(b, "models", "stories260K.gguf")
	r := New(Options{Budget: -1})
	defer r.Close()
	var total time.Duration
	for b.Loop() {
		l, err := r.LLM(context.Background(), stories, Interactive)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.M.Truncate(0); err != nil {
			b.Fatal(err)
		}
		prompt := l.Gen.PromptTokens("Once upon a time", l.AddBOS())
		start := time.Now()
		_, err = l.Gen.Generate(context.Background(), prompt, llm.GenerateOptions{MaxTokens: 1}, nil)
		total += time.Since(start)
		l.Release()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/first-token")
}
