//go:build cgo && linux

package meeting

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio/capture/pulsetest"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/internal/testaudio"
)

// TestSessionLoopback is a short meeting through PulseAudio null sinks:
// the call plays into the default output while the user, from 1 s on,
// talks into the default input. The live transcript attributes each
// side's words, and the recording holds each side on its own channel.
func TestSessionLoopback(t *testing.T) {
	pa := pulsetest.Start(t)
	pa.AddMic(t)
	tr := kitTranscriber(t)
	live := NewLive([am.Channels]whisper.WindowTranscriber{tr, tr}, LiveConfig{Stream: whisper.StreamConfig{NoPrompt: true}})
	root := t.TempDir()
	began := time.Now()
	s, err := StartSession(context.Background(), SessionConfig{Recorder: RecorderConfig{Root: root}, Live: live})
	require.NoError(t, err)
	pO := pa.Play(t, shared.Path(t, "audio", "librivox-sense-and-sensibility-0930.wav"), "")
	time.Sleep(time.Second)
	pY := pa.Play(t, shared.Path(t, "audio", "librivox-sense-and-sensibility-0880.wav"), pulsetest.MicSink)
	require.NoError(t, pO.Wait())
	require.NoError(t, pY.Wait())
	heardUntil(t, s, began, 500*time.Millisecond)
	m, words, err := s.Stop()
	require.NoError(t, err)
	gotO, gotY := speakerText(words, am.Others), speakerText(words, am.You)
	t.Logf("meeting %s, %.1f s, stats %+v\nOthers: %s\nYou: %s", m.ID, m.Duration, s.Stats(), gotO, gotY)
	require.Less(t, testaudio.WER(t, "librivox-sense-and-sensibility-0930", gotO), 0.2, "the call's words, as Others")
	require.Less(t, testaudio.WER(t, "librivox-sense-and-sensibility-0880", gotY), 0.2, "the user's words, as You")

	got := loadFrames(t, Dir(root, m.ID))
	require.InDelta(t, m.Duration*rate, len(got)/2, 1)
	var energy [am.Channels]float64
	for i, v := range got {
		energy[i%2] += float64(v * v)
	}
	require.Greater(t, energy[am.Others], 1.0)
	require.Greater(t, energy[am.You], 1.0)
	un, err := Unfinished(root)
	require.NoError(t, err)
	require.Empty(t, un)
}

// heardUntil waits until both of s's channels reach, on the capture's
// timeline, margin past now (s began after began): on a loaded machine
// capture callbacks come hundreds of milliseconds late, and a stop a
// fixed time after the clips ended could cut their last words.
func heardUntil(t *testing.T, s *Session, began time.Time, margin time.Duration) {
	t.Helper()
	want := int64((time.Since(began) + margin).Seconds() * rate)
	require.Eventually(t, func() bool {
		for _, c := range s.Stats() {
			if c.Received+c.Filled+c.Stretch-c.Dropped-c.Late < want {
				return false
			}
		}
		return true
	}, shared.Wait(t, 10*time.Second), 10*time.Millisecond, "the capture did not reach %d frames: %+v", want, s.Stats())
}

// TestSessionKilled records a meeting from a child process (through the
// same private PulseAudio server) and kills it with SIGKILL while the
// call plays: the next start finds the meeting, and finishing it keeps
// all but at most 2 s of what the child had captured.
func TestSessionKilled(t *testing.T) {
	if root := os.Getenv("HARK_SESSION_CHILD"); root != "" {
		s, err := StartSession(context.Background(), SessionConfig{Recorder: RecorderConfig{Root: root}})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		for {
			time.Sleep(50 * time.Millisecond)
			st := s.Stats()
			fmt.Printf("captured %d written %d\n", max(st[0].Received+st[0].Filled, st[1].Received+st[1].Filled), s.Recorder().Frames())
		}
	}
	pa := pulsetest.Start(t)
	pa.AddMic(t)
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSessionKilled$")
	cmd.Env = append(os.Environ(), "HARK_SESSION_CHILD="+root)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	pa.Play(t, shared.Path(t, "audio", "jfk.wav"), "")
	sc := bufio.NewScanner(out)
	var captured, written int64
	for written < 4*rate && sc.Scan() {
		f := strings.Fields(sc.Text())
		require.Len(t, f, 4, "child: %s", sc.Text())
		captured, _ = strconv.ParseInt(f[1], 10, 64)
		written, _ = strconv.ParseInt(f[3], 10, 64)
	}
	require.GreaterOrEqual(t, written, int64(4*rate), "the child stopped recording")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	un, err := Unfinished(root)
	require.NoError(t, err)
	require.Len(t, un, 1)
	m, err := Finish(root, un[0].ID)
	require.NoError(t, err)
	got := loadFrames(t, Dir(root, m.ID))
	n := int64(len(got) / 2)
	t.Logf("child captured %d, wrote %d; recovered %d frames (%.2f s)", captured, written, n, m.Duration)
	require.GreaterOrEqual(t, n, written)
	require.GreaterOrEqual(t, n, captured-2*rate, "more than 2 s of captured audio lost")
	var e float64
	for i := am.Others; i < len(got); i += 2 {
		e += float64(got[i] * got[i])
	}
	require.Greater(t, e, 1.0, "the call is in the recovered recording")
}
