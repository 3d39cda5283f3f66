package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// hark stream --json plays a clip and reports committed and tentative
// events with wall times; the committed texts add up to the final one.
// From stdin it reads s16le PCM, prints committed lines and the whole
// transcript last; a PCM stream cut mid-sample is an error.
func TestStreamCommand(t *testing.T) {
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	clip := shared.Path(t, "audio", "librispeech-1089-134691-0000.wav")
	out, _, err := runHark(t, "stream", "--model", model, "--json", "--speed", "2", clip)
	require.NoError(t, err)
	var evs []whisper.WallEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e whisper.WallEvent
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		evs = append(evs, e)
	}
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	require.Equal(t, whisper.EventFinal, last.Type)
	require.NotEmpty(t, last.Text)
	require.InDelta(t, 2.1, last.AudioEnd, 0.1)
	var committed strings.Builder
	wall := 0.0
	for _, e := range evs[:len(evs)-1] {
		require.Contains(t, []string{whisper.EventCommitted, whisper.EventTentative}, e.Type)
		require.GreaterOrEqual(t, e.Wall, wall)
		wall = e.Wall
		if e.Type == whisper.EventCommitted {
			committed.WriteString(e.Text)
		}
	}
	require.Equal(t, last.Text, strings.TrimSpace(committed.String()))

	x, err := audio.Load16k(clip)
	require.NoError(t, err)
	pcm := pcmBytes(x)
	out, _, err = runHarkStdin(t, string(pcm), "stream", "--model", model, "--speed", "50", "-")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NotEmpty(t, lines[len(lines)-1])
	require.Equal(t, lines[len(lines)-1], strings.Join(lines[:len(lines)-1], " "), "the committed lines, then the whole transcript")

	_, _, err = runHarkStdin(t, string(pcm[:3201]), "stream", "--model", model, "--speed", "50", "-")
	require.ErrorContains(t, err, "middle of a sample")
	_, _, err = runHark(t, "stream", "--model", model, "--speed", "0", clip)
	require.ErrorContains(t, err, "--speed")
}

// pcmBytes is x as s16le, what `hark stream -` reads.
func pcmBytes(x []float32) []byte {
	b := make([]byte, 2*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(max(-1, min(1, v))*32767)))
	}
	return b
}

// failingWriter fails every write, as a closed pipe or a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// Output that cannot be written ends the stream with an error (the
// transcript is lost, so the exit status must say so).
func TestStreamOutputFailure(t *testing.T) {
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	x, err := audio.Load16k(shared.Path(t, "audio", "librispeech-1089-134691-0000.wav"))
	require.NoError(t, err)
	pcm := pcmBytes(x[:16000]) // 1 s: the work is bounded by the audio
	var errOut bytes.Buffer
	root := NewRoot(failingWriter{}, &errOut)
	root.SetIn(bytes.NewReader(pcm))
	root.SetArgs([]string{"stream", "--model", model, "--speed", "50", "--json", "-"})
	require.ErrorContains(t, root.Execute(), "writing the transcript: disk full")
}
