package whisper

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

// readClip reads a shared clip as 16 kHz samples.
func readClip(t testing.TB, name string) []float32 {
	t.Helper()
	x, err := audio.Load16k(shared.Path(t, "audio", name+".wav"))
	require.NoError(t, err)
	return x
}

// On the kit model, streamed clips keep the streamer's guarantees: every
// committed word's audio had arrived (its word time, from the model's own
// alignment, ends at least the holdback before the audio received), each
// decode's window is bounded, and Finish decodes once. The kit model only
// memorized whole clips: on part of a clip it says another clip's words,
// so the streamed text is NOT the offline transcript; its WER against the
// reference is logged, not asserted (see BENCHMARKS.md).
func TestKitStreamGuarantees(t *testing.T) {
	f, m := loadKit(t, "ggml-kit-tiny.en-f16.bin")
	clips := []string{"librispeech-1089-134691-0000"} // 2.1 s: 3 decodes keep CI lean
	for _, name := range clips {
		var want refResult
		readJSON(t, shared.Path(t, "whisper-kit", "reference", "transcribe", name+".json"), &want)
		x := readClip(t, name)
		sm := NewStreamModel(f, m)
		var s *Streamer
		var received float64
		var windows []float64
		tr := windowSpy{sm, func(n int) { windows = append(windows, secs(n)) }}
		var commits []StreamEvent
		s = NewStreamer(tr, StreamConfig{}, func(e StreamEvent) {
			if e.Type == EventCommitted {
				require.LessOrEqual(t, e.AudioEnd, received-0.5+1e-6, "%s: %q committed at %.2f s", name, e.Text, received)
				commits = append(commits, e)
			}
			require.LessOrEqual(t, e.AudioEnd, received+1e-6, "%s: event past the audio", name)
		})
		start := time.Now()
		chunk := SampleRate / 10
		for i := 0; i < len(x); i += chunk {
			received = secs(min(i+chunk, len(x)))
			require.NoError(t, s.Write(context.Background(), x[i:min(i+chunk, len(x))]))
		}
		// At the end all the audio is in: the final commit may reach it.
		n := s.Decodes()
		received += 0.5
		res, err := s.Finish(context.Background())
		require.NoError(t, err)
		require.LessOrEqual(t, s.Decodes()-n, 1)
		for _, w := range windows {
			require.LessOrEqual(t, w, 21.0)
		}
		var joined strings.Builder
		for _, c := range commits {
			joined.WriteString(c.Text)
		}
		require.Equal(t, res.Text, strings.TrimSpace(joined.String()))
		t.Logf("%s (%.1f s): %d decodes in %v; WER vs offline %.2f (kit model: partial windows are not memorized)\n  offline %q\n  stream  %q",
			name, secs(len(x)), s.Decodes(), time.Since(start).Round(time.Millisecond),
			wordErrorRate(want.Text, res.Text), strings.TrimSpace(want.Text), res.Text)
	}
}

// windowSpy reports each window's length.
type windowSpy struct {
	t  WindowTranscriber
	on func(samples int)
}

func (w windowSpy) TranscribeWindow(ctx context.Context, x []float32, p string) ([]Word, error) {
	w.on(len(x))
	return w.t.TranscribeWindow(ctx, x, p)
}
