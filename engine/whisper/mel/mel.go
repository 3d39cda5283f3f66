package mel

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
	// Peak is the largest sample magnitude of the audio (0 for digital
	// silence).
	Peak float32
}

// Dims are a spectrogram's size and its audio's peak, which a
// transcription checks before reading any window.
type Dims struct {
	NMels, NFrames int
	Peak           float32
}

// Dims returns s's size and peak.
func (s *Spectrogram) Dims() Dims { return Dims{s.NMels, s.NFrames, s.Peak} }

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
	out := &Spectrogram{NMels: f.NMels, NFrames: nFrames, Data: make([]float32, f.NMels*nFrames), Peak: peak(samples)}
	sig := &signal{seg: samples, head: samples[:min(len(samples), NFFT/2+1)], n: len(samples), total: total}
	top, err := computeFrames(out.grid(0), sig, f, 0, nFrames)
	if err != nil {
		return nil, err
	}
	out.finish(top)
	return out, nil
}

// grid is where computeFrames stores frame t's mel bin m:
// data[m*mStride + (t-off)*tStride]. A Spectrogram is mel-major (its
// grid(off)); the spool takes frames whole (frame-major: mStride 1,
// tStride NMels), so its bytes need no transposing.
type grid struct {
	data             []float32
	mStride, tStride int
	off              int
}

// grid is s as a grid whose column 0 is frame off.
func (s *Spectrogram) grid(off int) grid {
	return grid{data: s.Data, mStride: s.NFrames, tStride: 1, off: off}
}

func (g grid) at(m, t int) int { return m*g.mStride + (t-g.off)*g.tStride }

// computeFrames stores the log10 mel energies of frames [lo, hi) of sig
// in g and returns their maximum: as one sgemm per chunk where that path
// is chosen, else with gonum's FFT, the frames spread over the cores.
func computeFrames(g grid, sig *signal, f *MelFilters, lo, hi int) (float64, error) {
	if useSgemmDFT && blas.Available() {
		return melFramesSgemm(g, sig, f, lo, hi)
	}
	n := hi - lo
	workers := max(1, min(runtime.GOMAXPROCS(0), n/64))
	per := (n + workers - 1) / workers
	maxes := make([]float64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		a, b := lo+w*per, min(hi, lo+(w+1)*per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			maxes[w] = melFrames(g, sig, f, a, b)
		}()
	}
	wg.Wait()
	top := math.Inf(-1)
	for _, m := range maxes {
		top = math.Max(top, m)
	}
	return top, nil
}

// peak is the largest magnitude in x: max(|v|) as max(p, v, -v) gives
// it, NaN where x holds one. It compares the magnitudes' bits as
// integers (the IEEE order of non-negative floats, with NaNs above
// +Inf), a loop without the float max's NaN and signed-zero branches:
// it was 17 ms of the spectrogram's serial reading of a 204-s file.
func peak(x []float32) float32 {
	var p uint32
	for _, v := range x {
		p = max(p, math.Float32bits(v)&^(1<<31))
	}
	return math.Float32frombits(p)
}

// signal is a view of the zero-padded input that torch.stft(center=True)
// reflects at both ends: samples [start, start+len(seg)) are in seg, and the
// first NFFT/2+1 samples are kept in head for the reflection at the start.
// n is the number of audio samples, or -1 while a stream has not ended;
// total is n plus the zero padding.
type signal struct {
	seg      []float32
	start    int
	head     []float32
	n, total int
}

// at returns sample j of the padded, reflected signal.
func (s *signal) at(j int) float32 {
	if j < 0 {
		j = -j
		if j < len(s.head) {
			return s.head[j]
		}
		return 0
	}
	if s.n >= 0 {
		if j >= s.total {
			j = 2*(s.total-1) - j
		}
		if j >= s.n {
			return 0
		}
	}
	if j < s.start {
		return s.head[j] // only reached when the padding is shorter than NFFT/2
	}
	return s.seg[j-s.start]
}

