package meeting

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	am "github.com/harkapp/hark/audio/meeting"
)

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestRecordingMemoryFlat: ten minutes of a meeting (two channels, 10 ms
// periods, the system channel's arriving ever later (a 200 ppm slow clock) and silent a minute at
// a time) through the aligner into the recording: the heap after ten
// minutes is what it was after one (the audio, 77 MB as float32, is on
// disk, not in memory).
func TestRecordingMemoryFlat(t *testing.T) {
	r, err := Start(RecorderConfig{Root: t.TempDir()}, time.Now())
	require.NoError(t, err)
	t0 := time.Unix(1000, 0)
	a := am.NewAligner(t0, am.AlignConfig{})
	x := make([]float32, 160)
	for i := range x {
		x[i] = 0.1
	}
	var out []float32
	var atOne uint64
	const minutes = 10
	for k := range minutes * 60 * 100 {
		now := t0.Add(time.Duration(k+1) * 10 * time.Millisecond)
		a.Push(am.You, x, now)
		if (k/6000)%2 == 0 { // a monitor delivers nothing while nothing plays
			a.Push(am.Others, x, now.Add(time.Duration(float64(k)*0.2e-3*float64(10*time.Millisecond))))
		}
		if k%10 == 9 {
			out = a.Frames(out[:0])
			r.Write(out)
		}
		if k == 6000 {
			atOne = heapInUse()
		}
	}
	atTen := heapInUse()
	m, err := r.Stop()
	require.NoError(t, err)
	t.Logf("heap after 1 min %d KB, after %d min %d KB; recorded %.0f s", atOne>>10, minutes, atTen>>10, m.Duration)
	require.InDelta(t, minutes*60, m.Duration, 1)
	require.Less(t, int64(atTen)-int64(atOne), int64(2<<20), "memory grows with the meeting")
}
