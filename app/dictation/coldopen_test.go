//go:build linux && cgo

package dictation

import (
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/internal/shared"
)

// TestColdOpenFirstSample measures hotkey → first sample with the device
// closed (the default: the microphone is off when idle): Start opens the
// device and the recording keeps every sample from the moment it opens.
// The source is a PulseAudio null sink's monitor with a tone playing, so
// the server has audio to deliver at once; the figures are logged for
// BENCHMARKS.md.
func TestColdOpenFirstSample(t *testing.T) {
	pa := pulsetest.Start(t)
	dir := t.TempDir()
	tone := filepath.Join(dir, "tone.wav")
	w, err := audio.CreateWAV(tone, 16000)
	require.NoError(t, err)
	x := make([]float32, 60*16000)
	for i := range x {
		x[i] = 0.3 * float32(math.Sin(2*math.Pi*440*float64(i)/16000))
	}
	require.NoError(t, w.Write(x))
	require.NoError(t, w.Close())
	// A minute of tone with a short playback latency: paplay's default
	// (about 2 s of buffer) makes the null sink render in 2-s blocks, and
	// a monitor stream opened between blocks waits for the next one.
	play := exec.Command("paplay", "--latency-msec=10", "--device="+pa.Sink, tone)
	play.Env = pa.Env()
	require.NoError(t, play.Start())
	t.Cleanup(func() { _ = play.Process.Kill(); _ = play.Wait() })
	time.Sleep(500 * time.Millisecond)

	var firsts []time.Duration
	for i := range 13 {
		// Count what the device delivers, to check that the recording
		// keeps every sample from the moment the device opens.
		var delivered atomic.Int64
		open := func(o capture.Options) (Source, error) {
			inner := o.OnData
			o.OnData = func(x []float32) { delivered.Add(int64(len(x))); inner(x) }
			return CaptureOpener(o)
		}
		r := NewRecorder(RecorderConfig{OnEvent: func(e capture.Event) { t.Logf("event %+v", e) }}, open) // unarmed: Start opens the device
		t0 := time.Now()
		require.NoError(t, r.Start(filepath.Join(dir, "r.wav")))
		t.Logf("open %d: Start returned after %v", i, time.Since(t0).Round(time.Millisecond))
		require.Eventually(t, func() bool { return r.Captured() > 0 }, shared.Wait(t, 10*time.Second), time.Millisecond, "no sample arrived")
		time.Sleep(200 * time.Millisecond)
		before := delivered.Load()
		rec, err := r.Stop()
		after := delivered.Load()
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.Positive(t, rec.FirstSample)
		require.Zero(t, rec.PreRoll, "a cold open has no pre-roll")
		// Everything the device delivered from its opening until Stop is
		// kept (and nothing it had not delivered by Stop's return).
		require.GreaterOrEqual(t, int64(len(rec.Samples)), before, "a sample since the device opened was lost")
		require.LessOrEqual(t, int64(len(rec.Samples)), after)
		t.Logf("open %d: first sample after %v, %v captured", i, rec.FirstSample.Round(time.Millisecond), rec.Duration.Round(time.Millisecond))
		if i > 0 { // the first open also loads the sound server's client library
			firsts = append(firsts, rec.FirstSample)
		}
	}
	slices.Sort(firsts)
	slow := 0
	for _, f := range firsts {
		if f > 500*time.Millisecond {
			slow++
		}
	}
	t.Logf("cold open, hotkey → first sample over %d opens: min %v, median %v, max %v; %d over 500 ms",
		len(firsts), firsts[0].Round(time.Millisecond), firsts[len(firsts)/2].Round(time.Millisecond), firsts[len(firsts)-1].Round(time.Millisecond), slow)
}
