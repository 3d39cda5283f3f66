//go:build cgo && linux

package meeting

import (
	"sync"
	"testing"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// channel de-interleaves one channel.
func channel(frames []float32, ch int) []float32 {
	out := make([]float32, 0, len(frames)/Channels)
	for i := ch; i < len(frames); i += Channels {
		out = append(out, frames[i])
	}
	return out
}

// TestCaptureLoopback plays one clip into the default output (the call)
// and, overlapping it, another into the default input (the user): each
// lands on its own channel, and neither leaks into the other.
func TestCaptureLoopback(t *testing.T) {
	pa := pulsetest.Start(t)
	pa.AddMic(t)
	others := shared.Path(t, "audio", "jfk.wav")
	you := shared.Path(t, "audio", "librivox-sense-and-sensibility-0870.wav")
	refO, err := audio.Load16k(others)
	require.NoError(t, err)
	refY, err := audio.Load16k(you)
	require.NoError(t, err)

	var mu sync.Mutex
	var got []float32
	c, err := StartCapture(CaptureConfig{OnFrames: func(f []float32) {
		mu.Lock()
		got = append(got, f...)
		mu.Unlock()
	}, OnEvent: func(ch int, e capture.Event) { t.Logf("%s: %+v", Names[ch], e) }})
	require.NoError(t, err)
	pO := pa.Play(t, others, "")
	time.Sleep(2 * time.Second) // the user answers while the call still talks
	pY := pa.Play(t, you, pulsetest.MicSink)
	require.NoError(t, pO.Wait())
	require.NoError(t, pY.Wait())
	time.Sleep(shared.Wait(t, 500*time.Millisecond))
	require.NoError(t, c.Stop())
	t.Logf("stats %+v", c.Stats())

	mu.Lock()
	defer mu.Unlock()
	chY, chO := channel(got, You), channel(got, Others)
	require.Len(t, chY, len(chO))
	for _, tc := range []struct {
		name    string
		ref, in []float32
		leak    []float32
	}{{"Others", refO, chO, chY}, {"You", refY, chY, chO}} {
		r0, g0 := pulsetest.Onset(tc.ref), pulsetest.Onset(tc.in)
		require.GreaterOrEqual(t, g0, 0, "%s: nothing loud captured", tc.name)
		lag, c := pulsetest.Align(tc.ref, tc.in, r0, 2*16000, g0-r0, 800)
		t.Logf("%s: clip at %d, correlation %.3f", tc.name, lag, c)
		require.Greater(t, c, 0.9, "%s: the channel does not hold its clip", tc.name)
		_, leak := pulsetest.Align(tc.ref, tc.leak, r0, 2*16000, lag, 800)
		require.Less(t, leak, 0.3, "%s: the clip leaked into the other channel", tc.name)
	}
}
