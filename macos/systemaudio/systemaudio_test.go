package systemaudio

import (
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMixDown(t *testing.T) {
	require.Equal(t, []float32{2, 3}, mixDown(nil, [][]float32{{1, 3, 2, 4}}, 2), "interleaved")
	require.Equal(t, []float32{2, 3}, mixDown(nil, [][]float32{{1, 2}, {3, 4, 5}}, 1), "a buffer a channel")
	require.Equal(t, []float32{9, 1}, mixDown([]float32{9}, [][]float32{{1}}, 1))
	require.Empty(t, mixDown(nil, nil, 2))
}

// TestDeliver: a 1-kHz tone at 48 kHz, pushed in uneven pieces from
// another goroutine, comes out at 16 kHz in 10-ms periods, as long, at
// the same pitch and loudness.
func TestDeliver(t *testing.T) {
	const in = 48000
	tone := make([]float32, in) // 1 s
	for i := range tone {
		tone[i] = float32(0.5 * math.Sin(2*math.Pi*1000*float64(i)/in))
	}
	p := newPipe(in, in)
	go func() {
		for off, k := 0, 0; off < len(tone); k++ {
			n := min(len(tone)-off, 97+k%400) // the audio thread's periods vary
			p.push(tone[off : off+n])
			off += n
		}
		p.close()
	}()
	var got []float32
	var periods []int
	require.NoError(t, deliver(p, 160, func(x []float32) {
		periods = append(periods, len(x))
		got = append(got, x...)
	}))
	require.InDelta(t, Rate, len(got), 1)
	for _, n := range periods[:len(periods)-1] {
		require.Equal(t, 160, n)
	}
	crossings := 0
	var e float64
	for i := 1000; i < 15000; i++ { // away from the filter's edges
		if (got[i-1] < 0) != (got[i] < 0) {
			crossings++
		}
		e += float64(got[i] * got[i])
	}
	require.InDelta(t, 2*1000*14000/Rate, crossings, 2, "1 kHz")
	require.InDelta(t, 0.5/math.Sqrt2, math.Sqrt(e/14000), 0.01, "the tone's RMS")
}

// TestPipeDrops: a consumer that stalls costs the oldest audio, never a
// wait on the audio thread.
func TestPipeDrops(t *testing.T) {
	p := newPipe(Rate, 4)
	p.push([]float32{1, 2, 3})
	p.push([]float32{4, 5, 6})
	require.Equal(t, int64(2), p.dropped)
	out := make([]float32, 8)
	n, err := p.Read(out)
	require.NoError(t, err)
	require.Equal(t, []float32{3, 4, 5, 6}, out[:n])
	p.close()
	_, err = p.Read(out)
	require.ErrorIs(t, err, io.EOF)
}
