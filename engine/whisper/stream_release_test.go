package whisper

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
)

// stuckEncode is a model's executable whose next encoder pass, once
// armed, never finishes on its own: it is a stream's partial decode still
// in its encoder when the hotkey is released. Under RunCtx it ends when
// its context does; under Run (a caller that cannot stop it) only when
// the test ends.
type stuckEncode struct {
	plan.Executable
	armed   atomic.Bool
	entered chan struct{}
	end     chan struct{} // closed when the test ends
	encodes atomic.Int32  // encoder passes begun
}

func (s *stuckEncode) stuck(ctx context.Context, pass int) (bool, error) {
	if pass != PassEncode {
		return false, nil
	}
	s.encodes.Add(1)
	if !s.armed.Swap(false) {
		return false, nil
	}
	s.entered <- struct{}{}
	select {
	case <-ctx.Done():
		return true, ctx.Err()
	case <-s.end:
		return true, errors.New("the stuck encoder pass ended with the test")
	}
}

func (s *stuckEncode) Run(pass int, vars *plan.Vars) error {
	if stuck, err := s.stuck(context.Background(), pass); stuck {
		return err
	}
	return s.Executable.Run(pass, vars)
}

func (s *stuckEncode) RunCtx(ctx context.Context, pass int, vars *plan.Vars) error {
	if stuck, err := s.stuck(ctx, pass); stuck {
		return err
	}
	if c, ok := s.Executable.(plan.Canceler); ok {
		return c.RunCtx(ctx, pass, vars)
	}
	return s.Executable.Run(pass, vars)
}

// releaseClip is the dictation the tests release: the 5.1-s kit clip of
// the dictation benchmarks, and its reference text.
func releaseClip(t *testing.T) (string, []float32) {
	const clip = "ljspeech-LJ001-0004"
	var ref refResult
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "transcribe", clip+".json"), &ref)
	return strings.TrimSpace(ref.Text), readClip(t, clip)
}

// At release the live stream cancels the step in flight (app/stream.go)
// and decodes the tail: the step must stop without finishing its encoder
// pass, and the final text must come without it. The partial step's
// encoder never finishes here, so a release that waited for it would
// never get its text (the wait below only bounds a hang); the work is
// counted: two encoder passes, the abandoned one and the final one.
func TestStreamReleaseAbandonsPartialDecode(t *testing.T) {
	t.Parallel()
	f, m := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	stub := &stuckEncode{Executable: m.exec, entered: make(chan struct{}, 1), end: make(chan struct{})}
	m.exec = stub
	t.Cleanup(func() { close(stub.end); m.exec = stub.Executable })
	want, x := releaseClip(t)
	hang := shared.Wait(t, 2*time.Minute)

	st := NewStreamer(NewStreamModel(f, m), StreamConfig{NoPrompt: true}, nil)
	stepCtx, release := context.WithCancel(context.Background())
	stub.armed.Store(true)
	wrote := make(chan error, 1)
	go func() { wrote <- st.Write(stepCtx, x[:2*SampleRate]) }() // a step: its encoder pass sticks
	select {
	case <-stub.entered:
	case <-time.After(hang):
		t.Fatal("the stream's step never began its encoder pass")
	}
	release()
	select {
	case err := <-wrote:
		require.ErrorIs(t, err, context.Canceled, "the partial step was abandoned")
	case <-time.After(hang):
		t.Fatal("the release waited for the partial decode's encoder pass")
	}
	// The rest of the audio comes after the release, as in app/stream.go:
	// written under the released context (no step runs), then the tail.
	err := st.Write(stepCtx, x[2*SampleRate:])
	require.True(t, err == nil || errors.Is(err, context.Canceled), "%v", err)
	res, err := st.Finish(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, res.Text, "the final text is the whole clip's")
	require.EqualValues(t, 2, stub.encodes.Load(), "encoder passes: the abandoned partial one and the final one")
}

// countdownCtx is done from its (n+1)-th Err call on (Done is never
// closed: only Err is checked between dispatches).
type countdownCtx struct {
	context.Context
	n, calls int
}

func (c *countdownCtx) Err() error {
	c.calls++
	if c.calls > c.n {
		return context.Canceled
	}
	return nil
}

func (c *countdownCtx) Done() <-chan struct{} { return make(chan struct{}) }

// The CPU backend stops an encoder pass between dispatches once its
// context is done (plan.Canceler): after exactly the dispatches that ran
// before, not at the end of the pass; and the model decodes right after
// a pass stopped half way.
func TestEncodeStopsBetweenDispatches(t *testing.T) {
	t.Parallel()
	f, m := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	_, ok := m.exec.(plan.Canceler)
	require.True(t, ok, "the CPU executable can stop a pass")
	const ran = 3
	ctx := &countdownCtx{Context: context.Background(), n: ran}
	err := m.encode(ctx, make([]float32, m.H.NMels*m.H.NFrames()))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, ran+1, ctx.calls, "checked before each dispatch, stopped at the first check after the cancel")

	want, x := releaseClip(t)
	segs, err := NewStreamModel(f, m).TranscribeWindow(context.Background(), x, "")
	require.NoError(t, err)
	var got strings.Builder
	for _, s := range segs {
		got.WriteString(s.Text)
	}
	require.Equal(t, want, strings.TrimSpace(got.String()))
}
