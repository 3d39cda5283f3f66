package app

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// spyStreamed records what the recorder's stream handed to the dictation.
type spyStreamed struct {
	*CaptureRecorder
	got *whisper.Result
}

func (s *spyStreamed) Streamed() *whisper.Result {
	s.got = s.CaptureRecorder.Streamed()
	return s.got
}

// A dictation fed in real time is streamed: the preview events carry the
// committed text (only ever extended) and the tentative tail, and at
// release the stored text is the stream's final transcript, not a second
// transcription.
func TestDictationPreviewIsTheStream(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	src := &feedSource{}
	cr := NewCaptureRecorder(src.open)
	t.Cleanup(func() { cr.Close() })
	rec := &spyStreamed{CaptureRecorder: cr}
	a.SetRecorder(rec)
	require.NoError(t, cr.Arm(""))
	clip, err := audio.Load16k(shared.Path(t, "audio", "librispeech-1089-134686-0001.wav"))
	require.NoError(t, err)
	src.push(make([]float32, 4000), 160)
	require.NoError(t, a.Dictation.Start())
	x := append(append([]float32{}, clip...), make([]float32, 16000)...)
	for i := 0; i < len(x); i += 1600 { // 100 ms at a time, in real time
		src.push(x[i:min(i+1600, len(x))], 160)
		time.Sleep(100 * time.Millisecond)
	}
	ev.wait(t, "dictation:partial", func(any) bool { return true }, 30*time.Second)
	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	require.NotNil(t, rec.got, "the final text came from the stream")
	require.Equal(t, rec.got.Text, it.Text)
	require.NotEmpty(t, it.Text)

	prev := ""
	parts := ev.named("dictation:partial")
	require.NotEmpty(t, parts)
	for _, p := range parts {
		m := p.(PartialText)
		require.True(t, strings.HasPrefix(m.Committed, prev), "committed text is only extended: %q then %q", prev, m.Committed)
		prev = m.Committed
		require.Equal(t, strings.TrimSpace(m.Committed+m.Tentative), m.Text)
	}
	require.True(t, strings.HasPrefix(it.Text, strings.TrimSpace(prev)), "the final text extends the committed preview")
	t.Logf("%d preview events; final %q", len(parts), it.Text)
}
