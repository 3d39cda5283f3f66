package mel

import (
	"math"
	"sync"

	"github.com/harkapp/hark/engine/blas"
)

// The STFT as a matrix product: windowed frames [frames × 400] times a DFT
// basis [400 × 2·201] (cosines, then sines) gives the real and imaginary
// parts of every bin. Accelerate's vDSP FFT cannot do n = 400 (it needs
// f·2ⁿ with f in {1, 3, 5, 15}), but its cblas_sgemm can, so this is the
// macOS path; on Linux the same code runs on OpenBLAS and is tested against
// the reference spectrogram.

// useSgemmDFT selects the matrix-product STFT when a BLAS is loaded. It is
// set on darwin (mel_darwin.go) and by tests.
var useSgemmDFT = false

var dftBasis = sync.OnceValue(func() []float32 {
	b := make([]float32, NFFT*2*NFreq)
	for j := range NFFT {
		for k := range NFreq {
			// (j·k) mod N keeps the angle small, so the float64 sin/cos
			// stay exact to float32 precision.
			a := 2 * math.Pi * float64((j*k)%NFFT) / NFFT
			b[j*2*NFreq+k] = float32(math.Cos(a))
			b[j*2*NFreq+NFreq+k] = float32(-math.Sin(a))
		}
	}
	return b
})

const sgemmChunk = 256 // frames per product

// melFramesSgemm is melFrames computing the spectra with sgemm. It is
// called from one goroutine (BLAS calls are serialised and multi-threaded
// inside the library).
func melFramesSgemm(g grid, sig *signal, f *MelFilters, lo, hi int) (float64, error) {
	basis := dftBasis()
	frames := make([]float32, sgemmChunk*NFFT)
	spec := make([]float32, sgemmChunk*2*NFreq)
	top := math.Inf(-1)
	for c := lo; c < hi; c += sgemmChunk {
		d := min(c+sgemmChunk, hi)
		for t := c; t < d; t++ {
			row := frames[(t-c)*NFFT : (t-c+1)*NFFT]
			start := t*HopLength - NFFT/2
			for j := range row {
				row[j] = float32(float64(sig.at(start+j)) * hann[j])
			}
		}
		if err := blas.Sgemm(false, false, d-c, 2*NFreq, NFFT, 1, frames, NFFT, basis, 2*NFreq, 0, spec, 2*NFreq); err != nil {
			return 0, err
		}
		var power [NFreq]float64
		for t := c; t < d; t++ {
			re := spec[(t-c)*2*NFreq : (t-c)*2*NFreq+NFreq]
			im := spec[(t-c)*2*NFreq+NFreq : (t-c+1)*2*NFreq]
			for k := range power {
				power[k] = float64(re[k])*float64(re[k]) + float64(im[k])*float64(im[k])
			}
			top = math.Max(top, melColumn(g, f, t, power[:]))
		}
	}
	return top, nil
}
