//go:build unix

package cli

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// TestStreamInterrupt sends a real SIGINT to `hark stream -` while stdin
// is still open: the input ends, the uncommitted tail is decoded, the
// whole transcript is printed as the last line, and the status is 130.
func TestStreamInterrupt(t *testing.T) {
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	x, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	pcm := pcmBytes(x)
	inR, inW := io.Pipe()
	defer inW.Close()
	var out, errOut lockedBuffer
	root := NewRoot(&out, &errOut)
	root.SetIn(inR)
	root.SetArgs([]string{"stream", "--model", model, "--json", "--speed", "50", "-"})
	done := make(chan error, 1)
	go func() { done <- root.Execute() }()
	_, err = inW.Write(pcm) // all of it read; stdin stays open, as with a microphone
	require.NoError(t, err)
	events := func() []whisper.WallEvent {
		var evs []whisper.WallEvent
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var e whisper.WallEvent
			if json.Unmarshal([]byte(line), &e) == nil {
				evs = append(evs, e)
			}
		}
		return evs
	}
	// Interrupted once every sample was played and some text is shown, but
	// (stdin still open) none of it is final.
	all := float64(len(x)) / whisper.SampleRate
	deadline := time.Now().Add(shared.Wait(t, 120*time.Second))
	for !slices.ContainsFunc(events(), func(e whisper.WallEvent) bool { return e.AudioEnd > all-0.2 }) {
		require.True(t, time.Now().Before(deadline), "the stream did not reach the end of the audio: %s", errOut.String())
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGINT))
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(shared.Wait(t, 120*time.Second)):
		t.Fatal("hark stream did not end on SIGINT")
	}
	require.Equal(t, exitInterrupted, exitCode(runErr), "%v", runErr)
	require.NotContains(t, runErr.Error(), "context canceled")
	evs := events()
	last := evs[len(evs)-1]
	require.Equal(t, whisper.EventFinal, last.Type, "the transcript so far is printed as final")
	require.Contains(t, last.Text, "ask not what your country can do for you")
	var committed strings.Builder
	for _, e := range evs[:len(evs)-1] {
		if e.Type == whisper.EventCommitted {
			committed.WriteString(e.Text)
		}
	}
	require.Equal(t, last.Text, strings.TrimSpace(committed.String()), "the tail was committed before the final line")
}
