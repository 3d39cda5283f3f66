package audio

import (
	"errors"
	"fmt"
	"io"
)

// Stream is decoded audio read in order, frame by frame.
type Stream interface {
	// SampleRate is in Hz.
	SampleRate() int
	// Channels is the number of interleaved samples per frame.
	Channels() int
	// Format names the container/codec, for messages ("wav", "mp3", ...).
	Format() string
	// Read decodes up to len(p)/Channels() frames into p as interleaved
	// samples in [-1, 1] (float sources may exceed it) and returns the number
	// of frames written. Like io.Reader it may return fewer than asked; at the
	// end it returns 0, io.EOF. Any other error means the data is corrupt or
	// unreadable.
	Read(p []float32) (int, error)
	// Close releases the file (and ends an ffmpeg process).
	Close() error
}

// MaxReadAllSamples bounds ReadAll: 24 hours of 16 kHz mono (5.5 GB of
// float32) is far beyond any sane single transcription and stops a runaway
// decoder from exhausting memory.
const MaxReadAllSamples = 24 * 3600 * 16000

// maxEmptyReads is how many empty, error-free reads of a source count as a
// stuck decoder (corrupt input) rather than a slow one.
const maxEmptyReads = 1000

// ErrNoAudio is returned when a file decodes to zero samples.
var ErrNoAudio = errors.New("no audio samples")

// ReadAll reads s to the end and returns its interleaved samples.
func ReadAll(s Stream) ([]float32, error) {
	ch := s.Channels()
	if ch <= 0 {
		return nil, fmt.Errorf("audio: invalid channel count %d", ch)
	}
	buf := make([]float32, 0, 1<<16)
	chunk := make([]float32, 4096*ch)
	for {
		n, err := ReadSome(s, chunk)
		if n > 0 {
			if len(buf)+n*ch > MaxReadAllSamples {
				return nil, fmt.Errorf("audio: %s stream longer than %d samples", s.Format(), MaxReadAllSamples)
			}
			buf = append(buf, chunk[:n*ch]...)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// sliceStream serves samples already in memory (a microphone buffer, tests).
type sliceStream struct {
	data     []float32
	rate, ch int
}

// FromSamples wraps interleaved in-memory samples as a Stream.
func FromSamples(samples []float32, sampleRate, channels int) Stream {
	return &sliceStream{data: samples[:len(samples)/channels*channels], rate: sampleRate, ch: channels}
}

func (s *sliceStream) SampleRate() int { return s.rate }
func (s *sliceStream) Channels() int   { return s.ch }
func (s *sliceStream) Format() string  { return "memory" }
func (s *sliceStream) Close() error    { return nil }

func (s *sliceStream) Read(p []float32) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p)/s.ch, len(s.data)/s.ch)
	if n == 0 {
		return 0, errors.New("audio: Read buffer smaller than one frame")
	}
	copy(p, s.data[:n*s.ch])
	s.data = s.data[n*s.ch:]
	return n, nil
}

// ReadSome reads into p until the stream yields frames or an error, giving
// up on a decoder that keeps returning nothing.
func ReadSome(s Stream, p []float32) (int, error) {
	for range maxEmptyReads {
		if n, err := s.Read(p); n > 0 || err != nil {
			return n, err
		}
	}
	return 0, fmt.Errorf("audio: %s decoder makes no progress (corrupt data?)", s.Format())
}
