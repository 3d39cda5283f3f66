package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/backends/backendstest"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

func kitPath(t *testing.T) string {
	return shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
}

func storiesPath(t *testing.T) string { return shared.Path(t, "models", "stories260K.gguf") }

func newRT(t *testing.T, opt Options) *Runtime {
	if opt.Threads == 0 {
		opt.Threads = 2
	}
	r := New(opt)
	t.Cleanup(r.Close)
	return r
}

// waiting blocks until n requests queue for path.
func waiting(t *testing.T, r *Runtime, path string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, in := range r.Loaded() {
			if in.Path == path && in.Waiting == n {
				return true
			}
		}
		return false
	}, shared.Wait(t, 5*time.Second), time.Millisecond)
}

// One loaded instance serves every holder in turn; it is loaded once.
func TestSharedInstance(t *testing.T) {
	r := newRT(t, Options{})
	kit := kitPath(t)
	a, err := r.Speech(context.Background(), kit, Interactive)
	require.NoError(t, err)
	require.Equal(t, "cpu", a.Backend)
	a.Release()
	a.Release() // no-op
	b, err := r.Speech(context.Background(), kit, Dictation)
	require.NoError(t, err)
	require.Same(t, a.Model, b.Model)
	b.Release()
	require.Equal(t, 1, r.Loads(kit))
	in := r.Loaded()
	require.Len(t, in, 1)
	require.Equal(t, Info{Path: kit, Kind: Speech, Backend: "cpu", Bytes: in[0].Bytes}, in[0])

	l, err := r.LLM(context.Background(), storiesPath(t), Interactive)
	require.NoError(t, err)
	require.NotNil(t, l.Template)
	require.NotEmpty(t, l.Gen.Tk.Encode("Once upon a time", false))
	l.Release()
	require.Len(t, r.Loaded(), 2)
}

// Waiting requests are served dictation first, then API and chat requests
// in arrival order, then file jobs; a canceled wait leaves the queue.
func TestPriorities(t *testing.T) {
	r := newRT(t, Options{})
	path := storiesPath(t)
	h, err := r.LLM(context.Background(), path, Batch)
	require.NoError(t, err)

	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	queue := func(name string, pri Priority) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := r.LLM(context.Background(), path, pri)
			if !assertNoError(t, err) {
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			l.Release()
		}()
	}
	queue("api1", Interactive)
	waiting(t, r, path, 1)
	queue("file", Batch)
	waiting(t, r, path, 2)
	queue("dictation", Dictation)
	waiting(t, r, path, 3)
	queue("chat2", Interactive)
	waiting(t, r, path, 4)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := r.LLM(ctx, path, Dictation)
		errc <- err
	}()
	waiting(t, r, path, 5)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	waiting(t, r, path, 4)

	h.Release()
	wg.Wait()
	require.Equal(t, []string{"dictation", "api1", "chat2", "file"}, order)
	require.Equal(t, 1, r.Loads(path))
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

// A file job yields the model between 30-s windows: a dictation queued
// during its first window runs before its second, and the job's text is
// unchanged by the interruption.
func TestFileJobYieldsBetweenWindows(t *testing.T) {
	r := newRT(t, Options{WhisperBeams: 1})
	kit := kitPath(t)
	jfk, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	// The kit's long-form clip cut to 55 s: windows at 0 and 24.98 s as
	// in the reference's transcription of the whole file, then a short one.
	long, err := audio.Load16k(shared.Path(t, "audio", "ljspeech-longform-LJ001-0021-0076.wav"))
	require.NoError(t, err)
	long = long[:55*whisper.SampleRate]
	b, err := os.ReadFile(shared.Path(t, "whisper-kit", "reference", "longform", "longform-nowords.json"))
	require.NoError(t, err)
	var ref struct{ Segments []whisper.Segment }
	require.NoError(t, json.Unmarshal(b, &ref))
	var want strings.Builder
	for _, s := range ref.Segments {
		if s.Seek < 4884 {
			want.WriteString(s.Text)
		}
	}
	opt := whisper.DefaultTranscribeOptions()
	opt.BeamSize, opt.Temperatures = 1, []float32{0}

	job, err := r.Speech(context.Background(), kit, Batch)
	require.NoError(t, err)
	var mu sync.Mutex
	windows, grantedAt := 0, -1
	dictated := make(chan string, 1)
	started := false
	jopt := opt
	jopt.BeforeWindow = func(ctx context.Context) error {
		mu.Lock()
		windows++
		mu.Unlock()
		if !started {
			started = true
			go func() {
				d, err := r.Speech(context.Background(), kit, Dictation)
				if !assertNoError(t, err) {
					dictated <- ""
					return
				}
				mu.Lock()
				grantedAt = windows
				mu.Unlock()
				res, err := d.File.TranscribeSamples(context.Background(), d.Model, jfk, opt)
				d.Release()
				if !assertNoError(t, err) {
					dictated <- ""
					return
				}
				dictated <- res.Text
			}()
			waiting(t, r, kit, 1)
		}
		return job.Yield(ctx)
	}
	res, err := job.File.TranscribeSamples(context.Background(), job.Model, long, jopt)
	job.Release()
	require.NoError(t, err)
	text := <-dictated
	require.Contains(t, strings.ToLower(text), "ask not what your country can do for you")
	require.Equal(t, 1, grantedAt, "the dictation got the model after the job's first window")
	require.GreaterOrEqual(t, windows, 2)
	require.True(t, strings.HasPrefix(res.Text, want.String()), "the job's first two windows as the reference's:\n%s\n%s", res.Text, want.String())
}

