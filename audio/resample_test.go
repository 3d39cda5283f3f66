package audio

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func sine(rate int, freq, amp float64, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return x
}

func resampleAll(t *testing.T, x []float32, in, out int) []float32 {
	t.Helper()
	s, err := Resample(FromSamples(x, in, 1), out)
	require.NoError(t, err)
	y, err := ReadAll(s)
	require.NoError(t, err)
	return y
}

// fit projects the middle half of y (away from the edges) on a sinusoid of
// freq at rate and returns its sine and cosine amplitudes and the RMS of
// what is left after removing it.
func fit(y []float32, rate int, freq float64) (sinAmp, cosAmp, residual float64) {
	lo, hi := len(y)/4, 3*len(y)/4
	var s, c float64
	for i := lo; i < hi; i++ {
		w := 2 * math.Pi * freq * float64(i) / float64(rate)
		s += float64(y[i]) * math.Sin(w)
		c += float64(y[i]) * math.Cos(w)
	}
	n := float64(hi - lo)
	sinAmp, cosAmp = 2*s/n, 2*c/n
	var e float64
	for i := lo; i < hi; i++ {
		w := 2 * math.Pi * freq * float64(i) / float64(rate)
		r := float64(y[i]) - sinAmp*math.Sin(w) - cosAmp*math.Cos(w)
		e += r * r
	}
	return sinAmp, cosAmp, math.Sqrt(e / n)
}

// TestResampleKeepsTone: a tone keeps its frequency, amplitude and phase (the
// filter adds no delay), and nothing else appears (no images, no aliases):
// the residual after removing the fitted tone is tiny.
func TestResampleKeepsTone(t *testing.T) {
	for _, tc := range []struct {
		in   int
		freq float64
	}{
		{44100, 440}, {44100, 1000}, {44100, 6500},
		{48000, 1000}, {48000, 7000},
		{8000, 300}, {8000, 1000}, {8000, 3500},
		{22050, 5000},
		{44056, 1000}, // reduced ratio 2000/5507: the interpolated-phase table
	} {
		t.Run(fmt.Sprintf("%d-%g", tc.in, tc.freq), func(t *testing.T) {
			const amp = 0.5
			x := sine(tc.in, tc.freq, amp, tc.in) // 1 s
			y := resampleAll(t, x, tc.in, 16000)
			require.Len(t, y, int(math.Ceil(float64(len(x))*16000/float64(tc.in))))
			s, c, res := fit(y, 16000, tc.freq)
			require.InDelta(t, amp, s, amp*1e-3, "amplitude")
			require.InDelta(t, 0, c, amp*1e-3, "phase (delay)")
			require.Less(t, 20*math.Log10(res/(amp/math.Sqrt2)), -60.0, "residual (other frequencies)")
		})
	}
}

// TestResampleNoAliasing: tones above the 8 kHz output Nyquist frequency are
// removed (> 60 dB), not folded back into the band.
func TestResampleNoAliasing(t *testing.T) {
	for _, in := range []int{44100, 48000} {
		for _, freq := range []float64{8050, 8500, 9000, 12000, 15000, 20000} {
			x := sine(in, freq, 0.5, in/2)
			y := resampleAll(t, x, in, 16000)
			var e float64
			for _, v := range y[len(y)/4 : 3*len(y)/4] {
				e += float64(v) * float64(v)
			}
			rms := math.Sqrt(e / float64(len(y)/2))
			db := 20 * math.Log10(rms/(0.5/math.Sqrt2))
			require.Less(t, db, -60.0, "%d Hz input, %g Hz tone: %.1f dB", in, freq, db)
		}
	}
}

// TestResampleStreaming: reading in small, odd-sized pieces gives exactly
// the one-shot result.
func TestResampleStreaming(t *testing.T) {
	x := sine(44100, 1234, 0.3, 30000)
	want := resampleAll(t, x, 44100, 16000)
	src := &choppy{Stream: FromSamples(x, 44100, 1), max: 333}
	s, err := Resample(src, 16000)
	require.NoError(t, err)
	var got []float32
	buf := make([]float32, 7)
	for {
		n, err := s.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	require.Equal(t, want, got)
}

// choppy limits each Read of its source to max frames.
type choppy struct {
	Stream
	max int
}

func (c *choppy) Read(p []float32) (int, error) {
	return c.Stream.Read(p[:min(len(p), c.max)])
}

func TestResampleRejects(t *testing.T) {
	_, err := Resample(FromSamples(make([]float32, 10), 44100, 2), 16000)
	require.ErrorContains(t, err, "mono")
	_, err = Resample(FromSamples(make([]float32, 10), 10, 1), 16000)
	require.ErrorContains(t, err, "rates must be")
}

func TestMonoDownmix(t *testing.T) {
	x := []float32{1, 0, 0.5, -0.5, -1, 1}
	y, err := ReadAll(Mono(FromSamples(x, 16000, 2)))
	require.NoError(t, err)
	require.Equal(t, []float32{0.5, 0, 0}, y)
}

func BenchmarkResample44k(b *testing.B) {
	x := sine(44100, 1000, 0.5, 44100*10)
	b.ResetTimer()
	for b.Loop() {
		s, _ := Resample(FromSamples(x, 44100, 1), 16000)
		if _, err := ReadAll(s); err != nil {
			b.Fatal(err)
		}
	}
}
