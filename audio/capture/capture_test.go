//go:build cgo && linux

package capture

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// recorder collects captured samples.
type recorder struct {
	mu  sync.Mutex
	buf []float32
	// origin is when the first sample arrived, as near as the callbacks
	// tell: the least of each one's arrival less the audio before it
	// (callbacks come late, never early). Zero until a callback after the
	// last reset.
	origin time.Time
}

func (r *recorder) onData(x []float32) {
	now := time.Now()
	r.mu.Lock()
	r.buf = append(r.buf, x...)
	if o := now.Add(-samplesDur(len(r.buf))); r.origin.IsZero() || o.Before(r.origin) {
		r.origin = o
	}
	r.mu.Unlock()
}

func samplesDur(n int) time.Duration { return time.Duration(n) * time.Second / SampleRate }

// reset starts the origin afresh (a reopened device has a timeline of
// its own) and waits for the device's first callback.
func (r *recorder) reset(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	r.origin = time.Time{}
	r.mu.Unlock()
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return !r.origin.IsZero() },
		shared.Wait(t, 10*time.Second), 5*time.Millisecond, "the device delivered nothing")
}

// heard waits until the device has delivered its audio up to after from
// now, by its frame count: on a loaded machine callbacks come hundreds of
// milliseconds late, and a fixed sleep after a clip played could stop
// the stream (or lose the device) before the clip's end came in. The
// monitors here deliver silence when nothing plays.
func (r *recorder) heard(t *testing.T, after time.Duration) {
	t.Helper()
	until := time.Now().Add(after)
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return !r.origin.IsZero() && r.origin.Add(samplesDur(len(r.buf))).After(until)
	}, shared.Wait(t, 10*time.Second), 5*time.Millisecond, "the device did not deliver its audio up to %v on", after)
}

func (r *recorder) samples() []float32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]float32(nil), r.buf...)
}

func TestCaptureLoopback(t *testing.T) {
	pa := pulsetest.Start(t)
	clip := shared.Path(t, "audio", "jfk.wav")
	ref, err := audio.Load16k(clip)
	require.NoError(t, err)

	var rec recorder
	s, err := Open(Options{OnData: rec.onData, OnEvent: func(e Event) { t.Logf("event %+v", e) }})
	require.NoError(t, err)
	defer s.Close()
	require.Contains(t, s.Device().Name, "Monitor")
	require.NoError(t, s.Start())
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, pa.Play(t, clip, "").Wait())
	rec.heard(t, 300*time.Millisecond)
	require.NoError(t, s.Stop())

	got := rec.samples()
	require.Greater(t, len(got), len(ref), "captured less than the clip")
	r0, g0 := pulsetest.Onset(ref), pulsetest.Onset(got)
	require.GreaterOrEqual(t, g0, 0, "nothing loud captured")
	lag, c := pulsetest.Align(ref, got, r0, 2*SampleRate, g0-r0, 800)
	t.Logf("captured %d samples, clip at %d, correlation %.4f", len(got), lag, c)
	require.Greater(t, c, 0.9, "captured audio does not match the clip")
	// The end made it too. A loaded machine can underrun paplay, which
	// puts short gaps into what the sink plays, so look for either of two
	// 0.4 s pieces near the end, each around the start's lag.
	c2 := 0.0
	for _, back := range []int{SampleRate * 12 / 10, SampleRate * 8 / 10} {
		lag2, c := pulsetest.Align(ref, got, len(ref)-back, SampleRate*4/10, lag, SampleRate)
		t.Logf("clip end piece at -%d: lag %d, correlation %.4f", back, lag2, c)
		c2 = max(c2, c)
	}
	require.Greater(t, c2, 0.9, "the clip's end is missing")
}

