package app

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/internal/vocab"
)

// slowCleaner is a chat model that streams a few pieces, then takes until
// finish (forever when zero) unless its context ends first.
type slowCleaner struct {
	pieces   []string
	finish   time.Duration
	err      error
	canceled atomic.Bool
	calls    atomic.Int32
	lastInst atomic.Pointer[string]
	streamed chan struct{} // closed once its pieces are out (nil: not told)
}

func (c *slowCleaner) clean(ctx context.Context, text, instruction string, onText func(string)) (string, error) {
	c.calls.Add(1)
	c.lastInst.Store(&instruction)
	sofar := ""
	for _, p := range c.pieces {
		sofar += p
		if onText != nil {
			onText(sofar)
		}
	}
	if c.streamed != nil {
		close(c.streamed)
	}
	var done <-chan time.Time
	if c.finish > 0 {
		done = time.After(c.finish)
	}
	select {
	case <-ctx.Done():
		c.canceled.Store(true)
		return "", ctx.Err()
	case <-done:
		return sofar, c.err
	}
}

// defaultCleanupLimit is cleanupLimit as the app has it.
var defaultCleanupLimit = cleanupLimit

func useCleaner(a *App, c cleaner) { a.Dictation.cleanWith.Store(&c) }

func cleanupStates(ev *events) []string {
	var s []string
	for _, e := range ev.named("dictation:cleanup") {
		s = append(s, e.(CleanupEvent).State)
	}
	return s
}

// A clean-up that does not finish in time is dropped: the raw text comes
// back when the limit is up, the model is stopped, and the events show
// the streamed answer then the timeout. One that finishes in time is used.
func TestCleanupBounded(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)

	never := &slowCleaner{pieces: []string{"And so", ", my"}, streamed: make(chan struct{})}
	// The limit is up once the answer has streamed (on a loaded machine
	// the cleaner's goroutine could otherwise start after it).
	cleanupLimit = func(limit time.Duration) (<-chan time.Time, func() bool) {
		c := make(chan time.Time, 1)
		timer := time.AfterFunc(limit, func() { <-never.streamed; c <- time.Now() })
		return c, timer.Stop
	}
	t.Cleanup(func() { cleanupLimit = defaultCleanupLimit })
	start := time.Now()
	got, ok := a.Dictation.cleanBounded(t.Context(), never, "raw text", "Fix.", 200*time.Millisecond)
	took := time.Since(start)
	require.False(t, ok)
	require.Equal(t, "raw text", got)
	require.GreaterOrEqual(t, took, 200*time.Millisecond)
	require.Less(t, took, shared.Wait(t, 3*time.Second), "the limit bounds the wait")
	require.Eventually(t, never.canceled.Load, shared.Wait(t, 5*time.Second), 10*time.Millisecond, "the model is stopped, not left running")
	require.Equal(t, []string{CleanupRunning, CleanupRunning, CleanupTimeout}, cleanupStates(ev))
	last := ev.named("dictation:cleanup")[2].(CleanupEvent)
	require.GreaterOrEqual(t, last.Ms, int64(200))
	require.Equal(t, "And so, my", ev.named("dictation:cleanup")[1].(CleanupEvent).Text, "the answer streams")

	quick := &slowCleaner{pieces: []string{"Clean", " text."}, finish: time.Millisecond}
	got, ok = a.Dictation.cleanBounded(t.Context(), quick, "raw text", "Fix.", 5*time.Second)
	require.True(t, ok)
	require.Equal(t, "Clean text.", got)

	broken := &slowCleaner{finish: time.Millisecond, err: errors.New("model fell over")}
	got, ok = a.Dictation.cleanBounded(t.Context(), broken, "raw text", "Fix.", 5*time.Second)
	require.False(t, ok)
	require.Equal(t, "raw text", got)
	states := cleanupStates(ev)
	require.Equal(t, CleanupFailed, states[len(states)-1])

	// No limit (0): it waits for the answer.
	slow := &slowCleaner{pieces: []string{"Late."}, finish: 300 * time.Millisecond}
	got, ok = a.Dictation.cleanBounded(t.Context(), slow, "raw", "Fix.", 0)
	require.True(t, ok)
	require.Equal(t, "Late.", got)
}