// Loading past the budget unloads the least recently used idle model, and
// refuses with a clear message when the models in use leave no room.
func TestBudget(t *testing.T) {
	kit, stories := kitPath(t), storiesPath(t)
	size := func(p string) int64 {
		st, err := os.Stat(p)
		require.NoError(t, err)
		return estimate(p, st.Size())
	}
	r := newRT(t, Options{Budget: size(kit) + size(stories) - 1})
	s, err := r.Speech(context.Background(), kit, Interactive)
	require.NoError(t, err)
	s.Release()
	l, err := r.LLM(context.Background(), stories, Interactive)
	require.NoError(t, err)
	in := r.Loaded()
	require.Len(t, in, 1, "the idle speech model made room")
	require.Equal(t, stories, in[0].Path)

	_, err = r.Speech(context.Background(), kit, Interactive)
	require.ErrorContains(t, err, "held by models in use (stories260K.gguf)")
	l.Release()
	s, err = r.Speech(context.Background(), kit, Interactive)
	require.NoError(t, err)
	s.Release()

	small := newRT(t, Options{Budget: size(kit) / 2})
	_, err = small.Speech(context.Background(), kit, Interactive)
	require.ErrorContains(t, err, filepath.Base(kit)+" needs about")
	require.Empty(t, small.Loaded())
}

// Unused models are unloaded after the idle time; models in use are not.
func TestIdleUnload(t *testing.T) {
	r := newRT(t, Options{Idle: func() time.Duration { return 20 * time.Millisecond }, IdleCheck: 5 * time.Millisecond})
	stories := storiesPath(t)
	l, err := r.LLM(context.Background(), stories, Interactive)
	require.NoError(t, err)
	time.Sleep(60 * time.Millisecond)
	require.Len(t, r.Loaded(), 1, "in use: kept")
	l.Release()
	require.Eventually(t, func() bool { return len(r.Loaded()) == 0 }, shared.Wait(t, 5*time.Second), 5*time.Millisecond)
	l, err = r.LLM(context.Background(), stories, Interactive)
	require.NoError(t, err)
	l.Release()
	require.Equal(t, 2, r.Loads(stories))

	// Drop unloads at once when idle, at release when held.
	r.Drop(stories)
	require.Empty(t, r.Loaded())
	l, err = r.LLM(context.Background(), stories, Interactive)
	require.NoError(t, err)
	r.Drop(stories)
	require.Len(t, r.Loaded(), 1)
	l.Release()
	require.Empty(t, r.Loaded())
}

// auto takes the GPU driver when there is one; SetBackend("cpu") forces
// the CPU for models loaded from then on.
func TestBackendChoice(t *testing.T) {
	gpu := backendstest.FakeGPU(t, "metal")
	r := newRT(t, Options{})
	stories := storiesPath(t)
	l, err := r.LLM(context.Background(), stories, Interactive)
	require.NoError(t, err)
	require.Equal(t, "metal", l.Backend)
	l.Release()
	require.Equal(t, 1, gpu.N())

	require.NoError(t, r.SetBackend("cpu"))
	require.Empty(t, r.Loaded(), "the idle GPU copy is unloaded")
	l, err = r.LLM(context.Background(), stories, Interactive)
	require.NoError(t, err)
	require.Equal(t, "cpu", l.Backend)
	l.Release()
	require.ErrorContains(t, r.SetBackend("tpu"), `unknown backend "tpu"`)
}

// Share hands the model to a waiter of the holder's own priority (Yield
// does not) and queues the holder behind it: round robin.
func TestShareRoundRobin(t *testing.T) {
	r := newRT(t, Options{WhisperBeams: 1})
	kit := kitPath(t)
	ctx := context.Background()
	a, err := r.Speech(ctx, kit, Interactive)
	require.NoError(t, err)
	require.NoError(t, a.Share(ctx), "nobody waits: Share returns at once")
	got := make(chan *SpeechModel, 1)
	go func() {
		b, err := r.Speech(ctx, kit, Interactive)
		assertNoError(t, err)
		got <- b
	}()
	waiting(t, r, kit, 1)
	require.NoError(t, a.Yield(ctx), "Yield keeps the model from an equal")
	require.Empty(t, got)
	shared := make(chan error, 1)
	go func() { shared <- a.Share(ctx) }()
	b := <-got
	require.NotNil(t, b)
	waiting(t, r, kit, 1) // a, queued behind b
	require.Empty(t, shared)
	b.Release()
	require.NoError(t, <-shared)
	a.Release()
}

// CloseForExit stops the runtime without tearing down what it loaded: new
// requests fail, and a model taken before still runs on its backend (Close
// would have closed both).
func TestCloseForExitLeavesModels(t *testing.T) {
	r := New(Options{Threads: 2})
	stories := storiesPath(t)
	l, err := r.LLM(context.Background(), stories, Interactive)
	require.NoError(t, err)
	gen := l.Gen
	l.Release()
	r.CloseForExit()
	r.CloseForExit() // no-op
	r.Close()        // no-op once closed
	_, err = r.LLM(context.Background(), stories, Interactive)
	require.ErrorIs(t, err, ErrClosed)
	res, err := gen.Generate(context.Background(), gen.PromptTokens("Once upon a time", true), llm.GenerateOptions{MaxTokens: 4}, func(string) error { return nil })
	require.NoError(t, err, "the model's backend is still open")
	require.NotEmpty(t, res.Tokens)
}
