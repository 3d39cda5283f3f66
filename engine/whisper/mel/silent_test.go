package mel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A frame counted as silent has only zero samples (the padded, reflected
// signal), and a window's 30-s padding is skipped all but its first
// frames: a 1-s window has 3100 frames of which at least 2998 are silent.
func TestSilentFrames(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct{ n, padding int }{
		{16000, 480000}, {16000 + 77, 480000}, {3333, 199}, {3333, 200}, {3333, 401}, {5000, 0}, {401, 1000}, {12345, 6789},
	} {
		x := make([]float32, c.n)
		for i := range x {
			x[i] = float32(r.Float64()*2-1) + 1e-3 // never zero
		}
		sig := &signal{seg: x, head: x[:min(len(x), NFFT/2+1)], n: len(x), total: len(x) + c.padding}
		frames := sig.total / HopLength
		silent := 0
		for fr := range frames {
			if !sig.silentFrame(fr) {
				continue
			}
			silent++
			for j := fr*HopLength - NFFT/2; j < fr*HopLength+NFFT/2; j++ {
				if sig.at(j) != 0 {
					t.Fatalf("%+v: frame %d counted silent, sample %d is %g", c, fr, j, sig.at(j))
				}
			}
		}
		t.Logf("%+v: %d of %d frames silent", c, silent, frames)
		if c.padding == 480000 {
			require.GreaterOrEqual(t, silent, 3000-2, "%+v", c)
		}
	}
}

// Skipping the silent frames changes no bit of the spectrogram (odd
// lengths, padding shorter than half a frame, none, and a window's).
func TestSilentFramesSameSpectrogram(t *testing.T) {
	f := kitFilters(t, 80)
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ n, padding int }{
		{16000, 480000}, {16000 + 77, 480000}, {3333, 199}, {3333, 401}, {5000, 0}, {401, 1000}, {12345, 6789},
	} {
		t.Run(fmt.Sprintf("%d+%d", c.n, c.padding), func(t *testing.T) {
			x := make([]float32, c.n)
			for i := range x {
				x[i] = float32(r.Float64()*2-1) * 0.3
			}
			defer func() { skipSilentFrames = true }()
			skipSilentFrames = false
			want, err := LogMel(x, f, c.padding)
			require.NoError(t, err)
			skipSilentFrames = true
			got, err := LogMel(x, f, c.padding)
			require.NoError(t, err)
			require.Equal(t, want.NFrames, got.NFrames)
			for i := range want.Data {
				require.Equal(t, math.Float32bits(want.Data[i]), math.Float32bits(got.Data[i]), "mel %d frame %d", i/want.NFrames, i%want.NFrames)
			}
		})
	}
}
