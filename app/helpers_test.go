package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// event is one emitted event.
type event struct {
	name string
	data any
}

// events records what the app emits and lets tests wait for an event.
type events struct {
	mu   sync.Mutex
	all  []event
	cond *sync.Cond
	// hook, if set, runs on every event (from the emitting goroutine).
	hook func(name string, data any)
}

func newEvents() *events {
	e := &events{}
	e.cond = sync.NewCond(&e.mu)
	return e
}

func (e *events) Emit(name string, data any) {
	e.mu.Lock()
	e.all = append(e.all, event{name, data})
	hook := e.hook
	e.cond.Broadcast()
	e.mu.Unlock()
	if hook != nil {
		hook(name, data)
	}
}

// wait returns the first event at or after index from matching name and
// ok, failing the test after timeout (scaled: shared.Wait).
func (e *events) wait(t *testing.T, name string, ok func(any) bool, timeout time.Duration) any {
	t.Helper()
	timeout = shared.Wait(t, timeout)
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, func() { e.mu.Lock(); e.cond.Broadcast(); e.mu.Unlock() })
	defer timer.Stop()
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := 0; ; {
		for ; i < len(e.all); i++ {
			if ev := e.all[i]; ev.name == name && (ok == nil || ok(ev.data)) {
				return ev.data
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event within %s", name, timeout)
		}
		e.cond.Wait()
	}
}

// named returns the data of every event called name so far.
func (e *events) named(name string) []any {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []any
	for _, ev := range e.all {
		if ev.name == name {
			out = append(out, ev.data)
		}
	}
	return out
}

// testModelsDir is a models folder with the whisper kit's tiny.en model
// (as "kit") and stories260K (as "stories").
func testModelsDir(t testing.TB) string {
	dir := t.TempDir()
	linkModel(t, shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), dir, "kit.bin")
	linkModel(t, shared.Path(t, "models", "stories260K.gguf"), dir, "stories.gguf")
	return dir
}

// linkModel puts the model file src into the models folder dir as name:
// a hard link when the test data shares the file system (the models are
// only read), else a copy.
func linkModel(t testing.TB, src, dir, name string) {
	if os.Link(src, filepath.Join(dir, name)) == nil {
		return
	}
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
}

// testChatMaxTokens bounds the test apps' chat answers: sampled at
// temperature 0.7, the story model's answer runs to anywhere up to
// DefaultChatMaxTokens (1024), which on a loaded machine took minutes
// (TestChatStreamsStoresAndStops); no test needs more than a few tokens.
const testChatMaxTokens = 48

// openApp opens an app over dataDir and modelsDir, closed with the test.
func openApp(t testing.TB, dataDir, modelsDir string, em Emitter) *App {
	t.Helper()
	a, err := New(Config{DataDir: dataDir, ModelsDir: modelsDir, Emitter: em, Threads: 2, NoSpeedProbe: true, ChatMaxTokens: testChatMaxTokens})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a
}

// kitText is a clip's target text: the `text` of the kit's reference
// transcription, trimmed as History stores it.
func kitText(t testing.TB, clip string) string {
	b, err := os.ReadFile(shared.Path(t, "whisper-kit", "reference", "transcribe", clip+".json"))
	require.NoError(t, err)
	var ref struct {
		Text     string `json:"text"`
		Segments []struct {
			Start, End float64
		} `json:"segments"`
	}
	require.NoError(t, json.Unmarshal(b, &ref))
	require.NotEmpty(t, ref.Text)
	return strings.TrimSpace(ref.Text)
}
