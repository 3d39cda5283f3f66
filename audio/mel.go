package audio

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/harkapp/hark/engine/blas"
)

// Spectrogram is a log-mel spectrogram laid out as Whisper's encoder takes
// it: NMels rows of NFrames values (row-major), frame t covering samples
// around t*HopLength.
type Spectrogram struct {
	NMels   int
	NFrames int
	Data    []float32
}

// hann is torch.hann_window(400) (periodic): 0.5 - 0.5 cos(2 pi n / N).
var hann = func() [NFFT]float64 {
	var w [NFFT]float64
	for i := range w {
		w[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/NFFT)
	}
	return w
}()

// LogMel computes Whisper's log-mel spectrogram of 16 kHz mono samples
// followed by padding zero samples (openai's transcribe() passes 480000, 30 s):
// an STFT with n_fft 400, hop 160 and a periodic Hann window over the signal
// reflect-padded by 200 at both ends (torch.stft center=True), the power
// spectrum of its 201 bins with the last frame dropped, the mel filter
// product, log10(max(mel, 1e-10)), clamped to (global max - 8), then
// (x+4)/4. The clamp uses the maximum over all frames, so a long file is
// processed whole, as the reference does.
//
// The FFT and products run in float64 (gonum's FFTPACK port), so the result
// is within float32 rounding of the exact value. Frames are spread over all
// cores; each frame is computed independently, so the output does not depend
// on the number of workers.
func LogMel(samples []float32, f *MelFilters, padding int) (*Spectrogram, error) {
	if f == nil {
		return nil, errors.New("audio: LogMel: nil mel filters")
	}
	if padding < 0 {
		return nil, fmt.Errorf("audio: LogMel: negative padding %d", padding)
	}
	total := len(samples) + padding
	if total <= NFFT/2 {
		// torch.stft's reflect padding needs more than n_fft/2 samples.
		return nil, fmt.Errorf("audio: LogMel: %d samples is too short (need more than %d)", total, NFFT/2)
	}
	nFrames := total / HopLength
	out := &Spectrogram{NMels: f.NMels, NFrames: nFrames, Data: make([]float32, f.NMels*nFrames)}

	if useSgemmDFT && blas.Available() {
		top, err := melFramesSgemm(out, samples, total, f)
		if err != nil {
			return nil, err
		}
		out.finish(top)
		return out, nil
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), nFrames/64))
	per := (nFrames + workers - 1) / workers
	maxes := make([]float64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min(nFrames, (w+1)*per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			maxes[w] = melFrames(out, samples, total, f, lo, hi)
		}()
	}
	wg.Wait()

	top := math.Inf(-1)
	for _, m := range maxes {
		top = math.Max(top, m)
	}
	out.finish(top)
	return out, nil
}

// finish clamps to (max - 8) and rescales, as the reference does.
func (s *Spectrogram) finish(top float64) {
	floor := float32(top - 8)
	for i, v := range s.Data {
		s.Data[i] = (max(v, floor) + 4) / 4
	}
}

// melFrames fills log10 mel energies of frames [lo, hi) into out and returns
// their maximum.
func melFrames(out *Spectrogram, x []float32, total int, f *MelFilters, lo, hi int) float64 {
	fft := fourier.NewFFT(NFFT)
	seq := make([]float64, NFFT)
	coeff := make([]complex128, NFreq)
	power := make([]float64, NFreq)
	n := len(x)
	// sample reads the zero-padded signal, reflected at both ends.
	sample := func(j int) float64 {
		if j < 0 {
			j = -j
		} else if j >= total {
			j = 2*(total-1) - j
		}
		if j < n {
			return float64(x[j])
		}
		return 0
	}
	top := math.Inf(-1)
	for t := lo; t < hi; t++ {
		start := t*HopLength - NFFT/2
		if start >= 0 && start+NFFT <= n {
			for j, v := range x[start : start+NFFT] {
				seq[j] = float64(v) * hann[j]
			}
		} else {
			for j := range seq {
				seq[j] = sample(start+j) * hann[j]
			}
		}
		fft.Coefficients(coeff, seq)
		for k, c := range coeff {
			power[k] = real(c)*real(c) + imag(c)*imag(c)
		}
		top = math.Max(top, melColumn(out, f, t, power))
	}
	return top
}

// melColumn applies the filters to one frame's power spectrum, stores the
// log10 energies in column t and returns their maximum.
func melColumn(out *Spectrogram, f *MelFilters, t int, power []float64) float64 {
	top := math.Inf(-1)
	for m := range f.NMels {
		s := f.span[m]
		row := f.Data[m*NFreq : (m+1)*NFreq]
		var e float64
		for k := s[0]; k < s[1]; k++ {
			e += float64(row[k]) * power[k]
		}
		v := math.Log10(math.Max(e, 1e-10))
		top = math.Max(top, v)
		out.Data[m*out.NFrames+t] = float32(v)
	}
	return top
}

// Window returns frames [start, end) (clipped to the spectrogram) as an
// [NMels][width] matrix, zero-filled past them: openai's
// pad_or_trim(mel[:, start:end], width), which pads in log-mel space.
func (s *Spectrogram) Window(start, end, width int) []float32 {
	out := make([]float32, s.NMels*width)
	start = max(start, 0)
	end = min(end, s.NFrames, start+width)
	if end <= start {
		return out
	}
	for m := range s.NMels {
		copy(out[m*width:m*width+end-start], s.Data[m*s.NFrames+start:m*s.NFrames+end])
	}
	return out
}
