package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

// TestTranscribeChannels: a two-channel meeting file, the call on the
// first channel and the user (from 1 s, over the call's end) on the
// second: --channels others,you labels each side's words and orders the
// lines by time.
func TestTranscribeChannels(t *testing.T) {
	call, err := audio.Load16k(shared.Path(t, "audio", "ljspeech-LJ001-0002.wav"))
	require.NoError(t, err)
	user, err := audio.Load16k(shared.Path(t, "audio", "librivox-sense-and-sensibility-0880.wav"))
	require.NoError(t, err)
	n := 6 * 16000
	frames := make([]float32, 2*n)
	for i := range n {
		if i < len(call) {
			frames[2*i] = call[i]
		}
		if j := i - 16000; j >= 0 && j < len(user) {
			frames[2*i+1] = user[j]
		}
	}
	path := filepath.Join(t.TempDir(), "meeting.wav")
	f, err := audio.CreateFile(path)
	require.NoError(t, err)
	w, err := audio.NewWAVWriterChannels(f, 16000, 2)
	require.NoError(t, err)
	require.NoError(t, w.Write(frames))
	require.NoError(t, w.Close())

	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	out, _, err := runHark(t, "transcribe", "--model", model, "--beam", "1", "--channels", "others,you", "--format", "md", path)
	require.NoError(t, err)
	t.Logf("%s", out)
	require.True(t, strings.HasPrefix(out, "# meeting.wav\n"))
	low := strings.ToLower(out)
	iO := strings.Index(low, "**[00:00] others:** in being comparatively modern.")
	iY := strings.Index(low, "**[00:01] you:** he was not an ill disposed young man")
	require.GreaterOrEqual(t, iO, 0, "the call's words as Others")
	require.Greater(t, iY, iO, "the user's words as You, after the call's start")

	for _, bad := range []string{"you", "you,you", "you,boss", "you,others,x"} {
		_, _, err = runHark(t, "transcribe", "--model", model, "--channels", bad, path)
		require.ErrorContains(t, err, "--channels")
	}
	_, _, err = runHark(t, "transcribe", "--model", model, "--channels", "you,others", shared.Path(t, "audio", "jfk.wav"))
	require.ErrorContains(t, err, "the file has 1")
}