// TestCaptureHeldUp holds the audio thread up for 1.2 s in the middle of
// a clip, as a loaded machine can: the sound server keeps what arrives
// meanwhile, so the clip's end comes out where its start says (miniaudio's
// default 30-ms buffer lost 0.53 s of it).
func TestCaptureHeldUp(t *testing.T) {
	pa := pulsetest.Start(t)
	clip := shared.Path(t, "audio", "jfk.wav")
	ref, err := audio.Load16k(clip)
	require.NoError(t, err)

	var rec recorder
	loud, held := -1, false
	s, err := Open(Options{OnData: func(x []float32) {
		rec.onData(x)
		if loud < 0 && pulsetest.Onset(x) >= 0 {
			loud = len(rec.samples())
		}
		if !held && loud >= 0 && len(rec.samples()) > loud+SampleRate {
			held = true
			time.Sleep(1200 * time.Millisecond)
		}
	}})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Start())
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, pa.Play(t, clip, "").Wait())
	rec.heard(t, 300*time.Millisecond)
	require.NoError(t, s.Stop())
	require.True(t, held, "the audio thread was never held up")

	got := rec.samples()
	r0, g0 := pulsetest.Onset(ref), pulsetest.Onset(got)
	require.GreaterOrEqual(t, g0, 0, "nothing loud captured")
	lag, c := pulsetest.Align(ref, got, r0, 2*SampleRate, g0-r0, 800)
	require.Greater(t, c, 0.9, "captured audio does not match the clip")
	// Audio lost while held up would pull the end earlier; paplay
	// underruns on a loaded machine can only push it later.
	end, c2 := pulsetest.Align(ref, got, len(ref)-SampleRate, SampleRate/2, lag, SampleRate)
	t.Logf("clip start at %d (%.4f), end at %d (%.4f)", lag, c, end, c2)
	require.Greater(t, c2, 0.9, "the clip's end is missing")
	require.GreaterOrEqual(t, end, lag-SampleRate/100, "audio was lost while the thread was held up")
}

func TestDevices(t *testing.T) {
	pa := pulsetest.Start(t)
	_, err := pa.Pactl("load-module", "module-null-sink", "sink_name=other", "sink_properties=device.description=other")
	require.NoError(t, err)
	devs, err := Devices()
	require.NoError(t, err)
	var names []string
	defaults := 0
	for _, d := range devs {
		names = append(names, d.Name)
		require.NotEmpty(t, d.ID)
		if d.Default {
			defaults++
			require.Contains(t, d.Name, "vsink")
		}
	}
	t.Logf("devices: %q", names)
	require.Equal(t, 1, defaults, "exactly one default device")
	require.GreaterOrEqual(t, len(devs), 2)

	// Picking the other monitor by ID records from it.
	var other Device
	for _, d := range devs {
		if strings.Contains(d.Name, "other") {
			other = d
		}
	}
	require.NotEmpty(t, other.ID, "monitor of the second sink listed")
	var rec recorder
	s, err := Open(Options{DeviceID: other.ID, OnData: rec.onData})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, other, s.Device())
	require.NoError(t, s.Start())
	require.NoError(t, pa.Play(t, writeTone(t, 440, 0.5), "vsink").Wait()) // the default: must NOT be heard
	require.NoError(t, pa.Play(t, writeTone(t, 880, 0.5), "other").Wait())
	rec.heard(t, 200*time.Millisecond)
	require.NoError(t, s.Stop())
	got := rec.samples()
	require.Less(t, goertzel(got, 440), 0.01, "audio from the default sink leaked into the picked device")
	require.Greater(t, goertzel(got, 880), 0.2, "the picked device's tone was not captured")

	_, err = Open(Options{DeviceID: "nope", OnData: rec.onData})
	require.ErrorContains(t, err, "not found")
}

