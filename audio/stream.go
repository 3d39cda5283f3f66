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

// maxReadAllSamples bounds ReadAll: 24 hours of 16 kHz mono (5.5 GB of
// float32) is far beyond any sane single transcription and stops a runaway
// decoder from exhausting memory.
const maxReadAllSamples = 24 * 3600 * 16000

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
		n, err := s.Read(chunk)
		if n > 0 {
			if len(buf)+n*ch > maxReadAllSamples {
				return nil, fmt.Errorf("audio: %s stream longer than %d samples", s.Format(), maxReadAllSamples)
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
