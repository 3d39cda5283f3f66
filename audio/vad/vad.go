// Package vad finds speech in 16 kHz mono audio: Trim cuts leading and
// trailing silence off a recording (keeping margins, so soft word edges
// survive), and Detector follows a live stream to end a toggle-mode
// dictation after a pause.
//
// The classifier is deliberately small and explainable. Each 20 ms frame is
// speech when its energy stands ThresholdDB above the background noise
// floor and above an absolute level, and either clearly so (twice the
// threshold) or its spectrum is not flat: voiced speech concentrates its
// energy in harmonics and formants, where fans, hiss and hum spread theirs
// (spectral flatness, the geometric over the arithmetic mean of the power
// spectrum; near 0.56 for white noise, far lower for vowels). Single
// frames are smoothed into segments: bursts shorter than MinSpeechMs
// (clicks, a bumped desk) are ignored, and speech is held for HangoverMs
// across the short gaps between words.
package vad

import (
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Config tunes the detector; the zero value of a field picks its default.
type Config struct {
	SampleRate    int     // 16000
	FrameMs       int     // 20
	ThresholdDB   float64 // 10: speech stands this far above the noise floor
	MinLevelDB    float64 // -55 dBFS: quieter frames are never speech
	MaxFlatness   float64 // 0.45: flatter spectra are noise unless very loud
	MinSpeechMs   int     // 80
	HangoverMs    int     // 250
	LeadMarginMs  int     // 200 kept before the first speech
	TrailMarginMs int     // 300 kept after the last speech
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.SampleRate, 16000)
	def(&c.FrameMs, 20)
	def(&c.MinSpeechMs, 80)
	def(&c.HangoverMs, 250)
	def(&c.LeadMarginMs, 200)
	def(&c.TrailMarginMs, 300)
	if c.ThresholdDB <= 0 {
		c.ThresholdDB = 10
	}
	if c.MinLevelDB == 0 {
		c.MinLevelDB = -55
	}
	if c.MaxFlatness <= 0 {
		c.MaxFlatness = 0.45
	}
	return c
}

// frameLen is the frame size in samples.
func (c Config) frameLen() int { return c.SampleRate * c.FrameMs / 1000 }

// ms converts milliseconds to whole frames (at least 1).
func (c Config) frames(ms int) int { return max(1, (ms+c.FrameMs-1)/c.FrameMs) }

// ErrNoSpeech is returned by Trim when no frame holds speech.
var ErrNoSpeech = errors.New("vad: no speech found")

// analyser computes per-frame features.
type analyser struct {
	cfg  Config
	fft  *fourier.FFT
	win  []float64
	buf  []float64
	coef []complex128
}

func newAnalyser(cfg Config) *analyser {
	n := cfg.frameLen()
	a := &analyser{cfg: cfg, fft: fourier.NewFFT(n), win: make([]float64, n), buf: make([]float64, n)}
	for i := range a.win {
		a.win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
	}
	return a
}

// energyDB is the frame's RMS level in dBFS (floored at -120).
func energyDB(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return 10 * math.Log10(s/float64(len(x))+1e-12)
}

// flatness is the spectral flatness of the frame's power spectrum within
// the speech band (100-4000 Hz).
func (a *analyser) flatness(x []float32) float64 {
	for i, v := range x {
		a.buf[i] = float64(v) * a.win[i]
	}
	a.coef = a.fft.Coefficients(a.coef, a.buf)
	n := len(x)
	lo := max(1, 100*n/a.cfg.SampleRate)
	hi := min(len(a.coef)-1, 4000*n/a.cfg.SampleRate)
	var logSum, sum float64
	for k := lo; k <= hi; k++ {
		p := real(a.coef[k])*real(a.coef[k]) + imag(a.coef[k])*imag(a.coef[k]) + 1e-20
		logSum += math.Log(p)
		sum += p
	}
	m := float64(hi - lo + 1)
	return math.Exp(logSum/m) / (sum / m)
}

// isSpeech classifies one frame against a noise floor (dB).
func (a *analyser) isSpeech(x []float32, e, floor float64) bool {
	c := a.cfg
	if e < c.MinLevelDB || e < floor+c.ThresholdDB {
		return false
	}
	if e >= floor+2*c.ThresholdDB {
		return true
	}
	return a.flatness(x) < c.MaxFlatness
}

// Trim returns the span [start, end) of samples to keep: from LeadMarginMs
// before the first speech to TrailMarginMs after the last, clamped to the
// audio. It returns ErrNoSpeech when there is none.
func Trim(samples []float32, cfg Config) (start, end int, err error) {
	cfg = cfg.withDefaults()
	fl := cfg.frameLen()
	nf := len(samples) / fl
	if nf == 0 {
		return 0, 0, ErrNoSpeech
	}
	es := make([]float64, nf)
	for i := range es {
		es[i] = energyDB(samples[i*fl : (i+1)*fl])
	}
	// The noise floor: a low percentile of the audible frame levels, since
	// a recording is rarely all speech (and the pre-roll adds room tone).
	// Frames under MinLevelDB (digital silence, a muted or idle device)
	// would drag it down to where any hiss passes for speech.
	var audible []float64
	for _, e := range es {
		if e >= cfg.MinLevelDB {
			audible = append(audible, e)
		}
	}
	if len(audible) == 0 {
		return 0, 0, ErrNoSpeech
	}
	slices.Sort(audible)
	floor := audible[len(audible)/10]
	a := newAnalyser(cfg)
	speech := make([]bool, nf)
	for i := range speech {
		speech[i] = a.isSpeech(samples[i*fl:(i+1)*fl], es[i], floor)
	}
	segs := segments(speech, cfg.frames(cfg.MinSpeechMs), cfg.frames(cfg.HangoverMs))
	if len(segs) == 0 {
		return 0, 0, ErrNoSpeech
	}
	first, last := segs[0][0], segs[len(segs)-1][1]
	start = max(0, first*fl-cfg.LeadMarginMs*cfg.SampleRate/1000)
	end = min(len(samples), last*fl+cfg.TrailMarginMs*cfg.SampleRate/1000)
	return start, end, nil
}

// segments joins speech frames into [from, to) frame spans: gaps up to
// hang frames are bridged, then spans shorter than minLen are dropped.
func segments(speech []bool, minLen, hang int) [][2]int {
	var out [][2]int
	for i := 0; i < len(speech); {
		if !speech[i] {
			i++
			continue
		}
		j, gap := i, 0
		last := i
		for j < len(speech) && gap <= hang {
			if speech[j] {
				last, gap = j, 0
			} else {
				gap++
			}
			j++
		}
		if last+1-i >= minLen {
			out = append(out, [2]int{i, last + 1})
		}
		i = last + 1
	}
	return out
}
