package dictation

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// pushSource is an input device the test drives by hand: Push delivers a
// period as the audio thread would.
type pushSource struct {
	mu      sync.Mutex
	onData  func([]float32)
	started bool
	closed  bool
}

func (p *pushSource) open(o capture.Options) (Source, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onData, p.closed = o.OnData, false
	return p, nil
}
func (p *pushSource) Start() error { p.mu.Lock(); p.started = true; p.mu.Unlock(); return nil }
func (p *pushSource) Stop() error  { p.mu.Lock(); p.started = false; p.mu.Unlock(); return nil }
func (p *pushSource) Close() error {
	p.mu.Lock()
	p.started, p.closed = false, true
	p.mu.Unlock()
	return nil
}
func (p *pushSource) Device() capture.Device { return capture.Device{ID: "push", Name: "push"} }
func (p *pushSource) Push(x []float32) {
	p.mu.Lock()
	f, on := p.onData, p.started
	p.mu.Unlock()
	if on {
		f(x)
	}
}

func TestPreRollIncludesAudioBeforeStart(t *testing.T) {
	src := &pushSource{}
	r := NewRecorder(RecorderConfig{PreRoll: 300 * time.Millisecond}, src.open)
	require.NoError(t, r.Arm())
	// 1 s of audio before the hotkey, in 10 ms periods.
	for i := 0; i < 100; i++ {
		src.Push(shared.Ramp(i*160, 160))
	}
	path := filepath.Join(t.TempDir(), "a.wav")
	require.NoError(t, r.Start(path))
	for i := 100; i < 150; i++ {
		src.Push(shared.Ramp(i*160, 160))
	}
	rec, err := r.Stop()
	require.NoError(t, err)
	require.Equal(t, 300*time.Millisecond, rec.PreRoll)
	// Exactly the last 300 ms before Start, then everything after.
	want := shared.Ramp(16000-4800, 4800+50*160)
	require.Equal(t, want, rec.Samples)
	got, err := audio.Load16k(path)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		require.InDelta(t, want[i], got[i], 1.0/32767, "sample %d", i)
	}
	// Armed: the device stays open for the next recording, and a second
	// recording's pre-roll holds only what came after the first.
	require.False(t, src.closed)
	src.Push(shared.Ramp(0, 800))
	require.NoError(t, r.Start(filepath.Join(t.TempDir(), "b.wav")))
	rec2, err := r.Stop()
	require.NoError(t, err)
	require.Equal(t, shared.Ramp(0, 800), rec2.Samples)
	require.NoError(t, r.Close())
	require.True(t, src.closed)
}

func TestRecorderUnarmedOpensAtStart(t *testing.T) {
	src := &pushSource{}
	r := NewRecorder(RecorderConfig{}, src.open)
	require.NoError(t, r.Start(filepath.Join(t.TempDir(), "a.wav")))
	require.Error(t, r.Start(filepath.Join(t.TempDir(), "b.wav")), "second Start while recording")
	src.Push(shared.Ramp(0, 160))
	rec, err := r.Stop()
	require.NoError(t, err)
	require.Equal(t, shared.Ramp(0, 160), rec.Samples)
	require.Zero(t, rec.PreRoll)
	require.True(t, src.closed, "an unarmed device closes at Stop")
	_, err = r.Stop()
	require.Error(t, err)
}

// stepClock is a clock the test moves by hand.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestStopWaitsForAudioCapturedBeforeTheRelease: the device delivers 10-ms
// periods on time, then the machine holds its capture thread up for
// 400 ms and the hotkey is released meanwhile. Stop waits for the backlog
// (the 400 ms said before the release) instead of cutting it off.
func TestStopWaitsForAudioCapturedBeforeTheRelease(t *testing.T) {
	src := &pushSource{}
	clk := &stepClock{t: time.Unix(1000, 0)}
	r := NewRecorder(RecorderConfig{DrainMax: shared.Wait(t, time.Minute)}, src.open)
	r.now = clk.now
	require.NoError(t, r.Start(filepath.Join(t.TempDir(), "a.wav")))
	for i := range 50 { // 500 ms on time, 15 ms of device latency
		clk.add(10 * time.Millisecond)
		if i == 0 {
			clk.add(15 * time.Millisecond)
		}
		src.Push(shared.Ramp(i*160, 160))
	}
	clk.add(400 * time.Millisecond) // held up: nothing delivered
	type stopped struct {
		rec *Recording
		err error
	}
	ch := make(chan stopped, 1)
	go func() { rec, err := r.Stop(); ch <- stopped{rec, err} }()
	deadline := time.Now().Add(shared.Wait(t, time.Minute))
	for {
		r.mu.Lock()
		waiting := r.drained != nil
		r.mu.Unlock()
		if waiting {
			break
		}
		select {
		case s := <-ch:
			t.Fatalf("Stop returned without waiting for the backlog: %d samples, %v", len(s.rec.Samples), s.err)
		default:
		}
		require.True(t, time.Now().Before(deadline), "Stop did not wait")
		time.Sleep(time.Millisecond)
	}
	for i := 50; i < 90; i++ { // the backlog, at once
		src.Push(shared.Ramp(i*160, 160))
	}
	select {
	case s := <-ch:
		require.NoError(t, s.err)
		require.Equal(t, shared.Ramp(0, 90*160), s.rec.Samples, "the audio up to the release, backlog included")
	case <-time.After(shared.Wait(t, time.Minute)):
		t.Fatal("Stop kept waiting after the backlog came")
	}
}

// TestStopDrainIsBounded: a device that never delivers the rest (it
// stopped) holds Stop for at most DrainMax.
func TestStopDrainIsBounded(t *testing.T) {
	src := &pushSource{}
	clk := &stepClock{t: time.Unix(1000, 0)}
	r := NewRecorder(RecorderConfig{DrainMax: 10 * time.Millisecond}, src.open)
	r.now = clk.now
	require.NoError(t, r.Start(filepath.Join(t.TempDir(), "a.wav")))
	for i := range 20 {
		clk.add(10 * time.Millisecond)
		src.Push(shared.Ramp(i*160, 160))
	}
	clk.add(5 * time.Second)
	rec, err := r.Stop()
	require.NoError(t, err)
	require.Equal(t, shared.Ramp(0, 20*160), rec.Samples)
}