// TestDeviceLostMidRecording unloads the sink being recorded from, as when
// a headset disappears: capture moves to the default device and keeps
// what it had.
func TestDeviceLostMidRecording(t *testing.T) {
	pa := pulsetest.Start(t)
	mod, err := pa.Pactl("load-module", "module-null-sink", "sink_name=headset", "sink_properties=device.description=headset")
	require.NoError(t, err)
	devs, err := Devices()
	require.NoError(t, err)
	var headset Device
	for _, d := range devs {
		if strings.Contains(d.Name, "headset") {
			headset = d
		}
	}
	require.NotEmpty(t, headset.ID)

	var rec recorder
	var evMu sync.Mutex
	var events []Event
	s, err := Open(Options{DeviceID: headset.ID, OnData: rec.onData, StallTimeout: 400 * time.Millisecond,
		OnEvent: func(e Event) { evMu.Lock(); events = append(events, e); evMu.Unlock() }})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Start())
	require.NoError(t, pa.Play(t, writeTone(t, 600, 0.6), "headset").Wait())
	rec.heard(t, 100*time.Millisecond) // what the headset's stream holds goes with it
	_, err = pa.Pactl("unload-module", strings.TrimSpace(mod))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		evMu.Lock()
		defer evMu.Unlock()
		for _, e := range events {
			if e.Kind == EventReopened && strings.Contains(e.Device.Name, "vsink") {
				return true
			}
		}
		return false
	}, shared.Wait(t, 5*time.Second), 20*time.Millisecond, "capture was not reopened on the default device")
	require.Contains(t, s.Device().Name, "vsink")
	rec.reset(t)
	require.NoError(t, pa.Play(t, writeTone(t, 1000, 0.6), "vsink").Wait())
	rec.heard(t, 200*time.Millisecond)
	require.NoError(t, s.Stop())
	got := rec.samples()
	evMu.Lock()
	t.Logf("events: %+v; %d samples", events, len(got))
	evMu.Unlock()
	require.Greater(t, goertzel(got, 600), 0.2, "audio from before the loss is gone")
	require.Greater(t, goertzel(got, 1000), 0.2, "audio after the switch was not captured")
}

func TestOpenNeedsOnData(t *testing.T) {
	_, err := Open(Options{})
	require.ErrorContains(t, err, "OnData")
}

// writeTone writes a 16 kHz mono 16-bit sine WAV.
func writeTone(t testing.TB, hz, secs float64) string {
	n := int(secs * SampleRate)
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], SampleRate)
	binary.LittleEndian.PutUint32(b[28:], 2*SampleRate)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	for i := range n {
		v := int16(0.5 * 32767 * math.Sin(2*math.Pi*hz*float64(i)/SampleRate))
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(v))
	}
	p := filepath.Join(t.TempDir(), "tone.wav")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// goertzel returns the amplitude of the hz component in the loudest
// 100 ms block of x.
func goertzel(x []float32, hz float64) float64 {
	const blk = SampleRate / 10
	best := 0.0
	w := 2 * math.Pi * hz / SampleRate
	for off := 0; off+blk <= len(x); off += blk / 2 {
		var s1, s2 float64
		for _, v := range x[off : off+blk] {
			s0 := float64(v) + 2*math.Cos(w)*s1 - s2
			s2, s1 = s1, s0
		}
		p := s1*s1 + s2*s2 - 2*math.Cos(w)*s1*s2
		best = max(best, 2*math.Sqrt(p)/blk)
	}
	return best
}

// TestDefaultMonitor: the system audio is the default sink's monitor,
// whichever source is the default input.
func TestDefaultMonitor(t *testing.T) {
	pa := pulsetest.Start(t)
	_, err := pa.Pactl("load-module", "module-null-sink", "sink_name=mic", "sink_properties=device.description=mic")
	require.NoError(t, err)
	_, err = pa.Pactl("set-default-source", "mic.monitor")
	require.NoError(t, err)
	_, err = pa.Pactl("set-default-sink", "vsink")
	require.NoError(t, err)
	d, err := DefaultMonitor()
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString([]byte("vsink.monitor")), d.ID)
	require.Contains(t, d.Name, "vsink")
	_, err = pa.Pactl("set-default-sink", "mic")
	require.NoError(t, err)
	d, err = DefaultMonitor()
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString([]byte("mic.monitor")), d.ID)
}
