package meeting

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio/capture"
)

// fakeDevice is a capture device the test pushes into.
type fakeDevice struct {
	opt             capture.Options
	started, closed bool
}

func (d *fakeDevice) Start() error { d.started = true; return nil }
func (d *fakeDevice) Stop() error  { return nil }
func (d *fakeDevice) Close() error { d.closed = true; return nil }

// TestCaptureChannels: the microphone and the monitor open on the IDs
// asked for; what each delivers lands on its own channel; a failing
// second device closes the first; Stop hands on the rest and may be
// called twice.
func TestCaptureChannels(t *testing.T) {
	var devs []*fakeDevice
	fail := false
	open := func(o capture.Options) (Source, error) {
		if fail && len(devs) == 1 {
			return nil, errors.New("no such device")
		}
		d := &fakeDevice{opt: o}
		devs = append(devs, d)
		return d, nil
	}
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var got []float32
	c, err := StartCapture(CaptureConfig{MicID: "mic", MonitorID: "mon", Open: open, Now: clock,
		OnFrames: func(f []float32) { got = append(got, f...) }})
	require.NoError(t, err)
	require.Len(t, devs, 2)
	require.Equal(t, "mic", devs[You].opt.DeviceID)
	require.Equal(t, "mon", devs[Others].opt.DeviceID)
	require.True(t, devs[You].started && devs[Others].started)
	for k := range 50 {
		mu.Lock()
		now = now.Add(10 * time.Millisecond)
		mu.Unlock()
		mic, mon := make([]float32, 160), make([]float32, 160)
		for i := range mic {
			mic[i], mon[i] = 0.5, -0.5
		}
		devs[You].opt.OnData(mic)
		if k < 25 {
			devs[Others].opt.OnData(mon)
		}
	}
	require.NoError(t, c.Stop())
	require.NoError(t, c.Stop())
	require.True(t, devs[You].closed && devs[Others].closed)
	require.Len(t, got, 2*50*160, "every microphone sample, the silent monitor filled")
	for i := 0; i < 2*25*160; i += 2 {
		require.Equal(t, float32(0.5), got[i+You])
		require.Equal(t, float32(-0.5), got[i+Others])
	}
	require.Equal(t, float32(0), got[len(got)-1], "the monitor's silence is zeros")

	devs, fail = nil, true
	_, err = StartCapture(CaptureConfig{MicID: "mic", MonitorID: "mon", Open: open, OnFrames: func([]float32) {}})
	require.ErrorContains(t, err, "Others channel")
	require.True(t, devs[0].closed, "the microphone is closed again")
}
