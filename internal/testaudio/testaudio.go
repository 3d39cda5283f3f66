// Package testaudio builds the audio files tests transcribe from the
// shared test clips (HARK_TESTDATA's audio/), such as a two-channel call
// recording with each side's speech where the test wants it.
package testaudio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

// Rate is the files' sample rate.
const Rate = 16000

// Load is the shared clip name (audio/NAME.wav) at 16 kHz.
func Load(t testing.TB, name string) []float32 {
	x, err := audio.Load16k(shared.Path(t, "audio", name+".wav"))
	require.NoError(t, err)
	return x
}

// Clip is a shared clip on channel Ch from At seconds, scaled by Gain
// (0: as it is; an echo is a quieter copy).
type Clip struct {
	Ch   int
	At   float64
	Name string
	Gain float32
}

// Stereo writes a two-channel 16-kHz WAV of secs (at least its clips'
// length), silent but for its clips, in a test's temporary directory as
// meeting.wav, and returns its path.
func Stereo(t testing.TB, secs float64, clips ...Clip) string {
	n := int(secs * Rate)
	xs := make([][]float32, len(clips))
	for i, c := range clips {
		xs[i] = Load(t, c.Name)
		n = max(n, int(c.At*Rate)+len(xs[i]))
	}
	frames := make([]float32, 2*n)
	for i, c := range clips {
		off, gain := int(c.At*Rate), c.Gain
		if gain == 0 {
			gain = 1
		}
		for j, v := range xs[i] {
			frames[2*(off+j)+c.Ch] += gain * v
		}
	}
	path := filepath.Join(t.TempDir(), "meeting.wav")
	f, err := audio.CreateFile(path)
	require.NoError(t, err)
	w, err := audio.NewWAVWriterChannels(f, Rate, 2)
	require.NoError(t, err)
	require.NoError(t, w.Write(frames))
	require.NoError(t, w.Close())
	return path
}

// Text is the shared clip name's reference transcript (audio/NAME.txt).
func Text(t testing.TB, name string) string {
	b, err := os.ReadFile(shared.Path(t, "audio", name+".txt"))
	require.NoError(t, err)
	return string(b)
}

// WER is got's word error rate against the clip name's reference.
func WER(t testing.TB, name, got string) float64 { return shared.WER(Text(t, name), got) }
