package dictation

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// recordingTranscriber records what it was asked to transcribe.
type recordingTranscriber struct {
	got  []float32
	text string
	err  error
}

func (r *recordingTranscriber) Transcribe(_ context.Context, x []float32, _ string) (Transcript, error) {
	r.got = append([]float32(nil), x...)
	return Transcript{Text: r.text}, r.err
}

type failingCleaner struct{}

func (failingCleaner) Cleanup(context.Context, string) (string, error) {
	return "", errors.New("no chat model")
}

type lastOutput struct{ text, mode string }

func (o *lastOutput) Insert(text, mode string, _ bool) error { o.text, o.mode = text, mode; return nil }

// TestAutoStopAndTrim dictates a real clip through the pipeline in toggle
// mode with auto-stop: the hook fires after the pause that follows the
// speech, and the transcriber gets the clip without the silence around it.
func TestAutoStopAndTrim(t *testing.T) {
	clip, err := audio.Load16k(shared.Path(t, "audio", "ljspeech-LJ001-0002.wav"))
	require.NoError(t, err)
	src := &pushSource{}
	var stops atomic.Int32
	tr := &recordingTranscriber{text: "in being comparatively modern."}
	out := &lastOutput{}
	d, err := New(Config{Dir: filepath.Join(t.TempDir(), "rec"), Armed: true, AutoStop: 700 * time.Millisecond,
		OutputMode: "paste", Cleanup: true},
		Deps{Open: src.open, Transcriber: tr, Cleaner: failingCleaner{}, Output: out},
		Hooks{OnAutoStop: func() { stops.Add(1) }})
	require.NoError(t, err)
	defer d.Close()
	path, err := d.Start("")
	require.NoError(t, err)
	x := append(append(make([]float32, 8000), clip...), make([]float32, 2*16000)...)
	for i := 0; i < len(x); i += 160 {
		src.Push(x[i:min(i+160, len(x))])
	}
	require.Eventually(t, func() bool { return stops.Load() == 1 }, 3*time.Second, 5*time.Millisecond, "auto-stop hook")
	rec, err := d.Stop()
	require.NoError(t, err)
	require.Equal(t, path, rec.Path)
	res, err := d.Process(context.Background(), rec)
	require.NoError(t, err)
	// Trimmed: well under the 3.1 s recorded, all of the 1.6 s clip.
	require.Less(t, len(tr.got), len(x)-16000)
	require.Greater(t, len(tr.got), len(clip)-1600)
	require.Equal(t, "in being comparatively modern.", res.Text, "a failed clean-up keeps the transcript")
	require.ErrorContains(t, res.CleanupErr, "no chat model")
	require.Equal(t, lastOutput{"in being comparatively modern.", "paste"}, *out)
	require.EqualValues(t, 1, stops.Load(), "the hook fires once")
}

func TestProcessSilenceAndRecovery(t *testing.T) {
	src := &pushSource{}
	tr := &recordingTranscriber{text: "recovered"}
	out := &lastOutput{}
	d, err := New(Config{Dir: t.TempDir(), OutputMode: "type"}, Deps{Open: src.open, Transcriber: tr, Output: out}, Hooks{})
	require.NoError(t, err)
	path, err := d.Start("")
	require.NoError(t, err)
	src.Push(make([]float32, 16000))
	rec, err := d.Stop()
	require.NoError(t, err)
	_, err = d.Process(context.Background(), rec)
	require.ErrorIs(t, err, ErrNoSpeech)
	_, err = os.Stat(path)
	require.NoError(t, err, "a recording without speech is kept")

	// A file left by a crash is processed from disk, without output.
	clip := shared.Path(t, "audio", "jfk.wav")
	res, err := d.ProcessFile(context.Background(), clip, false)
	require.NoError(t, err)
	require.Equal(t, "recovered", res.Text)
	require.Empty(t, out.text, "no output for a recovered recording")

	_, err = New(Config{}, Deps{Transcriber: tr}, Hooks{})
	require.Error(t, err)
	_, err = New(Config{Dir: t.TempDir()}, Deps{}, Hooks{})
	require.Error(t, err)
}
