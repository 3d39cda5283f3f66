package mel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"
	"unsafe"

	"github.com/harkapp/hark/audio"
)

// streamChunk is how many samples LogMelSpool reads before computing the
// frames they complete (10 s at 16 kHz).
const streamChunk = 160000

// spoolFrames is how many frames are computed, written and read at a time
// (41 s: more than one 30-s window).
const spoolFrames = 4096

// TooLongError is the refusal of audio longer than a caller's limit; it
// is returned as soon as the limit is crossed, before the rest is decoded.
type TooLongError struct{ Limit time.Duration }

func (e *TooLongError) Error() string {
	return fmt.Sprintf("the audio is longer than the limit of %v", e.Limit)
}

// SpooledSpectrogram is a log-mel spectrogram kept in an unlinked
// temporary file rather than in memory, read a window at a time: memory
// stays flat however long the audio. The file takes 4 bytes per mel bin
// and 10-ms frame: 115 MB per hour at 80 bins. Close it. Not safe for
// concurrent use.
type SpooledSpectrogram struct {
	NMels   int
	NFrames int
	// Peak is the largest sample magnitude of the audio.
	Peak float32

	floor float32 // the global maximum - 8 (the reference's clamp)
	file  *os.File
	raw   []byte
}

// Dims returns s's size and peak.
func (s *SpooledSpectrogram) Dims() Dims { return Dims{s.NMels, s.NFrames, s.Peak} }

// LogMelSpool is LogMel over a 16 kHz mono stream that is never held
// whole, nor its spectrogram: the first pass reads the stream in chunks,
// drops samples once the frames that need them are computed, writes the
// unclamped log10 energies to a temporary file and finds their global
// maximum; ReadWindow then applies the clamp to the frames it reads. What
// ReadWindow returns equals LogMel of the whole stream bit for bit.
// padding must be at least NFFT/2. maxSamples (> 0) bounds the audio: past
// it the stream is refused with a *TooLongError. The file is created in
// os.TempDir() and unlinked at once, so nothing is left behind, whatever
// happens to the process.
func LogMelSpool(s audio.Stream, f *MelFilters, padding, maxSamples int) (*SpooledSpectrogram, error) {
	tmp, err := os.CreateTemp("", "hark-mel-*")
	if err != nil {
		return nil, fmt.Errorf("audio: spectrogram spool: %w", err)
	}
	os.Remove(tmp.Name()) // unlinked: the open file lives until Close
	out := &SpooledSpectrogram{NMels: f.NMels, file: tmp}
	var raw []byte
	top, peakV, n, err := melStream(s, f, padding, maxSamples, func(cols []float32) error {
		_, err := tmp.Write(littleEndianBytes(cols, &raw))
		return err
	})
	if err != nil {
		tmp.Close()
		return nil, err
	}
	out.NFrames, out.Peak, out.floor = n, peakV, float32(top-8)
	return out, nil
}

// ReadWindow fills dst, an [NMels][width] matrix, with frames
// [start, start+n) (n ≤ width) and zeros after them: the encoder's input
// for a window of n frames of audio.
func (s *SpooledSpectrogram) ReadWindow(dst []float32, start, n, width int) error {
	if start < 0 || n < 0 || n > width || start+n > s.NFrames || len(dst) != s.NMels*width {
		return fmt.Errorf("audio: window of %d frames at %d (width %d) out of a %d-frame spectrogram", n, start, width, s.NFrames)
	}
	clear(dst)
	for done := 0; done < n; {
		k := min(n-done, spoolFrames)
		size := k * s.NMels * 4
		if cap(s.raw) < size {
			s.raw = make([]byte, size)
		}
		raw := s.raw[:size]
		if _, err := s.file.ReadAt(raw, int64(start+done)*int64(s.NMels)*4); err != nil {
			return fmt.Errorf("audio: reading the spectrogram spool: %w", err)
		}
		for i := range k {
			for m := range s.NMels {
				v := math.Float32frombits(binary.LittleEndian.Uint32(raw[(i*s.NMels+m)*4:]))
				dst[m*width+done+i] = (max(v, s.floor) + 4) / 4 // as finish does
			}
		}
		done += k
	}
	return nil
}

// nativeLittle: the machine stores a float32's bytes as the spool does.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// littleEndianBytes is the bytes of v as little-endian float32s: v's own
// memory on a little-endian machine (every one Hark ships for), else
// encoded into *scratch.
func littleEndianBytes(v []float32, scratch *[]byte) []byte {
	if len(v) == 0 {
		return nil
	}
	if nativeLittle {
		return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
	}
	b := (*scratch)[:0]
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	*scratch = b
	return b
}

// Close removes the spool.
func (s *SpooledSpectrogram) Close() error { return s.file.Close() }

// melStream computes the log10 mel energies of a 16 kHz mono stream
// followed by padding zero samples, frame by frame in order, and hands
// them to emit frame-major (cols[t*NMels+m]) a chunk at a time; it returns
// their maximum, the audio's peak magnitude and the number of frames.
// Only the samples the next frames need are kept.
func melStream(s audio.Stream, f *MelFilters, padding, maxSamples int, emit func(cols []float32) error) (top float64, peakV float32, nFrames int, err error) {
	if f == nil {
		return 0, 0, 0, errors.New("audio: LogMelSpool: nil mel filters")
	}
	if s.Channels() != 1 || s.SampleRate() != audio.WhisperRate {
		return 0, 0, 0, fmt.Errorf("audio: LogMelSpool needs 16 kHz mono, got %d Hz × %d channels", s.SampleRate(), s.Channels())
	}
	if padding < NFFT/2 {
		return 0, 0, 0, fmt.Errorf("audio: LogMelSpool: padding %d is shorter than %d", padding, NFFT/2)
	}
	if maxSamples <= 0 || maxSamples > audio.MaxReadAllSamples {
		maxSamples = audio.MaxReadAllSamples
	}
	var (
		sig  = &signal{n: -1}
		next int // first frame not computed yet
		buf  = make([]float32, 16384)
		cols []float32
	)
	top = math.Inf(-1)
	// compute emits frames [next, hi), computed straight into the
	// frame-major layout emit takes (no transposing on this goroutine).
	compute := func(hi int) error {
		for next < hi {
			b := min(hi, next+spoolFrames)
			if need := f.NMels * (b - next); cap(cols) < need {
				cols = make([]float32, need)
			} else {
				cols = cols[:need]
			}
			t, err := computeFrames(grid{data: cols, mStride: 1, tStride: f.NMels, off: next}, sig, f, next, b)
			if err != nil {
				return err
			}
			top = math.Max(top, t)
			if err := emit(cols); err != nil {
				return err
			}
			next = b
		}
		return nil
	}
	for {
		n, err := audio.ReadSome(s, buf)
		if n > 0 {
			if sig.start+len(sig.seg)+n > maxSamples {
				return 0, 0, 0, &TooLongError{Limit: time.Duration(maxSamples) * time.Second / audio.WhisperRate}
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
			return 0, 0, 0, err
		}
		if len(sig.seg) < streamChunk {
			continue
		}
		// Frames whose 400 samples have all arrived.
		end := sig.start + len(sig.seg)
		if ready := (end - NFFT/2) / HopLength; ready > next {
			if err := compute(ready); err != nil {
				return 0, 0, 0, err
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
		return 0, 0, 0, audio.ErrNoAudio
	}
	sig.total = sig.n + padding
	nFrames = sig.total / HopLength
	if err := compute(nFrames); err != nil {
		return 0, 0, 0, err
	}
	return top, peakV, nFrames, nil
}