// In a dictation: the settings' limit applies, the raw (rewritten) text is
// inserted on timeout, and the model got the mode's context.
func TestDictationCleanupTimeout(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	sink := &textSink{}
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")})
	a.SetOutput(sink)
	a.SetFocus(&fixedFocus{app: "Slack"})
	never := &slowCleaner{pieces: []string{"Hello"}}
	useCleaner(a, never)

	s, err := a.Settings.Get()
	require.NoError(t, err)
	require.Equal(t, 1500, s.CleanupTimeoutMs, "the default limit")
	s.Cleanup, s.CleanupTimeoutMs = true, 300
	s.Vocabulary, s.VocabularyPrompt = "Comrades\n", false
	_, err = a.Settings.Update(s)
	require.NoError(t, err)

	require.NoError(t, a.Dictation.Start())
	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	require.Equal(t, []string{it.Text}, sink.texts, "the raw transcript went in")
	require.Eventually(t, never.canceled.Load, shared.Wait(t, 5*time.Second), 10*time.Millisecond, "the model is stopped")
	inst := *never.lastInst.Load()
	require.Contains(t, inst, DefaultCleanupPrompt)
	require.Contains(t, inst, `into the app "Slack"`)
	require.Contains(t, inst, "spelled exactly so: Comrades.")

	s.CleanupTimeoutMs = -1
	_, err = a.Settings.Update(s)
	require.ErrorContains(t, err, "cleanupTimeoutMs")
}

func TestCleanupInstruction(t *testing.T) {
	terms, err := vocab.Parse("Kubernetes = cooper netties\nPyTorch\n")
	require.NoError(t, err)
	cases := []struct {
		p    wordPlan
		want string
	}{
		{wordPlan{cleanup: "Fix."}, "Fix."},
		{wordPlan{cleanup: "Fix.", app: "com.apple.mail", mode: "Email"},
			"Fix.\n\nThe text will be inserted into the app \"com.apple.mail\" (dictation mode \"Email\"); match its style."},
		{wordPlan{cleanup: "Fix.", terms: terms}, "Fix.\nThese names and terms are spelled exactly so: Kubernetes, PyTorch."},
	}
	for _, c := range cases {
		require.Equal(t, c.want, cleanupInstruction(&c.p))
	}
	many := make([]vocab.Term, 100)
	for i := range many {
		many[i] = vocab.Term{Text: "t"}
	}
	got := cleanupInstruction(&wordPlan{cleanup: "Fix.", terms: many})
	require.Equal(t, maxContextTerms, strings.Count(got, "t,")+strings.Count(got, "t."))
}

// BenchmarkCleanupStories times one clean-up of a dictated sentence by the
// shared tiny chat model (stories260K), streamed, the model loaded:
// go test ./app -run '^$' -bench CleanupStories -benchtime 20x
func BenchmarkCleanupStories(b *testing.B) {
	a := openApp(b, b.TempDir(), testModelsDir(b), nil)
	text := "so um I think we should uh meet on tuesday to go over the kubernetes migration"
	inst := cleanupInstruction(&wordPlan{cleanup: DefaultCleanupPrompt, app: "com.tinyspeck.slackmacgap", mode: "Chat"})
	if _, err := a.Chat.clean(b.Context(), text, inst, nil); err != nil { // load and warm up
		b.Fatal(err)
	}
	var first time.Duration
	n := 0
	for b.Loop() {
		n++
		start := time.Now()
		var got bool
		_, err := a.Chat.clean(b.Context(), text, inst, func(string) {
			if !got {
				got, first = true, first+time.Since(start)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(n), "ms-first-piece/op")
}
