package audio

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// streamChunk is how many samples LogMelStream reads before computing the
// frames they complete (10 s at 16 kHz).
const streamChunk = 160000

// LogMelStream is LogMel over a 16 kHz mono stream that is never held
// whole: samples are read in chunks and dropped once the frames that need
// them are computed, so memory is the spectrogram (32 KB per second of
// audio at 80 mel bins) rather than the audio. The result equals LogMel of
// the whole stream bit for bit. padding must be at least NFFT/2.
func LogMelStream(s Stream, f *MelFilters, padding int) (*Spectrogram, error) {
	if f == nil {
		return nil, errors.New("audio: LogMelStream: nil mel filters")
	}
	if s.Channels() != 1 || s.SampleRate() != WhisperRate {
		return nil, fmt.Errorf("audio: LogMelStream needs 16 kHz mono, got %d Hz × %d channels", s.SampleRate(), s.Channels())
	}
	if padding < NFFT/2 {
		return nil, fmt.Errorf("audio: LogMelStream: padding %d is shorter than %d", padding, NFFT/2)
	}
	var (
		sig   = &signal{n: -1}
		cols  []float32 // frame-major: cols[t*NMels+m]
		next  int       // first frame not computed yet
		top   = math.Inf(-1)
		peakV float32
		buf   = make([]float32, 16384)
	)
	// compute fills frames [next, hi) into cols.
	compute := func(hi int) error {
		for next < hi {
			b := min(hi, next+4096)
			part := &Spectrogram{NMels: f.NMels, NFrames: b - next, Data: make([]float32, f.NMels*(b-next))}
			t, err := computeFrames(part, next, sig, f, next, b)
			if err != nil {
				return err
			}
			top = math.Max(top, t)
			for i := range b - next {
				for m := range f.NMels {
					cols = append(cols, part.Data[m*part.NFrames+i])
				}
			}
			next = b
		}
		return nil
	}
	for {
		n, err := readSome(s, buf)
		if n > 0 {
			if sig.start+len(sig.seg)+n > maxReadAllSamples {
				return nil, fmt.Errorf("audio: %s stream longer than %d samples", s.Format(), maxReadAllSamples)
			}
			peakV = max(peakV, peak(buf[:n]))
			sig.seg = append(sig.seg, buf[:n]...)
			if len(sig.head) <= NFFT/2 {
				sig.head = append(sig.head, buf[:min(n, NFFT/2+1-len(sig.head))]...)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(sig.seg) < streamChunk {
			continue
		}
		// Frames whose 400 samples have all arrived.
		end := sig.start + len(sig.seg)
		if ready := (end - NFFT/2) / HopLength; ready > next {
			if err := compute(ready); err != nil {
				return nil, err
			}
		}
		// Keep only what the next frame needs.
		if keep := next*HopLength - NFFT/2; keep > sig.start {
			drop := keep - sig.start
			sig.seg = append(sig.seg[:0], sig.seg[drop:]...)
			sig.start = keep
		}
	}
	sig.n = sig.start + len(sig.seg)
	if sig.n == 0 {
		return nil, ErrNoAudio
	}
	sig.total = sig.n + padding
	nFrames := sig.total / HopLength
	if err := compute(nFrames); err != nil {
		return nil, err
	}
	out := &Spectrogram{NMels: f.NMels, NFrames: nFrames, Data: make([]float32, f.NMels*nFrames), Peak: peakV}
	for t := range nFrames {
		for m := range f.NMels {
			out.Data[m*nFrames+t] = cols[t*f.NMels+m]
		}
	}
	out.finish(top)
	return out, nil
}