// frame returns the 400 samples of frame t (centred on t*HopLength)
// directly when they lie inside seg, else nil.
func (s *signal) frame(t int) []float32 {
	a := t*HopLength - NFFT/2
	if a < s.start || a+NFFT > s.start+len(s.seg) || (s.n >= 0 && a+NFFT > s.n) {
		return nil
	}
	return s.seg[a-s.start : a-s.start+NFFT]
}

// skipSilentFrames: frames that lie wholly in the zero padding are not
// transformed (tests turn it off to compare).
var skipSilentFrames = true

// silentFrame reports whether all 400 samples of frame t are padding
// zeros: past the audio, and past it again where the window runs off the
// padded end and is reflected back. Its power spectrum is exactly zero
// (the FFT of zeros), so its column is melColumn's for zero power. A window
// of Whisper's adds 30 s of such padding (3000 frames) to its audio, which
// is most of a short stream window's frames.
func (s *signal) silentFrame(t int) bool {
	if s.n < 0 {
		return false
	}
	a := t*HopLength - NFFT/2
	b := a + NFFT - 1
	return a >= s.n && (b < s.total || 2*(s.total-1)-b >= s.n)
}

// finish clamps to (max - 8) and rescales, as the reference does.
func (s *Spectrogram) finish(top float64) {
	floor := float32(top - 8)
	for i, v := range s.Data {
		s.Data[i] = (max(v, floor) + 4) / 4
	}
}

// melFrames stores the log10 mel energies of frames [lo, hi) in g and
// returns their maximum.
func melFrames(g grid, sig *signal, f *MelFilters, lo, hi int) float64 {
	fft := fourier.NewFFT(NFFT)
	seq := make([]float64, NFFT)
	coeff := make([]complex128, NFreq)
	power := make([]float64, NFreq)
	top := math.Inf(-1)
	var silent []float32 // the column of a frame of zeros, once one is seen
	for t := lo; t < hi; t++ {
		if skipSilentFrames && sig.silentFrame(t) {
			if silent == nil {
				clear(power)
				top = math.Max(top, melColumn(g, f, t, power))
				silent = make([]float32, f.NMels)
				for m := range silent {
					silent[m] = g.data[g.at(m, t)]
				}
				continue
			}
			for m, v := range silent {
				g.data[g.at(m, t)] = v
			}
			continue
		}
		if fr := sig.frame(t); fr != nil {
			for j, v := range fr {
				seq[j] = float64(v) * hann[j]
			}
		} else {
			start := t*HopLength - NFFT/2
			for j := range seq {
				seq[j] = float64(sig.at(start+j)) * hann[j]
			}
		}
		fft.Coefficients(coeff, seq)
		for k, c := range coeff {
			power[k] = real(c)*real(c) + imag(c)*imag(c)
		}
		top = math.Max(top, melColumn(g, f, t, power))
	}
	return top
}

// melColumn applies the filters to one frame's power spectrum, stores the
// log10 energies as frame t of g and returns their maximum.
func melColumn(g grid, f *MelFilters, t int, power []float64) float64 {
	top := math.Inf(-1)
	at := g.at(0, t)
	for m := range f.NMels {
		s := f.span[m]
		row := f.Data[m*NFreq : (m+1)*NFreq]
		var e float64
		for k := s[0]; k < s[1]; k++ {
			e += float64(row[k]) * power[k]
		}
		v := math.Log10(math.Max(e, 1e-10))
		top = math.Max(top, v)
		g.data[at+m*g.mStride] = float32(v)
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

// ReadWindow fills dst, an [NMels][width] matrix, with frames
// [start, start+n) (n ≤ width) and zeros after them, as
// SpooledSpectrogram.ReadWindow does.
func (s *Spectrogram) ReadWindow(dst []float32, start, n, width int) error {
	if start < 0 || n < 0 || n > width || start+n > s.NFrames || len(dst) != s.NMels*width {
		return fmt.Errorf("audio: window of %d frames at %d (width %d) out of a %d-frame spectrogram", n, start, width, s.NFrames)
	}
	for m := range s.NMels {
		row := dst[m*width : (m+1)*width]
		copy(row, s.Data[m*s.NFrames+start:m*s.NFrames+start+n])
		clear(row[n:])
	}
	return nil
}
